// The rules the page asks of the wasm module (crates/wasm), on the main
// thread: SAN with its check and mate marks, the squares a capture
// exploded, the checked king, and every position of a finished game. The
// page keeps no rules of its own, so what it writes is what the server and
// the offline engine write. The answers are synchronous (rendering runs on
// every frame and cannot wait); the module is instantiated once, before the
// first frame is applied (`loadRules`), or given by the caller (`useRules`,
// the node tests). Until it is there, or where it cannot load, the page
// names no move it was not told, marks no check and has no replay.

import { parseFen, sq } from './chess.js';

let engine = null;

/** Answers the page's rules questions with `rules` (`{ call(request) -> answer }`). */
export function useRules(rules) {
  engine = rules;
}

/**
 * Instantiates the module the gateway serves beside the offline engine.
 * Resolves either way: a page without the module still plays, less helped.
 */
export async function loadRules() {
  if (engine) return true;
  try {
    // Imported here, not at the top, so model.js loads under node without the served files.
    const { loadEngine } = await import('../offline/fogblast-wasm.js');
    useRules(await loadEngine(await fetch(new URL('../offline/fogblast.wasm', import.meta.url))));
    return true;
  } catch (error) {
    console.warn('the rules module did not load: no SAN, check or replay of our own', error);
    return false;
  }
}

function ask(request) {
  if (!engine) return null;
  const answer = engine.call(request);
  return answer && answer.ok ? answer : null;
}

/** The square (index) of the king in check in `fen`, else -1; never in fog of war. */
export function checkedKing(fen, variant) {
  if (!fen || variant === 'fog') return -1;
  const answer = ask({ op: 'check', variant, fen });
  return answer && answer.check ? sq(answer.check) : -1;
}

/**
 * Every position of a game whose moves are all known: frames[ply] is the
 * board before move `ply`, with the move that led to it (`last`, `san`),
 * what it exploded and the king it checks. Null when a move is unknown or
 * the module cannot replay the game.
 */
export function replay(initialFen, moves, variant) {
  if (!moves.every(Boolean)) return null;
  const answer = ask({ op: 'replay', variant, initial_fen: initialFen || '', moves });
  if (!answer) return null;
  return answer.plies.map((ply, i) => ({
    position: parseFen(ply.fen),
    exploded: ply.exploded,
    last: i ? [moves[i - 1].slice(0, 2), moves[i - 1].slice(2, 4)] : null,
    san: ply.san,
    check: ply.check ? sq(ply.check) : -1,
  }));
}

/**
 * Why `uci` is refused in `fen`: the rule it breaks, as the module names it
 * (`king_cannot_capture`, `own_king_explodes`, `pinned`, …, or `legal`), or
 * null when the module cannot tell.
 */
export function whyRefused(fen, variant, uci) {
  if (!fen || !uci) return null;
  const answer = ask({ op: 'why', variant, fen, uci });
  return answer ? answer.reason : null;
}

/**
 * A fog-of-war game after `moves` as `view` ('white' or 'black') sees it:
 * `{fen, visible, lost}` (the squares in sight, and where a piece of the
 * viewer went out of sight), or null without the module.
 */
export function fogView(moves, view) {
  const answer = ask({ op: 'position', variant: 'fog', moves, view });
  return answer ? { fen: answer.fen, visible: answer.visible, lost: answer.lost || [] } : null;
}

/**
 * What the atomic capture `uci` would blow up in `fen`: `{squares,
 * ownKing, theirKing}` (king squares, or null when spared), or null for no
 * capture, another variant, or without the module.
 */
export function blastOf(fen, variant, uci) {
  if (!fen || !uci || variant !== 'atomic') return null;
  const answer = ask({ op: 'blast', variant, fen, uci });
  if (!answer || !answer.squares.length) return null;
  return { squares: answer.squares, ownKing: answer.own_king || null, theirKing: answer.their_king || null };
}

/**
 * A position reached from `initialFen` by `moves` (the analysis board):
 * the module's `position` answer (`fen`, `legal`, `san`, `exploded`,
 * `check`, `outcome`), or `{error}` with the module's reason (a malformed
 * or impossible FEN, an illegal move). Fog of war is seen whole.
 */
export function explore(initialFen, moves, variant, chess960 = false) {
  if (!engine) return { error: 'the rules module did not load' };
  const request = { op: 'position', variant, initial_fen: initialFen || '', moves, chess960 };
  if (variant === 'fog') request.view = 'all';
  const answer = engine.call(request);
  if (!answer || !answer.ok) return { error: (answer && answer.error) || 'no answer' };
  return answer;
}
