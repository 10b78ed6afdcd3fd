// The home screen's "you" panel: your ratings (`/api/players/{id}`), a
// link to your player page, and your last finished games
// (`/api/players/{id}/games`), each opening its replay, with a PGN link. A
// gateway without an archive says so.

import { $ } from '../page.js';
import * as archive from '../archive.js';
import * as connections from '../connections.js';
import { gameUrl, playerUrl } from '../router.js';
import { VARIANT_NAME, plural } from '../text.js';
import { linkPgn } from '../pgn.js';

let open = () => {};

const list0 = (games) => !!(games && games.games && games.games.length);

/** `openGame(id)` shows a finished game. */
export function initYourGames({ openGame }) {
  open = openGame;
}

/** One finished game as a list item: who played, the result (a link to its replay) and its PGN. */
export function historyItem(g, openGame) {
  const li = document.createElement('li');
  const a = document.createElement('a');
  a.href = gameUrl(g.game);
  const white = g.players && g.players.white ? g.players.white.name || 'Anonymous' : '?';
  const black = g.players && g.players.black ? g.players.black.name || 'Anonymous' : '?';
  const result = g.result === '*' ? 'aborted' : g.result;
  a.textContent = `${VARIANT_NAME[g.variant] || g.variant}: ${white} – ${black}, ${result}`;
  a.addEventListener('click', (e) => { e.preventDefault(); openGame(g.game); });
  const pgn = document.createElement('a');
  pgn.textContent = 'PGN';
  pgn.className = 'pgn';
  pgn.setAttribute('download', `${g.game}.pgn`);
  linkPgn(pgn, g.game);
  li.append(a, ' ', pgn);
  return li;
}

export async function loadProfile() {
  const conn = connections.current();
  const me = conn.player;
  if (!me) return;
  const profileEl = $('profile');
  const history = $('history');
  if (connections.isOffline(conn)) {
    // Offline games are this browser's own: the archive knows no such player.
    profileEl.textContent = 'Ratings and finished games show when you are online.';
    history.textContent = '';
    return;
  }
  try {
    const games = await archive.games(me, 10);
    if (archive.unavailable()) {
      profileEl.textContent = 'Ratings and finished games are not available on this server.';
      history.textContent = '';
      return;
    }
    const profile = games && games.games && games.games.length ? await archive.profile(me) : null;
    const ratings = (profile && profile.ratings) || [];
    profileEl.textContent = ratings.length
      ? ratings.map((r) => `${VARIANT_NAME[r.variant] || r.variant}: ${Math.round(r.rating)}${r.provisional ? '?' : ''} (${plural(r.games, 'game')})`).join(' · ')
      : 'No rated games yet.';
    if (list0(games)) {
      const page = document.createElement('a');
      page.href = playerUrl(me);
      page.dataset.testid = 'my-player-page';
      page.textContent = 'Your page';
      profileEl.append(' · ', page);
    }
    history.textContent = '';
    const list = (games && games.games) || [];
    if (!list.length) history.innerHTML = '<li class="empty">Your finished games appear here.</li>';
    for (const g of list) history.append(historyItem(g, open));
  } catch {
    profileEl.textContent = '';
  }
}
