// A player in a browser: one context (its own cookies and storage, so its own
// identity), one page, and every WebSocket frame that page sends and
// receives, parsed. The frames are the protocol's truth (docs/protocol.md):
// the tests read whose turn it is and which moves are legal from them, and
// act and check only through the page's DOM (the data-testid contract).

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, SCREENSHOTS } from './paths.js';
import { parseFen, squareDistance } from './chess.js';

export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu',
      // A page answered from FOGBLAST_WEB_DIR (below) counts as public: let it reach the loopback server.
      ...(process.env.FOGBLAST_WEB_DIR ? ['--disable-features=LocalNetworkAccessChecks'] : []),
    ],
  });
}

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.html': 'text/html', '.svg': 'image/svg+xml' };

/**
 * For working on the page without rebuilding the binary that embeds it:
 * with FOGBLAST_WEB_DIR set (to services/gateway/web), the page and its
 * files are read from that folder where it has them (the rest, such as the
 * rules module's .wasm, still come from the server), and the service
 * worker is kept out of the way. The suite's real run leaves it unset.
 */
async function servePageFrom(context, dir) {
  await context.route(
    (url) => url.pathname === '/' || url.pathname.startsWith('/g/') || url.pathname.startsWith('/assets/'),
    async (route) => {
      const path = new URL(route.request().url()).pathname;
      const rel = path.startsWith('/assets/') ? normalize(path.slice('/assets/'.length)) : 'index.html';
      const file = join(dir, rel);
      if (rel.startsWith('..') || !existsSync(file) || !TYPES[extname(file)]) return route.fallback();
      await route.fulfill({ status: 200, headers: { 'content-type': TYPES[extname(file)], 'cache-control': 'no-cache' }, body: readFileSync(file) });
    },
  );
}

const T = (id) => `[data-testid="${id}"]`;
export { T };

export class Player {
  constructor(name, context, page, baseUrl) {
    this.name = name;
    this.context = context;
    this.page = page;
    this.baseUrl = baseUrl;
    /** Every frame received, in order: parsed JSON objects. */
    this.received = [];
    /** Every frame sent. */
    this.sent = [];
    this.errors = [];
    /**
     * The seat whose frames view() reads, on a page that holds both seats
     * (a same-device game opens one socket per seat); null reads every frame.
     */
    this.seat = null;
    let sockets = 0;
    page.on('websocket', (ws) => {
      const socket = ++sockets;
      ws.on('framereceived', ({ payload }) => this.#record(this.received, payload, socket));
      ws.on('framesent', ({ payload }) => this.#record(this.sent, payload, socket));
    });
    page.on('pageerror', (e) => this.errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') this.errors.push(m.text());
    });
  }

  #record(list, payload, socket) {
    if (typeof payload !== 'string') return;
    let frame;
    try {
      frame = JSON.parse(payload);
    } catch {
      frame = null;
    }
    if (!frame || typeof frame !== 'object') frame = { t: '?', raw: payload };
    // Which of the page's sockets it came by (not a protocol field).
    Object.defineProperty(frame, 'socket', { value: socket, enumerable: false });
    list.push(frame);
  }

  /** The frames view() reads: all of them, or those of the sockets holding `this.seat`. */
  seatFrames() {
    if (!this.seat) return this.received;
    const seatOf = new Map();
    for (const f of this.received) {
      if (f.t === 'created' || f.t === 'joined') seatOf.set(f.socket, f.color);
      if (f.t === 'state' && f.you) seatOf.set(f.socket, f.you);
    }
    return this.received.filter((f) => seatOf.get(f.socket) === this.seat);
  }

  /** `contextOptions` adds to the browser context's (say `hasTouch: true` for a touch screen). */
  static async open(browser, name, baseUrl, path = '/', contextOptions = {}) {
    const webDir = process.env.FOGBLAST_WEB_DIR;
    const context = await browser.newContext({
      viewport: { width: 1100, height: 900 },
      ...(webDir ? { serviceWorkers: 'block' } : {}),
      ...contextOptions,
    });
    if (webDir) await servePageFrom(context, webDir);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const player = new Player(name, context, page, baseUrl);
    await page.goto(new URL(path, baseUrl).href);
    return player;
  }

  el(id) {
    return this.page.locator(T(id));
  }

