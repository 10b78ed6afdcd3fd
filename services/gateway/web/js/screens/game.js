// The game screen: it renders the model on screen (js/model.js) — board,
// players and clocks, status, result, invite, offers, buttons, move list,
// replay controls, PGN link, curtain — and binds the screen's buttons to
// the game session's commands. Rendering reads the model and the features'
// view state and changes only what differs, so it may run at any time.

import { $, busy, notice } from '../page.js';
import * as connections from '../connections.js';
import * as sound from '../sound.js';
import { isOfflineGame } from '../../offline/offline.js';
import {
  activeModel, act, currentGame, isHotseat, modelOf, openGame, goHome, pendingMove,
} from '../game-session.js';
import {
  boardView, browseFrames, claimSecondsLeft, clockMs, clockRunning, firstMoveSecondsLeft, isSeat, movesMadeBy, other, turnColor, vsComputer,
} from '../model.js';
import { COLOR_NAME, OUTCOME_TEXT, errorText, escapeHtml, fmtClock, outcomeFor, resultText, statusText } from '../text.js';
import { curtainUp, lift } from '../features/hotseat.js';
import { replayPly, setReplay, stepReplay, replayKey, backToLive, resetReplay } from '../features/replay.js';
import { renderAnalyseButton } from '../features/analysis-board.js';
import { changeOf, playerRating } from '../features/ratings.js';
import { offlinePgn } from '../features/offline-play.js';
import { linkPgn } from '../pgn.js';
import { confirmOnClick, reset as resetConfirm } from '../features/confirm.js';
import { premoveAllowed, queuedFor, playPremove } from '../features/premove.js';
import { material } from '../material.js';
import { playerUrl } from '../router.js';
import { ROLE_NAMES } from '../../art/pieces.js';
import { renderChat } from '../features/chat.js';
import { renderTournamentGame } from '../features/tournament-game.js';
import { setting } from '../features/settings.js';
import { analysisMarks, markTitle, renderComputerAnalysis } from '../features/computer-analysis.js';
import { renderFogReview } from '../features/fog-review.js';

let board = null;
let flipped = false;

export function resetGameView() {
  flipped = false;
  resetConfirm($('resign'));
  resetConfirm($('abort'));
}

function playerLabel(model, color) {
  const p = model.players[color];
  if (!p) return { name: 'Waiting for an opponent…', rating: '' };
  let label = p.computer ? (p.name || 'Computer') : (p.name || 'Anonymous');
  // Offline the player is already called "You".
  if (!isHotseat() && model.you === color && label.toLowerCase() !== 'you') label += ' (you)';
  if (isHotseat()) label = COLOR_NAME[color];
  return { name: label, rating: playerRating(p, model.variant) };
}

function statusOf(model, myTurn, now) {
  return statusText(model, { myTurn, hotseat: isHotseat(), firstMoveLeft: firstMoveSecondsLeft(model, now) });
}

/** Renders the model on screen; each part below changes only what differs. */
export function renderGame() {
  const model = activeModel();
  if (!model) {
    $('status').textContent = currentGame() ? 'Loading the game…' : '';
    return;
  }
  const seat = isSeat(model);
  const turn = turnColor(model);
  const myTurn = seat && model.status === 'playing' && turn === model.you;
  const curtain = curtainUp(model);
  // A takeback may take away the position being looked at.
  if (replayPly() != null && !browseFrames(model)?.[replayPly()]) resetReplay();
  const bottom = orientation(model, turn);
  board.setOrientation(bottom);
  const pending = !!pendingMove();
  const view = boardView(model, { curtain, replayPly: replayPly(), myTurn, pending });
  const premove = premoveAllowed(model, { myTurn, seat, hotseat: isHotseat(), curtain }) && replayPly() == null;
  view.premove = premove ? model.you[0] : null;
  view.queued = premove || myTurn ? queuedFor(model.id) : null;
  board.show(view);
  if (!pending) playPremove(model, board, myTurn);
  const gameEl = $('game');
  gameEl.dataset.variant = model.variant;
  gameEl.dataset.status = model.status;
  gameEl.dataset.you = model.you;
  renderCurtain(curtain, turn);
  renderPlayers(model, bottom, turn);
  renderClocks();
  renderStatus(model, myTurn, curtain);
  renderInvite(model, seat);
  renderControls(model, seat && !curtain);
  renderTournamentGame(model, { canAct: seat && !curtain && replayPly() == null });
  renderChat(model, { shown: !isHotseat() && !isOfflineGame(model.id) && !model.archived && !setting('zen') });
  renderMoves(model, curtain);
  renderReplay(model);
  renderPgn(model);
  renderAnalyseButton(model);
  renderComputerAnalysis(model, { hotseat: isHotseat() });
  renderFogReview(model, { hotseat: isHotseat() });
  const ended = model.status === 'ended';
  document.title = ended ? `${resultText(model)} · Fogblast` : myTurn ? 'Your turn · Fogblast' : 'Fogblast';
}

