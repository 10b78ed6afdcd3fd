// The analysis board (`/#analysis/VARIANT/FEN`): any position, or a
// finished game, explored with the rules module on the main thread and the
// page's own engine (the WebAssembly module offline play uses) in a Web
// Worker of its own. The engine deepens its search one ply at a time and
// shows its score on a bar and as a number, its best line as arrows and as
// moves; playing a move off the line opens a variation beside it (the
// mainline stays), any move of the tree can be clicked, and a variation
// deleted. The address
// bar follows the position, so a reload or a shared link opens it again.
// The logic is js/analysis-board.js's; this file is the screen.

import { Board } from '../board.js';
import { $, notice, showScreen } from '../page.js';
import { blastOf, explore, whyRefused } from '../rules.js';
import { parseFen, rankOf, sq } from '../chess.js';
import { refusalText } from '../text.js';
import {
  ANALYSIS_VARIANTS, analysisHash, analysisVariantOf, backToMainline, barPercent, currentLine, deleteVariation, fenAt, fenBefore, fenMessage,
  firstMoveOf, goTo, leftMainline, lineOfSearch, nodeAt, newTree, numberedLine, outcomeText, pathOfText, pathText, playOn, scoreText, stepLine,
  turnOfFen, whiteScore,
} from '../analysis-board.js';

/** The deepest search asked for; the engine stops sooner once one depth takes this long. */
const MAX_DEPTH = 12;
const DEPTH_BUDGET_MS = 1500;
/** How long a position stays on the board before the engine starts on it. */
const SETTLE_MS = 120;
/** Plies of the best line shown past the best move. */
const LINE_PLIES = 5;

let board = null;
let variant = 'atomic';
/** The tree of variations explored (js/analysis-board.js). */
let line = null;
/** Whether the tree's mainline is a finished game's own moves. */
let fromGame = false;
/** The rules module's answer for the position on the board. */
let here = null;
let flipped = false;
let engineOn = true;
/** Set when the board's keys drive its cursor (not a click): then the arrows move the cursor, not the line. */
let cursorKeys = false;
let onHome = () => {};

const rulesOf = () => ANALYSIS_VARIANTS[variant];

/** The page's engine in a worker of its own; restarted when a deep search is no longer wanted. */
const engine = {
  worker: null,
  next: 0,
  waiting: new Map(),
  busy: 0,
  start() {
    this.worker = new Worker(new URL('../../offline/engine-worker.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = (event) => {
      const resolve = this.waiting.get(event.data.id);
      this.waiting.delete(event.data.id);
      this.busy = this.waiting.size;
      if (resolve) resolve(event.data.answer);
    };
    this.worker.onerror = (event) => this.drop(event.message || 'the engine failed');
  },
  call(request) {
    if (!this.worker) this.start();
    const id = ++this.next;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.busy = this.waiting.size;
      this.worker.postMessage({ id, request });
    });
  },
  drop(reason) {
    for (const [, resolve] of this.waiting) resolve({ ok: false, error: reason });
    this.waiting.clear();
    this.busy = 0;
  },
  /** Stops a search under way (the worker cannot be interrupted: it is replaced). */
  interrupt() {
    if (!this.worker || !this.busy) return;
    this.worker.terminate();
    this.worker = null;
    this.drop('stopped');
  },
};

/** What the engine says of the position on the board: `{fen, depth, white, best: [uci], sans}`, or null. */
let verdict = null;
/** Why the engine gave no verdict (it failed to load or to search), or ''. */
let engineTrouble = '';
let generation = 0;

