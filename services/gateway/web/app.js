// The Fogblast page, wired together: the board, the connections, the game
// session, the two screens (js/screens/) and the features (js/features/),
// and the router. Each lives in its own module (docs/web-client.md lists
// them); this file only says which frame goes where and what the page does
// when a game's model changes. It speaks the gateway's WebSocket protocol
// (docs/protocol.md).

import { Board } from './js/board.js';
import * as connections from './js/connections.js';
import * as session from './js/game-session.js';
import * as store from './js/store.js';
import * as sound from './js/sound.js';
import { GAME_FRAMES, isSeat } from './js/model.js';
import { loadRules } from './js/rules.js';
import { $, notice, homeShown, gameShown, showScreen } from './js/page.js';
import { startRouter } from './js/router.js';
import { errorText } from './js/text.js';
import { explainRefusal, refusedMoveText } from './js/features/refusals.js';
import { announcement } from './js/announce.js';
import { announce } from './js/features/announcer.js';
import { bindHowToPlay } from './js/features/how-to-play.js';
import { blastPreview } from './js/features/blast-preview.js';
import { bindHome, joinByCode, renderHome, showInvite } from './js/screens/home.js';
import { bindGame, renderGame, renderClocks, resetGameView } from './js/screens/game.js';
import { startLooks } from './js/features/looks.js';
import { initLobby, lobbyWanted, onLobbyFrame, stopLobby, subscribeLobby } from './js/features/lobby.js';
import { initSeek, onPaired, renderSeek, seekAgain, seeking } from './js/features/seek.js';
import * as ratings from './js/features/ratings.js';
import { initReplay, replayKey, replayPly, resetReplay } from './js/features/replay.js';
import { initComputerAnalysis } from './js/features/computer-analysis.js';
import { initFogReview } from './js/features/fog-review.js';
import { resetCurtain } from './js/features/hotseat.js';
import { initYourGames, loadProfile } from './js/features/your-games.js';
import { setPremove } from './js/features/premove.js';
import { setting, startSettings, toggleZen } from './js/features/settings.js';
import { bindConfirmMove, dropWaiting, offerMove } from './js/features/confirm-move.js';
import { bindNotify, notifyFrame, tell } from './js/features/notify.js';
import { bindMoveInput } from './js/features/move-input.js';
import { initPlayerPage, showPlayer } from './js/screens/player.js';
import { initTournamentPage, rememberPairing, showTournament } from './js/screens/tournament.js';
import { initSwissPage, showSwiss } from './js/screens/swiss.js';
import { initTournaments, loadTournaments } from './js/features/tournaments.js';
import { initTournamentGame } from './js/features/tournament-game.js';
import { initChat } from './js/features/chat.js';
import { initWatch, startTv, stopTv, tvFollow } from './js/features/watch.js';
import { bindRecovery } from './js/features/recovery.js';
import { analysable, initAnalysisBoard, openAnalysisLink, openGameAnalysis } from './js/features/analysis-board.js';
import { initPuzzles, showPuzzles } from './js/features/puzzles.js';

const board = new Board(document.getElementById('board-wrap'), {
  onMove: (uci) => offerMove(uci, (move) => session.playMove(move), () => board.cancelPending()),
  autoQueen: () => setting('autoQueen'),
  onRefused: (refusal) => notice(explainRefusal(session.activeModel(), refusal), 'error'),
  onKey: (e) => replayKey(e, { onBoard: true }),
  onPremove: (uci) => { const m = session.activeModel(); if (m) setPremove(m.id, uci); renderGame(); },
  blastOf: (from, to) => blastPreview(session.activeModel(), from, to),
});

