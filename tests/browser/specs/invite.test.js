// Two browsers play each other through an invite link: one creates a game
// for a friend and reads its invite link, the other opens it, and they
// alternate moves by clicking until a quick atomic explosion ends the game
// (1. Nf3 a6 2. Ne5 a5 3. Nxd7: the blast on d7 takes the king on e8), drawn
// as a blast on every square it cleared, on both boards. Both players and a
// spectator name the ending move alike, with its mate mark: Nxd7#.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, withShots } from '../lib/player.js';
import { boardShows, resultText } from '../lib/checks.js';

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

test('two players play through an invite link until an explosion ends the game', { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice', server.url);
  players.push(alice);
  await withShots('invite', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    await alice.shot('invite-waiting');
    const bob = await Player.open(browser, 'bob', server.url, '/');
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');

    // Every square a blast clears gets an .explosion drawn on it: watched
    // with a MutationObserver, since the app removes them after a moment.
    for (const p of [alice, bob]) {
      await p.page.evaluate(() => {
        window.blasts = new Set();
        new MutationObserver((records) => {
          for (const r of records) {
            for (const n of r.addedNodes) {
              if (n.classList?.contains('explosion')) window.blasts.add(n.closest('.square')?.dataset.square);
            }
          }
        }).observe(document.querySelector('[data-testid="board"]'), { childList: true, subtree: true });
      });
    }

    const carol = await Player.open(browser, 'carol', server.url, `/#game=${alice.currentGame()}`);
    players.push(carol);
    await carol.board().waitFor();

    const line = ['g1f3', 'a7a6', 'f3e5', 'a6a5', 'e5d7'];
    let exploded = [];
    for (const [i, uci] of line.entries()) {
      const mover = i % 2 === 0 ? alice : bob;
      const other = i % 2 === 0 ? bob : alice;
      const v = await mover.waitTurn();
      assert.ok(v, `${mover.name} should be to move at ply ${i}`);
      assert.equal(v.ply, i);
      const frame = await mover.play(uci, v.legal);
      exploded = frame.exploded || [];
      // The other browser shows the move too.
      await other.waitFor(() => other.view().ply > i, `${other.name} to see ply ${i}`);
      await boardShows(other, frame.fen, `${other.name}'s board after ${uci}`);
      await boardShows(mover, frame.fen, `${mover.name}'s board after ${uci}`);
    }
    const end = await alice.waitEnd();
    assert.deepEqual([end.result, end.reason], ['1-0', 'explosion']);
    await bob.waitEnd();
    assert.deepEqual([...exploded].sort(), ['c8', 'd7', 'd8', 'e8']);
    for (const p of [alice, bob]) {
      await p.page.waitForFunction((squares) => squares.every((sq) => window.blasts.has(sq)), exploded);
      const blasts = await p.page.evaluate(() => [...window.blasts].sort());
      assert.deepEqual(blasts, [...exploded].sort(), `${p.name}: blasts drawn on ${blasts}`);
    }
    for (const p of [alice, bob]) {
      const board = await boardShows(p, end.fen, `${p.name}'s final board`);
      for (const sq of ['c8', 'd8', 'e8', 'd7']) assert.equal(board[sq].piece, null, `${p.name}: ${sq} was blown up`);
      await resultText(p, end);
    }
    for (const p of [alice, bob, carol]) {
      await p.page.waitForFunction((sel) => document.querySelectorAll(sel).length === 5, '[data-testid="moves"] [data-ply]');
      const sans = await p.page.locator('[data-testid="moves"] [data-ply]').allTextContents();
      assert.deepEqual(sans.map((t) => t.trim()), ['Nf3', 'a6', 'Ne5', 'a5', 'Nxd7#'], `${p.name}'s move list`);
    }
  });
});
