// Premoves: while the opponent thinks, one move may be queued by the board's
// usual input (not in fog of war, where the player cannot see what the
// opponent might do, nor with both players on this device). It is drawn on
// its two squares (`.square.premove`) and played the moment the player is to
// move, if it is legal then; otherwise it is dropped with a notice. A click on
// an empty square or on the queued piece cancels it. The settings may turn
// premoves off.

import { notice } from '../page.js';
import { setting } from './settings.js';

let queued = null; // {game, uci}

/** Whether `model`'s seat may queue a premove now. */
export function premoveAllowed(model, { myTurn, seat, hotseat, curtain }) {
  return setting('premoves') && seat && !myTurn && !hotseat && !curtain && model.status === 'playing' && model.variant !== 'fog';
}

/** The queued UCI for `gameId`, or null. */
export function queuedFor(gameId) {
  return queued && queued.game === gameId ? queued.uci : null;
}

/** The board queued (`uci`) or cancelled (null) a premove in `gameId`. */
export function setPremove(gameId, uci) {
  const had = queuedFor(gameId);
  queued = uci ? { game: gameId, uci } : null;
  if (uci) notice(`Premove ${uci.slice(0, 2)}–${uci.slice(2, 4)} queued: it is played as soon as it is your turn.`);
  else if (had) notice('Premove cancelled.');
}

/**
 * After the board showed `model`: plays the queued move if the player is now
 * to move (`board.playQueued`), or drops it with a notice when it is not
 * legal; forgets a premove of another game or of a game no longer played.
 */
export function playPremove(model, board, myTurn) {
  if (!queued) return;
  if (queued.game !== model.id || model.status !== 'playing') { queued = null; return; }
  if (!myTurn) return;
  const { uci } = queued;
  queued = null;
  if (!board.playQueued(uci)) notice(`Premove ${uci.slice(0, 2)}–${uci.slice(2, 4)} dropped: it is not legal now.`, 'error');
}
