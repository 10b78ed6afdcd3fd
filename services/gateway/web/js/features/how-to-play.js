// "How to play": a few illustrated steps for atomic chess and for fog of
// war, each drawn with the page's own board and pieces (js/board.js, in the
// theme in use). Opened from the home page and from the game page (on the
// game's variant); Escape or Close shuts it. The fog-of-war pictures are
// cut by the rules module (js/rules.js `fogView`), as a game would be.

import { Board } from '../board.js';
import { parseFen } from '../chess.js';
import { ALL_SQUARES } from '../model.js';
import { fogView } from '../rules.js';
import { $ } from '../page.js';

/** One picture: a FEN, or fog-of-war `moves` seen by `view`; `marks` by class; `last` move squares. */
const STEPS = {
  atomic: [
    {
      title: 'Every capture explodes',
      text: 'The knight on e5 takes on d7. The blast clears d7 and every piece next to it, whatever its colour: the knight itself, the bishop, the queen and the king. Pawns next to the blast survive (c7 and e7).',
      fen: 'rnbqkbnr/1ppppppp/8/p3N3/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 3',
      last: ['e5', 'd7'],
      marks: { blast: ['d7', 'c8', 'd8', 'e8'] },
    },
    {
      title: 'Blow up the king to win',
      text: 'The black king stood next to d7, so it is gone and White wins at once: no checkmate needed. Checkmate wins too.',
      fen: 'rn3bnr/1pp1pppp/8/p7/8/8/PPPPPPPP/RNBQKB1R b KQ - 0 3',
      marks: { blast: ['d7', 'c8', 'd8', 'e8'] },
    },
    {
      title: 'Kings cannot capture',
      text: 'A king that captured would explode with its prey, so kings never capture. Here the white king may not take the knight on e2.',
      fen: '4k3/8/8/8/8/8/4n3/4K3 w - - 0 1',
      marks: { refused: ['e2'] },
    },
    {
      title: 'Never blow up your own king',
      text: 'Nxd3 is not allowed: d3 is next to your own king on e2, which the blast would take.',
      fen: '4k3/8/8/8/8/3p4/4K3/2N5 w - - 0 1',
      marks: { blast: ['d3'], 'blast-own-king': ['e2'], refused: ['d3'] },
    },
    {
      title: 'Kings side by side are safe',
      text: 'While the kings touch, neither is in check: no capture could take one king without the other. The rook on e1 does not check the white king on e5.',
      fen: '8/8/8/3kK3/8/8/8/4r3 w - - 0 1',
      marks: { target: ['d5', 'e5'] },
    },
  ],
  fog: [
    {
      title: 'You see only what your pieces reach',
      text: 'Your own pieces, and every square they could move to, are in sight. The rest of the board is fog: at the start, everything past the fourth rank.',
      moves: [],
      view: 'white',
    },
    {
      title: 'Enemy pieces show where you could go',
      text: 'After 1. e4 d5 the pawn on e4 could take on d5, so you see the black pawn there, and nothing else of Black.',
      moves: ['e2e4', 'd7d5'],
      view: 'white',
      marks: { target: ['d5'] },
    },
    {
      title: 'No check: take the king',
      text: 'Nobody is told of check, and a king may walk into danger. Capture the enemy king to win: here the queen on h5 takes it on e8.',
      moves: ['e2e4', 'f7f6', 'd1h5', 'a7a6'],
      view: 'white',
      marks: { target: ['e8'] },
      last: ['h5', 'e8'],
    },
    {
      title: 'A flag where you lost a piece',
      text: 'Black played 1... f5 and White took it out of sight. Black only learns a piece is gone: a flag marks f5 until the square is seen again.',
      moves: ['e2e4', 'f7f5', 'e4f5'],
      view: 'black',
      orientation: 'black',
    },
  ],
};

let current = 'atomic';
let opener = null;

/** The board's view of one step. */
function viewOf(step) {
  let fen = step.fen;
  let fog = null;
  let lost = new Set();
  if (step.moves) {
    const seen = fogView(step.moves, step.view);
    if (seen) {
      fen = seen.fen;
      const visible = new Set(seen.visible);
      fog = new Set(ALL_SQUARES.filter((s) => !visible.has(s)));
      lost = new Set(seen.lost);
    }
  }
  const marks = new Map();
  for (const [cls, squares] of Object.entries(step.marks || {})) {
    for (const s of squares) marks.set(s, [...(marks.get(s) || []), cls]);
  }
  const position = parseFen(fen || '8/8/8/8/8/8/8/8 w - - 0 1');
  return { board: position.board, turn: position.turn, fog, last: step.last || null, check: -1, lost, movable: null, legal: null, marks };
}

function render() {
  const list = $('howto-steps');
  list.textContent = '';
  for (const tab of document.querySelectorAll('[data-howto-variant]')) {
    tab.setAttribute('aria-selected', String(tab.dataset.howtoVariant === current));
  }
  const theme = document.body.dataset.theme || 'felt';
  for (const [i, step] of STEPS[current].entries()) {
    const li = document.createElement('li');
    li.className = 'howto-step';
    li.dataset.step = String(i + 1);
    const picture = document.createElement('div');
    picture.className = 'howto-board';
    const board = new Board(picture, { onMove: () => {}, onRefused: () => {} });
    board.el.tabIndex = -1;
    board.el.removeAttribute('data-testid');
    board.picker.remove();
    board.el.setAttribute('aria-hidden', 'true');
    board.setOrientation(step.orientation || 'white');
    board.setLook('2d', theme);
    board.show(viewOf(step));
    const words = document.createElement('div');
    words.className = 'howto-words';
    const h = document.createElement('h3');
    h.textContent = `${i + 1}. ${step.title}`;
    const p = document.createElement('p');
    p.textContent = step.text;
    words.append(h, p);
    li.append(picture, words);
    list.append(li);
  }
}

/** Opens the steps of `variant` (standard has none: atomic's are shown). */
export function openHowToPlay(variant = 'atomic') {
  current = STEPS[variant] ? variant : 'atomic';
  opener = document.activeElement;
  $('how-to-play').hidden = false;
  render();
  $('howto-close').focus();
}

export function closeHowToPlay() {
  if ($('how-to-play').hidden) return;
  $('how-to-play').hidden = true;
  if (opener && opener.focus) opener.focus();
}

/** `variantNow()` names the variant of the game on screen, or null. */
export function bindHowToPlay(variantNow) {
  $('howto-open').addEventListener('click', () => openHowToPlay('atomic'));
  $('howto-open-game').addEventListener('click', () => openHowToPlay(variantNow() || 'atomic'));
  $('howto-close').addEventListener('click', closeHowToPlay);
  for (const tab of document.querySelectorAll('[data-howto-variant]')) {
    tab.addEventListener('click', () => { current = tab.dataset.howtoVariant; render(); });
  }
  $('how-to-play').addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.stopPropagation(); closeHowToPlay(); } });
  $('how-to-play').addEventListener('click', (e) => { if (e.target === $('how-to-play')) closeHowToPlay(); });
}
