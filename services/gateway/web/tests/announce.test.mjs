// What the live region says of game frames: moves in words, the opponent's
// only, with blasts, hidden captures, results and offers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { announcement, spokenSan } from '../js/announce.js';

const seat = (you, turn, extra = {}) => ({
  you, position: { turn }, status: 'playing', players: { white: { name: 'a' }, black: { name: 'b' } }, taken: [], ...extra,
});

test('SAN is read out in words', () => {
  assert.equal(spokenSan('Nxd7#'), 'knight takes d7, mate');
  assert.equal(spokenSan('e4'), 'e4');
  assert.equal(spokenSan('exd5'), 'e pawn takes d5');
  assert.equal(spokenSan('Nf3'), 'knight to f3');
  assert.equal(spokenSan('Rad1+'), 'rook from a to d1, check');
  assert.equal(spokenSan('O-O-O'), 'castles queenside');
  assert.equal(spokenSan('e8=Q+'), 'e8, promotes to queen, check');
});

test("the opponent's move is told, with its blast; your own is not", () => {
  const frame = { t: 'move', san: 'Nxe5', exploded: ['e5', 'f6'], legal: ['e7e6'] };
  assert.equal(
    announcement({ frame, previous: seat('black', 'w'), model: seat('black', 'b') }),
    'White: knight takes e5. The explosion cleared e5, f6. Your turn.',
  );
  assert.equal(announcement({ frame, previous: seat('white', 'w'), model: seat('white', 'b') }), null);
  assert.equal(
    announcement({ frame, previous: seat('spectator', 'w'), model: seat('spectator', 'b') }),
    'White: knight takes e5. The explosion cleared e5, f6.',
  );
});

test('a hidden move tells what it took; the end, offers and presence are told', () => {
  const model = seat('black', 'b', { taken: [{ square: 'f5', role: 'p' }] });
  assert.equal(announcement({ frame: { t: 'move', uci: null, legal: ['e7e6'] }, previous: seat('black', 'w'), model }), 'White moved. Your pawn on f5 was taken. Your turn.');
  assert.equal(announcement({ frame: { t: 'end' }, model: { ...model, result: '1-0', reason: 'explosion' } }), 'Game over. White wins — king exploded.');
  assert.equal(announcement({ frame: { t: 'draw', action: 'offer', by: 'white' }, model }), 'Your opponent offers a draw.');
  assert.equal(announcement({ frame: { t: 'draw', action: 'offer', by: 'black' }, model }), null);
  assert.equal(announcement({ frame: { t: 'opponent_gone' }, model }), 'Your opponent left the game.');
});
