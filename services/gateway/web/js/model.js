// The game as one seat's connection knows it, built only from the frames of
// docs/protocol.md: `applyFrame(model, frame, context) -> model`. Pure: no
// DOM, no sockets, no storage, no clock read (the caller passes `now`, on
// the page's performance.now() clock, and what storage remembered), and the
// model passed in is never changed, so tests feed recorded frames under
// node and compare values. The screens render what this returns. What the
// frames do not say (SAN of a state's moves, the checked king, a finished
// game's positions) is asked of the rules module through js/rules.js, whose
// answers depend on the question alone.

import { parseFen, placementOf, name as squareName, sq, fileOf, START_FEN } from './chess.js';
import { replay, checkedKing } from './rules.js';

export const ALL_SQUARES = Array.from({ length: 64 }, (_, i) => squareName(i));

export const other = (color) => (color === 'white' ? 'black' : 'white');

/** The frame types that change a game's model; the others are the page's business. */
export const GAME_FRAMES = new Set(['state', 'move', 'end', 'draw', 'takeback', 'seated', 'opponent_gone', 'opponent_back', 'rematch', 'chat', 'berserk', 'time_given']);

/** Lines of chat a model keeps: the server's `state` carries the last ones, this many is plenty to scroll back. */
export const CHAT_KEPT = 200;

export function isSeat(model) {
  return model.you === 'white' || model.you === 'black';
}

export function turnColor(model) {
  return model.position.turn === 'w' ? 'white' : 'black';
}

/** The colour that moved first, from the starting position (black in some set-ups). */
export function firstMover(model) {
  return parseFen(model.initialFen).turn === 'w' ? 'white' : 'black';
}

/** How many moves `color` has made (known or hidden). */
export function movesMadeBy(model, color) {
  const first = firstMover(model);
  return model.moves.filter((_, i) => (i % 2 === 0) === (first === color)).length;
}

export function vsComputer(model) {
  return ['white', 'black'].some((c) => model.players[c] && model.players[c].computer);
}

/** Whether the side to move is in check (never in fog of war). */
export function inCheck(model) {
  return model.check >= 0;
}

/** The last move's squares, [from, to], or null for none or a hidden one. */
export function lastOf(moves) {
  const uci = moves.length ? moves[moves.length - 1] : null;
  return uci ? [uci.slice(0, 2), uci.slice(2, 4)] : null;
}

/**
 * When a game between people is aborted for a missing first move, on the
 * page's clock (`first_move_in_ms` of a state, move or seated frame); 0 when
 * no such deadline runs, as against the computer, which waits.
 */
export function firstMoveAt(frame, now) {
  return frame.first_move_in_ms > 0 ? now + frame.first_move_in_ms : 0;
}

/** Whole seconds left to make a first move, or null when no deadline runs. */
export function firstMoveSecondsLeft(model, now) {
  if (!model.firstMoveAt || model.status !== 'playing') return null;
  return Math.max(0, Math.ceil((model.firstMoveAt - now) / 1000));
}

/** Whole seconds before victory may be claimed over a gone opponent. */
export function claimSecondsLeft(model, now) {
  return Math.max(0, Math.ceil((model.claimAt - now) / 1000));
}

/** `color`'s time at `now`: the frame's time, less what has run since for the running clock. */
export function clockMs(model, color, now) {
  if (!model.clock) return null;
  const ms = model.clock[`${color}_ms`];
  return clockRunning(model, color) ? ms - (now - model.clockAt) : ms;
}

export function clockRunning(model, color) {
  return !!model.clock && model.status === 'playing' && model.clock.running === color;
}

/** A move frame against the model: `next` to apply, `old` already applied, `gap` when moves were missed. */
export function moveFit(model, frame) {
  if (frame.ply < model.moves.length) return 'old';
  if (frame.ply > model.moves.length) return 'gap';
  return 'next';
}

/**
 * The model after `frame`. `context.now` is the page's clock when the frame
 * arrived; `context.remembered` is what the page stored for the frame's game
 * and seat in fog of war (`{lost: [squares], sans: {ply: [uci, san]}}`), read
 * for `state` frames only. A frame for another game, or older than the
 * model, returns the model itself.
 */
