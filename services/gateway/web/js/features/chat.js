// The game's chat, under the game's buttons: the players' room for the two
// seated people (who may switch to the spectators' room) and the spectators'
// room for everyone else (docs/protocol.md, `chat`). Lines come from the
// model (a `state`'s last lines and every `chat` frame); they are put on
// screen as text, never as markup. The page adds no line of its own: in fog
// of war nothing about the board may reach the chat. A player may hide the
// opponent's lines (the `opponentChat` setting, kept in this browser).

import { $ } from '../page.js';
import { isSeat, other } from '../model.js';
import { errorText } from '../text.js';
import { setting, set as setSetting } from './settings.js';

export const CHAT_MAX = 140;

/** What a refused line says, politely. */
export function chatErrorText(err) {
  switch (err && err.code) {
    case 'rate_limited': return 'You are writing faster than the chat allows: wait a few seconds, then send it again.';
    case 'bad_request': return `A message is 1 to ${CHAT_MAX} characters.`;
    case 'not_your_game': return "Only the two players write in the players' room.";
    case 'game_over': return 'This game is no longer open for chat.';
    default: return errorText(err);
  }
}

let hooks = { model: () => null, send: () => Promise.resolve(), me: () => null, render: () => {} };
/** The room shown, per game: a player's choice between the two rooms. */
let chosen = { game: null, room: null };

/** `model()` is the game on screen, `send(frame)` sends a chat command for it, `me()` this player's id. */
export function initChat(given) {
  hooks = { ...hooks, ...given };
  $('chat-form').addEventListener('submit', (e) => { e.preventDefault(); sendLine(); });
  $('chat-input').addEventListener('input', () => { renderCount(); $('chat-error').hidden = true; });
  for (const room of ['players', 'spectators']) {
    $(`chat-room-${room}`).addEventListener('click', () => {
      const model = hooks.model();
      if (!model) return;
      chosen = { game: model.id, room };
      renderChat(model, { shown: true });
    });
  }
  $('chat-opponent').addEventListener('change', (e) => setSetting('opponentChat', e.target.checked));
}

/** The room on screen: spectators read only theirs; players start in theirs. */
export function roomOf(model) {
  if (!isSeat(model)) return 'spectators';
  return chosen.game === model.id && chosen.room ? chosen.room : 'players';
}

/** The opponent's id, when the seat on screen has one. */
function opponentOf(model) {
  if (!isSeat(model)) return null;
  const p = model.players[other(model.you)];
  return p && !p.computer && p.id ? p.id : null;
}

/** The lines of the room on screen, without the opponent's when they are hidden. */
export function visibleLines(model, room, hideOpponent) {
  const opponent = hideOpponent ? opponentOf(model) : null;
  return model.chat.filter((l) => l.room === room && !(opponent && l.player === opponent));
}

/** Renders the chat of `model`; `shown` is false where the game has no chat (offline, one device, zen). */
export function renderChat(model, { shown }) {
  const el = $('chat');
  el.hidden = !shown || !model;
  if (el.hidden) return;
  const seat = isSeat(model);
  const room = roomOf(model);
  const hide = seat && !setting('opponentChat');
  for (const r of ['players', 'spectators']) {
    const b = $(`chat-room-${r}`);
    b.hidden = !seat;
    b.setAttribute('aria-pressed', String(r === room));
  }
  $('chat-opponent-field').hidden = !seat;
  $('chat-opponent').checked = !hide;
  $('chat-muted').hidden = !hide || !opponentOf(model);
  const lines = visibleLines(model, room, hide);
  const list = $('chat-lines');
  const key = `${model.id}|${room}|${hide}|${model.chat.length}|${lines.length}`;
  if (list.dataset.key !== key) {
    list.dataset.key = key;
    list.replaceChildren(...lines.map((l) => lineElement(l, model)));
    if (!lines.length) {
      const empty = document.createElement('li');
      empty.className = 'chat-empty';
      empty.textContent = room === 'players' ? 'No messages between the players yet.' : 'No messages from spectators yet.';
      list.append(empty);
    }
    list.scrollTop = list.scrollHeight;
  }
  const input = $('chat-input');
  input.placeholder = room === 'players' ? 'Write to your opponent' : 'Write to the spectators';
  document.getElementById('chat-input-label').textContent = room === 'players' ? "Write in the players' room" : "Write in the spectators' room";
  renderCount();
}

function lineElement(line, model) {
  const li = document.createElement('li');
  li.className = 'chat-line';
  li.dataset.player = line.player;
  const seat = ['white', 'black'].find((c) => model.players[c] && model.players[c].id === line.player);
  if (seat) li.dataset.seat = seat;
  const who = document.createElement('span');
  who.className = 'chat-name';
  who.textContent = line.name || 'Anonymous';
  const text = document.createElement('span');
  text.className = 'chat-text';
  text.textContent = line.text;
  li.append(who, ' ', text);
  return li;
}

function renderCount() {
  const n = [...$('chat-input').value].length;
  const count = $('chat-count');
  count.textContent = `${n}/${CHAT_MAX}`;
  count.dataset.full = String(n >= CHAT_MAX);
}

function showError(text) {
  const el = $('chat-error');
  el.textContent = text;
  el.hidden = false;
}

async function sendLine() {
  const model = hooks.model();
  const input = $('chat-input');
  if (!model) return;
  const text = input.value.trim();
  if (!text || [...text].length > CHAT_MAX) { showError(chatErrorText({ code: 'bad_request' })); return; }
  $('chat-error').hidden = true;
  input.value = '';
  renderCount();
  try {
    await hooks.send({ t: 'chat', game: model.id, room: roomOf(model), text });
  } catch (err) {
    // Refused: the line is given back to be sent again.
    if (!input.value) { input.value = text; renderCount(); }
    showError(chatErrorText(err));
  }
}
