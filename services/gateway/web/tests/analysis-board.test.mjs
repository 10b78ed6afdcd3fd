// The analysis board's logic: its link, the line explored, the FEN box's
// messages (from the very rules module the page loads), and the engine's
// score as the bar writes it. Run with `node --test services/gateway/web/tests/`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import './rules-module.mjs';
import { explore } from '../js/rules.js';
import {
  analysisHash, analysisInHash, analysisVariantOf, backToMainline, barPercent, currentLine, deleteVariation, fenAt, fenMessage, goTo, leftMainline,
  lineOfSearch, mainline, movesTo, newTree, nodeAt, numberedLine, outcomeText, pathOfText, pathText, playOn, scoreText, stepLine, whiteScore,
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

const ucis = (plies) => plies.map((p) => (p.ply || p).uci);

test('a move off the line opens a variation; the line\'s own move steps forward; the mainline stays', () => {
  let tree = newTree(START);
  assert.equal(fenAt(tree), START);
  for (const uci of ['e2e4', 'e7e5', 'g1f3']) tree = playOn(tree, ply(uci));
  assert.deepEqual(movesTo(tree), ['e2e4', 'e7e5', 'g1f3']);
  tree = stepLine(tree, -2);
  assert.equal(fenAt(tree), 'after e2e4');
  // Playing the line's next move keeps the rest.
  const same = playOn(tree, ply('e7e5'));
  assert.deepEqual(same.path, [0, 0]);
  assert.deepEqual(ucis(currentLine(same)), ['e2e4', 'e7e5', 'g1f3']);
  // Another move opens a variation beside it; nothing is deleted.
  const other = playOn(tree, ply('c7c5'));
  assert.deepEqual(other.path, [0, 1]);
  assert.equal(fenAt(other), 'after c7c5');
  assert.deepEqual(ucis(currentLine(other)), ['e2e4', 'c7c5']);
  assert.deepEqual(ucis(mainline(other)), ['e2e4', 'e7e5', 'g1f3'], 'the mainline stays');
  assert.equal(leftMainline(other), true);
  // Its own moves continue it; playing c7c5 again steps into it.
  const deeper = playOn(other, ply('g1f3'));
  assert.deepEqual(deeper.path, [0, 1, 0]);
  assert.deepEqual(playOn(stepLine(deeper, -2), ply('c7c5')).path, [0, 1]);
  // Stepping follows the line on the board and stops at both ends.
  assert.deepEqual(stepLine(deeper, -5).path, []);
  assert.deepEqual(stepLine(stepLine(deeper, -1), 5).path, [0, 1, 0]);
  assert.deepEqual(stepLine(stepLine(deeper, 'start'), 'end').path, [0, 0, 0], 'from the start, the mainline');
  assert.deepEqual(stepLine(stepLine(deeper, -1), 'end').path, [0, 1, 0], 'from a variation, its own end');
  // The tree it came from is unchanged.
  assert.deepEqual(ucis(mainline(tree)), ['e2e4', 'e7e5', 'g1f3']);
  assert.equal(nodeAt(tree, [0]).children.length, 1);
});

test('any node can be gone to, and a variation deleted without touching the mainline', () => {
  let tree = newTree(START);
  for (const uci of ['e2e4', 'e7e5', 'g1f3']) tree = playOn(tree, ply(uci));
  tree = playOn(stepLine(tree, 'start'), ply('d2d4'));
  tree = playOn(tree, ply('d7d5'));
  tree = playOn(stepLine(tree, -1), ply('g8f6'));
  // e4 (mainline) and d4 at the root; d5 and Nf6 after d4.
  assert.deepEqual(tree.path, [1, 1]);
  assert.deepEqual(ucis(currentLine(goTo(tree, [1, 0]))), ['d2d4', 'd7d5']);
  assert.equal(fenAt(goTo(tree, [0, 0, 0])), 'after g1f3');
  assert.deepEqual(goTo(tree, [0, 5]).path, [1, 1], 'no such node: unchanged');
  assert.equal(pathText([0, 1, 0]), '0.1.0');
  assert.deepEqual(pathOfText('0.1.0'), [0, 1, 0]);
  assert.deepEqual(pathOfText(''), []);
  // Deleting the board's own variation takes it back to where it branched.
  const noNf6 = deleteVariation(tree, [1, 1]);
  assert.deepEqual(noNf6.path, [1]);
  assert.deepEqual(nodeAt(noNf6, [1]).children.map((c) => c.ply.uci), ['d7d5']);
  // Deleting an earlier sibling keeps the board on its node.
  const noD5 = deleteVariation(tree, [1, 0]);
  assert.deepEqual(noD5.path, [1, 0]);
  assert.equal(fenAt(noD5), 'after g8f6');
  // Deleting d4 takes both of its replies; the mainline is untouched.
  const noD4 = deleteVariation(tree, [1]);
  assert.deepEqual(noD4.path, []);
  assert.equal(noD4.root.children.length, 1);
  assert.deepEqual(ucis(mainline(noD4)), ['e2e4', 'e7e5', 'g1f3']);
  // The mainline itself cannot be deleted.
  assert.equal(deleteVariation(tree, [0, 0]), tree);
  assert.equal(deleteVariation(tree, []), tree);
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

test("a game's own moves are the mainline, and the board comes back to it where a variation left", () => {
  const game = newTree(START, ['e2e4', 'e7e5', 'g1f3', 'b8c6'].map(ply));
  assert.deepEqual(game.path, [0, 0, 0, 0], 'at the end by default');
  assert.deepEqual(newTree(START, ['e2e4', 'e7e5'].map(ply), 1).path, [0]);
  assert.equal(leftMainline(game), false);
  // Two back, then another move, then its reply: off the game at ply 2.
  let tree = playOn(stepLine(game, -2), ply('f1c4'));
  tree = playOn(tree, ply('g8f6'));
  assert.equal(leftMainline(tree), true);
  const back = backToMainline(tree);
  assert.deepEqual(back.path, [0, 0], 'at the ply where the variation left');
  assert.deepEqual(ucis(mainline(back)), ['e2e4', 'e7e5', 'g1f3', 'b8c6']);
  assert.equal(nodeAt(back, [0, 0]).children.length, 2, 'the variation is kept');
  // Stepping back along the game's moves has not left it.
  assert.equal(leftMainline(stepLine(game, -3)), false);
  assert.equal(backToMainline(stepLine(game, -3)).path.length, 1);
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
