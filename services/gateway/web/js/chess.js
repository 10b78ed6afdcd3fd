// Just enough chess for the page: reading FEN, playing a known move on a
// board (castling in both spellings, en passant, promotion, atomic
// explosions) to replay finished games, spotting check, and writing SAN
// for moves the server did not name. Legality is the server's business.

export const FILES = 'abcdefgh';

export const sq = (name) => FILES.indexOf(name[0]) + 8 * (Number(name[1]) - 1);
export const name = (i) => FILES[i & 7] + String((i >> 3) + 1);
export const fileOf = (i) => i & 7;
export const rankOf = (i) => i >> 3;

export const START_FEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';

/** A position: `board` is 64 cells (a1 = 0, h8 = 63) of {c, r} or null. */
export function parseFen(fen) {
  const [placement = '', turn = 'w', castling = '-', ep = '-', half = '0', full = '1'] = (fen || '').trim().split(/\s+/);
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
  return { board, turn: turn === 'b' ? 'b' : 'w', castling, ep, half: Number(half) || 0, full: Number(full) || 1 };
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

const KNIGHT = [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]];
const KING = [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]];
const ROOK_DIRS = [[1, 0], [-1, 0], [0, 1], [0, -1]];
const BISHOP_DIRS = [[1, 1], [1, -1], [-1, 1], [-1, -1]];

function step(i, df, dr) {
  const f = fileOf(i) + df, r = rankOf(i) + dr;
  return f < 0 || f > 7 || r < 0 || r > 7 ? -1 : r * 8 + f;
}

export function neighbours(i) {
  return KING.map(([df, dr]) => step(i, df, dr)).filter((n) => n >= 0);
}

/** Whether the piece on `from` could move to (or attack) `to`, ignoring pins and checks. */
function reaches(board, from, to, piece) {
  const df = fileOf(to) - fileOf(from), dr = rankOf(to) - rankOf(from);
  const slide = (dirs) => dirs.some(([x, y]) => {
    for (let i = step(from, x, y); i >= 0; i = step(i, x, y)) {
      if (i === to) return true;
      if (board[i]) return false;
    }
    return false;
  });
  switch (piece.r) {
    case 'n': return KNIGHT.some(([x, y]) => x === df && y === dr);
    case 'k': return Math.max(Math.abs(df), Math.abs(dr)) === 1;
    case 'r': return slide(ROOK_DIRS);
    case 'b': return slide(BISHOP_DIRS);
    case 'q': return slide(ROOK_DIRS) || slide(BISHOP_DIRS);
    case 'p': return Math.abs(df) === 1 && dr === (piece.c === 'w' ? 1 : -1);
    default: return false;
  }
}

export function attacked(board, target, by) {
  for (let i = 0; i < 64; i++) {
    const p = board[i];
    if (p && p.c === by && i !== target && reaches(board, i, target, p)) return true;
  }
  return false;
}

export function kingSquare(board, color) {
  return board.findIndex((p) => p && p.c === color && p.r === 'k');
}

/** The square of `color`'s king when it is in check, else -1. No check in fog of war. */
export function checkedKing(position, color, variant) {
  if (variant === 'fog') return -1;
  const king = kingSquare(position.board, color);
  if (king < 0) return -1;
  const enemy = color === 'w' ? 'b' : 'w';
  if (variant === 'atomic') {
    const other = kingSquare(position.board, enemy);
    // Touching kings cannot capture each other: no check in atomic.
    if (other >= 0 && neighbours(king).includes(other)) return -1;
  }
  return attacked(position.board, king, enemy) ? king : -1;
}

/** What a move does: castling, the captured square, the rook's hop. */
function describe(position, uci) {
  const from = sq(uci.slice(0, 2)), to = sq(uci.slice(2, 4));
  const piece = position.board[from];
  if (!piece) return null;
  const target = position.board[to];
  if (piece.r === 'k' && rankOf(from) === rankOf(to)) {
    const ownRook = target && target.c === piece.c && target.r === 'r';
    const df = fileOf(to) - fileOf(from);
    if (ownRook || Math.abs(df) === 2) {
      const kingside = ownRook ? fileOf(to) > fileOf(from) : df > 0;
      const rank = rankOf(from);
      let rookFrom = ownRook ? to : -1;
      if (rookFrom < 0) {
        // The outermost rook on that side (a or h file in ordinary chess).
        const files = kingside ? [7, 6, 5] : [0, 1, 2, 3];
        for (const f of files) {
          const p = position.board[rank * 8 + f];
          if (p && p.c === piece.c && p.r === 'r') { rookFrom = rank * 8 + f; break; }
        }
      }
      return { from, to, piece, castle: { kingside, rookFrom, kingTo: rank * 8 + (kingside ? 6 : 2), rookTo: rank * 8 + (kingside ? 5 : 3) } };
    }
  }
  let captureSq = target ? to : -1;
  if (piece.r === 'p' && fileOf(from) !== fileOf(to) && !target) captureSq = rankOf(from) * 8 + fileOf(to);
  return { from, to, piece, captureSq, promo: uci[4] };
}

