// The lobby's list as a client holds it: a whole `lobby` frame replaces it,
// a `lobby_update` frame applies what changed since version `from`. Pure,
// so the page and its tests share it.

/** The list after `frame`, or `null` when `frame` is an update the held
 * list is not at (a frame was missed: ask for the whole list again). */
export function nextLobby(held, frame) {
  if (frame.t === 'lobby') return { v: frame.v, open: frame.open || [] };
  if (!held || held.v !== frame.from) return null;
  const added = frame.added || [];
  // A board added again replaces the one held: a game is listed once.
  const gone = new Set([...(frame.removed || []), ...added.map((b) => b.game)]);
  return { v: frame.v, open: [...added, ...held.open.filter((b) => !gone.has(b.game))] };
}
