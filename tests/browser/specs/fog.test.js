// Fog of war holds no hidden piece. Two browsers play a fog game through an
// invite link while every WebSocket frame each page receives is recorded.
// After each move:
// - every frame so far shows the opponent's pieces only on squares of that
//   frame's `visible` set, and shows exactly the true position there (the
//   true position is both players' own pieces put together, ply by ply);
// - the opponent's moves come as "a move was played": no `uci`, no `san`,
//   and the page's move list does not name them;
// - the page draws no opponent piece on a fog square, draws fog exactly on
//   the squares the player does not see, and draws the frame's pieces;
// - a piece lost where its owner no longer sees (1. e4 f5 2. exf5) is
//   flagged on that square.
// At the end the fog lifts: the page shows the whole final position.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, rng, withShots, confirmClick } from '../lib/player.js';
import { boardShows, resultText } from '../lib/checks.js';
import { ALL_SQUARES, parseFen } from '../lib/chess.js';

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

/** A seat's frames that carry its view, by the ply they show (moves played). */
function viewsByPly(player, game) {
  const views = new Map();
  for (const f of player.received) {
    if (f.game !== game) continue;
    if (f.t === 'state' && f.status === 'playing') views.set(f.moves.length, f);
    if (f.t === 'move') views.set(f.ply + 1, f);
  }
  return views;
}

function own(fen, color) {
  return Object.fromEntries(Object.entries(parseFen(fen)).filter(([, p]) => p[0] === color));
}

/** Every view frame of both seats against the true position of its ply. */
function checkFrames(white, black, game) {
  const w = viewsByPly(white, game);
  const b = viewsByPly(black, game);
  let checked = 0;
  for (const [ply, wf] of w) {
    const bf = b.get(ply);
    if (!bf) continue;
    const truth = { ...own(wf.fen, 'w'), ...own(bf.fen, 'b') };
    for (const [seat, f, color] of [
      ['white', wf, 'w'],
      ['black', bf, 'b'],
    ]) {
      assert.ok(Array.isArray(f.visible), `${seat}'s ${f.t} frame at ply ${ply} has a visible set`);
      const visible = new Set(f.visible);
      const shown = parseFen(f.fen);
      for (const [sq, piece] of Object.entries(shown)) {
        if (piece[0] !== color) {
          assert.ok(visible.has(sq), `${seat}'s frame at ply ${ply} shows ${piece} on ${sq}, which it does not see`);
        }
      }
      for (const sq of ALL_SQUARES) {
        if (visible.has(sq)) {
          assert.equal(shown[sq] ?? null, truth[sq] ?? null, `${seat}'s frame at ply ${ply}: ${sq} is visible but shows ${shown[sq]} instead of ${truth[sq]}`);
        }
      }
      checked += 1;
    }
  }
  return checked;
}

/** The opponent's moves reach a seat as "a move was played". */
function checkHiddenMoves(player, game) {
  const mine = player.view().you[0];
  for (const f of player.received) {
    if (f.game !== game || f.t !== 'move') continue;
    const moverIsMe = (f.ply % 2 === 0 ? 'w' : 'b') === mine;
    if (moverIsMe) {
      assert.equal(typeof f.uci, 'string', `${player.name} sees its own move at ply ${f.ply}`);
    } else {
      assert.equal(f.uci, null, `${player.name} got the opponent's move ${f.uci} at ply ${f.ply}`);
      assert.equal(f.san, undefined, `${player.name} got the opponent's move's san ${f.san}`);
    }
  }
  for (const f of player.received) {
    if (f.game === game && f.t === 'state' && f.status === 'playing') {
      f.moves.forEach((m, ply) => {
        const moverIsMe = (ply % 2 === 0 ? 'w' : 'b') === mine;
        if (!moverIsMe) assert.equal(m, null, `${player.name}'s state names the opponent's move ${m}`);
      });
    }
  }
}

