// Typing a move: a box under the board takes SAN (`Nf3`, `exd5`, `O-O`,
// `e8=Q`) or UCI (`e2e4`, `e7e8q`), matched against the legal moves the
// server listed, and plays it as the board would (drawn at once, confirmed
// first when the settings ask). What is refused is said in the board's own
// words (js/features/refusals.js); nothing is sent.

import { $, notice } from '../page.js';
import { sq, name } from '../chess.js';
import { isSeat, turnColor } from '../model.js';
import { explainRefusal } from './refusals.js';
import { replayPly } from './replay.js';

const ROLE_OF = { K: 'k', Q: 'q', R: 'r', B: 'b', N: 'n' };

/**
 * What `text` names on `board` (the model's position) among `legal`:
 * `{uci}` for one legal move, `{ambiguous: [uci…]}`, or `{refused: {from,
 * to, role}}` for a move the board would refuse (from and to known), or
 * `{unknown: true}`. Pure.
 */
export function readMove(text, board, legal, color) {
  const t = text.trim().replace(/[+#!?]+$/, '');
  const c = color[0];
  const own = (i, role) => board[i] && board[i].c === c && (!role || board[i].r === role);
  const uci = /^([a-h][1-8])-?([a-h][1-8])([qrbnQRBN])?$/.exec(t);
  if (uci) {
    const move = `${uci[1]}${uci[2]}${(uci[3] || '').toLowerCase()}`;
    const fits = legal.filter((m) => m === move || (move.length === 4 && m.slice(0, 4) === move));
    if (fits.length) return { uci: fits.find((m) => m.length === 4 || m[4] === 'q') || fits[0] };
    const from = sq(uci[1]);
    return { refused: { from: uci[1], to: uci[2], role: board[from] ? board[from].r : '' } };
  }
  const castle = /^([O0])-?\1(-?\1)?$/i.exec(t);
  if (castle) {
    const long = !!castle[2];
    const fits = legal.filter((m) => {
      const from = sq(m.slice(0, 2)), to = sq(m.slice(2, 4));
      if (!own(from, 'k')) return false;
      const rook = own(to, 'r');
      const far = Math.abs((to & 7) - (from & 7)) >= 2;
      return (rook || far) && ((to & 7) > (from & 7)) !== long;
    });
    return fits.length ? { uci: fits[0] } : { unknown: true };
  }
  const piece = /^([KQRBN])([a-h])?([1-8])?x?([a-h][1-8])$/.exec(t);
  const pawn = /^(?:([a-h])x?)?([a-h][1-8])(?:=?([QRBNqrbn]))?$/.exec(t);
  let role, fromFile = null, fromRank = null, to, promo = '';
  if (piece) {
    role = ROLE_OF[piece[1]];
    fromFile = piece[2] || null;
    fromRank = piece[3] || null;
    to = piece[4];
  } else if (pawn) {
    role = 'p';
    fromFile = pawn[1] || pawn[2][0];
    to = pawn[2];
    promo = (pawn[3] || '').toLowerCase();
  } else {
    return { unknown: true };
  }
  const fits = legal.filter((m) => {
    const from = m.slice(0, 2);
    return m.slice(2, 4) === to && own(sq(from), role)
      && (!fromFile || from[0] === fromFile) && (!fromRank || from[1] === fromRank)
      && (m.length === 4 || m[4] === (promo || 'q'));
  });
  if (fits.length === 1) return { uci: fits[0] };
  if (fits.length > 1) return { ambiguous: fits };
  // Not legal: the piece it most likely means (the nearest of that kind), for the board's words on why.
  const target = sq(to);
  const distance = (i) => Math.max(Math.abs((i & 7) - (target & 7)), Math.abs((i >> 3) - (target >> 3)));
  let best = -1;
  for (let i = 0; i < 64; i++) {
    if (!own(i, role) || (fromFile && name(i)[0] !== fromFile) || (fromRank && name(i)[1] !== fromRank)) continue;
    if (best < 0 || distance(i) < distance(best)) best = i;
  }
  if (best >= 0) return { refused: { from: name(best), to, role } };
  return { unknown: true };
}

let hooks = { board: null, model: () => null };

/** `board` plays a typed move (`playQueued`); `model()` is the model on screen. */
export function bindMoveInput(given) {
  hooks = given;
  const form = $('move-input-form');
  const input = $('move-input');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const said = submit(input.value);
    input.setAttribute('aria-invalid', String(!said));
    if (said) input.value = '';
  });
  input.addEventListener('input', () => input.removeAttribute('aria-invalid'));
}

/** Plays the move `text` names, or says why not; true when it was played. */
function submit(text) {
  const model = hooks.model();
  if (!text.trim() || !model) return false;
  const reason = lockOf(model);
  if (reason) { notice(explainRefusal(model, { reason }), 'error'); return false; }
  const read = readMove(text, model.position.board, model.legal || [], model.you);
  if (read.uci && hooks.board.playQueued(read.uci)) return true;
  let words;
  if (read.ambiguous) words = `“${text.trim()}” could be ${read.ambiguous.map((m) => `${m.slice(0, 2)}–${m.slice(2, 4)}`).join(' or ')}: add the piece's file or rank.`;
  else if (read.refused) words = explainRefusal(model, read.refused);
  else words = `“${text.trim()}” is not a move here: type it as Nf3, exd5, O-O or e2e4.`;
  notice(words, 'error');
  return false;
}

function lockOf(model) {
  if (model.status === 'ended') return 'game_over';
  if (model.status === 'waiting') return 'waiting';
  if (!isSeat(model)) return 'not_your_piece';
  if (replayPly() != null) return 'browsing';
  if (turnColor(model) !== model.you || !model.legal) return 'not_your_turn';
  return null;
}
