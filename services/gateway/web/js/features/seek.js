// Quick pairing: a seek goes to the matchmaker (`seek`, `cancel_seek`) and
// the page waits, counting the seconds, until `paired` names the game. A
// seek under way is sent again after a reconnect.

import { $ } from '../page.js';
import * as connections from '../connections.js';
import * as sound from '../sound.js';
import { errorText } from '../text.js';

let seek = null; // {params, since, pool}
let open = () => {};

/** `openGame(id)` shows the paired game. */
export function initSeek({ openGame }) {
  open = openGame;
}

export const seeking = () => !!seek;

/** Seeks with `params` ({variant, clock, rated}); `again` after a reconnect keeps the waiting time. */
export function startSeek(params, again = false) {
  seek = { params, since: again && seek ? seek.since : Date.now() };
  renderSeek('Looking for an opponent…');
  connections.current().request({ t: 'seek', ...params }).then((f) => {
    if (seek) seek.pool = f.pool;
    renderSeek();
  }).catch((err) => {
    seek = null;
    renderSeek(err.code === 'unavailable'
      ? 'Quick pairing is unavailable: this server runs without a matchmaker. Create a board and share the link instead.'
      : errorText(err));
  });
}

/** After a hello: the seek under way is the server's to know again. */
export function seekAgain() {
  if (seek) startSeek(seek.params, true);
}

export function cancelSeek() {
  if (!seek) return;
  seek = null;
  renderSeek('Cancelled.');
  connections.current().request({ t: 'cancel_seek' }).catch(() => {});
}

export function onPaired(f) {
  seek = null;
  renderSeek('Opponent found!');
  sound.play('notify');
  open(f.game);
}

/** The seek's line: `text`, or the seconds waited so far. */
export function renderSeek(text) {
  const on = !!seek;
  $('seek-start').hidden = on;
  $('seek-cancel').hidden = !on;
  const status = $('seek-status');
  if (text != null) status.textContent = text;
  else if (on) {
    const s = Math.floor((Date.now() - seek.since) / 1000);
    status.textContent = `Looking for an opponent… ${s} s (the rating range widens as you wait)`;
  }
  status.dataset.state = on ? 'seeking' : 'idle';
}
