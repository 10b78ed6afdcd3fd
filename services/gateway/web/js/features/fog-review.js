// After a fog of war game: the hindsight review. Beside the game, for the
// ply on screen (the replay's), the board as white saw it, the true board
// and the board as black saw it; the moments worth going back to (a king
// left to a piece out of sight, a king capture or a free piece let pass),
// each a button that steps the replay there; a line per player. Read once
// per game from `/api/games/{id}/review`, which answers only once the game
// is over and archived (202 until then), so nothing of it exists while the
// game is played.

import { $ } from '../page.js';
import { escapeHtml } from '../text.js';
import { boardSquares, momentText, reviewedPly, summaryText } from '../fog-review.js';
import { isOfflineGame } from '../../offline/offline.js';
import { replayPly, setReplay } from './replay.js';

const RETRY_MS = 2000;
const TRIES = 15;

/** Per game id: the review, once read; `'waiting'` while it is asked for. */
const reviews = new Map();
let rerender = () => {};

/** `render()` redraws the game screen when a review arrives. */
export function initFogReview(render) {
  rerender = render;
  $('fog-review-moments').addEventListener('click', (e) => {
    const button = e.target.closest('[data-ply]');
    if (button) setReplay(Number(button.dataset.ply));
  });
}

async function load(id, tries = 0) {
  const response = await fetch(`/api/games/${encodeURIComponent(id)}/review`, { headers: { accept: 'application/json' } })
    .catch(() => null);
  if (response && response.status === 200) {
    reviews.set(id, await response.json());
    rerender();
  } else if (tries < TRIES && (!response || response.status === 202 || response.status >= 500)) {
    // 202: ended, not archived yet (the rating service takes it from the
    // stream of finished games).
    setTimeout(() => load(id, tries + 1), RETRY_MS);
  }
}

function board(label, testid, text) {
  const cells = boardSquares(text)
    .map((s) => `<span class="mini-sq ${s.light ? 'light' : 'dark'}${s.fogged ? ' fogged' : ''}" data-square="${s.square}">${s.glyph}</span>`)
    .join('');
  return `<figure class="mini-board-wrap"><div class="mini-board" data-testid="${testid}" role="img" aria-label="${escapeHtml(label)}">${cells}</div><figcaption>${escapeHtml(label)}</figcaption></figure>`;
}

/** Shows the review of `model`, a finished fog game on the server. */
export function renderFogReview(model, { hotseat }) {
  const section = $('fog-review');
  const shown = model.variant === 'fog' && model.status === 'ended' && !hotseat && !isOfflineGame(model.id);
  section.hidden = !shown;
  if (!shown) return;
  if (!reviews.has(model.id)) {
    reviews.set(model.id, 'waiting');
    load(model.id);
  }
  const review = reviews.get(model.id);
  if (review === 'waiting') return;
  const at = reviewedPly(review, replayPly());
  const boards = at
    ? board('What white saw', 'fog-review-white', at.white.board) + board('The board', 'fog-review-true', at.fen)
      + board('What black saw', 'fog-review-black', at.black.board)
    : '';
  setHtml('fog-review-boards', boards);
  setHtml('fog-review-summary', ['white', 'black'].map((c) => `<li>${escapeHtml(summaryText(c, review[c]))}</li>`).join(''));
  // A moment's ply is the position it happened in: after that many plies.
  const moments = review.moments.map((m) => `<li><button type="button" data-ply="${m.ply}">${escapeHtml(momentText(m))}</button></li>`);
  setHtml('fog-review-moments', moments.length ? moments.join('') : '<li>Nothing missed and nothing left to the fog.</li>');
}

function setHtml(testid, html) {
  const el = $(testid);
  if (el.dataset.html !== html) {
    el.innerHTML = html;
    el.dataset.html = html;
  }
}