  async shot(label) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const file = join(SCREENSHOTS, `${label}-${this.name}.png`.replace(/[^A-Za-z0-9._-]+/g, '_'));
    await this.page.screenshot({ path: file, fullPage: true }).catch(() => {});
    return file;
  }

  /**
   * Screenshots of the page at the two sizes the docs list, 1280×900 and
   * 390×844, as `<label>-<w>x<h>.png`: the whole page, or only the viewport
   * (`fullPage: false`, for an overlay); the viewport is put back.
   */
  async shotSizes(label, { fullPage = true } = {}) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const before = this.page.viewportSize();
    const files = [];
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      await this.page.setViewportSize({ width, height });
      await this.page.waitForTimeout(150);
      const file = join(SCREENSHOTS, `${label}-${width}x${height}.png`.replace(/[^A-Za-z0-9._-]+/g, '_'));
      await this.page.screenshot({ path: file, fullPage });
      files.push(file);
    }
    if (before) await this.page.setViewportSize(before);
    return files;
  }

  /** Sets a home-page option: a <select>, a radio/button group, or an input. */
  async choose(id, value) {
    const el = this.el(id);
    await el.waitFor();
    const tag = await el.evaluate((e) => e.tagName.toLowerCase());
    if (tag === 'select') {
      await el.selectOption(String(value));
    } else if (tag === 'input' || tag === 'textarea') {
      await el.fill(String(value));
    } else {
      await el
        .locator(`[value="${value}"], [data-value="${value}"]`)
        .first()
        .click();
    }
  }

  // -- frames ----------------------------------------------------------------

  /** The game frames (state, move, seated, end) received, for `game` when given. */
  gameFrames(game) {
    return this.received.filter((f) => ['state', 'move', 'seated', 'end'].includes(f.t) && (!game || f.game === game));
  }

  /** The id of the game this page plays: from the last created/joined/state frame. */
  currentGame() {
    for (let i = this.received.length - 1; i >= 0; i--) {
      const f = this.received[i];
      if (['created', 'joined', 'state'].includes(f.t) && f.game) return f.game;
    }
    return null;
  }

  /** Where the game stands, as the frames tell: ply, fen, legal moves, color, end. */
  view() {
    const game = this.currentGame();
    let ply = 0;
    let fen = null;
    let legal = null;
    let you = null;
    let end = null;
    let visible = null;
    for (const f of this.seatFrames()) {
      if (f.game !== game) continue;
      if (f.t === 'created' || f.t === 'joined') you = f.color;
      if (f.t === 'state') {
        you = f.you;
        ply = f.moves.length;
        fen = f.fen;
        legal = f.legal || null;
        visible = f.visible || null;
        end = f.status === 'ended' ? f : null;
      } else if (f.t === 'move') {
        ply = f.ply + 1;
        fen = f.fen;
        legal = f.legal || null;
        if (f.visible) visible = f.visible;
      } else if (f.t === 'seated') {
        legal = f.legal || legal;
      } else if (f.t === 'end') {
        end = f;
        fen = f.fen;
        legal = null;
      }
    }
    return { game, ply, fen, legal, you, end, visible };
  }

  async waitFor(predicate, what, timeout = 15_000) {
    const start = Date.now();
    for (;;) {
      const v = predicate();
      if (v) return v;
      if (Date.now() - start > timeout) throw new Error(`${this.name}: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Waits until this player is to move (returns the view) or the game ended (returns null). */
  async waitTurn(timeout = 20_000) {
    const v = await this.waitFor(
      () => {
        const v = this.view();
        if (v.end) return { ended: true };
        if (v.legal && v.legal.length) return v;
        return null;
      },
      'its turn or the end',
      timeout,
    );
    return v.ended ? null : v;
  }

  async waitEnd(timeout = 20_000) {
    return this.waitFor(() => this.view().end, 'the end of the game', timeout);
  }

  // -- the board -------------------------------------------------------------

  board() {
    return this.page.locator(T('board'));
  }

  square(sq) {
    return this.page.locator(`${T('board')} .square[data-square="${sq}"]`);
  }

  /** The board as drawn: square -> {piece: 'wn' | null, classes}. */
  async readBoard() {
    return this.page.$$eval(`${T('board')} .square`, (els) =>
      Object.fromEntries(
        els.map((e) => {
          const p = e.querySelector('.piece');
          let piece = null;
          if (p) {
            const c = (p.dataset.color || '?')[0].toLowerCase();
            const r = (p.dataset.role || '?').toLowerCase();
            piece = c + (r === 'knight' ? 'n' : r[0]);
          }
          return [e.dataset.square, { piece, classes: [...e.classList] }];
        }),
      ),
    );
  }

  /** Squares with a .hint mark. */
  async hints() {
    return this.page.$$eval(`${T('board')} .square.hint`, (els) => els.map((e) => e.dataset.square).sort());
  }

  /**
   * Clicks square `sq` the way a person does. On the flat board: its middle.
   * On the 3D board, where pieces stand over the squares behind them: the
   * middle of the picture of the piece on it, or for an empty square the
   * point nearest its middle where the square itself shows.
   */
  async clickSquare(sq) {
    const point = await this.page.evaluate(([sel, sq]) => {
      const board = document.querySelector(sel);
      if (board.dataset.mode !== '3d') return null;
      const square = board.querySelector(`[data-square="${sq}"]`);
      const svg = square.querySelector('.piece svg');
      if (svg) {
        const r = svg.getBoundingClientRect();
        return [r.x + r.width / 2, r.y + r.height / 2];
      }
      const r = square.getBoundingClientRect();
      let best = null;
      for (let i = 1; i < 16; i++) {
        for (let j = 1; j < 16; j++) {
          const x = r.x + (r.width * i) / 16, y = r.y + (r.height * j) / 16;
          const d = Math.hypot(x - r.x - r.width / 2, y - r.y - r.height / 2);
          if (document.elementFromPoint(x, y) === square && (!best || d < best[2])) best = [x, y, d];
        }
      }
      return best ? best.slice(0, 2) : [r.x + r.width / 2, r.y + r.height / 2];
    }, [T('board'), sq]);
    if (point) await this.page.mouse.click(point[0], point[1]);
    else await this.square(sq).click();
  }

  /**
   * Plays `uci` the way a person does: click the piece, check that the hints
   * are exactly the legal destinations of that piece, click the destination,
   * pick a queen when asked, and wait for the server's move frame.
   */
  async play(uci, legal) {
    const from = uci.slice(0, 2);
    const to = uci.slice(2, 4);
    const before = this.view().ply;
    await this.clickSquare(from);
    const expected = [...new Set(legal.filter((m) => m.startsWith(from)).map((m) => m.slice(2, 4)))].sort();
    try {
      await this.page.waitForFunction(
        ([sel, n]) => document.querySelectorAll(sel).length >= n,
        [`${T('board')} .square.hint`, expected.length],
        { timeout: 5000 },
      );
    } catch {
      // compared below
    }
    const shown = await this.hints();
    // Every legal destination is hinted, and nothing else: a king may also
    // hint its own rook's square as the way to castle.
    const board = parseFen(this.view().fen);
    const extra = shown.filter((sq) => !expected.includes(sq));
    const castleOntoRook = (sq) => board[from]?.[1] === 'k' && board[sq] === board[from][0] + 'r' && sq[1] === from[1];
    const missing = expected.filter((sq) => !shown.includes(sq));
    if (missing.length || !extra.every(castleOntoRook)) {
      throw new Error(`${this.name}: hints after clicking ${from} are [${shown}], the legal destinations are [${expected}]`);
    }
    await this.clickSquare(to);
    if (uci.length === 5) {
      const button = this.page.locator(`${T('promotion')} button[data-role="${uci[4]}"]`);
      await button.click();
    }
    await this.waitFor(() => this.seatFrames().some((f) => f.t === 'move' && f.ply === before && f.game === this.currentGame()), `the move ${uci} (ply ${before}) to be played`);
    const mine = this.seatFrames().find((f) => f.t === 'move' && f.ply === before && f.game === this.currentGame());
    if (mine.uci !== uci) throw new Error(`${this.name}: clicked ${uci} but the server played ${mine.uci}`);
    return mine;
  }

  /** The middle of square `sq`'s box on screen: [x, y]. */
  async centre(sq) {
    const box = await this.square(sq).boundingBox();
    return [box.x + box.width / 2, box.y + box.height / 2];
  }

  /** Drags the piece on `from` onto `to` with the mouse (nothing is waited for). */
  async dragSquares(from, to) {
    const [fx, fy] = await this.centre(from);
    const [tx, ty] = await this.centre(to);
    await this.page.mouse.move(fx, fy);
    await this.page.mouse.down();
    await this.page.mouse.move(tx, ty, { steps: 12 });
    await this.page.mouse.up();
  }

  /** Plays `uci` by dragging the piece onto its square with the mouse, and waits for the server's move frame. */
  async drag(uci) {
    const before = this.view().ply;
    await this.dragSquares(uci.slice(0, 2), uci.slice(2, 4));
    await this.waitFor(() => this.seatFrames().some((f) => f.t === 'move' && f.ply === before && f.game === this.currentGame()), `the dragged move ${uci} (ply ${before}) to be played`);
    const mine = this.seatFrames().find((f) => f.t === 'move' && f.ply === before && f.game === this.currentGame());
    if (mine.uci !== uci) throw new Error(`${this.name}: dragged ${uci} but the server played ${mine.uci}`);
    return mine;
  }

  /** A move from `legal`: a capture that blows up the enemy king if there is one, else a capture, else any. */
  pickMove(view, rng, { aggressive = true } = {}) {
    const board = parseFen(view.fen);
    const me = view.you[0];
    const them = me === 'w' ? 'b' : 'w';
    const theirKing = Object.keys(board).find((s) => board[s] === them + 'k');
    const captures = view.legal.filter((m) => board[m.slice(2, 4)] && board[m.slice(2, 4)][0] === them);
    if (aggressive && theirKing) {
      const win = captures.filter((m) => squareDistance(m.slice(2, 4), theirKing) <= 1);
      if (win.length) return win[0];
    }
    const pool = aggressive && captures.length ? captures : view.legal;
    // Prefer queen promotions over under-promotions.
    const moves = pool.filter((m) => m.length === 4 || m[4] === 'q');
    const list = moves.length ? moves : pool;
    return list[Math.floor(rng() * list.length)];
  }
}

/** From the home page: a game against the computer; resolves once the board shows. */
export async function startComputer(player, { variant, color, level }) {
  await player.choose('computer-variant', variant);
  await player.choose('computer-color', color);
  await player.choose('computer-level', level);
  await player.el('computer-start').click();
  await player.el('game').waitFor();
  await player.board().waitFor();
  await player.waitFor(() => player.view().fen, 'the game state');
}

/** From the home page: a game for a friend; resolves to the invite link's absolute URL. */
export async function createFriendGame(player, { variant, color, minutes = 0, increment = 0 }) {
  await player.choose('friend-variant', variant);
  await player.choose('friend-color', color);
  await player.choose('friend-minutes', minutes);
  await player.choose('friend-increment', increment);
  await player.el('friend-create').click();
  const link = player.el('invite-link');
  await link.waitFor();
  const href = await link.evaluate((e) => e.getAttribute('href') || e.value || e.textContent || '');
  const url = new URL(href.trim(), player.baseUrl).href;
  if (!/\/g\/[0-9A-Za-z]{8}/.test(url)) throw new Error(`invite-link holds "${href}", not an invite URL (…/g/CODE)`);
  return url;
}

/**
 * Opens an invite link and takes the seat: the invite card's "Join game"
 * (after typing `name` into it, when given), or a join button, or at once.
 */
export async function openInvite(player, url, { name } = {}) {
  await player.page.goto(url);
  const game = player.el('game');
  const card = player.el('invite-join');
  const join = player.el('join-submit');
  await Promise.race([game.waitFor(), card.waitFor(), join.waitFor()]);
  if (await card.isVisible()) {
    if (name != null) await player.el('invite-name').fill(name);
    await card.click();
  } else if (!(await game.isVisible()) && (await join.isVisible())) await join.click();
  await game.waitFor();
  await player.board().waitFor();
}

/** A small seeded random generator, so a failing run can be repeated. */
export function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

/**
 * Runs `body` and saves a screenshot of every player's page afterwards, and
 * the server's last log lines when it fails.
 */
export async function withShots(label, players, server, body) {
  try {
    await body();
    for (const p of players()) await p.shot(`${label}-end`);
  } catch (e) {
    const files = [];
    for (const p of players()) files.push(await p.shot(`${label}-FAILED`));
    const pageErrors = players()
      .flatMap((p) => p.errors.map((x) => `${p.name}: ${x}`))
      .join('\n');
    e.message += `\nscreenshots: ${files.join(', ')}`;
    if (pageErrors) e.message += `\npage errors:\n${pageErrors}`;
    if (server) e.message += `\nserver log (last lines):\n${server.logs(30)}`;
    throw e;
  }
}

/** Clicks a button that asks to be sure (resign, abort): once, then again on its "Confirm …?" label. */
export async function confirmClick(player, id) {
  const button = player.el(id);
  await button.click();
  await player.page.waitForFunction((sel) => /^Confirm/.test(document.querySelector(sel)?.textContent || ''), `[data-testid="${id}"]`);
  await button.click();
}
