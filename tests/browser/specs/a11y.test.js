// For screen readers and keyboards: a live region reads out the opponent's
// moves (not your own), an explosion's cleared squares and the result; the
// board's keyboard cursor is outlined while the keys drive it and not once
// the mouse has clicked; and axe-core (the accessibility engine, run in the
// page) finds nothing serious or critical on the home screen, a game being
// played (atomic and fog of war, at 1280×900 and 390×844), the settings,
// How to play, a finished game and a player's page; and on home's
// tournaments and create form, a tournament's page (1280×900 and 390×844)
// and a tournament game with its bar, Berserk and a chat line; and on the
// analysis board (1280×900 and 390×844).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { startServer } from '../lib/server.js';
import { Player, confirmClick, createFriendGame, launch, openInvite, startComputer, withShots } from '../lib/player.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

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

/** Collects every sentence the live region says, in window.said. */
async function listen(p) {
  await p.page.evaluate(() => {
    window.said = [];
    const el = document.querySelector('[data-testid="announcer"]');
    new MutationObserver(() => { if (el.textContent) window.said.push(el.textContent); }).observe(el, { childList: true, characterData: true, subtree: true });
  });
}

const said = (p) => p.page.evaluate(() => window.said.slice());

test("the live region reads out the opponent's moves and the result", { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice', server.url);
  players.push(alice);
  await withShots('a11y-live', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob', server.url);
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
    const live = bob.el('announcer');
    assert.equal(await live.getAttribute('aria-live'), 'polite');
    for (const p of [alice, bob]) await listen(p);
    const line = ['g1f3', 'a7a6', 'f3e5', 'a6a5', 'e5d7'];
    for (const [i, uci] of line.entries()) {
      const mover = i % 2 === 0 ? alice : bob;
      const other = i % 2 === 0 ? bob : alice;
      const v = await mover.waitTurn();
      await mover.play(uci, v.legal);
      await other.waitFor(() => other.view().ply > i, `${other.name} to see ply ${i}`);
    }
    await bob.waitEnd();
    await bob.page.waitForFunction(() => window.said.some((s) => s.includes('Game over')));
    const bobHeard = await said(bob);
    assert.equal(bobHeard[0], 'White: knight to f3. Your turn.', JSON.stringify(bobHeard));
    // The last move and the end it caused come together, and are said together.
    assert.equal(bobHeard.at(-1), 'White: knight takes d7, mate. The explosion cleared d7, c8, d8, e8. Game over. White wins — king exploded.');
    assert.ok(!bobHeard.some((s) => s.startsWith('Black:')), `Bob hears none of his own moves: ${JSON.stringify(bobHeard)}`);
    await alice.page.waitForFunction(() => window.said.some((s) => s.includes('Game over')));
    const aliceHeard = await said(alice);
    assert.ok(aliceHeard.includes('Black: a6. Your turn.'), JSON.stringify(aliceHeard));
    assert.ok(!aliceHeard.some((s) => s.startsWith('White:')), `Alice hears none of her own moves: ${JSON.stringify(aliceHeard)}`);
  });
});

test('the keyboard cursor is outlined for keys only, not after a click', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'keys', server.url);
  players.push(p);
  await withShots('a11y-focus', () => [p], server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    await p.waitTurn();
    const outline = () => p.page.evaluate(() => {
      const cursor = document.querySelector('[data-testid="board"] .square.cursor');
      return cursor ? getComputedStyle(cursor).outlineStyle : 'no cursor';
    });
    // Tab onto the board, then drive the cursor with the arrows.
    await p.el('board').focus();
    await p.page.keyboard.press('ArrowUp');
    assert.equal(await outline(), 'solid', 'the cursor is outlined while the keys drive it');
    await p.shotSizes('keyboard-cursor');
    // A click on an empty square: the board keeps the focus, the outline goes.
    await p.square('e4').click();
    assert.equal(await outline(), 'none', 'no cursor outline after a mouse click');
    await p.page.keyboard.press('ArrowLeft');
    assert.equal(await outline(), 'solid', 'the keys bring it back');
  });
});

