// Checks the specs share: what the page shows against what the frames say.

import assert from 'node:assert/strict';
import { parseFen } from './chess.js';
import { T } from './player.js';

/**
 * The `result` element tells the game's result: the score (1-0, 0-1, ½-½ or
 * 1/2-1/2), or in words who won ("Black wins", "You won", "You lost") or
 * that it was a draw.
 */
export function resultPattern(result, you) {
  if (result === '1/2-1/2') return /1\/2-1\/2|½[-–]½|draw|stalemate/i;
  const winner = result === '1-0' ? 'white' : 'black';
  const won = you === winner;
  const words = [result.replace('-', '[-–]'), `${winner} win`];
  if (you === 'white' || you === 'black') words.push(won ? 'you win|you won|victory' : 'you lose|you lost|defeat');
  return new RegExp(words.join('|'), 'i');
}

export async function resultText(player, end) {
  const el = player.el('result');
  await el.waitFor({ state: 'visible' });
  const want = resultPattern(end.result, player.view().you);
  await player.page
    .waitForFunction(
      ([sel, src, flags]) => new RegExp(src, flags).test(document.querySelector(sel)?.textContent || ''),
      [T('result'), want.source, want.flags],
      { timeout: 5000 },
    )
    .catch(() => {});
  const text = (await el.textContent()) || '';
  assert.match(text, want, `${player.name}: the result element says "${text.trim()}" for a ${end.result} (${end.reason})`);
}

/** Waits until the board's pieces are those of `fen`; returns the board read. */
export async function boardShows(player, fen, what = 'the board') {
  const want = parseFen(fen);
  let board;
  const deadline = Date.now() + 5000;
  for (;;) {
    board = await player.readBoard();
    const drawn = Object.fromEntries(Object.entries(board).filter(([, s]) => s.piece).map(([sq, s]) => [sq, s.piece]));
    const same = JSON.stringify(sorted(drawn)) === JSON.stringify(sorted(want));
    if (same) return board;
    if (Date.now() > deadline) {
      assert.deepEqual(sorted(drawn), sorted(want), `${player.name}: ${what} shows other pieces than the position ${fen}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function sorted(o) {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