/** The colour at the bottom: yours; on one device in fog of war, the side to move; flipped on request. */
function orientation(model, turn) {
  let bottom = isSeat(model) ? model.you : 'white';
  if (isHotseat()) bottom = model.variant === 'fog' && model.status !== 'ended' ? turn : modelOf('main').you;
  return flipped ? other(bottom) : bottom;
}

function renderCurtain(curtain, turn) {
  const curtainEl = $('curtain');
  curtainEl.hidden = !curtain;
  if (!curtain) return;
  $('curtain-ready').textContent = `I'm ${COLOR_NAME[turn]} — show my board`;
  curtainEl.querySelector('.curtain-title').textContent = `${COLOR_NAME[turn]} to move`;
  curtainEl.querySelector('.curtain-text').textContent = `Pass the device to ${COLOR_NAME[turn]}. ${COLOR_NAME[other(turn)]}, look away.`;
}

/** Players and clocks, placed by orientation. */
function renderPlayers(model, bottom, turn) {
  const counted = material(model);
  for (const [where, color] of [['bottom', bottom], ['top', other(bottom)]]) {
    const strip = document.querySelector(`[data-strip="${where}"]`);
    const label = playerLabel(model, color);
    renderName(strip.querySelector('.player-name'), label.name, linkable(model, color));
    strip.querySelector('.player-rating').textContent = label.rating;
    strip.dataset.color = color;
    const presence = strip.querySelector('.presence');
    presence.textContent = model.gone === color ? 'left the game' : '';
    const toMove = model.status === 'playing' && turn === color;
    strip.classList.toggle('to-move', toMove);
    strip.querySelector('.turn-mark').hidden = !toMove;
    renderMaterial(strip.querySelector('.material'), color, counted && counted[color]);
    const clock = $(`clock-${color}`);
    if (clock.parentElement !== strip) strip.append(clock);
  }
}

/** The player of `color` whose page may be opened: a person with an archive id, not on this device alone. */
function linkable(model, color) {
  const p = model.players[color];
  return p && !p.computer && typeof p.id === 'string' && p.id && !isHotseat() && !isOfflineGame(model.id) ? p.id : null;
}

/** A name in a strip, a link to the player's page when there is one. */
function renderName(el, name, id) {
  const key = `${name}|${id || ''}`;
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.textContent = '';
  if (!id) { el.textContent = name; return; }
  const a = document.createElement('a');
  a.href = playerUrl(id);
  a.textContent = name;
  a.title = `${name}: ratings and games`;
  el.append(a);
}

/** The pieces `color` took, drawn small, and its lead in points ("+3"); nothing when not to be shown. */
function renderMaterial(el, color, counted) {
  el.dataset.testid = `material-${color}`;
  const taken = counted ? counted.taken : [];
  const ahead = counted && counted.ahead ? `+${counted.ahead}` : '';
  const key = `${board.pieceTheme}|${taken.join('')}|${ahead}`;
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.dataset.ahead = counted && counted.ahead != null ? String(counted.ahead) : '';
  const them = color === 'white' ? 'b' : 'w';
  el.innerHTML = taken.map((r) => `<span class="taken" data-role="${r}" data-color="${them}">${board.icon(them, r)}</span>`).join('')
    + (ahead ? `<span class="ahead">${ahead}</span>` : '');
  const words = taken.map((r) => ROLE_NAMES[r]).join(', ');
  el.setAttribute('aria-label', taken.length || ahead ? `${color === 'white' ? 'White' : 'Black'} took ${words || 'nothing'}${ahead ? `, ${ahead}` : ''}` : '');
  el.hidden = !taken.length && !ahead;
}