export function applyFrame(model, frame, context = {}) {
  const now = context.now ?? 0;
  if (frame.t === 'state') {
    const next = modelFromState(frame, model, now, context.remembered);
    return model && model.id === frame.game && model.v > next.v ? model : next;
  }
  if (!model || model.id !== frame.game || !GAME_FRAMES.has(frame.t)) return model;
  // A chat line, a berserk or time given at or below the model's version is already in it (a state counted it).
  const counted = frame.t === 'chat' || frame.t === 'berserk' || frame.t === 'time_given';
  if (counted && typeof frame.v === 'number' && frame.v <= model.v) return model;
  const m = { ...model, v: typeof frame.v === 'number' ? Math.max(model.v, frame.v) : model.v };
  switch (frame.t) {
    case 'move': return moveFit(model, frame) === 'next' ? applyMove(m, frame, now) : m;
    case 'end': return applyEnd(m, frame, now);
    case 'draw': case 'takeback': return applyOffer(m, frame);
    case 'seated': return applySeated(m, frame, now);
    case 'opponent_gone': return { ...m, gone: other(m.you), claimAt: now + (frame.claim_in_ms || 0) };
    case 'opponent_back': return { ...m, gone: null };
    case 'rematch':
      if (frame.new_game) return { ...m, rematchGame: frame.new_game, rematchOffer: null };
      if (frame.action === 'decline') return { ...m, rematchOffer: null, rematchDeclinedBy: frame.by };
      return { ...m, rematchOffer: frame.by, rematchDeclinedBy: null };
    case 'chat': return { ...m, chat: [...m.chat, chatLine(frame)].slice(-CHAT_KEPT) };
    case 'berserk': return applyBerserk(m, frame, now);
    case 'time_given': return frame.clock ? { ...m, clock: frame.clock, clockAt: now } : m;
    default: return m;
  }
}

/** The whole game from a `state` frame; what `previous` (the same game) already named is kept. */
export function modelFromState(f, previous, now = 0, remembered = null) {
  const same = !!previous && previous.id === f.game;
  const you = f.you || 'spectator';
  const moves = (f.moves || []).slice();
  const sans = [];
  if (same) {
    for (let i = 0; i < moves.length; i++) if (moves[i] && previous.moves[i] === moves[i]) sans[i] = previous.sans[i];
  }
  const ended = f.status === 'ended';
  const model = {
    id: f.game, v: f.v || 0, variant: f.variant, you,
    fen: f.fen, position: parseFen(f.fen), check: checkedKing(f.fen, f.variant),
    visible: Array.isArray(f.visible) && !ended ? new Set(f.visible) : null,
    moves, sans,
    clock: f.clock || null, clockAt: now,
    status: f.status, result: f.result || null, reason: f.reason || null,
    players: { white: null, black: null, ...(f.players || {}) },
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
    lost: new Set(same ? previous.lost : (remembered && remembered.lost) || []),
    hiddenNews: false,
    taken: [],
    archived: !!f.archived,
    replay: null,
    views: null,
    captured: [],
    chat: Array.isArray(f.chat) ? f.chat.map(chatLine) : [],
    tournament: typeof f.tournament === 'string' && f.tournament ? f.tournament : null,
    berserk: Array.isArray(f.berserk) ? f.berserk.slice() : [],
  };
  if (moves.length && moves.every(Boolean) && sans.filter(Boolean).length < moves.length) {
    // Every move is known (not fog of war): name them all.
    const frames = replay(model.initialFen, moves, model.variant);
    if (frames) for (let i = 0; i < moves.length; i++) if (!sans[i]) sans[i] = frames[i + 1].san;
  }
  if (model.variant === 'fog' && isSeat(model) && !ended && remembered && remembered.sans) {
    for (const [ply, [uci, san]] of Object.entries(remembered.sans)) {
      if (moves[ply] === uci && !sans[ply]) sans[ply] = san;
    }
  }
  if (model.variant === 'fog' && isSeat(model) && !ended) {
    // What the seat took in the fog: its own knowledge, kept across a reload.
    const known = same ? previous.captured.map((c) => [c.ply, [c.uci, c.role]]) : Object.entries((remembered && remembered.captured) || {});
    model.captured = known
      .filter(([ply, [uci]]) => moves[ply] === uci)
      .map(([ply, [uci, role]]) => ({ ply: Number(ply), uci, role }));
  }
  if (model.visible) for (const s of [...model.lost]) if (model.visible.has(s)) model.lost.delete(s);
  if (ended) return finish(model);
  if (model.variant === 'fog' && isSeat(model)) {
    // The seat's own views, one per ply it saw on this page, to look back at.
    model.views = same && previous.views ? previous.views.slice(0, moves.length) : recalledViews(remembered, moves.length);
    model.views[moves.length] = { fen: f.fen, visible: f.visible || [], last: model.last };
  }
  return model;
}

