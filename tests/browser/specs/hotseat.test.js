// Fog of war on one device: both seats play from one page, and a curtain
// covers the board before every turn with nothing drawn under it, so neither
// player sees the other's pieces; each turn shows the board of the seat to
// move, from its side. At the end the fog lifts.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, rng, withShots, confirmClick } from '../lib/player.js';
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

test('a fog game on one device hides each board behind a curtain', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'hotseat', server.url);
  players.push(p);
  await withShots('hotseat', () => players, server, async () => {
    await p.choose('friend-variant', 'fog');
    await p.choose('friend-minutes', 0);
    // "Both players on this device": a checkbox (or a button of its own).
    const hotseat = p.el('friend-hotseat');
    if ((await hotseat.getAttribute('type')) === 'checkbox') {
      await hotseat.check();
      await p.el('friend-create').click();
    } else {
      await hotseat.click();
    }
    await p.el('game').waitFor();
    const curtain = p.el('curtain');
    const random = rng(99);
    for (let ply = 0; ply < 6; ply++) {
      const seat = ply % 2 === 0 ? 'white' : 'black';
      await curtain.waitFor({ state: 'visible' });
      const under = await p.page.locator('[data-testid="board"] .piece').count();
      assert.equal(under, 0, `ply ${ply}: ${under} pieces drawn under the curtain`);
      if (ply === 1) await p.shot('hotseat-curtain');
      await p.el('curtain-ready').click();
      await curtain.waitFor({ state: 'hidden' });
      p.seat = seat;
      const v = await p.waitTurn();
      assert.ok(v, `${seat} is to move at ply ${ply}`);
      assert.equal(v.ply, ply);
      await boardShows(p, v.fen, `${seat}'s board`);
      assert.equal(await p.board().getAttribute('data-orientation'), seat, `${seat}'s board is seen from ${seat}'s side`);
      const fogged = await p.page.$$eval('[data-testid="board"] .square.fog', (els) => els.map((e) => e.dataset.square));
      assert.deepEqual(fogged.sort(), [...Array(64).keys()].map((i) => 'abcdefgh'[i >> 3] + ((i % 8) + 1)).filter((sq) => !v.visible.includes(sq)).sort(), `${seat}'s fog`);
      await p.play(p.pickMove(v, random, { aggressive: false }), v.legal);
    }
    await curtain.waitFor({ state: 'visible' });
    await p.el('curtain-ready').click();
    p.page.once('dialog', (d) => d.accept());
    await confirmClick(p, 'resign');
    const end = await p.waitEnd();
    await curtain.waitFor({ state: 'hidden' });
    await boardShows(p, end.fen, 'the board at the end');
    assert.equal(await p.page.locator('[data-testid="board"] .square.fog').count(), 0, 'the fog lifts at the end');
    await resultText(p, end);
  });
});
