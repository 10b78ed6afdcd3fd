// Playing the computer with no server (offline/offline.js): when the page
// plays offline, and an offline game's PGN, which the engine in the page
// writes, as a data link.

import * as connections from '../connections.js';
import { notice } from '../page.js';

/** Offline when asked, or when the server cannot be reached and the engine in the page can play (no clock). */
export function playOffline(asked, clock) {
  return asked || (connections.online().state === 'offline' && clock === 'none');
}

/** Fills `link` with offline game `id`'s PGN, once per game. */
export function offlinePgn(link, id) {
  if (link.dataset.game === id) return;
  link.dataset.game = id;
  link.removeAttribute('href');
  connections.offline().pgn(id).then((text) => {
    if (link.dataset.game === id) link.href = `data:application/x-chess-pgn;charset=utf-8,${encodeURIComponent(text)}`;
  }).catch((err) => notice(`No PGN: ${err.message || err}`, 'error'));
}
