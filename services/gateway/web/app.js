// The Fogblast page: the home screen (computer, friends, codes, lobby,
// quick pairing, leaderboard, your games) and the game screen (board,
// clocks, moves, offers, fog of war, same-device play, replay). It speaks
// the gateway's WebSocket protocol (docs/protocol.md); docs/web-client.md
// describes the URLs, storage keys and keyboard.

import { THEMES } from './art/pieces.js';
import { Board } from './js/board.js';
import { Connection } from './js/net.js';
import { OfflineConnection, isOfflineGame } from './offline/offline.js';
import * as store from './js/store.js';
import * as sound from './js/sound.js';
import * as archive from './js/archive.js';
import { VARIANT_NAME, clockLabel, escapeHtml, errorText, fmtClock, moveErrorText, resultText } from './js/text.js';
import { parseFen, replay as replayFrames, checkedKing, name as sqName, placementOf, START_FEN } from './js/chess.js';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const ALL_SQUARES = Array.from({ length: 64 }, (_, i) => sqName(i));
const COLOR_NAME = { white: 'White', black: 'Black' };
const other = (color) => (color === 'white' ? 'black' : 'white');

// --- state -----------------------------------------------------------------

const app = {
  conn: null,          // the player's connection
  guest: null,         // the second seat's connection in a same-device game
  gameId: null,        // the game on screen
  games: new Map(),    // connection label → model of the game on screen, as that seat sees it
  states: new Map(),   // game id → the newest state frame seen for a game not (yet) on screen
  hotseat: false,
  revealed: null,      // same-device fog: the colour that has lifted the curtain
  replayPly: null,     // null: the live position; a number: the replay's ply
  frames: null,        // replay positions of a finished game
  look: { mode: '2d', theme: 'felt', sound: false, ...store.get(store.KEYS.look, {}) },
  flipped: false,
  pendingMove: null,   // {game, uci, ply} sent and not yet acknowledged
  seek: null,
  lobby: [],
  lobbyWanted: false,
  rating: null,        // {game, text} shown in rating-change
  profileCache: new Map(),
};

// --- connections -----------------------------------------------------------

function makeConnection(label, tokenKey) {
  const conn = new Connection({
    token: () => store.get(tokenKey),
    saveToken: (token) => store.set(tokenKey, token),
    name: () => (label === 'main' ? store.get(store.KEYS.name, '') : 'Guest'),
  });
  conn.label = label;
  conn.onFrame((frame) => onFrame(conn, frame));
  conn.onStatus(() => showConnection());
  conn.onReady(() => onReady(conn));
  return conn;
}

/** The computer in this browser: created on first use, wired like the WebSocket. */
function offlineConnection() {
  if (!app.offline) {
    const conn = new OfflineConnection({ name: () => store.get(store.KEYS.name, '') || 'You' });
    conn.label = 'main';
    conn.onFrame((frame) => onFrame(conn, frame));
    conn.onStatus(() => showConnection());
    conn.onReady(() => onReady(conn));
    conn.start();
    app.offline = conn;
  }
  return app.offline;
}

/** Offline games are played through the page's own engine, the rest through the server. */
function useConnectionFor(id) {
  const conn = isOfflineGame(id) ? offlineConnection() : app.online;
  if (conn && app.conn !== conn) {
    app.conn = conn;
    showConnection();
  }
}

function showConnection() {
  const conns = [app.conn, app.guest].filter(Boolean);
  const state = conns.some((c) => c.state === 'offline') ? 'offline'
    : conns.some((c) => c.state !== 'connected') ? 'reconnecting' : 'connected';
  const el = $('connection');
  el.dataset.state = state;
  el.textContent = state === 'connected' ? 'connected'
    : state === 'offline' ? 'offline' : (app.conn.everConnected ? 'reconnecting…' : 'connecting…');
  if (app.conn && app.conn === app.offline) el.textContent = 'offline: playing in this browser';
}

function onReady(conn) {
  showConnection();
  if (conn.identityLost) {
    conn.identityLost = false;
    notice('The server no longer knows you (it restarted): you are a new player now.', 'error');
  }
  const model = app.games.get(conn.label);
  if (app.gameId) {
    // A finished game too: a rematch offer may come while we were away.
    if (model && model.id === app.gameId && model.archived) {
      // An archived game has nothing more to say.
    } else if (model && model.id === app.gameId) {
      conn.command({ t: 'resume', game: model.id, v: model.v }).catch((e) => {
        if (e.code === 'not_found') gameVanished();
        else follow(conn, app.gameId);
      });
      resendPendingMove(conn, model);
    } else if (!model || model.id !== app.gameId) {
      follow(conn, app.gameId);
    }
  }
  if (conn === app.conn) {
    if (app.lobbyWanted) subscribeLobby();
    if (app.seek) startSeek(app.seek.params, true);
    if (!$('home').hidden) loadProfile();
  }
}

function follow(conn, game) {
  // Not connected: onReady follows the game on screen once the hello is through.
  if (!conn.ready) return Promise.resolve();
  return conn.request({ t: 'watch', game }).catch(async (e) => {
    if (e.code === 'not_found') {
      // The game service keeps a finished game for an hour; the archive keeps it for good.
      if (conn !== app.conn || !(await openArchived(game))) gameVanished();
    } else if (e.code !== 'disconnected') {
      notice(errorText(e), 'error');
    }
  });
}

/** Shows a game from the archive (`/api/games/{id}`) as a finished game to replay. */
async function openArchived(id) {
  const g = await archive.game(id).catch(() => null);
  if (!g || g.game !== id || app.gameId !== id || !Array.isArray(g.moves)) return false;
  if (g.t === 'state') {
    onState(app.conn, g);
    return true;
  }
  const me = app.conn.player;
  const players = g.players || { white: null, black: null };
  const you = players.white && players.white.id === me ? 'white' : players.black && players.black.id === me ? 'black' : 'spectator';
  onState(app.conn, {
    t: 'state', game: g.game, v: 0, variant: g.variant, you, fen: g.fen, moves: g.moves, clock: null,
    status: 'ended', result: g.result, reason: g.reason, players, initial_fen: g.initial_fen,
    chess960: g.chess960, rated: g.rated, time_control: g.time_control,
  });
  const model = app.games.get(app.conn.label);
  if (model && model.id === id) model.archived = true;
  const change = g.rating && you !== 'spectator' ? g.rating[you] : null;
  if (change) {
    app.rating = { game: id, text: `${change.diff >= 0 ? '+' : '-'}${Math.abs(change.diff)} → ${change.after}${change.provisional ? '?' : ''}` };
  }
  render();
  return true;
}

function resendPendingMove(conn, model) {
  const p = app.pendingMove;
  if (p && p.game === model.id && p.conn === conn.label && model.moves.length === p.ply) {
    sendMove(conn, p.uci, p.ply);
  }
}

// --- models ----------------------------------------------------------------

function lastOf(moves) {
  const uci = moves.length ? moves[moves.length - 1] : null;
  return uci ? [uci.slice(0, 2), uci.slice(2, 4)] : null;
}

