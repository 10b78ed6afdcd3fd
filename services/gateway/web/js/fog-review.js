// The hindsight review of a finished fog of war game, as the page shows it
// (`/api/games/{id}/review`, docs/protocol.md): for the ply on screen, the
// board each player saw beside the true one, the moments worth going back
// to, and a line per player. Pure: no page, no network.

const GLYPHS = { K: '♔', Q: '♕', R: '♖', B: '♗', N: '♘', P: '♙', k: '♚', q: '♛', r: '♜', b: '♝', n: '♞', p: '♟' };

/** The 64 squares of a FEN board (`*` for fog), a8 first: `{square, piece, fogged}`. */
export function boardSquares(board) {
  const rows = board.split(' ')[0].split('/');
  const squares = [];
  rows.forEach((row, r) => {
    let file = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) {
        for (let i = 0; i < Number(ch); i++) squares.push(square(file++, r, null, false));
      } else {
        squares.push(square(file++, r, ch === '*' ? null : ch, ch === '*'));
      }
    }
  });
  return squares;
}

function square(file, row, piece, fogged) {
  const name = 'abcdefgh'[file] + String(8 - row);
  return { square: name, piece, glyph: piece ? GLYPHS[piece] : '', fogged, light: (file + row) % 2 === 0 };
}

const side = (color) => (color === 'white' ? 'White' : 'Black');

/** One moment in words. */
export function momentText(moment) {
  const at = `move ${Math.floor(moment.ply / 2) + 1}`;
  switch (moment.kind) {
    case 'king_exposed_unseen':
      return `${at}: ${side(moment.color)}'s king on ${moment.king} could be taken from ${moment.by.join(', ')}, out of ${side(moment.color)}'s sight`;
    case 'missed_king_capture':
      return `${at}: ${side(moment.color)} could take the king with ${moment.uci}`;
    case 'missed_capture':
      return `${at}: ${side(moment.color)} could take a free ${moment.role} on ${moment.square} (${moment.uci})`;
    default:
      return `${at}: ${moment.kind}`;
  }
}

/** A player's counts in words. */
export function summaryText(color, summary) {
  const parts = [`${summary.moves} moves`, `${summary.captures} captures`];
  const counted = [
    [summary.king_exposed_unseen, 'king left to a piece out of sight'],
    [summary.missed_king_captures, 'king capture missed'],
    [summary.missed_captures, 'free piece left'],
  ];
  for (const [n, what] of counted) if (n) parts.push(`${n} × ${what}`);
  return `${side(color)}: ${parts.join(', ')}`;
}

/** The reviewed position for the ply on screen (`null`: the final one). */
export function reviewedPly(review, ply) {
  const plies = review.plies || [];
  if (!plies.length) return null;
  const index = ply == null ? plies.length - 1 : Math.min(Math.max(ply, 0), plies.length - 1);
  return plies[index];
}
