// A tournament's page (`/#tournament=ID`): its name and description (as
// text: markup shows as typed), the countdown to its start or end, the
// join / pause / withdraw button, the player's rank and own games, the
// standings a page at a time with each player's sheet (🔥 when on fire),
// the top games being played (a click watches one) and the podium at the
// end. While it is on screen the page asks `GET /api/tournament/{id}`
// every 2.5 s; a pairing (`paired` with `tournament`) opens the game at once.

import { $, busy, showScreen } from '../page.js';
import * as api from '../tournament-api.js';
import * as store from '../store.js';
import { countdown, ordinal, sheetScores, summary } from '../tournament-text.js';
import { playerUrl, gameUrl, tournamentUrl } from '../router.js';

const POLL_MS = 2500;
const PAGE_SIZE = 10;

let hooks = { openGame: () => {}, home: () => {}, me: () => null, name: () => '' };
/** The tournament on screen: {id, page, data, at (performance.now() of the answer), timer}. */
let shown = null;

export const tournamentShown = () => !$('tournament-page').hidden;
export const shownTournament = () => (shown ? shown.id : null);

/** `openGame(id)` watches or plays a game; `home()` goes home; `me()` is this player's id; `name()` the display name. */
export function initTournamentPage(given) {
  hooks = { ...hooks, ...given };
  $('tournament-home').addEventListener('click', () => hooks.home());
  $('tournament-action').addEventListener('click', () => busy($('tournament-action'), act));
  $('tournament-prev').addEventListener('click', () => turnPage(-1));
  $('tournament-next').addEventListener('click', () => turnPage(1));
  setInterval(() => { if (shown && tournamentShown()) renderCountdown(); }, 500);
}

export function showTournament(id) {
  if (!shown || shown.id !== id) {
    stopPolling();
    shown = { id, page: 1, data: null, at: 0, timer: null };
    clear();
  }
  showScreen('tournament');
  const url = tournamentUrl(id);
  if (location.pathname + location.hash !== url) history.replaceState(null, '', url);
  refresh();
}

function stopPolling() {
  if (shown) clearTimeout(shown.timer);
}

function clear() {
  $('tournament-name').textContent = 'Tournament';
  $('tournament-description').textContent = '';
  $('tournament-info').textContent = '';
  $('tournament-countdown').textContent = '';
  $('tournament-status').textContent = 'Loading…';
  $('tournament-action').hidden = true;
  $('tournament-me').textContent = '';
  $('tournament-standings').querySelector('tbody').textContent = '';
  $('tournament-playing').textContent = '';
  $('tournament-podium-box').hidden = true;
  $('tournament-my-games').textContent = '';
}

/** Asks for the tournament now, then again every POLL_MS while its page is on screen. */
async function refresh() {
  if (!shown) return;
  const wanted = shown;
  clearTimeout(wanted.timer);
  try {
    const data = await api.get(wanted.id, wanted.page);
    if (shown !== wanted) return;
    // A Swiss reached by an arena's address (a game's "back to the tournament").
    if (data.system === 'swiss' && hooks.swiss) return hooks.swiss(wanted.id);
    wanted.data = data;
    wanted.at = performance.now();
    $('tournament-status').textContent = '';
    render(data);
  } catch (err) {
    if (shown !== wanted) return;
    $('tournament-status').textContent = err.status === 404 ? 'There is no such tournament.' : err.message;
  }
  if (shown === wanted && tournamentShown()) wanted.timer = setTimeout(refresh, POLL_MS);
}

function turnPage(step) {
  if (!shown || !shown.data) return;
  const pages = Math.max(1, Math.ceil((shown.data.nbPlayers || 0) / PAGE_SIZE));
  shown.page = Math.min(pages, Math.max(1, shown.page + step));
  refresh();
}

async function act() {
  if (!shown || !shown.data) return;
  const t = shown.data;
  const joined = t.me && !t.me.withdraw;
  try {
    if (joined) await api.withdraw(t.id);
    else await api.join(t.id, hooks.name());
    $('tournament-status').textContent = '';
  } catch (err) {
    $('tournament-status').textContent = `Refused: ${err.message}`;
  }
  await refresh();
}

