// Looking back through a game: the ply on screen (null for the live, or
// final, position), moved by the replay buttons, the arrow, Home and End
// keys (anywhere on the page but in a text field) and the move list. While
// a game is played it shows earlier positions (in fog of war only the
// seat's own views) and the board takes no move until the live position is
// back; after the end it steps through the whole game. The positions are
// the model's (`browseFrames` in js/model.js); a step forward over an
// atomic capture plays its explosion again.

import { activeModel } from '../game-session.js';
import { browseFrames } from '../model.js';

let ply = null;
let hooks = { render: () => {}, explode: () => {} };

/** `render()` after a step; `explode(squares)` for a capture stepped over. */
export function initReplay(given) {
  hooks = given;
}

/** The ply on screen, or null for the live (final) position. */
export const replayPly = () => ply;

export function resetReplay() {
  ply = null;
}

/** The model on screen with its positions, when there are any to look at. */
function browsable() {
  const model = activeModel();
  const frames = model && browseFrames(model);
  return frames && frames.length > 1 ? { model, frames } : null;
}

/** Whether the positions of the game on screen may be stepped through. */
export const canBrowse = () => !!browsable();

/** `step`: -1, 1, 'start' or 'end'; plies with no position (fog of war, unseen here) are skipped. */
export function stepReplay(step) {
  const b = browsable();
  if (!b) return;
  const total = b.frames.length - 1;
  const current = ply == null ? total : Math.min(ply, total);
  const seen = (i) => !!b.frames[i];
  let target;
  if (step === 'start') target = b.frames.findIndex(Boolean);
  else if (step === 'end') target = total;
  else {
    target = current + step;
    while (target > 0 && target < total && !seen(target)) target += step;
    target = Math.max(0, Math.min(total, target));
    if (!seen(target)) return;
  }
  setReplay(target);
}

export function setReplay(target) {
  const b = browsable();
  if (!b || !b.frames[target]) return;
  const total = b.frames.length - 1;
  const forward = target === (ply == null ? total : ply) + 1;
  ply = target >= total ? null : target;
  hooks.render();
  const frame = b.frames[target];
  if (forward && frame.exploded.length) hooks.explode(frame.exploded);
}

/** Back to the live position. */
export function backToLive() {
  if (ply == null) return;
  ply = null;
  hooks.render();
}

/**
 * The replay's keys; true when the key was one. On the board during play
 * the arrows move its cursor instead, unless an earlier position is shown.
 */
export function replayKey(e, { onBoard = false } = {}) {
  if (e.altKey || e.ctrlKey || e.metaKey) return false;
  const model = activeModel();
  if (!model || !browsable()) return false;
  if (onBoard && model.status !== 'ended' && ply == null) return false;
  if (e.key === 'ArrowLeft') { stepReplay(-1); return true; }
  if (e.key === 'ArrowRight') { stepReplay(1); return true; }
  if (e.key === 'Home') { stepReplay('start'); return true; }
  if (e.key === 'End') { stepReplay('end'); return true; }
  return false;
}
