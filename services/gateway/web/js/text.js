// Words and numbers the page shows: results, clocks, time controls, the
// game's status line and error messages. Pure functions, no DOM.

import { inCheck, isSeat, other, turnColor } from './model.js';

export const COLOR_NAME = { white: 'White', black: 'Black' };

export function clockLabel(clock) {
  if (!clock) return 'no clock';
  return `${Math.round(clock.initial_ms / 60000)} + ${Math.round((clock.increment_ms || 0) / 1000)}`;
}

export const VARIANT_NAME = { atomic: 'Atomic', standard: 'Standard', fog: 'Fog of war' };

export const REASONS = {
  explosion: 'king exploded', checkmate: 'checkmate', king_captured: 'king captured', stalemate: 'stalemate',
  threefold: 'threefold repetition', fifty_moves: 'fifty-move rule', insufficient_material: 'insufficient material',
  timeout: 'time ran out', agreement: 'draw agreed', aborted: 'aborted',
};

export function resultText(model) {
  const { result, reason } = model;
  if (result === '*') return 'Game aborted';
  const loser = result === '1-0' ? 'Black' : result === '0-1' ? 'White' : null;
  let why = REASONS[reason] || reason || '';
  if (reason === 'resign' && loser) why = `${loser} resigned`;
  if (reason === 'abandoned') why = loser ? `${loser} left the game` : 'both players left';
  if (reason === 'timeout' && loser) why = `${loser} ran out of time`;
  if (result === '1-0') return `White wins — ${why}`;
  if (result === '0-1') return `Black wins — ${why}`;
  return `Draw — ${why}`;
}

/** How a finished game went for the seat on screen: 'won', 'lost', 'draw', or null (spectator, aborted). */
export function outcomeFor(model) {
  if (model.status !== 'ended' || !isSeat(model)) return null;
  if (model.result === '1/2-1/2') return 'draw';
  if (model.result === '1-0') return model.you === 'white' ? 'won' : 'lost';
  if (model.result === '0-1') return model.you === 'black' ? 'won' : 'lost';
  return null;
}

export const OUTCOME_TEXT = { won: 'You won', lost: 'You lost', draw: 'Draw' };

export function fmtClock(ms) {
  const t = Math.max(0, ms);
  if (t < 10000) return `0:0${Math.floor(t / 1000)}.${Math.floor((t % 1000) / 100)}`;
  const total = Math.ceil(t / 1000);
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  return h ? `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}` : `${m}:${String(s).padStart(2, '0')}`;
}

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

export function errorText(err) {
  if (!err) return 'Something went wrong.';
  switch (err.code) {
    case 'disconnected': return 'The connection dropped: try again once reconnected.';
    case 'timeout': return 'The server did not answer in time: try again.';
    case 'rate_limited': return `Slow down: ${err.message || 'too many requests'}.`;
    case 'unavailable': return `The server cannot do that right now: ${err.message || 'unavailable'}.`;
    default: return err.message ? capitalise(err.message) : `Refused (${err.code}).`;
  }
}

export function moveErrorText(err) {
  switch (err.code) {
    case 'illegal_move': return `Illegal move: ${err.message || 'not allowed here'}.`;
    case 'not_your_turn': return 'It is not your turn.';
    case 'game_over': return `The game is over: ${err.message || ''}`.trim();
    case 'stale_ply': return 'The position changed: here it is again.';
    default: return errorText(err);
  }
}

/** `n` and the word for it, singular for one: "1 game", "3 games". */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

export const ROLE_NAME = { p: 'pawn', n: 'knight', b: 'bishop', r: 'rook', q: 'queen', k: 'king' };

/**
 * Why a move was refused, in words a newcomer understands. `reason` is the
 * rules module's (js/rules.js `whyRefused`) or the page's own
 * (`not_your_turn`, `game_over`, `waiting`, `pending`, `not_your_piece`);
 * `from`, `to` are square names, `role` the moving piece's letter, `you`
 * the player's colour, `computer` whether the opponent is the computer.
 */
