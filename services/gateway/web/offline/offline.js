// Games against the computer with no server: the same frames the gateway
// sends (docs/protocol.md), made in the page from the rules and the engine
// compiled to WebAssembly, which runs in a Web Worker. The page plays an
// offline game through an OfflineConnection exactly as it plays an online
// one through a WebSocket. Every game is saved in localStorage after each
// move, so a reload or a restart resumes it where it stopped.

const STORE = 'fogblast.offline.games';
/** Offline game ids start with this, so the page knows where a game lives. */
export const OFFLINE_PREFIX = 'offline-';

/** The player id of this browser's own player in offline games (not a server id: those are 16 characters). */
export const OFFLINE_PLAYER = 'offline';
const LEVEL_NAME = { easy: 'Easy', medium: 'Medium', hard: 'Hard' };
const STANDARD_START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
/** Finished offline games kept for their replay and PGN. */
const KEEP_FINISHED = 20;

export const isOfflineGame = (id) => typeof id === 'string' && id.startsWith(OFFLINE_PREFIX);

function loadGames() {
  try {
    return JSON.parse(localStorage.getItem(STORE) || '{}') || {};
  } catch {
    return {};
  }
}

function saveGames(games) {
  const ids = Object.keys(games);
  const finished = ids.filter((id) => games[id].status === 'ended').sort((a, b) => games[a].updated - games[b].updated);
  for (const id of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) delete games[id];
  try {
    localStorage.setItem(STORE, JSON.stringify(games));
  } catch {
    // A full store: the game goes on, it just is not kept.
  }
}

/** The engine worker, started once for the page. */
class Engine {
  constructor() {
    this.worker = new Worker(new URL('engine-worker.js', import.meta.url), { type: 'module' });
    this.next = 0;
    this.waiting = new Map();
    this.worker.onmessage = (event) => {
      const { id, answer } = event.data;
      const resolve = this.waiting.get(id);
      this.waiting.delete(id);
      if (resolve) resolve(answer);
    };
    this.worker.onerror = (event) => {
      for (const [, resolve] of this.waiting) resolve({ ok: false, error: event.message || 'the engine failed' });
      this.waiting.clear();
    };
  }

  call(request) {
    const id = ++this.next;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ id, request });
    });
  }
}

let sharedEngine = null;
const engine = () => (sharedEngine ??= new Engine());

function error(code, message, id) {
  const frame = { t: 'error', code, message };
  if (id != null) frame.id = id;
  return frame;
}

export class OfflineConnection {
  /** @param {{ name?: () => string }} opts */
  constructor(opts = {}) {
    this.opts = opts;
    this.player = { id: OFFLINE_PLAYER, name: 'You' };
    this.ready = false;
    this.state = 'offline';
    this.everConnected = true;
    this.listeners = new Set();
    this.statusListeners = new Set();
    this.readyListeners = new Set();
    // Each game's work runs in order: a move waits for the previous reply.
    this.chains = new Map();
    // A takeback or a resignation makes a search under way stale.
    this.generation = new Map();
  }