function loadLost(game, you) {
  const saved = store.get(store.KEYS.lost);
  return new Set(saved && saved.game === game && saved.seats && saved.seats[you] ? saved.seats[you] : []);
}

function saveLost(model) {
  const saved = store.get(store.KEYS.lost);
  const seats = saved && saved.game === model.id ? saved.seats || {} : {};
  seats[model.you] = [...model.lost];
  store.set(store.KEYS.lost, { game: model.id, seats });
}

/** Fog of war names only moves as they are played: keep a seat's own SAN for reloads. */
function saveSan(model, ply, uci, san) {
  const saved = store.get(store.KEYS.sans);
  const seats = saved && saved.game === model.id ? saved.seats || {} : {};
  seats[model.you] = { ...(seats[model.you] || {}), [ply]: [uci, san] };
  store.set(store.KEYS.sans, { game: model.id, seats });
}

function loadSans(game, you, moves, sans) {
  const saved = store.get(store.KEYS.sans);
  const mine = saved && saved.game === game && saved.seats ? saved.seats[you] || {} : {};
  for (const [ply, [uci, san]] of Object.entries(mine)) {
    if (moves[ply] === uci && !sans[ply]) sans[ply] = san;
  }
}

function modelFromState(f, previous) {
  const same = previous && previous.id === f.game;
  const moves = (f.moves || []).slice();
  const sans = [];
  if (same) {
    for (let i = 0; i < moves.length; i++) if (moves[i] && previous.moves[i] === moves[i]) sans[i] = previous.sans[i];
  }
  const now = performance.now();
  const model = {
    id: f.game, v: f.v || 0, variant: f.variant, you: f.you || 'spectator',
    fen: f.fen, position: parseFen(f.fen),
    visible: Array.isArray(f.visible) && f.status !== 'ended' ? new Set(f.visible) : null,
    moves, sans,
    clock: f.clock || null, clockAt: now,
    status: f.status, result: f.result || null, reason: f.reason || null,
    players: f.players || { white: null, black: null },
    initialFen: f.initial_fen || START_FEN, chess960: !!f.chess960, rated: !!f.rated,
    timeControl: f.time_control || null,
    code: f.code || null, invite: f.invite || null,
    drawOffer: f.draw_offer || null, takebackOffer: f.takeback_offer || null, rematchOffer: f.rematch_offer || null,
    rematchGame: f.rematch_game || null,
    // Coming back, a player may see itself as gone in the first state: only the opponent counts.
    gone: f.gone && f.gone !== f.you ? f.gone : null, claimAt: f.gone ? now + (f.claim_in_ms || 0) : 0,
    legal: Array.isArray(f.legal) ? f.legal : null,
    firstMoveAt: firstMoveAt(f, now),
    last: lastOf(moves),
    lost: same ? previous.lost : loadLost(f.game, f.you),
    hiddenNews: false,
  };
  if (moves.length && moves.every(Boolean) && sans.filter(Boolean).length < moves.length) {
    // Every move is known (not fog of war): name them all.
    const frames = replayFrames(model.initialFen, moves, model.variant);
    for (let i = 0; i < moves.length; i++) if (!sans[i]) sans[i] = frames[i + 1].san;
  }
  if (model.variant === 'fog' && isSeat(model) && model.status !== 'ended') loadSans(model.id, model.you, moves, sans);
  if (model.visible) for (const s of [...model.lost]) if (model.visible.has(s)) model.lost.delete(s);
  if (model.status === 'ended') model.lost.clear();
  return model;
}

/** The game in progress that a reload, or the home page's banner, comes back to: a seat's, until it ends. */
function remember(model) {
  const saved = store.get(store.KEYS.game);
  if (isSeat(model) && model.status !== 'ended') {
    store.set(store.KEYS.game, { id: model.id, hotseat: app.hotseat, active: !$('game').hidden });
  } else if (saved && saved.id === model.id) {
    store.set(store.KEYS.game, null);
  }
}

function turnColor(model) {
  return model.position.turn === 'w' ? 'white' : 'black';
}

function isSeat(model) {
  return model.you === 'white' || model.you === 'black';
}

/** The model on screen: in a same-device game, the seat whose turn it is. */
function activeModel() {
  const main = app.games.get('main');
  if (!app.hotseat || !main) return main || null;
  const guest = app.games.get('guest');
  if (!guest || guest.id !== main.id || main.status === 'ended') return main;
  return main.you === turnColor(main) ? main : guest;
}

function connFor(model) {
  if (!model) return app.conn;
  if (app.hotseat && app.guest && app.games.get('guest') === model) return app.guest;
  return app.conn;
}

// --- frames ----------------------------------------------------------------

function onFrame(conn, f) {
  const main = conn === app.conn;
  switch (f.t) {
    case 'state': return onState(conn, f);
    case 'move': return onMove(conn, f);
    case 'end': return onEnd(conn, f);
    case 'draw': case 'takeback': return onOffer(conn, f);
    case 'seated': return onSeated(conn, f);
    case 'opponent_gone': case 'opponent_back': return onPresence(conn, f);
    case 'rematch': return onRematch(conn, f);
    case 'rating': if (main) onRating(f); return;
    case 'lobby': if (main) renderLobby(f.open || []); return;
    case 'paired': if (main) onPaired(f); return;
    case 'reconnect': if (main) notice('The server is restarting: reconnecting…'); return;
    case 'error': if (f.id == null) onLooseError(conn, f); return;
    default: return;
  }
}

function modelFor(conn, f) {
  const model = app.games.get(conn.label);
  if (!model || model.id !== f.game) return null;
  if (typeof f.v === 'number') model.v = Math.max(model.v, f.v);
  return model;
}

function onState(conn, f) {
  if (f.game !== app.gameId) {
    app.states.set(f.game, f);
    return;
  }
  const previous = app.games.get(conn.label);
  const model = modelFromState(f, previous);
  if (previous && previous.id === f.game && previous.v > model.v) return;
  app.games.set(conn.label, model);
  if (app.pendingMove && app.pendingMove.game === f.game && model.moves.length > app.pendingMove.ply) app.pendingMove = null;
  if (conn === app.conn) {
    remember(model);
    if (model.status === 'ended') onGameOver(model, false);
    watchRating(model);
    loadPlayers(model);
  }
  board.show({});
  render();
  if (!previous || previous.id !== f.game) board.placeCursor();
}