export function refusalText(reason, { from = '', to = '', role = '', you = null, computer = false } = {}) {
  const piece = ROLE_NAME[role] || 'piece';
  const opponent = computer ? 'the computer' : 'your opponent';
  switch (reason) {
    case 'not_your_turn': return `It is not your turn: wait for ${opponent} to move.`;
    case 'game_over': return 'The game is over: no more moves.';
    case 'waiting': return 'Wait for an opponent to join before you move.';
    case 'pending': return 'Your move is on its way: wait a moment.';
    case 'browsing': return 'You are looking at an earlier move: press End, or click the last move, to play on.';
    case 'other_side_to_move': return you ? `It is ${COLOR_NAME[you]}'s turn.` : 'It is the other side\'s turn.';
    case 'not_your_piece': return you ? `That piece is not yours: you play ${COLOR_NAME[you]}.` : 'That piece is not yours.';
    case 'cannot_move_there': return `A ${piece} cannot move from ${from} to ${to}.`;
    case 'king_cannot_capture': return 'Kings cannot capture in atomic chess: the explosion would take your own king too.';
    case 'own_king_explodes': return `Your king would explode: it stands next to ${to}, where this capture blows up.`;
    case 'castle_out_of_check': return 'You cannot castle while your king is in check.';
    case 'castle_through_check': return 'You cannot castle through or into check: the king would cross an attacked square.';
    case 'still_in_check': return 'Your king is in check: this move does not get it out of check.';
    case 'king_would_be_attacked': return `Your king would be in check on ${to}.`;
    case 'pinned': return `That ${piece} is pinned: moving it would put your king in check.`;
    default: return from && to ? `${from}–${to} is not a legal move here.` : 'That move is not allowed here.';
  }
}

export function capitalise(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * The status line under the board. `myTurn`: the seat on screen is to move
 * (and no curtain hides its board); `hotseat`: both seats play on this
 * device; `firstMoveLeft`: whole seconds left for a first move, or null.
 */
export function statusText(model, { myTurn = false, hotseat = false, firstMoveLeft = null } = {}) {
  if (model.status === 'ended') {
    if (isSeat(model) && model.rematchDeclinedBy && model.rematchDeclinedBy !== model.you) {
      return 'Game over: your opponent declined the rematch.';
    }
    return model.moves.length ? 'Game over: step through it with ‹ › or the arrow keys.' : 'Game over.';
  }
  if (model.status === 'waiting') {
    return isSeat(model) ? 'Waiting for an opponent to join: share the link or the code.' : 'Waiting for a second player.';
  }
  const turn = turnColor(model);
  const check = inCheck(model) ? ' Check!' : '';
  if (hotseat) return `${COLOR_NAME[turn]} to move.${model.variant === 'fog' ? '' : check}`;
  if (!isSeat(model)) {
    return model.variant === 'fog'
      ? `Watching: ${COLOR_NAME[turn]} to move. The fog hides the board until the end.`
      : `Watching: ${COLOR_NAME[turn]} to move.`;
  }
  if (myTurn) {
    const base = model.hiddenNews ? `A move was played${takenText(model.taken)} — your turn` : 'Your turn';
    return firstMoveLeft != null ? `${base}: make your first move within ${firstMoveLeft} s or the game is aborted.` : `${base}.${check}`;
  }
  const opp = model.players[other(model.you)];
  if (firstMoveLeft != null) return `Waiting for your opponent's first move: the game is aborted in ${firstMoveLeft} s without it.`;
  return `Waiting for ${opp && opp.computer ? 'the computer' : 'your opponent'} to move…`;
}

/** ": your knight on f3 was taken" for pieces lost to a hidden move, or nothing. */
function takenText(taken) {
  if (!taken || !taken.length) return '';
  return `: ${taken.map((t) => `your ${ROLE_NAME[t.role]} on ${t.square}`).join(', ')} ${taken.length === 1 ? 'was' : 'were'} taken`;
}

/** A rating change as the page shows it: "+12 → 1512", with "?" while provisional. */
export function ratingChangeText(diff, rating, provisional) {
  const d = Math.round(diff || 0);
  return `${d >= 0 ? '+' : '-'}${Math.abs(d)} → ${Math.round(rating)}${provisional ? '?' : ''}`;
}
