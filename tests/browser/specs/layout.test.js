// What the game screen shows where, at 1280×900 and on a phone: a notice
// never covers a clock or the board; the side to move is marked in words
// and a player who left is not marked with the "to move" dot; Resign
// appears only once both sides have moved (Abort until then); fog of war's
// clouds stay on the board, off its frame, and under the coordinates.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, startComputer, withShots } from '../lib/player.js';

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

const overlap = (a, b) => a && b && a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function noticeFor(p, square) {
  // The same words may come twice: wait for the notice to be said afresh.
  await p.page.evaluate(() => { const n = document.querySelector('[data-testid="notice"]'); n.hidden = true; n.textContent = ''; });
  await p.square(square).click();
  await p.page.waitForFunction(() => { const n = document.querySelector('[data-testid="notice"]'); return n && !n.hidden && n.textContent.trim(); });
}

test('a notice covers neither clock nor the board, at 1280×900 and 390×844', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'notice', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('notice-place', () => players, server, async () => {
    await p.choose('computer-clock', '5+0');
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    await p.waitTurn();
    for (const [size, square] of [[{ width: 1280, height: 900 }, 'e7'], [{ width: 390, height: 844 }, 'd7']]) {
      await p.page.setViewportSize(size);
      await noticeFor(p, square);
      const notice = await p.el('notice').boundingBox();
      assert.ok(notice, 'the notice shows');
      for (const id of ['clock-white', 'clock-black', 'board']) {
        const box = await p.el(id).boundingBox();
        assert.ok(box, `${id} is on screen`);
        assert.ok(!overlap(notice, box), `at ${size.width}×${size.height} the notice ${JSON.stringify(notice)} covers ${id} ${JSON.stringify(box)}`);
      }
      await p.shot(`notice-${size.width}x${size.height}`);
    }
  });
});

test('Resign only once both sides have moved; Abort until then', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'resign-late', server.url);
  players.push(p);
  await withShots('resign-late', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    let v = await p.waitTurn();
    await p.el('abort').waitFor({ state: 'visible' });
    assert.equal(await p.el('resign').isVisible(), false, 'no Resign before any move');
    await p.play('e2e4', v.legal);
    v = await p.waitTurn();
    await p.el('resign').waitFor({ state: 'visible' });
    await p.el('abort').waitFor({ state: 'hidden' });
  });
});

test('a player who left is said in words, with no "to move" dot; the side to move is labelled', { timeout: 90_000 }, async () => {
  const alice = await Player.open(browser, 'presence-alice', server.url);
  players.push(alice);
  await withShots('presence', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'presence-bob', server.url);
    players.push(bob);
    await openInvite(bob, link);
    const v = await alice.waitTurn();
    await alice.play('e2e4', v.legal);
    await bob.waitTurn();
    await bob.context.close();
    players.splice(players.indexOf(bob), 1);
    const top = alice.page.locator('[data-strip="top"]');
    await top.locator('.presence', { hasText: 'left the game' }).waitFor({ timeout: 45_000 });
    const marks = await top.evaluate((strip) => ({
      text: strip.textContent,
      before: getComputedStyle(strip.querySelector('.player-name'), '::before').content,
      turn: strip.querySelector('.turn-mark') && !strip.querySelector('.turn-mark').hidden ? strip.querySelector('.turn-mark').textContent : null,
    }));
    assert.ok(!/●/.test(marks.text) && !/●/.test(marks.before), `the strip of the player who left shows a dot: ${JSON.stringify(marks)}`);
    assert.match(marks.turn || '', /to move/i, 'the side to move is labelled');
    const bottomTurn = await alice.page.locator('[data-strip="bottom"] .turn-mark').isVisible();
    assert.equal(bottomTurn, false, 'only the side to move is labelled');
    await alice.shot('presence-gone');
  });
});

test("fog of war's clouds stay off the frame and under the coordinates", { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'fog-edge', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('fog-edge', () => players, server, async () => {
    await startComputer(p, { variant: 'fog', color: 'white', level: 'easy' });
    await p.waitTurn();
    await p.page.waitForSelector('[data-testid="board"] .square.fog');
    // Let the overlays take the pointer for the question "what is drawn on top here".
    await p.page.addStyleTag({ content: '.square::after, .square::before, .coord { pointer-events: auto !important; } .piece, .piece * { pointer-events: none !important; }' });
    const found = await p.page.evaluate(() => {
      const board = document.querySelector('[data-testid="board"]');
      const b = board.getBoundingClientRect();
      const spill = [];
      for (const sq of board.querySelectorAll('.square.fog')) {
        const r = sq.getBoundingClientRect();
        const points = [];
        if (Math.abs(r.top - b.top) < 1) points.push([r.x + r.width / 2, b.top - 3]);
        if (Math.abs(r.left - b.left) < 1) points.push([b.left - 3, r.y + r.height / 2]);
        if (Math.abs(r.right - b.right) < 1) points.push([b.right + 3, r.y + r.height / 2]);
        if (Math.abs(r.bottom - b.bottom) < 1) points.push([r.x + r.width / 2, b.bottom + 3]);
        for (const [x, y] of points) if (document.elementFromPoint(x, y)?.closest('.board')) spill.push(sq.dataset.square);
      }
      const hidden = [];
      let coords = 0;
      for (const c of board.querySelectorAll('.square.fog > .coord')) {
        coords += 1;
        const r = c.getBoundingClientRect();
        if (document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) !== c) hidden.push(c.parentElement.dataset.square);
      }
      return { spill, hidden, coords };
    });
    assert.ok(found.coords > 0, 'some coordinates stand on fogged squares');
    assert.deepEqual(found.spill, [], 'fog over the frame beside these squares');
    assert.deepEqual(found.hidden, [], 'coordinates under the fog on these squares');
  });
});