/** axe-core's serious and critical findings on the page as it is now, as lines. */
async function axeFindings(p, where) {
  // Evaluated, not added as a script tag: the page's content security policy allows only its own scripts.
  await p.page.evaluate(AXE);
  const found = await p.page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}${v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ''}`);
  });
  return found.map((f) => `${where}: ${f}`);
}

test('axe-core finds nothing serious on the screens', { timeout: 180_000 }, async () => {
  const p = await Player.open(browser, 'axe', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('a11y-axe', () => players, server, async () => {
    const found = [];
    await p.el('home').waitFor();
    found.push(...await axeFindings(p, 'home'));
    await p.el('howto-open').click();
    await p.el('how-to-play').waitFor();
    found.push(...await axeFindings(p, 'how to play'));
    await p.el('howto-close').click();

    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    let v = await p.waitTurn();
    await p.play('e2e4', v.legal);
    v = await p.waitTurn();
    found.push(...await axeFindings(p, 'atomic game'));
    await p.el('settings-open').click();
    await p.el('settings').waitFor();
    found.push(...await axeFindings(p, 'settings'));
    await p.el('settings-close').click();
    await p.page.setViewportSize({ width: 390, height: 844 });
    found.push(...await axeFindings(p, 'atomic game at 390x844'));
    await p.page.setViewportSize({ width: 1280, height: 900 });
    await confirmClick(p, 'resign');
    await p.waitEnd();
    await p.el('replay').waitFor({ state: 'visible' });
    found.push(...await axeFindings(p, 'finished game'));

    await p.el('new-game').click();
    await p.el('home').waitFor();
    await p.el('my-player-page').click({ timeout: 30_000 });
    await p.el('player-page').waitFor();
    await p.page.locator('[data-testid="player-games"] li').first().waitFor();
    found.push(...await axeFindings(p, 'player page'));
    await p.el('player-page-home').click();
    await p.el('home').waitFor();
    await startComputer(p, { variant: 'fog', color: 'white', level: 'easy' });
    await p.waitTurn();
    found.push(...await axeFindings(p, 'fog of war game'));

    // Another browser: home's Watch with that game, a recovery code shown, and TV on it.
    const w = await Player.open(browser, 'axe-watch', server.url, '/', { viewport: { width: 1280, height: 900 } });
    players.push(w);
    await w.page.locator('[data-testid="watch-game"]').first().waitFor({ timeout: 20_000 });
    await w.page.waitForFunction(() => localStorage.getItem('fogblast.token'));
    await w.el('identity').locator('summary').click();
    await w.el('recovery-issue').click();
    await w.el('recovery-code-box').waitFor();
    found.push(...await axeFindings(w, 'home with Watch and a recovery code'));
    await w.el('watch-tv').click();
    await w.el('tv-banner').waitFor();
    await w.waitFor(() => w.received.some((f) => f.t === 'state' && f.you === 'spectator'), 'TV');
    found.push(...await axeFindings(w, 'TV'));
    await w.page.setViewportSize({ width: 390, height: 844 });
    found.push(...await axeFindings(w, 'TV at 390x844'));
    assert.deepEqual(found, []);
  });
});

test('axe-core finds nothing serious on tournaments, a tournament game and the chat', { timeout: 120_000 }, async () => {
  const options = { viewport: { width: 1280, height: 900 } };
  const ann = await Player.open(browser, 'axe-ann', server.url, '/', options);
  const ben = await Player.open(browser, 'axe-ben', server.url, '/', options);
  players.push(ann, ben);
  await withShots('a11y-tournament', () => [ann, ben], server, async () => {
    const found = [];
    for (const p of [ann, ben]) await p.page.waitForFunction(() => localStorage.getItem('fogblast.token'));
    const token = await ann.page.evaluate(() => JSON.parse(localStorage.getItem('fogblast.token')));
    const response = await fetch(`${server.url}/api/tournament`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: new URLSearchParams({ name: 'Axe arena', clockTime: '3', clockIncrement: '0', minutes: '10', waitMinutes: '0', variant: 'atomic', description: 'For the accessibility check.' }),
    });
    const arena = await response.json();
    assert.equal(response.status, 200, JSON.stringify(arena));

    await ann.page.reload();
    await ann.page.locator(`[data-testid="tournaments-started"] li[data-tournament="${arena.id}"]`).waitFor({ timeout: 15_000 });
    await ann.el('tournament-create-box').locator('summary').click();
    found.push(...await axeFindings(ann, 'home with tournaments'));

    for (const p of [ann, ben]) {
      await p.page.goto(new URL(`/#tournament=${arena.id}`, server.url).href);
      await p.page.waitForFunction(() => document.querySelector('[data-testid="tournament-action"]')?.textContent === 'Join');
    }
    await ann.el('tournament-action').click();
    await ann.page.locator('[data-testid="tournament-standings"] tbody tr').first().waitFor();
    found.push(...await axeFindings(ann, 'tournament page'));
    await ann.page.setViewportSize({ width: 390, height: 844 });
    found.push(...await axeFindings(ann, 'tournament page at 390x844'));
    await ann.page.setViewportSize({ width: 1280, height: 900 });

    // Paired: the tournament game, its bar and Berserk, and a line in the chat.
    await ben.el('tournament-action').click();
    for (const p of [ann, ben]) await p.el('tournament-bar').waitFor({ timeout: 30_000 });
    await ann.el('berserk').waitFor();
    await ann.el('chat-input').fill('have fun');
    await ann.el('chat-input').press('Enter');
    await ann.page.locator('[data-testid="chat-lines"] .chat-line').first().waitFor();
    found.push(...await axeFindings(ann, 'tournament game with chat'));
    await ann.page.setViewportSize({ width: 390, height: 844 });
    found.push(...await axeFindings(ann, 'tournament game with chat at 390x844'));
    assert.deepEqual(found, []);
  });
});

