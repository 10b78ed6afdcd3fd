// Arena and Swiss tournaments over HTTP, in lichess's shapes (docs/bots.md,
// services/gateway/src/bot_api/tournaments.rs): the list, one tournament
// with a page of its standings, and with the player's token (the one the
// WebSocket's `welcome` gave, kept in localStorage) creating, joining and
// withdrawing. Every call has a deadline; a refusal rejects with
// `{status, message}`, the server's own words.

import * as store from './store.js';

const DEADLINE_MS = 8000;
const enc = encodeURIComponent;

async function call(method, url, { form = null, auth = false } = {}) {
  const headers = { accept: 'application/json' };
  const token = store.get(store.KEYS.token);
  if (token && (auth || method === 'GET')) headers.authorization = `Bearer ${token}`;
  if (auth && !token) throw { status: 401, message: 'Not connected yet: wait a moment and try again.' };
  const body = form ? new URLSearchParams(form) : undefined;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), DEADLINE_MS);
  let response;
  try {
    response = await fetch(url, { method, headers, body, signal: controller.signal });
  } catch {
    throw { status: 0, message: 'The server could not be reached: try again.' };
  } finally {
    clearTimeout(timer);
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const message = data && typeof data.error === 'string' ? data.error : `the server answered ${response.status}`;
    throw { status: response.status, message };
  }
  return data;
}

/** `{created, started, finished}`. */
export const list = () => call('GET', '/api/tournament');

/** One tournament with page `page` of its standings (and `me` when this player joined). */
export const get = (id, page = 1) => call('GET', `/api/tournament/${enc(id)}?page=${page}`);

/** A new arena from the form's fields (lichess's names); resolves to the tournament. */
export const create = (form) => call('POST', '/api/tournament', { form, auth: true });

/** Joins (or comes back from a pause) under `name`, the page's display name, when there is one. */
export const join = (id, name) => call('POST', `/api/tournament/${enc(id)}/join`, { form: name ? { name } : {}, auth: true });

/** Leaves an arena yet to start, or pauses in a running one. */
export const withdraw = (id) => call('POST', `/api/tournament/${enc(id)}/withdraw`, { auth: true });

/** Swiss events `{created, started, finished}`. */
export const listSwiss = () => call('GET', '/api/swiss');

/** One Swiss with its rounds and standings (and `me` when this player joined). */
export const getSwiss = (id) => call('GET', `/api/swiss/${enc(id)}`);

/** Joins a Swiss (or comes back after withdrawing) under `name`. */
export const joinSwiss = (id, name) => call('POST', `/api/swiss/${enc(id)}/join`, { form: name ? { name } : {}, auth: true });

/** Withdraws from a Swiss: not paired from the next round on. */
export const withdrawSwiss = (id) => call('POST', `/api/swiss/${enc(id)}/withdraw`, { auth: true });
