// Arrows and circles drawn on the board with a right-drag, as on lichess:
// a right-drag from one square to another toggles an arrow, a right-click
// on a square toggles a circle; Shift makes them red, Alt blue, both
// yellow, otherwise green. A left click on the board, or another position
// on it, clears them. Drawn in an SVG laid over the squares (it takes no
// pointer), in board coordinates so it turns with the board and tilts with
// the 3D board.

import { name } from './chess.js';

const SVG = 'http://www.w3.org/2000/svg';
const COLORS = { green: '#15781b', red: '#c62828', blue: '#0d5ba8', yellow: '#e6a800' };

/** The colour a pointer event's modifier keys ask for. */
export function brushOf(e) {
  if (e.shiftKey && e.altKey) return 'yellow';
  if (e.shiftKey) return 'red';
  if (e.altKey) return 'blue';
  return 'green';
}

/** Drawings made so far: each names its arrowheads apart (a board on a hidden screen cannot lend its own). */
let drawings = 0;

export class Annotations {
  constructor() {
    this.heads = `arrowhead-${++drawings}`;
    this.el = document.createElementNS(SVG, 'svg');
    this.el.setAttribute('class', 'annotations');
    this.el.setAttribute('viewBox', '0 0 8 8');
    this.el.setAttribute('aria-hidden', 'true');
    this.el.dataset.testid = 'annotations';
    const defs = document.createElementNS(SVG, 'defs');
    for (const [brush, color] of Object.entries(COLORS)) {
      const marker = document.createElementNS(SVG, 'marker');
      marker.setAttribute('id', `${this.heads}-${brush}`);
      marker.setAttribute('orient', 'auto');
      marker.setAttribute('markerWidth', '4');
      marker.setAttribute('markerHeight', '4');
      marker.setAttribute('refX', '2.05');
      marker.setAttribute('refY', '2');
      const head = document.createElementNS(SVG, 'path');
      head.setAttribute('d', 'M0,0 V4 L3,2 Z');
      head.setAttribute('fill', color);
      marker.append(head);
      defs.append(marker);
    }
    this.el.append(defs);
    /** key ("e2e4" or "d4") → brush */
    this.shapes = new Map();
    /** The engine's line (the analysis board): UCI moves drawn as arrows, the first the strongest; a click keeps them. */
    this.engine = [];
    this.orientation = 'white';
  }

  /** Toggles an arrow from square `a` to `b` (indices), or a circle when they are one. */
  toggle(a, b, brush) {
    const key = a === b ? name(a) : name(a) + name(b);
    if (this.shapes.get(key) === brush) this.shapes.delete(key);
    else this.shapes.set(key, brush);
    this.draw();
  }

  clear() {
    if (!this.shapes.size) return;
    this.shapes.clear();
    this.draw();
  }

  /** Draws the engine's best line (UCI moves; at most the first three), or nothing. */
  setEngineLine(moves) {
    const next = (moves || []).slice(0, 3);
    if (next.join() === this.engine.join()) return;
    this.engine = next;
    this.draw();
  }

  setOrientation(orientation) {
    this.orientation = orientation;
    this.draw();
  }

  /** The centre of square `n` in the SVG's coordinates. */
  centre(n) {
    const file = n.charCodeAt(0) - 97;
    const rank = Number(n[1]) - 1;
    const white = this.orientation === 'white';
    return [(white ? file : 7 - file) + 0.5, (white ? 7 - rank : rank) + 0.5];
  }

  draw() {
    for (const old of [...this.el.querySelectorAll('.shape')]) old.remove();
    this.engine.forEach((uci, i) => {
      const arrow = this.arrow(uci.slice(0, 2), uci.slice(2, 4), COLORS.blue, i ? 0.45 - i * 0.1 : 0.85);
      arrow.classList.add('engine');
      arrow.dataset.engine = String(i + 1);
    });
    for (const [key, brush] of this.shapes) {
      const color = COLORS[brush];
      if (key.length === 2) {
        const [x, y] = this.centre(key);
        const c = document.createElementNS(SVG, 'circle');
        c.setAttribute('class', 'shape circle');
        c.setAttribute('cx', x);
        c.setAttribute('cy', y);
        c.setAttribute('r', '0.44');
        c.setAttribute('fill', 'none');
        c.setAttribute('stroke', color);
        c.setAttribute('stroke-width', '0.08');
        c.setAttribute('opacity', '0.85');
        c.dataset.square = key;
        c.dataset.brush = brush;
        this.el.append(c);
      } else {
        const line = this.arrow(key.slice(0, 2), key.slice(2, 4), color, 0.8);
        line.dataset.brush = brush;
      }
    }
  }

  /** An arrow from square `a` to `b` (names), appended to the drawing. */
  arrow(a, b, color, opacity) {
    const [x1, y1] = this.centre(a);
    const [x2, y2] = this.centre(b);
    const len = Math.hypot(x2 - x1, y2 - y1);
    // The line stops short so the head's tip lands near the square's centre.
    const k = (len - 0.3) / len;
    const line = document.createElementNS(SVG, 'line');
    line.setAttribute('class', 'shape arrow');
    line.setAttribute('x1', x1);
    line.setAttribute('y1', y1);
    line.setAttribute('x2', x1 + (x2 - x1) * k);
    line.setAttribute('y2', y1 + (y2 - y1) * k);
    line.setAttribute('stroke', color);
    line.setAttribute('stroke-width', '0.16');
    line.setAttribute('stroke-linecap', 'round');
    line.setAttribute('opacity', String(opacity));
    const brush = Object.keys(COLORS).find((b) => COLORS[b] === color) || 'green';
    line.setAttribute('marker-end', `url(#${this.heads}-${brush})`);
    line.dataset.from = a;
    line.dataset.to = b;
    this.el.append(line);
    return line;
  }
}
