// The analysis board's logic, apart from the page so node tests it: the
// variants it explores, its link (`/#analysis/<variant>/<fen>`), the line
// being explored (a move played off the line replaces what followed), the
// FEN box's messages, and the local engine's score as the page writes it.

import { START_FEN } from './chess.js';
import { REASONS } from './text.js';

/**
 * The variants the board explores: the rules module's variant and whether
 * castling is Chess960's. `fog` is a finished fog-of-war game seen whole.
 */
export const ANALYSIS_VARIANTS = {
  atomic: { rules: 'atomic', chess960: false, label: 'Atomic' },
  atomic960: { rules: 'atomic', chess960: true, label: 'Atomic960' },
  standard: { rules: 'standard', chess960: false, label: 'Standard' },
  chess960: { rules: 'standard', chess960: true, label: 'Chess960' },
  fog: { rules: 'fog', chess960: false, label: 'Fog of war, seen whole' },
};

/** The analysis variant of a game: its rules variant and whether it is a Chess960 game. */
export function analysisVariantOf(variant, chess960) {
  if (variant === 'atomic') return chess960 ? 'atomic960' : 'atomic';
  if (variant === 'standard') return chess960 ? 'chess960' : 'standard';
  if (variant === 'fog') return 'fog';
  return null;
}

