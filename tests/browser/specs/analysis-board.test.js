// The analysis board: opened from home and from a finished game, it plays
// moves (a move off the line replaces the rest), shows the engine in the
// page (its score on the bar and as a number, its best line as arrows and
// as moves), steps back and forward with the buttons and the arrow keys,
// previews an atomic capture's blast, flips, turns the engine off and on,
// reopens the same position from its link after a reload, and says clearly
// why a malformed or illegal FEN is refused; at 1280×900 and on a 390×844
// touch phone.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, T, confirmClick, launch, startComputer, withShots } from '../lib/player.js';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
const AFTER_E4_D5 = 'rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2';
const AFTER_E4 = 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1';
const AFTER_E4_E5 = 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2';
const GRID = T('analysis-board-grid');

const square = (p, name) => p.page.locator(`${GRID} .square[data-square="${name}"]`);

/** Plays `uci` on the analysis board by clicking its piece, then its hinted square. */
async function play(p, uci) {
  await square(p, uci.slice(0, 2)).click();
  await p.page.waitForSelector(`${GRID} .square.hint[data-square="${uci.slice(2, 4)}"]`);
  await square(p, uci.slice(2, 4)).click();
}

const moveTexts = (p) => p.page.locator(`${T('analysis-board-moves')} .move`).allTextContents();
const mainTexts = (p) => p.page.locator(`${T('analysis-board-moves')} .move.main`).allTextContents();
const moveButton = (p, san) => p.page.locator(`${T('analysis-board-moves')} .move`, { hasText: new RegExp(`^${san}$`) });
const fenBox = (p) => p.el('analysis-board-fen').inputValue();
const hashFen = (p) => p.page.evaluate(() => decodeURIComponent(location.hash).split('/').slice(2).join('/').replace(/_/g, ' '));

async function waitFen(p, fen) {
  await p.page.waitForFunction(
    ([sel, want]) => document.querySelector(sel).value === want,
    [T('analysis-board-fen'), fen],
  );
}

/**
 * Waits for the engine's verdict on the position shown: a score, a depth, a
 * best line, and its first move drawn as an arrow that is a legal move here
 * (the board hints it when its piece is picked up).
 */
