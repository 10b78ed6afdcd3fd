// A player's page (`/#player=ID`): their name, their rating in each
// variant ("?" while provisional) with games won, lost and drawn, and
// their finished games, each opening its replay. Read from the archive
// (`/api/players/{id}`, `/api/players/{id}/games`); a player with no
// finished game yet, or a server without an archive, says so.

import { $, showScreen } from '../page.js';
import * as archive from '../archive.js';
import { VARIANT_NAME } from '../text.js';
import { historyItem } from '../features/your-games.js';

let hooks = { openGame: () => {}, home: () => {} };
let shown = null;

/** `openGame(id)` opens a finished game; `home()` goes back home. */
export function initPlayerPage(given) {
  hooks = { ...hooks, ...given };
  $('player-page-home').addEventListener('click', () => hooks.home());
}

export async function showPlayer(id) {
  shown = id;
  showScreen('player');
  const url = `/#player=${encodeURIComponent(id)}`;
  if (location.pathname + location.hash !== url) history.replaceState(null, '', url);
  $('player-page-name').textContent = 'A player';
  $('player-page-status').textContent = 'Loading…';
  const rows = $('player-ratings').querySelector('tbody');
  rows.textContent = '';
  $('player-games').textContent = '';
  const [games, profile] = await Promise.all([
    archive.games(id, 20).catch(() => null),
    archive.profile(id).catch(() => null),
  ]);
  if (shown !== id) return;
  if (archive.unavailable()) {
    $('player-page-status').textContent = 'Players are not available on this server.';
    return;
  }
  const list = (games && games.games) || [];
  const name = (profile && profile.name) || nameIn(list, id) || 'Anonymous';
  $('player-page-name').textContent = name;
  document.title = `${name} · Fogblast`;
  const ratings = (profile && profile.ratings) || [];
  $('player-ratings').hidden = !ratings.length;
  for (const r of ratings) {
    const tr = document.createElement('tr');
    tr.dataset.variant = r.variant;
    for (const text of [VARIANT_NAME[r.variant] || r.variant, `${Math.round(r.rating)}${r.provisional ? '?' : ''}`, r.games, r.wins, r.losses, r.draws]) {
      const td = document.createElement('td');
      td.textContent = String(text ?? '');
      tr.append(td);
    }
    rows.append(tr);
  }
  $('player-page-status').textContent = !list.length ? 'No finished games yet.'
    : ratings.length ? `Ratings with “?” are provisional: too few games to settle them.` : 'No rated games yet.';
  for (const g of list) $('player-games').append(historyItem(g, hooks.openGame));
}

/** The player's name as a game of theirs gives it. */
function nameIn(games, id) {
  for (const g of games) {
    for (const color of ['white', 'black']) {
      const p = g.players && g.players[color];
      if (p && p.id === id && p.name) return p.name;
    }
  }
  return null;
}
