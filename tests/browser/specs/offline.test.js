// Offline play against the computer: after one visit the page opens with the
// network gone (its service worker keeps every file), plays an atomic game
// against the engine compiled to WebAssembly in a worker, saves the game
// after every move so a reload resumes it exactly, undoes a move and the
// computer's reply, plays to the end and offers the game as PGN. The server
// is stopped and the browser is offline for the whole game. Fog of war
// offline shows only what the player sees; Chess960 offline starts from a
// 960 start the page draws, castles by dragging the king onto its rook, and
// keeps its start over a reload and in its PGN.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../lib/server.js';
import { Player, launch, withShots, confirmClick } from '../lib/player.js';
import { REPO } from '../lib/paths.js';
import { isChess960Start, parseFen } from '../lib/chess.js';

let server;
let browser;
const players = [];
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The engine the page runs, fetched from `url` and loaded here too to know the legal moves of each position. */
async function loadEngine(url) {
  const bytes = new Uint8Array(await (await fetch(`${url}/assets/offline/fogblast.wasm`)).arrayBuffer());
  const source = readFileSync(join(REPO, 'crates/wasm/js/fogblast-wasm.js'), 'utf8');
  const module = await import(`data:text/javascript,${encodeURIComponent(source)}`);
  return module.loadEngine(bytes, () => performance.now());
}

/** Starts an offline game as white against the easy computer, from the home page's form. */
async function startOffline(p, variant, { chess960 = false } = {}) {
  await p.choose('computer-variant', variant);
  await p.choose('computer-color', 'white');
  await p.choose('computer-level', 'easy');
  await p.el('computer-offline').check();
  if (chess960) await p.el('computer-chess960').check();
  await p.el('computer-start').click();
  await p.el('game').waitFor();
  await p.board().waitFor();
}

/** The offline game the page keeps in localStorage. */
async function storedGame(p) {
  return p.page.evaluate(() => {
    const games = JSON.parse(localStorage.getItem('fogblast.offline.games') || '{}');
    const id = new URLSearchParams(location.hash.slice(1)).get('game');
    return id ? games[id] || null : null;
  });
}

/** The move list's texts, in order. */
async function moveList(p) {
  return p.page.locator('[data-testid="moves"] [data-ply]').allTextContents().then((texts) => texts.map((t) => t.trim()));
}

