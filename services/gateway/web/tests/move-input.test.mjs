// Reading a typed move (js/features/move-input.js `readMove`) against the
// legal moves: SAN with and without disambiguation, castling both ways,
// promotions, UCI, and what a refusal names for the board's words.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFen } from '../js/chess.js';

globalThis.document = { querySelector: () => null };
const { readMove } = await import('../js/features/move-input.js');

const start = parseFen('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1').board;
const startLegal = ['a2a3', 'a2a4', 'b1a3', 'b1c3', 'e2e3', 'e2e4', 'g1f3', 'g1h3'];

test('SAN and UCI name legal moves', () => {
  assert.deepEqual(readMove('e4', start, startLegal, 'white'), { uci: 'e2e4' });
  assert.deepEqual(readMove('Nf3+', start, startLegal, 'white'), { uci: 'g1f3' });
  assert.deepEqual(readMove('e2e4', start, startLegal, 'white'), { uci: 'e2e4' });
  assert.deepEqual(readMove('e2-e4', start, startLegal, 'white'), { uci: 'e2e4' });
});

test('refusals name the piece meant, ambiguity and nonsense are told apart', () => {
  assert.deepEqual(readMove('Ng3', start, startLegal, 'white'), { refused: { from: 'g1', to: 'g3', role: 'n' } });
  assert.deepEqual(readMove('g1g3', start, startLegal, 'white'), { refused: { from: 'g1', to: 'g3', role: 'n' } });
  assert.deepEqual(readMove('hello', start, startLegal, 'white'), { unknown: true });
  const board = parseFen('4k3/8/8/8/8/8/8/1N1K1N2 w - - 0 1').board;
  assert.deepEqual(readMove('Nd2', board, ['b1d2', 'f1d2'], 'white'), { ambiguous: ['b1d2', 'f1d2'] });
  assert.deepEqual(readMove('Nbd2', board, ['b1d2', 'f1d2'], 'white'), { uci: 'b1d2' });
});

test('castling and promotion', () => {
  const board = parseFen('r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1').board;
  const legal = ['e1g1', 'e1c1', 'b7b8q', 'b7b8n', 'b7a8q', 'b7a8n'];
  assert.deepEqual(readMove('O-O', board, legal, 'white'), { uci: 'e1g1' });
  assert.deepEqual(readMove('0-0-0', board, legal, 'white'), { uci: 'e1c1' });
  assert.deepEqual(readMove('b8=N', board, legal, 'white'), { uci: 'b7b8n' });
  assert.deepEqual(readMove('b8', board, legal, 'white'), { uci: 'b7b8q' });
  assert.deepEqual(readMove('bxa8=Q', board, legal, 'white'), { uci: 'b7a8q' });
  assert.deepEqual(readMove('b7a8n', board, legal, 'white'), { uci: 'b7a8n' });
});