/** The page: fog exactly where the player does not see, no opponent piece in it, the frame's pieces. */
async function checkPage(player, opponent, game) {
  const v = player.view();
  const board = await boardShows(player, v.fen, `${player.name}'s fogged board`);
  const me = v.you[0];
  const visible = new Set(v.visible);
  for (const [sq, s] of Object.entries(board)) {
    const fog = s.classes.includes('fog');
    if (fog) assert.ok(!s.piece || s.piece[0] === me, `${player.name}'s page draws ${s.piece} on the fog square ${sq}`);
    assert.equal(fog, !visible.has(sq), `${player.name}'s page: ${sq} ${fog ? 'is fogged but visible' : 'is drawn clear but not visible'}`);
  }
  // The move list shows each of the opponent's moves as "a move was played"
  // and does not name them.
  const theirs = player.received.filter((f) => f.game === game && f.t === 'move' && f.uci === null).length;
  let text = '';
  for (let i = 0; i < 100; i++) {
    text = (await player.el('moves').textContent()) || '';
    if ((text.match(/a move was played/gi) || []).length === theirs) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal((text.match(/a move was played/gi) || []).length, theirs, `${player.name}'s move list: "${text}"`);
  const ownSans = new Set(player.received.filter((f) => f.game === game && f.t === 'move' && f.san).map((f) => f.san));
  for (const f of opponent.received) {
    if (f.game !== game || f.t !== 'move' || !f.san) continue;
    if (ownSans.has(f.san)) continue;
    const word = new RegExp(`(^|[^A-Za-z0-9])${f.san.replace(/[+#]/g, '\\$&')}($|[^A-Za-z0-9])`);
    assert.doesNotMatch(text, word, `${player.name}'s move list names the opponent's move ${f.san}`);
    assert.ok(!text.includes(f.uci), `${player.name}'s move list names the opponent's move ${f.uci}`);
  }
}

test('the fog-of-war view holds no hidden piece', { timeout: 150_000 }, async () => {
  const white = await Player.open(browser, 'white', server.url);
  players.push(white);
  await withShots('fog', () => players, server, async () => {
    const link = await createFriendGame(white, { variant: 'fog', color: 'white', minutes: 0 });
    const black = await Player.open(browser, 'black', server.url);
    players.push(black);
    await openInvite(black, link);
    await black.waitFor(() => black.view().you === 'black', 'black to hold its seat');
    const game = white.currentGame();
    assert.equal(black.currentGame(), game);

    const random = rng(424242);
    const plies = 16;
    let ended = false;
    for (let ply = 0; ply < plies; ply++) {
      const [mover, other] = ply % 2 === 0 ? [white, black] : [black, white];
      const v = await mover.waitTurn();
      if (!v) {
        ended = true;
        break;
      }
      assert.equal(v.ply, ply);
      // 1. e4 f5 2. exf5 takes a black pawn where black no longer sees.
      const opening = ['e2e4', 'f7f5', 'e4f5'];
      await mover.play(opening[ply] ?? mover.pickMove(v, random, { aggressive: false }), v.legal);
      await other.waitFor(() => other.view().ply > ply || other.view().end, `${other.name} to get ply ${ply}`);
      if (mover.view().end) {
        ended = true;
        break;
      }
      assert.ok(checkFrames(white, black, game) >= 2 * (ply + 1), 'frames of both seats were checked at every ply');
      checkHiddenMoves(white, game);
      checkHiddenMoves(black, game);
      await checkPage(white, black, game);
      await checkPage(black, white, game);
      if (ply === 2) {
        // Both have moved, and neither is offered a takeback: fog has none;
        // nor is there any hindsight review while the game is played.
        for (const p of [white, black]) {
          assert.ok(await p.el('takeback').isHidden(), `${p.name}'s page offers a takeback in fog of war`);
          assert.ok(await p.el('fog-review').isHidden(), `${p.name}'s page shows a review during the game`);
        }
        // Black lost the f5 pawn in the fog: the frame says so and the page flags it.
        const frame = black.received.find((f) => f.game === game && f.t === 'move' && f.ply === 2);
        assert.deepEqual(frame.lost, ['f5']);
        await black.page.waitForSelector('[data-testid="board"] .square[data-square="f5"] .lost-flag, [data-testid="board"] .square.lost-flag[data-square="f5"]');
        const flagged = await black.page.$$eval('[data-testid="board"] .lost-flag', (els) => els.map((e) => (e.closest('.square') || e).dataset.square));
        assert.deepEqual(flagged, ['f5'], 'black sees a lost-piece flag on f5 only');
        await black.shot('fog-lost-flag');
      }
      if (ply === 7) {
        await white.shot('fog-middle');
        await black.shot('fog-middle');
      }
    }
    if (!ended) {
      white.page.once('dialog', (d) => d.accept());
      await confirmClick(white, 'resign');
    }
    const end = await white.waitEnd();
    await black.waitEnd();
    for (const p of [white, black]) {
      // The fog lifts: every square clear, the whole final position drawn.
      const board = await boardShows(p, end.fen, `${p.name}'s board at the end`);
      const fogged = Object.entries(board).filter(([, s]) => s.classes.includes('fog')).map(([sq]) => sq);
      assert.deepEqual(fogged, [], `${p.name}'s page still fogs ${fogged} after the end`);
      await resultText(p, end);
    }
    await checkHindsight(white, game);
  });
});

/** After the end: the hindsight review shows, for the final position, the
 * board white saw exactly as white was shown it during the game, the true
 * board whole, and after Home the starting position. */
async function checkHindsight(white, game) {
  await white.page.waitForSelector('[data-testid="fog-review-white"]', { timeout: 30_000 });
  const squares = (testid) => white.page.$$eval(`[data-testid="${testid}"] .mini-sq`, (els) =>
    els.map((e) => ({ square: e.dataset.square, fogged: e.classList.contains('fogged'), glyph: e.textContent })));
  const lastView = white.received.filter((f) => f.game === game && f.t === 'move').at(-1);
  const seen = (await squares('fog-review-white')).filter((s) => !s.fogged).map((s) => s.square).sort();
  assert.deepEqual(seen, [...lastView.visible].sort(), 'the review shows white what white saw at the end');
  const truth = await squares('fog-review-true');
  assert.equal(truth.filter((s) => s.fogged).length, 0, 'the true board has no fog');
  const summary = (await white.el('fog-review-summary').textContent()) || '';
  assert.match(summary, /White: \d+ moves/);
  assert.match(summary, /Black: \d+ moves/);
  await white.page.keyboard.press('Home');
  await white.page.waitForFunction(() => {
    const cells = [...document.querySelectorAll('[data-testid="fog-review-true"] .mini-sq')];
    return cells.filter((c) => c.textContent).length === 32;
  }, null, { timeout: 10_000 });
  await white.shot('fog-hindsight');
}
