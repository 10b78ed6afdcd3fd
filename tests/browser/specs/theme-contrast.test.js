// Every theme is easy to read, measured on the page itself for each theme
// of the select: the two sides' pieces are far apart (their body colours at
// least 6:1 in WCAG contrast, and even white's darkest shade at least 2:1
// against black's lightest highlight, so no part of a white piece looks
// like a black one), and the last-move and selection highlights stand out
// from both kinds of square (a colour difference, CIE76 ΔE, of at least 20
// against every colour of the square's base; lichess's last-move tint is
// about 35).

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

/** '#rgb', '#rrggbb' or 'rgb(a)(…)' as [r, g, b, a]. */
function parseColor(text) {
  const t = text.trim();
  if (t.startsWith('#')) {
    const h = t.slice(1).length === 3 ? [...t.slice(1)].map((c) => c + c).join('') : t.slice(1);
    return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)).concat(1);
  }
  const m = /rgba?\(([^)]*)\)/.exec(t);
  assert.ok(m, `a colour: ${t}`);
  const parts = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
  return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
}

function luminance([r, g, b]) {
  const lin = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}
const contrast = (a, b) => {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
};
function lab([r, g, b]) {
  const lin = (c) => ((c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const X = f((R * 0.4124 + G * 0.3576 + B * 0.1805) / 0.95047);
  const Y = f(R * 0.2126 + G * 0.7152 + B * 0.0722);
  const Z = f((R * 0.0193 + G * 0.1192 + B * 0.9505) / 1.08883);
  return [116 * Y - 16, 500 * (X - Y), 200 * (Y - Z)];
}
const deltaE = (a, b) => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]));
const over = ([r, g, b, a], under) => [r, g, b].map((c, i) => c * a + under[i] * (1 - a));

/** The base colours of a square texture: every colour of its last (solid) gradient. */
function baseColours(tex) {
  const gradients = [...tex.matchAll(/linear-gradient\(((?:[^()]|\([^()]*\))*)\)/g)];
  const last = gradients[gradients.length - 1][1];
  return [...last.matchAll(/#[0-9a-fA-F]{3,6}\b|rgba?\([^)]*\)/g)].map((m) => parseColor(m[0]));
}

test('every theme: the two sides apart, the last move and the selection seen', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'themes', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('theme-contrast', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await p.waitTurn();
    const themes = await p.el('theme').evaluate((s) => [...s.options].map((o) => o.value));
    assert.equal(themes.length, 7, 'seven themes');
    const failures = [];
    for (const theme of themes) {
      await p.el('theme').selectOption(theme);
      await p.page.waitForFunction((t) => document.body.dataset.theme === t, theme);
      const read = await p.page.evaluate(() => {
        const css = getComputedStyle(document.body);
        const stops = (color) => {
          const piece = document.querySelector(`[data-testid="board"] .piece[data-color^="${color}"][data-role^="q"] svg`);
          const body = [...piece.querySelectorAll('linearGradient')].find((g) => /-body$/.test(g.id));
          return [...body.querySelectorAll('stop')].map((s) => s.getAttribute('stop-color'));
        };
        return {
          light: css.getPropertyValue('--light-tex'), dark: css.getPropertyValue('--dark-tex'),
          lastMove: css.getPropertyValue('--last-move'), selected: css.getPropertyValue('--selected'),
          white: stops('w'), black: stops('b'),
        };
      });
      const white = read.white.map(parseColor);
      const black = read.black.map(parseColor);
      const mid = contrast(white[1], black[1]);
      if (mid < 6) failures.push(`${theme}: the pieces' body colours are ${mid.toFixed(2)}:1 apart (want 6)`);
      const apart = Math.min(...white.flatMap((w) => black.map((b) => (luminance(w) > luminance(b) ? contrast(w, b) : 0))));
      if (apart < 2) failures.push(`${theme}: white's darkest shade is ${apart.toFixed(2)}:1 over black's lightest (want 2)`);
      for (const [mark, value] of [['last move', read.lastMove], ['selection', read.selected]]) {
        const tint = parseColor(value);
        for (const [kind, tex] of [['light', read.light], ['dark', read.dark]]) {
          const d = Math.min(...baseColours(tex).map((c) => deltaE(over(tint, c), c)));
          if (d < 20) failures.push(`${theme}: the ${mark} on ${kind} squares differs by ΔE ${d.toFixed(1)} (want 20)`);
        }
      }
    }
    assert.deepEqual(failures, []);
  });
});
