// Settings kept in this browser (`fogblast.settings`): board size, a piece
// set apart from the board's theme, coordinates, auto-queen, premoves,
// confirm each move, zen mode, sounds and notifications. The header's
// Settings button opens them as a dialog; each applies at once: to the page
// (CSS variables and body attributes), to the board (its piece set), or
// where it is asked (`setting(name)`: premoves, auto-queen, confirm).

import { THEMES } from '../../art/pieces.js';
import { $ } from '../page.js';
import * as store from '../store.js';
import { soundOn, setSound } from './looks.js';

export const DEFAULTS = {
  boardSize: 100, // percent of the largest board the screen holds
  pieces: '', // a theme's pieces, or '' for the board theme's own
  coords: true,
  autoQueen: false,
  premoves: true,
  confirmMove: false,
  zen: false,
  opponentChat: true, // the opponent's lines in the game's chat (js/features/chat.js)
  notify: false, // notifications in the background (js/features/notify.js), once the browser allows them
};

const settings = { ...DEFAULTS, ...store.get(store.KEYS.settings, {}) };
let board = null;
let hooks = { render: () => {} };
let opener = null;

/** The current value of one setting. */
export const setting = (key) => settings[key];

export function set(key, value) {
  settings[key] = value;
  store.set(store.KEYS.settings, settings);
  apply();
}

function apply() {
  const size = Math.min(100, Math.max(50, Number(settings.boardSize) || 100));
  document.body.style.setProperty('--board-scale', String(size / 100));
  document.body.dataset.coords = settings.coords ? 'on' : 'off';
  document.body.dataset.zen = settings.zen ? 'on' : 'off';
  if (board) board.setPieceSet(THEMES.some((t) => t.id === settings.pieces) ? settings.pieces : null);
  $('setting-board-size').value = String(size);
  $('setting-board-size-value').textContent = `${size}%`;
  $('setting-pieces').value = settings.pieces || '';
  for (const [id, key] of CHECKS) $(id).checked = !!settings[key];
  $('setting-sound').checked = soundOn();
  hooks.render();
}

const CHECKS = [
  ['setting-coords', 'coords'],
  ['setting-auto-queen', 'autoQueen'],
  ['setting-premoves', 'premoves'],
  ['setting-confirm-move', 'confirmMove'],
  ['setting-zen', 'zen'],
  ['setting-opponent-chat', 'opponentChat'],
];

export function openSettings() {
  opener = document.activeElement;
  $('settings').hidden = false;
  $('settings-close').focus();
}

export function closeSettings() {
  if ($('settings').hidden) return;
  $('settings').hidden = true;
  if (opener && opener.isConnected) opener.focus({ preventScroll: true });
}

/** Zen mode on or off (its own key and the button that leaves it). */
export function toggleZen() {
  set('zen', !settings.zen);
}

/** Binds the dialog and applies what is stored to the page and `theBoard`; `render()` redraws the game. */
export function startSettings(theBoard, given) {
  board = theBoard;
  hooks = { ...hooks, ...given };
  const pieces = $('setting-pieces');
  for (const t of THEMES) {
    const option = document.createElement('option');
    option.value = t.id;
    option.textContent = t.name;
    pieces.append(option);
  }
  pieces.addEventListener('change', () => set('pieces', pieces.value));
  const size = $('setting-board-size');
  size.addEventListener('input', () => set('boardSize', Number(size.value)));
  for (const [id, key] of CHECKS) $(id).addEventListener('change', () => set(key, $(id).checked));
  $('setting-sound').addEventListener('change', () => setSound($('setting-sound').checked));
  $('settings-open').addEventListener('click', openSettings);
  $('settings-close').addEventListener('click', closeSettings);
  $('zen-exit').addEventListener('click', () => set('zen', false));
  const overlay = $('settings');
  overlay.addEventListener('click', (e) => { if (e.target === overlay) closeSettings(); });
  overlay.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); closeSettings(); } });
  apply();
}
