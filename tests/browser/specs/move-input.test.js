// Typing a move in the box under the board: SAN (e4, Nf3, O-O) and UCI
// (d2d4) are played as the board plays them; a refused one is explained in
// the same words the board uses, an unreadable or ambiguous one says so,
// and nothing is sent. On a phone too.

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

const moves = (p) => p.sent.filter((f) => f.t === 'move');

/** Types `text` and Enter; resolves to the move frame of this ply when one is played. */
async function type(p, text) {
  const input = p.el('move-input');
  await input.fill(text);
  await input.press('Enter');
}

async function freshNotice(p, act) {
  await p.page.evaluate(() => { const n = document.querySelector('[data-testid="notice"]'); n.hidden = true; n.textContent = ''; });
  await act();
  await p.page.waitForFunction(() => { const n = document.querySelector('[data-testid="notice"]'); return n && !n.hidden && n.textContent.trim(); });
  return (await p.el('notice').textContent()).trim();
}

async function typedPlays(p, text, uci) {
  const v = await p.waitTurn();
  assert.ok(v.legal.includes(uci), `${uci} is legal here`);
  await type(p, text);
  await p.waitFor(() => p.received.some((f) => f.t === 'move' && f.ply === v.ply), `${text} played`);
  assert.equal(moves(p).at(-1).uci, uci, `${text} is ${uci}`);
  assert.equal(await p.el('move-input').inputValue(), '', 'the box is emptied');
}

test('SAN and UCI typed, refusals in the board\'s words', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'typed', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('move-input', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await p.waitTurn();
    // The board's words for a knight that cannot go there, and the box's.
    const byBoard = await freshNotice(p, async () => { await p.clickSquare('g1'); await p.clickSquare('g3'); });
    const typed = await freshNotice(p, () => type(p, 'g1g3'));
    assert.equal(typed, byBoard);
    assert.match(typed, /cannot move/);
    assert.equal(await freshNotice(p, () => type(p, 'Ng3')), byBoard, 'the same in SAN');
    assert.match(await freshNotice(p, () => type(p, 'hello')), /not a move/);
    assert.equal(await p.el('move-input').getAttribute('aria-invalid'), 'true');
    assert.equal(moves(p).length, 0, 'nothing sent');
    await p.shotSizes('move-input-refused');

    await typedPlays(p, 'e4', 'e2e4');
    await typedPlays(p, 'Nf3', 'g1f3');
    const v = await p.waitTurn();
    if (v.legal.includes('f1c4')) await typedPlays(p, 'Bc4', 'f1c4');
    else await typedPlays(p, 'd2d4', 'd2d4');
    const w = await p.waitTurn();
    if (w.legal.includes('e1g1')) await typedPlays(p, 'O-O', 'e1g1');
  });
});

test('typing a move on a phone', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'typed-phone', server.url, '/', { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  players.push(p);
  await withShots('move-input-phone', () => players, server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    const box = await p.el('move-input').boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the box fits: ${JSON.stringify(box)}`);
    await typedPlays(p, 'd4', 'd2d4');
  });
});
