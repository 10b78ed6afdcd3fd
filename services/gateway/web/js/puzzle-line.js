// A puzzle's line as the Puzzles screen plays it (js/features/puzzles.js):
// the squares a fog view hides, what follows a move, and how a rating
// change reads. No DOM, so node tests import it.

/** The squares a view FEN fogs (`*`), by name. */
export function foggedSquares(fen) {
  const out = new Set();
  const rows = (fen || '').split(' ')[0].split('/');
  rows.forEach((row, r) => {
    let file = 0;
    for (const ch of row) {
      if (/[1-8]/.test(ch)) { file += Number(ch); continue; }
      if (ch === '*' && file < 8) out.add('abcdefgh'[file] + String(8 - r));
      file += 1;
    }
  });
  return out;
}

/**
 * What follows the solver's move `uci` at ply `ply` of `solution`: `reply`
 * (the opponent's answer to play next), `solved` (the line is complete), or
 * `judge` (not the solution's move: the server says whether it still wins).
 */
export function nextStep(solution, ply, uci) {
  if (uci !== solution[ply]) return 'judge';
  return ply + 1 >= solution.length ? 'solved' : 'reply';
}

/** A rating change as shown: `+12`, `−7`, `±0`. */
export function changeText(change) {
  const n = Math.round(change || 0);
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${-n}`;
  return '±0';
}