function render(t) {
  $('tournament-name').textContent = t.fullName || t.name;
  document.title = `${t.fullName || t.name} · Fogblast`;
  $('tournament-description').textContent = t.description || '';
  $('tournament-description').hidden = !t.description;
  $('tournament-info').textContent = summary(t);
  $('tournament-page').dataset.status = String(t.status);
  renderCountdown();
  renderAction(t);
  renderMe(t);
  renderStandings(t);
  renderPlaying(t);
  renderPodium(t);
  renderMyGames(t);
}

function renderCountdown() {
  const t = shown && shown.data;
  if (!t) return;
  const c = countdown(t, (performance.now() - shown.at) / 1000);
  const el = $('tournament-countdown');
  if (el.textContent !== c.text) el.textContent = c.text;
  el.dataset.phase = c.phase;
}

function renderAction(t) {
  const button = $('tournament-action');
  button.hidden = !!t.isFinished;
  const joined = t.me && !t.me.withdraw;
  button.textContent = joined ? (t.isStarted ? 'Pause' : 'Withdraw') : t.me ? 'Join again' : 'Join';
  button.dataset.action = joined ? 'withdraw' : 'join';
  button.classList.toggle('primary', !joined);
}

function renderMe(t) {
  const el = $('tournament-me');
  el.textContent = '';
  if (!t.me) {
    el.textContent = t.isFinished ? '' : 'Join to be paired: each game you finish, you are paired again within seconds.';
    return;
  }
  const parts = [];
  if (t.me.rank && !(t.me.withdraw && !t.isStarted)) parts.push(`You are ${ordinal(t.me.rank)}.`);
  if (t.me.withdraw && !t.isFinished) parts.push(t.isStarted ? 'You are paused: join again to be paired.' : 'You withdrew.');
  else if (!t.isStarted) parts.push('You are in: the pairing starts with the tournament.');
  el.append(parts.join(' '));
  if (t.me.gameId) {
    const a = document.createElement('a');
    a.href = gameUrl(t.me.gameId);
    a.dataset.testid = 'tournament-my-game';
    a.textContent = 'Back to your game';
    el.append(' ', a);
  }
}

function renderStandings(t) {
  const rows = $('tournament-standings').querySelector('tbody');
  const players = (t.standing && t.standing.players) || [];
  const me = hooks.me();
  rows.replaceChildren(...players.map((p) => standingRow(p, me, t.isStarted ? '(paused)' : '(withdrawn)')));
  $('tournament-standings').hidden = !players.length;
  $('tournament-nobody').hidden = !!players.length;
  const pages = Math.max(1, Math.ceil((t.nbPlayers || 0) / PAGE_SIZE));
  const page = (t.standing && t.standing.page) || 1;
  $('tournament-pager').hidden = pages <= 1;
  $('tournament-page-of').textContent = `Page ${page} of ${pages}`;
  $('tournament-prev').disabled = page <= 1;
  $('tournament-next').disabled = page >= pages;
}

