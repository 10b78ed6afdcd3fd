// A tournament game's model and the tournaments' words: chat lines and a
// berserk applied to the model from the frames of docs/protocol.md (chat,
// berserk), the route of a tournament's page, and the countdowns, clocks,
// ranks and points the tournament screens write (js/tournament-text.js).

import './rules-module.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyFrame, mayBerserk } from '../js/model.js';
import { routeOf } from '../js/router.js';
import { atStake, clockText, countdown, duration, ordinal, pointsText, sheetScores, summary, swissCountdown, swissSummary } from '../js/tournament-text.js';

const START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
const ann = { id: '7xzp6rfsvr99yl6w', name: 'Ann', computer: false };
const bob = { id: 'llrxnuj8w8x0wfhw', name: 'bob', computer: false };

const state = {
  t: 'state', game: '4vtrzhaexber', v: 8, variant: 'atomic', you: 'white', fen: START, moves: [],
  clock: { white_ms: 180000, black_ms: 180000, running: null }, status: 'playing',
  players: { white: ann, black: bob }, initial_fen: START, chess960: false, rated: true,
  time_control: { initial_ms: 180000, increment_ms: 0 }, draw_offer: null, takeback_offer: null, rematch_offer: null,
  chat: [{ room: 'players', player: bob.id, name: 'bob', text: 'hi <b>Ann</b>' }],
  tournament: 'acp2m5ah', berserk: [],
};

test('chat lines come from the state and from chat frames, each once', () => {
  let m = applyFrame(null, state, { now: 0 });
  assert.deepEqual(m.chat.map((l) => l.text), ['hi <b>Ann</b>']);
  const line = { t: 'chat', game: state.game, v: 9, room: 'players', player: ann.id, name: 'Ann', text: 'good luck' };
  m = applyFrame(m, line, { now: 10 });
  assert.deepEqual(m.chat.map((l) => [l.room, l.name, l.text]), [['players', 'bob', 'hi <b>Ann</b>'], ['players', 'Ann', 'good luck']]);
  assert.equal(m.v, 9);
  assert.equal(applyFrame(m, line, { now: 20 }), m, 'a line already counted changes nothing');
  assert.equal(applyFrame(m, { ...line, game: 'other' }, { now: 20 }), m, "another game's line changes nothing");
});

test('berserk: once, before the first move, in a tournament game; the clock is the server’s', () => {
  let m = applyFrame(null, state, { now: 0 });
  assert.equal(m.tournament, 'acp2m5ah');
  assert.ok(mayBerserk(m));
  m = applyFrame(m, { t: 'berserk', game: state.game, v: 9, color: 'white', clock: { white_ms: 90000, black_ms: 180000, running: null } }, { now: 5 });
  assert.deepEqual(m.berserk, ['white']);
  assert.equal(m.clock.white_ms, 90000);
  assert.ok(!mayBerserk(m), 'berserk is once');
  const plain = applyFrame(null, { ...state, tournament: undefined, berserk: undefined }, { now: 0 });
  assert.ok(!mayBerserk(plain), 'not outside a tournament');
  const moved = applyFrame(applyFrame(null, state, { now: 0 }), {
    t: 'move', game: state.game, v: 9, ply: 0, uci: 'e2e4', san: 'e4',
    fen: 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1', clock: state.clock,
  }, { now: 5 });
  assert.ok(!mayBerserk(moved), 'not after the first move');
  const bobsSide = applyFrame(null, { ...state, you: 'black' }, { now: 0 });
  assert.ok(mayBerserk(applyFrame(bobsSide, {
    t: 'move', game: state.game, v: 9, ply: 0, uci: 'e2e4', san: 'e4',
    fen: 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1', clock: state.clock,
  }, { now: 5 })), 'black may still, before its own first move');
});

test('a tournament page has its route', () => {
  assert.deepEqual(routeOf({ pathname: '/', hash: '#tournament=acp2m5ah' }, { id: 'xyz', active: true }), { to: 'tournament', id: 'acp2m5ah' });
});

test('countdowns, clocks, ranks, sheets and points in words', () => {
  assert.equal(duration(65), '1:05');
  assert.equal(duration(3723), '1:02:03');
  assert.deepEqual(countdown({ status: 10, secondsToStart: 300 }, 10), { phase: 'upcoming', text: 'Starts in 4:50' });
  assert.deepEqual(countdown({ status: 20, secondsToFinish: 60 }, 0.5), { phase: 'running', text: 'Ends in 0:59' });
  assert.equal(countdown({ status: 20, secondsToFinish: 2 }, 3).text, 'Finishing: the last games are played out');
  assert.deepEqual(countdown({ status: 30, isFinished: true }), { phase: 'finished', text: 'Finished' });
  assert.equal(clockText({ limit: 180, increment: 2 }), '3+2');
  assert.equal(clockText({ limit: 30, increment: 0 }), '½+0');
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal), ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '101st']);
  assert.deepEqual(sheetScores({ scores: '2045' }), [2, 0, 4, 5]);
  assert.equal(summary({ variant: { name: 'Atomic' }, clock: { limit: 60, increment: 0 }, minutes: 30, rated: false, nbPlayers: 1 }), 'Atomic · 1+0 · 30 min · casual · 1 player');
  assert.equal(atStake({}), 'a win scores 2, a draw 1.');
  assert.equal(atStake({ fire: true }), 'On fire: a win scores 4, a draw 2.');
  assert.equal(atStake({ berserk: true }), 'a win scores 3, a draw 1 (berserk: the extra point needs a game of 14 plies).');
});

test('a Swiss in words: its route, its countdown to the start and between rounds, points in halves', () => {
  assert.deepEqual(routeOf({ pathname: '/', hash: '#swiss=abc23' }, null), { to: 'swiss', id: 'abc23' });
  const base = { round: 0, nbRounds: 3 };
  assert.equal(swissCountdown({ ...base, status: 'created', nextRound: { in: 65 } }, 5).text, 'Starts in 1:00');
  assert.equal(swissCountdown({ ...base, status: 'created', nextRound: { in: 3 } }, 5).text, 'Starting…');
  assert.equal(swissCountdown({ ...base, status: 'started', round: 1 }).text, 'Round 1 of 3 being played');
  assert.equal(swissCountdown({ ...base, status: 'started', round: 1, nextRound: { in: 30 } }, 10).text, 'Round 2 starts in 0:20');
  assert.equal(swissCountdown({ ...base, status: 'started' }).text, 'Running', 'listed: the round is not known');
  assert.equal(swissCountdown({ ...base, status: 'finished', round: 3 }).text, 'Finished');
  assert.deepEqual([0, 0.5, 1, 2.5].map(pointsText), ['0', '½', '1', '2½']);
  const t = { variant: 'atomic960', clock: { limit: 180, increment: 2 }, nbRounds: 7, rated: true, nbPlayers: 5 };
  assert.equal(swissSummary(t), 'Atomic960 · 3+2 · 7 rounds · rated · 5 players');
});
