// The page's model against recorded frames: the typical session, the atomic
// explosion, the takeback, the gone-and-back and the fog-of-war examples of
// docs/protocol.md are fed to applyFrame and the resulting models checked,
// as well as the routes and the status line the screens show from them.
// Run with `node --test services/gateway/web/tests/`.

import './rules-module.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyFrame, boardView, claimSecondsLeft, clockMs, firstMoveSecondsLeft, moveFit, movesMadeBy, stateFromArchive, turnColor,
} from '../js/model.js';
import { readFileSync } from 'node:fs';
import { placementOf, sq } from '../js/chess.js';
import { routeOf, gameInHash } from '../js/router.js';
import { statusText, ratingChangeText } from '../js/text.js';

const START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
const alice = { id: '7xzp6rfsvr99yl6w', name: 'alice', computer: false };
const bob = { id: 'llrxnuj8w8x0wfhw', name: 'bob', computer: false };

/** Feeds `frames` in order, each at its own time (ms on the page's clock). */
function feed(frames, model = null, remembered = null) {
  for (const [frame, now] of frames) model = applyFrame(model, frame, { now, remembered });
  return model;
}

// Alice's side of "A typical session" in docs/protocol.md.
const created = {
  t: 'state', game: 'eqnuuv7r462z', v: 1, variant: 'standard', you: 'white', fen: START, moves: [],
  clock: { white_ms: 300000, black_ms: 300000, running: null }, status: 'waiting',
  players: { white: alice, black: null }, initial_fen: START, chess960: false, rated: false,
  time_control: { initial_ms: 300000, increment_ms: 2000 }, code: '52R7AK6J', invite: '/g/52R7AK6J',
  draw_offer: null, takeback_offer: null, rematch_offer: null, id: 2,
};
const seated = { t: 'seated', game: 'eqnuuv7r462z', v: 2, color: 'black', player: bob };
const e4 = {
  t: 'move', game: 'eqnuuv7r462z', v: 3, ply: 0, uci: 'e2e4', san: 'e4',
  fen: 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1',
  clock: { white_ms: 300000, black_ms: 300000, running: null },
};
const e5 = {
  t: 'move', game: 'eqnuuv7r462z', v: 4, ply: 1, uci: 'e7e5', san: 'e5',
  fen: 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2',
  clock: { white_ms: 300000, black_ms: 300000, running: 'white' },
};
const resigned = {
  t: 'end', game: 'eqnuuv7r462z', v: 5, result: '0-1', reason: 'resign', moves: ['e2e4', 'e7e5'],
  fen: 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2',
  clock: { white_ms: 297291, black_ms: 300000, running: null },
};

