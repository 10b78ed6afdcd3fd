// The analysis board's logic: its link, the line explored, the FEN box's
// messages (from the very rules module the page loads), and the engine's
// score as the bar writes it. Run with `node --test services/gateway/web/tests/`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import './rules-module.mjs';
import { explore } from '../js/rules.js';
import {
  analysisHash, analysisInHash, analysisVariantOf, backToGame, barPercent, fenAt, leftGame, sharedPlies, fenMessage, lineOfSearch, movesTo, newLine,
  numberedLine, outcomeText, playOn, scoreText, stepLine, whiteScore,
} from '../js/analysis-board.js';
import { routeOf } from '../js/router.js';

const START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
const AFTER_E4 = 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1';

test('a link reopens the same variant and position', () => {
  const hash = analysisHash('atomic960', AFTER_E4);
  assert.equal(hash, '#analysis/atomic960/rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR_b_KQkq_-_0_1');
  assert.deepEqual(analysisInHash(hash), { variant: 'atomic960', fen: AFTER_E4 });
  // What the address bar gives back after a browser escaped it.
  assert.deepEqual(analysisInHash(hash.replace(/\//g, '%2F')), { variant: 'atomic960', fen: AFTER_E4 });
  assert.deepEqual(analysisInHash('#analysis'), { variant: 'atomic', fen: null });
  assert.deepEqual(analysisInHash('#analysis/standard'), { variant: 'standard', fen: null });
  assert.deepEqual(analysisInHash('#analysis/crazyhouse/8_w'), { variant: null, asked: 'crazyhouse', fen: '8 w' });
  assert.equal(analysisInHash('#game=abc'), null);
  assert.equal(analysisInHash('#analysisx'), null);
});

test('the router sends an analysis link to the board, even with a game in progress stored', () => {
  const saved = { id: 'g1', active: true };
  assert.deepEqual(routeOf({ pathname: '/', hash: analysisHash('standard', START) }, saved), { to: 'analysis', variant: 'standard', fen: START });
  assert.deepEqual(routeOf({ pathname: '/', hash: '' }, saved), { to: 'game', id: 'g1', hotseat: false });
});

test('a game opens in its analysis variant', () => {
  assert.equal(analysisVariantOf('atomic', false), 'atomic');
  assert.equal(analysisVariantOf('atomic', true), 'atomic960');
  assert.equal(analysisVariantOf('standard', true), 'chess960');
  assert.equal(analysisVariantOf('fog', false), 'fog');
  assert.equal(analysisVariantOf('crazyhouse', false), null);
});

const ply = (uci) => ({ uci, san: uci, fen: `after ${uci}` });

test('a move off the line replaces what followed; the line\'s own move steps forward', () => {
  let line = newLine(START);
  assert.equal(fenAt(line), START);
  for (const uci of ['e2e4', 'e7e5', 'g1f3']) line = playOn(line, ply(uci));
  assert.deepEqual(movesTo(line), ['e2e4', 'e7e5', 'g1f3']);
  line = stepLine(line, -2);
  assert.equal(fenAt(line), 'after e2e4');
  // Playing the line's next move keeps the rest.
  const same = playOn(line, ply('e7e5'));
  assert.equal(same.at, 2);
  assert.equal(same.plies.length, 3);
  // Another move replaces it.
  const other = playOn(line, ply('c7c5'));
  assert.deepEqual(other.plies.map((p) => p.uci), ['e2e4', 'c7c5']);
  assert.equal(other.at, 2);
  assert.equal(fenAt(other), 'after c7c5');
  // Stepping stops at both ends.
  assert.equal(stepLine(other, -5).at, 0);
  assert.equal(stepLine(other, 5).at, 2);
  assert.equal(stepLine(other, 'start').at, 0);
  assert.equal(stepLine(stepLine(other, 'start'), 'end').at, 2);
  // The line it came from is unchanged.
  assert.deepEqual(line.plies.map((p) => p.uci), ['e2e4', 'e7e5', 'g1f3']);
});

test('a line is numbered as a score sheet from its FEN', () => {
  assert.equal(numberedLine(START, ['e4', 'e5', 'Nf3']), '1. e4 e5 2. Nf3');
  assert.equal(numberedLine(AFTER_E4, ['e5', 'Nf3', 'Nc6']), '1... e5 2. Nf3 Nc6');
  assert.equal(numberedLine('k7/8/8/8/8/8/8/K7 b - - 3 41', ['Kb7']), '41... Kb7');
});

test('the FEN box says clearly why a FEN is refused, from the rules module itself', () => {
  const cases = [
    ['hello', /^That is not a valid FEN: FEN has 1 fields; expected 4 to 6/],
    ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1', /^That is not a valid FEN: board field: rank 1 has 7 squares, not 8\.$/],
    ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1', /^That is not a valid FEN: turn field "x": expected w or b\.$/],
    ['k7/8/8/8/8/8/8/KK6 w - - 0 1', /^That position is illegal: white has more than one king\.$/],
    ['k7/1Q6/8/8/8/8/8/K7 w - - 0 1', /^That position is illegal: white is to move but the king of black can already be taken\.$/],
  ];
  for (const [fen, message] of cases) {
    const answer = explore(fen, [], 'atomic');
    assert.ok(answer.error, `${fen} is refused`);
    assert.match(fenMessage(fen, answer.error), message);
  }
  assert.match(fenMessage('  ', null), /^Paste a FEN first/);
  assert.match(fenMessage('x', 'something else'), /^That FEN cannot be analysed: something else\.$/);
  const good = explore(START, ['e2e4'], 'atomic');
  assert.equal(good.fen, AFTER_E4);
  assert.deepEqual(good.san, ['e4']);
});

test("the engine's score is white's, in pawns or moves to mate", () => {
  assert.deepEqual(whiteScore(35, 'w'), { cp: 35 });
  assert.deepEqual(whiteScore(35, 'b'), { cp: -35 });
  assert.equal(scoreText(whiteScore(35, 'w')), '+0.35');
  assert.equal(scoreText(whiteScore(120, 'b')), '-1.20');
  assert.equal(scoreText({ cp: 0 }), '0.00');
  // Mate in 1 ply for the side to move is mate in one move.
  assert.equal(scoreText(whiteScore(29999, 'w')), '#1');
  assert.equal(scoreText(whiteScore(29999, 'b')), '-#1');
  // Mated in 4 plies: black (to move) is mated in two of white's moves.
  assert.equal(scoreText(whiteScore(-29996, 'b')), '#2');
  assert.equal(barPercent({ cp: 0 }), 50);
  assert.ok(barPercent({ cp: 300 }) > 70 && barPercent({ cp: 300 }) < 80);
  assert.equal(barPercent({ cp: 5000 }), barPercent({ cp: 1000 }));
  assert.equal(barPercent({ mate: 3 }), 100);
  assert.equal(barPercent({ mate: -3 }), 0);
});

test('Atomic960 castles king onto rook, as the server writes it, from a FEN the board chains', () => {
  const fen = '1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1';
  const here = explore(fen, [], 'atomic', true);
  assert.ok(here.legal.includes('e1g1') && here.legal.includes('e1b1'), `castling both ways: ${here.legal}`);
  const after = explore(fen, ['e1g1'], 'atomic', true);
  assert.deepEqual(after.san, ['O-O']);
  assert.equal(after.fen, '1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R3RK1 b kq - 1 1');
  // The next position is asked from that FEN alone, as the board does.
  const next = explore(after.fen, ['e8b8'], 'atomic', true);
  assert.deepEqual(next.san, ['O-O-O']);
});

test("the engine's line is its search's, cut short, or its best move alone", () => {
  assert.deepEqual(lineOfSearch({ uci: 'e2e4', pv: ['e2e4', 'e7e5', 'g1f3', 'b8c6'] }, 3), ['e2e4', 'e7e5', 'g1f3']);
  assert.deepEqual(lineOfSearch({ uci: 'e2e4' }, 6), ['e2e4']);
  // A line that does not start with the best move is not the best move's.
  assert.deepEqual(lineOfSearch({ uci: 'e2e4', pv: ['d2d4', 'd7d5'] }, 6), ['e2e4']);
  assert.deepEqual(lineOfSearch({ uci: null, pv: [] }, 6), []);
});

test("a game's own line comes back from where a line played off it parted", () => {
  let game = newLine(START);
  for (const uci of ['e2e4', 'e7e5', 'g1f3', 'b8c6']) game = playOn(game, ply(uci));
  game = stepLine(game, 'end');
  assert.equal(leftGame(game, game), false);
  // Two back, then another move: the line has left the game at ply 2.
  let line = playOn(stepLine(game, -2), ply('f1c4'));
  assert.equal(sharedPlies(game, line), 2);
  assert.equal(leftGame(game, line), true);
  line = playOn(line, ply('g8f6'));
  const back = backToGame(game, line);
  assert.deepEqual(back.plies.map((p) => p.uci), ['e2e4', 'e7e5', 'g1f3', 'b8c6']);
  assert.equal(back.at, 2, 'at the ply where the lines parted');
  // Only stepping back along the game's moves has not left it.
  assert.equal(leftGame(game, stepLine(game, -3)), false);
  assert.equal(backToGame(game, stepLine(game, -3)).at, 1);
  assert.equal(leftGame(null, line), false);
  assert.equal(sharedPlies(game, newLine(AFTER_E4, line.plies)), 0, 'another start shares nothing');
});

test('a finished position says who won and how, from the rules module', () => {
  // Atomic: Qxe7 blows up the black king beside e7.
  const before = explore('rnbqkbnr/ppppp1pp/8/5p2/7Q/4P3/PPPP1PPP/RNB1KBNR w KQkq - 0 1', [], 'atomic');
  assert.equal(before.outcome, null);
  const blown = explore('rnbqkbnr/ppppp1pp/8/5p2/7Q/4P3/PPPP1PPP/RNB1KBNR w KQkq - 0 1', ['h4e7'], 'atomic');
  assert.equal(outcomeText(blown.outcome), 'White wins: king exploded.');
  assert.equal(outcomeText({ result: '1/2-1/2', reason: 'stalemate' }), 'Draw: stalemate.');
  assert.equal(outcomeText({ result: '0-1', reason: 'something_new' }), 'Black wins: something new.');
  assert.equal(outcomeText(null), '');
});
