// What the page keeps of fog of war across a reload (js/fog-memory.js),
// against an in-memory localStorage: a seat's lost flags, own SAN, the
// pieces it took and its views come back for the same game and seat only,
// and go once the game ends.

import { test } from 'node:test';
import assert from 'node:assert/strict';

const items = new Map();
globalThis.localStorage = {
  getItem: (k) => (items.has(k) ? items.get(k) : null),
  setItem: (k, v) => items.set(k, String(v)),
  removeItem: (k) => items.delete(k),
};
const { recall, keepAfterMove, forget } = await import('../js/fog-memory.js');

test('lost flags, own SAN, captures and views come back for the same game and seat only', () => {
  const model = { id: 'z4bdsa9i82dn', you: 'black', lost: new Set(['f5']), captured: [] };
  keepAfterMove(model, { ply: 1, uci: 'f7f5', san: 'f5' });
  keepAfterMove({ ...model, lost: new Set(['f5', 'g6']) }, { ply: 2, uci: null });
  const views = [];
  views[4] = { fen: '8/8/8/8/4p3/8/8/8 w - - 0 3', visible: ['e4', 'e5'], last: ['f5', 'e4'] };
  keepAfterMove({ ...model, lost: new Set(['f5', 'g6']), captured: [{ ply: 3, uci: 'f5e4', role: 'p' }], views }, { ply: 3, uci: 'f5e4', san: 'fxe4' });
  assert.deepEqual(recall('z4bdsa9i82dn', 'black'), {
    lost: ['f5', 'g6'], sans: { 1: ['f7f5', 'f5'], 3: ['f5e4', 'fxe4'] }, captured: { 3: ['f5e4', 'p'] },
    views: { 4: ['8/8/8/8/4p3/8/8/8 w - - 0 3', 'e4 e5', 'f5e4'] },
  });
  const none = { lost: [], sans: {}, captured: {}, views: {} };
  assert.deepEqual(recall('z4bdsa9i82dn', 'white'), none);
  assert.deepEqual(recall('another', 'black'), none);
  forget();
  assert.deepEqual(recall('z4bdsa9i82dn', 'black'), none);
  assert.equal(items.size, 0);
});
