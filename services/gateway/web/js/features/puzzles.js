// Puzzles (docs/puzzles.md): the Puzzles screen (`/#puzzles`, or one
// puzzle at `/#puzzle=ID`) and the daily puzzle on home. The player plays
// the solution on a board of its own; the opponent's replies play
// themselves; the line goes to the server, which judges it and answers
// with the player's puzzle rating and its change. A fog puzzle's board
// shows the solver's view only: the server sends nothing more. The line's
// logic is js/puzzle-line.js's, node-tested.

import { Board } from '../board.js';
import { parseFen, drawMove } from '../chess.js';
import { $, showScreen } from '../page.js';
import * as store from '../store.js';
import { changeText, foggedSquares, nextStep } from '../puzzle-line.js';

const VARIANT_NAMES = { atomic: 'Atomic', fog: 'Fog of war' };
/** How long the opponent's reply waits after a right move, in ms. */
const REPLY_DELAY = 400;

let board = null;
/** The puzzle on screen: {puzzle, solver, ply, played, fog, done}. */
let state = null;

/** The player's token, once the connection's welcome has kept it. */
async function tokenReady() {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const token = store.get(store.KEYS.token);
    if (token) return token;
    if (Date.now() > deadline) throw new Error('not connected: this browser has no player yet');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function api(path, { method = 'GET', body = null, auth = false } = {}) {
  const headers = { accept: 'application/json' };
  if (auth) headers.authorization = `Bearer ${await tokenReady()}`;
  if (body) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.message || `the server answered ${response.status}`);
  return answer;
}

function status(text, kind = '') {
  const el = $('puzzle-status');
  el.textContent = text;
  el.dataset.kind = kind;
}

function showRating(player) {
  if (!player) return;
  $('puzzle-rating').textContent = `${Math.round(player.rating)}${player.provisional ? '?' : ''}`;
}

function ensureBoard() {
  if (board) return;
  board = new Board($('puzzle-board'), {
    onMove: played,
    onRefused: () => status('Not a legal move here.', 'error'),
    autoQueen: () => true,
  });
  // One `board` on the page is the game's; this one has a name of its own.
  board.el.dataset.testid = 'puzzle-board-grid';
}

function draw(fen, last, movable) {
  const { board: cells } = parseFen(fen);
  const legal = movable ? state.puzzle.legal[state.ply / 2] || [] : null;
  board.show({
    board: cells, fog: state.fog, last, check: -1, lost: new Set(), legal,
    movable: movable ? state.solver : null, variant: state.puzzle.variant, turn: state.solver,
    seat: state.solver, lock: movable ? null : 'puzzle', marks: null,
  });
}

/** Puts `answer` (the API's puzzle) on the board, the solver to move. */
function load(answer) {
  ensureBoard();
  const puzzle = answer.puzzle;
  const solver = parseFen(puzzle.fen).turn;
  state = { puzzle, solver, ply: 0, played: [], fog: puzzle.variant === 'fog' ? foggedSquares(puzzle.fen) : null, done: false };
  board.setOrientation(solver === 'w' ? 'white' : 'black');
  draw(puzzle.fen, null, true);
  $('puzzle-title').textContent = `${VARIANT_NAMES[puzzle.variant] || puzzle.variant} puzzle ${puzzle.id}`;
  $('puzzle-info').textContent =
    `Rating ${Math.round(puzzle.rating)} · ${puzzle.plays} played · ${puzzle.themes.join(', ')}`;
  $('puzzle-screen').dataset.puzzle = puzzle.id;
  $('puzzle-screen').dataset.variant = puzzle.variant;
  $('puzzle-change').textContent = '';
  status(`${solver === 'w' ? 'White' : 'Black'} to move: find the best move${puzzle.variant === 'fog' ? ', from what you see' : ''}.`);
  if (location.hash !== `#puzzle=${puzzle.id}`) history.replaceState(null, '', `/#puzzle=${encodeURIComponent(puzzle.id)}`);
}

