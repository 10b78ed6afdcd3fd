// The archive over HTTP (`/api/…`, docs/protocol.md): finished games,
// profiles, a player's games and leaderboards. A gateway without an archive
// answers 503: it is asked once, then left alone, so the console stays clean.

import { OFFLINE_PLAYER } from '../offline/offline.js';

let down = false;

/** Players the archive cannot know: no one, or this browser's offline self
 * (whose connection names it as `{id, name}`, not by an id string). */
const unknowable = (player) => typeof player !== 'string' || !player || player === OFFLINE_PLAYER;

/** Whether the gateway said it has no archive. */
export function unavailable() {
  return down;
}

async function getJson(url) {
  if (down) return null;
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (response.status === 503) down = true;
  if (!response.ok) return null;
  return response.json();
}

const enc = encodeURIComponent;

/** A finished game: the live state while the game service has it, then the archived record. */
export function game(id) {
  return getJson(`/api/games/${enc(id)}`);
}

/** A player's finished games, newest first: `{games, next_page_token}`. */
export function games(player, size) {
  if (unknowable(player)) return Promise.resolve(null);
  return getJson(`/api/players/${enc(player)}/games?page_size=${size}`);
}

/** A player's profile, or null before their first finished game (asked first, so no 404 is logged). */
export async function profile(player) {
  if (unknowable(player)) return null;
  const list = await games(player, 1);
  if (!list || !list.games || !list.games.length) return null;
  return getJson(`/api/players/${enc(player)}`);
}

export function leaderboard(variant, limit) {
  return getJson(`/api/leaderboard/${enc(variant)}?limit=${limit}`);
}

export function pgnUrl(id) {
  return `/api/games/${enc(id)}/pgn`;
}