test('axe-core finds nothing serious on a Swiss page', { timeout: 120_000 }, async () => {
  const options = { viewport: { width: 1280, height: 900 } };
  const cid = await Player.open(browser, 'axe-cid', server.url, '/', options);
  players.push(cid);
  await withShots('a11y-swiss', () => [cid], server, async () => {
    await cid.page.waitForFunction(() => localStorage.getItem('fogblast.token'));
    const token = await cid.page.evaluate(() => JSON.parse(localStorage.getItem('fogblast.token')));
    const response = await fetch(`${server.url}/api/swiss/new/any`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: new URLSearchParams({ name: 'Axe Swiss', 'clock.limit': '180', 'clock.increment': '2', nbRounds: '5', variant: 'atomic960', description: 'For the accessibility check.' }),
    });
    const swiss = await response.json();
    assert.equal(response.status, 200, JSON.stringify(swiss));
    await cid.page.goto(new URL(`/#swiss=${swiss.id}`, server.url).href);
    await cid.page.waitForFunction(() => document.querySelector('[data-testid="swiss-action"]')?.textContent === 'Join');
    await cid.el('swiss-action').click();
    await cid.page.locator('[data-testid="swiss-standings"] tbody tr').first().waitFor();
    const found = [...await axeFindings(cid, 'Swiss page')];
    await cid.page.setViewportSize({ width: 390, height: 844 });
    found.push(...await axeFindings(cid, 'Swiss page at 390x844'));
    assert.deepEqual(found, []);
  });
});

test('axe-core finds nothing serious on the analysis board', { timeout: 120_000 }, async () => {
  const dee = await Player.open(browser, 'axe-dee', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(dee);
  await withShots('a11y-analysis-board', () => [dee], server, async () => {
    await dee.el('analysis-board-open').click();
    await dee.el('analysis-board').waitFor();
    await dee.page.waitForFunction(() => /^depth \d+$/.test(document.querySelector('[data-testid="analysis-board-depth"]').textContent), null, { timeout: 30_000 });
    const found = [...await axeFindings(dee, 'analysis board')];
    // With a line and a refused FEN's message.
    const grid = '[data-testid="analysis-board-grid"]';
    await dee.page.locator(`${grid} .square[data-square="e2"]`).click();
    await dee.page.locator(`${grid} .square[data-square="e4"]`).click();
    await dee.el('analysis-board-fen').fill('not a fen');
    await dee.el('analysis-board-fen-load').click();
    await dee.el('analysis-board-fen-error').waitFor();
    // The engine's line written out, so the check covers it.
    await dee.page.waitForFunction(() => document.querySelector('[data-testid="analysis-board-line"]').textContent.trim() !== '', null, { timeout: 30_000 });
    found.push(...await axeFindings(dee, 'analysis board with a line and a FEN error'));
    // And with the engine off: no score, no line.
    await dee.el('analysis-board-engine').uncheck();
    await dee.page.waitForFunction(() => document.querySelector('[data-testid="analysis-board-line"]').textContent.trim() === '');
    found.push(...await axeFindings(dee, 'analysis board with the engine off'));
    await dee.page.setViewportSize({ width: 390, height: 844 });
    found.push(...await axeFindings(dee, 'analysis board at 390x844'));
    assert.deepEqual(found, []);
  });
});

test('axe-core finds nothing serious on the Puzzles screen', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'axe-puzzles', server.url, '/#puzzles', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('a11y-puzzles', () => [p], server, async () => {
    const loaded = () => p.page.waitForFunction(() => document.querySelector('[data-testid="puzzle-screen"]').dataset.puzzle);
    await loaded();
    const found = [...await axeFindings(p, 'puzzles')];
    await p.el('puzzle-variant').selectOption('fog');
    await p.page.waitForFunction(() => document.querySelector('[data-testid="puzzle-screen"]').dataset.variant === 'fog');
    await p.page.setViewportSize({ width: 390, height: 844 });
    found.push(...await axeFindings(p, 'a fog puzzle at 390x844'));
    assert.deepEqual(found, []);
    assert.deepEqual(p.errors, []);
  });
});
