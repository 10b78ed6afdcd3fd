// The page's move replayer against python-chess: random standard and
// atomic games (tests/games.json, made with python-chess's Board and
// AtomicBoard) replay to the same positions, with the same SAN. Run with
// `node --test services/gateway/web/tests/`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseFen, placementOf, play, replay, san, checkedKing, START_FEN, sq } from '../js/chess.js';

const games = JSON.parse(readFileSync(new URL('./games.json', import.meta.url)));

test('random games replay to python-chess positions', () => {
  let plies = 0;
  for (const game of games) {
    const frames = replay(START_FEN, game.moves, game.variant);
    assert.equal(frames.length, game.moves.length + 1);
    game.placements.forEach((expected, i) => {
      assert.equal(placementOf(frames[i + 1].position.board), expected, `${game.variant} ply ${i} ${game.moves[i]}`);
      plies++;
    });
  }
  assert.ok(plies > 500, `replayed ${plies} plies`);
});

test('SAN matches python-chess but for pins it cannot see', () => {
  let same = 0, total = 0;
  for (const game of games) {
    const frames = replay(START_FEN, game.moves, game.variant);
    game.sans.forEach((expected, i) => {
      total++;
      if (frames[i + 1].san === expected) same++;
    });
  }
  // Disambiguation ignores pins (a pinned twin still counts): rare.
  assert.ok(same / total > 0.99, `${same} of ${total} SAN equal`);
});

test('castling in both spellings, en passant and promotion', () => {
  const castle = parseFen('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1');
  for (const uci of ['e1g1', 'e1h1']) {
    const after = play(castle, uci, 'standard').position;
    assert.equal(placementOf(after.board), 'r3k2r/8/8/8/8/8/8/R4RK1', uci);
  }
  const long = play(castle, 'e1a1', 'standard').position;
  assert.equal(placementOf(long.board), 'r3k2r/8/8/8/8/8/8/2KR3R');
  assert.equal(san(castle, 'e1c1', 'standard'), 'O-O-O');

  const ep = parseFen('4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1');
  const taken = play(ep, 'e5d6', 'standard').position;
  assert.equal(placementOf(taken.board), '4k3/8/3P4/8/8/8/8/4K3');
  assert.equal(san(ep, 'e5d6', 'standard'), 'exd6');

  const promo = parseFen('8/4P3/8/8/8/8/8/k3K3 w - - 0 1');
  const queened = play(promo, 'e7e8q', 'standard').position;
  assert.equal(queened.board[sq('e8')].r, 'q');
  assert.equal(san(promo, 'e7e8n', 'standard'), 'e8=N');
});

test('an atomic capture clears the neighbours but pawns, and reports the squares', () => {
  // After 1. Nf3 d5 2. Ne5 Nd7?? 3. Nxd7: the blast takes c8, d8 and e8 (the king).
  let position = parseFen(START_FEN);
  for (const uci of ['g1f3', 'd7d5', 'f3e5', 'b8d7']) position = play(position, uci, 'atomic').position;
  const { position: after, exploded } = play(position, 'e5d7', 'atomic');
  assert.equal(placementOf(after.board), 'r4bnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKB1R');
  assert.deepEqual([...exploded].sort(), ['c8', 'd7', 'd8', 'e8']);
});

test('check is seen, but not between touching kings in atomic', () => {
  const checked = parseFen('4k3/8/8/8/8/8/8/4K2r w - - 0 1');
  assert.equal(checkedKing(checked, 'w', 'standard'), sq('e1'));
  assert.equal(checkedKing(checked, 'w', 'fog'), -1);
  const touching = parseFen('8/8/8/8/8/8/3k4/r3K3 w - - 0 1');
  assert.equal(checkedKing(touching, 'w', 'standard'), sq('e1'));
  assert.equal(checkedKing(touching, 'w', 'atomic'), -1);
});

test('a move from a square the receiver cannot see only passes the turn', () => {
  const fogged = parseFen('8/8/8/8/8/8/8/4K3 b - - 0 1');
  const { position } = play(fogged, 'e7e5', 'fog');
  assert.equal(position.turn, 'w');
  assert.equal(placementOf(position.board), '8/8/8/8/8/8/8/4K3');
});
