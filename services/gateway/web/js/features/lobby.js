// The live lobby on the home screen: the open boards the matchmaker lists
// (`lobby` request answered with the whole list, then `lobby_update` frames
// with what changed), each with a join button. A server without a
// matchmaker says so.

import { $, busy, homeShown } from '../page.js';
import * as connections from '../connections.js';
import { VARIANT_NAME, clockLabel, errorText } from '../text.js';
import { nextLobby } from '../lobby-list.js';

let wanted = false;
let join = () => {};
/** The list as last heard: `{ v, open }`. */
let held = null;

/** `joinByCode(code)` joins an open board. */
export function initLobby({ joinByCode }) {
  join = joinByCode;
}

/** Whether home wants lobby frames (asked again after a reconnect). */
export const lobbyWanted = () => wanted;

export function subscribeLobby() {
  wanted = true;
  connections.current().request({ t: 'lobby' }).catch((err) => {
    wanted = false;
    $('lobby-status').textContent = err.code === 'unavailable'
      ? 'The lobby is unavailable: this server runs without a matchmaker.'
      : errorText(err);
    $('lobby').textContent = '';
  });
}

export function stopLobby() {
  wanted = false;
}

/** A `lobby` or `lobby_update` frame. An update the held list is not at
 * (a frame missed) asks for the whole list again. */
export function onLobbyFrame(frame) {
  const next = nextLobby(held, frame);
  if (!next) {
    if (wanted) subscribeLobby();
    return;
  }
  held = next;
  renderLobby(held.open);
}

function renderLobby(open) {
  if (!wanted && !homeShown()) return;
  const list = $('lobby');
  list.textContent = '';
  $('lobby-status').textContent = open.length ? '' : 'No open boards right now. Create one!';
  for (const b of open) {
    const li = document.createElement('li');
    li.dataset.testid = 'lobby-entry';
    li.dataset.game = b.game;
    const who = document.createElement('span');
    who.className = 'lobby-who';
    who.textContent = `${b.name || 'Anonymous'}${b.rating ? ` (${b.rating})` : ''}`;
    const what = document.createElement('span');
    what.className = 'lobby-what';
    const seat = b.color === 'white' ? 'you play black' : b.color === 'black' ? 'you play white' : 'random colours';
    what.textContent = `${VARIANT_NAME[b.variant] || b.variant} · ${clockLabel(b.clock)} · ${b.rated ? 'rated' : 'casual'} · ${seat}`;
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.testid = 'lobby-join';
    const mine = b.player && b.player === connections.current().player;
    button.textContent = mine ? 'Yours' : 'Join';
    button.disabled = mine;
    button.addEventListener('click', () => busy(button, () => join(b.code)));
    li.append(who, what, button);
    list.append(li);
  }
}
