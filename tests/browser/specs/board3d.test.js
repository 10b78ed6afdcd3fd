// The 3D board as a player meets it, from the starting position:
// - a click on the middle of any piece's picture picks that piece, on every
//   square of the start (a piece's picture stands over the squares behind
//   it, so picking follows the drawn shapes); a second click on the piece
//   in hand puts it down, and a click on a square a piece in front stands
//   over still moves the piece in hand there;
// - the board's box is as tall as the tilted board looks: no empty band
//   above it, the top player's strip right over the back rank, the board
//   centred in its box and inside the viewport at desktop and phone sizes;
// - the back rank's pieces stay in sight over the pawns in front of them.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, startComputer, withShots, T } from '../lib/player.js';

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

/** Switches to 3D and waits for the tilt's transition to end. */
async function to3d(p) {
  await p.el('toggle-3d').click();
  await p.page.waitForFunction((sel) => document.querySelector(sel)?.dataset.mode === '3d', T('board'));
  await p.page.waitForTimeout(700);
}

/** Every piece on the board: its square, colour and the middle of its picture on screen. */
const pieceCentres = (p) =>
  p.page.$$eval(`${T('board')} .piece`, (els) =>
    els.map((e) => {
      const r = e.querySelector('svg').getBoundingClientRect();
      return { sq: e.closest('.square').dataset.square, color: e.dataset.color, x: r.x + r.width / 2, y: r.y + r.height / 2 };
    }),
  );

const selectedSquares = (p) => p.page.$$eval(`${T('board')} .square.selected`, (els) => els.map((e) => e.dataset.square));

test('3D: a click on a piece picks that piece on every square of the start, and reaches the squares behind it', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'board3d-pick', server.url);
  players.push(p);
  await withShots('board3d-pick', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    const v = await p.waitTurn();
    await to3d(p);
    const centres = await pieceCentres(p);
    assert.equal(centres.length, 32, 'the 32 pieces of the start');

    // What the page's own hit test finds at the middle of each picture.
    const wrong = await p.page.evaluate((cs) => {
      const out = [];
      for (const c of cs) {
        const hit = document.elementFromPoint(c.x, c.y);
        const at = hit?.closest('.square')?.dataset.square;
        if (at !== c.sq || !hit.closest('.piece')) out.push(`${c.sq} (hit ${at || 'nothing'}${hit?.closest('.piece') ? '' : ', not a piece'})`);
      }
      return out;
    }, centres);
    assert.deepEqual(wrong, [], `the middle of these pieces' pictures hits something else: ${wrong.join(', ')}`);

    // Real clicks on White's sixteen: each picks its own square and shows its moves; a second click puts it down.
    for (const c of centres.filter((c) => c.color === 'w')) {
      await p.page.mouse.click(c.x, c.y);
      assert.deepEqual(await selectedSquares(p), [c.sq], `a click on the body of the piece on ${c.sq}`);
      const hints = await p.hints();
      const legal = [...new Set(v.legal.filter((m) => m.startsWith(c.sq)).map((m) => m.slice(2, 4)))].sort();
      assert.deepEqual(hints, legal, `the moves shown for the piece on ${c.sq}`);
      await p.page.mouse.click(c.x, c.y);
      assert.deepEqual(await selectedSquares(p), [], `a second click puts the piece on ${c.sq} down`);
    }

    assert.deepEqual(p.sent.filter((f) => f.t === 'move'), [], 'picking pieces up and putting them down sends nothing');

    // c3's middle lies under the picture of the pawn on c2 standing in front
    // of it; with the knight from b1 in hand, a click there is the move to c3.
    const c3 = await p.page.evaluate((sel) => {
      const r = document.querySelector(`${sel} [data-square="c3"]`).getBoundingClientRect();
      const x = r.x + r.width / 2, y = r.y + r.height / 2;
      return { x, y, over: document.elementFromPoint(x, y)?.closest('.square')?.dataset.square };
    }, T('board'));
    assert.equal(c3.over, 'c2', "the middle of c3 is covered by the c2 pawn's picture (else this checks nothing)");
    const b1 = centres.find((c) => c.sq === 'b1');
    await p.page.mouse.click(b1.x, b1.y);
    assert.deepEqual(await selectedSquares(p), ['b1']);
    await p.page.mouse.click(c3.x, c3.y);
    await p.waitFor(() => p.seatFrames().some((f) => f.t === 'move' && f.ply === 0), 'the move to c3');
    assert.equal(p.seatFrames().find((f) => f.t === 'move' && f.ply === 0).uci, 'b1c3');
    await p.shot('board3d-picked');
  });
});

