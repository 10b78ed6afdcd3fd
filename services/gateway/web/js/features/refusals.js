// Why a move was refused, said in words: the board reports a refused
// attempt (a move not among the legal ones, a piece picked up out of turn)
// and the server may refuse one too; this asks the rules module which rule
// the move broke (js/rules.js `whyRefused`) and words it (js/text.js).

import { sq, rankOf } from '../chess.js';
import { vsComputer, isSeat } from '../model.js';
import { whyRefused } from '../rules.js';
import { moveErrorText, refusalText } from '../text.js';
import { activeModel, isHotseat } from '../game-session.js';

/**
 * The words for a refusal on `model`'s board: `reason` when the page knows
 * it already (out of turn, game over, …), else the rules module's answer
 * for the move `from`-`to` of a `role` piece.
 */
export function explainRefusal(model, { reason = null, from = '', to = '', role = '' } = {}) {
  // Both players on this device: the other colour's pieces wait for their turn.
  if (reason === 'not_your_piece' && model && isHotseat()) return refusalText('other_side_to_move', { you: model.you });
  let why = reason;
  if (!why && model && from && to) {
    const piece = role || (model.position.board[sq(from)] || {}).r || '';
    // A pawn reaching the last rank needs a piece to become: any will do for the question.
    const last = rankOf(sq(to)) === 0 || rankOf(sq(to)) === 7;
    const uci = `${from}${to}${piece === 'p' && last ? 'q' : ''}`;
    why = whyRefused(model.fen, model.variant, uci);
    role = piece;
  }
  return refusalText(why, {
    from, to, role,
    you: model && isSeat(model) ? model.you : null,
    computer: !!model && vsComputer(model),
  });
}

/** The words for the server's refusal `err` of the move `uci` on the game on screen. */
export function refusedMoveText(err, uci) {
  const model = activeModel();
  if (err.code === 'illegal_move' && model && uci) return explainRefusal(model, { from: uci.slice(0, 2), to: uci.slice(2, 4) });
  if (err.code === 'not_your_turn') return explainRefusal(model, { reason: 'not_your_turn' });
  return moveErrorText(err);
}