function applyMove(m, f, now) {
  const mover = turnColor(m);
  const moves = [...m.moves, f.uci ?? null];
  const sans = m.sans.slice();
  sans[f.ply] = f.san || null;
  const next = {
    ...m, moves, sans,
    fen: f.fen, position: parseFen(f.fen), check: checkedKing(f.fen, m.variant),
    clock: f.clock || null, clockAt: now,
    legal: Array.isArray(f.legal) ? f.legal : null,
    firstMoveAt: firstMoveAt(f, now),
    last: f.uci ? [f.uci.slice(0, 2), f.uci.slice(2, 4)] : null,
    takebackOffer: null,
    // A move answers the opponent's draw offer with no; the mover's own offer stands.
    drawOffer: m.drawOffer === mover ? m.drawOffer : null,
    hiddenNews: !f.uci,
    taken: isSeat(m) && mover !== m.you ? takenFrom(m.position.board, parseFen(f.fen).board, m.you[0]) : [],
  };
  const lost = new Set(m.lost);
  if (Array.isArray(f.visible)) {
    next.visible = new Set(f.visible);
    for (const s of [...lost]) if (next.visible.has(s)) lost.delete(s);
  }
  if (Array.isArray(f.lost)) for (const s of f.lost) lost.add(s);
  next.lost = lost;
  if (m.variant === 'fog' && isSeat(m) && mover === m.you && f.uci) {
    const role = capturedBy(m.position.board, f.uci, m.you[0]);
    if (role) next.captured = [...m.captured, { ply: f.ply, uci: f.uci, role }];
  }
  if (m.views) {
    next.views = m.views.slice();
    next.views[f.ply + 1] = { fen: f.fen, visible: next.visible ? [...next.visible] : [], last: next.last };
  }
  return next;
}

/**
 * The role of the piece the move `uci` of colour `c` took on `before` (the
 * mover's own view: in fog of war a capture is always of a piece in sight),
 * a pawn taken en passant included; null for a quiet move.
 */
export function capturedBy(before, uci, c) {
  const from = sq(uci.slice(0, 2));
  const to = sq(uci.slice(2, 4));
  const target = before[to];
  if (target && target.c !== c) return target.r;
  const mover = before[from];
  if (!target && mover && mover.r === 'p' && fileOf(from) !== fileOf(to)) return 'p';
  return null;
}

/**
 * The pieces of colour `c` that stood on `before` and are gone from `after`
 * (the opponent took them): [{square, role}]. A player always sees its own
 * pieces, so this holds in fog of war too.
 */
export function takenFrom(before, after, c) {
  const out = [];
  for (let i = 0; i < 64; i++) {
    const p = before[i];
    const q = after[i];
    if (p && p.c === c && !(q && q.c === c && q.r === p.r)) out.push({ square: squareName(i), role: p.r });
  }
  return out;
}

function applyEnd(m, f, now) {
  const moves = (f.moves || []).slice();
  return finish({
    ...m,
    status: 'ended', result: f.result, reason: f.reason,
    moves, sans: m.sans.slice(),
    fen: f.fen, position: parseFen(f.fen), check: checkedKing(f.fen, m.variant),
    clock: f.clock || null, clockAt: now,
    legal: null, visible: null,
    drawOffer: null, takebackOffer: null, gone: null,
    last: lastOf(moves),
  });
}

/**
 * A finished game: the fog lifts (no lost flags), every move is named, and
 * `replay` holds every position from the start for stepping through it (null
 * when the rules module could not replay it). The server's final position is
 * the truth if the replay ever differs.
 */
function finish(model) {
  const frames = replay(model.initialFen, model.moves, model.variant);
  if (!frames) return { ...model, lost: new Set(), replay: null };
  const last = frames[frames.length - 1];
  const serverFinal = parseFen(model.fen);
  if (placementOf(last.position.board) !== placementOf(serverFinal.board)) frames[frames.length - 1] = { ...last, position: serverFinal };
  const sans = model.sans.slice();
  for (let i = 0; i < model.moves.length; i++) if (!sans[i]) sans[i] = frames[i + 1].san;
  return { ...model, sans, lost: new Set(), replay: frames };
}

function applyOffer(m, f) {
  const key = f.t === 'draw' ? 'drawOffer' : 'takebackOffer';
  const standing = f.action === 'offer' || f.action === 'request';
  return { ...m, [key]: standing ? f.by : null };
}

/** A chat line as the model keeps it: who wrote it, in which room, and the text (shown as text, never as markup). */
function chatLine(f) {
  return { room: f.room === 'players' ? 'players' : 'spectators', player: f.player || '', name: f.name || '', text: String(f.text ?? '') };
}

/** A side went berserk: its mark, and the clock the server halved. */
function applyBerserk(m, f, now) {
  const berserk = f.color && !m.berserk.includes(f.color) ? [...m.berserk, f.color] : m.berserk;
  return f.clock ? { ...m, berserk, clock: f.clock, clockAt: now } : { ...m, berserk };
}

/**
 * Whether the seat on screen may still go berserk: a tournament game with a
 * clock, being played, before its own first move, not berserk already.
 */
export function mayBerserk(model) {
  return !!model.tournament && isSeat(model) && model.status === 'playing' && !!model.clock
    && !model.berserk.includes(model.you) && movesMadeBy(model, model.you) === 0;
}

