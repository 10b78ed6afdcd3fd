// Arrows and circles with a right-drag, as on lichess, in play and in the
// replay: a right-drag between two squares toggles an arrow, a right-click
// toggles a circle (Shift: red), a left click or another position clears
// them, and no context menu gets in the way.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, confirmClick, launch, startComputer, withShots } from '../lib/player.js';

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

async function rightDrag(p, from, to, { shift = false } = {}) {
  const [fx, fy] = await p.centre(from);
  const [tx, ty] = await p.centre(to);
  if (shift) await p.page.keyboard.down('Shift');
  await p.page.mouse.move(fx, fy);
  await p.page.mouse.down({ button: 'right' });
  await p.page.mouse.move(tx, ty, { steps: 6 });
  await p.page.mouse.up({ button: 'right' });
  if (shift) await p.page.keyboard.up('Shift');
}

const shapes = (p) => p.page.$$eval('[data-testid="annotations"] .shape', (els) =>
  els.map((e) => (e.classList.contains('arrow') ? `arrow ${e.dataset.from}${e.dataset.to} ${e.dataset.brush}` : `circle ${e.dataset.square} ${e.dataset.brush}`)).sort());

async function shapesAre(p, want) {
  await p.page.waitForFunction(
    (w) => JSON.stringify([...document.querySelectorAll('[data-testid="annotations"] .shape')].map((e) => (e.classList.contains('arrow') ? `arrow ${e.dataset.from}${e.dataset.to} ${e.dataset.brush}` : `circle ${e.dataset.square} ${e.dataset.brush}`)).sort()) === JSON.stringify(w),
    want,
  ).catch(async () => assert.deepEqual(await shapes(p), want));
}

test('arrows and circles by right-drag, in play and in the replay', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'arrows', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('annotations', () => players, server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    await p.waitTurn();
    let menus = 0;
    await p.page.exposeFunction('countMenu', () => { menus += 1; });
    await p.page.evaluate(() => document.addEventListener('contextmenu', (e) => { if (!e.defaultPrevented) window.countMenu(); }));

    await rightDrag(p, 'e2', 'e4');
    await rightDrag(p, 'g1', 'f3', { shift: true });
    await rightDrag(p, 'd5', 'd5');
    await shapesAre(p, ['arrow e2e4 green', 'arrow g1f3 red', 'circle d5 green']);
    const arrow = await p.page.locator('[data-testid="annotations"] .arrow').first().boundingBox();
    assert.ok(arrow && arrow.width + arrow.height > 20, 'the arrow is drawn on the board');
    await p.shotSizes('annotations');
    // The same right-drag again takes the arrow away.
    await rightDrag(p, 'e2', 'e4');
    await shapesAre(p, ['arrow g1f3 red', 'circle d5 green']);
    assert.equal(menus, 0, 'no context menu over the board');
    // A left click clears them.
    await p.square('h5').click();
    await shapesAre(p, []);

    // A move clears them too.
    await rightDrag(p, 'd2', 'd4');
    await shapesAre(p, ['arrow d2d4 green']);
    const v = await p.waitTurn();
    await p.play('e2e4', v.legal);
    await shapesAre(p, []);

    // In the replay.
    await p.waitTurn();
    await confirmClick(p, 'resign');
    await p.waitEnd();
    await p.el('replay-start').click();
    await rightDrag(p, 'e2', 'e4');
    await shapesAre(p, ['arrow e2e4 green']);
    // Flipped, the arrow stays on its squares.
    await p.el('flip').click();
    await shapesAre(p, ['arrow e2e4 green']);
    const [x1] = await p.centre('e2');
    const box = await p.page.locator('[data-testid="annotations"] .arrow').boundingBox();
    assert.ok(Math.abs(box.x + box.width / 2 - x1) < 20, 'the flipped arrow starts over e2');
  });
});