/** Waits until the number of stored moves satisfies `wanted`. */
async function storedMoves(p, wanted) {
  for (let i = 0; i < 400; i++) {
    const game = await storedGame(p);
    if (game && wanted(game.moves.length)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the stored game never reached the expected number of moves');
}

/** Plays `uci` by clicking the piece, then its hinted square, and waits for it to be stored after `ply` moves. */
async function clickMove(p, uci, ply) {
  await p.square(uci.slice(0, 2)).click();
  await p.page.waitForSelector(`[data-testid="board"] .square.hint[data-square="${uci.slice(2, 4)}"]`, { timeout: 5000 });
  await p.square(uci.slice(2, 4)).click();
  if (uci.length === 5) await p.page.locator(`[data-testid="promotion"] button[data-role="${uci[4]}"]`).click();
  await storedMoves(p, (moves) => moves > ply);
}

async function piecesOnBoard(p) {
  const board = await p.readBoard();
  return Object.fromEntries(Object.entries(board).filter(([, s]) => s.piece).map(([sq, s]) => [sq, s.piece]));
}

/**
 * The board once it no longer shows `pieces` (the game's store is written
 * before the board is drawn again), or as it stands after 10 s.
 */
async function boardOtherThan(p, pieces) {
  let now = await piecesOnBoard(p);
  for (let i = 0; i < 200 && JSON.stringify(now) === JSON.stringify(pieces); i++) {
    await new Promise((r) => setTimeout(r, 50));
    now = await piecesOnBoard(p);
  }
  return now;
}

/** Waits until it is the player's move (returns the game) or the game ended. */
async function myTurn(p) {
  for (let i = 0; i < 600; i++) {
    const game = await storedGame(p);
    if (game && (game.status === 'ended' || (game.moves.length % 2 === 0) === (game.you === 'white'))) return game;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the computer never answered');
}

test('an offline game against the computer: no network, reload, undo, to the end, PGN', { timeout: 150_000 }, async () => {
  const p = await Player.open(browser, 'offline', server.url);
  players.push(p);
  await withShots('offline', () => players, server, async () => {
    // The first visit installs the service worker; once it controls the page its files are kept.
    await p.page.evaluate(() => navigator.serviceWorker.ready);
    await p.page.reload();
    await p.page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    const engine = await loadEngine(server.url);

    // The network goes: the server stops and the browser is offline.
    await server.stop();
    server = null;
    await p.context.setOffline(true);

    // Every request the page makes from here on: the online page may still
    // have asked about its own player before the network went.
    const requested = [];
    p.page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    await p.page.reload();
    await p.el('home').waitFor();
    await p.shot('offline-home');

    await startOffline(p, 'atomic');
    // The player is "You", not "You (you)"; the computer is named.
    await p.page.waitForFunction(() => [...document.querySelectorAll('.player-name')].some((e) => e.textContent.trim()));
    const names = (await p.page.locator('.player-name').allTextContents()).map((t) => t.trim()).filter(Boolean);
    assert.ok(names.includes('You'), `the player's label: ${JSON.stringify(names)}`);
    assert.ok(names.every((n) => n.toLowerCase() !== 'you (you)'), `a label reads ${JSON.stringify(names)}`);

    let reloaded = false;
    let undone = false;
    for (let turn = 0; turn < 120; turn++) {
      const game = await myTurn(p);
      if (game.status === 'ended') break;
      const position = engine.call({ op: 'position', variant: 'atomic', moves: game.moves });
      assert.ok(position.ok, JSON.stringify(position));
      assert.equal(position.turn, 'white');

      if (undone && !reloaded && game.moves.length >= 2) {
        // A reload mid-game, still offline: the same position, white to move.
        reloaded = true;
        const pieces = await piecesOnBoard(p);
        await p.page.reload();
        await p.board().waitFor();
        await p.page.waitForFunction((n) => document.querySelectorAll('[data-testid="board"] .piece').length === n, Object.keys(pieces).length);
        assert.deepEqual(await piecesOnBoard(p), pieces, 'the board after the reload');
        assert.deepEqual((await storedGame(p)).moves, game.moves, 'the same game after the reload');
        await p.shot('offline-reloaded');
      }
      if (!undone && game.moves.length >= 2) {
        // Undo takes back our move and the computer's reply.
        undone = true;
        const pieces = await piecesOnBoard(p);
        await p.el('takeback').click();
        await storedMoves(p, (moves) => moves === game.moves.length - 2);
        assert.notDeepEqual(await boardOtherThan(p, pieces), pieces, 'the board went back');
        continue;
      }

      // Our side plays the engine's Medium move (the computer is Easy), so
      // the game lasts, and ends in one side's explosion.
      const best = engine.call({ op: 'best', variant: 'atomic', moves: game.moves, level: 'medium', seed: turn });
      assert.ok(best.ok && position.legal.includes(best.uci), JSON.stringify(best));
      const uci = best.uci;
      await clickMove(p, uci, game.moves.length);
    }

    let game = await storedGame(p);
    if (game.status !== 'ended') {
      await confirmClick(p, 'resign');
      await p.page.waitForFunction(() => document.querySelector('[data-testid="result"]')?.textContent.trim());
      game = await storedGame(p);
    }
    assert.equal(game.status, 'ended');
    assert.ok(['1-0', '0-1', '1/2-1/2'].includes(game.result), game.result);
    assert.ok(reloaded && undone, 'the game lasted long enough to reload and undo');
    const final = engine.call({ op: 'position', variant: 'atomic', moves: game.moves });
    assert.ok(final.ok, 'every stored move is legal');
    if (game.reason !== 'resign') assert.equal(final.outcome.result, game.result, 'the rules agree with the result');
    // The list names every move as the rules do (the moves before the reload
    // were named by the page itself), and the ending move keeps its mark.
    assert.deepEqual(await moveList(p), final.san, 'the move list is the rules\' SAN');
    if (['explosion', 'checkmate'].includes(game.reason)) assert.match(final.san[final.san.length - 1], /#$/);
    await p.el('result').waitFor();
    assert.ok((await p.el('result').textContent()).trim().length > 0);

    const href = await p.page.waitForFunction(() => {
      const a = document.querySelector('[data-testid="pgn-link"]');
      return a && !a.hidden && a.href.startsWith('data:') ? a.href : null;
    }).then((h) => h.jsonValue());
    const pgn = decodeURIComponent(href.slice(href.indexOf(',') + 1));
    assert.match(pgn, /\[Variant "Atomic"\]/);
    assert.match(pgn, new RegExp(`\\[Result "${game.result.replace('/', '\\/')}"\\]`));
    assert.deepEqual(p.errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|WebSocket|Failed to load resource/.test(e)), [], 'no page errors');
    await p.shot('offline-end');

    // Home again: the "you" panel asks the archive nothing about the
    // offline player, which only this browser knows.
    await p.el('new-game').click();
    await p.el('home').waitFor();
    // The panel fills once the page hears from its connection.
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(requested.filter((path) => path.startsWith('/api/players/')), [], 'requests about the offline player');
  });
});

test('an offline fog-of-war game shows only what the player sees, and the fog lifts at the end', { timeout: 120_000 }, async () => {
  const local = await startServer();
  const p = await Player.open(browser, 'offline-fog', local.url);
  players.push(p);
  await withShots('offline-fog', () => [p], local, async () => {
    const engine = await loadEngine(local.url);
    await startOffline(p, 'fog');
    // The server plays no part: stop it.
    await local.stop();

    for (let turn = 0; turn < 8; turn++) {
      const game = await myTurn(p);
      if (game.status === 'ended') break;
      const view = engine.call({ op: 'position', variant: 'fog', moves: game.moves, view: 'white' });
      assert.ok(view.ok, JSON.stringify(view));
      const visible = new Set(view.visible);
      await p.page.waitForFunction((n) => document.querySelectorAll('[data-testid="board"] .square.fog').length === n, 64 - visible.size);
      for (const [sq, s] of Object.entries(await p.readBoard())) {
        if (s.piece && s.piece[0] === 'b') assert.ok(visible.has(sq), `a black piece drawn on hidden ${sq}`);
        assert.equal(s.classes.includes('fog'), !visible.has(sq), `fog on ${sq}`);
      }
      const best = engine.call({ op: 'best', variant: 'fog', moves: game.moves, level: 'medium', seed: turn });
      assert.ok(best.ok && view.legal.includes(best.uci), JSON.stringify(best));
      await clickMove(p, best.uci, game.moves.length);
    }
    await myTurn(p);
    await p.shot('offline-fog-playing');
    let game = await storedGame(p);
    if (game.status !== 'ended') {
      await confirmClick(p, 'resign');
      await p.page.waitForFunction(() => document.querySelector('[data-testid="result"]')?.textContent.trim());
      game = await storedGame(p);
    }
    // The fog lifts: every piece of the final position is drawn.
    const whole = engine.call({ op: 'position', variant: 'fog', moves: game.moves, view: 'all' });
    await p.page.waitForFunction(() => !document.querySelector('[data-testid="board"] .square.fog'));
    const drawn = await piecesOnBoard(p);
    const placement = whole.fen.split(' ')[0];
    let count = 0;
    for (const c of placement) if (/[a-zA-Z]/.test(c)) count += 1;
    assert.equal(Object.keys(drawn).length, count, 'every piece shows once the fog lifts');
    assert.deepEqual(await moveList(p), whole.san, 'once the fog lifts, every move is named as the rules name it');
    await p.shot('offline-fog-end');
  });
});

test('an offline Chess960 game: a 960 start, castling king onto rook, kept over a reload and in the PGN', { timeout: 150_000 }, async () => {
  const local = await startServer();
  const p = await Player.open(browser, 'offline-960', local.url);
  players.push(p);
  // The page's random numbers, fixed: the same start and the same computer moves on every run.
  await p.page.addInitScript(() => {
    let s = 20261203;
    Math.random = () => (s = (s * 16807) % 2147483647) / 2147483647;
  });
  await withShots('offline-960', () => [p], local, async () => {
    await p.page.reload();
    const engine = await loadEngine(local.url);
    await startOffline(p, 'standard', { chess960: true });
    await local.stop();

    const started = await storedGame(p);
    assert.equal(started.chess960, true, 'the stored game is a Chess960 game');
    assert.ok(isChess960Start(started.initial_fen), `a 960 start: ${started.initial_fen}`);
    assert.notEqual(started.initial_fen.split(' ')[0].split('/')[7], 'RNBQKBNR', 'not the usual start');
    const start = parseFen(started.initial_fen);
    await p.page.waitForFunction((n) => document.querySelectorAll('[data-testid="board"] .piece').length === n, 32);
    assert.deepEqual(await piecesOnBoard(p), start, 'the board shows the 960 start');

    const spec = (moves) => ({ variant: 'standard', initial_fen: started.initial_fen, chess960: true, moves });
    let castled = null;
    let castlePly = -1;
    for (let turn = 0; turn < 20 && !castled; turn++) {
      const game = await myTurn(p);
      if (game.status === 'ended') break;
      const position = engine.call({ op: 'position', ...spec(game.moves) });
      assert.ok(position.ok, JSON.stringify(position));
      const board = parseFen(position.fen);
      const king = Object.keys(board).find((sq) => board[sq] === 'wk');
      const castle = position.legal.find((m) => m.startsWith(king) && board[m.slice(2, 4)] === 'wr');
      if (castle) {
        // Castling is dragging the king onto its own rook.
        await p.dragSquares(castle.slice(0, 2), castle.slice(2, 4));
        await storedMoves(p, (moves) => moves > game.moves.length);
        castled = castle;
        castlePly = game.moves.length;
        break;
      }
      // Clear the back rank between king and rooks: a piece off it that is neither, else a pawn.
      const develop = position.legal.find((m) => m[1] === '1' && m[3] !== '1' && !['wk', 'wr'].includes(board[m.slice(0, 2)]));
      const pawn = position.legal.find((m) => board[m.slice(0, 2)] === 'wp' && !board[m.slice(2, 4)]);
      await clickMove(p, develop || pawn || position.legal[0], game.moves.length);
    }
    assert.ok(castled, 'the game reached castling');
    const game = await storedGame(p);
    assert.equal(game.moves[castlePly], castled, 'the stored move is the king-takes-rook castling');
    const after = engine.call({ op: 'position', ...spec(game.moves.slice(0, castlePly + 1)) });
    const kingside = castled.charCodeAt(2) > castled.charCodeAt(0);
    const placed = parseFen(after.fen);
    assert.equal(placed[kingside ? 'g1' : 'c1'], 'wk', `castled ${castled}: the king's square`);
    assert.equal(placed[kingside ? 'f1' : 'd1'], 'wr', `castled ${castled}: the rook's square`);
    await myTurn(p);
    await p.shot('offline-960-castled');

    // A reload keeps the game, its start and its moves.
    const now = await storedGame(p);
    const pieces = await piecesOnBoard(p);
    await p.page.reload();
    await p.board().waitFor();
    await p.page.waitForFunction((n) => document.querySelectorAll('[data-testid="board"] .piece').length === n, Object.keys(pieces).length);
    assert.deepEqual(await piecesOnBoard(p), pieces, 'the board after the reload');
    assert.deepEqual(parseFen(engine.call({ op: 'position', ...spec(now.moves) }).fen), pieces, 'the board is the game replayed from its 960 start');

    // The PGN names the variant and carries the start.
    await confirmClick(p, 'resign');
    const href = await p.page.waitForFunction(() => {
      const a = document.querySelector('[data-testid="pgn-link"]');
      return a && !a.hidden && a.href.startsWith('data:') ? a.href : null;
    }).then((h) => h.jsonValue());
    const pgn = decodeURIComponent(href.slice(href.indexOf(',') + 1));
    assert.match(pgn, /\[Variant "Chess960"\]/);
    assert.ok(pgn.includes(`[FEN "${started.initial_fen}"]`), pgn);
  });
});
