// What a seat in fog of war would lose on a reload: the lost-piece flags
// (the server sends them once, in the move that took the piece) and the SAN
// of its own moves (a `state` carries only UCI). Kept in localStorage for
// the one game in progress and handed to the model as `remembered`.

import * as store from './store.js';

/** `{lost: [squares], sans: {ply: [uci, san]}}` stored for `game` and seat `you`. */
export function recall(game, you) {
  const lost = store.get(store.KEYS.lost);
  const sans = store.get(store.KEYS.sans);
  return {
    lost: lost && lost.game === game && lost.seats && lost.seats[you] ? lost.seats[you] : [],
    sans: sans && sans.game === game && sans.seats ? sans.seats[you] || {} : {},
  };
}

/** After a move frame: the seat's lost flags as they now are, and the SAN of its own move. */
export function keepAfterMove(model, frame) {
  const lost = store.get(store.KEYS.lost);
  const lostSeats = lost && lost.game === model.id ? lost.seats || {} : {};
  lostSeats[model.you] = [...model.lost];
  store.set(store.KEYS.lost, { game: model.id, seats: lostSeats });
  if (!frame.uci || !frame.san) return;
  const sans = store.get(store.KEYS.sans);
  const sanSeats = sans && sans.game === model.id ? sans.seats || {} : {};
  sanSeats[model.you] = { ...(sanSeats[model.you] || {}), [frame.ply]: [frame.uci, frame.san] };
  store.set(store.KEYS.sans, { game: model.id, seats: sanSeats });
}

/** The fog has lifted: nothing more to keep. */
export function forget() {
  store.set(store.KEYS.lost, null);
  store.set(store.KEYS.sans, null);
}
