// Chess960 from the home page: the create forms offer it for standard and
// atomic (not fog of war; offline too), the `create` carries chess960, the
// board starts from the 960 position the server sent (a back rank with the
// bishops on opposite colours and the king between the rooks, mirrored for
// black), and castling is played by dragging the king onto its own rook
// (the king-takes-rook UCI of Chess960), when the game gets there: white
// clears its back rank while black pushes pawns.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, withShots } from '../lib/player.js';
import { boardShows } from '../lib/checks.js';
import { isChess960Start, parseFen } from '../lib/chess.js';

let server;
let browser;
const players = [];
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the computer form offers Chess960 for standard and atomic and starts from the 960 position', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'c960', server.url);
  players.push(p);
  await withShots('chess960-computer', () => players, server, async () => {
    const field = p.el('computer-chess960-field');
    for (const [variant, shown] of [['fog', false], ['standard', true], ['atomic', true]]) {
      await p.choose('computer-variant', variant);
      assert.equal(await field.isVisible(), shown, `Chess960 offered for ${variant}: ${shown}`);
    }
    await p.el('computer-offline').check();
    assert.equal(await field.isVisible(), true, 'offered offline too');
    await p.el('computer-offline').uncheck();
    await p.choose('friend-variant', 'fog');
    assert.equal(await p.el('friend-chess960-field').isVisible(), false, 'the friend form hides it for fog');
    await p.choose('friend-variant', 'standard');
    assert.equal(await p.el('friend-chess960-field').isVisible(), true);

    await p.choose('computer-variant', 'atomic');
    await p.choose('computer-color', 'white');
    await p.el('computer-chess960').check();
    await p.el('computer-start').click();
    await p.el('game').waitFor();
    await p.waitFor(() => p.view().fen, 'the game state');
    const create = p.sent.find((f) => f.t === 'create');
    assert.equal(create.chess960, true);
    const state = p.seatFrames().find((f) => f.t === 'state' && f.game === p.currentGame());
    assert.equal(state.chess960, true);
    assert.ok(isChess960Start(state.initial_fen), `a 960 start: ${state.initial_fen}`);
    assert.ok(!isChess960Start('bbnnqkrr/pppppppp/8/8/8/8/PPPPPPPP/BBNNQKRR w - - 0 1'), 'the check tells a wrong rank apart');
    await boardShows(p, state.initial_fen, 'the 960 start');
  });
});

test('a Chess960 game for a friend: the 960 start on both boards, castling by dragging the king onto its rook', { timeout: 150_000 }, async () => {
  const alice = await Player.open(browser, 'alice960', server.url);
  players.push(alice);
  await withShots('chess960-friend', () => players, server, async () => {
    await alice.el('friend-chess960').check();
    const link = await createFriendGame(alice, { variant: 'standard', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob960', server.url, '/');
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
    assert.equal(alice.sent.find((f) => f.t === 'create').chess960, true);
    const start = alice.seatFrames().find((f) => f.t === 'state' && f.game === alice.currentGame());
    assert.ok(isChess960Start(start.initial_fen), `a 960 start: ${start.initial_fen}`);
    await boardShows(alice, start.initial_fen, "alice's 960 start");
    await boardShows(bob, start.initial_fen, "bob's 960 start");

    let castled = null;
    for (let turn = 0; turn < 14 && !castled; turn++) {
      const v = await alice.waitTurn();
      const board = parseFen(v.fen);
      const king = Object.keys(board).find((sq) => board[sq] === 'wk');
      const castle = v.legal.find((m) => m.startsWith(king) && board[m.slice(2, 4)] === 'wr');
      if (castle) {
        const frame = await alice.drag(castle);
        castled = { uci: castle, frame };
        break;
      }
      // Develop a back-rank piece that is neither king nor rook, else push a pawn.
      const develop = v.legal.find((m) => m[1] === '1' && m[3] !== '1' && !['wk', 'wr'].includes(board[m.slice(0, 2)]));
      const pawn = v.legal.find((m) => board[m.slice(0, 2)] === 'wp' && !board[m.slice(2, 4)]);
      const quiet = v.legal.find((m) => board[m.slice(0, 2)] !== 'wk' && !board[m.slice(2, 4)]);
      const uci = develop || pawn || quiet || v.legal[0];
      await alice.play(uci, v.legal);
      const b = await bob.waitTurn();
      if (!b || b.end) break;
      const bb = parseFen(b.fen);
      const reply = b.legal.find((m) => bb[m.slice(0, 2)] === 'bp' && !bb[m.slice(2, 4)] && m[1] === '7' && m[3] === '6')
        || b.legal.find((m) => !bb[m.slice(2, 4)] && bb[m.slice(0, 2)] !== 'bk')
        || b.legal[0];
      await bob.play(reply, b.legal);
    }
    if (castled) {
      // The king and the rook stand on the castled squares on both boards.
      const kingside = castled.uci.charCodeAt(2) > castled.uci.charCodeAt(0);
      const after = parseFen(castled.frame.fen);
      assert.equal(after[kingside ? 'g1' : 'c1'], 'wk', `castled ${castled.uci}: king on ${kingside ? 'g1' : 'c1'}`);
      assert.equal(after[kingside ? 'f1' : 'd1'], 'wr');
      await boardShows(alice, castled.frame.fen, "alice's board after castling");
      await boardShows(bob, castled.frame.fen, "bob's board after castling");
      await alice.shotSizes('chess960-castled');
    } else {
      console.log('chess960: castling was not reached in this start; the start position was checked');
    }
  });
});
