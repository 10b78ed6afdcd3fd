// A Swiss event's page (`/#swiss=ID`): its name and description (as text:
// markup shows as typed), the countdown to its start or to the next round,
// the join / withdraw button, the round being played with its pairings
// (each board's result once in, the bye, who is not paired), and the
// standings with both tie-breaks (Buchholz, Sonneborn-Berger). While it is
// on screen the page asks `GET /api/swiss/{id}` every 2.5 s; a pairing
// (`paired` with `tournament`) opens the game at once, as in an arena.

import { $, busy, showScreen } from '../page.js';
import * as api from '../tournament-api.js';
import { ordinal, pointsText, swissCountdown, swissSummary } from '../tournament-text.js';
import { gameUrl, playerUrl, swissUrl } from '../router.js';

const POLL_MS = 2500;

let hooks = { openGame: () => {}, home: () => {}, me: () => null, name: () => '' };
/** The Swiss on screen: {id, data, at (performance.now() of the answer), timer}. */
let shown = null;

export const swissShown = () => !$('swiss-page').hidden;

/** `openGame(id)` watches or plays a game; `home()` goes home; `me()` is this player's id; `name()` the display name. */
export function initSwissPage(given) {
  hooks = { ...hooks, ...given };
  $('swiss-home').addEventListener('click', () => hooks.home());
  $('swiss-action').addEventListener('click', () => busy($('swiss-action'), act));
  setInterval(() => { if (shown && swissShown()) renderCountdown(); }, 500);
}

export function showSwiss(id) {
  if (!shown || shown.id !== id) {
    leaveSwiss();
    shown = { id, data: null, at: 0, timer: null };
    clear();
  }
  showScreen('swiss');
  const url = swissUrl(id);
  if (location.pathname + location.hash !== url) history.replaceState(null, '', url);
  refresh();
}

/** Leaves the page: no more polling. */
export function leaveSwiss() {
  if (shown) clearTimeout(shown.timer);
}

function clear() {
  $('swiss-name').textContent = 'Swiss';
  for (const id of ['swiss-description', 'swiss-info', 'swiss-countdown', 'swiss-me', 'swiss-round']) $(id).textContent = '';
  $('swiss-status').textContent = 'Loading…';
  $('swiss-action').hidden = true;
  $('swiss-pairings').querySelector('tbody').textContent = '';
  $('swiss-standings').querySelector('tbody').textContent = '';
  $('swiss-bye').textContent = '';
}

async function refresh() {
  if (!shown) return;
  const wanted = shown;
  clearTimeout(wanted.timer);
  try {
    const data = await api.getSwiss(wanted.id);
    if (shown !== wanted) return;
    wanted.data = data;
    wanted.at = performance.now();
    $('swiss-status').textContent = '';
    render(data);
  } catch (err) {
    if (shown !== wanted) return;
    $('swiss-status').textContent = err.status === 404 ? 'There is no such Swiss tournament.' : err.message;
  }
  if (shown === wanted && swissShown()) wanted.timer = setTimeout(refresh, POLL_MS);
}

async function act() {
  if (!shown || !shown.data) return;
  const t = shown.data;
  const joined = t.me && !t.me.withdraw;
  try {
    if (joined) await api.withdrawSwiss(t.id);
    else await api.joinSwiss(t.id, hooks.name());
    $('swiss-status').textContent = '';
  } catch (err) {
    $('swiss-status').textContent = `Refused: ${err.message}`;
  }
  await refresh();
}

function render(t) {
  $('swiss-name').textContent = `${t.name} Swiss`;
  document.title = `${t.name} Swiss · Fogblast`;
  $('swiss-description').textContent = t.description || '';
  $('swiss-description').hidden = !t.description;
  $('swiss-info').textContent = swissSummary(t);
  $('swiss-page').dataset.status = t.status;
  renderCountdown();
  renderAction(t);
  renderMe(t);
  renderRound(t);
  renderStandings(t);
}

