// The lobby list: a whole list, then updates applied in order; an update
// from another version asks for the whole list again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextLobby } from '../js/lobby-list.js';

const board = (game, rating = 1500) => ({ game, code: 'ABCDEFGH', variant: 'atomic', rating });

test('updates apply to the list they follow, and only to it', () => {
  let held = nextLobby(null, { t: 'lobby', v: 4, open: [board('b'), board('a')] });
  assert.deepEqual(held.open.map((b) => b.game), ['b', 'a']);
  held = nextLobby(held, { t: 'lobby_update', v: 5, from: 4, added: [board('c'), board('a', 1510)], removed: ['a', 'b'] });
  assert.equal(held.v, 5);
  assert.deepEqual(held.open.map((b) => [b.game, b.rating]), [['c', 1500], ['a', 1510]]);
  assert.equal(nextLobby(held, { t: 'lobby_update', v: 7, from: 6, added: [], removed: ['c'] }), null, 'a missed update');
  assert.equal(nextLobby(null, { t: 'lobby_update', v: 1, from: 0, added: [], removed: [] }), null, 'no list yet');
  held = nextLobby(held, { t: 'lobby', v: 9, open: [] });
  assert.deepEqual(held, { v: 9, open: [] });
});

test('a board added again is listed once, as added', () => {
  let held = nextLobby(null, { t: 'lobby', v: 5, open: [board('x'), board('a')] });
  held = nextLobby(held, { t: 'lobby_update', v: 6, from: 5, added: [board('x', 1600)], removed: [] });
  assert.deepEqual(held.open.map((b) => [b.game, b.rating]), [['x', 1600], ['a', 1500]]);
});
