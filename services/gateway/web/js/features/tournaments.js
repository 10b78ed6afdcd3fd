// The home screen's Tournaments: arenas and Swiss events upcoming, running
// and finished (`GET /api/tournament` and `GET /api/swiss`, asked again
// every 10 s while home is on screen),
// each with its countdown and a link to its page; and the form that
// creates one (`POST /api/tournament`), with the server's refusal in its
// own words. Names and descriptions are put on screen as text.

import { $, busy, homeShown } from '../page.js';
import * as api from '../tournament-api.js';
import { swissUrl, tournamentUrl } from '../router.js';
import { countdown, summary, swissCountdown, swissSummary } from '../tournament-text.js';

const REFRESH_MS = 10_000;
const SHOWN_EACH = 8;

let hooks = { openTournament: () => {}, openSwiss: () => {} };
let listed = null; // {data, at}
let timer = null;

/** `openTournament(id)` shows an arena's page, `openSwiss(id)` a Swiss's. */
export function initTournaments(given) {
  hooks = { ...hooks, ...given };
  $('tournament-form').addEventListener('submit', (e) => {
    e.preventDefault();
    busy($('tournament-create'), createTournament);
  });
  setInterval(() => { if (listed && homeShown()) renderCountdowns(); }, 1000);
}

/** Reads the list now, then every REFRESH_MS while home is on screen. */
export async function loadTournaments() {
  clearTimeout(timer);
  try {
    const none = { created: [], started: [], finished: [] };
    const [arenas, swiss] = await Promise.all([api.list(), api.listSwiss().catch(() => none)]);
    const data = {};
    for (const key of ['created', 'started', 'finished']) {
      data[key] = [...(swiss[key] || []).map((t) => ({ ...t, swiss: true })), ...(arenas[key] || [])];
    }
    listed = { data, at: performance.now() };
    renderLists();
  } catch (err) {
    $('tournaments-status').textContent = err.status === 503 || err.status === 0
      ? 'Tournaments are not available on this server right now.'
      : `Tournaments could not be read: ${err.message}`;
  }
  if (homeShown()) timer = setTimeout(loadTournaments, REFRESH_MS);
}

const GROUPS = [
  ['started', 'Running now'],
  ['created', 'Starting soon'],
  ['finished', 'Finished'],
];

function renderLists() {
  const { data } = listed;
  let any = false;
  for (const [key] of GROUPS) {
    const list = $(`tournaments-${key}`);
    const items = (data[key] || []).slice(0, SHOWN_EACH);
    any ||= items.length > 0;
    list.replaceChildren(...items.map(item));
    list.closest('.tournament-group').hidden = !items.length;
  }
  $('tournaments-status').textContent = any ? '' : 'No tournaments yet: create the first one below.';
  renderCountdowns();
}

function item(t) {
  const li = document.createElement('li');
  li.dataset.tournament = t.id;
  if (t.swiss) li.dataset.system = 'swiss';
  const a = document.createElement('a');
  a.href = t.swiss ? swissUrl(t.id) : tournamentUrl(t.id);
  a.className = 'tournament-link';
  a.textContent = t.swiss ? `${t.name} Swiss` : t.fullName || t.name;
  a.addEventListener('click', (e) => {
    e.preventDefault();
    if (t.swiss) hooks.openSwiss(t.id);
    else hooks.openTournament(t.id);
  });
  const what = document.createElement('span');
  what.className = 'tournament-what';
  what.textContent = t.swiss ? swissSummary(t) : summary(t);
  const when = document.createElement('span');
  when.className = 'tournament-when';
  when.dataset.t = JSON.stringify(t.swiss
    ? { swiss: true, status: t.status, round: t.round, nbRounds: t.nbRounds, nextRound: t.nextRound || null, now: Date.now() }
    : { status: t.status, secondsToStart: t.secondsToStart, startsAt: t.startsAt, finishesAt: t.finishesAt, now: Date.now() });
  li.append(a, what, when);
  return li;
}

function renderCountdowns() {
  for (const el of document.querySelectorAll('[data-testid="tournaments"] .tournament-when')) {
    const t = JSON.parse(el.dataset.t);
    const elapsed = (Date.now() - t.now) / 1000;
    if (t.swiss) {
      const text = swissCountdown(t, elapsed).text;
      if (el.textContent !== text) el.textContent = text;
      continue;
    }
    // The list gives no time to the end: a running arena's end is read on this device's clock.
    const secondsToFinish = t.status === 20 ? (t.finishesAt - t.now) / 1000 : 0;
    const text = countdown({ ...t, secondsToFinish }, elapsed).text;
    if (el.textContent !== text) el.textContent = text;
  }
}

async function createTournament() {
  const status = $('tournament-create-status');
  status.textContent = '';
  status.dataset.kind = '';
  const [limit, increment] = $('tournament-clock').value.split('+').map(Number);
  const form = {
    name: $('tournament-name-input').value.trim(),
    variant: $('tournament-variant').value,
    clockTime: String(limit),
    clockIncrement: String(increment),
    minutes: $('tournament-minutes').value,
    waitMinutes: $('tournament-wait').value,
    rated: String($('tournament-rated').checked),
    description: $('tournament-description-input').value.trim(),
  };
  try {
    const t = await api.create(form);
    $('tournament-form').reset();
    hooks.openTournament(t.id);
  } catch (err) {
    status.textContent = `Not created: ${err.message}`;
    status.dataset.kind = 'error';
  }
}
