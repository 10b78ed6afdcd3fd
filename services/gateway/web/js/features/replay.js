// Stepping through a finished game: the ply on screen (null for the final
// position), moved by the ‹ › buttons, the arrow, Home and End keys and the
// move list. The positions are the model's `replay` (js/model.js); a step
// forward over an atomic capture plays its explosion again.

import { activeModel } from '../game-session.js';

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

function finished() {
  const model = activeModel();
  return model && model.status === 'ended' && model.replay ? model : null;
}

/** `step`: -1, 1, 'start' or 'end'. */
export function stepReplay(step) {
  const model = finished();
  if (!model) return;
  const total = model.replay.length - 1;
  const current = ply == null ? total : ply;
  const target = step === 'start' ? 0 : step === 'end' ? total : Math.max(0, Math.min(total, current + step));
  setReplay(target);
}

export function setReplay(target) {
  const model = finished();
  if (!model) return;
  const total = model.replay.length - 1;
  const forward = target === (ply == null ? total : ply) + 1;
  ply = target >= total ? null : target;
  hooks.render();
  const frame = model.replay[target];
  if (forward && frame && frame.exploded.length) hooks.explode(frame.exploded);
}

/** The replay's keys; true when the key was one. */
export function replayKey(e) {
  const model = activeModel();
  if (!model || model.status !== 'ended') return false;
  if (e.key === 'ArrowLeft') { stepReplay(-1); return true; }
  if (e.key === 'ArrowRight') { stepReplay(1); return true; }
  if (e.key === 'Home') { stepReplay('start'); return true; }
  if (e.key === 'End') { stepReplay('end'); return true; }
  return false;
}