function applySeated(m, f, now) {
  return {
    ...m,
    players: { ...m.players, [f.color]: f.player },
    status: 'playing', code: null, invite: null,
    legal: Array.isArray(f.legal) ? f.legal : m.legal,
    firstMoveAt: firstMoveAt(f, now),
  };
}

/**
 * A finished game from the archive (`/api/games/{id}`) as the `state` frame
 * the game service would have sent `me`, marked `archived` (it has nothing
 * more to say: no rematch, no resume). A record that is already a state
 * frame is returned as it is.
 */
export function stateFromArchive(record, me) {
  if (record.t === 'state') return record;
  const players = record.players || { white: null, black: null };
  const you = players.white && players.white.id === me ? 'white' : players.black && players.black.id === me ? 'black' : 'spectator';
  return {
    t: 'state', game: record.game, v: 0, variant: record.variant, you, fen: record.fen, moves: record.moves, clock: null,
    status: 'ended', result: record.result, reason: record.reason, players, initial_fen: record.initial_fen,
    chess960: record.chess960, rated: record.rated, time_control: record.time_control, archived: true,
  };
}

/** Why the seat on screen may not move now (the board says it when a piece is touched), or null. */
function lockOf(model, { myTurn, pending }) {
  if (model.status === 'ended') return 'game_over';
  if (model.status === 'waiting') return 'waiting';
  if (pending) return 'pending';
  return myTurn ? null : 'not_your_turn';
}

/** The seat's views before ply `upTo` that the page remembered (fog-memory's `views`). */
function recalledViews(remembered, upTo) {
  const views = [];
  for (const [ply, [fen, visible, last]] of Object.entries((remembered && remembered.views) || {})) {
    if (Number(ply) < upTo) views[Number(ply)] = { fen, visible: visible ? visible.split(' ') : [], last: last ? [last.slice(0, 2), last.slice(2, 4)] : null };
  }
  return views;
}

const browsed = new WeakMap();

/**
 * The positions of `model` one may look back at, by ply (frames[ply] is the
 * board after `ply` moves, shaped as the rules module's `replay` answers):
 * a finished game's replay; while a game is played, every position when all
 * moves are known, and in fog of war the seat's own views only (null where
 * it saw none on this page; a spectator sees none). Null when there are none.
 */
export function browseFrames(model) {
  if (model.status === 'ended') return model.replay;
  if (!model.moves.length) return null;
  if (browsed.has(model)) return browsed.get(model);
  let frames = null;
  if (model.variant === 'fog') {
    if (isSeat(model) && model.views) {
      frames = Array.from({ length: model.moves.length + 1 }, (_, i) => {
        const view = model.views[i];
        if (!view) return null;
        const seen = new Set(view.visible);
        return {
          position: parseFen(view.fen), exploded: [], last: view.last, san: model.sans[i - 1] || null, check: -1,
          fog: new Set(ALL_SQUARES.filter((s) => !seen.has(s))),
        };
      });
    }
  } else {
    frames = replay(model.initialFen, model.moves, model.variant);
  }
  browsed.set(model, frames);
  return frames;
}

/**
 * What the board shows of `model`: `curtain` (same-device fog between
 * turns) shows nothing at all; `replayPly` an earlier position (browseFrames);
 * otherwise the live position with fog, lost flags, and, on the player's
 * turn (`myTurn`), the legal moves and, unless a move is still in flight
 * (`pending`), the pieces it may pick up.
 */
export function boardView(model, { curtain = false, replayPly = null, myTurn = false, pending = false } = {}) {
  const ended = model.status === 'ended';
  let view;
  if (curtain) {
    view = { board: new Array(64).fill(null), fog: new Set(ALL_SQUARES), last: null, check: -1, lost: new Set(), movable: null, legal: null };
  } else if (replayPly != null && browseFrames(model)?.[replayPly]) {
    const frame = browseFrames(model)[replayPly];
    view = { board: frame.position.board, fog: frame.fog || null, last: frame.last, check: frame.check, lost: new Set(), movable: null, legal: null };
  } else {
    const fog = model.visible ? new Set(ALL_SQUARES.filter((s) => !model.visible.has(s)))
      : (model.variant === 'fog' && !ended && !isSeat(model) ? new Set(ALL_SQUARES) : null);
    const check = ended && model.reason !== 'checkmate' ? -1 : model.check;
    view = {
      board: model.position.board, fog, last: model.last, check, lost: model.lost,
      movable: myTurn && !pending ? model.you[0] : null, legal: myTurn ? model.legal : null,
    };
  }
  view.variant = model.variant;
  view.seat = isSeat(model) && !curtain ? model.you[0] : null;
  view.lock = replayPly != null && !ended && !curtain ? 'browsing' : lockOf(model, { myTurn, pending });
  return view;
}
