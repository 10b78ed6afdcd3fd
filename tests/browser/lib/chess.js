// Just enough chess for the tests to reason about frames: FEN boards as maps.

const FILES = 'abcdefgh';

/** square -> 'wp' | 'bk' | … for the pieces of a FEN's board. */
export function parseFen(fen) {
  const board = {};
  const rows = fen.split(' ')[0].split('/');
  rows.forEach((row, r) => {
    let f = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) {
        f += Number(ch);
      } else {
        board[FILES[f] + (8 - r)] = (ch === ch.toUpperCase() ? 'w' : 'b') + ch.toLowerCase();
        f += 1;
      }
    }
  });
  return board;
}

/** The side to move of a FEN: 'w' or 'b'. */
export function sideToMove(fen) {
  return fen.split(' ')[1];
}

export function squareDistance(a, b) {
  return Math.max(Math.abs(a.charCodeAt(0) - b.charCodeAt(0)), Math.abs(a.charCodeAt(1) - b.charCodeAt(1)));
}

export const ALL_SQUARES = [...FILES].flatMap((f) => [1, 2, 3, 4, 5, 6, 7, 8].map((r) => f + r));

/** Whether a FEN's placement is a Chess960 start: pawns on their ranks,
 * black's back rank the mirror of white's, the bishops on squares of both
 * colours, and the king between the rooks. */
export function isChess960Start(fen) {
  const ranks = fen.split(' ')[0].split('/');
  const back = ranks[7];
  if (ranks[0] !== back.toLowerCase() || ranks[1] !== 'pppppppp' || ranks[6] !== 'PPPPPPPP') return false;
  if (!ranks.slice(2, 6).every((r) => r === '8') || back.length !== 8) return false;
  if ([...back].sort().join('') !== 'BBKNNQRR') return false;
  const bishops = [...back].flatMap((c, i) => (c === 'B' ? [i % 2] : []));
  const rooks = [...back].flatMap((c, i) => (c === 'R' ? [i] : []));
  const king = back.indexOf('K');
  return bishops[0] !== bishops[1] && rooks[0] < king && king < rooks[1];
}
