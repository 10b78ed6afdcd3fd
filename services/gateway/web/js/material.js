// Material beside the players' names, pure: the pieces each side has taken
// (in atomic chess everything a blast cleared counts, so a capture's whole
// toll shows) and how far ahead in points the leading side is. In fog of
// war, while the game is played, a seat shows only what it knows: its own
// losses (its pieces are always in sight) and the pieces it took itself
// (the model's `captured`), and no score (the opponent's promotions are
// unseen); a spectator, who sees nothing, is shown nothing.

import { parseFen } from './chess.js';
import { isSeat, other } from './model.js';

export const VALUE = { q: 9, r: 5, b: 3, n: 3, p: 1, k: 0 };
const ORDER = ['q', 'r', 'b', 'n', 'p'];

function count(board, c) {
  const n = { q: 0, r: 0, b: 0, n: 0, p: 0, k: 0 };
  for (const p of board) if (p && p.c === c) n[p.r] += 1;
  return n;
}

/** The roles colour `c` has lost between `initial` and `now`, most valuable first; a promoted pawn is not lost. */
export function lostPieces(initial, now, c) {
  const before = count(initial, c);
  const after = count(now, c);
  const promoted = ORDER.filter((r) => r !== 'p').reduce((sum, r) => sum + Math.max(0, after[r] - before[r]), 0);
  const lost = [];
  for (const r of ORDER) {
    const gone = r === 'p' ? before.p - after.p - promoted : before[r] - after[r];
    for (let i = 0; i < gone; i++) lost.push(r);
  }
  return lost;
}

export function points(board, c) {
  return board.reduce((sum, p) => sum + (p && p.c === c ? VALUE[p.r] : 0), 0);
}

const byValue = (roles) => roles.slice().sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));

/**
 * `{white: {taken, ahead}, black: {taken, ahead}}`: the roles of the
 * opponent's pieces each side took, and its lead in points (0 when not
 * ahead, null when unknown); null when nothing may be shown.
 */
export function material(model) {
  const initial = parseFen(model.initialFen).board;
  const now = model.position.board;
  if (model.variant === 'fog' && model.status !== 'ended') {
    if (!isSeat(model)) return null;
    const me = model.you;
    return {
      [me]: { taken: byValue(model.captured.map((c) => c.role)), ahead: null },
      [other(me)]: { taken: lostPieces(initial, now, me[0]), ahead: null },
    };
  }
  const lead = points(now, 'w') - points(now, 'b');
  return {
    white: { taken: lostPieces(initial, now, 'b'), ahead: Math.max(0, lead) },
    black: { taken: lostPieces(initial, now, 'w'), ahead: Math.max(0, -lead) },
  };
}