test('3D: the board fills its box, sits under the top strip, stays in the viewport, and shows its back rank', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'board3d-frame', server.url);
  players.push(p);
  await withShots('board3d-frame', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await p.waitTurn();
    await to3d(p);
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      await p.page.setViewportSize({ width, height });
      // The board's size is in its perspective: the tilt's transition runs again.
      await p.page.waitForTimeout(800);
      const m = await p.page.evaluate((sel) => {
        const board = document.querySelector(sel);
        const wrap = board.parentElement;
        const rects = [...board.querySelectorAll('.square, .piece svg')].map((e) => e.getBoundingClientRect());
        const drawn = {
          top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom)),
          left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)),
        };
        const squares = [...board.querySelectorAll('.square')].map((e) => e.getBoundingClientRect());
        const near = { left: Math.min(...squares.map((r) => r.left)), right: Math.max(...squares.map((r) => r.right)) };
        const strips = [...document.querySelectorAll('.strip')].map((e) => e.getBoundingClientRect());
        const w = wrap.getBoundingClientRect();
        return { drawn, near, wrap: { top: w.top, bottom: w.bottom, left: w.left, right: w.right, width: w.width }, topStrip: strips[0], bottomStrip: strips[strips.length - 1] };
      }, T('board'));
      const size = `${width}×${height}`;
      const emptyAbove = m.drawn.top - m.wrap.top;
      assert.ok(emptyAbove > -4 && emptyAbove < 0.05 * m.wrap.width, `${size}: the top of the drawn board is ${emptyAbove.toFixed(0)} px below its box's top`);
      assert.ok(m.drawn.top - m.topStrip.bottom < 24, `${size}: the top player's strip is ${(m.drawn.top - m.topStrip.bottom).toFixed(0)} px above the back rank`);
      assert.ok(m.drawn.bottom <= m.wrap.bottom + 2, `${size}: the board (${m.drawn.bottom.toFixed(0)}) stays in its box (${m.wrap.bottom.toFixed(0)})`);
      assert.ok(Math.abs((m.near.left + m.near.right) / 2 - (m.wrap.left + m.wrap.right) / 2) < 2, `${size}: the board is centred in its box`);
      assert.ok(m.near.right - m.near.left > 0.97 * m.wrap.width, `${size}: the near edge spans the box`);
      assert.ok(m.drawn.left >= 0 && m.drawn.right <= width, `${size}: the board is inside the viewport's width`);
      if (width > 900) assert.ok(m.bottomStrip.bottom <= height, `${size}: the bottom strip (${m.bottomStrip.bottom.toFixed(0)}) is in the viewport`);
      await p.shot(`board3d-${width}x${height}`);
    }

    // How much of each back-rank piece can be pointed at, against the same piece with the others hidden: at least 70% (a bishop behind its pawn is the least seen).
    const seen = await p.page.evaluate((sel) => {
      const board = document.querySelector(sel);
      const pieces = [...board.querySelectorAll('.piece')];
      const hits = (piece) => {
        const r = piece.querySelector('svg').getBoundingClientRect();
        let n = 0;
        for (let i = 1; i < 20; i++) {
          for (let j = 1; j < 20; j++) {
            const hit = document.elementFromPoint(r.left + (r.width * i) / 20, r.top + (r.height * j) / 20);
            if (hit && piece.contains(hit)) n++;
          }
        }
        return n;
      };
      const out = {};
      for (const piece of pieces) {
        const square = piece.closest('.square').dataset.square;
        if (square[1] !== '8' && square[1] !== '1') continue;
        const withOthers = hits(piece);
        for (const other of pieces) if (other !== piece) other.style.visibility = 'hidden';
        const alone = hits(piece);
        for (const other of pieces) other.style.visibility = '';
        out[square] = alone ? withOthers / alone : 0;
      }
      return out;
    }, T('board'));
    assert.equal(Object.keys(seen).length, 16, 'the sixteen back-rank pieces');
    const hidden = Object.entries(seen).filter(([, share]) => share < 0.7).map(([sq, share]) => `${sq} ${(share * 100).toFixed(0)}%`);
    assert.deepEqual(hidden, [], `back-rank pieces less than 70% in sight: ${hidden.join(', ')}`);
  });
});
