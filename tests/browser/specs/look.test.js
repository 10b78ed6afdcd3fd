// The board's looks on a live game: the 3D toggle switches the board's
// data-mode mid-game and moves still work by clicking and by dragging in 3D;
// the theme select changes body[data-theme], and the choice survives a
// reload.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, startComputer, withShots } from '../lib/player.js';
import { boardShows } from '../lib/checks.js';

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

async function mode(p) {
  return p.board().getAttribute('data-mode');
}

test('the 3D toggle and the theme select work on a live game', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'look', server.url);
  players.push(p);
  await withShots('look', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    let v = await p.waitTurn();
    const start = await mode(p);
    assert.equal(start, '2d', 'the board starts in 2D');

    await p.el('toggle-3d').click();
    await p.page.waitForFunction((sel) => document.querySelector(sel)?.dataset.mode === '3d', '[data-testid="board"]');
    // The board tilts in a transition: a click aimed before it ends lands elsewhere.
    await p.page.waitForFunction((sel) => document.querySelector(sel).getAnimations().length === 0, '[data-testid="board"]');
    // The pieces are redrawn standing up.
    const styles = await p.page.$$eval('[data-testid="board"] .piece svg', (svgs) => svgs.map((s) => s.dataset.style));
    assert.ok(styles.length > 0 && styles.every((s) => s === '3d'), `3D pieces: ${styles}`);
    await p.shot('look-3d');
    // A move by clicking on the tilted board.
    await p.play(v.legal.includes('e2e4') ? 'e2e4' : v.legal[0], v.legal);
    v = await p.waitTurn();
    await boardShows(p, v.fen, 'the 3D board after the computer replied');
    // And a move by dragging a piece across the tilted board.
    const knight = ['g1f3', 'b1c3', 'g1h3', 'b1a3'].find((m) => v.legal.includes(m));
    assert.ok(knight, `a knight move among ${v.legal}`);
    await p.drag(knight);
    v = await p.waitTurn();
    await boardShows(p, v.fen, 'the 3D board after a dragged move');
    await p.shot('look-3d-moved');

    await p.el('toggle-3d').click();
    await p.page.waitForFunction((sel) => document.querySelector(sel)?.dataset.mode === '2d', '[data-testid="board"]');
    await boardShows(p, v.fen, 'the board back in 2D');

    // Themes: every option of the select is one of the seven themes.
    const options = await p.el('theme').evaluate((s) => [...(s.options || [])].map((o) => o.value));
    for (const id of ['felt', 'marble', 'sandstone', 'glacier', 'amber', 'tidepool', 'chamber']) {
      assert.ok(options.includes(id), `the theme select offers ${id} (it offers ${options})`);
    }
    const initial = await p.page.evaluate(() => document.body.dataset.theme);
    const pick = initial === 'glacier' ? 'amber' : 'glacier';
    await p.choose('theme', pick);
    await p.page.waitForFunction((t) => document.body.dataset.theme === t, pick);
    await p.shot('look-theme');
    await p.page.reload();
    await p.el('game').waitFor();
    await p.board().waitFor();
    assert.equal(await p.page.evaluate(() => document.body.dataset.theme), pick, 'the theme is remembered after a reload');
    await boardShows(p, v.fen, 'the board after the reload');
  });
});
