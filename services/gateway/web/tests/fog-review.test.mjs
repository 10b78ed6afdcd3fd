// The fog review's words and boards (js/fog-review.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';

const { boardSquares, momentText, summaryText, reviewedPly } = await import('../js/fog-review.js');

test('a board with fog reads square by square, a8 first', () => {
  const squares = boardSquares('4k3/8/8/b7/8/8/3P4/4K3');
  assert.equal(squares.length, 64);
  assert.deepEqual(squares[4], { square: 'e8', piece: 'k', glyph: '♚', fogged: false, light: true });
  assert.equal(squares[24].square, 'a5');
  const fogged = boardSquares('********/8/8/8/8/8/8/4K3');
  assert.equal(fogged.filter((s) => s.fogged).length, 8);
  assert.equal(fogged[60].glyph, '♔');
});

test('moments and summaries in words', () => {
  assert.equal(
    momentText({ kind: 'king_exposed_unseen', ply: 1, color: 'white', king: 'e1', by: ['a5'] }),
    "move 1: White's king on e1 could be taken from a5, out of White's sight",
  );
  assert.equal(momentText({ kind: 'missed_king_capture', ply: 2, color: 'black', uci: 'a5e1' }), 'move 2: Black could take the king with a5e1');
  assert.equal(
    momentText({ kind: 'missed_capture', ply: 0, color: 'white', uci: 'a1a5', square: 'a5', role: 'knight' }),
    'move 1: White could take a free knight on a5 (a1a5)',
  );
  assert.equal(
    summaryText('black', { moves: 3, captures: 1, king_exposed_unseen: 0, missed_king_captures: 1, missed_captures: 0 }),
    'Black: 3 moves, 1 captures, 1 × king capture missed',
  );
});

test('the ply on screen picks its position, the final one by default', () => {
  const review = { plies: [{ ply: 0 }, { ply: 1 }, { ply: 2 }] };
  assert.equal(reviewedPly(review, null).ply, 2);
  assert.equal(reviewedPly(review, 1).ply, 1);
  assert.equal(reviewedPly(review, 9).ply, 2);
  assert.equal(reviewedPly({ plies: [] }, 0), null);
});