function renderCountdown() {
  const t = shown && shown.data;
  if (!t) return;
  const c = swissCountdown(t, (performance.now() - shown.at) / 1000);
  const el = $('swiss-countdown');
  if (el.textContent !== c.text) el.textContent = c.text;
  el.dataset.phase = c.phase;
}

function renderAction(t) {
  const button = $('swiss-action');
  button.hidden = t.status === 'finished';
  const joined = t.me && !t.me.withdraw;
  button.textContent = joined ? 'Withdraw' : t.me ? 'Join again' : 'Join';
  button.dataset.action = joined ? 'withdraw' : 'join';
  button.classList.toggle('primary', !joined);
}

function renderMe(t) {
  const el = $('swiss-me');
  el.textContent = '';
  if (!t.me) {
    el.textContent = t.status === 'finished' ? '' : 'Join to be paired from the next round: one game a round.';
    return;
  }
  const parts = [];
  if (t.round > 0) parts.push(`You are ${ordinal(t.me.rank)}.`);
  if (t.me.withdraw && t.status !== 'finished') parts.push('You withdrew: join again to be paired from the next round.');
  else if (t.status === 'created') parts.push('You are in: round 1 is paired at the start.');
  el.append(parts.join(' '));
  if (t.me.gameId) {
    const a = document.createElement('a');
    a.href = gameUrl(t.me.gameId);
    a.dataset.testid = 'swiss-my-game';
    a.textContent = 'Back to your game';
    el.append(' ', a);
  }
}

/** Names by id, from the standings. */
function namesOf(t) {
  return new Map((t.standing || []).map((p) => [p.id, p.username || p.id]));
}

function renderRound(t) {
  const round = (t.rounds || [])[t.rounds.length - 1];
  $('swiss-round-box').hidden = !round;
  if (!round) return;
  const names = namesOf(t);
  $('swiss-round').textContent = `Round ${round.round} of ${t.nbRounds}${round.chess960Position != null ? ` · start position ${round.chess960Position}` : ''}`;
  const rows = round.boards.map((b, i) => {
    const tr = document.createElement('tr');
    tr.dataset.game = b.id;
    const game = document.createElement('td');
    const watch = document.createElement('button');
    watch.type = 'button';
    watch.textContent = String(i + 1);
    watch.setAttribute('aria-label', `Watch board ${i + 1}`);
    watch.addEventListener('click', () => hooks.openGame(b.id));
    game.append(watch);
    tr.append(game, cell(names.get(b.white) || b.white), cell(b.result || 'playing'), cell(names.get(b.black) || b.black));
    return tr;
  });
  $('swiss-pairings').querySelector('tbody').replaceChildren(...rows);
  const notes = [];
  if (round.bye) notes.push(`Bye (1 point): ${names.get(round.bye) || round.bye}.`);
  if (round.absent && round.absent.length) notes.push(`Not paired: ${round.absent.map((p) => names.get(p) || p).join(', ')}.`);
  $('swiss-bye').textContent = notes.join(' ');
}

function renderStandings(t) {
  const players = t.standing || [];
  const me = hooks.me();
  const rows = players.map((p) => {
    const tr = document.createElement('tr');
    tr.dataset.player = p.id;
    if (p.id === me) tr.classList.add('me');
    if (p.absent) tr.classList.add('paused');
    const who = document.createElement('td');
    const a = document.createElement('a');
    a.href = playerUrl(p.id);
    a.textContent = p.username || p.id;
    who.append(a);
    if (p.absent && t.status !== 'finished') who.append(' ', Object.assign(document.createElement('span'), { className: 'paused-mark', textContent: '(withdrawn)' }));
    tr.append(cell(String(p.rank)), who, cell(String(p.rating ?? '')), cell(pointsText(p.points)), cell(pointsText(p.buchholz)), cell(String(p.sonnebornBerger)));
    return tr;
  });
  $('swiss-standings').querySelector('tbody').replaceChildren(...rows);
  $('swiss-standings').hidden = !players.length;
  $('swiss-nobody').hidden = !!players.length;
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}
