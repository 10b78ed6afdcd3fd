// Watching: the home screen's "Watch" section (the top-rated games being
// played now, from `/api/tv/games`, read again every few seconds while home
// is shown) and TV (`/#tv`): the best game on screen as a spectator, and
// the next best once it ends. A fog game is watched as any spectator
// watches it: fogged until its end.

import { $, homeShown, notice } from '../page.js';
import { clockLabel, VARIANT_NAME } from '../text.js';
import { gameUrl } from '../router.js';

/** How often home reads the list again while it is shown. */
const REFRESH_MS = 5000;
/** How long TV stays on a finished game before the next one. */
const NEXT_AFTER_MS = 3000;
/** How often TV with nothing to show looks again. */
const RETRY_MS = 4000;

let openGame = () => {};
let timer = null;
/** Counts the list's readings, so only the latest renders and goes on. */
let readings = 0;
/** TV: the game it shows, or '' while it looks for one; null when TV is off. */
let tvGame = null;
let tvTimer = null;

export function initWatch(given) {
  openGame = given.openGame;
}

export async function listGames(nb = 10) {
  const response = await fetch(`/api/tv/games?nb=${nb}`, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`games in play: ${response.status}`);
  return (await response.json()).games || [];
}

/** A seat as the list writes it: "Ann (1620)", "Bob (1500?)", "Computer (hard)". */
export function seatText(p) {
  if (!p) return '—';
  if (p.computer) return `${p.name || 'Computer'}${p.level ? ` (${p.level})` : ''}`;
  const rating = p.rating == null ? '1500?' : `${p.rating}${p.provisional ? '?' : ''}`;
  return `${p.name || 'Anonymous'} (${rating})`;
}

/** What the list says of a game besides its players: "Atomic · 3 + 2 · rated". */
export function gameText(g) {
  const variant = `${VARIANT_NAME[g.variant] || g.variant}${g.chess960 ? ' 960' : ''}`;
  return [variant, clockLabel(g.time_control), g.rated ? 'rated' : 'casual'].join(' · ');
}

function renderList(games) {
  const list = $('watch-list');
  list.textContent = '';
  $('watch-status').textContent = games.length ? '' : 'No games are being played right now.';
  $('watch-tv').hidden = !games.length;
  for (const g of games) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = gameUrl(g.game);
    a.dataset.testid = 'watch-game';
    a.dataset.game = g.game;
    a.textContent = `${seatText(g.players.white)} – ${seatText(g.players.black)}`;
    const what = document.createElement('span');
    what.className = 'watch-what';
    what.textContent = gameText(g);
    li.append(a, ' ', what);
    list.append(li);
  }
}

/** Reads the list for home now, and every few seconds while home is shown. */
export async function loadWatch() {
  clearTimeout(timer);
  // One reading loop: a call while another reads takes over from it.
  const mine = ++readings;
  try {
    const games = await listGames(10);
    if (mine === readings) renderList(games);
  } catch {
    if (mine === readings) $('watch-status').textContent = 'The games being played are unavailable right now.';
  }
  if (mine === readings) timer = setTimeout(() => { if (homeShown()) loadWatch(); }, REFRESH_MS);
}

/** Whether TV is on. */
export const tvOn = () => tvGame !== null;

/** Turns TV on: the best game being played comes on screen (`except` one just ended). */
export async function startTv(except = null) {
  clearTimeout(tvTimer);
  tvGame = '';
  $('tv-banner').hidden = false;
  let games = [];
  try { games = await listGames(5); } catch { /* tried again below */ }
  if (tvGame === null) return;
  const best = games.find((g) => g.game !== except);
  if (!best) {
    if (!except) notice('No games are being played right now: TV waits for one.');
    tvTimer = setTimeout(() => startTv(except), RETRY_MS);
    return;
  }
  tvGame = best.game;
  openGame(best.game);
  history.replaceState(null, '', '/#tv');
}

/** A game's model changed: TV moves on once its game has ended. */
export function tvFollow(model) {
  if (!tvGame || !model || model.id !== tvGame || model.status !== 'ended') return;
  const ended = tvGame;
  tvGame = '';
  clearTimeout(tvTimer);
  tvTimer = setTimeout(() => { if (tvGame === '') startTv(ended); }, NEXT_AFTER_MS);
}

/** Another game or screen was chosen: TV is off. */
export function stopTv(id = null) {
  if (tvGame === null || (id && id === tvGame)) return;
  tvGame = null;
  clearTimeout(tvTimer);
  $('tv-banner').hidden = true;
}
