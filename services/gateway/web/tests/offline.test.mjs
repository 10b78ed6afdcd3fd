// Offline play (offline/offline.js) under node: the engine's Web Worker is
// stood in for by the same rules module answering in the page's thread, and
// localStorage by a map. A game is stored one move before its end, the
// player's mating move is sent, and the frames the connection makes are fed
// to the model: the ending move keeps its `#`, live and after a reload.

import { rules } from './rules-module.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyFrame } from '../js/model.js';

const items = new Map();
globalThis.localStorage = {
  getItem: (k) => (items.has(k) ? items.get(k) : null),
  setItem: (k, v) => items.set(k, String(v)),
  removeItem: (k) => items.delete(k),
};
globalThis.Worker = class {
  postMessage({ id, request }) {
    queueMicrotask(() => this.onmessage({ data: { id, answer: rules.call(request) } }));
  }
};
const { OfflineConnection } = await import('../offline/offline.js');

/** Plays `uci` as `you` in a stored game at `moves`, and returns the frames up to the end and the models they make. */
async function finishWith(variant, you, moves, uci) {
  const id = `offline-${variant}`;
  const stored = { id, variant, you, level: 'easy', v: moves.length + 1, moves, status: 'playing', result: null, reason: null, seed: 1, started: 0 };
  localStorage.setItem('fogblast.offline.games', JSON.stringify({ [id]: stored }));
  const conn = new OfflineConnection();
  const frames = [];
  conn.onFrame((f) => frames.push(f));
  conn.start();
  const ended = new Promise((resolve) => conn.onFrame((f) => f.t === 'end' && resolve()));
  const state = await conn.request({ t: 'watch', game: id });
  conn.send({ t: 'move', game: id, ply: moves.length, uci });
  await ended;
  let model = applyFrame(null, state, { now: 0 });
  for (const f of frames.filter((f) => f.game === id && f.t !== 'state')) model = applyFrame(model, f, { now: 1 });
  const reloaded = applyFrame(null, await conn.request({ t: 'watch', game: id }), { now: 2 });
  return { frames, model, reloaded };
}

test('offline, the mating move is named with # in its frame, in the model and after a reload', async () => {
  const { frames, model, reloaded } = await finishWith('standard', 'black', ['f2f3', 'e7e5', 'g2g4'], 'd8h4');
  assert.equal(frames.find((f) => f.t === 'move').san, 'Qh4#');
  assert.equal(model.status, 'ended');
  assert.equal(model.reason, 'checkmate');
  assert.deepEqual(model.sans, ['f3', 'e5', 'g4', 'Qh4#']);
  assert.deepEqual(reloaded.sans, ['f3', 'e5', 'g4', 'Qh4#']);
  assert.equal(reloaded.replay.length, 5);
});

test('offline, the blast that takes the king is named with #', async () => {
  const { frames, model, reloaded } = await finishWith('atomic', 'white', ['g1f3', 'f7f6', 'f3e5', 'a7a6'], 'e5d7');
  const move = frames.find((f) => f.t === 'move');
  assert.equal(move.san, 'Nxd7#');
  assert.ok(move.exploded.includes('e8'), JSON.stringify(move));
  assert.equal(model.reason, 'explosion');
  assert.equal(model.sans[4], 'Nxd7#');
  assert.equal(reloaded.sans[4], 'Nxd7#');
});
