// A name that follows the player (docs/security.md, "Recovery codes"): in
// the home screen's "Play as yourself on another device", a recovery code
// made for this browser's player (shown once), revoked, or typed in to
// become the player a code carries: its token and name are kept, and the
// page starts again as them.

import { $, busy } from '../page.js';
import * as store from '../store.js';

async function call(method, path, { token = null, body = null } = {}) {
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.message || `the server answered ${response.status}`);
  return answer;
}

function status(text) {
  $('recovery-status').textContent = text;
}

function token() {
  const t = store.get(store.KEYS.token);
  if (!t) throw new Error('Connect once first: this browser has no player yet.');
  return t;
}

async function issue() {
  try {
    const answer = await call('POST', '/api/recovery', { token: token(), body: { name: store.get(store.KEYS.name, '') || '' } });
    $('recovery-code').textContent = answer.code;
    $('recovery-code-box').hidden = false;
    status('Write it down or copy it now: it is not shown again. Any earlier code no longer works.');
  } catch (err) { status(`No code: ${err.message}`); }
}

async function revoke() {
  try {
    const answer = await call('DELETE', '/api/recovery', { token: token() });
    $('recovery-code-box').hidden = true;
    status(answer.revoked ? 'Your code is revoked: it no longer works.' : 'You had no code to revoke.');
  } catch (err) { status(`Not revoked: ${err.message}`); }
}

async function redeem(code) {
  try {
    const answer = await call('POST', '/api/recovery/redeem', { body: { code } });
    store.set(store.KEYS.token, answer.token);
    store.set(store.KEYS.name, answer.name || '');
    // The game in progress was the previous player's.
    store.set(store.KEYS.game, null);
    status(`You are ${answer.name || 'your player'} again: reloading…`);
    history.replaceState(null, '', '/');
    location.reload();
  } catch (err) { status(`That code did not work: ${err.message}`); }
}

export function bindRecovery() {
  $('recovery-issue').addEventListener('click', () => busy($('recovery-issue'), issue));
  $('recovery-revoke').addEventListener('click', () => busy($('recovery-revoke'), revoke));
  $('recovery-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = $('recovery-input').value.trim();
    if (!code) { status('Type the recovery code first.'); return; }
    busy($('recovery-use'), () => redeem(code));
  });
}
