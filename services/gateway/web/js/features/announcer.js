// The page's voice for screen readers: a visually hidden live region
// (`[data-testid=announcer]`, aria-live polite) that says what js/announce.js
// makes of each game frame. Sentences that come together (a move and the
// end it caused) are said together; a sentence said twice in a row is
// still read out, as the region is emptied first and filled a moment later.

import { $ } from '../page.js';

let timer = null;
let queued = '';

/** Reads `text` out (nothing for null or empty). */
export function announce(text) {
  if (!text) return;
  const el = $('announcer');
  clearTimeout(timer);
  queued = queued ? `${queued} ${text}` : text;
  el.textContent = '';
  timer = setTimeout(() => {
    el.textContent = queued;
    queued = '';
  }, 60);
}