/** The status line, the result and the rating change. */
function renderStatus(model, myTurn, curtain) {
  const ended = model.status === 'ended';
  $('status').textContent = statusOf(model, myTurn && !curtain, performance.now());
  $('status').dataset.turn = myTurn ? 'you' : 'other';
  const resultBox = document.querySelector('.result-box');
  resultBox.hidden = !ended;
  $('result').textContent = ended ? resultText(model) : '';
  // Both players on one device: nobody on screen is "you".
  const outcome = isHotseat() ? null : outcomeFor(model);
  const banner = $('result-banner');
  banner.hidden = !outcome;
  banner.dataset.outcome = outcome || '';
  banner.textContent = outcome ? OUTCOME_TEXT[outcome] : '';
  const ratingEl = $('rating-change');
  const rating = changeOf(model.id);
  ratingEl.hidden = !(ended && rating);
  ratingEl.textContent = rating || '';
  ratingEl.classList.toggle('down', !!rating && rating.startsWith('-'));
}

/** The invite link and code while the other seat is free. */
function renderInvite(model, seat) {
  const invite = $('invite');
  invite.hidden = !(model.status === 'waiting' && model.code && seat);
  $('invite-alt').hidden = isHotseat();
  if (invite.hidden) return;
  const url = `${location.origin}${model.invite || `/g/${model.code}`}`;
  $('invite-link').textContent = url;
  $('invite-link').href = url;
  $('invite-code').textContent = model.code;
}

/** Offers to answer and the buttons; `canAct`: a seat whose board is not under the curtain. */
function renderControls(model, canAct) {
  const seat = isSeat(model);
  const playing = model.status === 'playing';
  const ended = model.status === 'ended';
  const opp = other(model.you);
  show('[data-prompt="draw"]', canAct && playing && model.drawOffer === opp);
  show('[data-prompt="takeback"]', canAct && playing && model.takebackOffer === opp);
  show('[data-prompt="rematch"]', canAct && ended && model.rematchOffer === opp && !model.rematchGame && !isHotseat());
  show('[data-prompt="gone"]', canAct && playing && model.gone === opp);
  if (canAct && playing && model.gone === opp) renderGone(model);

  // A game that moved on (or ended) drops a half-made confirmation.
  if (!playing) { resetConfirm($('resign')); if (model.status !== 'waiting') resetConfirm($('abort')); }
  // Until both sides have moved a game can be aborted for free: resigning then would be a needless loss.
  const bothMoved = movesMadeBy(model, 'white') > 0 && movesMadeBy(model, 'black') > 0;
  setButton('abort', canAct && (model.status === 'waiting' || (playing && !bothMoved)));
  setButton('resign', canAct && playing && bothMoved);
  // The computer plays every game out: no draw offers to it.
  setButton('offer-draw', canAct && playing && !vsComputer(model), {
    disabled: model.drawOffer === model.you,
    text: model.drawOffer === model.you ? 'Draw offered' : 'Offer draw',
  });
  // Fog of war has no takebacks: one would show what a move revealed, then hide it again.
  setButton('takeback', canAct && playing && model.variant !== 'fog' && movesMadeBy(model, model.you) > 0, {
    disabled: model.takebackOffer === model.you,
    text: vsComputer(model) ? 'Undo' : model.takebackOffer === model.you ? 'Takeback asked' : 'Takeback',
  });
  // A courtesy between people, outside tournaments, where time is part of the contest.
  setButton('give-time', canAct && playing && !!model.clock && !vsComputer(model) && !model.tournament && !isHotseat());
  setButton('rematch', seat && ended && !model.archived && !model.rematchGame && model.result !== null && model.rematchOffer !== opp, {
    disabled: model.rematchOffer === model.you,
    text: model.rematchOffer === model.you ? 'Rematch offered…' : 'Rematch',
  });
  $('new-game').textContent = ended || !seat ? 'New game' : 'Home';
  $('move-input-form').hidden = !(canAct && (playing || model.status === 'waiting'));
}

/** The replay's controls: stepping through a finished game, or looking back while it is played. */
function renderReplay(model) {
  const replayEl = $('replay');
  const frames = browseFrames(model);
  replayEl.hidden = !(frames && model.moves.length);
  const browsing = replayPly() != null && model.status !== 'ended';
  $('game').dataset.browsing = browsing ? 'true' : 'false';
  $('replay-live').hidden = !browsing;
  if (replayEl.hidden) return;
  const total = frames.length - 1;
  const ply = replayPly();
  const shown = ply == null ? total : ply;
  const first = frames.findIndex(Boolean);
  $('replay-ply').textContent = `${shown} / ${total}`;
  $('replay-start').disabled = shown <= first;
  $('replay-prev').disabled = shown <= first;
  $('replay-next').disabled = shown === total;
  $('replay-end').disabled = shown === total;
  $('replay-end').setAttribute('aria-label', model.status === 'ended' ? 'Final position' : 'Back to the game');
}