/**
 * Plays `uci` on a copy of `position`. Returns the new position and the
 * squares an atomic explosion cleared. A move from an empty square (a
 * position the receiver could not see) only passes the turn.
 */
export function play(position, uci, variant) {
  const board = position.board.slice();
  const next = { ...position, board, turn: position.turn === 'w' ? 'b' : 'w', ep: '-' };
  if (position.turn === 'b') next.full = position.full + 1;
  const move = uci && describe(position, uci);
  if (!move) return { position: next, exploded: [] };
  const { from, to, piece } = move;
  if (move.castle) {
    const { rookFrom, kingTo, rookTo } = move.castle;
    board[from] = null;
    if (rookFrom >= 0) board[rookFrom] = null;
    board[kingTo] = piece;
    if (rookFrom >= 0) board[rookTo] = { c: piece.c, r: 'r' };
    return { position: next, exploded: [] };
  }
  const exploded = [];
  board[from] = null;
  if (move.captureSq >= 0) {
    board[move.captureSq] = null;
    if (variant === 'atomic') {
      // The capturing piece goes too, with every piece but pawns around the square it moved to.
      exploded.push(name(to));
      if (move.captureSq !== to) exploded.push(name(move.captureSq));
      board[to] = null;
      for (const n of neighbours(to)) {
        if (board[n] && board[n].r !== 'p') {
          board[n] = null;
          exploded.push(name(n));
        }
      }
      return { position: next, exploded };
    }
  }
  board[to] = move.promo ? { c: piece.c, r: move.promo } : piece;
  if (piece.r === 'p' && Math.abs(rankOf(to) - rankOf(from)) === 2) next.ep = name((from + to) >> 1);
  return { position: next, exploded };
}

/** Standard algebraic notation for `uci` in `position`, without mate marks. */
export function san(position, uci, variant) {
  const move = uci && describe(position, uci);
  if (!move) return uci || '';
  const { from, to, piece } = move;
  let text;
  if (move.castle) {
    text = move.castle.kingside ? 'O-O' : 'O-O-O';
  } else if (piece.r === 'p') {
    text = move.captureSq >= 0 ? `${FILES[fileOf(from)]}x${name(to)}` : name(to);
    if (move.promo) text += `=${move.promo.toUpperCase()}`;
  } else {
    const rivals = [];
    for (let i = 0; i < 64; i++) {
      const p = position.board[i];
      if (i !== from && p && p.c === piece.c && p.r === piece.r && reaches(position.board, i, to, p)) rivals.push(i);
    }
    let which = '';
    if (rivals.length) {
      if (!rivals.some((i) => fileOf(i) === fileOf(from))) which = FILES[fileOf(from)];
      else if (!rivals.some((i) => rankOf(i) === rankOf(from))) which = String(rankOf(from) + 1);
      else which = name(from);
    }
    text = piece.r.toUpperCase() + which + (move.captureSq >= 0 ? 'x' : '') + name(to);
  }
  const after = play(position, uci, variant).position;
  if (checkedKing(after, after.turn, variant) >= 0) text += '+';
  return text;
}

/** Every position of a game, from its start: positions[ply] is the board before move `ply`. */
export function replay(initialFen, moves, variant) {
  let position = parseFen(initialFen || START_FEN);
  const frames = [{ position, exploded: [], last: null }];
  for (const uci of moves) {
    const { position: next, exploded } = play(position, uci, variant);
    const last = uci ? [uci.slice(0, 2), uci.slice(2, 4)] : null;
    frames.push({ position: next, exploded, last, san: san(position, uci, variant) });
    position = next;
  }
  return frames;
}
