// The game on screen and how this device follows it: which game, the model
// each of its connections holds (two in a same-device game), the move sent
// and not yet acknowledged, and the requests that keep it current (watch,
// resume after a reconnect, the archive once the game service let it go).
// Frames go through the pure model (js/model.js); what the page does about
// them (sounds, the board, the screens) is the `onApplied` hook's business.

import { applyFrame, moveFit, isSeat, turnColor, stateFromArchive } from './model.js';
import * as connections from './connections.js';
import * as fogMemory from './fog-memory.js';
import * as store from './store.js';
import * as archive from './archive.js';
import { errorText } from './text.js';
import { notice, showScreen, gameShown } from './page.js';
import { showGameUrl, showHomeUrl } from './router.js';

let hooks = {
  render: () => {},
  onApplied: () => {},
  onOpened: () => {},
  onShow: () => {},
  onArchived: () => {},
  onMoveRefused: () => {},
  onHome: () => {},
};

let gameId = null;
/** Connection label ('main', 'guest') → the model of the game on screen as that seat sees it. */
const models = new Map();
/** Game id → the newest state frame seen for a game not (yet) on screen. */
const states = new Map();
let hotseat = false;
/** {game, uci, ply, conn} sent and not yet acknowledged. */
let pending = null;

/**
 * `render()` after any change; `onApplied({conn, frame, previous, model,
 * main})` after a frame changed a model; `onOpened(id)` when another game
 * (or none: null) comes on screen; `onShow(id)` whenever the game screen
 * shows a game; `onArchived(record, model)` for a game read from the
 * archive; `onMoveRefused(err, uci)` when the server refused a move (the
 * hook says why); `onHome()` once home is on screen.
 */
export function initSession(given) {
  hooks = { ...hooks, ...given };
}

export const currentGame = () => gameId;
export const isHotseat = () => hotseat;
export const modelOf = (label) => models.get(label) || null;
export const pendingMove = () => pending;

/** The model on screen: in a same-device game, the seat whose turn it is. */
export function activeModel() {
  const main = models.get('main');
  if (!hotseat || !main) return main || null;
  const guest = models.get('guest');
  if (!guest || guest.id !== main.id || main.status === 'ended') return main;
  return main.you === turnColor(main) ? main : guest;
}

/** The connection that speaks for `model`'s seat. */
export function connFor(model) {
  const guest = connections.guest();
  if (model && hotseat && guest && models.get('guest') === model) return guest;
  return connections.current();
}

/** A frame about a game (see GAME_FRAMES in js/model.js) from `conn`. */
export function onGameFrame(conn, f) {
  if (f.t === 'state' && f.game !== gameId) {
    states.set(f.game, f);
    return;
  }
  const previous = models.get(conn.label) || null;
  const remembered = f.t === 'state' ? fogMemory.recall(f.game, f.you || 'spectator') : null;
  const model = applyFrame(previous, f, { now: performance.now(), remembered });
  if (model === previous) return;
  models.set(conn.label, model);
  if (f.t === 'move') {
    const fit = moveFit(previous, f);
    if (fit === 'gap') follow(conn, model.id); // start again from a state
    if (fit !== 'next') return;
    if (model.variant === 'fog' && isSeat(model)) fogMemory.keepAfterMove(model, f);
  }
  if (pending && pending.game === model.id && (model.moves.length > pending.ply || model.status === 'ended')) pending = null;
  const main = conn === connections.current();
  if (main && f.t === 'end' && model.variant === 'fog') fogMemory.forget();
  if (main && (f.t === 'state' || f.t === 'end')) remember(model);
  hooks.onApplied({ conn, frame: f, previous, model, main });
}

/** The game in progress that a reload, or the home page's banner, comes back to: a seat's, until it ends. */
function remember(model) {
  const saved = store.get(store.KEYS.game);
  if (isSeat(model) && model.status !== 'ended') {
    store.set(store.KEYS.game, { id: model.id, hotseat, active: gameShown() });
  } else if (saved && saved.id === model.id) {
    store.set(store.KEYS.game, null);
  }
}

