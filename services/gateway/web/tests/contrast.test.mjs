// Every theme's pieces stand out from both kinds of square: a contrast ratio
// of at least 3:1 (WCAG 2 relative luminance, the non-text contrast of
// success criterion 1.4.11) between the piece and the square under it.
//
// What is compared, read from the art itself:
// - the squares: the colours of each theme's base gradient in
//   art/themes.css (the last `linear-gradient` of --light-tex and
//   --dark-tex; the texture laid over it is faint and left out), every stop;
// - the piece: the 2D drawing pieceSvg() returns, its body colour (the
//   middle stop of the body gradient, which covers most of the piece;
//   composited over the square when the theme draws the body translucent)
//   and its outline (the stroke drawn round the silhouette).
//
// A piece passes on a square when its edge is seen there: either the
// outline reaches 3:1 against every stop of the square, or the body colour
// does. A white piece on a light square is seen by its
// outline, a black piece on a dark square likewise; the test says which
// one carried each pair and names the pairs that reach neither.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { THEMES, ROLES, pieceSvg } from '../art/pieces.js';

const css = readFileSync(new URL('../art/themes.css', import.meta.url), 'utf8');

function rgb(hex) {
  const h = hex.replace('#', '');
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
  return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16));
}

function luminance([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

function over(top, alpha, under) {
  return top.map((c, i) => Math.round(c * alpha + under[i] * (1 - alpha)));
}

// The base colours of a theme's light or dark squares.
function squareColours(theme, kind) {
  const block = css.match(new RegExp(`\\[data-theme='${theme}'\\]\\s*\\{([\\s\\S]*?)\\n\\}`));
  assert.ok(block, `themes.css has a block for ${theme}`);
  const decl = block[1].match(new RegExp(`--${kind}-tex:([\\s\\S]*?);`));
  assert.ok(decl, `${theme} sets --${kind}-tex`);
  const gradients = [...decl[1].matchAll(/linear-gradient\(([^()]*)\)/g)];
  const last = gradients[gradients.length - 1][1];
  const hexes = last.match(/#[0-9a-fA-F]{3,6}\b/g);
  assert.ok(hexes && hexes.length >= 1, `${theme} --${kind}-tex ends in a solid gradient`);
  return hexes.map(rgb);
}

// The body fill's stops, the outline and the body's opacity of one piece.
function pieceColours(theme, color, role) {
  const svg = pieceSvg(theme, color, role, '2d');
  const body = svg.match(/<linearGradient id="[^"]*-body"[^>]*>([\s\S]*?)<\/linearGradient>/);
  const stops = [...body[1].matchAll(/stop-color="(#[0-9a-fA-F]{3,6})"/g)].map((m) => rgb(m[1]));
  const outline = svg.match(/<g fill="none" stroke="(#[0-9a-fA-F]{3,6})" stroke-width="[\d.]+" stroke-linejoin="round">/)[1];
  const opacity = svg.match(/<g opacity="([\d.]+)">/);
  return { stops, outline: rgb(outline), opacity: opacity ? Number(opacity[1]) : 1 };
}

const MIN = 3;

function judge(theme, color, role, kind) {
  const squares = squareColours(theme, kind);
  const piece = pieceColours(theme, color, role);
  const edge = Math.min(...squares.map((sq) => contrast(piece.outline, sq)));
  const body = piece.stops[1];
  const fill = Math.min(...squares.map((sq) => contrast(over(body, piece.opacity, sq), sq)));
  return { edge, fill, by: edge >= MIN ? 'outline' : fill >= MIN ? 'fill' : null };
}

test('the contrast ratio follows WCAG', () => {
  assert.equal(contrast(rgb('#000'), rgb('#fff')).toFixed(1), '21.0');
  assert.equal(contrast(rgb('#777777'), rgb('#ffffff')).toFixed(2), '4.48');
  assert.equal(contrast(rgb('#123456'), rgb('#123456')), 1);
});

test("every theme's pieces reach 3:1 against both kinds of square, by outline or fill", () => {
  const failures = [];
  const carried = {};
  for (const { id } of THEMES) {
    for (const color of ['w', 'b']) {
      for (const kind of ['light', 'dark']) {
        for (const role of ROLES) {
          const r = judge(id, color, role, kind);
          if (!r.by) {
            failures.push(`${id} ${color === 'w' ? 'white' : 'black'} on ${kind}: outline ${r.edge.toFixed(2)}, fill ${r.fill.toFixed(2)}`);
          }
          carried[`${id}/${color}/${kind}`] = r.by;
        }
      }
    }
  }
  assert.deepEqual([...new Set(failures)], []);
  // The pairs a piece is most like its square are carried by the outline.
  for (const { id } of THEMES) {
    assert.equal(carried[`${id}/w/light`], 'outline', `${id}: white pieces on light squares show by their outline`);
  }
});