function onMove(conn, f) {
  const model = modelFor(conn, f);
  if (!model) return;
  if (f.ply < model.moves.length) return; // a replayed move we already have
  if (f.ply > model.moves.length) { follow(conn, model.id); return; } // a gap: start again from a state
  const mover = turnColor(model);
  model.moves.push(f.uci ?? null);
  model.sans[f.ply] = f.san || null;
  model.fen = f.fen;
  model.position = parseFen(f.fen);
  model.clock = f.clock || null;
  model.clockAt = performance.now();
  model.legal = Array.isArray(f.legal) ? f.legal : null;
  model.firstMoveAt = firstMoveAt(f, performance.now());
  model.last = f.uci ? [f.uci.slice(0, 2), f.uci.slice(2, 4)] : null;
  model.takebackOffer = null;
  if (model.drawOffer && model.drawOffer !== mover) model.drawOffer = null;
  if (Array.isArray(f.visible)) {
    model.visible = new Set(f.visible);
    for (const s of [...model.lost]) if (model.visible.has(s)) model.lost.delete(s);
  }
  if (Array.isArray(f.lost) && f.lost.length) {
    for (const s of f.lost) model.lost.add(s);
  }
  if (model.variant === 'fog' && isSeat(model)) {
    saveLost(model);
    if (f.uci && f.san) saveSan(model, f.ply, f.uci, f.san);
  }
  model.hiddenNews = !f.uci;
  if (app.pendingMove && app.pendingMove.game === model.id && app.pendingMove.ply === f.ply) app.pendingMove = null;
  if (conn === app.conn) {
    if (Array.isArray(f.exploded) && f.exploded.length) {
      sound.play('explosion');
      setTimeout(() => board.explode(f.exploded), 0);
    } else if (f.san && f.san.includes('x')) sound.play('capture');
    else sound.play('move');
  }
  if (app.hotseat && model.variant === 'fog' && model.status === 'playing') maybeCurtain();
  board.show({});
  render();
}

function onEnd(conn, f) {
  const model = modelFor(conn, f);
  if (!model) return;
  model.status = 'ended';
  model.result = f.result;
  model.reason = f.reason;
  model.moves = (f.moves || []).slice();
  model.fen = f.fen;
  model.position = parseFen(f.fen);
  model.clock = f.clock || null;
  model.clockAt = performance.now();
  model.legal = null;
  model.visible = null;
  model.lost.clear();
  model.drawOffer = null;
  model.takebackOffer = null;
  model.gone = null;
  model.last = lastOf(model.moves);
  app.pendingMove = null;
  if (conn === app.conn) {
    if (model.variant === 'fog') {
      store.set(store.KEYS.lost, null);
      store.set(store.KEYS.sans, null);
    }
    remember(model);
    onGameOver(model, true);
  }
  board.show({});
  render();
}

function onOffer(conn, f) {
  const model = modelFor(conn, f);
  if (!model) return;
  const key = f.t === 'draw' ? 'drawOffer' : 'takebackOffer';
  const mine = f.by === model.you;
  if (f.action === 'offer' || f.action === 'request') {
    model[key] = f.by;
    if (conn === app.conn && !mine && isSeat(model)) sound.play('notify');
  } else {
    model[key] = null;
    if (conn === app.conn && f.action === 'decline' && !mine && isSeat(model)) {
      const opponentIsComputer = model.players[f.by] && model.players[f.by].computer;
      notice(f.t === 'draw'
        ? (opponentIsComputer ? 'The computer declines the draw.' : 'Your draw offer was declined.')
        : 'Your takeback request was declined.');
    }
  }
  render();
}

function onSeated(conn, f) {
  const model = modelFor(conn, f);
  if (!model) return;
  model.players[f.color] = f.player;
  model.status = 'playing';
  model.code = null;
  model.invite = null;
  if (Array.isArray(f.legal)) model.legal = f.legal;
  model.firstMoveAt = firstMoveAt(f, performance.now());
  if (conn === app.conn) {
    sound.play('notify');
    loadPlayers(model);
  }
  render();
}

function onPresence(conn, f) {
  const model = modelFor(conn, f);
  if (!model) return;
  if (f.t === 'opponent_gone') {
    model.gone = other(model.you);
    model.claimAt = performance.now() + (f.claim_in_ms || 0);
  } else {
    model.gone = null;
  }
  render();
}

function onRematch(conn, f) {
  const model = modelFor(conn, f);
  if (!model) return;
  if (f.new_game) {
    model.rematchGame = f.new_game;
    model.rematchOffer = null;
    if (conn === app.conn) switchGame(f.new_game);
  } else {
    model.rematchOffer = f.by;
    if (conn === app.conn && f.by !== model.you) sound.play('notify');
  }
  render();
}

function onLooseError(conn, f) {
  notice(errorText(f), 'error');
}

// --- opening games -----------------------------------------------------------

function setUrlForGame(id) {
  const url = `/#game=${encodeURIComponent(id)}`;
  if (location.pathname + location.hash !== url) history.replaceState(null, '', url);
}

function showScreen(which) {
  $('home').hidden = which !== 'home';
  $('game').hidden = which !== 'game';
  document.body.dataset.screen = which;
}

/** Puts game `id` on screen and follows it on every connection of this device. */
function openGame(id, { hotseat = false } = {}) {
  useConnectionFor(id);
  if (app.gameId !== id) {
    app.gameId = id;
    app.games.clear();
    app.replayPly = null;
    app.frames = null;
    app.rating = null;
    app.revealed = null;
    app.flipped = false;
    app.pendingMove = null;
  }
  app.hotseat = hotseat;
  if (!hotseat && app.guest) { app.guest.stop(); app.guest = null; }
  setUrlForGame(id);
  stopLobby();
  showScreen('game');
  // A state that came with create or join shows the board at once; events
  // after it may have gone by unseen, so a fresh one is asked for anyway.
  const cached = app.states.get(id);
  app.states.clear();
  if (cached) onState(app.conn, cached);
  else render();
  follow(app.conn, id);
  if (hotseat) {
    if (!app.guest) {
      app.guest = makeConnection('guest', store.KEYS.guestToken);
      app.guest.start();
    } else if (app.guest.ready) {
      follow(app.guest, id);
    }
  }
}

/** A rematch (or any new game of the same players) replaces the one on screen. */
function switchGame(id) {
  openGame(id, { hotseat: app.hotseat });
}

function gameVanished() {
  notice('That game is over or no longer exists.', 'error');
  store.set(store.KEYS.game, null);
  goHome();
}

function goHome() {
  const saved = store.get(store.KEYS.game);
  if (saved) store.set(store.KEYS.game, { ...saved, active: false });
  app.gameId = null;
  app.games.clear();
  app.frames = null;
  app.replayPly = null;
  if (app.online) app.conn = app.online;
  if (app.guest) { app.guest.stop(); app.guest = null; app.hotseat = false; }
  history.replaceState(null, '', '/');
  showScreen('home');
  showConnection();
  renderHome();
}

// --- home actions ------------------------------------------------------------

function parseClock(value) {
  if (!value || value === 'none') return null;
  const [m, i] = value.split('+').map(Number);
  return { initial_ms: m * 60000, increment_ms: (i || 0) * 1000 };
}

async function busy(button, work) {
  button.disabled = true;
  try { await work(); } finally { button.disabled = false; }
}

