// The words of home's Watch list: each seat with its rating ("?" while
// provisional or unrated), the computer with its level, and what is played.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gameText, seatText } from '../js/features/watch.js';

test('a seat reads as its name and rating, "?" while provisional or unrated', () => {
  assert.equal(seatText({ id: 'a', name: 'Ann', rating: 1712, provisional: false }), 'Ann (1712)');
  assert.equal(seatText({ id: 'a', name: 'Ann', rating: 1712, provisional: true }), 'Ann (1712?)');
  assert.equal(seatText({ id: 'b', name: '', rating: null, provisional: true }), 'Anonymous (1500?)');
  assert.equal(seatText({ computer: true, name: 'Computer', level: 'hard' }), 'Computer (hard)');
  assert.equal(seatText(null), '—');
});

test('a game reads as its variant, clock and whether it is rated', () => {
  assert.equal(gameText({ variant: 'fog', chess960: false, rated: false, time_control: null }), 'Fog of war · no clock · casual');
  assert.equal(gameText({ variant: 'atomic', chess960: true, rated: true, time_control: { initial_ms: 180000, increment_ms: 2000 } }), 'Atomic 960 · 3 + 2 · rated');
});