async function engineSpeaks(p) {
  await p.page.waitForFunction((sel) => /^(?:[+-]?\d+\.\d\d|-?#\d+)$/.test(document.querySelector(sel).textContent), T('analysis-board-eval'), { timeout: 30_000 });
  await p.page.waitForFunction((sel) => /^depth \d+$/.test(document.querySelector(sel).textContent), T('analysis-board-depth'));
  const lineText = await p.el('analysis-board-line').textContent();
  assert.match(lineText, /^\d+\.(?:\.\.)? \S+/, `the best line is written out: ${lineText}`);
  const arrow = p.page.locator(`${T('analysis-board-arrows')} .arrow.engine[data-engine="1"]`);
  await arrow.waitFor({ state: 'attached' });
  // Read at once: a deeper search may redraw the arrow at any moment.
  const [from, to] = await arrow.evaluate((e) => [e.dataset.from, e.dataset.to]);
  await square(p, from).click();
  await p.page.waitForSelector(`${GRID} .square.selected[data-square="${from}"]`);
  const hinted = await p.page.$$eval(`${GRID} .square.hint`, (els) => els.map((e) => e.dataset.square));
  assert.ok(hinted.includes(to), `the engine's arrow ${from}${to} is a legal move (hints: ${hinted})`);
  await square(p, from).click();
  return `${from}${to}`;
}

test('the analysis board from home: moves, engine, stepping, blast, flip, link, bad FEN', { timeout: 180_000 }, async () => {
  const p = await Player.open(browser, 'analyst', server.url, '/', { viewport: { width: 1280, height: 900 } });
  await withShots('analysis-board-home', () => [p], server, async () => {
    await p.el('analysis-board-open').click();
    await p.el('analysis-board').waitFor();
    await waitFen(p, START);
    assert.equal(await p.el('analysis-board-variant').inputValue(), 'atomic');
    assert.equal(await p.el('analysis-board-status').textContent(), 'White to move.');
    assert.equal(await hashFen(p), START, 'the address bar holds the position');
    await engineSpeaks(p);

    await play(p, 'e2e4');
    await play(p, 'e7e5');
    assert.deepEqual(await moveTexts(p), ['e4', 'e5']);
    assert.equal(await p.el('analysis-board-ply').textContent(), '2 / 2');
    // Back with the key, then forward with the button.
    await p.page.keyboard.press('ArrowLeft');
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent === '1 / 2', T('analysis-board-ply'));
    assert.equal(await p.el('analysis-board-status').textContent(), 'Black to move.');
    await p.el('analysis-board-next').click();
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent === '2 / 2', T('analysis-board-ply'));
    await p.page.keyboard.press('ArrowLeft');
    // Another move there opens a variation: e5 stays on the mainline.
    await play(p, 'd7d5');
    assert.deepEqual(await moveTexts(p), ['e4', 'e5', 'd5']);
    assert.deepEqual(await mainTexts(p), ['e4', 'e5']);
    assert.equal(await p.el('analysis-board-ply').textContent(), '2 / 2');
    await waitFen(p, AFTER_E4_D5);
    assert.equal(await hashFen(p), AFTER_E4_D5);
    await engineSpeaks(p);

    // The blast preview: e4 picked up, the pointer over d5.
    await square(p, 'e4').click();
    await square(p, 'd5').hover();
    await p.page.waitForSelector(`${GRID} .square.blast[data-square="d5"]`);
    const blast = await p.page.$$eval(`${GRID} .square.blast`, (els) => els.map((e) => e.dataset.square).sort());
    // No piece but pawns stands next to d5: the capture square alone is marked.
    assert.deepEqual(blast, ['d5'], `the blast of exd5: ${blast}`);
    await square(p, 'd5').click();
    assert.deepEqual(await moveTexts(p), ['e4', 'e5', 'd5', 'exd5']);
    assert.equal(await p.el('analysis-board-ply').textContent(), '3 / 3');
    await p.shot('analysis-board-variation');
    // Any move of the tree is a click away: the mainline's e5, then back.
    await moveButton(p, 'e5').click();
    await waitFen(p, AFTER_E4_E5);
    assert.equal(await p.el('analysis-board-ply').textContent(), '2 / 2');
    await moveButton(p, 'exd5').click();
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent === '3 / 3', T('analysis-board-ply'));
    // Deleting the variation takes the board back to where it branched.
    await p.el('analysis-board-variation').locator('.variation-delete').click();
    await waitFen(p, AFTER_E4);
    assert.deepEqual(await moveTexts(p), ['e4', 'e5']);
    assert.equal(await p.el('analysis-board-variation').count(), 0);

    // The engine off: no arrow, no score; on again: both back.
    await p.el('analysis-board-engine').uncheck();
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'off', T('analysis-board-eval'));
    assert.equal(await p.page.locator(`${T('analysis-board-arrows')} .arrow.engine`).count(), 0);
    await p.el('analysis-board-engine').check();
    await engineSpeaks(p);

    await p.el('analysis-board-flip').click();
    assert.equal(await p.page.locator(GRID).getAttribute('data-orientation'), 'black');
    await p.shotSizes('analysis-board');

    // The shared link, in a fresh page, opens the same position.
    const shown = await fenBox(p);
    const link = await p.el('analysis-board-link').getAttribute('href');
    const guest = await Player.open(browser, 'guest', server.url, link, { viewport: { width: 1280, height: 900 } });
    try {
      await guest.el('analysis-board').waitFor();
      await waitFen(guest, shown);
      assert.equal(await guest.page.locator(`${GRID} .square[data-square="d5"] .piece`).count(), 0, 'd5 exploded');
      assert.equal(await guest.page.locator(GRID).getAttribute('data-orientation'), 'white');
      await guest.page.reload();
      await waitFen(guest, shown);
      await engineSpeaks(guest);
      assert.deepEqual(guest.errors, []);
    } finally {
      await guest.context.close();
    }

    // A malformed FEN, then an illegal one: a clear message, the board unchanged.
    await p.el('analysis-board-fen').fill('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1');
    await p.el('analysis-board-fen-load').click();
    await p.el('analysis-board-fen-error').waitFor();
    assert.equal(await p.el('analysis-board-fen-error').textContent(), 'That is not a valid FEN: board field: rank 1 has 7 squares, not 8.');
    assert.equal(await hashFen(p), shown, 'the refused FEN changed nothing');
    await p.el('analysis-board-fen').fill('k7/8/8/8/8/8/8/KK6 w - - 0 1');
    await p.el('analysis-board-fen').press('Enter');
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent.includes('illegal'), T('analysis-board-fen-error'));
    assert.equal(await p.el('analysis-board-fen-error').textContent(), 'That position is illegal: white has more than one king.');
    // A good one loads and clears the message.
    // An empty box asks for a FEN.
    await p.el('analysis-board-fen').fill('');
    await p.el('analysis-board-fen-load').click();
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent.startsWith('Paste a FEN first'), T('analysis-board-fen-error'));
    await p.el('analysis-board-fen').fill('k7/8/8/8/8/8/1Q6/K7 w - - 0 1');
    await p.el('analysis-board-fen-load').click();
    await p.el('analysis-board-fen-error').waitFor({ state: 'hidden' });
    assert.equal(await hashFen(p), 'k7/8/8/8/8/8/1Q6/K7 w - - 0 1');
    assert.deepEqual(await moveTexts(p), []);

    // A link with a bad FEN opens the start and says why.
    await p.page.goto(`${server.url}/#analysis/standard/not_a_fen`);
    await p.el('analysis-board-fen-error').waitFor();
    assert.match(await p.el('analysis-board-fen-error').textContent(), /^That is not a valid FEN: FEN has 3 fields; expected 4 to 6/);
    await waitFen(p, START);
    assert.equal(await p.el('analysis-board-variant').inputValue(), 'standard');
    assert.deepEqual(p.errors, []);
  });
});

