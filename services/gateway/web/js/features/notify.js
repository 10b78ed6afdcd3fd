// Notifications while the tab is in the background: your turn, a game
// starting (the opponent sat down, or quick pairing found one) and a draw
// offer. Asked for politely: never on load, only when the player presses
// "Turn on notifications" in the settings; off again with the same button.
// Nothing is shown while the page is in view.

import { $ } from '../page.js';
import { setting, set } from './settings.js';
import { isSeat, other, turnColor } from '../model.js';

const supported = () => typeof window.Notification === 'function';
const allowed = () => supported() && window.Notification.permission === 'granted';
export const notifying = () => !!setting('notify') && allowed();

function render() {
  const button = $('setting-notify');
  const state = $('setting-notify-state');
  if (!supported()) {
    button.hidden = true;
    state.textContent = 'This browser cannot show notifications.';
    return;
  }
  const on = notifying();
  button.textContent = on ? 'Turn off notifications' : 'Turn on notifications';
  button.setAttribute('aria-pressed', String(on));
  state.textContent = window.Notification.permission === 'denied'
    ? "Notifications are blocked for this site in the browser's settings."
    : on ? 'On: you are told when this tab is in the background.' : '';
}

async function toggle() {
  if (notifying()) { set('notify', false); render(); return; }
  let permission = window.Notification.permission;
  if (permission === 'default') permission = await window.Notification.requestPermission();
  set('notify', permission === 'granted');
  render();
}

export function bindNotify() {
  $('setting-notify').addEventListener('click', toggle);
  render();
}

/** Shows `title` (replacing this game's last one) when the page is out of view. */
export function tell(title, body, tag) {
  if (!notifying() || document.visibilityState === 'visible') return;
  try {
    const n = new window.Notification(title, { body, tag, renotify: true });
    n.onclick = () => { window.focus(); n.close?.(); };
  } catch {
    // Some browsers show notifications only from a service worker: go without.
  }
}

/** What a game frame applied to the player's own model is worth telling. */
export function notifyFrame({ frame: f, model, main, hotseat }) {
  if (!main || hotseat || !isSeat(model)) return;
  const tag = `fogblast-${model.id}`;
  if (f.t === 'move' && model.status === 'playing' && turnColor(model) === model.you && f.ply === model.moves.length - 1) {
    const san = model.sans[f.ply];
    tell('Your turn', san ? `Your opponent played ${san}.` : 'Your opponent moved.', tag);
  } else if (f.t === 'seated' && f.color === other(model.you)) {
    tell('Your game started', 'An opponent took the other seat.', tag);
  } else if (f.t === 'draw' && f.action === 'offer' && f.by !== model.you) {
    tell('Draw offered', 'Your opponent offers a draw.', tag);
  }
}
