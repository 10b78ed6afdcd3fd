// The analysis the page shows: winning percentages, marks and the graph.
// Run with `node --test services/gateway/web/tests/`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analysisView, graphPath, markTitle, whiteWinPercent } from '../js/analysis.js';

const DONE = {
  state: 'done',
  positions: [
    { ply: 0, cp: 20, best: 'g1f3' },
    { ply: 1, cp: 30, best: 'a7a6' },
    { ply: 2, mate: 2, best: 'f3g5' },
    { ply: 3, mate: 1, best: 'g5f7' },
    { ply: 4, result: '1-0' },
  ],
  moves: [
    { ply: 1, uci: 'g1f3', judgement: null, mark: null, better: null },
    { ply: 2, uci: 'a7a6', judgement: 'blunder', mark: '??', better: 'e7e6' },
    { ply: 3, uci: 'f3g5', judgement: null, mark: null, better: null },
    { ply: 4, uci: 'g5f7', judgement: null, mark: null, better: null },
  ],
  accuracy: { white: 97.1, black: 40.2 },
};

test('winning percentages follow lichess', () => {
  assert.equal(whiteWinPercent({ cp: 0 }), 50);
  assert.ok(Math.abs(whiteWinPercent({ cp: 100 }) - 59.1) < 0.01);
  assert.equal(whiteWinPercent({ mate: -3 }), whiteWinPercent({ cp: -5000 }));
  assert.equal(whiteWinPercent({ result: '0-1' }), 0);
  assert.equal(whiteWinPercent({}, 61), 61, 'a position without a score counts as the one before');
});

test('a done analysis gives the graph, the marks and the accuracies', () => {
  const view = analysisView(DONE);
  assert.equal(view.wins.length, 5);
  assert.equal(view.wins[4], 100, 'the explosion wins everything');
  assert.deepEqual(Object.keys(view.marks), ['1']);
  assert.equal(view.marks[1].mark, '??');
  assert.equal(markTitle(view.marks[1]), 'Blunder. Better: e7e6');
  assert.deepEqual(view.accuracy, { white: 97.1, black: 40.2 });
  assert.equal(analysisView({ state: 'queued', positions: [], moves: [] }), null);
  assert.equal(analysisView(null), null);
});

test('the graph runs across the box, white up', () => {
  const path = graphPath([50, 100, 0], 200, 100);
  assert.equal(path, 'M0.0,50.0 L100.0,0.0 L200.0,100.0');
  assert.equal(graphPath([50], 200, 100), '');
});