function standingRow(p, me, away) {
  const tr = document.createElement('tr');
  tr.dataset.player = p.id;
  if (p.id === me) tr.classList.add('me');
  if (p.withdraw) tr.classList.add('paused');
  const rank = cell(String(p.rank));
  const who = document.createElement('td');
  const a = document.createElement('a');
  a.href = playerUrl(p.id);
  a.textContent = p.name || p.id;
  who.append(a);
  if (p.withdraw) who.append(' ', Object.assign(document.createElement('span'), { className: 'paused-mark', textContent: away }));
  const sheet = document.createElement('td');
  sheet.className = 'sheet';
  sheet.dataset.testid = 'tournament-sheet';
  for (const score of sheetScores(p.sheet)) {
    const s = document.createElement('span');
    s.className = `sheet-score${score >= 4 ? ' double' : ''}`;
    s.textContent = String(score);
    sheet.append(s);
  }
  if (p.sheet && p.sheet.fire) {
    const fire = document.createElement('span');
    fire.className = 'fire';
    fire.dataset.testid = 'tournament-fire';
    fire.setAttribute('role', 'img');
    fire.setAttribute('aria-label', 'on fire: the next game scores double');
    fire.title = 'On fire: the next game scores double';
    fire.textContent = '🔥';
    sheet.append(fire);
  }
  tr.append(rank, who, cell(String(p.rating ?? '')), sheet, cell(String(p.score ?? 0)), cell(String(p.nbGames ?? 0)));
  return tr;
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

/** Names by id, from the standings page on screen. */
function namesOf(t) {
  return new Map(((t.standing && t.standing.players) || []).map((p) => [p.id, p.name || p.id]));
}

function renderPlaying(t) {
  const list = $('tournament-playing');
  const names = namesOf(t);
  const games = (t.playing || []).slice(0, 6);
  list.replaceChildren(...games.map((g) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.game = g.id;
    button.textContent = `${names.get(g.white) || g.white} – ${names.get(g.black) || g.black}`;
    button.setAttribute('aria-label', `Watch ${button.textContent}`);
    button.addEventListener('click', () => hooks.openGame(g.id));
    li.append(button);
    return li;
  }));
  $('tournament-playing-box').hidden = !games.length;
}

function renderPodium(t) {
  const box = $('tournament-podium-box');
  const podium = t.isFinished && Array.isArray(t.podium) ? t.podium : [];
  box.hidden = !podium.length;
  $('tournament-podium').replaceChildren(...podium.map((p) => {
    const li = document.createElement('li');
    li.dataset.rank = String(p.rank);
    const medal = document.createElement('span');
    medal.className = 'medal';
    medal.setAttribute('aria-hidden', 'true');
    medal.textContent = ['🥇', '🥈', '🥉'][p.rank - 1] || '';
    const name = document.createElement('span');
    name.className = 'podium-name';
    name.textContent = p.name || p.id;
    const score = document.createElement('span');
    score.className = 'podium-score';
    score.textContent = `${p.score} points`;
    li.append(medal, ' ', name, ' ', score);
    return li;
  }));
}

/** This player's games in the tournament, as this browser saw them paired. */
function renderMyGames(t) {
  const games = myGames(t.id);
  if (t.me && t.me.gameId && !games.some((g) => g.game === t.me.gameId)) games.push({ game: t.me.gameId, opponent: '' });
  const list = $('tournament-my-games');
  list.replaceChildren(...games.map((g, i) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = gameUrl(g.game);
    a.textContent = `Game ${i + 1}${g.opponent ? ` against ${g.opponent}` : ''}${g.color ? ` (${g.color})` : ''}`;
    li.append(a);
    return li;
  }));
  $('tournament-my-games-box').hidden = !games.length;
}

/** The games this browser was paired into in tournament `id`: [{game, color, opponent}]. */
export function myGames(id) {
  const all = store.get(store.KEYS.tournamentGames, {});
  return Array.isArray(all[id]) ? all[id].slice() : [];
}

/** Remembers a tournament pairing (a `paired` frame with `tournament`), for the player's own games list. */
export function rememberPairing(f) {
  if (!f.tournament) return;
  const all = store.get(store.KEYS.tournamentGames, {});
  const games = Array.isArray(all[f.tournament]) ? all[f.tournament] : [];
  if (games.some((g) => g.game === f.game)) return;
  games.push({ game: f.game, color: f.color, opponent: (f.opponent && f.opponent.name) || '' });
  // A few tournaments are enough to remember.
  const kept = Object.fromEntries(Object.entries({ ...all, [f.tournament]: games.slice(-100) }).slice(-5));
  store.set(store.KEYS.tournamentGames, kept);
}

/** Leaves the page: no more polling. */
export function leaveTournament() {
  stopPolling();
}