function played(uci) {
  if (!state || state.done) return;
  const step = nextStep(state.puzzle.solution, state.ply, uci);
  state.played.push(uci);
  if (step === 'judge') {
    const { board: cells } = parseFen(positionNow());
    board.show({ board: drawMove(cells, uci), last: [uci.slice(0, 2), uci.slice(2, 4)], movable: null, legal: null });
    finish();
    return;
  }
  state.ply += 1;
  draw(positionNow(), [uci.slice(0, 2), uci.slice(2, 4)], false);
  if (step === 'solved') { finish(); return; }
  status('Right! Now the reply…', 'good');
  setTimeout(() => {
    const reply = state.puzzle.solution[state.ply];
    state.played.push(reply);
    state.ply += 1;
    draw(positionNow(), [reply.slice(0, 2), reply.slice(2, 4)], true);
    status('Your move again.', 'good');
  }, REPLY_DELAY);
}

/** The position after the plies played so far (the start before any). */
function positionNow() {
  return state.ply === 0 ? state.puzzle.fen : state.puzzle.positions[state.ply - 1];
}

async function finish() {
  state.done = true;
  const puzzle = state.puzzle;
  try {
    const verdict = await api(`/api/puzzle/${encodeURIComponent(puzzle.id)}/attempt`, {
      method: 'POST', auth: true, body: { puzzle: puzzle.id, moves: state.played },
    });
    $('puzzle-screen').dataset.result = verdict.solved ? 'solved' : 'failed';
    status(verdict.solved ? 'Solved!' : `Not the move. The solution: ${puzzle.solution.join(' ')}`, verdict.solved ? 'good' : 'error');
    showRating(verdict.player);
    if (!verdict.solved && verdict.failedAt != null) showSolutionMove(verdict.failedAt);
    const change = verdict.rated ? changeText(verdict.player.change) : 'not rated: tried before';
    $('puzzle-change').textContent = change;
  } catch (err) {
    status(`The answer was not judged: ${err.message}`, 'error');
  }
}

/** After a wrong move, the solution's move at that ply, drawn where the wrong one was. */
function showSolutionMove(ply) {
  const puzzle = state.puzzle;
  setTimeout(() => {
    if (state.puzzle !== puzzle) return;
    const uci = puzzle.solution[ply];
    draw(puzzle.positions[ply], [uci.slice(0, 2), uci.slice(2, 4)], false);
  }, REPLY_DELAY * 2);
}

/** Opens the Puzzles screen: puzzle `id`, or the next one near the player's rating. */
export async function showPuzzles(id = null) {
  showScreen('puzzles');
  ensureBoard();
  $('puzzle-screen').dataset.result = '';
  status('Loading a puzzle…');
  try {
    api('/api/puzzle/rating', { auth: true }).then(showRating, () => {});
    const variant = $('puzzle-variant').value;
    const path = id ? `/api/puzzle/${encodeURIComponent(id)}` : `/api/puzzle/next${variant ? `?variant=${variant}` : ''}`;
    load(await api(path, { auth: !id }));
  } catch (err) {
    status(`No puzzle: ${err.message}`, 'error');
  }
}

/** Home's daily puzzle card. */
export async function loadDailyPuzzle() {
  try {
    const daily = await api('/api/puzzle/daily');
    const puzzle = daily.puzzle;
    const link = $('daily-puzzle-link');
    link.href = `/#puzzle=${encodeURIComponent(puzzle.id)}`;
    link.textContent = `${VARIANT_NAMES[puzzle.variant] || puzzle.variant}, rated ${Math.round(puzzle.rating)}`;
    $('daily-puzzle-themes').textContent = puzzle.themes.join(', ');
    $('daily-puzzle').hidden = false;
  } catch {
    $('daily-puzzle').hidden = true;
  }
}

export function initPuzzles() {
  $('puzzle-next').addEventListener('click', () => showPuzzles());
  $('puzzle-variant').addEventListener('change', () => showPuzzles());
  loadDailyPuzzle();
}
