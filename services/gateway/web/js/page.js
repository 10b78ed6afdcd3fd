// What every screen and feature uses of the page itself: elements by their
// `data-testid` (the contract the browser tests drive), which screen is
// shown, the notice line, and buttons that stay disabled while they work.

export const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

export function showScreen(which) {
  $('home').hidden = which !== 'home';
  $('game').hidden = which !== 'game';
  $('player-page').hidden = which !== 'player';
  $('tournament-page').hidden = which !== 'tournament';
  $('swiss-page').hidden = which !== 'swiss';
  $('analysis-board').hidden = which !== 'analysis';
  $('puzzles').hidden = which !== 'puzzles';
  document.body.dataset.screen = which;
  placeNotice(which);
}

/**
 * Where the notice line shows: over the page's foot at home, and on the
 * game screen over the top of the side panel, away from the board and
 * both clocks (a notice must never hide the player's time).
 */
function placeNotice(which) {
  const el = $('notice');
  const side = document.querySelector('#game .side');
  const home = which === 'game' && side ? side : document.body;
  if (el.parentElement !== home) home.prepend(el);
}

export const homeShown = () => !$('home').hidden;
export const gameShown = () => !$('game').hidden;

let noticeTimer = null;

/** A line above the page for a few seconds; errors stay longer. */
export function notice(text, kind = 'info') {
  const el = $('notice');
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { el.hidden = true; }, kind === 'error' ? 6000 : 3500);
}

/** Disables `button` while `work` runs, so a double click sends one request. */
export async function busy(button, work) {
  button.disabled = true;
  try { await work(); } finally { button.disabled = false; }
}