function onFrame(conn, f) {
  const main = conn === connections.current();
  if (GAME_FRAMES.has(f.t)) return session.onGameFrame(conn, f);
  switch (f.t) {
    case 'rating': if (main) ratings.onRating(f); return;
    case 'lobby': case 'lobby_update': if (main) onLobbyFrame(f); return;
    case 'paired':
      // A quick pairing or an arena's: either way the game opens at once.
      if (main) { rememberPairing(f); tell('Opponent found', 'Your game is starting.', `fogblast-${f.game}`); onPaired(f); }
      return;
    case 'reconnect': if (main) notice('The server is restarting: reconnecting…'); return;
    case 'error': if (f.id == null) notice(errorText(f), 'error'); return;
    default: return;
  }
}

function onReady(conn) {
  connections.showConnection();
  if (conn.identityLost) {
    conn.identityLost = false;
    notice('The server no longer knows you (it restarted): you are a new player now.', 'error');
  }
  session.resumeOn(conn);
  if (conn === connections.current()) {
    if (lobbyWanted()) subscribeLobby();
    seekAgain();
    if (homeShown()) loadProfile();
  }
}

/** A game over: the replay starts at the final position and the curtain is down. */
function gameOver(live) {
  if (live) sound.play('end');
  resetReplay();
  resetCurtain();
}

/** What the page does when a frame changed a game's model; the model itself is js/model.js's. */
function onApplied({ conn, frame: f, previous, model, main }) {
  if (main) tvFollow(model);
  if (main) announce(announcement({ frame: f, previous, model, hotseat: session.isHotseat() }));
  notifyFrame({ frame: f, model, main, hotseat: session.isHotseat() });
  switch (f.t) {
    case 'state':
      if (main) {
        if (model.status === 'ended') gameOver(false);
        ratings.watchRating(model);
        ratings.loadPlayers(model);
      }
      board.show({});
      renderGame();
      if (!previous || previous.id !== f.game) board.placeCursor();
      return;
    case 'move':
      if (main) {
        if (Array.isArray(f.exploded) && f.exploded.length) {
          sound.play('explosion');
          setTimeout(() => board.explode(f.exploded), 0);
        } else if (f.san && f.san.includes('x')) sound.play('capture');
        else sound.play('move');
      }
      board.show({});
      renderGame();
      return;
    case 'end':
      if (main) gameOver(true);
      board.show({});
      renderGame();
      return;
    case 'draw': case 'takeback': {
      const mine = f.by === model.you;
      if (main && !mine && isSeat(model)) {
        if (f.action === 'offer' || f.action === 'request') sound.play('notify');
        else if (f.action === 'decline') {
          const computer = model.players[f.by] && model.players[f.by].computer;
          notice(f.t === 'draw'
            ? (computer ? 'The computer declines the draw.' : 'Your draw offer was declined.')
            : 'Your takeback request was declined.');
        }
      }
      renderGame();
      return;
    }
    case 'seated':
      if (main) {
        sound.play('notify');
        ratings.loadPlayers(model);
      }
      renderGame();
      return;
    case 'time_given':
      if (main && isSeat(model) && f.by && f.by !== model.you) notice('Your opponent gave you 15 seconds.');
      renderGame();
      return;
    case 'rematch':
      // A rematch replaces the game on screen.
      if (main && f.new_game) session.openGame(f.new_game, { hotseat: session.isHotseat() });
      else if (main && f.by !== model.you) sound.play('notify');
      renderGame();
      return;
    default:
      renderGame();
  }
}

/**
 * The replay's keys on the whole game screen, as on lichess: anywhere but
 * in a text field or a list to choose from (the board and the replay's own
 * controls take them first).
 */
function pageKeys(e) {
  if (e.defaultPrevented || !gameShown()) return;
  if (e.target.closest && e.target.closest('input, select, textarea, [contenteditable="true"], [data-testid="how-to-play"], [data-testid="settings"]')) return;
  if ((e.key === 'z' || e.key === 'Z') && !e.altKey && !e.ctrlKey && !e.metaKey) { toggleZen(); e.preventDefault(); return; }
  if (e.target.closest && e.target.closest('[data-testid="board"]')) return;
  if (replayKey(e)) e.preventDefault();
}

