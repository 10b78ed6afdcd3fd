// The home screen's leaderboard (`/api/leaderboard/{variant}`, the top ten
// settled ratings of the chosen variant), each name a link to the player's page.

import { $ } from '../page.js';
import * as archive from '../archive.js';
import { playerUrl } from '../router.js';

export async function loadLeaderboard() {
  const variant = $('leaderboard-variant').value;
  const list = $('leaderboard');
  try {
    const board = await archive.leaderboard(variant, 10);
    list.textContent = '';
    const entries = (board && board.entries) || [];
    if (!board) { list.innerHTML = '<li class="empty">The leaderboard is unavailable right now.</li>'; return; }
    if (!entries.length) { list.innerHTML = '<li class="empty">No settled ratings yet: play rated games!</li>'; return; }
    for (const e of entries) {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = playerUrl(e.player);
      a.textContent = e.name || 'Anonymous';
      li.append(a, ` — ${Math.round(e.rating)}`);
      list.append(li);
    }
  } catch { list.innerHTML = '<li class="empty">The leaderboard is unavailable right now.</li>'; }
}
