// Both players on this device: the second seat is taken by a second
// anonymous player (its own WebSocket), and in fog of war a curtain covers
// the board between turns until the player to move lifts it, so nothing
// leaks to the wrong player.

import * as connections from '../connections.js';
import { isHotseat, openGame } from '../game-session.js';
import { turnColor } from '../model.js';

/** The colour that has lifted the curtain, or null. */
let revealed = null;

export function resetCurtain() {
  revealed = null;
}

/** Whether the curtain hides `model`'s board now. */
export function curtainUp(model) {
  return isHotseat() && model.variant === 'fog' && model.status === 'playing' && revealed !== turnColor(model);
}

/** The player to move has the device. */
export function lift(model) {
  revealed = model ? turnColor(model) : null;
}

/** Same device: a second anonymous player on this device takes the other seat of the game just `created`. */
export async function seatGuest(created) {
  const guest = connections.startGuest();
  const joined = await guest.request({ t: 'join', code: created.code });
  openGame(created.game, { hotseat: true });
  return joined;
}
