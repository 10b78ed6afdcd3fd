// Ratings in a game: each player's rating beside their name (profiles read
// once per player from the archive), and a rated game's change at the end
// ("+12 → 1512"), from the `rating` frame or, if that was missed, from the
// profile compared with the rating stored before the game.

import * as archive from '../archive.js';
import * as store from '../store.js';
import * as connections from '../connections.js';
import { currentGame, isHotseat } from '../game-session.js';
import { isSeat } from '../model.js';
import { ratingChangeText } from '../text.js';

let render = () => {};
/** {game, text} of the game on screen. */
let change = null;
/** Player id → profile, or null while it is read (or missing). */
const profiles = new Map();

/** `render()` when something read arrives. */
export function initRatings(given) {
  render = given.render;
}

export function forgetChange() {
  change = null;
}

/** The rating change of `game`, as text, or null. */
export function changeOf(game) {
  return change && change.game === game ? change.text : null;
}

export function ratingOf(profile, variant) {
  const r = profile && (profile.ratings || []).find((x) => x.variant === variant);
  return r || null;
}

/** A player's rating in `variant` as the strips show it ("1512?" while provisional), or ''. */
export function playerRating(player, variant) {
  if (!player || player.computer || !player.id || !profiles.get(player.id)) return '';
  const r = ratingOf(profiles.get(player.id), variant);
  return r ? `${Math.round(r.rating)}${r.provisional ? '?' : ''}` : '';
}

export function onRating(f) {
  const game = currentGame();
  if (f.game && f.game !== game) return;
  change = { game: f.game || game, text: ratingChangeText(f.diff, f.rating, f.provisional) };
  render();
}

/** A game from the archive carries its players' rating changes. */
export function fromArchive(record, model) {
  const c = record.rating && isSeat(model) ? record.rating[model.you] : null;
  if (c) change = { game: model.id, text: ratingChangeText(c.diff, c.after, c.provisional) };
}

/** Remembers the rating before a rated game, to show the change if the rating frame is missed. */
export async function watchRating(model) {
  if (!model.rated || !isSeat(model) || isHotseat()) return;
  const saved = store.get(store.KEYS.ratingBefore);
  if (model.status !== 'ended' && (!saved || saved.game !== model.id)) {
    const profile = await archive.profile(connections.current().player).catch(() => null);
    const r = ratingOf(profile, model.variant);
    store.set(store.KEYS.ratingBefore, { game: model.id, variant: model.variant, rating: r ? r.rating : null, games: r ? r.games : 0 });
  }
  if (model.status === 'ended') pollRating(model.id, model.variant);
}

async function pollRating(game, variant) {
  const saved = store.get(store.KEYS.ratingBefore);
  for (let attempt = 0; attempt < 12; attempt++) {
    await new Promise((r) => setTimeout(r, attempt === 0 ? 2500 : 2000));
    if (currentGame() !== game || (change && change.game === game)) return;
    const profile = await archive.profile(connections.current().player).catch(() => null);
    const r = ratingOf(profile, variant);
    if (r && saved && saved.game === game && r.games > saved.games) {
      change = { game, text: ratingChangeText(r.rating - (saved.rating ?? 1500), r.rating, r.provisional) };
      render();
      return;
    }
  }
}

/** Reads the players' profiles, one at a time: a gateway without an archive is then asked once. */
export async function loadPlayers(model) {
  for (const color of ['white', 'black']) {
    const p = model.players[color];
    if (!p || p.computer || !p.id || profiles.has(p.id)) continue;
    profiles.set(p.id, null);
    const profile = await archive.profile(p.id).catch(() => null);
    profiles.set(p.id, profile);
    render();
  }
}