function bindHome() {
  const name = $('player-name');
  name.value = store.get(store.KEYS.name, '') || '';
  name.addEventListener('change', () => {
    const value = name.value.trim().slice(0, 30);
    store.set(store.KEYS.name, value);
    // Names travel in hello: say it again on a fresh connection.
    app.conn.stop();
    app.conn.start();
    notice(value ? `You are now “${value}”.` : 'You play without a name.');
  });

  const variant = $('computer-variant');
  const fogNote = () => { $('computer-note').hidden = variant.value !== 'fog'; };
  variant.addEventListener('change', fogNote);
  fogNote();

  $('computer-form').addEventListener('submit', (e) => {
    e.preventDefault();
    busy($('computer-start'), async () => {
      try {
        // Offline when asked, or when the server cannot be reached and the engine in the page can play.
        const offline = $('computer-offline').checked
          || (app.online.state === 'offline' && $('computer-clock').value === 'none');
        const conn = offline ? offlineConnection() : app.online;
        const created = await conn.request({
          t: 'create', variant: variant.value, color: $('computer-color').value,
          clock: parseClock($('computer-clock').value), opponent: 'computer', level: $('computer-level').value,
        });
        openGame(created.game);
      } catch (err) { notice(errorText(err), 'error'); }
    });
  });

  $('friend-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const minutes = Number($('friend-minutes').value || 0);
    const increment = Number($('friend-increment').value || 0);
    if (!Number.isFinite(minutes) || minutes < 0 || minutes > 60 || !Number.isInteger(minutes)) {
      notice('Minutes: a whole number from 0 (no clock) to 60.', 'error'); return;
    }
    if (!Number.isFinite(increment) || increment < 0 || increment > 180 || !Number.isInteger(increment)) {
      notice('Increment: a whole number of seconds from 0 to 180.', 'error'); return;
    }
    const hotseat = $('friend-hotseat').checked;
    const rated = $('friend-rated').checked && !hotseat;
    busy($('friend-create'), async () => {
      try {
        const created = await app.conn.request({
          t: 'create', variant: $('friend-variant').value, color: $('friend-color').value,
          clock: minutes > 0 ? { initial_ms: minutes * 60000, increment_ms: increment * 1000 } : null,
          opponent: 'human', rated,
        });
        if (hotseat) await seatGuest(created);
        else openGame(created.game);
      } catch (err) { notice(errorText(err), 'error'); }
    });
  });

  $('join-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = $('join-code').value.trim().toUpperCase();
    if (!/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/.test(code)) {
      notice('A join code is 8 letters and digits, like 2Y3FFY65.', 'error'); return;
    }
    busy($('join-submit'), () => joinByCode(code));
  });

  $('seek-form').addEventListener('submit', (e) => {
    e.preventDefault();
    startSeek({ variant: $('seek-variant').value, clock: parseClock($('seek-clock').value), rated: $('seek-rated').checked });
  });
  $('seek-cancel').addEventListener('click', cancelSeek);
  $('leaderboard-variant').addEventListener('change', loadLeaderboard);
  $('resume-game').addEventListener('click', () => {
    const saved = store.get(store.KEYS.game);
    if (saved) openGame(saved.id, { hotseat: !!saved.hotseat });
  });
}

/** Same device: a second anonymous player on this device takes the other seat. */
async function seatGuest(created) {
  if (app.guest) app.guest.stop();
  app.guest = makeConnection('guest', store.KEYS.guestToken);
  app.guest.start();
  const joined = await app.guest.request({ t: 'join', code: created.code });
  openGame(created.game, { hotseat: true });
  return joined;
}

async function joinByCode(code) {
  try {
    const joined = await app.conn.request({ t: 'join', code });
    openGame(joined.game);
  } catch (err) {
    const saved = store.get(store.KEYS.game);
    if (err.code === 'conflict' && saved) {
      // Our own invite link, or a seat already ours: go back to the game.
      openGame(saved.id, { hotseat: !!saved.hotseat });
      return;
    }
    notice(err.code === 'not_found' ? 'No open game has that code: it may have been taken or expired.' : errorText(err), 'error');
    if ($('home').hidden) goHome();
  }
}

function startSeek(params, again = false) {
  app.seek = { params, since: again && app.seek ? app.seek.since : Date.now() };
  renderSeek('Looking for an opponent…');
  app.conn.request({ t: 'seek', ...params }).then((f) => {
    if (app.seek) app.seek.pool = f.pool;
    renderSeek();
  }).catch((err) => {
    app.seek = null;
    renderSeek(err.code === 'unavailable'
      ? 'Quick pairing is unavailable: this server runs without a matchmaker. Create a board and share the link instead.'
      : errorText(err));
  });
}

function cancelSeek() {
  if (!app.seek) return;
  app.seek = null;
  renderSeek('Cancelled.');
  app.conn.request({ t: 'cancel_seek' }).catch(() => {});
}

function onPaired(f) {
  app.seek = null;
  renderSeek('Opponent found!');
  sound.play('notify');
  openGame(f.game);
}

function renderSeek(text) {
  const seeking = !!app.seek;
  $('seek-start').hidden = seeking;
  $('seek-cancel').hidden = !seeking;
  const status = $('seek-status');
  if (text != null) status.textContent = text;
  else if (seeking) {
    const s = Math.floor((Date.now() - app.seek.since) / 1000);
    status.textContent = `Looking for an opponent… ${s} s (the rating range widens as you wait)`;
  }
  status.dataset.state = seeking ? 'seeking' : 'idle';
}

function subscribeLobby() {
  app.lobbyWanted = true;
  app.conn.request({ t: 'lobby' }).catch((err) => {
    app.lobbyWanted = false;
    $('lobby-status').textContent = err.code === 'unavailable'
      ? 'The lobby is unavailable: this server runs without a matchmaker.'
      : errorText(err);
    $('lobby').textContent = '';
  });
}

function stopLobby() {
  app.lobbyWanted = false;
}

function renderLobby(open) {
  if (!app.lobbyWanted && $('home').hidden) return;
  app.lobby = open;
  const list = $('lobby');
  list.textContent = '';
  $('lobby-status').textContent = open.length ? '' : 'No open boards right now. Create one!';
  for (const b of open) {
    const li = document.createElement('li');
    li.dataset.testid = 'lobby-entry';
    li.dataset.game = b.game;
    const who = document.createElement('span');
    who.className = 'lobby-who';
    who.textContent = `${b.name || 'Anonymous'}${b.rating ? ` (${b.rating})` : ''}`;
    const what = document.createElement('span');
    what.className = 'lobby-what';
    const seat = b.color === 'white' ? 'you play black' : b.color === 'black' ? 'you play white' : 'random colours';
    what.textContent = `${VARIANT_NAME[b.variant] || b.variant} · ${clockLabel(b.clock)} · ${b.rated ? 'rated' : 'casual'} · ${seat}`;
    const join = document.createElement('button');
    join.type = 'button';
    join.dataset.testid = 'lobby-join';
    const mine = b.player && b.player === app.conn.player;
    join.textContent = mine ? 'Yours' : 'Join';
    join.disabled = mine;
    join.addEventListener('click', () => busy(join, () => joinByCode(b.code)));
    li.append(who, what, join);
    list.append(li);
  }
}

