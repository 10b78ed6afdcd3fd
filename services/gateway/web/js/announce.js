// What a screen reader is told as a game goes on: the opponent's moves in
// words ("Black: knight takes d7, mate"), what a hidden move took, what an
// explosion cleared, the result, offers and presence. Pure: frames and
// models in, a sentence (or null) out; js/features/announcer.js speaks it.

import { isSeat, turnColor, other } from './model.js';
import { COLOR_NAME, ROLE_NAME, capitalise, resultText } from './text.js';

const PIECE_LETTER = { N: 'knight', B: 'bishop', R: 'rook', Q: 'queen', K: 'king' };

/** SAN read out: "Nxd7#" → "knight takes d7, mate", "Nf3" → "knight to f3", "exd5" → "e pawn takes d5", "O-O" → "castles kingside". */
export function spokenSan(san) {
  if (!san) return '';
  const mark = san.endsWith('#') ? ', mate' : san.endsWith('+') ? ', check' : '';
  const bare = san.replace(/[+#]+$/, '');
  if (bare === 'O-O') return `castles kingside${mark}`;
  if (bare === 'O-O-O') return `castles queenside${mark}`;
  const m = /^([NBRQK])?([a-h]?[1-8]?)(x)?([a-h][1-8])(?:=([NBRQ]))?$/.exec(bare);
  if (!m) return `${san}`;
  const [, piece, from, takes, to, promo] = m;
  const who = piece ? `${PIECE_LETTER[piece]}${from ? ` from ${from}` : ''}` : from ? `${from} pawn` : '';
  const words = [who, takes ? 'takes' : piece ? 'to' : '', to].filter(Boolean).join(' ');
  return `${words}${promo ? `, promotes to ${PIECE_LETTER[promo]}` : ''}${mark}`;
}

/** Whether a move frame was played by the player on this model's seat (not read out: they made it). */
function ownMove(previous, model) {
  return isSeat(model) && turnColor(previous) === model.you;
}

/**
 * The sentence for `frame`, which turned `previous` into `model` (the
 * model of the main seat, or a spectator's), or null when there is nothing
 * to tell. `hotseat`: both seats play here, so every move is read out.
 */
export function announcement({ frame: f, previous, model, hotseat = false }) {
  if (!model) return null;
  const opponent = isSeat(model) ? (model.players[other(model.you)] || {}).computer ? 'The computer' : 'Your opponent' : null;
  switch (f.t) {
    case 'move': {
      if (!previous || (!hotseat && ownMove(previous, model))) return null;
      const mover = COLOR_NAME[turnColor(previous)];
      const parts = [f.san ? `${mover}: ${spokenSan(f.san)}.` : `${mover} moved.`];
      if (Array.isArray(f.exploded) && f.exploded.length) parts.push(`The explosion cleared ${f.exploded.join(', ')}.`);
      const taken = (model.taken || []).map((t) => `your ${ROLE_NAME[t.role]} on ${t.square}`);
      if (taken.length && !f.exploded) parts.push(capitalise(`${taken.join(', ')} ${taken.length === 1 ? 'was' : 'were'} taken.`));
      // A move that ends the game carries no legal moves: no "your turn" then.
      if (isSeat(model) && !hotseat && Array.isArray(f.legal) && f.legal.length) parts.push('Your turn.');
      return parts.join(' ');
    }
    case 'end': return `Game over. ${resultText(model)}.`;
    case 'seated': return isSeat(model) ? 'An opponent joined: the game begins.' : `${COLOR_NAME[f.color]} took a seat.`;
    case 'draw':
      if (!opponent || f.by === model.you) return null;
      if (f.action === 'offer') return `${opponent} offers a draw.`;
      return null;
    case 'takeback':
      if (!opponent || f.by === model.you) return null;
      if (f.action === 'request') return `${opponent} asks to take back a move.`;
      return null;
    case 'rematch':
      if (!opponent || f.new_game || f.by === model.you) return null;
      return f.action === 'decline' ? `${opponent} declined the rematch.` : `${opponent} offers a rematch.`;
    case 'opponent_gone': return opponent ? `${opponent} left the game.` : null;
    case 'opponent_back': return opponent ? `${opponent} is back.` : null;
    default: return null;
  }
}