function start() {
  connections.initConnections({ onFrame, onReady });
  session.initSession({
    render: renderGame,
    onApplied,
    onOpened: () => {
      dropWaiting();
      resetReplay();
      resetCurtain();
      resetGameView();
      ratings.forgetChange();
    },
    onShow: (id) => { stopLobby(); stopTv(id); },
    onArchived: ratings.fromArchive,
    onMoveRefused: (err, uci) => {
      board.cancelPending();
      notice(refusedMoveText(err, uci), 'error');
    },
    onHome: () => { stopTv(); renderHome(); },
  });
  ratings.initRatings({ render: renderGame });
  initReplay({ render: renderGame, explode: (squares) => board.explode(squares) });
  initComputerAnalysis(renderGame);
  initFogReview(renderGame);
  initLobby({ joinByCode, openGame: session.openGame });
  initSeek({ openGame: session.openGame });
  initYourGames({ openGame: session.openGame });
  initWatch({ openGame: session.openGame });

  startLooks(board);
  startSettings(board, { render: renderGame });
  bindConfirmMove();
  bindNotify();
  bindMoveInput({ board, model: () => session.activeModel() });
  initPlayerPage({ openGame: session.openGame, home: () => session.goHome() });
  const me = () => connections.online()?.player || null;
  initTournamentPage({
    openGame: session.openGame,
    home: () => session.goHome(),
    me,
    name: () => store.get(store.KEYS.name, ''),
    swiss: (id) => showSwiss(id),
  });
  initSwissPage({ openGame: session.openGame, home: () => session.goHome(), me, name: () => store.get(store.KEYS.name, '') });
  initTournaments({
    openTournament: (id) => { stopLobby(); showTournament(id); },
    openSwiss: (id) => { stopLobby(); showSwiss(id); },
  });
  initTournamentGame({ berserk: () => session.act({ t: 'berserk' }), me, render: renderGame });
  initChat({
    model: () => session.activeModel(),
    send: (frame) => session.connFor(session.activeModel()).command(frame),
  });
  bindHome();
  bindRecovery();
  initPuzzles();
  bindGame(board);
  initAnalysisBoard({ home: () => session.goHome() });
  // A finished game on the analysis board, at the position on screen.
  $('analyse').addEventListener('click', () => {
    const model = session.activeModel();
    if (!analysable(model)) return;
    const at = replayPly();
    session.goHome();
    stopLobby();
    openGameAnalysis(model, at);
  });
  document.addEventListener('keydown', pageKeys);
  bindHowToPlay(() => session.activeModel()?.variant || null);
  connections.startOnline();
  // Keep the page's files so it opens, and plays the computer, with no network.
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js').catch(() => {});
  startRouter({
    saved: store.get(store.KEYS.game),
    current: session.currentGame,
    // An invite link: home, with the card that asks the guest's name first.
    onJoin: (code) => {
      showScreen('home');
      renderHome();
      showInvite(code);
    },
    onGame: session.openGame,
    onHome: () => { showScreen('home'); renderHome(); },
    onLeave: session.goHome,
    onPlayer: (id) => { stopLobby(); stopTv(); showPlayer(id); },
    onTv: () => startTv(),
    onAnalysis: (route) => { stopLobby(); stopTv(); openAnalysisLink(route); },
    onTournament: (id) => { stopLobby(); showTournament(id); },
    onSwiss: (id) => { stopLobby(); showSwiss(id); },
    onPuzzles: (id) => { stopLobby(); stopTv(); showPuzzles(id); },
  });
  setInterval(() => {
    renderClocks();
    if (seeking() && homeShown()) renderSeek();
  }, 100);
}

// The models ask the rules module as frames arrive: it is instantiated first
// (a few milliseconds once the file is cached; the page goes on without it).
loadRules().then(start);
