// Tournaments in words, pure (node tests read them): the countdown to the
// start or the end, a clock as "3+2", ranks, a tournament's one-line
// summary and what a win is worth in an arena game. The arena's scoring
// (docs/tournaments.md): a win 2, a draw 1, double on fire (after two wins
// in a row), and one more point for a berserk win.

/** Seconds as "1:05" or "1:02:03". */
export function duration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
}

/**
 * The countdown of a tournament as the API gave it `elapsed` seconds ago:
 * `{phase: 'upcoming'|'running'|'finished', text}`.
 */
export function countdown(t, elapsed = 0) {
  if (t.status === 30 || t.isFinished) return { phase: 'finished', text: 'Finished' };
  if (t.status === 10) {
    const left = (t.secondsToStart ?? 0) - elapsed;
    return { phase: 'upcoming', text: left > 0 ? `Starts in ${duration(left)}` : 'Starting…' };
  }
  const left = (t.secondsToFinish ?? secondsTo(t.finishesAt, t)) - elapsed;
  return { phase: 'running', text: left > 0 ? `Ends in ${duration(left)}` : 'Finishing: the last games are played out' };
}

/** Seconds to `ms` from the tournament's own clock (its start and `secondsToStart` when listed). */
function secondsTo(ms, t) {
  if (typeof ms !== 'number' || typeof t.startsAt !== 'number') return 0;
  return Math.max(0, (ms - t.startsAt) / 1000 - (t.secondsToStart || 0));
}

/** A clock `{limit, increment}` in seconds as lichess writes it: "3+2", "½+0". */
export function clockText(clock) {
  if (!clock) return '';
  const minutes = clock.limit / 60;
  const m = minutes === 0.5 ? '½' : minutes === 0.25 ? '¼' : Number.isInteger(minutes) ? String(minutes) : minutes.toFixed(1);
  return `${m}+${clock.increment}`;
}

/** "1st", "2nd", "3rd", "4th", "11th". */
export function ordinal(n) {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${{ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] || 'th'}`;
}

/** "Atomic · 3+2 · 60 min · rated · 4 players". */
export function summary(t) {
  const players = t.nbPlayers === 1 ? '1 player' : `${t.nbPlayers || 0} players`;
  return [t.variant && t.variant.name, clockText(t.clock), `${t.minutes} min`, t.rated ? 'rated' : 'casual', players].filter(Boolean).join(' · ');
}

/** What the seat's next result scores in an arena game: `fire` doubles, a berserk win adds one. */
export function atStake({ fire = false, berserk = false } = {}) {
  const win = (fire ? 4 : 2) + (berserk ? 1 : 0);
  const draw = fire ? 2 : 1;
  const parts = [`a win scores ${win}`, `a draw ${draw}`];
  return `${fire ? 'On fire: ' : ''}${parts.join(', ')}${berserk ? ' (berserk: the extra point needs a game of 14 plies)' : ''}.`;
}

/** The sheet's scores, each a digit ("2240"), as lichess sends them: a list of numbers. */
export function sheetScores(sheet) {
  return String((sheet && sheet.scores) || '').split('').map(Number);
}

/** Points in whole points as a player reads them: "2", "1½", "½". */
export function pointsText(points) {
  const whole = Math.floor(points);
  const half = points - whole >= 0.5;
  return half ? `${whole || ''}½` : String(whole);
}

/**
 * A Swiss's countdown from `GET /api/swiss/{id}` given `elapsed` seconds
 * ago: to its start, to the next round (after the wait that follows the
 * last game of a round), or the round being played.
 */
export function swissCountdown(t, elapsed = 0) {
  if (t.status === 'finished') return { phase: 'finished', text: 'Finished' };
  const left = t.nextRound ? t.nextRound.in - elapsed : null;
  if (t.status === 'created') {
    return { phase: 'upcoming', text: left > 0 ? `Starts in ${duration(left)}` : 'Starting…' };
  }
  if (left === null) return { phase: 'running', text: t.round ? `Round ${t.round} of ${t.nbRounds} being played` : 'Running' };
  return { phase: 'waiting', text: left > 0 ? `Round ${t.round + 1} starts in ${duration(left)}` : `Round ${t.round + 1} starting…` };
}

const VARIANT_NAMES = { atomic: 'Atomic', atomic960: 'Atomic960', fogOfWar: 'Fog of War', chess960: 'Chess960', standard: 'Standard' };

/** "Atomic · 3+2 · 3 rounds · casual · 5 players". */
export function swissSummary(t) {
  const players = t.nbPlayers === 1 ? '1 player' : `${t.nbPlayers || 0} players`;
  return [VARIANT_NAMES[t.variant] || t.variant, clockText(t.clock), `${t.nbRounds} rounds`, t.rated ? 'rated' : 'casual', players].filter(Boolean).join(' · ');
}