/** After a hello: catch up with the game on screen from the newest version seen, and resend a move in flight. */
export function resumeOn(conn) {
  if (!gameId) return;
  const model = models.get(conn.label);
  if (model && model.id === gameId) {
    // A finished game too: a rematch offer may come while we were away. An archived one has nothing more to say.
    if (model.archived) return;
    conn.command({ t: 'resume', game: model.id, v: model.v }).catch((e) => {
      if (e.code === 'not_found') gameVanished();
      else follow(conn, gameId);
    });
    if (pending && pending.game === model.id && pending.conn === conn.label && model.moves.length === pending.ply) {
      sendMove(conn, pending.uci, pending.ply);
    }
  } else {
    follow(conn, gameId);
  }
}

/** Asks `conn` to follow `game`, from a fresh state. */
export function follow(conn, game) {
  // Not connected: resumeOn follows the game on screen once the hello is through.
  if (!conn.ready) return Promise.resolve();
  return conn.request({ t: 'watch', game }).catch(async (e) => {
    if (e.code === 'not_found') {
      // The game service keeps a finished game for an hour; the archive keeps it for good.
      if (conn !== connections.current() || !(await openArchived(game))) gameVanished();
    } else if (e.code !== 'disconnected') {
      notice(errorText(e), 'error');
    }
  });
}

/** Shows a game from the archive (`/api/games/{id}`) as a finished game to replay. */
async function openArchived(id) {
  const record = await archive.game(id).catch(() => null);
  if (!record || record.game !== id || gameId !== id || !Array.isArray(record.moves)) return false;
  const conn = connections.current();
  onGameFrame(conn, stateFromArchive(record, conn.player));
  if (record.t === 'state') return true;
  const model = models.get(conn.label);
  if (model && model.id === id) hooks.onArchived(record, model);
  hooks.render();
  return true;
}

/** Puts game `id` on screen and follows it on every connection of this device. */
export function openGame(id, { hotseat: bothHere = false } = {}) {
  connections.useConnectionFor(id);
  if (gameId !== id) {
    gameId = id;
    models.clear();
    pending = null;
    hooks.onOpened(id);
  }
  hotseat = bothHere;
  if (!hotseat) connections.stopGuest();
  showGameUrl(id);
  hooks.onShow(id);
  showScreen('game');
  // A state that came with create or join shows the board at once; events
  // after it may have gone by unseen, so a fresh one is asked for anyway.
  const cached = states.get(id);
  states.clear();
  const conn = connections.current();
  if (cached) onGameFrame(conn, cached);
  else hooks.render();
  follow(conn, id);
  if (hotseat) {
    const guest = connections.guest();
    if (!guest) connections.startGuest();
    else if (guest.ready) follow(guest, id);
  }
}

export function gameVanished() {
  notice('That game is over or no longer exists.', 'error');
  store.set(store.KEYS.game, null);
  goHome();
}

export function goHome() {
  const saved = store.get(store.KEYS.game);
  if (saved) store.set(store.KEYS.game, { ...saved, active: false });
  gameId = null;
  models.clear();
  hooks.onOpened(null);
  connections.backOnline();
  if (connections.stopGuest()) hotseat = false;
  showHomeUrl();
  showScreen('home');
  connections.showConnection();
  hooks.onHome();
}

function sendMove(conn, uci, ply) {
  conn.request({ t: 'move', game: gameId, uci, ply }).catch((err) => {
    if (err.code === 'timeout' || err.code === 'disconnected') return; // resent after resuming
    pending = null;
    hooks.onMoveRefused(err, uci);
    if (err.code === 'stale_ply') follow(conn, gameId);
  });
}

/** A move made on the board, by the seat on screen. */
export function playMove(uci) {
  const model = activeModel();
  if (!model) return;
  const conn = connFor(model);
  const ply = model.moves.length;
  pending = { game: model.id, uci, ply, conn: conn.label };
  sendMove(conn, uci, ply);
}

/** A command (resign, draw, takeback, …) for `model`'s game from its seat. */
export function act(frame, model = activeModel()) {
  if (!model) return;
  connFor(model).command({ ...frame, game: model.id }).catch((err) => notice(errorText(err), 'error'));
}
