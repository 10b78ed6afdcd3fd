// A finished game's computer analysis as the page shows it, from the
// gateway's `GET /api/games/{id}/analysis` (docs/protocol.md): white's
// winning percentage at every position for the evaluation graph, each
// move's mark (?!, ?, ??) with the better move, and each side's accuracy.
// Pure: no page, no fetch, so node tests it.

/** White's winning percentage from a position's score, as lichess counts it
 * (scores past ±1000 cp and mates count ±1000; a finished position its result). */
export function whiteWinPercent(position, before = 50) {
  if (!position) return before;
  let cp;
  if (position.mate != null) cp = 1000 * Math.sign(position.mate);
  else if (position.cp != null) cp = Math.max(-1000, Math.min(1000, position.cp));
  else if (position.result === '1-0') return 100;
  else if (position.result === '0-1') return 0;
  else if (position.result === '1/2-1/2') cp = 0;
  else return before;
  return 50 + 50 * (2 / (1 + Math.exp(-0.00368208 * cp)) - 1);
}

/** What the page draws from an analysis: `null` until one is done. */
export function analysisView(analysis) {
  if (!analysis || analysis.state !== 'done') return null;
  const wins = [];
  for (const position of analysis.positions || []) wins.push(whiteWinPercent(position, wins.length ? wins[wins.length - 1] : 50));
  const marks = {};
  for (const move of analysis.moves || []) {
    if (move.mark) marks[move.ply - 1] = { mark: move.mark, judgement: move.judgement, better: move.better || null };
  }
  return { wins, marks, accuracy: analysis.accuracy || { white: null, black: null } };
}

/** The graph's line through `wins` (0-100, white up) on a `width` × `height` box, as an SVG path. */
export function graphPath(wins, width, height) {
  if (wins.length < 2) return '';
  const step = width / (wins.length - 1);
  return wins
    .map((win, i) => `${i ? 'L' : 'M'}${(i * step).toFixed(1)},${(height - (win / 100) * height).toFixed(1)}`)
    .join(' ');
}

/** A mark's words for a screen reader and a tooltip: `Blunder. Better: g1f3`. */
export function markTitle(mark) {
  const name = mark.judgement ? mark.judgement[0].toUpperCase() + mark.judgement.slice(1) : '';
  return mark.better ? `${name}. Better: ${mark.better}` : name;
}
