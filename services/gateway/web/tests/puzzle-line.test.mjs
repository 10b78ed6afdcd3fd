// The Puzzles screen's line: which squares a fog view hides, what follows
// each move of the solver, and how a rating change reads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changeText, foggedSquares, nextStep } from '../js/puzzle-line.js';
import { routeOf } from '../js/router.js';

test('a view FEN fogs exactly its starred squares', () => {
  const fogged = foggedSquares('********/*******p/*******1/*1*****1/*7/N7/PPPPPPPR/R1BQKBN1 w Q - 5');
  assert.equal(fogged.size, 8 + 7 + 7 + 6 + 1);
  for (const square of ['a8', 'h8', 'g7', 'a4', 'c5', 'g5']) assert.ok(fogged.has(square), square);
  for (const square of ['h7', 'h6', 'b5', 'h5', 'b4', 'a3', 'a1']) assert.ok(!fogged.has(square), square);
  assert.equal(foggedSquares('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1').size, 0);
});

test("the solution's move leads on to the reply or the end; any other is the server's to judge", () => {
  const line = ['e2e3', 'h8g8', 'd1h5'];
  assert.equal(nextStep(line, 0, 'e2e3'), 'reply');
  assert.equal(nextStep(line, 2, 'd1h5'), 'solved');
  assert.equal(nextStep(line, 0, 'e2e4'), 'judge');
  assert.equal(nextStep(['g5f7'], 0, 'g5f7'), 'solved');
});

test('a rating change reads with its sign', () => {
  assert.equal(changeText(12.4), '+12');
  assert.equal(changeText(-7), '−7');
  assert.equal(changeText(0.2), '±0');
});

test('#puzzles and #puzzle=ID lead to the Puzzles screen', () => {
  assert.deepEqual(routeOf({ pathname: '/', hash: '#puzzles' }, null), { to: 'puzzles', id: null });
  assert.deepEqual(routeOf({ pathname: '/', hash: '#puzzle=7m8c9zzs' }, { id: 'g', active: true }), { to: 'puzzles', id: '7m8c9zzs' });
});