async function loadLeaderboard() {
  const variant = $('leaderboard-variant').value;
  const list = $('leaderboard');
  try {
    const board = await archive.leaderboard(variant, 10);
    list.textContent = '';
    const entries = (board && board.entries) || [];
    if (!board) { list.innerHTML = '<li class="empty">The leaderboard is unavailable right now.</li>'; return; }
    if (!entries.length) { list.innerHTML = '<li class="empty">No settled ratings yet: play rated games!</li>'; return; }
    for (const e of entries) {
      const li = document.createElement('li');
      li.textContent = `${e.name || 'Anonymous'} — ${Math.round(e.rating)}`;
      list.append(li);
    }
  } catch { list.innerHTML = '<li class="empty">The leaderboard is unavailable right now.</li>'; }
}

async function loadProfile() {
  const me = app.conn.player;
  if (!me) return;
  const profileEl = $('profile');
  const history = $('history');
  try {
    const games = await archive.games(me, 10);
    if (archive.unavailable()) {
      profileEl.textContent = 'Ratings and finished games are not available on this server.';
      history.textContent = '';
      return;
    }
    const profile = games && games.games && games.games.length ? await archive.profile(me) : null;
    const ratings = (profile && profile.ratings) || [];
    profileEl.textContent = ratings.length
      ? ratings.map((r) => `${VARIANT_NAME[r.variant] || r.variant}: ${Math.round(r.rating)}${r.provisional ? '?' : ''} (${r.games} games)`).join(' · ')
      : 'No rated games yet.';
    history.textContent = '';
    const list = (games && games.games) || [];
    if (!list.length) history.innerHTML = '<li class="empty">Your finished games appear here.</li>';
    for (const g of list) {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = `/#game=${encodeURIComponent(g.game)}`;
      const white = g.players && g.players.white ? g.players.white.name || 'Anonymous' : '?';
      const black = g.players && g.players.black ? g.players.black.name || 'Anonymous' : '?';
      const result = g.result === '*' ? 'aborted' : g.result;
      a.textContent = `${VARIANT_NAME[g.variant] || g.variant}: ${white} – ${black}, ${result}`;
      a.addEventListener('click', (e) => { e.preventDefault(); openGame(g.game); });
      const pgn = document.createElement('a');
      pgn.href = archive.pgnUrl(g.game);
      pgn.textContent = 'PGN';
      pgn.className = 'pgn';
      pgn.setAttribute('download', `${g.game}.pgn`);
      li.append(a, ' ', pgn);
      history.append(li);
    }
  } catch {
    profileEl.textContent = '';
  }
}

function renderHome() {
  const saved = store.get(store.KEYS.game);
  $('resume-banner').hidden = !saved;
  subscribeLobby();
  renderSeek();
  // One after the other: a gateway without an archive is then asked once.
  loadLeaderboard().then(loadProfile);
}

// --- game actions ----------------------------------------------------------

function sendMove(conn, uci, ply) {
  conn.request({ t: 'move', game: app.gameId, uci, ply }).catch((err) => {
    if (err.code === 'timeout' || err.code === 'disconnected') return; // resent after resuming
    app.pendingMove = null;
    board.cancelPending();
    notice(moveErrorText(err), 'error');
    if (err.code === 'stale_ply') follow(conn, app.gameId);
  });
}

function onBoardMove(uci) {
  const model = activeModel();
  if (!model) return;
  const conn = connFor(model);
  const ply = model.moves.length;
  app.pendingMove = { game: model.id, uci, ply, conn: conn.label };
  sendMove(conn, uci, ply);
}

function act(frame, model = activeModel()) {
  if (!model) return;
  connFor(model).command({ ...frame, game: model.id }).catch((err) => notice(errorText(err), 'error'));
}

function bindGame() {
  $('resign').addEventListener('click', () => act({ t: 'resign' }));
  $('abort').addEventListener('click', () => act({ t: 'abort' }));
  $('offer-draw').addEventListener('click', () => act({ t: 'draw', action: 'offer' }));
  $('accept-draw').addEventListener('click', () => act({ t: 'draw', action: 'accept' }));
  $('decline-draw').addEventListener('click', () => act({ t: 'draw', action: 'decline' }));
  $('takeback').addEventListener('click', () => act({ t: 'takeback', action: 'request' }));
  $('accept-takeback').addEventListener('click', () => act({ t: 'takeback', action: 'accept' }));
  $('decline-takeback').addEventListener('click', () => act({ t: 'takeback', action: 'decline' }));
  $('claim-victory').addEventListener('click', () => act({ t: 'claim_victory' }));
  const rematch = () => {
    const main = app.games.get('main');
    if (!main) return;
    act({ t: 'rematch' }, main);
    // Same device: both players are here, so both agree at once.
    const guest = app.games.get('guest');
    if (app.hotseat && guest) setTimeout(() => act({ t: 'rematch' }, guest), 150);
  };
  $('rematch').addEventListener('click', rematch);
  $('accept-rematch').addEventListener('click', rematch);
  $('new-game').addEventListener('click', () => goHome());
  $('flip').addEventListener('click', () => { app.flipped = !app.flipped; render(); });
  $('copy-link').addEventListener('click', () => copy($('invite-link').textContent, $('copy-link')));
  $('copy-code').addEventListener('click', () => copy($('invite-code').textContent, $('copy-code')));
  $('hand-to-computer').addEventListener('click', () => busy($('hand-to-computer'), handToComputer));
  $('curtain-ready').addEventListener('click', () => {
    const model = activeModel();
    app.revealed = model ? turnColor(model) : null;
    render();
    board.placeCursor();
    board.el.focus({ preventScroll: true });
  });
  $('replay-start').addEventListener('click', () => stepReplay('start'));
  $('replay-prev').addEventListener('click', () => stepReplay(-1));
  $('replay-next').addEventListener('click', () => stepReplay(1));
  $('replay-end').addEventListener('click', () => stepReplay('end'));
  $('replay').addEventListener('keydown', (e) => { if (replayKey(e)) e.preventDefault(); });
  $('moves').addEventListener('click', (e) => {
    const el = e.target.closest('[data-ply]');
    const model = activeModel();
    if (!el || !model || model.status !== 'ended') return;
    setReplay(Number(el.dataset.ply) + 1);
  });
}

/** Nobody took the free seat: the open board is closed and the same game starts against the computer. */
async function handToComputer() {
  const model = activeModel();
  if (!model || model.status !== 'waiting' || !isSeat(model)) return;
  try {
    // The abort has no reply of its own (its `end` frame concerns a game no longer shown).
    app.conn.send({ t: 'abort', game: model.id });
    const created = await app.conn.request({
      t: 'create', variant: model.variant, color: model.you, clock: model.timeControl,
      opponent: 'computer', level: 'medium',
    });
    openGame(created.game);
  } catch (err) {
    notice(errorText(err), 'error');
  }
}

async function copy(text, button) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    area.remove();
  }
  const label = button.dataset.label || button.textContent;
  button.dataset.label = label;
  button.textContent = ok ? 'Copied!' : 'Select and copy';
  button.classList.toggle('copied', ok);
  setTimeout(() => { button.textContent = label; button.classList.remove('copied'); }, 1600);
}

// --- replay ----------------------------------------------------------------