  onFrame(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  onStatus(fn) { this.statusListeners.add(fn); }
  onReady(fn) { this.readyListeners.add(fn); }

  start() {
    if (this.ready) return;
    this.ready = true;
    for (const fn of this.statusListeners) fn(this.state);
    queueMicrotask(() => { for (const fn of this.readyListeners) fn(this); });
    // A game left while the computer was to move: let it move now.
    for (const game of Object.values(loadGames())) {
      if (game.status === 'playing' && turnOf(game) !== game.you) this.enqueue(game.id, () => this.computerMoves(game.id));
    }
  }

  stop() { this.ready = false; }

  emit(frame) {
    for (const fn of this.listeners) fn(frame, this);
  }

  send(frame) { this.handle(frame); }

  /** Sends a frame with an id; resolves with its first reply (or null when none comes), rejects with an error frame. */
  request(frame, timeoutMs = 15000) {
    return new Promise((resolve, reject) => {
      const id = `o${Math.random().toString(36).slice(2)}`;
      const timer = setTimeout(() => { off(); resolve(null); }, timeoutMs);
      const off = this.onFrame((f) => {
        if (f.id !== id) return;
        off();
        clearTimeout(timer);
        if (f.t === 'error') reject(f); else resolve(f);
      });
      this.handle({ ...frame, id });
    });
  }

  command(frame) { return this.request(frame); }

  enqueue(gameId, work) {
    const before = this.chains.get(gameId) || Promise.resolve();
    const next = before.then(work).catch((e) => this.emit(error('internal', String(e && e.message || e))));
    this.chains.set(gameId, next);
    return next;
  }

  handle(frame) {
    const id = frame.id;
    switch (frame.t) {
      case 'hello': this.emit({ t: 'welcome', player: this.player.id, token: null, id }); return;
      case 'ping': this.emit({ t: 'pong', id }); return;
      case 'create': this.enqueue('create', () => this.create(frame)); return;
      case 'watch':
      case 'resume': this.enqueue(frame.game, () => this.watch(frame)); return;
      case 'move': this.enqueue(frame.game, () => this.move(frame)); return;
      case 'resign': this.enqueue(frame.game, () => this.finish(frame, 'resign')); return;
      case 'abort': this.enqueue(frame.game, () => this.finish(frame, 'aborted')); return;
      case 'takeback': this.enqueue(frame.game, () => this.takeback(frame)); return;
      case 'draw': this.enqueue(frame.game, () => this.draw(frame)); return;
      case 'rematch': this.enqueue(frame.game, () => this.rematch(frame)); return;
      case 'claim_victory':
        this.emit(error('conflict', 'the computer never leaves the game', id)); return;
      case 'seek': case 'cancel_seek': case 'lobby':
        this.emit(error('unavailable', 'quick pairing and the lobby need the server: you are playing offline', id)); return;
      default:
        this.emit(error('unknown_type', `${frame.t} is not something an offline game does`, id));
    }
  }

  game(id, frameId) {
    const game = loadGames()[id];
    if (!game) this.emit(error('not_found', `no offline game ${id}`, frameId));
    return game || null;
  }

  store(game) {
    const games = loadGames();
    game.updated = Date.now();
    games[game.id] = game;
    saveGames(games);
  }

  /** The game as the player sees it: in fog of war, cut to the player's view until the end lifts the fog. */
  async position(game, moves = game.moves, { whole = false } = {}) {
    const request = { op: 'position', ...startOf(game), moves };
    if (game.variant === 'fog') request.view = whole || game.status === 'ended' ? 'all' : game.you;
    const answer = await engine().call(request);
    if (!answer.ok) throw new Error(answer.error);
    return answer;
  }

  async create(frame) {
    const variant = frame.variant;
    if (!['atomic', 'standard', 'fog'].includes(variant)) {
      this.emit(error('bad_request', 'offline play is atomic, standard or fog of war', frame.id)); return;
    }
    const level = frame.level || 'hard';
    if (!LEVEL_NAME[level]) { this.emit(error('bad_request', `unknown level ${level}`, frame.id)); return; }
    let you = frame.color;
    if (you === 'random' || !you) you = Math.random() < 0.5 ? 'white' : 'black';
    if (you !== 'white' && you !== 'black') { this.emit(error('bad_request', `unknown colour ${frame.color}`, frame.id)); return; }
    const chess960 = frame.chess960 === true;
    if (chess960 && variant === 'fog') {
      this.emit(error('bad_request', 'Chess960 starting positions are for standard and atomic only', frame.id)); return;
    }
    const game = await newGame(variant, you, level, chess960);
    this.store(game);
    this.emit({ t: 'created', game: game.id, code: null, invite: null, color: you, id: frame.id });
    this.emit(await this.stateFrame(game, frame.id));
    if (you === 'black') this.enqueue(game.id, () => this.computerMoves(game.id));
  }

  async stateFrame(game, id) {
    const pos = await this.position(game);
    const computer = { name: `Computer (${level(game)})`, computer: true, level: game.level };
    const person = { id: this.player.id, name: (this.opts.name && this.opts.name()) || 'You', computer: false };
    const frame = {
      t: 'state', game: game.id, v: game.v, variant: game.variant, you: game.you,
      fen: pos.fen, moves: pos.moves || game.moves.slice(), clock: null, status: game.status,
      players: game.you === 'white' ? { white: person, black: computer } : { white: computer, black: person },
      initial_fen: game.initial_fen || STANDARD_START,
      chess960: !!game.chess960, rated: false, time_control: null,
      draw_offer: null, takeback_offer: null, rematch_offer: null, offline: true,
    };
    if (game.status === 'ended') { frame.result = game.result; frame.reason = game.reason; }
    if (pos.visible) frame.visible = pos.visible;
    if (game.rematch) frame.rematch_game = game.rematch;
    if (game.status === 'playing' && pos.turn === game.you) frame.legal = pos.legal;
    if (id != null) frame.id = id;
    return frame;
  }

  async watch(frame) {
    const game = this.game(frame.game, frame.id);
    if (!game) return;
    this.emit(await this.stateFrame(game, frame.id));
  }

  /** Plays `uci` for whoever is to move, emitting the move and, if it ends the game, the end. */
  async play(game, uci, id) {
    const after = await this.position(game, [...game.moves, uci]).catch(() => null);
    if (!after) return false;
    // In fog of war the computer's moves show only as "a move was played".
    const seen = game.variant !== 'fog' || turnOf(game) === game.you;
    game.moves.push(uci);
    game.v += 1;
    if (after.outcome) {
      game.status = 'ended'; game.result = after.outcome.result; game.reason = after.outcome.reason;
    }
    this.store(game);
    const frame = {
      t: 'move', game: game.id, v: game.v, ply: game.moves.length - 1, uci: seen ? uci : null,
      fen: after.fen, clock: null,
    };
    if (seen) frame.san = after.san[after.san.length - 1];
    if (after.exploded.length) frame.exploded = after.exploded;
    if (after.visible) frame.visible = after.visible;
    if (after.lost && after.lost.length) frame.lost = after.lost;
    if (!after.outcome && after.turn === game.you) frame.legal = after.legal;
    if (id != null) frame.id = id;
    this.emit(frame);
    if (after.outcome) this.emitEnd(game, after.fen);
    return true;
  }

  emitEnd(game, fen, id = null) {
    game.v += 1;
    this.store(game);
    const frame = {
      t: 'end', game: game.id, v: game.v, result: game.result, reason: game.reason,
      moves: game.moves.slice(), fen, clock: null,
    };
    if (id != null) frame.id = id;
    this.emit(frame);
  }

  async move(frame) {
    const game = this.game(frame.game, frame.id);
    if (!game) return;
    const uci = String(frame.uci || '');
    if (frame.ply < game.moves.length && game.moves[frame.ply] === uci) return; // already played
    if (frame.ply !== game.moves.length) {
      this.emit(error('stale_ply', `the game is at ply ${game.moves.length}, not ${frame.ply}`, frame.id)); return;
    }
    if (game.status !== 'playing') { this.emit(error('game_over', 'the game has ended', frame.id)); return; }
    if (turnOf(game) !== game.you) { this.emit(error('not_your_turn', 'it is not your turn', frame.id)); return; }
    if (!(await this.play(game, uci, frame.id))) {
      this.emit(error('illegal_move', `${uci} is not a legal move here`, frame.id)); return;
    }
    if (game.status === 'playing') this.enqueue(game.id, () => this.computerMoves(game.id));
  }

  async computerMoves(id) {
    const game = loadGames()[id];
    if (!game || game.status !== 'playing' || turnOf(game) === game.you) return;
    const generation = this.generation.get(id) || 0;
    const answer = await engine().call({
      op: 'best', ...startOf(game), moves: game.moves, level: game.level,
      seed: game.seed + game.moves.length,
    });
    const now = loadGames()[id];
    // Taken back, resigned or replaced while it thought: the answer is stale.
    if (!answer.ok || (this.generation.get(id) || 0) !== generation || !now || now.moves.length !== game.moves.length) return;
    await this.play(now, answer.uci, null);
  }

  async finish(frame, reason) {
    const game = this.game(frame.game, frame.id);
    if (!game) return;
    if (game.status !== 'playing') { this.emit(error('game_over', 'the game has ended', frame.id)); return; }
    if (reason === 'aborted' && game.moves.length >= 2) {
      this.emit(error('conflict', 'both sides have moved: resign instead', frame.id)); return;
    }
    this.generation.set(game.id, (this.generation.get(game.id) || 0) + 1);
    game.status = 'ended';
    game.reason = reason;
    game.result = reason === 'aborted' ? '*' : game.you === 'white' ? '0-1' : '1-0';
    const pos = await this.position(game);
    this.emitEnd(game, pos.fen, frame.id);
  }

  async takeback(frame) {
    const game = this.game(frame.game, frame.id);
    if (!game) return;
    if (frame.action !== 'request') { this.emit(error('conflict', 'the computer never asks for a takeback', frame.id)); return; }
    if (game.status !== 'playing') { this.emit(error('game_over', 'the game has ended', frame.id)); return; }
    if (game.variant === 'fog') { this.emit(error('not_allowed', 'fog of war has no takebacks: taking a move back would show what the fog hid', frame.id)); return; }
    // Undo the computer's reply (if it came) and your last move.
    const yourMoves = game.moves.filter((_, ply) => (ply % 2 === 0) === (game.you === 'white'));
    if (!yourMoves.length) { this.emit(error('conflict', 'you have no move to take back', frame.id)); return; }
    this.generation.set(game.id, (this.generation.get(game.id) || 0) + 1);
    let keep = game.moves.length;
    do { keep -= 1; } while (keep > 0 && ((keep % 2 === 0) !== (game.you === 'white')));
    game.moves = game.moves.slice(0, keep);
    const computerColor = game.you === 'white' ? 'black' : 'white';
    game.v += 1;
    this.emit({ t: 'takeback', game: game.id, v: game.v, action: 'request', by: game.you, id: frame.id });
    game.v += 1;
    this.emit({ t: 'takeback', game: game.id, v: game.v, action: 'accept', by: computerColor });
    game.v += 1;
    this.store(game);
    this.emit(await this.stateFrame(game));
  }

  async draw(frame) {
    const game = this.game(frame.game, frame.id);
    if (!game) return;
    if (game.status !== 'playing') { this.emit(error('game_over', 'the game has ended', frame.id)); return; }
    if (frame.action !== 'offer') { this.emit(error('conflict', 'the computer offers no draws', frame.id)); return; }
    // As the server: the computer plays every game out.
    this.emit(error('conflict', 'the computer plays every game out: play on, or resign', frame.id));
  }

  async rematch(frame) {
    const old = this.game(frame.game, frame.id);
    if (!old) return;
    if (old.status !== 'ended') { this.emit(error('conflict', 'the game has not ended', frame.id)); return; }
    if (!old.rematch) {
      const you = old.you === 'white' ? 'black' : 'white';
      // As on the server, a Chess960 rematch starts from a new start of its own.
      const game = await newGame(old.variant, you, old.level, !!old.chess960);
      this.store(game);
      old.rematch = game.id;
      old.v += 1;
      this.store(old);
      if (you === 'black') this.enqueue(game.id, () => this.computerMoves(game.id));
    }
    this.emit({ t: 'rematch', game: old.id, v: old.v, by: old.you, new_game: old.rematch, id: frame.id });
  }

  /** The finished (or unfinished) game as PGN text. */
  async pgn(id) {
    const game = loadGames()[id];
    if (!game) throw new Error(`no offline game ${id}`);
    const computer = `Computer (${level(game)})`;
    const you = (this.opts.name && this.opts.name()) || 'You';
    const answer = await engine().call({
      op: 'pgn', ...startOf(game), moves: game.moves, result: game.result || '*',
      white: game.you === 'white' ? you : computer, black: game.you === 'white' ? computer : you,
      started_at_ms: game.started,
    });
    if (!answer.ok) throw new Error(answer.error);
    return answer.pgn;
  }
}

/** A game just started, white to move: from the usual start, or from one of Chess960's 960 drawn at random. */
async function newGame(variant, you, level, chess960 = false) {
  const game = {
    id: OFFLINE_PREFIX + Math.random().toString(36).slice(2, 12),
    variant, you, level, v: 1, moves: [], status: 'playing', result: null, reason: null,
    seed: Math.floor(Math.random() * 2 ** 31), started: Date.now(),
  };
  if (chess960) {
    const start = await engine().call({ op: 'chess960', variant, number: Math.floor(Math.random() * 960) });
    if (!start.ok) throw new Error(start.error);
    game.chess960 = true;
    game.initial_fen = start.fen;
  }
  return game;
}

/** What the rules module needs to know of a game's start. */
function startOf(game) {
  return { variant: game.variant, initial_fen: game.initial_fen || '', chess960: !!game.chess960 };
}

function level(game) { return LEVEL_NAME[game.level].toLowerCase(); }

function turnOf(game) {
  return game.moves.length % 2 === 0 ? 'white' : 'black';
}