/** The PGN link: the archive's, or for an offline game the engine's as a data link. */
function renderPgn(model) {
  const ended = model.status === 'ended';
  const pgn = $('pgn-link');
  pgn.hidden = !(ended && model.result !== '*');
  if (ended && !isOfflineGame(model.id)) linkPgn(pgn, model.id);
  pgn.setAttribute('download', `fogblast-${model.id}.pgn`);
  if (ended && isOfflineGame(model.id)) offlinePgn(pgn, model.id);
}

let lastTick = 0;

/** The clocks (ticking every 100 ms), the claim countdown and the first-move countdown. */
export function renderClocks() {
  const model = activeModel();
  const now = performance.now();
  for (const color of ['white', 'black']) {
    const el = $(`clock-${color}`);
    if (!model || !model.clock) {
      el.hidden = true;
      el.classList.remove('running', 'low');
      continue;
    }
    el.hidden = false;
    const running = clockRunning(model, color);
    const ms = clockMs(model, color, now);
    const text = fmtClock(ms);
    if (el.textContent !== text) el.textContent = text;
    el.classList.toggle('running', running);
    el.classList.toggle('low', ms < 20000);
    if (running && ms < 10000 && ms > 0 && model.you === color) {
      const second = Math.floor(ms / 1000);
      if (second !== lastTick) { lastTick = second; sound.play('tick'); }
    }
  }
  const prompt = document.querySelector('[data-prompt="gone"]');
  if (model && model.gone && !prompt.hidden) renderGone(model);
  if (model && firstMoveSecondsLeft(model, now) != null && !curtainUp(model)) {
    const text = statusOf(model, isSeat(model) && turnColor(model) === model.you, now);
    if ($('status').textContent !== text) $('status').textContent = text;
  }
}

function renderGone(model) {
  const left = claimSecondsLeft(model, performance.now());
  const button = $('claim-victory');
  button.disabled = left > 0;
  const text = left > 0 ? `Claim victory in ${left} s` : 'Claim victory';
  if (button.textContent !== text) button.textContent = text;
}

/** The move list; `masked` (the curtain is up) names no move, not even the next player's own. */
function renderMoves(model, masked = false) {
  const list = $('moves');
  const hiddenText = 'a move was played';
  const items = [];
  const ply = replayPly();
  const shownPly = ply == null ? model.moves.length : ply;
  const frames = browseFrames(model);
  const marks = model.status === 'ended' ? analysisMarks(model.id) : {};
  for (let i = 0; i < model.moves.length; i += 2) {
    const row = [`<li class="move-row"><span class="move-no">${i / 2 + 1}.</span>`];
    for (const p of [i, i + 1]) {
      if (p >= model.moves.length) break;
      const uci = model.moves[p];
      let text;
      if (!uci || masked) text = hiddenText;
      else text = model.sans[p] || `${uci.slice(0, 2)}–${uci.slice(2)}`;
      const classes = ['move'];
      if (!uci || masked) classes.push('hidden-move');
      if (p === shownPly - 1) classes.push('current');
      const canShow = !masked && !!frames && !!frames[p + 1];
      const mark = marks[p];
      const marked = mark && !masked
        ? ` <span class="move-mark" data-judgement="${mark.judgement}" title="${escapeHtml(markTitle(mark))}" aria-label="${escapeHtml(markTitle(mark))}">${mark.mark}</span>`
        : '';
      row.push(`<span class="${classes.join(' ')}" data-ply="${p}"${canShow ? ' role="button" tabindex="-1"' : ''}>${escapeHtml(text)}${marked}</span>`);
    }
    row.push('</li>');
    items.push(row.join(''));
  }
  const html = items.join('');
  if (list.dataset.html !== html) {
    list.innerHTML = html;
    list.dataset.html = html;
    const current = list.querySelector('.current');
    if (current && ply == null) list.scrollTop = list.scrollHeight;
    else if (current) current.scrollIntoView({ block: 'nearest' });
  }
}

