// The page's URLs (docs/web-client.md): `/` is home, `/g/CODE` joins the
// game with that join code, `/#game=ID` shows a game, `/#player=ID` a
// player's page, `/#tournament=ID` an arena's page, `/#swiss=ID` a Swiss's,
// `/#tv` TV (the best game being played, then the next), `/#analysis/VARIANT/FEN`
// the analysis board (js/analysis-board.js), `/#puzzles` the next puzzle and
// `/#puzzle=ID` one puzzle. `routeOf` is pure, so
// node tests check it; `startRouter` follows the address bar.

import { analysisInHash } from './analysis-board.js';

/**
 * Where a location leads: `{to: 'analysis', variant, fen}`, `{to: 'join', code}`, `{to: 'player', id}`, `{to: 'tv'}`,
 * `{to: 'puzzles', id}`,
 * `{to: 'game', id, hotseat}` or `{to: 'home'}`. `saved` is the stored game in progress (`{id, hotseat,
 * active}`): a reload from its screen comes back to it.
 */
export function routeOf({ pathname, hash }, saved) {
  const invite = pathname.match(/^\/g\/([^/]+)\/?$/);
  if (invite) return { to: 'join', code: decodeURIComponent(invite[1]).toUpperCase() };
  if (isTvHash(hash)) return { to: 'tv' };
  const analysis = analysisInHash(hash);
  if (analysis) return { to: 'analysis', ...analysis };
  const player = playerInHash(hash);
  if (player) return { to: 'player', id: player };
  const tournament = tournamentInHash(hash);
  if (tournament) return { to: 'tournament', id: tournament };
  const swiss = swissInHash(hash);
  if (swiss) return { to: 'swiss', id: swiss };
  const puzzle = puzzleInHash(hash);
  if (puzzle) return { to: 'puzzles', id: puzzle.id };
  const id = gameInHash(hash);
  if (id) return { to: 'game', id, hotseat: !!(saved && saved.id === id && saved.hotseat) };
  if (saved && saved.active) return { to: 'game', id: saved.id, hotseat: !!saved.hotseat };
  return { to: 'home' };
}

/** Whether the hash asks for TV. */
export const isTvHash = (hash) => (hash || '').replace(/^#/, '') === 'tv';

/** The game id of a `#game=ID` hash, or null. */
export function gameInHash(hash) {
  return new URLSearchParams((hash || '').replace(/^#/, '')).get('game') || null;
}

/** The player id of a `#player=ID` hash, or null. */
export function playerInHash(hash) {
  return new URLSearchParams((hash || '').replace(/^#/, '')).get('player') || null;
}

/** The tournament id of a `#tournament=ID` hash, or null. */
export function tournamentInHash(hash) {
  return new URLSearchParams((hash || '').replace(/^#/, '')).get('tournament') || null;
}

/** The Swiss id of a `#swiss=ID` hash, or null. */
export function swissInHash(hash) {
  return new URLSearchParams((hash || '').replace(/^#/, '')).get('swiss') || null;
}

/** `#puzzles` (the next puzzle) or `#puzzle=ID`: `{id}` (null for the next), else null. */
export function puzzleInHash(hash) {
  const bare = (hash || '').replace(/^#/, '');
  if (bare === 'puzzles') return { id: null };
  const id = new URLSearchParams(bare).get('puzzle');
  return id ? { id } : null;
}

export const swissUrl = (id) => `/#swiss=${encodeURIComponent(id)}`;
export const tournamentUrl = (id) => `/#tournament=${encodeURIComponent(id)}`;
export const gameUrl = (id) => `/#game=${encodeURIComponent(id)}`;
export const playerUrl = (id) => `/#player=${encodeURIComponent(id)}`;

/** Puts the game on screen in the address bar, so a reload or a shared URL comes back to it. */
export function showGameUrl(id) {
  const url = gameUrl(id);
  if (location.pathname + location.hash !== url) history.replaceState(null, '', url);
}

export function showHomeUrl() {
  history.replaceState(null, '', '/');
}

/**
 * Routes the current location once, then follows hash changes: another
 * game id opens it, no id leaves the game on screen (`current()`) for home.
 */
export function startRouter({ saved, current, onJoin, onGame, onHome, onLeave, onPlayer, onTournament, onSwiss, onTv, onAnalysis, onPuzzles }) {
  const route = routeOf(location, saved);
  if (route.to === 'join') onJoin(route.code);
  else if (route.to === 'analysis') onAnalysis(route);
  else if (route.to === 'tv') onTv();
  else if (route.to === 'game') onGame(route.id, { hotseat: route.hotseat });
  else if (route.to === 'player') onPlayer(route.id);
  else if (route.to === 'tournament') onTournament(route.id);
  else if (route.to === 'swiss') onSwiss(route.id);
  else if (route.to === 'puzzles') onPuzzles(route.id);
  else onHome();
  window.addEventListener('hashchange', () => {
    if (isTvHash(location.hash)) {
      onTv();
      return;
    }
    const analysis = analysisInHash(location.hash);
    if (analysis) {
      if (current()) onLeave();
      onAnalysis(analysis);
      return;
    }
    const player = playerInHash(location.hash);
    if (player) {
      if (current()) onLeave();
      onPlayer(player);
      return;
    }
    const tournament = tournamentInHash(location.hash);
    if (tournament) {
      if (current()) onLeave();
      onTournament(tournament);
      return;
    }
    const swiss = swissInHash(location.hash);
    if (swiss) {
      if (current()) onLeave();
      onSwiss(swiss);
      return;
    }
    const puzzle = puzzleInHash(location.hash);
    if (puzzle) {
      if (current()) onLeave();
      onPuzzles(puzzle.id);
      return;
    }
    const id = gameInHash(location.hash);
    if (id && id !== current()) onGame(id, {});
    else if (!id && current()) onLeave();
  });
}
