// The lobby's list as a client holds it: a whole `lobby` frame replaces it,
// a `lobby_update` frame applies what changed since version `from`. Pure,
// so the page and its tests share it.

/** The list after `frame`, or `null` when `frame` is an update the held
 * list is not at (a frame was missed: ask for the whole list again). */
export function nextLobby(held, frame) {
  if (frame.t === 'lobby') return { v: frame.v, open: frame.open || [] };
  if (!held || held.v !== frame.from) return null;
  const removed = new Set(frame.removed || []);
  return { v: frame.v, open: [...(frame.added || []), ...held.open.filter((b) => !removed.has(b.game))] };
}
