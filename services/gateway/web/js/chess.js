// The board's geometry for drawing: square names and indices, FEN's piece
// placement read into 64 cells, and a move drawn at once while the server
// (or the offline engine) decides it. The rules themselves (SAN, check,
// explosions, replays) are the wasm module's, asked through js/rules.js.

export const FILES = 'abcdefgh';

export const sq = (name) => FILES.indexOf(name[0]) + 8 * (Number(name[1]) - 1);
export const name = (i) => FILES[i & 7] + String((i >> 3) + 1);
export const fileOf = (i) => i & 7;
export const rankOf = (i) => i >> 3;

export const START_FEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';

/** A position to draw: `board` is 64 cells (a1 = 0, h8 = 63) of {c, r} or null; `turn` is 'w' or 'b'. */
export function parseFen(fen) {
  const [placement = '', turn = 'w'] = (fen || '').trim().split(/\s+/);
  const board = new Array(64).fill(null);
  const rows = placement.split('/');
  for (let row = 0; row < 8 && row < rows.length; row++) {
    let file = 0;
    for (const ch of rows[row]) {
      if (/[1-8]/.test(ch)) {
        file += Number(ch);
      } else if (file < 8) {
        const lower = ch.toLowerCase();
        if ('pnbrqk'.includes(lower)) board[(7 - row) * 8 + file] = { c: ch === lower ? 'b' : 'w', r: lower };
        file += 1;
      }
    }
  }
  return { board, turn: turn === 'b' ? 'b' : 'w' };
}

export function placementOf(board) {
  let out = '';
  for (let rank = 7; rank >= 0; rank--) {
    let empty = 0;
    for (let file = 0; file < 8; file++) {
      const p = board[rank * 8 + file];
      if (!p) { empty++; continue; }
      if (empty) { out += empty; empty = 0; }
      out += p.c === 'w' ? p.r.toUpperCase() : p.r;
    }
    if (empty) out += empty;
    if (rank) out += '/';
  }
  return out;
}

/**
 * `board` with the move `uci` drawn on it, for the moment before the answer
 * comes: the piece moves (the king with its rook when castling, in either
 * spelling), a pawn taken en passant goes, a pawn promotes. No blast: an
 * explosion is shown when the answer names its squares.
 */
export function drawMove(board, uci) {
  const from = sq(uci.slice(0, 2)), to = sq(uci.slice(2, 4));
  const piece = board[from];
  const next = board.slice();
  if (!piece) return next;
  const target = board[to];
  const df = fileOf(to) - fileOf(from);
  if (piece.r === 'k' && rankOf(from) === rankOf(to) && ((target && target.c === piece.c && target.r === 'r') || Math.abs(df) === 2)) {
    const kingside = df > 0;
    const rank = rankOf(from) * 8;
    let rookFrom = target && target.c === piece.c ? to : -1;
    // Otherwise the outermost rook on that side (the a or h file in ordinary chess).
    for (const f of kingside ? [7, 6, 5] : [0, 1, 2, 3]) {
      const p = board[rank + f];
      if (rookFrom < 0 && p && p.c === piece.c && p.r === 'r') rookFrom = rank + f;
    }
    next[from] = null;
    if (rookFrom >= 0) next[rookFrom] = null;
    next[rank + (kingside ? 6 : 2)] = piece;
    if (rookFrom >= 0) next[rank + (kingside ? 5 : 3)] = { c: piece.c, r: 'r' };
    return next;
  }
  if (piece.r === 'p' && df !== 0 && !target) next[rankOf(from) * 8 + fileOf(to)] = null;
  next[from] = null;
  next[to] = uci[4] ? { c: piece.c, r: uci[4] } : piece;
  return next;
}