/** Binds the screen; `home()` goes back to the home screen. */
export function initAnalysisBoard({ home }) {
  onHome = home;
  board = new Board($('analysis-board-wrap'), {
    onMove: (uci) => play(uci),
    onRefused: ({ reason, from, to, role }) => {
      const why = reason || (to ? whyRefused(fenAt(line), rulesOf().rules, `${from}${to}`) : null);
      notice(refusalText(why, { from, to, role }), 'error');
      render();
    },
    onKey: (e) => boardKey(e),
    blastOf: (from, to) => blastAt(from, to),
  });
  // Named apart from the game's board, which the page's tests and keys find by `board`.
  board.el.dataset.testid = 'analysis-board-grid';
  board.picker.dataset.testid = 'analysis-board-promotion';
  board.annotations.el.dataset.testid = 'analysis-board-arrows';
  board.el.addEventListener('pointerdown', () => { cursorKeys = false; });
  $('analysis-board-start').addEventListener('click', () => step('start'));
  $('analysis-board-prev').addEventListener('click', () => step(-1));
  $('analysis-board-next').addEventListener('click', () => step(1));
  $('analysis-board-end').addEventListener('click', () => step('end'));
  $('analysis-board-flip').addEventListener('click', () => { flipped = !flipped; render(); });
  $('analysis-board-home').addEventListener('click', () => { stopThinking(); onHome(); });
  $('analysis-board-engine').addEventListener('change', () => {
    engineOn = $('analysis-board-engine').checked;
    if (!engineOn) engine.interrupt();
    render();
    think();
  });
  $('analysis-board-variant').addEventListener('change', () => {
    const chosen = $('analysis-board-variant').value;
    if (!load(chosen, fenAt(line), [], 0)) $('analysis-board-variant').value = variant;
  });
  $('analysis-board-fen-form').addEventListener('submit', (e) => {
    e.preventDefault();
    load(variant, $('analysis-board-fen').value, [], 0, { fromBox: true });
  });
  $('analysis-board-moves').addEventListener('click', (e) => {
    const remove = e.target.closest('[data-delete]');
    if (remove) {
      line = deleteVariation(line, pathOfText(remove.dataset.delete));
      position();
      return;
    }
    const el = e.target.closest('[data-path]');
    if (el) {
      line = goTo(line, pathOfText(el.dataset.path));
      position();
    }
  });
  $('analysis-board-copy').addEventListener('click', () => copyLink());
  $('analysis-board-game-line').addEventListener('click', () => {
    if (!fromGame) return;
    line = backToMainline(line);
    position();
  });
  document.addEventListener('keydown', pageKey);
  // Back from the board to the plain address (the browser's back button): home.
  window.addEventListener('hashchange', () => {
    if (!$('analysis-board').hidden && !location.hash) { stopThinking(); onHome(); }
  });
}

/**
 * Opens the board (the router's `/#analysis/...`): `fen` in `variant`, or
 * the start; a link with an unknown variant or a bad FEN opens the start
 * and says why.
 */
export function openAnalysisLink({ variant: asked, fen, asked: unknown }) {
  showScreen('analysis');
  if (!asked) {
    load('atomic', null, [], 0);
    showFenError(`There is no variant "${unknown}" on the analysis board: atomic, atomic960, standard, chess960 or fog.`);
    return;
  }
  if (!load(asked, fen, [], 0)) load(asked, null, [], 0, { keepError: true });
}

/**
 * Opens a finished game on the board: its start, every move, the board at
 * ply `at` (the replay's position on screen).
 */
export function openGameAnalysis(model, at) {
  const chosen = analysisVariantOf(model.variant, model.chess960);
  showScreen('analysis');
  // A step of its own in the history, so the back button leaves the board.
  history.pushState(null, '', `/${analysisHash(chosen, model.initialFen)}`);
  if (load(chosen, model.initialFen, model.moves, at ?? model.moves.length)) {
    fromGame = true;
    render();
  }
}

/** Whether a game may be opened on the board: finished, every move known, a variant it explores. */
export function analysable(model) {
  return !!model && model.status === 'ended' && !!analysisVariantOf(model.variant, model.chess960)
    && model.moves.every(Boolean);
}

/**
 * Puts `fen` (null: the variant's start) and `moves` played from it on the
 * board at ply `at`. False, with the reason under the FEN box, when the
 * rules refuse it; nothing changes then.
 */
