// A reload in the middle of a game brings back the same game: the same
// pieces on the same squares and the same side to move, and play goes on.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, startComputer, withShots } from '../lib/player.js';
import { boardShows } from '../lib/checks.js';
import { sideToMove } from '../lib/chess.js';

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

test('a reload mid-game resumes the same position with the same side to move', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'reload', server.url);
  players.push(p);
  await withShots('reload', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    for (const uci of ['e2e4', 'g1f3']) {
      const v = await p.waitTurn();
      await p.play(v.legal.includes(uci) ? uci : v.legal[0], v.legal);
    }
    const v = await p.waitTurn();
    assert.equal(sideToMove(v.fen), 'w');
    const before = await boardShows(p, v.fen, 'the board before the reload');
    const pieces = Object.fromEntries(Object.entries(before).map(([sq, s]) => [sq, s.piece]));
    const gameUrl = p.page.url();
    await p.shot('reload-before');

    const mark = p.received.length;
    await p.page.reload();
    await p.el('game').waitFor();
    await p.board().waitFor();
    const state = await p.waitFor(
      () => p.received.slice(mark).find((f) => f.t === 'state' && f.game === v.game),
      'a state of the same game after the reload',
    );
    assert.equal(state.moves.length, v.ply, 'the game resumed at the same ply');
    assert.equal(state.you, 'white');
    assert.equal(sideToMove(state.fen), 'w', 'white is still to move');
    assert.ok(state.legal?.length, 'the server still offers white its moves');
    const after = await boardShows(p, v.fen, 'the board after the reload');
    assert.deepEqual(Object.fromEntries(Object.entries(after).map(([sq, s]) => [sq, s.piece])), pieces);
    assert.equal(p.page.url(), gameUrl, 'the page stays on the game');
    await p.shot('reload-after');

    // The side to move shows in the page too: white's pieces answer a click
    // with hints, and a move goes through.
    const next = await p.waitTurn();
    await p.play(next.legal[0], next.legal);
    await p.waitTurn();
  });
});
