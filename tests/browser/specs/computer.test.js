// Play the computer to the end: atomic, medium (Easy lets a random player
// live too long for a quick test), by clicking a piece and then
// one of its hint squares, until the game ends in a result.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, rng, startComputer, withShots } from '../lib/player.js';
import { resultText } from '../lib/checks.js';

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

test('a game against the computer is played to its end by clicking', { timeout: 150_000 }, async () => {
  const p = await Player.open(browser, 'computer', server.url);
  players.push(p);
  await withShots('computer', () => players, server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'medium' });
    assert.equal(p.view().you, 'white');
    const random = rng(20261129);
    let mine = 0;
    for (;;) {
      const v = await p.waitTurn(30_000);
      if (!v) break;
      assert.ok(mine < 120, `no result after ${mine} moves of ours`);
      await p.play(p.pickMove(v, random), v.legal);
      mine += 1;
      if (mine === 4) await p.shot('computer-middle');
    }
    const end = p.view().end;
    assert.ok(['1-0', '0-1', '1/2-1/2'].includes(end.result), `the game ended with ${end.result} (${end.reason})`);
    await resultText(p, end);
  });
});