function onGameOver(model, live) {
  if (live) sound.play('end');
  app.frames = replayFrames(model.initialFen, model.moves, model.variant);
  // The server's final position is the truth if ours ever differs.
  const last = app.frames[app.frames.length - 1];
  const serverFinal = parseFen(model.fen);
  if (placementOf(last.position.board) !== placementOf(serverFinal.board)) last.position = serverFinal;
  for (let i = 0; i < model.moves.length; i++) if (!model.sans[i]) model.sans[i] = app.frames[i + 1].san;
  app.replayPly = null;
  app.revealed = null;
}

function stepReplay(step) {
  const model = activeModel();
  if (!model || model.status !== 'ended' || !app.frames) return;
  const total = app.frames.length - 1;
  const current = app.replayPly == null ? total : app.replayPly;
  const target = step === 'start' ? 0 : step === 'end' ? total : Math.max(0, Math.min(total, current + step));
  setReplay(target);
}

function setReplay(ply) {
  const total = app.frames.length - 1;
  const forward = ply === (app.replayPly == null ? total : app.replayPly) + 1;
  app.replayPly = ply >= total ? null : ply;
  render();
  const frame = app.frames[ply];
  if (forward && frame && frame.exploded.length) board.explode(frame.exploded);
}

function replayKey(e) {
  const model = activeModel();
  if (!model || model.status !== 'ended') return false;
  if (e.key === 'ArrowLeft') { stepReplay(-1); return true; }
  if (e.key === 'ArrowRight') { stepReplay(1); return true; }
  if (e.key === 'Home') { stepReplay('start'); return true; }
  if (e.key === 'End') { stepReplay('end'); return true; }
  return false;
}

// --- ratings ---------------------------------------------------------------

function ratingOf(profile, variant) {
  const r = profile && (profile.ratings || []).find((x) => x.variant === variant);
  return r || null;
}

/** Remembers the rating before a rated game, to show the change if the rating frame is missed. */
async function watchRating(model) {
  if (!model.rated || !isSeat(model) || app.hotseat) return;
  const saved = store.get(store.KEYS.ratingBefore);
  if (model.status !== 'ended' && (!saved || saved.game !== model.id)) {
    const profile = await archive.profile(app.conn.player).catch(() => null);
    const r = ratingOf(profile, model.variant);
    store.set(store.KEYS.ratingBefore, { game: model.id, variant: model.variant, rating: r ? r.rating : null, games: r ? r.games : 0 });
  }
  if (model.status === 'ended') pollRating(model.id, model.variant);
}

function onRating(f) {
  if (f.game && f.game !== app.gameId) return;
  const diff = Math.round(f.diff || 0);
  app.rating = { game: f.game || app.gameId, text: `${diff >= 0 ? '+' : '-'}${Math.abs(diff)} → ${Math.round(f.rating)}${f.provisional ? '?' : ''}` };
  render();
}

async function pollRating(game, variant) {
  const saved = store.get(store.KEYS.ratingBefore);
  for (let attempt = 0; attempt < 12; attempt++) {
    await new Promise((r) => setTimeout(r, attempt === 0 ? 2500 : 2000));
    if (app.gameId !== game || (app.rating && app.rating.game === game)) return;
    const profile = await archive.profile(app.conn.player).catch(() => null);
    const r = ratingOf(profile, variant);
    if (r && saved && saved.game === game && r.games > saved.games) {
      const diff = Math.round(r.rating - (saved.rating ?? 1500));
      app.rating = { game, text: `${diff >= 0 ? '+' : '-'}${Math.abs(diff)} → ${Math.round(r.rating)}${r.provisional ? '?' : ''}` };
      render();
      return;
    }
  }
}

async function loadPlayers(model) {
  // One at a time: a gateway without an archive is then asked once.
  for (const color of ['white', 'black']) {
    const p = model.players[color];
    if (!p || p.computer || !p.id || app.profileCache.has(p.id)) continue;
    app.profileCache.set(p.id, null);
    const profile = await archive.profile(p.id).catch(() => null);
    app.profileCache.set(p.id, profile);
    render();
  }
}

// --- rendering -------------------------------------------------------------

function playerLabel(model, color) {
  const p = model.players[color];
  if (!p) return { name: 'Waiting for an opponent…', rating: '' };
  let label = p.computer ? (p.name || 'Computer') : (p.name || 'Anonymous');
  if (!app.hotseat && model.you === color) label += ' (you)';
  if (app.hotseat) label = `${COLOR_NAME[color]}${p.computer ? '' : ''}`;
  let rating = '';
  if (!p.computer && p.id && app.profileCache.get(p.id)) {
    const r = ratingOf(app.profileCache.get(p.id), model.variant);
    if (r) rating = `${Math.round(r.rating)}${r.provisional ? '?' : ''}`;
  }
  return { name: label, rating };
}

let lastTick = 0;

function renderClocks() {
  const model = activeModel();
  for (const color of ['white', 'black']) {
    const el = $(`clock-${color}`);
    if (!model || !model.clock) {
      el.hidden = true;
      el.classList.remove('running', 'low');
      continue;
    }
    el.hidden = false;
    const running = model.status === 'playing' && model.clock.running === color;
    let ms = model.clock[`${color}_ms`];
    if (running) ms -= performance.now() - model.clockAt;
    const text = fmtClock(ms);
    if (el.textContent !== text) el.textContent = text;
    el.classList.toggle('running', running);
    el.classList.toggle('low', ms < 20000);
    if (running && ms < 10000 && ms > 0 && model.you === color) {
      const second = Math.floor(ms / 1000);
      if (second !== lastTick) { lastTick = second; sound.play('tick'); }
    }
  }
  const prompt = document.querySelector('[data-prompt="gone"]');
  if (model && model.gone && !prompt.hidden) renderGone(model);
  if (model && firstMoveSecondsLeft(model) != null && !curtainUp(model)) {
    const text = statusText(model, isSeat(model) && turnColor(model) === model.you);
    if ($('status').textContent !== text) $('status').textContent = text;
  }
}

function renderGone(model) {
  const left = Math.max(0, Math.ceil((model.claimAt - performance.now()) / 1000));
  const button = $('claim-victory');
  button.disabled = left > 0;
  const text = left > 0 ? `Claim victory in ${left} s` : 'Claim victory';
  if (button.textContent !== text) button.textContent = text;
}

/** The move list; `masked` (the curtain is up) names no move, not even the next player's own. */
function renderMoves(model, masked = false) {
  const list = $('moves');
  const hiddenText = 'a move was played';
  const items = [];
  const frames = model.status === 'ended' ? app.frames : null;
  const shownPly = app.replayPly == null ? model.moves.length : app.replayPly;
  for (let i = 0; i < model.moves.length; i += 2) {
    const row = [`<li class="move-row"><span class="move-no">${i / 2 + 1}.</span>`];
    for (const ply of [i, i + 1]) {
      if (ply >= model.moves.length) break;
      const uci = model.moves[ply];
      let text;
      if (!uci || masked) text = hiddenText;
      else text = model.sans[ply] || (frames && frames[ply + 1] && frames[ply + 1].san) || `${uci.slice(0, 2)}–${uci.slice(2)}`;
      const classes = ['move'];
      if (!uci || masked) classes.push('hidden-move');
      if (ply === shownPly - 1) classes.push('current');
      row.push(`<span class="${classes.join(' ')}" data-ply="${ply}"${model.status === 'ended' ? ' role="button" tabindex="-1"' : ''}>${escapeHtml(text)}</span>`);
    }
    row.push('</li>');
    items.push(row.join(''));
  }
  const html = items.join('');
  if (list.dataset.html !== html) {
    list.innerHTML = html;
    list.dataset.html = html;
    const current = list.querySelector('.current');
    if (current && app.replayPly == null) list.scrollTop = list.scrollHeight;
    else if (current) current.scrollIntoView({ block: 'nearest' });
  }
}

