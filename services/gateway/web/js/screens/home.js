// The home screen: your name; play the computer (online, or offline in this
// browser); a board for a friend, also with both players on this device;
// join by code; quick pairing; the games being played (Watch); the lobby;
// tournaments; the leaderboard; your games; and
// "Back to your game" while one is in progress.

import { $, busy, notice, homeShown } from '../page.js';
import * as connections from '../connections.js';
import * as store from '../store.js';
import { openGame, goHome } from '../game-session.js';
import { errorText } from '../text.js';
import { seatGuest } from '../features/hotseat.js';
import { playOffline } from '../features/offline-play.js';
import { subscribeLobby } from '../features/lobby.js';
import { startSeek, cancelSeek, renderSeek, seeking } from '../features/seek.js';
import { loadLeaderboard } from '../features/leaderboard.js';
import { loadProfile } from '../features/your-games.js';
import { loadTournaments } from '../features/tournaments.js';
import { loadWatch } from '../features/watch.js';

/** A time control select's value ("3+2", "none") as a `clock`. */
export function parseClock(value) {
  if (!value || value === 'none') return null;
  const [m, i] = value.split('+').map(Number);
  return { initial_ms: m * 60000, increment_ms: (i || 0) * 1000 };
}

/**
 * Stores a new display name. Names travel in hello, so the connection says
 * hello again on a fresh socket; a request made meanwhile (the click that
 * blurred the name field) waits for that hello and carries the new name.
 */
function setName(value) {
  store.set(store.KEYS.name, value);
  $('player-name').value = value;
  connections.online()?.sayHelloAgain();
}

let inviteCode = null;

/** An invite link was opened: the card asks the guest's name before joining. */
export function showInvite(code) {
  inviteCode = code;
  $('invite-card-code').textContent = code;
  $('invite-name').value = store.get(store.KEYS.name, '') || '';
  $('invite-card').hidden = false;
  $('invite-name').focus();
}

function hideInvite() {
  inviteCode = null;
  $('invite-card').hidden = true;
}

export function bindHome() {
  const name = $('player-name');
  name.value = store.get(store.KEYS.name, '') || '';
  name.addEventListener('change', () => {
    const value = name.value.trim().slice(0, 30);
    setName(value);
    notice(value ? `You are now “${value}”.` : 'You play without a name.');
  });

  $('invite-card').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = inviteCode;
    if (!code) return;
    const value = $('invite-name').value.trim().slice(0, 30);
    busy($('invite-join'), async () => {
      if (value !== (store.get(store.KEYS.name, '') || '')) setName(value);
      hideInvite();
      await joinByCode(code);
    });
  });

  const variant = $('computer-variant');
  // Chess960 is offered for standard and atomic, never fog of war (the
  // server refuses it); offline too, where the page draws the start.
  const offer960 = () => {
    $('computer-chess960-field').hidden = variant.value === 'fog';
    $('friend-chess960-field').hidden = $('friend-variant').value === 'fog';
  };
  const fogNote = () => { $('computer-note').hidden = variant.value !== 'fog'; offer960(); };
  variant.addEventListener('change', fogNote);
  $('friend-variant').addEventListener('change', offer960);
  fogNote();
  const chess960 = (form) => !$(`${form}-chess960-field`).hidden && $(`${form}-chess960`).checked;

  $('computer-form').addEventListener('submit', (e) => {
    e.preventDefault();
    busy($('computer-start'), async () => {
      try {
        const offline = playOffline($('computer-offline').checked, $('computer-clock').value);
        const conn = offline ? connections.offline() : connections.online();
        const create = {
          t: 'create', variant: variant.value, color: $('computer-color').value,
          clock: parseClock($('computer-clock').value), opponent: 'computer', level: $('computer-level').value,
        };
        if (chess960('computer')) create.chess960 = true;
        const created = await conn.request(create);
        openGame(created.game);
      } catch (err) { notice(errorText(err), 'error'); }
    });
  });

  $('friend-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const minutes = Number($('friend-minutes').value || 0);
    const increment = Number($('friend-increment').value || 0);
    if (!Number.isFinite(minutes) || minutes < 0 || minutes > 60 || !Number.isInteger(minutes)) {
      notice('Minutes: a whole number from 0 (no clock) to 60.', 'error'); return;
    }
    if (!Number.isFinite(increment) || increment < 0 || increment > 180 || !Number.isInteger(increment)) {
      notice('Increment: a whole number of seconds from 0 to 180.', 'error'); return;
    }
    const hotseat = $('friend-hotseat').checked;
    const rated = $('friend-rated').checked && !hotseat;
    busy($('friend-create'), async () => {
      try {
        const created = await connections.current().request({
          t: 'create', variant: $('friend-variant').value, color: $('friend-color').value,
          clock: minutes > 0 ? { initial_ms: minutes * 60000, increment_ms: increment * 1000 } : null,
          opponent: 'human', rated, ...(chess960('friend') ? { chess960: true } : {}),
        });
        if (hotseat) await seatGuest(created);
        else openGame(created.game);
      } catch (err) { notice(errorText(err), 'error'); }
    });
  });

  $('join-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = $('join-code').value.trim().toUpperCase();
    if (!/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/.test(code)) {
      notice('A join code is 8 letters and digits, like 2Y3FFY65.', 'error'); return;
    }
    busy($('join-submit'), () => joinByCode(code));
  });

  $('seek-form').addEventListener('submit', (e) => {
    e.preventDefault();
    startSeek({ variant: $('seek-variant').value, clock: parseClock($('seek-clock').value), rated: $('seek-rated').checked });
  });
  $('seek-cancel').addEventListener('click', cancelSeek);
  $('leaderboard-variant').addEventListener('change', loadLeaderboard);
  $('resume-game').addEventListener('click', () => {
    const saved = store.get(store.KEYS.game);
    if (saved) openGame(saved.id, { hotseat: !!saved.hotseat });
  });
}

/** Joins the open game with `code` and shows it; our own invite link goes back to our game. */
export async function joinByCode(code) {
  try {
    const joined = await connections.current().request({ t: 'join', code });
    openGame(joined.game);
  } catch (err) {
    const saved = store.get(store.KEYS.game);
    if (err.code === 'conflict' && saved) {
      // Our own invite link, or a seat already ours: go back to the game.
      openGame(saved.id, { hotseat: !!saved.hotseat });
      return;
    }
    notice(err.code === 'not_found' ? 'No open game has that code: it may have been taken or expired.' : errorText(err), 'error');
    if (!homeShown()) goHome();
  }
}

/** Home came on screen: the banner, the lobby, the seek line, the leaderboard and your games. */
export function renderHome() {
  if (!inviteCode) $('invite-card').hidden = true;
  const saved = store.get(store.KEYS.game);
  $('resume-banner').hidden = !saved;
  subscribeLobby();
  // A line about an earlier seek ("Opponent found!", "Cancelled.") is old news back home.
  renderSeek(seeking() ? null : '');
  // One after the other: a gateway without an archive is then asked once.
  loadLeaderboard().then(loadProfile);
  loadTournaments();
  loadWatch();
}
