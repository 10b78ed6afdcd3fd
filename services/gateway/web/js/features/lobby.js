// The live lobby on the home screen: the open boards the matchmaker lists
// (`lobby` request answered with the whole list, then `lobby_update` frames
// with what changed), each with a join button. A server without a
// matchmaker says so.

import { $, busy, homeShown, notice } from '../page.js';
import * as store from '../store.js';
import * as connections from '../connections.js';
import { VARIANT_NAME, clockLabel, errorText } from '../text.js';
import { nextLobby } from '../lobby-list.js';

let wanted = false;
let join = () => {};
let openOurs = () => {};
/** The list as last heard: `{ v, open }`. */
let held = null;

/** `joinByCode(code)` joins an open board; `openGame(id)` shows one of ours. */
export function initLobby({ joinByCode, openGame }) {
  join = joinByCode;
  openOurs = openGame;
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
    const mine = !!b.player && b.player === connections.current().player;
    const variant = VARIANT_NAME[b.variant] || b.variant;
    what.textContent = `${variant} · ${clockLabel(b.clock)} · ${b.rated ? 'rated' : 'casual'} · ${seatText(b.color, mine)}`;
    const buttons = document.createElement('span');
    buttons.className = 'lobby-buttons';
    if (mine) {
      // Our own board, wherever it was made: open it or take it down.
      buttons.append(
        lobbyButton('lobby-open', 'Open', `Open your ${variant} board`, () => openOurs(b.game)),
        lobbyButton('lobby-cancel', 'Cancel', `Cancel your ${variant} board`, () => cancel(b.game)),
      );
    } else {
      buttons.append(lobbyButton('lobby-join', 'Join', null, () => join(b.code)));
    }
    li.append(who, what, buttons);
    list.append(li);
  }
}

/** The seat an entry offers: the joiner's on others' boards, the creator's own on ours. */
export function seatText(color, mine) {
  if (color !== 'white' && color !== 'black') return 'random colours';
  if (mine) return `you play ${color}`;
  return `you play ${color === 'white' ? 'black' : 'white'}`;
}

function lobbyButton(testid, text, label, work) {
  const button = document.createElement('button');
  button.type = 'button';
  button.dataset.testid = testid;
  button.textContent = text;
  if (label) button.setAttribute('aria-label', label);
  button.addEventListener('click', () => busy(button, work));
  return button;
}

/** Takes our open board down: an abort (its effect comes as events: the game's end, the lobby's update). */
function cancel(game) {
  connections.online().command({ t: 'abort', game }).catch((err) => notice(errorText(err), 'error'));
  const saved = store.get(store.KEYS.game);
  if (saved && saved.id === game) {
    store.set(store.KEYS.game, null);
    $('resume-banner').hidden = true;
  }
  notice('Your board is cancelled.');
}
