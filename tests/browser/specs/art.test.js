// The piece and board art, as the gateway serves it (/assets/art/): every
// theme's pieces parse as SVG with ids of their own, the six silhouettes
// differ at 40 px, each theme changes the pieces and the board, and on the
// tilted 3D board the pieces stand up, every square takes a click at its
// middle in the board's plane, and every piece one at its picture's middle.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, withShots } from '../lib/player.js';

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

const THEMES = ['felt', 'marble', 'sandstone', 'glacier', 'amber', 'tidepool', 'chamber'];
const ROLES = ['k', 'q', 'r', 'b', 'n', 'p'];

test('the art: pieces, themes and the 3D board', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'art', server.url, '/assets/art/gallery.html?still');
  players.push(p);
  await withShots('art', () => players, server, async () => {
    const { page } = p;
    await page.waitForFunction((n) => document.querySelectorAll('section[data-theme]').length === n, THEMES.length);

    // The module's list of themes, and every piece as well-formed SVG.
    const report = await page.evaluate(
      async ([roles]) => {
        const { THEMES, pieceSvg } = await import('/assets/art/pieces.js');
        const parser = new DOMParser();
        const bad = [];
        const ids = new Set();
        let duplicate = null;
        for (const { id } of THEMES) {
          for (const style of ['2d', '3d']) {
            for (const color of ['w', 'b']) {
              for (const role of roles) {
                const doc = parser.parseFromString(pieceSvg(id, color, role, style), 'image/svg+xml');
                if (doc.querySelector('parsererror') || !doc.querySelector('svg path')) bad.push(`${id}/${style}/${color}${role}`);
                for (const el of doc.querySelectorAll('[id]')) {
                  if (ids.has(el.id)) duplicate = el.id;
                  ids.add(el.id);
                }
              }
            }
          }
        }
        return { themes: THEMES, bad, duplicate };
      },
      [ROLES],
    );
    assert.deepEqual(
      report.themes,
      [
        { id: 'felt', name: 'Classic felt' },
        { id: 'marble', name: 'Renaissance marble' },
        { id: 'sandstone', name: 'Stone Age sandstone' },
        { id: 'glacier', name: 'Glacier' },
        { id: 'amber', name: 'Jurassic amber' },
        { id: 'tidepool', name: 'Tide pool' },
        { id: 'chamber', name: 'Medieval chamber' },
      ],
    );
    assert.deepEqual(report.bad, [], 'pieces that are not well-formed SVG');
    assert.equal(report.duplicate, null, 'an id used by two piece SVGs');
    // The whole gallery page (7 themes, 4 boards each, 3 strips) has no id twice.
    const dupes = await page.evaluate(() => {
      const seen = new Set();
      return [...document.querySelectorAll('[id]')].map((e) => e.id).filter((id) => seen.has(id) || !seen.add(id));
    });
    assert.deepEqual(dupes, []);

    // Rendered at 40 px: the six silhouettes differ, and every theme paints the pieces differently.
    const renders = await page.evaluate(
      async ([themes, roles]) => {
        const { pieceSvg } = await import('/assets/art/pieces.js');
        const size = 40;
        const draw = async (svg) => {
          const img = new Image(size, size);
          img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg);
          await img.decode();
          const canvas = document.createElement('canvas');
          canvas.width = canvas.height = size;
          const ctx = canvas.getContext('2d');
          ctx.drawImage(img, 0, 0, size, size);
          return ctx.getImageData(0, 0, size, size).data;
        };
        const masks = {};
        for (const role of roles) {
          const d = await draw(pieceSvg('felt', 'w', role, '2d'));
          masks[role] = [...Array(size * size).keys()].map((i) => (d[i * 4 + 3] > 128 ? 1 : 0));
        }
        const overlap = {};
        for (const a of roles) {
          for (const b of roles) {
            if (a >= b) continue;
            let diff = 0;
            let union = 0;
            for (let i = 0; i < size * size; i++) {
              diff += masks[a][i] !== masks[b][i] ? 1 : 0;
              union += masks[a][i] || masks[b][i] ? 1 : 0;
            }
            overlap[a + b] = diff / union;
          }
        }
        const colors = {};
        for (const theme of themes) {
          for (const color of ['w', 'b']) {
            const d = await draw(pieceSvg(theme, color, 'q', '2d'));
            let r = 0;
            let g = 0;
            let bl = 0;
            let n = 0;
            for (let i = 0; i < d.length; i += 4) {
              if (d[i + 3] > 200) {
                r += d[i];
                g += d[i + 1];
                bl += d[i + 2];
                n += 1;
              }
            }
            colors[theme + color] = [r / n, g / n, bl / n];
          }
        }
        return { overlap, colors };
      },
      [THEMES, ROLES],
    );
    for (const [pair, share] of Object.entries(renders.overlap)) {
      assert.ok(share > 0.2, `at 40 px the ${pair[0]} and ${pair[1]} silhouettes differ in only ${(share * 100).toFixed(1)}% of their pixels`);
    }
    const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    for (const color of ['w', 'b']) {
      for (const a of THEMES) {
        for (const b of THEMES) {
          if (a < b) {
            const d = distance(renders.colors[a + color], renders.colors[b + color]);
            assert.ok(d > 8, `the ${a} and ${b} ${color === 'w' ? 'white' : 'black'} queens look alike (colour distance ${d.toFixed(1)})`);
          }
        }
      }
    }

    // Each theme's board: its own dark squares; fog drawn over the square.
    const boards = await page.evaluate(() =>
      [...document.querySelectorAll('section[data-theme]')].map((s) => {
        const dark = s.querySelector('.board[data-mode="2d"] .square.dark');
        const fog = s.querySelector('.square.fog');
        const after = getComputedStyle(fog, '::after');
        return {
          theme: s.dataset.theme,
          dark: getComputedStyle(dark).backgroundImage,
          fog: after.content !== 'none' && after.backgroundImage !== 'none' && Number(after.zIndex) > 2,
        };
      }),
    );
    assert.equal(new Set(boards.map((b) => b.dark)).size, THEMES.length, 'every theme has dark squares of its own');
    for (const b of boards) assert.ok(b.fog, `${b.theme}: fog squares draw a cloud over the square`);

    // 3D: the pieces stand up (transformed), the 2D ones lie flat; in the
    // board's plane (the pieces out of the way, as the board asks it) every
    // square of the tilted board is what a click at its middle lands on,
    // and a click at the middle of a piece's picture lands on that piece.
    const section = page.locator('section[data-theme="marble"]');
    const flat = await section.locator('.board[data-mode="2d"] .piece').first().evaluate((e) => getComputedStyle(e).transform);
    const upright = await section.locator('.board[data-mode="3d"] .piece').first().evaluate((e) => getComputedStyle(e).transform);
    assert.equal(flat, 'none');
    assert.notEqual(upright, 'none');
    const { count, missed } = await section.evaluate((sec) => {
      const board = sec.querySelector('.board[data-mode="3d"]');
      board.scrollIntoView({ block: 'center' });
      const squares = [...board.querySelectorAll('.square')];
      const missed = [];
      board.classList.add('hit-squares');
      for (const sq of squares) {
        const r = sq.getBoundingClientRect();
        const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)?.closest('.square');
        if (hit !== sq) missed.push(`${sq.dataset.square}->${hit?.dataset.square}`);
      }
      board.classList.remove('hit-squares');
      for (const piece of board.querySelectorAll('.piece')) {
        const r = piece.querySelector('svg').getBoundingClientRect();
        const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        if (!hit || !piece.contains(hit)) missed.push(`the piece on ${piece.closest('.square').dataset.square}->${hit?.closest('.square')?.dataset.square}`);
      }
      return { count: squares.length, missed };
    });
    assert.equal(count, 64);
    assert.deepEqual(missed, [], 'squares and pieces of the 3D board that a click at their middle misses');
  });
});
