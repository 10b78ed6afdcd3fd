// The header's looks: theme, flat or 3D board, sounds; remembered in
// localStorage (`fogblast.look`) and applied to the page and the board.

import { THEMES } from '../../art/pieces.js';
import { $ } from '../page.js';
import * as store from '../store.js';
import * as sound from '../sound.js';

// Sounds are on unless turned off (they start at the first click or key, as browsers require).
const look = { mode: '2d', theme: 'felt', sound: true, ...store.get(store.KEYS.look, {}) };
let board = null;

function applyLook() {
  const ids = THEMES.map((t) => t.id);
  if (!ids.includes(look.theme)) look.theme = ids[0] || 'felt';
  if (look.mode !== '3d') look.mode = '2d';
  document.body.dataset.theme = look.theme;
  document.body.dataset.mode = look.mode;
  $('theme').value = look.theme;
  const toggle = $('toggle-3d');
  toggle.setAttribute('aria-pressed', String(look.mode === '3d'));
  toggle.textContent = look.mode === '3d' ? '2D' : '3D';
  toggle.title = look.mode === '3d' ? 'Show the flat board' : 'Show the 3D board';
  $('sound').checked = !!look.sound;
  const inSettings = $('setting-sound');
  if (inSettings) inSettings.checked = !!look.sound;
  sound.setEnabled(!!look.sound);
  board.setLook(look.mode, look.theme);
  store.set(store.KEYS.look, look);
}

export const soundOn = () => !!look.sound;

/** Sounds on or off, from the header's box or the settings. */
export function setSound(on) {
  look.sound = on;
  if (board) applyLook();
  if (on) sound.play('move');
}

/** Fills the theme list, binds the controls and applies the stored look to `theBoard`. */
export function startLooks(theBoard) {
  board = theBoard;
  const select = $('theme');
  for (const t of THEMES) {
    const option = document.createElement('option');
    option.value = t.id;
    option.textContent = t.name;
    select.append(option);
  }
  select.addEventListener('change', () => { look.theme = select.value; applyLook(); });
  $('toggle-3d').addEventListener('click', () => { look.mode = look.mode === '3d' ? '2d' : '3d'; applyLook(); });
  $('sound').addEventListener('change', () => setSound($('sound').checked));
  applyLook();
}
