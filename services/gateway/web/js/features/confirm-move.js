// "Confirm each move" (a setting): a move made on the board, or typed, is
// drawn at once and waits under the board for Play or Cancel before it is
// sent; Cancel puts the piece back.

import { $ } from '../page.js';
import { setting } from './settings.js';

let waiting = null; // {uci, send, cancel}

/** `uci` was made: sent now, or held for the player's yes when the setting asks. */
export function offerMove(uci, send, cancel) {
  if (!setting('confirmMove')) { send(uci); return; }
  if (waiting) waiting.cancel();
  waiting = { uci, send, cancel };
  $('move-confirm-text').textContent = `Play ${uci.slice(0, 2)}–${uci.slice(2, 4)}${uci[4] ? `=${uci[4].toUpperCase()}` : ''}?`;
  $('move-confirm').hidden = false;
  $('move-confirm-yes').focus({ preventScroll: true });
}

/** A move waiting for its confirmation, if any. */
export const moveWaiting = () => (waiting ? waiting.uci : null);

function settle(yes) {
  const w = waiting;
  waiting = null;
  $('move-confirm').hidden = true;
  if (!w) return;
  if (yes) w.send(w.uci); else w.cancel();
}

/** Drops a move still waiting (another game came on screen, the position changed). */
export function dropWaiting() {
  if (waiting) settle(false);
}

export function bindConfirmMove() {
  $('move-confirm-yes').addEventListener('click', () => settle(true));
  $('move-confirm-no').addEventListener('click', () => settle(false));
  $('move-confirm').addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); settle(false); } });
}