function maybeCurtain() {
  const model = activeModel();
  if (model && app.revealed !== turnColor(model)) render();
}

function curtainUp(model) {
  return app.hotseat && model.variant === 'fog' && model.status === 'playing' && app.revealed !== turnColor(model);
}

/**
 * When a game between people is aborted for a missing first move, on the
 * page's clock (`first_move_in_ms` of a state, move or seated frame); 0 when
 * no such deadline runs, as against the computer, which waits.
 */
function firstMoveAt(f, now) {
  return f.first_move_in_ms > 0 ? now + f.first_move_in_ms : 0;
}

/** Whole seconds left to make a first move, or null when no deadline runs. */
function firstMoveSecondsLeft(model) {
  if (!model.firstMoveAt || model.status !== 'playing') return null;
  return Math.max(0, Math.ceil((model.firstMoveAt - performance.now()) / 1000));
}

function statusText(model, myTurn) {
  if (model.status === 'ended') {
    return model.moves.length ? 'Game over: step through it with ‹ › or the arrow keys.' : 'Game over.';
  }
  if (model.status === 'waiting') {
    return isSeat(model) ? 'Waiting for an opponent to join: share the link or the code.' : 'Waiting for a second player.';
  }
  const turn = turnColor(model);
  const check = checkedKing(model.position, model.position.turn, model.variant) >= 0 ? ' Check!' : '';
  if (app.hotseat) return `${COLOR_NAME[turn]} to move.${model.variant === 'fog' ? '' : check}`;
  if (!isSeat(model)) {
    return model.variant === 'fog'
      ? `Watching: ${COLOR_NAME[turn]} to move. The fog hides the board until the end.`
      : `Watching: ${COLOR_NAME[turn]} to move.`;
  }
  const left = firstMoveSecondsLeft(model);
  if (myTurn) {
    const base = model.hiddenNews ? 'A move was played — your turn' : 'Your turn';
    return left != null ? `${base}: make your first move within ${left} s or the game is aborted.` : `${base}.${check}`;
  }
  const opp = model.players[other(model.you)];
  if (left != null) return `Waiting for your opponent's first move: the game is aborted in ${left} s without it.`;
  return `Waiting for ${opp && opp.computer ? 'the computer' : 'your opponent'} to move…`;
}

function render() {
  const model = activeModel();
  const gameEl = $('game');
  if (!model) {
    $('status').textContent = app.gameId ? 'Loading the game…' : '';
    return;
  }
  const ended = model.status === 'ended';
  const seat = isSeat(model);
  const turn = turnColor(model);
  const myTurn = seat && model.status === 'playing' && turn === model.you;
  const curtain = curtainUp(model);

  // Orientation: your colour at the bottom; same-device fog: the side to move.
  let bottom = seat ? model.you : 'white';
  if (app.hotseat) bottom = model.variant === 'fog' && !ended ? turn : app.games.get('main').you;
  if (app.flipped) bottom = other(bottom);
  board.setOrientation(bottom);

  // The board.
  let view;
  if (curtain) {
    view = { board: new Array(64).fill(null), fog: new Set(ALL_SQUARES), last: null, check: -1, lost: new Set(), movable: null, legal: null };
  } else if (ended && app.replayPly != null && app.frames) {
    const frame = app.frames[app.replayPly];
    const turnLetter = frame.position.turn;
    view = { board: frame.position.board, fog: null, last: frame.last, check: checkedKing(frame.position, turnLetter, model.variant), lost: new Set(), movable: null, legal: null };
  } else {
    const fog = model.visible ? new Set(ALL_SQUARES.filter((s) => !model.visible.has(s))) : (model.variant === 'fog' && !ended && !seat ? new Set(ALL_SQUARES) : null);
    const checked = ended && model.reason !== 'checkmate' ? -1 : checkedKing(model.position, model.position.turn, model.variant);
    view = {
      board: model.position.board, fog, last: model.last, check: checked, lost: model.lost,
      movable: myTurn && !app.pendingMove ? model.you[0] : null, legal: myTurn ? model.legal : null,
    };
  }
  view.variant = model.variant;
  board.show(view);
  gameEl.dataset.variant = model.variant;
  gameEl.dataset.status = model.status;
  gameEl.dataset.you = model.you;

  // The curtain.
  const curtainEl = $('curtain');
  curtainEl.hidden = !curtain;
  if (curtain) {
    $('curtain-ready').textContent = `I'm ${COLOR_NAME[turn]} — show my board`;
    curtainEl.querySelector('.curtain-title').textContent = `${COLOR_NAME[turn]} to move`;
    curtainEl.querySelector('.curtain-text').textContent = `Pass the device to ${COLOR_NAME[turn]}. ${COLOR_NAME[other(turn)]}, look away.`;
  }

  // Players and clocks, placed by orientation.
  for (const [where, color] of [['bottom', bottom], ['top', other(bottom)]]) {
    const strip = document.querySelector(`[data-strip="${where}"]`);
    const label = playerLabel(model, color);
    strip.querySelector('.player-name').textContent = label.name;
    strip.querySelector('.player-rating').textContent = label.rating;
    strip.dataset.color = color;
    const presence = strip.querySelector('.presence');
    presence.textContent = model.gone === color ? 'left the game' : '';
    strip.classList.toggle('to-move', model.status === 'playing' && turn === color);
    const clock = $(`clock-${color}`);
    if (clock.parentElement !== strip) strip.append(clock);
  }
  renderClocks();

  // Status and result.
  $('status').textContent = statusText(model, myTurn && !curtain);
  $('status').dataset.turn = myTurn ? 'you' : 'other';
  const resultBox = document.querySelector('.result-box');
  resultBox.hidden = !ended;
  $('result').textContent = ended ? resultText(model) : '';
  const ratingEl = $('rating-change');
  const rating = app.rating && app.rating.game === model.id ? app.rating.text : null;
  ratingEl.hidden = !(ended && rating);
  ratingEl.textContent = rating || '';
  ratingEl.classList.toggle('down', !!rating && rating.startsWith('-'));

  // Invite.
  const invite = $('invite');
  invite.hidden = !(model.status === 'waiting' && model.code && seat);
  $('invite-alt').hidden = app.hotseat;
  if (!invite.hidden) {
    const url = `${location.origin}${model.invite || `/g/${model.code}`}`;
    $('invite-link').textContent = url;
    $('invite-link').href = url;
    $('invite-code').textContent = model.code;
  }

  // Prompts and controls.
  const playing = model.status === 'playing';
  const canAct = seat && !curtain;
  const vsComputer = ['white', 'black'].some((c) => model.players[c] && model.players[c].computer);
  const opp = other(model.you);
  show('[data-prompt="draw"]', canAct && playing && model.drawOffer === opp);
  show('[data-prompt="takeback"]', canAct && playing && model.takebackOffer === opp);
  show('[data-prompt="rematch"]', canAct && ended && model.rematchOffer === opp && !model.rematchGame && !app.hotseat);
  show('[data-prompt="gone"]', canAct && playing && model.gone === opp);
  if (canAct && playing && model.gone === opp) renderGone(model);

  const myMoves = model.moves.filter((_, i) => (i % 2 === 0) === (colorToMoveFirst(model) === model.you)).length;
  setButton('abort', canAct && (model.status === 'waiting' || (playing && model.moves.length < 2)));
  setButton('resign', canAct && playing);
  setButton('offer-draw', canAct && playing, {
    disabled: model.drawOffer === model.you,
    text: model.drawOffer === model.you ? 'Draw offered' : 'Offer draw',
  });
  setButton('takeback', canAct && playing && myMoves > 0, {
    disabled: model.takebackOffer === model.you,
    text: vsComputer ? 'Undo' : model.takebackOffer === model.you ? 'Takeback asked' : 'Takeback',
  });
  setButton('rematch', seat && ended && !model.archived && !model.rematchGame && model.result !== null && model.rematchOffer !== opp, {
    disabled: model.rematchOffer === model.you,
    text: model.rematchOffer === model.you ? 'Rematch offered…' : 'Rematch',
  });
  $('new-game').textContent = ended || !seat ? 'New game' : 'Home';

  // Moves, replay, PGN.
  renderMoves(model, curtain);
  const replayEl = $('replay');
  replayEl.hidden = !(ended && app.frames && model.moves.length);
  if (!replayEl.hidden) {
    const total = app.frames.length - 1;
    const ply = app.replayPly == null ? total : app.replayPly;
    $('replay-ply').textContent = `${ply} / ${total}`;
    $('replay-start').disabled = ply === 0;
    $('replay-prev').disabled = ply === 0;
    $('replay-next').disabled = ply === total;
    $('replay-end').disabled = ply === total;
  }
  const pgn = $('pgn-link');
  pgn.hidden = !(ended && model.result !== '*');
  if (!isOfflineGame(model.id)) pgn.href = archive.pgnUrl(model.id);
  pgn.setAttribute('download', `fogblast-${model.id}.pgn`);
  if (ended && isOfflineGame(model.id)) offlinePgn(pgn, model.id);
  document.title = ended ? `${resultText(model)} · Fogblast` : myTurn ? 'Your turn · Fogblast' : 'Fogblast';
}