function load(chosen, fen, moves, at, { fromBox = false, keepError = false } = {}) {
  const rules = ANALYSIS_VARIANTS[chosen];
  const text = (fen || '').trim();
  if (fromBox && !text) {
    showFenError(fenMessage('', null));
    return false;
  }
  const start = explore(text, [], rules.rules, rules.chess960);
  if (start.error) {
    showFenError(text ? fenMessage(text, start.error) : `The analysis board cannot start: ${start.error}.`);
    return false;
  }
  const plies = [];
  let before = start.fen;
  for (const uci of moves) {
    const after = explore(before, [uci], rules.rules, rules.chess960);
    if (after.error) break;
    plies.push({ uci, san: after.san[0] || uci, fen: after.fen, exploded: after.exploded, check: after.check });
    before = after.fen;
  }
  variant = chosen;
  line = newTree(start.fen, plies, at);
  fromGame = false;
  if (!keepError) showFenError('');
  cursorKeys = false;
  position();
  return true;
}

function showFenError(text) {
  const el = $('analysis-board-fen-error');
  el.textContent = text;
  el.hidden = !text;
  $('analysis-board-fen').setAttribute('aria-invalid', String(!!text));
}

/** Plays `uci` where the board stands. */
function play(uci) {
  const rules = rulesOf();
  const after = explore(fenAt(line), [uci], rules.rules, rules.chess960);
  if (after.error) {
    notice(`${uci} cannot be played here: ${after.error}`, 'error');
    render();
    return;
  }
  line = playOn(line, { uci, san: after.san[0] || uci, fen: after.fen, exploded: after.exploded, check: after.check });
  position();
  if (after.exploded.length) setTimeout(() => board.explode(after.exploded), 0);
}

function step(delta) {
  line = stepLine(line, delta);
  position();
}

/** The board moved to another position: ask the rules about it, redraw, follow it in the address bar, think. */
function position() {
  const rules = rulesOf();
  here = explore(fenAt(line), [], rules.rules, rules.chess960);
  verdict = null;
  board.annotations.setEngineLine([]);
  const url = `/${analysisHash(variant, fenAt(line))}`;
  if (location.pathname + location.hash !== url) history.replaceState(null, '', url);
  render();
  think();
}

/** What the capture `from`-`to` would blow up, in atomic chess. */
function blastAt(from, to) {
  if (rulesOf().rules !== 'atomic') return null;
  const fen = fenAt(line);
  const piece = parseFen(fen).board[sq(from)];
  const last = rankOf(sq(to)) === 0 || rankOf(sq(to)) === 7;
  return blastOf(fen, 'atomic', `${from}${to}${piece && piece.r === 'p' && last ? 'q' : ''}`);
}

/** The screen is left: the search under way stops, and no other starts. */
function stopThinking() {
  generation += 1;
  engine.interrupt();
}

/** Searches the position on the board one depth after another while it stays there, on screen, and the engine is on. */
async function think() {
  const mine = ++generation;
  engine.interrupt();
  engineTrouble = '';
  const fen = fenAt(line);
  if (!engineOn || !here || here.error || here.outcome) return;
  // Keys held down step through many positions: only one that stays is searched.
  await new Promise((resolve) => { setTimeout(resolve, SETTLE_MS); });
  if (mine !== generation) return;
  const rules = rulesOf();
  for (let depth = 1; depth <= MAX_DEPTH; depth++) {
    const began = performance.now();
    const answer = await engine.call({ op: 'search', variant: rules.rules, fen, depth });
    if (mine !== generation) return;
    if ($('analysis-board').hidden) { stopThinking(); return; }
    if (!answer.ok) {
      engineTrouble = `The engine stopped: ${answer.error || 'no answer'}.`;
      render();
      break;
    }
    if (!answer.uci) break;
    let best = lineOfSearch(answer, LINE_PLIES + 1);
    if (best.length < 2) best = await bestLine(fen, answer.uci, depth, mine);
    if (mine !== generation) return;
    let shown = explore(fen, best, rules.rules, rules.chess960);
    if (shown.error) {
      best = [answer.uci];
      shown = explore(fen, best, rules.rules, rules.chess960);
    }
    verdict = {
      fen, depth: answer.depth, white: whiteScore(answer.score, turnOfFen(fen)), best,
      sans: shown.error ? best : shown.san,
    };
    render();
    // A mate found is the verdict; a depth that took long enough is the last.
    if (verdict.white.mate != null || performance.now() - began > DEPTH_BUDGET_MS) break;
  }
}

/**
 * The best line after `first`, for a module whose search writes no line:
 * each next move the engine's at a shallower depth, until the line is
 * LINE_PLIES long or the game would be over.
 */
