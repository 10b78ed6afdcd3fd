// The analysis board's logic, apart from the page so node tests it: the
// variants it explores, its link (`/#analysis/<variant>/<fen>`), the tree
// of variations explored (a move played off the line opens a variation;
// the mainline stays), the FEN box's messages, and the local engine's
// score as the page writes it.

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
 * The moves explored, as a tree of variations: `start` (a FEN), `root` (a
 * node without a ply) and `path`, the child indices from the root to the
 * node on the board. A node is `{ply, children}`, a ply `{uci, san, fen,
 * exploded, check}`. A node's first child continues its line; the others
 * are variations. The mainline is the root's first children all the way
 * (a finished game's own moves). Pure values: every change returns a new
 * tree.
 */
export function newTree(start, plies = [], at = plies.length) {
  let node = { ply: null, children: [] };
  const root = node;
  for (const ply of plies) {
    const child = { ply, children: [] };
    node.children.push(child);
    node = child;
  }
  const depth = Math.max(0, Math.min(at, plies.length));
  return { start, root, path: new Array(depth).fill(0) };
}

/** The node at `path` (the board's by default), or null when there is none. */
export function nodeAt(tree, path = tree.path) {
  let node = tree.root;
  for (const i of path) {
    node = node.children[i];
    if (!node) return null;
  }
  return node;
}

/** The FEN on the board. */
export const fenAt = (tree) => (tree.path.length ? nodeAt(tree).ply.fen : tree.start);

/** `tree` with the node at `path` replaced by `change(node)`, copying only the nodes on the way. */
function replaceAt(tree, path, change) {
  const rebuild = (node, depth) => {
    if (depth === path.length) return change(node);
    const children = node.children.slice();
    children[path[depth]] = rebuild(children[path[depth]], depth + 1);
    return { ...node, children };
  };
  return { ...tree, root: rebuild(tree.root, 0) };
}

/**
 * Plays `ply` where the board stands: a move already explored from here
 * is stepped into (nothing is lost); any other opens a variation beside
 * them (or continues the line when nothing follows).
 */
export function playOn(tree, ply) {
  const here = nodeAt(tree);
  const known = here.children.findIndex((child) => child.ply.uci === ply.uci);
  if (known >= 0) return { ...tree, path: [...tree.path, known] };
  const grown = replaceAt(tree, tree.path, (node) => ({ ...node, children: [...node.children, { ply, children: [] }] }));
  return { ...grown, path: [...tree.path, here.children.length] };
}

/** The path from `path` to the end of its line (first children all the way). */
function lineEnd(tree, path) {
  const end = [...path];
  for (let node = nodeAt(tree, end); node && node.children.length; node = node.children[0]) end.push(0);
  return end;
}

/**
 * Steps `delta` plies along the line on the board (forward: into the
 * first child), or to `'start'` / `'end'`, never past either end.
 */
export function stepLine(tree, delta) {
  if (delta === 'start') return { ...tree, path: [] };
  if (delta === 'end') return { ...tree, path: lineEnd(tree, tree.path) };
  let path = tree.path;
  for (let n = 0; n < Math.abs(delta); n++) {
    if (delta < 0) path = path.slice(0, -1);
    else if (nodeAt(tree, path).children.length) path = [...path, 0];
  }
  return { ...tree, path };
}

/** The board at `path`, when the tree has a node there; else unchanged. */
export const goTo = (tree, path) => (nodeAt(tree, path) ? { ...tree, path: [...path] } : tree);

/** The line through the board, to its end: `[{ply, path}]`, the board at `tree.path.length` of them. */
export function currentLine(tree) {
  const end = lineEnd(tree, tree.path);
  return end.map((_, i) => {
    const path = end.slice(0, i + 1);
    return { ply: nodeAt(tree, path).ply, path };
  });
}

/** Whether `path` runs along the mainline. */
export const onMainline = (path) => path.every((i) => i === 0);

/**
 * Deletes the variation that starts at `path` (a node off the mainline)
 * and everything after it; a board inside it goes back to where it
 * branched. The mainline cannot be deleted: unchanged then.
 */
export function deleteVariation(tree, path) {
  if (!path.length || onMainline(path) || !nodeAt(tree, path)) return tree;
  const parent = path.slice(0, -1);
  const index = path[path.length - 1];
  const pruned = replaceAt(tree, parent, (node) => ({ ...node, children: node.children.filter((_, i) => i !== index) }));
  const inside = tree.path.length >= path.length && path.every((p, i) => tree.path[i] === p);
  let cursor = tree.path;
  if (inside) cursor = parent;
  else if (tree.path.length >= path.length && parent.every((p, i) => tree.path[i] === p) && tree.path[parent.length] > index) {
    cursor = [...tree.path];
    cursor[parent.length] -= 1;
  }
  return { ...pruned, path: cursor };
}

/** Back to the mainline from a variation: where the board's path left it. */
export function backToMainline(tree) {
  const shared = tree.path.findIndex((i) => i !== 0);
  return shared < 0 ? tree : { ...tree, path: tree.path.slice(0, shared) };
}

/** Whether the board is off the mainline. */
export const leftMainline = (tree) => !onMainline(tree.path);

/** The mainline's plies. */
export const mainline = (tree) => lineEnd(tree, []).map((_, i) => nodeAt(tree, new Array(i + 1).fill(0)).ply);

/** The UCI moves from the start to the board. */
export const movesTo = (tree) => tree.path.map((_, i) => nodeAt(tree, tree.path.slice(0, i + 1)).ply.uci);

/** The FEN before the node at `path`: its parent's, or the start. */
export const fenBefore = (tree, path) => (path.length > 1 ? nodeAt(tree, path.slice(0, -1)).ply.fen : tree.start);

/** A path as the page writes it in `data-path`: `0.0.1`. */
export const pathText = (path) => path.join('.');

/** A `data-path` read back. */
export const pathOfText = (text) => (text ? text.split('.').map(Number) : []);

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
