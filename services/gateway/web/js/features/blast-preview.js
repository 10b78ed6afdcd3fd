// The blast preview of atomic chess: while the player points at a capture
// with a piece picked up, the board marks what it would blow up (js/board.js
// draws it, over squares in sight only); this asks the rules module, for
// the game on screen, and only while that game is the player's to move.

import { sq, rankOf } from '../chess.js';
import { blastOf } from '../rules.js';
import { isSeat, turnColor } from '../model.js';

/** `{squares, ownKing}` of the capture `from`-`to` on `model`'s board, or null. */
export function blastPreview(model, from, to) {
  if (!model || model.variant !== 'atomic' || model.status !== 'playing' || !isSeat(model) || turnColor(model) !== model.you) return null;
  const piece = model.position.board[sq(from)];
  const last = rankOf(sq(to)) === 0 || rankOf(sq(to)) === 7;
  return blastOf(model.fen, model.variant, `${from}${to}${piece && piece.r === 'p' && last ? 'q' : ''}`);
}