test('the typical session: created, seated, two moves, resigned', () => {
  const waiting = feed([[created, 1000]]);
  assert.equal(waiting.status, 'waiting');
  assert.equal(waiting.you, 'white');
  assert.equal(waiting.code, '52R7AK6J');
  assert.equal(waiting.players.black, null);
  assert.deepEqual(waiting.moves, []);

  const playing = feed([[seated, 2000]], waiting);
  assert.equal(playing.status, 'playing');
  assert.equal(playing.code, null);
  assert.equal(playing.invite, null);
  assert.deepEqual(playing.players.black, bob);
  assert.equal(playing.v, 2);

  const afterE4 = feed([[e4, 3000]], playing);
  assert.deepEqual(afterE4.moves, ['e2e4']);
  assert.deepEqual(afterE4.sans, ['e4']);
  assert.deepEqual(afterE4.last, ['e2', 'e4']);
  assert.equal(turnColor(afterE4), 'black');
  assert.equal(afterE4.position.board[sq('e4')].r, 'p');

  const afterE5 = feed([[e5, 4000]], afterE4);
  assert.equal(afterE5.v, 4);
  assert.equal(afterE5.clock.running, 'white');
  assert.equal(afterE5.clockAt, 4000);
  // White's clock runs from the frame's time: 1.5 s later it shows 1.5 s less; black's stands.
  assert.equal(clockMs(afterE5, 'white', 5500), 298500);
  assert.equal(clockMs(afterE5, 'black', 5500), 300000);
  assert.equal(movesMadeBy(afterE5, 'white'), 1);

  const ended = feed([[resigned, 6000]], afterE5);
  assert.equal(ended.status, 'ended');
  assert.equal(ended.result, '0-1');
  assert.equal(ended.reason, 'resign');
  assert.equal(ended.legal, null);
  assert.equal(ended.replay.length, 3);
  assert.equal(placementOf(ended.replay[1].position.board), 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR');
  assert.deepEqual(ended.sans, ['e4', 'e5']);
  assert.equal(clockMs(ended, 'white', 60000), 297291, 'no clock runs once ended');
});

test('applyFrame leaves the model it was given alone', () => {
  const before = feed([[created, 0], [seated, 0]]);
  const copy = JSON.stringify({ ...before, position: null });
  const after = applyFrame(before, e4, { now: 10 });
  assert.notEqual(after, before);
  assert.equal(JSON.stringify({ ...before, position: null }), copy);
  assert.deepEqual(before.moves, []);
  assert.equal(before.position.board[sq('e2')].r, 'p');
});

test('frames of another game, older states, replayed and missed moves', () => {
  const model = feed([[created, 0], [seated, 0], [e4, 0]]);
  assert.equal(applyFrame(model, { ...e5, game: 'other' }, { now: 1 }), model);
  assert.equal(applyFrame(null, e5, { now: 1 }), null, 'no model: only a state starts one');
  assert.equal(applyFrame(model, { ...created, v: 1 }, { now: 1 }), model, 'a state older than the model is ignored');

  assert.equal(moveFit(model, e4), 'old');
  const replayed = applyFrame(model, e4, { now: 1 });
  assert.deepEqual(replayed.moves, ['e2e4'], 'a move already applied is not applied again');

  const gap = { ...e5, ply: 3, v: 9 };
  assert.equal(moveFit(model, gap), 'gap');
  const behind = applyFrame(model, gap, { now: 1 });
  assert.deepEqual(behind.moves, ['e2e4'], 'a gap waits for a fresh state');
  assert.equal(behind.v, 9);
});

test('a state names every known move and keeps what the previous model named', () => {
  const state = { ...created, v: 10, status: 'playing', moves: ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1b5'], code: null, invite: null,
    fen: 'r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3', players: { white: alice, black: bob } };
  const model = feed([[state, 0]]);
  assert.deepEqual(model.sans, ['e4', 'e5', 'Nf3', 'Nc6', 'Bb5']);
  assert.deepEqual(model.last, ['f1', 'b5']);
  assert.equal(turnColor(model), 'black');
});

test('after a reload, the page names check with + and mate with #, and marks the checked king', () => {
  const players = { white: alice, black: bob };
  const checked = feed([[{ ...created, v: 6, status: 'playing', code: null, invite: null, players, moves: ['e2e4', 'f7f6', 'd1h5'],
    fen: 'rnbqkbnr/ppppp1pp/5p2/7Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2' }, 0]]);
  assert.deepEqual(checked.sans, ['e4', 'f6', 'Qh5+']);
  assert.equal(boardView(checked).check, sq('e8'));
  assert.equal(statusText(checked, { hotseat: true }), 'Black to move. Check!');
  const mated = feed([[{ ...created, v: 7, status: 'ended', result: '0-1', reason: 'checkmate', code: null, invite: null, players,
    moves: ['f2f3', 'e7e5', 'g2g4', 'd8h4'], fen: 'rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3' }, 0]]);
  assert.deepEqual(mated.sans, ['f3', 'e5', 'g4', 'Qh4#']);
  assert.equal(boardView(mated).check, sq('e1'));
  assert.equal(boardView(mated, { replayPly: 3 }).check, -1);
  assert.equal(mated.replay[4].check, sq('e1'));
});

test('an atomic explosion that takes the king ends the game; the replay shows the blast', () => {
  const moves = ['g1f3', 'd7d5', 'f3e5', 'b8d7'];
  const state = {
    t: 'state', game: '5fkuf5279ewt', v: 6, variant: 'atomic', you: 'white',
    fen: 'r1bqkbnr/pppnpppp/8/3pN3/8/8/PPPPPPPP/RNBQKB1R w KQkq - 2 3', moves, clock: null, status: 'playing',
    players: { white: alice, black: { name: 'Computer (easy)', computer: true, level: 'easy' } }, initial_fen: START,
  };
  const blast = {
    t: 'move', game: '5fkuf5279ewt', v: 7, ply: 4, uci: 'e5d7', san: 'Nxd7#',
    fen: 'r4bnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKB1R b KQ - 0 3', exploded: ['d7', 'c8', 'd8', 'e8'], clock: null,
  };
  const end = {
    t: 'end', game: '5fkuf5279ewt', v: 8, result: '1-0', reason: 'explosion',
    moves: [...moves, 'e5d7'], fen: 'r4bnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKB1R b KQ - 0 3', clock: null,
  };
  const model = feed([[state, 0], [blast, 1], [end, 2]]);
  assert.equal(model.status, 'ended');
  assert.equal(model.sans[4], 'Nxd7#', "the server's SAN is kept");
  assert.deepEqual(model.sans.slice(0, 4), ['Nf3', 'd5', 'Ne5', 'Nd7']);
  const last = model.replay[5];
  assert.deepEqual([...last.exploded].sort(), ['c8', 'd7', 'd8', 'e8']);
  assert.equal(placementOf(last.position.board), 'r4bnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKB1R');
  // Stepping back to ply 4 shows the knight on e5 again.
  const view = boardView(model, { replayPly: 4 });
  assert.equal(view.board[sq('e5')].r, 'n');
  assert.deepEqual(view.last, ['b8', 'd7']);
});

test('offers stand until answered or a move is made; takeback is followed by a state', () => {
  const base = feed([[created, 0], [seated, 0], [e4, 0]]);
  const offered = applyFrame(base, { t: 'draw', game: base.id, v: 5, action: 'offer', by: 'white' });
  assert.equal(offered.drawOffer, 'white');
  // Black moving instead of answering declines white's offer.
  const afterBlack = applyFrame(offered, e5, { now: 0 });
  assert.equal(afterBlack.drawOffer, null);
  // An offer made before one's own move stands over it.
  const blackOffers = applyFrame(base, { t: 'draw', game: base.id, v: 5, action: 'offer', by: 'black' });
  assert.equal(applyFrame(blackOffers, e5, { now: 0 }).drawOffer, 'black');
  const declined = applyFrame(offered, { t: 'draw', game: base.id, v: 6, action: 'decline', by: 'black' });
  assert.equal(declined.drawOffer, null);

  const asked = applyFrame(afterBlack, { t: 'takeback', game: base.id, v: 8, action: 'request', by: 'black' });
  assert.equal(asked.takebackOffer, 'black');
  const accepted = applyFrame(asked, { t: 'takeback', game: base.id, v: 9, action: 'accept', by: 'white' });
  assert.equal(accepted.takebackOffer, null);
  const restored = applyFrame(accepted, { ...created, v: 10, status: 'playing', moves: ['e2e4'], fen: e4.fen,
    players: { white: alice, black: bob }, code: null, invite: null }, { now: 0 });
  assert.deepEqual(restored.moves, ['e2e4']);
  assert.deepEqual(restored.sans, ['e4']);
  assert.equal(restored.v, 10);
});

test('an opponent gone and back: the claim countdown runs on the page clock', () => {
  const base = feed([[created, 0], [seated, 0], [e4, 0], [e5, 0]]);
  const gone = applyFrame(base, { t: 'opponent_gone', game: base.id, v: 5, claim_in_ms: 30000 }, { now: 1000 });
  assert.equal(gone.gone, 'black');
  assert.equal(claimSecondsLeft(gone, 1000), 30);
  assert.equal(claimSecondsLeft(gone, 30500), 1);
  assert.equal(claimSecondsLeft(gone, 31000), 0);
  const back = applyFrame(gone, { t: 'opponent_back', game: base.id, v: 6 });
  assert.equal(back.gone, null);

  // Coming back, a player may see itself as gone in the first state: that is not the opponent.
  const myself = applyFrame(null, {
    t: 'state', game: '6t44w55bg3s9', v: 5, variant: 'standard', you: 'black',
    fen: 'rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2', moves: ['d2d4', 'd7d5'],
    clock: { white_ms: 56580, black_ms: 60000, running: 'white' }, status: 'playing',
    players: { white: alice, black: bob }, initial_fen: START, gone: 'black', claim_in_ms: 1787,
  }, { now: 0 });
  assert.equal(myself.gone, null);
});

test('the first-move countdown comes from first_move_in_ms and passes with the page clock', () => {
  const model = applyFrame(feed([[created, 0]]), { ...seated, first_move_in_ms: 30000 }, { now: 5000 });
  assert.equal(model.firstMoveAt, 35000);
  assert.equal(firstMoveSecondsLeft(model, 5000), 30);
  assert.equal(firstMoveSecondsLeft(model, 34100), 1);
  assert.equal(firstMoveSecondsLeft(model, 40000), 0);
  assert.equal(statusText(model, { myTurn: true, firstMoveLeft: 12 }), 'Your turn: make your first move within 12 s or the game is aborted.');
  const moved = applyFrame(model, e4, { now: 6000 });
  assert.equal(firstMoveSecondsLeft(moved, 6000), null, 'a move without first_move_in_ms ends the countdown');
  assert.equal(statusText(moved, { myTurn: false }), 'Waiting for your opponent to move…');
});

test('rematch: an offer, then the new game', () => {
  const ended = feed([[created, 0], [seated, 0], [e4, 0], [e5, 0], [resigned, 0]]);
  const offered = applyFrame(ended, { t: 'rematch', game: ended.id, v: 12, by: 'black' });
  assert.equal(offered.rematchOffer, 'black');
  const agreed = applyFrame(offered, { t: 'rematch', game: ended.id, v: 13, by: 'white', new_game: '7eyamdn5kpxg' });
  assert.equal(agreed.rematchGame, '7eyamdn5kpxg');
  assert.equal(agreed.rematchOffer, null);
});

test('rematch: a declined offer no longer stands, and the offerer is told', () => {
  const ended = feed([[created, 0], [seated, 0], [e4, 0], [e5, 0], [resigned, 0]]);
  const offered = applyFrame(ended, { t: 'rematch', game: ended.id, v: 12, by: ended.you });
  const opponent = ended.you === 'white' ? 'black' : 'white';
  const declined = applyFrame(offered, { t: 'rematch', game: ended.id, v: 13, by: opponent, action: 'decline' });
  assert.equal(declined.rematchOffer, null);
  assert.equal(declined.rematchGame, null);
  assert.equal(statusText(declined), 'Game over: your opponent declined the rematch.');
  const again = applyFrame(declined, { t: 'rematch', game: ended.id, v: 14, by: ended.you });
  assert.equal(again.rematchOffer, ended.you);
  assert.notEqual(statusText(again), statusText(declined), 'a new offer clears the decline');
});

// Fog of war, "a hidden move and a lost piece": black's side.
const fogVisible = ['a5', 'b5', 'c5', 'd5', 'e5', 'g5', 'h5', 'a6', 'b6', 'c6', 'd6', 'e6', 'f6', 'g6', 'h6',
  'a7', 'b7', 'c7', 'd7', 'e7', 'f7', 'g7', 'h7', 'a8', 'b8', 'c8', 'd8', 'e8', 'f8', 'g8', 'h8'];
const fogState = {
  t: 'state', game: 'z4bdsa9i82dn', v: 4, variant: 'fog', you: 'black',
  fen: 'rnbqkbnr/ppppp1pp/8/5p2/8/8/8/8 w kq - 0 2', visible: [...fogVisible, 'f5'], moves: [null, 'f7f5'],
  clock: null, status: 'playing', players: { white: alice, black: bob }, initial_fen: START,
};
const hiddenCapture = {
  t: 'move', game: 'z4bdsa9i82dn', v: 5, ply: 2, uci: null,
  fen: 'rnbqkbnr/ppppp1pp/8/8/8/8/8/8 b kq - 0 2', visible: fogVisible, lost: ['f5'], clock: null,
};

test('fog of war: a hidden move, a lost piece, and the flag kept until the square is seen', () => {
  const model = feed([[fogState, 0], [hiddenCapture, 1]], null, { lost: [], sans: { 1: ['f7f5', 'f5'] } });
  assert.deepEqual(model.moves, [null, 'f7f5', null]);
  assert.equal(model.sans[1], 'f5', "the seat's own SAN comes back from what the page remembered");
  assert.equal(model.hiddenNews, true);
  assert.deepEqual([...model.lost], ['f5']);
  assert.equal(model.last, null);
  const view = boardView(model, { myTurn: true });
  assert.ok(view.fog.has('e4') && !view.fog.has('e5'));
  assert.equal(view.movable, 'b');
  assert.equal(boardView(model, { myTurn: true, pending: true }).movable, null, 'no piece moves while a move is in flight');
  assert.deepEqual(model.taken, [{ square: 'f5', role: 'p' }], 'the pawn the hidden move took');
  assert.equal(statusText(model, { myTurn: true }), 'A move was played: your pawn on f5 was taken — your turn.');
  assert.equal(view.seat, 'b');
  assert.equal(view.lock, null, 'nothing stops the seat to move');
  assert.equal(boardView(model, { myTurn: false }).lock, 'not_your_turn');

  // A reload: the state carries no lost flags; the page's memory brings f5's back.
  const reloaded = feed([[{ ...fogState, v: 5, moves: [null, 'f7f5', null], visible: fogVisible, fen: hiddenCapture.fen }, 2]], null, { lost: ['f5'], sans: {} });
  assert.deepEqual([...reloaded.lost], ['f5']);

  // Seeing f5 again drops the flag.
  const seen = applyFrame(model, { t: 'move', game: model.id, v: 6, ply: 3, uci: 'g7g6', san: 'g6',
    fen: 'rnbqkbnr/ppppp2p/6p1/8/8/8/8/8 w kq - 0 3', visible: [...fogVisible, 'f5'], clock: null }, { now: 3 });
  assert.deepEqual([...seen.lost], []);
});

test('fog of war: the end lifts the fog, clears the flags and names every move', () => {
  const model = feed([[fogState, 0], [hiddenCapture, 1]]);
  const end = applyFrame(model, {
    t: 'end', game: model.id, v: 18, result: '1-0', reason: 'king_captured',
    moves: ['e2e4', 'f7f5', 'e4f5', 'g7g6', 'd1h5', 'a7a6', 'h5g6', 'b7b6', 'g6e8'],
    fen: 'rnbqQbnr/2ppp2p/pp6/5P2/8/8/PPPP1PPP/RNB1KBNR b KQ - 0 5', clock: null,
  }, { now: 2 });
  assert.equal(end.visible, null);
  assert.equal(end.lost.size, 0);
  // Taking the king is mate in fog of war, as the server writes it.
  assert.deepEqual(end.sans, ['e4', 'f5', 'exf5', 'g6', 'Qh5', 'a6', 'Qxg6', 'b6', 'Qxe8#']);
  assert.equal(boardView(end).fog, null);
  assert.equal(placementOf(end.replay[9].position.board), 'rnbqQbnr/2ppp2p/pp6/5P2/8/8/PPPP1PPP/RNB1KBNR');
});

test('fog of war: spectators see fog everywhere, and the same-device curtain shows nothing', () => {
  const watching = applyFrame(null, { ...fogState, you: 'spectator', visible: [], moves: [null, null], fen: '8/8/8/8/8/8/8/8 w - - 0 2' }, { now: 0 });
  assert.equal(boardView(watching).fog.size, 64);
  assert.equal(statusText(watching), 'Watching: White to move. The fog hides the board until the end.');
  const seat = feed([[fogState, 0]]);
  const curtain = boardView(seat, { curtain: true, myTurn: true });
  assert.ok(curtain.board.every((p) => p === null));
  assert.equal(curtain.fog.size, 64);
  assert.equal(curtain.movable, null);
  assert.equal(curtain.legal, null);
});

test('a game from the archive becomes an ended, archived state for its player', () => {
  const record = {
    game: 'g1', variant: 'standard', fen: e5.fen, moves: ['e2e4', 'e7e5'], result: '1/2-1/2', reason: 'agreement',
    players: { white: alice, black: bob }, initial_fen: START, rated: true, time_control: null,
  };
  const frame = stateFromArchive(record, bob.id);
  assert.equal(frame.you, 'black');
  const model = applyFrame(null, frame, { now: 0 });
  assert.equal(model.archived, true);
  assert.equal(model.status, 'ended');
  assert.deepEqual(model.sans, ['e4', 'e5']);
  assert.equal(stateFromArchive(record, 'someone').you, 'spectator');
  const live = { t: 'state', game: 'g1' };
  assert.equal(stateFromArchive(live, bob.id), live);
});

test('routes: a join code, a game id, a player, TV, the game a reload left, home', () => {
  assert.deepEqual(routeOf({ pathname: '/g/52r7ak6j', hash: '' }, null), { to: 'join', code: '52R7AK6J' });
  assert.deepEqual(routeOf({ pathname: '/', hash: '#game=abc' }, { id: 'abc', hotseat: true }), { to: 'game', id: 'abc', hotseat: true });
  assert.deepEqual(routeOf({ pathname: '/', hash: '#game=abc' }, { id: 'other', hotseat: true }), { to: 'game', id: 'abc', hotseat: false });
  assert.deepEqual(routeOf({ pathname: '/', hash: '' }, { id: 'xyz', hotseat: false, active: true }), { to: 'game', id: 'xyz', hotseat: false });
  assert.deepEqual(routeOf({ pathname: '/', hash: '' }, { id: 'xyz', active: false }), { to: 'home' });
  assert.deepEqual(routeOf({ pathname: '/', hash: '#player=p1x' }, { id: 'xyz', active: true }), { to: 'player', id: 'p1x' });
  assert.deepEqual(routeOf({ pathname: '/', hash: '#tv' }, { id: 'xyz', active: true }), { to: 'tv' });
  assert.deepEqual(routeOf({ pathname: '/', hash: '#tvx' }, null), { to: 'home' });
  assert.equal(gameInHash('#game=offline-1'), 'offline-1');
  assert.equal(gameInHash(''), null);
  assert.equal(ratingChangeText(-7.4, 1492.6, true), '-7 → 1493?');
});

/** The frames one side received in docs/protocol.md's "A typical session", in order, as recorded there. */
function recordedSession(side) {
  const doc = readFileSync(new URL('../../../../docs/protocol.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## A typical session'), doc.indexOf('## Client → server'));
  const frames = [];
  const marker = `${side} ← `;
  let at = section.indexOf(marker);
  while (at >= 0) {
    const open = at + marker.length;
    if (section[open] === '{') {
      // A frame runs to its balanced closing brace, across lines.
      let depth = 0;
      let end = open;
      for (; end < section.length; end++) {
        if (section[end] === '{') depth++;
        else if (section[end] === '}' && --depth === 0) break;
      }
      frames.push(JSON.parse(section.slice(open, end + 1)));
    } else if (section.startsWith('(the same', open)) {
      // "(the same move frame)": the other side's last frame of that type.
      const type = section.slice(open).match(/^\(the same (\w+) frame\)/)[1];
      const other = section.lastIndexOf(`← {"t":"${type}"`, at);
      const start = section.indexOf('{', other);
      frames.push(JSON.parse(section.slice(start, section.indexOf('}}', start) + 2).replace(/\s+/g, ' ')));
    }
    at = section.indexOf(marker, open);
  }
  return frames;
}

test("docs/protocol.md's typical session, as Alice and Bob received it, builds their models", () => {
  const alices = recordedSession('A');
  assert.deepEqual(alices.map((f) => f.t), ['welcome', 'created', 'state', 'seated', 'move', 'move', 'end']);
  let now = 0;
  let model = null;
  const models = [];
  for (const frame of alices) {
    now += 1000;
    model = applyFrame(model, frame, { now });
    models.push(model);
  }
  assert.equal(models[0], null, 'welcome and created are not game frames');
  assert.equal(models[2].status, 'waiting');
  assert.equal(models[3].status, 'playing');
  assert.equal(models[3].players.black.name, 'bob');
  assert.deepEqual(models[5].moves, ['e2e4', 'e7e5']);
  assert.equal(models[5].clock.running, 'white');
  assert.equal(clockMs(models[5], 'white', models[5].clockAt + 700), 299300);
  assert.equal(model.status, 'ended');
  assert.equal(model.result, '0-1');
  assert.equal(model.v, 5);
  assert.deepEqual(model.sans, ['e4', 'e5']);

  const bobs = recordedSession('B');
  assert.deepEqual(bobs.map((f) => f.t), ['welcome', 'joined', 'state', 'move', 'move', 'end']);
  const bob = bobs.reduce((m, f) => applyFrame(m, f, { now: 0 }), null);
  assert.equal(bob.you, 'black');
  assert.equal(bob.status, 'ended');
  assert.deepEqual(bob.moves, ['e2e4', 'e7e5']);
});