function show(selector, visible) {
  const el = document.querySelector(selector);
  if (el.hidden === visible) el.hidden = !visible;
}

function setButton(id, visible, { disabled = false, text = null } = {}) {
  const el = $(id);
  el.hidden = !visible;
  el.disabled = disabled;
  if (text != null && el.textContent !== text) el.textContent = text;
}

/** Binds the screen's buttons; `theBoard` is the board it renders into. */
export function bindGame(theBoard) {
  board = theBoard;
  // The curtain sits above the board.
  document.getElementById('board-wrap').append($('curtain'));
  confirmOnClick($('resign'), 'Confirm resign?', () => act({ t: 'resign' }));
  confirmOnClick($('abort'), 'Confirm abort?', () => act({ t: 'abort' }));
  $('offer-draw').addEventListener('click', () => act({ t: 'draw', action: 'offer' }));
  $('accept-draw').addEventListener('click', () => act({ t: 'draw', action: 'accept' }));
  $('decline-draw').addEventListener('click', () => act({ t: 'draw', action: 'decline' }));
  $('takeback').addEventListener('click', () => act({ t: 'takeback', action: 'request' }));
  $('accept-takeback').addEventListener('click', () => act({ t: 'takeback', action: 'accept' }));
  $('decline-takeback').addEventListener('click', () => act({ t: 'takeback', action: 'decline' }));
  $('claim-victory').addEventListener('click', () => act({ t: 'claim_victory' }));
  $('give-time').addEventListener('click', () => act({ t: 'give_time' }));
  const rematch = () => {
    const main = modelOf('main');
    if (!main) return;
    act({ t: 'rematch' }, main);
    // Same device: both players are here, so both agree at once.
    const guest = modelOf('guest');
    if (isHotseat() && guest) setTimeout(() => act({ t: 'rematch' }, guest), 150);
  };
  $('rematch').addEventListener('click', rematch);
  $('accept-rematch').addEventListener('click', rematch);
  $('decline-rematch').addEventListener('click', () => act({ t: 'rematch', action: 'decline' }));
  $('new-game').addEventListener('click', () => goHome());
  $('flip').addEventListener('click', () => { flipped = !flipped; renderGame(); });
  $('copy-link').addEventListener('click', () => copy($('invite-link').textContent, $('copy-link')));
  $('copy-code').addEventListener('click', () => copy($('invite-code').textContent, $('copy-code')));
  $('hand-to-computer').addEventListener('click', () => busy($('hand-to-computer'), handToComputer));
  $('curtain-ready').addEventListener('click', () => {
    lift(activeModel());
    renderGame();
    board.placeCursor();
    board.el.focus({ preventScroll: true });
  });
  $('replay-start').addEventListener('click', () => stepReplay('start'));
  $('replay-prev').addEventListener('click', () => stepReplay(-1));
  $('replay-next').addEventListener('click', () => stepReplay(1));
  $('replay-end').addEventListener('click', () => stepReplay('end'));
  $('replay').addEventListener('keydown', (e) => { if (replayKey(e)) e.preventDefault(); });
  $('replay-live').addEventListener('click', () => { backToLive(); board.el.focus({ preventScroll: true }); });
  $('moves').addEventListener('click', (e) => {
    const el = e.target.closest('[data-ply][role="button"]');
    if (!el || !activeModel()) return;
    setReplay(Number(el.dataset.ply) + 1);
  });
}

/** Nobody took the free seat: the open board is closed and the same game starts against the computer. */
async function handToComputer() {
  const model = activeModel();
  if (!model || model.status !== 'waiting' || !isSeat(model)) return;
  const conn = connections.current();
  try {
    // The abort has no reply of its own (its `end` frame concerns a game no longer shown).
    conn.send({ t: 'abort', game: model.id });
    const created = await conn.request({
      t: 'create', variant: model.variant, color: model.you, clock: model.timeControl,
      opponent: 'computer', level: 'medium',
    });
    openGame(created.game);
  } catch (err) {
    notice(errorText(err), 'error');
  }
}

async function copy(text, button) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    area.remove();
  }
  const label = button.dataset.label || button.textContent;
  button.dataset.label = label;
  button.textContent = ok ? 'Copied!' : 'Select and copy';
  button.classList.toggle('copied', ok);
  setTimeout(() => { button.textContent = label; button.classList.remove('copied'); }, 1600);
}
