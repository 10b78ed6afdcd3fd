// Settings kept in the browser, each seen to work and to survive a reload:
// board size, a piece set apart from the board theme, coordinates, zen
// mode (and its Z key), sounds on by default, confirm each move, premoves
// off, auto-queen; the dialog on a phone.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, startComputer, withShots } from '../lib/player.js';
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

const GLACIER_WHITE_OUTLINE = '#2f6f9f';

async function openSettings(p) {
  await p.el('settings-open').click();
  await p.el('settings').waitFor({ state: 'visible' });
}

async function closeSettings(p) {
  await p.el('settings-close').click();
  await p.el('settings').waitFor({ state: 'hidden' });
}

const boardWidth = async (p) => (await p.board().boundingBox()).width;
const coordsShown = (p) => p.page.$$eval('[data-testid="board"] .coord', (els) => els.filter((e) => getComputedStyle(e).display !== 'none').length);
const whitePieceSvg = (p) => p.page.$eval('[data-testid="board"] .square[data-square="e1"] .piece svg', (e) => e.outerHTML);

test('board size, piece set, coordinates, zen and sound: applied at once and kept', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'settings', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('settings', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await p.waitTurn();
    await openSettings(p);
    // The defaults.
    assert.equal(await p.el('setting-board-size').inputValue(), '100');
    assert.equal(await p.el('setting-pieces').inputValue(), '');
    for (const [id, on] of [['setting-coords', true], ['setting-auto-queen', false], ['setting-premoves', true], ['setting-confirm-move', false], ['setting-zen', false], ['setting-sound', true]]) {
      assert.equal(await p.el(id).isChecked(), on, `${id} by default`);
    }
    assert.equal(await p.el('sound').isChecked(), true, 'sounds are on by default');
    await p.shotSizes('settings', { fullPage: false });

    const full = await boardWidth(p);
    await p.el('setting-board-size').fill('70');
    await p.page.waitForFunction((w) => Math.abs(document.querySelector('[data-testid="board"]').getBoundingClientRect().width - w) < 2, full * 0.7);
    await p.choose('setting-pieces', 'glacier');
    await p.page.waitForFunction((c) => document.querySelector('[data-testid="board"] .square[data-square="e1"] .piece svg')?.outerHTML.includes(c), GLACIER_WHITE_OUTLINE);
    assert.equal(await p.page.evaluate(() => document.body.dataset.theme), 'felt', 'the board keeps its theme');
    assert.ok(await coordsShown(p) > 0);
    await p.el('setting-coords').uncheck();
    assert.equal(await coordsShown(p), 0, 'no coordinates');
    await closeSettings(p);

    // Zen: the key Z, and the button that leaves it.
    await p.page.evaluate(() => document.activeElement?.blur());
    await p.page.keyboard.press('z');
    await p.el('flip').waitFor({ state: 'hidden' });
    await p.el('theme').waitFor({ state: 'hidden' });
    assert.equal(await p.board().isVisible(), true);
    assert.equal(await p.el('status').isVisible(), true);
    await p.shotSizes('settings-zen');
    await p.el('zen-exit').click();
    await p.el('flip').waitFor({ state: 'visible' });
    await p.el('zen-exit').waitFor({ state: 'hidden' });

    // Kept across a reload.
    await p.page.reload();
    await p.board().waitFor();
    await p.page.waitForSelector('[data-testid="board"] .square[data-square="e1"] .piece svg');
    assert.ok((await whitePieceSvg(p)).includes(GLACIER_WHITE_OUTLINE), 'the glacier pieces after the reload');
    assert.equal(await coordsShown(p), 0, 'still no coordinates');
    assert.ok(Math.abs(await boardWidth(p) - full * 0.7) < 2, 'the board keeps its size');
  });
});

test('confirm each move: nothing is sent until Play; Cancel puts the piece back', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'confirm-move', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('confirm-move', () => players, server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    const v = await p.waitTurn();
    await openSettings(p);
    await p.el('setting-confirm-move').check();
    await closeSettings(p);
    await p.clickSquare('e2');
    await p.clickSquare('e4');
    await p.el('move-confirm').waitFor({ state: 'visible' });
    assert.match(await p.el('move-confirm-text').textContent(), /e2–e4/);
    assert.equal(p.sent.filter((f) => f.t === 'move').length, 0, 'nothing sent before Play');
    await p.el('move-confirm-no').click();
    await p.el('move-confirm').waitFor({ state: 'hidden' });
    await boardShows(p, v.fen, 'the board after Cancel');
    assert.equal(p.sent.filter((f) => f.t === 'move').length, 0, 'nothing sent after Cancel');

    await p.clickSquare('e2');
    await p.clickSquare('e4');
    await p.el('move-confirm-yes').click();
    await p.waitFor(() => p.received.some((f) => f.t === 'move' && f.ply === 0), 'the move played');
    assert.equal(p.sent.filter((f) => f.t === 'move')[0].uci, 'e2e4');
  });
});

test('premoves off, and auto-queen', { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice-settings', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(alice);
  await withShots('settings-play', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'standard', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob-settings', server.url);
    players.push(bob);
    await openInvite(bob, link);
    await openSettings(alice);
    await alice.el('setting-premoves').uncheck();
    await alice.el('setting-auto-queen').check();
    await closeSettings(alice);

    const line = ['a2a4', 'b7b5', 'a4b5', 'a7a6', 'b5a6', 'c8b7', 'a6b7', 'b8c6'];
    for (const [i, uci] of line.entries()) {
      const mover = i % 2 === 0 ? alice : bob;
      const v = await mover.waitTurn();
      await mover.play(uci, v.legal);
      if (i === 0) {
        // Bob to move: with premoves off, Alice's piece says it is not her turn, and nothing is queued.
        await alice.clickSquare('d2');
        await alice.el('notice').filter({ hasText: 'not your turn' }).waitFor();
        await alice.clickSquare('d4');
        assert.equal(await alice.page.locator('[data-testid="board"] .square.premove').count(), 0, 'no premove queued');
      }
    }
    const v = await alice.waitTurn();
    assert.ok(v.legal.includes('b7a8q'));
    const before = alice.sent.filter((f) => f.t === 'move').length;
    await alice.clickSquare('b7');
    await alice.clickSquare('a8');
    await alice.waitFor(() => alice.sent.filter((f) => f.t === 'move').length > before, 'the promotion sent');
    assert.equal(alice.sent.filter((f) => f.t === 'move').at(-1).uci, 'b7a8q', 'promoted to a queen');
    assert.equal(await alice.el('promotion').isVisible(), false, 'without asking');
    assert.equal(alice.sent.filter((f) => f.t === 'move' && f.uci.startsWith('d2')).length, 0, 'no premove was ever sent');
  });
});

test('the settings on a phone', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'settings-phone', server.url, '/', { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  players.push(p);
  await withShots('settings-phone', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await p.waitTurn();
    await p.el('settings-open').tap();
    await p.el('settings').waitFor({ state: 'visible' });
    const panel = await p.page.locator('.settings-panel').boundingBox();
    assert.ok(panel.x >= 0 && panel.x + panel.width <= 390, `the dialog fits the phone: ${JSON.stringify(panel)}`);
    await p.el('setting-coords').tap();
    assert.equal(await coordsShown(p), 0);
    await p.el('settings-close').tap();
    await p.el('settings').waitFor({ state: 'hidden' });
  });
});