async function bestLine(fen, first, depth, mine) {
  const rules = rulesOf();
  const moves = [first];
  for (let i = 1; i <= LINE_PLIES; i++) {
    const after = explore(fen, moves, rules.rules, rules.chess960);
    if (after.error || after.outcome) break;
    const answer = await engine.call({ op: 'search', variant: rules.rules, fen: after.fen, depth: Math.max(1, depth - i) });
    if (mine !== generation || !answer.ok || !answer.uci) break;
    moves.push(answer.uci);
  }
  return moves;
}

function render() {
  if (!line || !here) return;
  const fen = fenAt(line);
  const { board: cells } = parseFen(fen);
  const turn = turnOfFen(fen);
  const last = line.path.length ? nodeAt(line).ply : null;
  const over = here.error ? null : here.outcome;
  board.setLook('2d', document.body.dataset.theme || 'felt');
  board.setOrientation(flipped ? 'black' : 'white');
  board.show({
    board: cells, fog: null, lost: new Set(), last: last ? [last.uci.slice(0, 2), last.uci.slice(2, 4)] : null,
    check: here.check ? sq(here.check) : -1, movable: over ? null : turn, legal: here.legal || [], variant: rulesOf().rules,
    turn, seat: null, lock: null, marks: null, premove: null, queued: null,
  });
  $('analysis-board').dataset.variant = variant;
  $('analysis-board-variant').value = variant;
  $('analysis-board-status').textContent = over ? outcomeText(over) : `${turn === 'w' ? 'White' : 'Black'} to move.`;
  renderEngine(over);
  renderMoves();
  const fenBox = $('analysis-board-fen');
  if (document.activeElement !== fenBox) fenBox.value = fen;
  $('analysis-board-link').href = `/${analysisHash(variant, fen)}`;
  $('analysis-board-link').textContent = `${location.origin}/${analysisHash(variant, fen)}`;
  const at = line.path.length;
  const length = currentLine(line).length;
  $('analysis-board-start').disabled = at === 0;
  $('analysis-board-prev').disabled = at === 0;
  $('analysis-board-next').disabled = at === length;
  $('analysis-board-end').disabled = at === length;
  $('analysis-board-ply').textContent = `${at} / ${length}`;
  $('analysis-board-game-line').hidden = !(fromGame && leftMainline(line));
}

function renderEngine(over) {
  const v = verdict && verdict.fen === fenAt(line) ? verdict : null;
  const evalEl = $('analysis-board-eval');
  const bar = $('analysis-board-bar');
  let text = '–';
  let percent = 50;
  if (over) {
    text = over.result === '1/2-1/2' ? '½-½' : over.result;
    percent = over.result === '1-0' ? 100 : over.result === '0-1' ? 0 : 50;
  } else if (v) {
    text = scoreText(v.white);
    percent = barPercent(v.white);
  }
  evalEl.textContent = engineOn || over ? text : 'off';
  evalEl.dataset.score = v ? text : '';
  bar.style.setProperty('--white', `${percent.toFixed(1)}%`);
  bar.setAttribute('aria-valuenow', String(Math.round(percent)));
  bar.setAttribute('aria-valuetext', `${text}: white's chances ${Math.round(percent)}%`);
  let depth = '';
  if (engineOn && v) depth = `depth ${v.depth}`;
  else if (engineOn && !over) depth = engineTrouble || 'thinking…';
  $('analysis-board-depth').textContent = depth;
  $('analysis-board-line').textContent = engineOn && v ? numberedLine(v.fen, v.sans) : '';
  board.annotations.setEngineLine(engineOn && v ? v.best.slice(0, 2) : []);
}

/** A move of the tree as a button: `data-path` goes there on a click. */
function moveButton(path, { main }) {
  const node = nodeAt(line, path);
  const move = document.createElement('button');
  move.type = 'button';
  const current = pathText(path) === pathText(line.path);
  move.className = `move ${main ? 'main' : 'variation-move'}${current ? ' current' : ''}`;
  move.dataset.path = pathText(path);
  move.textContent = node.ply.san;
  if (current) move.setAttribute('aria-current', 'step');
  return move;
}

