// What a seat in fog of war would lose on a reload: the lost-piece flags
// (the server sends them once, in the move that took the piece), the SAN
// of its own moves (a `state` carries only UCI), the pieces it took and
// its views after each move (a `state` shows only what it sees now). Kept in localStorage for
// the one game in progress and handed to the model as `remembered`.

import * as store from './store.js';

/** `{lost: [squares], sans: {ply: [uci, san]}, captured: {ply: [uci, role]}}` stored for `game` and seat `you`. */
export function recall(game, you) {
  const lost = store.get(store.KEYS.lost);
  const sans = store.get(store.KEYS.sans);
  const captured = store.get(store.KEYS.captured);
  const views = store.get(store.KEYS.views);
  return {
    lost: lost && lost.game === game && lost.seats && lost.seats[you] ? lost.seats[you] : [],
    sans: sans && sans.game === game && sans.seats ? sans.seats[you] || {} : {},
    captured: captured && captured.game === game && captured.seats ? captured.seats[you] || {} : {},
    views: views && views.game === game && views.seats ? views.seats[you] || {} : {},
  };
}

/** After a move frame: the seat's lost flags as they now are, and the SAN of its own move. */
export function keepAfterMove(model, frame) {
  const lost = store.get(store.KEYS.lost);
  const lostSeats = lost && lost.game === model.id ? lost.seats || {} : {};
  lostSeats[model.you] = [...model.lost];
  store.set(store.KEYS.lost, { game: model.id, seats: lostSeats });
  const view = model.views && model.views[frame.ply + 1];
  if (view) {
    // The seat's view after this move, to look back at after a reload.
    const views = store.get(store.KEYS.views);
    const seats = views && views.game === model.id ? views.seats || {} : {};
    seats[model.you] = { ...(seats[model.you] || {}), [frame.ply + 1]: [view.fen, view.visible.join(' '), view.last ? view.last.join('') : ''] };
    store.set(store.KEYS.views, { game: model.id, seats });
  }
  const took = (model.captured || []).find((c) => c.ply === frame.ply);
  if (took) {
    const captured = store.get(store.KEYS.captured);
    const seats = captured && captured.game === model.id ? captured.seats || {} : {};
    seats[model.you] = { ...(seats[model.you] || {}), [frame.ply]: [took.uci, took.role] };
    store.set(store.KEYS.captured, { game: model.id, seats });
  }
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
  store.set(store.KEYS.captured, null);
  store.set(store.KEYS.views, null);
}