/** The hash that reopens `fen` in `variant` (spaces as `_`, as lichess writes them). */
export function analysisHash(variant, fen) {
  const text = (fen || START_FEN).trim().replace(/\s+/g, '_');
  return `#analysis/${variant}/${text.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The board a hash asks for: `{variant, fen}` (fen null: the start), or
 * null when the hash is not the analysis board's. An unknown variant is
 * `{variant: null, asked}` so the page can say so.
 */
export function analysisInHash(hash) {
  let text = (hash || '').replace(/^#/, '');
  try {
    text = decodeURIComponent(text);
  } catch {
    // Kept as written: a stray % is the FEN box's to refuse.
  }
  if (text !== 'analysis' && !text.startsWith('analysis/')) return null;
  const [, variant = 'atomic', ...rest] = text.split('/');
  const fen = rest.join('/').replace(/_/g, ' ').trim() || null;
  if (!ANALYSIS_VARIANTS[variant]) return { variant: null, asked: variant, fen };
  return { variant, fen };
}

const PROBLEM = /^(?:initial_fen: )?(invalid FEN|impossible position): (.*)$/s;

/**
 * What the FEN box says of a FEN the rules module refused, from its error:
 * `not a FEN` (the text does not read as one) or an impossible position
 * (it reads, but no game could reach it), with the module's reason.
 */
export function fenMessage(text, error) {
  if (!(text || '').trim()) return 'Paste a FEN first: six fields, for example rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1.';
  const match = PROBLEM.exec(error || '');
  if (!match) return `That FEN cannot be analysed: ${error || 'the rules could not read it'}.`;
  const [, kind, reason] = match;
  if (kind === 'invalid FEN') return `That is not a valid FEN: ${reason}.`;
  return `That position is illegal: ${reason}.`;
}

/**
 * The line explored: `start` (a FEN) and the plies played from it, each
 * `{uci, san, fen, exploded, check}`, and `at`, how many of them are on the
 * board. Pure values: every change returns a new line.
 */
export function newLine(start, plies = [], at = plies.length) {
  return { start, plies, at: Math.max(0, Math.min(at, plies.length)) };
}

/** The FEN on the board. */
export const fenAt = (line) => (line.at ? line.plies[line.at - 1].fen : line.start);

/**
 * Plays `ply` where the board stands: the line's own next move only steps
 * forward (what follows is kept); any other move replaces the rest.
 */
export function playOn(line, ply) {
  const next = line.plies[line.at];
  if (next && next.uci === ply.uci) return { ...line, at: line.at + 1 };
  return newLine(line.start, [...line.plies.slice(0, line.at), ply], line.at + 1);
}

/** Steps `delta` plies (or to `'start'` / `'end'`), never past either end. */
export function stepLine(line, delta) {
  if (delta === 'start') return { ...line, at: 0 };
  if (delta === 'end') return { ...line, at: line.plies.length };
  return { ...line, at: Math.max(0, Math.min(line.plies.length, line.at + delta)) };
}

/** How many plies two lines from one start share before they part. */
export function sharedPlies(a, b) {
  if (!a || !b || a.start !== b.start) return 0;
  let n = 0;
  while (n < a.plies.length && n < b.plies.length && a.plies[n].uci === b.plies[n].uci) n += 1;
  return n;
}

/**
 * Back to `game`'s own line from `line` played off it: where they part
 * (or at the same ply, while `line` still follows the game).
 */
export function backToGame(game, line) {
  const shared = sharedPlies(game, line);
  return { ...game, at: line.at <= shared ? line.at : shared };
}

/** Whether `line` has left `game`'s own moves. */
export const leftGame = (game, line) => !!game && sharedPlies(game, line) < line.plies.length;

/** The UCI moves from the start to the board. */
export const movesTo = (line) => line.plies.slice(0, line.at).map((p) => p.uci);

/** The side to move in a FEN: 'w' or 'b'. */
export const turnOfFen = (fen) => ((fen || '').trim().split(/\s+/)[1] === 'b' ? 'b' : 'w');

/** The move number and side of the first move from `fen`: `{number, black}`. */
export function firstMoveOf(fen) {
  const fields = (fen || '').trim().split(/\s+/);
  const number = Math.max(1, Number.parseInt(fields[5], 10) || 1);
  return { number, black: fields[1] === 'b' };
}

/**
 * SAN moves numbered as a score sheet, from `fen`: `1. e4 e5 2. Nf3`, or
 * `3... Nf6 4. Bc4` when black moves first.
 */
export function numberedLine(fen, sans) {
  const { number, black } = firstMoveOf(fen);
  const out = [];
  sans.forEach((san, i) => {
    const ply = i + (black ? 1 : 0);
    const n = number + Math.floor(ply / 2);
    if (ply % 2 === 0) out.push(`${n}. ${san}`);
    else if (i === 0) out.push(`${n}... ${san}`);
    else out.push(san);
  });
  return out.join(' ');
}

/** The engine's mate scores: `MATE - n` wins in `n` plies (crates/engine). */
export const MATE = 30000;
const MATE_BOUND = MATE - 1000;

/**
 * A search's score for the side to move (`turn` 'w' or 'b') as white sees
 * it: `{cp}` or `{mate}` in moves (negative: black mates).
 */
export function whiteScore(score, turn) {
  const sign = turn === 'b' ? -1 : 1;
  if (Math.abs(score) >= MATE_BOUND) {
    const plies = MATE - Math.abs(score);
    const moves = Math.max(0, Math.ceil(plies / 2));
    return { mate: Math.sign(score) * sign * moves };
  }
  return { cp: score * sign };
}

/**
 * The engine's line from a `search` answer: its `pv` (the module writes it
 * from the search's table) cut to `plies`, or the best move alone from a
 * module that writes none.
 */
export function lineOfSearch(answer, plies) {
  if (!answer || !answer.uci) return [];
  const pv = Array.isArray(answer.pv) && answer.pv[0] === answer.uci ? answer.pv : [answer.uci];
  return pv.slice(0, Math.max(1, plies));
}

/** The score as the bar's number: `+0.35`, `-1.20`, `#3`, `-#2` (white's view). */
export function scoreText(white) {
  if (white.mate != null) return white.mate < 0 ? `-#${-white.mate}` : `#${white.mate}`;
  const pawns = white.cp / 100;
  return `${pawns > 0 ? '+' : pawns < 0 ? '-' : ''}${Math.abs(pawns).toFixed(2)}`;
}

/** How much of the bar is white's, 0-100: half at equality, lichess's curve, a mate fills it. */
export function barPercent(white) {
  if (white.mate != null) return white.mate < 0 || Object.is(white.mate, -0) ? 0 : 100;
  const cp = Math.max(-1000, Math.min(1000, white.cp));
  return 50 + 50 * (2 / (1 + Math.exp(-0.00368208 * cp)) - 1);
}

/** The words of a finished position: mate, an explosion, stalemate, ... from the module's outcome. */
export function outcomeText(outcome) {
  if (!outcome) return '';
  const who = outcome.result === '1-0' ? 'White wins' : outcome.result === '0-1' ? 'Black wins' : 'Draw';
  const why = REASONS[outcome.reason] || (outcome.reason || '').replace(/_/g, ' ');
  return why ? `${who}: ${why}.` : `${who}.`;
}