/** The move number before a move of a variation: `3.` for white, `3...` for black when asked. */
function moveNumber(path, always) {
  const { number, black } = firstMoveOf(fenBefore(line, path));
  if (!black) return `${number}.`;
  return always ? `${number}...` : '';
}

/**
 * The variation starting at `path` written inline, lichess's way: its moves
 * numbered, the variations inside it in parentheses after the move they
 * answer.
 */
function appendVariation(el, path) {
  const add = (p, always) => {
    const no = moveNumber(p, always);
    if (no) el.append(`${no} `);
    el.append(moveButton(p, { main: false }), ' ');
  };
  add(path, true);
  let at = path;
  for (let node = nodeAt(line, at); node.children.length; node = node.children[0]) {
    const next = [...at, 0];
    add(next, false);
    node.children.slice(1).forEach((_, k) => {
      el.append('( ');
      appendVariation(el, [...at, k + 1]);
      el.append(') ');
    });
    at = next;
  }
}

/** A variation's row under the mainline move it stands beside, with its delete button. */
function variationRow(path) {
  const row = document.createElement('li');
  row.className = 'variation';
  row.dataset.testid = 'analysis-board-variation';
  appendVariation(row, path);
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.className = 'variation-delete';
  remove.dataset.delete = pathText(path);
  remove.textContent = '×';
  remove.title = 'Delete this variation';
  remove.setAttribute('aria-label', `Delete the variation ${nodeAt(line, path).ply.san}`);
  row.append(remove);
  return row;
}

/** The mainline in numbered rows, each variation in a row of its own after the move it stands beside. */
function renderMoves() {
  const list = $('analysis-board-moves');
  list.textContent = '';
  const { number, black } = firstMoveOf(line.start);
  let row = null;
  let parent = line.root;
  for (let path = [0]; parent.children.length; path = [...path, 0]) {
    const ply = path.length - 1 + (black ? 1 : 0);
    if (!row || ply % 2 === 0) {
      row = document.createElement('li');
      row.className = 'move-row';
      const no = document.createElement('span');
      no.className = 'move-no';
      no.textContent = `${number + Math.floor(ply / 2)}.`;
      row.append(no);
      if (ply % 2 === 1) row.append(document.createElement('span'));
      list.append(row);
    }
    row.append(moveButton(path, { main: true }));
    const siblings = parent.children.length;
    for (let k = 1; k < siblings; k++) list.append(variationRow([...path.slice(0, -1), k]));
    if (siblings > 1) row = null;
    parent = parent.children[0];
  }
  const current = list.querySelector('.current');
  if (current) current.scrollIntoView?.({ block: 'nearest' });
}

/** Keys on the board: the arrows step the line, unless the keys already drive the board's cursor. */
function boardKey(e) {
  if (['ArrowUp', 'ArrowDown', 'Enter', ' '].includes(e.key)) { cursorKeys = true; return false; }
  if (cursorKeys) return false;
  return lineKey(e);
}

function lineKey(e) {
  if (e.altKey || e.ctrlKey || e.metaKey || !line) return false;
  if (e.key === 'ArrowLeft') step(-1);
  else if (e.key === 'ArrowRight') step(1);
  else if (e.key === 'Home') step('start');
  else if (e.key === 'End') step('end');
  else return false;
  return true;
}

/** The arrows anywhere on the screen but in a text field (the board takes its own first). */
function pageKey(e) {
  if (e.defaultPrevented || $('analysis-board').hidden) return;
  if (e.target.closest && e.target.closest('input, select, textarea, [data-testid="analysis-board-grid"], [data-testid="settings"], [data-testid="how-to-play"]')) return;
  if (lineKey(e)) e.preventDefault();
}

async function copyLink() {
  const button = $('analysis-board-copy');
  try {
    await navigator.clipboard.writeText($('analysis-board-link').textContent);
    button.textContent = 'Copied!';
  } catch {
    button.textContent = 'Select the link to copy it';
  }
  setTimeout(() => { button.textContent = 'Copy link'; }, 1600);
}

/** Shows the "Analyse" button of a finished game it can open. */
export function renderAnalyseButton(model) {
  $('analyse').hidden = !analysable(model);
}
