// What the page remembers in localStorage, under one prefix. Every read
// survives a missing or corrupted entry.

const PREFIX = 'fogblast.';

export const KEYS = {
  token: 'token',           // the player's token: the same anonymous player comes back
  guestToken: 'token2',     // the second player's token in a same-device game
  name: 'name',             // the display name sent in hello
  game: 'game',             // {id, hotseat} of the game in progress
  look: 'look',             // {mode: "2d"|"3d", theme, sound}
  settings: 'settings',     // {boardSize, pieces, coords, autoQueen, premoves, confirmMove, zen, notify}
  lost: 'lost',             // {game, seats: {white: [...], black: [...]}}: lost-piece flags in fog of war
  sans: 'sans',             // {game, seats: {white: {ply: [uci, san]}}}: own moves' SAN in fog of war
  captured: 'captured',     // {game, seats: {white: {ply: [uci, role]}}}: what a seat took in fog of war
  views: 'views',           // {game, seats: {white: {ply: [fen, visible, last]}}}: a seat's views in fog of war
  tournamentGames: 'tournament-games', // {tournament: [{game, color, opponent}]}: your arena games as this browser was paired into them
  ratingBefore: 'rating',   // {game, variant, rating, games}: the rating before a rated game
};

export function get(key, fallback = null) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw == null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

export function set(key, value) {
  try {
    if (value == null) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // Private mode or a full store: the page works on, it just forgets.
  }
}
