// "How to play": opened from the home page it shows atomic's illustrated
// steps, each a small board drawn with the page's pieces (the explosion's
// squares marked, kings side by side); the fog-of-war tab draws fog over
// what a player cannot see and a lost-piece flag. From a game it opens on
// the game's variant. Screenshots at desktop and phone sizes.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, startComputer, withShots } from '../lib/player.js';

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

/** Each step's board: pieces by square, and the squares carrying `cls`. */
async function steps(p, cls) {
  return p.page.$$eval('[data-testid="howto-steps"] .howto-step', (items, mark) => items.map((li) => ({
    title: li.querySelector('h3').textContent,
    squares: li.querySelectorAll('.square').length,
    pieces: li.querySelectorAll('.square .piece').length,
    marked: [...li.querySelectorAll(`.square.${mark}`)].map((s) => s.dataset.square).sort(),
    fog: li.querySelectorAll('.square.fog').length,
    flags: [...li.querySelectorAll('.lost-flag')].map((f) => f.closest('.square').dataset.square),
  })), cls);
}

test('how to play: atomic and fog of war, from home and from a game', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'howto', server.url);
  players.push(p);
  await withShots('howto', () => players, server, async () => {
    await p.el('howto-open').click();
    await p.el('how-to-play').waitFor({ state: 'visible' });
    assert.equal(await p.el('howto-atomic').getAttribute('aria-selected'), 'true');
    const atomic = await steps(p, 'blast');
    assert.ok(atomic.length >= 4, `${atomic.length} atomic steps`);
    for (const s of atomic) assert.equal(s.squares, 64, `${s.title}: a whole board`);
    assert.match(atomic[0].title, /explode/i);
    assert.deepEqual(atomic[0].marked, ['c8', 'd7', 'd8', 'e8'], 'the blast of Nxd7 is marked');
    assert.equal(atomic[0].pieces, 32);
    assert.ok(atomic.some((s) => /side by side/i.test(s.title)), 'kings side by side');
    // The illustrations are no second game board.
    assert.equal(await p.page.locator('[data-testid="board"]').count(), 1);
    await p.shotSizes('how-to-play-atomic', { fullPage: false });

    await p.el('howto-fog').click();
    await p.page.waitForFunction(() => document.querySelector('[data-testid="howto-fog"]').getAttribute('aria-selected') === 'true');
    const fog = await steps(p, 'target');
    assert.equal(fog[0].fog, 32, 'at the start, ranks 5 to 8 are fog');
    assert.equal(fog[0].pieces, 16, 'only your own pieces show');
    assert.deepEqual(fog[1].marked, ['d5']);
    assert.ok(fog.some((s) => s.flags.includes('f5')), 'a lost-piece flag on f5');
    await p.shotSizes('how-to-play-fog', { fullPage: false });
    await p.page.keyboard.press('Escape');
    await p.el('how-to-play').waitFor({ state: 'hidden' });

    // From a game, it opens on the game's variant.
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    await p.el('howto-open-game').click();
    await p.el('how-to-play').waitFor({ state: 'visible' });
    assert.equal(await p.el('howto-atomic').getAttribute('aria-selected'), 'true');
    await p.el('howto-close').click();
    await p.el('how-to-play').waitFor({ state: 'hidden' });
  });
});
