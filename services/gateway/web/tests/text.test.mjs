// What the page writes for results, clocks and errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clockLabel, errorText, escapeHtml, fmtClock, moveErrorText, outcomeFor, plural, refusalText, resultText } from '../js/text.js';

test('results name the winner and the reason', () => {
  assert.equal(resultText({ result: '1-0', reason: 'explosion' }), 'White wins — king exploded');
  assert.equal(resultText({ result: '0-1', reason: 'resign' }), 'Black wins — White resigned');
  assert.equal(resultText({ result: '1-0', reason: 'timeout' }), 'White wins — Black ran out of time');
  assert.equal(resultText({ result: '0-1', reason: 'abandoned' }), 'Black wins — White left the game');
  assert.equal(resultText({ result: '1/2-1/2', reason: 'agreement' }), 'Draw — draw agreed');
  assert.equal(resultText({ result: '1/2-1/2', reason: 'abandoned' }), 'Draw — both players left');
  assert.equal(resultText({ result: '*', reason: 'aborted' }), 'Game aborted');
});

test('clocks: minutes and seconds, tenths under ten seconds, hours when long, never negative', () => {
  assert.equal(fmtClock(300000), '5:00');
  assert.equal(fmtClock(61001), '1:02');
  assert.equal(fmtClock(9950), '0:09.9');
  assert.equal(fmtClock(3600000), '1:00:00');
  assert.equal(fmtClock(-20), '0:00.0');
  assert.equal(clockLabel({ initial_ms: 180000, increment_ms: 2000 }), '3 + 2');
  assert.equal(clockLabel(null), 'no clock');
});

test('errors read as sentences; markup is escaped', () => {
  assert.equal(moveErrorText({ code: 'illegal_move', message: 'e2e5 is not a legal move here' }), 'Illegal move: e2e5 is not a legal move here.');
  assert.equal(errorText({ code: 'not_found', message: 'no open game has that code' }), 'No open game has that code');
  assert.equal(errorText({ code: 'conflict' }), 'Refused (conflict).');
  assert.equal(escapeHtml('<b a="1">&\''), '&lt;b a=&quot;1&quot;&gt;&amp;&#39;');
});

test('counts are pluralised', () => {
  assert.equal(plural(1, 'game'), '1 game');
  assert.equal(plural(0, 'game'), '0 games');
  assert.equal(plural(2, 'game'), '2 games');
});

test('a refused move says which rule it breaks', () => {
  assert.equal(refusalText('king_cannot_capture'), 'Kings cannot capture in atomic chess: the explosion would take your own king too.');
  assert.equal(refusalText('own_king_explodes', { to: 'd3' }), 'Your king would explode: it stands next to d3, where this capture blows up.');
  assert.equal(refusalText('pinned', { role: 'b' }), 'That bishop is pinned: moving it would put your king in check.');
  assert.equal(refusalText('cannot_move_there', { from: 'g1', to: 'g3', role: 'n' }), 'A knight cannot move from g1 to g3.');
  assert.equal(refusalText('not_your_turn', { computer: true }), 'It is not your turn: wait for the computer to move.');
  assert.equal(refusalText('not_your_piece', { you: 'white' }), 'That piece is not yours: you play White.');
  assert.equal(refusalText(null, { from: 'e2', to: 'e5' }), 'e2–e5 is not a legal move here.');
  assert.equal(refusalText('other_side_to_move', { you: 'black' }), "It is Black's turn.");
});

test('the result banner: won, lost or draw for a seat; nothing for spectators or an aborted game', () => {
  const ended = (you, result) => ({ status: 'ended', you, result });
  assert.equal(outcomeFor(ended('white', '1-0')), 'won');
  assert.equal(outcomeFor(ended('black', '1-0')), 'lost');
  assert.equal(outcomeFor(ended('black', '0-1')), 'won');
  assert.equal(outcomeFor(ended('white', '1/2-1/2')), 'draw');
  assert.equal(outcomeFor(ended('spectator', '1-0')), null);
  assert.equal(outcomeFor(ended('white', '*')), null);
  assert.equal(outcomeFor({ status: 'playing', you: 'white', result: null }), null);
});