/** An offline game's PGN comes from the engine in the page, as a data link. */
function offlinePgn(link, id) {
  if (link.dataset.game === id) return;
  link.dataset.game = id;
  link.removeAttribute('href');
  offlineConnection().pgn(id).then((text) => {
    if (link.dataset.game === id) link.href = `data:application/x-chess-pgn;charset=utf-8,${encodeURIComponent(text)}`;
  }).catch((err) => notice(`No PGN: ${err.message || err}`, 'error'));
}

function colorToMoveFirst(model) {
  return parseFen(model.initialFen).turn === 'w' ? 'white' : 'black';
}

function show(selector, visible) {
  const el = document.querySelector(selector);
  if (el.hidden === visible) el.hidden = !visible;
}

function setButton(id, visible, { disabled = false, text = null } = {}) {
  const el = $(id);
  el.hidden = !visible;
  el.disabled = disabled;
  if (text != null && el.textContent !== text) el.textContent = text;
}

// --- notices and errors ----------------------------------------------------

let noticeTimer = null;

function notice(text, kind = 'info') {
  const el = $('notice');
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { el.hidden = true; }, kind === 'error' ? 6000 : 3500);
}

// --- looks -------------------------------------------------------------------

function applyLook() {
  const ids = THEMES.map((t) => t.id);
  if (!ids.includes(app.look.theme)) app.look.theme = ids[0] || 'felt';
  if (app.look.mode !== '3d') app.look.mode = '2d';
  document.body.dataset.theme = app.look.theme;
  document.body.dataset.mode = app.look.mode;
  $('theme').value = app.look.theme;
  const toggle = $('toggle-3d');
  toggle.setAttribute('aria-pressed', String(app.look.mode === '3d'));
  toggle.textContent = app.look.mode === '3d' ? '2D' : '3D';
  toggle.title = app.look.mode === '3d' ? 'Show the flat board' : 'Show the 3D board';
  $('sound').checked = !!app.look.sound;
  sound.setEnabled(!!app.look.sound);
  board.setLook(app.look.mode, app.look.theme);
  store.set(store.KEYS.look, app.look);
}

function bindLooks() {
  const select = $('theme');
  for (const t of THEMES) {
    const option = document.createElement('option');
    option.value = t.id;
    option.textContent = t.name;
    select.append(option);
  }
  select.addEventListener('change', () => { app.look.theme = select.value; applyLook(); });
  $('toggle-3d').addEventListener('click', () => { app.look.mode = app.look.mode === '3d' ? '2d' : '3d'; applyLook(); });
  $('sound').addEventListener('change', () => {
    app.look.sound = $('sound').checked;
    applyLook();
    if (app.look.sound) sound.play('move');
  });
}

// --- start -----------------------------------------------------------------

const board = new Board(document.getElementById('board-wrap'), {
  onMove: onBoardMove,
  onIllegal: (text) => notice(text, 'error'),
  onKey: (e) => replayKey(e),
});
// The curtain sits above the board.
document.getElementById('board-wrap').append($('curtain'));

function route() {
  const invite = location.pathname.match(/^\/g\/([^/]+)\/?$/);
  const hash = new URLSearchParams(location.hash.slice(1));
  const saved = store.get(store.KEYS.game);
  if (invite) {
    const code = decodeURIComponent(invite[1]).toUpperCase();
    showScreen('game');
    $('status').textContent = `Joining game ${code}…`;
    joinByCode(code);
  } else if (hash.get('game')) {
    const id = hash.get('game');
    openGame(id, { hotseat: !!(saved && saved.id === id && saved.hotseat) });
  } else if (saved && saved.active) {
    openGame(saved.id, { hotseat: !!saved.hotseat });
  } else {
    showScreen('home');
    renderHome();
  }
}

function start() {
  bindLooks();
  applyLook();
  bindHome();
  bindGame();
  app.conn = makeConnection('main', store.KEYS.token);
  app.online = app.conn;
  showConnection();
  app.conn.start();
  // Keep the page's files so it opens, and plays the computer, with no network.
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js').catch(() => {});
  route();
  window.addEventListener('hashchange', () => {
    const id = new URLSearchParams(location.hash.slice(1)).get('game');
    if (id && id !== app.gameId) openGame(id);
    else if (!id && app.gameId) goHome();
  });
  const tick = () => {
    renderClocks();
    if (app.seek && !$('home').hidden) renderSeek();
  };
  setInterval(tick, 100);
}

start();
