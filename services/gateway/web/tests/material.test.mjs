// Material beside the names (js/material.js): the pieces each side took and
// the lead, a promoted pawn not counted as lost, and in fog of war only
// what the seat knows (nothing for a spectator).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFen, START_FEN } from '../js/chess.js';
import { capturedBy } from '../js/model.js';
import { material, lostPieces } from '../js/material.js';

const model = (fen, extra = {}) => ({ variant: 'atomic', status: 'playing', you: 'white', initialFen: START_FEN, position: parseFen(fen), captured: [], ...extra });

test("an atomic blast's whole toll and the lead", () => {
  assert.deepEqual(material(model('r3kbnr/1p1ppp1p/p6p/8/8/8/PPPPPPPP/R1BQKBNR b KQkq - 0 3')), {
    white: { taken: ['q', 'b', 'n', 'p'], ahead: 13 },
    black: { taken: ['n'], ahead: 0 },
  });
});

test('a promoted pawn is not lost', () => {
  const start = parseFen(START_FEN).board;
  // White's a-pawn became a second queen; black lost its a-pawn, its rook and its knight.
  const now = parseFen('2bqkbnr/1ppppppp/8/8/8/8/1PPPPPPP/QNBQKBNR b Kk - 0 5').board;
  assert.deepEqual(lostPieces(start, now, 'w'), ['r']);
  assert.deepEqual(lostPieces(start, now, 'b'), ['r', 'n', 'p']);
});

test('fog of war: what the seat took and lost, no score; nothing for a spectator', () => {
  const fen = '8/8/8/3P4/8/8/PPPP1PPP/RNBQKBNR b KQ - 0 2';
  const seat = model(fen, { variant: 'fog', captured: [{ ply: 2, uci: 'e4d5', role: 'p' }] });
  assert.deepEqual(material(seat), { white: { taken: ['p'], ahead: null }, black: { taken: [], ahead: null } });
  assert.equal(material(model(fen, { variant: 'fog', you: 'spectator' })), null);
});

test('a capture as the mover saw it, en passant included', () => {
  const board = parseFen('rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3').board;
  assert.equal(capturedBy(board, 'e5d6', 'w'), 'p', 'a diagonal pawn step onto an empty square');
  assert.equal(capturedBy(board, 'e5f6', 'w'), 'p');
  assert.equal(capturedBy(board, 'g1f3', 'w'), null);
});