test('a finished game opens on the analysis board at the position on screen', { timeout: 120_000 }, async () => {
  const p = await Player.open(browser, 'player', server.url, '/', { viewport: { width: 1280, height: 900 } });
  await withShots('analysis-board-game', () => [p], server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    const v = await p.waitTurn();
    await p.play('g1f3', v.legal);
    await p.waitFor(() => p.view().ply >= 2, 'the computer to reply');
    assert.equal(await p.el('analyse').isVisible(), false, 'no analysis while the game is played');
    await confirmClick(p, 'resign');
    await p.waitEnd();
    await p.el('analyse').waitFor();
    // One move back in the replay: the board opens there.
    await p.el('replay-prev').click();
    await p.el('analyse').click();
    await p.el('analysis-board').waitFor();
    const texts = await moveTexts(p);
    assert.equal(texts.length, 2, `both moves are on the board's line: ${texts}`);
    assert.equal(texts[0], 'Nf3');
    assert.equal(await p.el('analysis-board-ply').textContent(), '1 / 2');
    await waitFen(p, 'rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1');
    // The arrow keys step the line with the focus off the board too.
    await p.page.locator('#analysis-board-title').click();
    await p.page.keyboard.press('ArrowRight');
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent === '2 / 2', T('analysis-board-ply'));
    await engineSpeaks(p);
    // Back to the start of the game with Home, and a move of another line.
    await p.page.keyboard.press('Home');
    await waitFen(p, START);
    assert.equal(await p.el('analysis-board-game-line').isVisible(), false, 'still on the game\'s moves');
    await play(p, 'e2e4');
    assert.deepEqual(await moveTexts(p), [...texts.slice(0, 1), 'e4', ...texts.slice(1)], 'a variation beside the game\'s first move');
    assert.equal(await p.el('analysis-board-ply').textContent(), '1 / 1');
    // The game's own moves come back, at the ply where the line left them.
    await p.el('analysis-board-game-line').click();
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent === '0 / 2', T('analysis-board-ply'));
    assert.deepEqual(await mainTexts(p), texts);
    assert.equal(await p.el('analysis-board-game-line').isVisible(), false);
    // The browser's back button leaves the board for home.
    await p.page.goBack();
    await p.el('home').waitFor();
    assert.equal(await p.el('analysis-board').isVisible(), false);
    assert.deepEqual(p.errors, []);
  });
});

test('a finished fog-of-war game opens seen whole; another variant starts a new line there', { timeout: 120_000 }, async () => {
  const p = await Player.open(browser, 'fogger', server.url, '/', { viewport: { width: 1280, height: 900 } });
  await withShots('analysis-board-fog', () => [p], server, async () => {
    await startComputer(p, { variant: 'fog', color: 'white', level: 'easy' });
    const v = await p.waitTurn();
    await p.play('e2e4', v.legal);
    await p.waitFor(() => p.view().ply >= 2, 'the computer to reply');
    await confirmClick(p, 'resign');
    await p.waitEnd();
    await p.el('analyse').click();
    await p.el('analysis-board').waitFor();
    assert.equal(await p.el('analysis-board-variant').inputValue(), 'fog');
    const texts = await moveTexts(p);
    assert.equal(texts.length, 2, `both moves, the computer's too: ${texts}`);
    assert.equal(texts[0], 'e4');
    // The computer's move is on the board although white never saw it.
    const shown = await fenBox(p);
    assert.notEqual(shown, 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1');
    assert.equal(await p.page.locator(`${GRID} .square.fog`).count(), 0, 'no fog on the analysis board');
    await engineSpeaks(p);
    await p.el('analysis-board-variant').selectOption('standard');
    await p.page.waitForFunction(() => location.hash.startsWith('#analysis/standard/'));
    assert.equal(await fenBox(p), shown, 'the same position, in standard chess');
    assert.deepEqual(await moveTexts(p), []);
    await engineSpeaks(p);
    // Home stops the engine and leaves the board.
    await p.el('analysis-board-home').click();
    await p.el('home').waitFor();
    assert.equal(await p.page.evaluate(() => location.hash), '');
    assert.deepEqual(p.errors, []);
  });
});

test('on a 390×844 touch phone the board fits and a tap plays a move', { timeout: 120_000 }, async () => {
  const p = await Player.open(browser, 'phone', server.url, '/#analysis/standard', {
    viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true,
  });
  await withShots('analysis-board-phone', () => [p], server, async () => {
    await p.el('analysis-board').waitFor();
    await waitFen(p, START);
    const box = await p.page.locator(GRID).boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390 + 0.5, `the board fits the screen's width: ${JSON.stringify(box)}`);
    assert.ok(box.width > 300, `the board is not shrunk to nothing: ${box.width}`);
    await square(p, 'g1').tap();
    await p.page.waitForSelector(`${GRID} .square.hint[data-square="f3"]`);
    await square(p, 'f3').tap();
    await p.page.waitForFunction((sel) => document.querySelector(sel).textContent === '1 / 1', T('analysis-board-ply'));
    assert.deepEqual(await moveTexts(p), ['Nf3']);
    await engineSpeaks(p);
    const width = await p.page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `nothing runs off the side: the page is ${width}px wide`);
    assert.deepEqual(p.errors, []);
  });
});
