// The page's rules (js/rules.js, answered by the wasm module) against
// python-chess: random standard and atomic games (tests/games.json, made with
// python-chess's Board and AtomicBoard) replay to the same positions with
// the same SAN; check and mate marks, blasts, castling, en passant and
// promotion; and the board's own drawing of a move in flight (js/chess.js).
// Run with `node --test services/gateway/web/tests/`.

import './rules-module.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { drawMove, parseFen, placementOf, START_FEN, sq } from '../js/chess.js';
import { checkedKing, replay } from '../js/rules.js';

const games = JSON.parse(readFileSync(new URL('./games.json', import.meta.url)));

const sansOf = (moves, variant, fen = START_FEN) => replay(fen, moves, variant).slice(1).map((f) => f.san);

test('random games replay to python-chess positions, with its SAN', () => {
  let plies = 0;
  for (const game of games) {
    const frames = replay(START_FEN, game.moves, game.variant);
    assert.equal(frames.length, game.moves.length + 1);
    game.placements.forEach((expected, i) => {
      assert.equal(placementOf(frames[i + 1].position.board), expected, `${game.variant} ply ${i} ${game.moves[i]}`);
      const ours = frames[i + 1].san;
      if (game.variant === 'atomic' && i === game.moves.length - 1) {
        // The blast that ends the game: python-chess marks it as it likes, the server with #.
        assert.equal(ours, `${game.sans[i].replace(/[+#]+$/, '')}#`, `${game.variant} ply ${i} ${game.moves[i]}`);
      } else {
        assert.equal(ours, game.sans[i], `${game.variant} ply ${i} ${game.moves[i]}`);
      }
      plies++;
    });
  }
  assert.ok(plies > 500, `replayed ${plies} plies`);
});

test('SAN marks mate with # and check with +, as the server writes it', () => {
  assert.deepEqual(sansOf(['f2f3', 'e7e5', 'g2g4', 'd8h4'], 'standard'), ['f3', 'e5', 'g4', 'Qh4#']);
  assert.deepEqual(sansOf(['e2e4', 'f7f6', 'd1h5'], 'standard'), ['e4', 'f6', 'Qh5+']);
  // Atomic: the blast that takes the king is mate.
  assert.deepEqual(sansOf(['g1f3', 'd7d5', 'f3e5', 'b8d7', 'e5d7'], 'atomic'), ['Nf3', 'd5', 'Ne5', 'Nd7', 'Nxd7#']);
  // Fog of war has no check; taking the king is mate.
  const fog = ['e2e4', 'f7f5', 'e4f5', 'g7g6', 'd1h5', 'a7a6', 'h5g6', 'b7b6', 'g6e8'];
  assert.deepEqual(sansOf(fog, 'fog'), ['e4', 'f5', 'exf5', 'g6', 'Qh5', 'a6', 'Qxg6', 'b6', 'Qxe8#']);
});

test('castling in both spellings, en passant and promotion', () => {
  const castle = 'r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1';
  for (const uci of ['e1g1', 'e1h1']) {
    const [, after] = replay(castle, [uci], 'standard');
    assert.equal(placementOf(after.position.board), 'r3k2r/8/8/8/8/8/8/R4RK1', uci);
    assert.equal(after.san, 'O-O');
  }
  assert.equal(placementOf(replay(castle, ['e1a1'], 'standard')[1].position.board), 'r3k2r/8/8/8/8/8/8/2KR3R');
  assert.deepEqual(sansOf(['e1c1'], 'standard', castle), ['O-O-O']);

  const [, taken] = replay('4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1', ['e5d6'], 'standard');
  assert.equal(placementOf(taken.position.board), '4k3/8/3P4/8/8/8/8/4K3');
  assert.equal(taken.san, 'exd6');

  const promo = '8/4P3/8/8/8/8/8/k3K3 w - - 0 1';
  assert.equal(replay(promo, ['e7e8q'], 'standard')[1].position.board[sq('e8')].r, 'q');
  assert.deepEqual(sansOf(['e7e8n'], 'standard', promo), ['e8=N']);
});

test('an atomic capture clears the neighbours but pawns, and reports the squares', () => {
  // After 1. Nf3 d5 2. Ne5 Nd7?? 3. Nxd7: the blast takes c8, d8 and e8 (the king).
  const frames = replay(START_FEN, ['g1f3', 'd7d5', 'f3e5', 'b8d7', 'e5d7'], 'atomic');
  const { position, exploded, last } = frames[5];
  assert.equal(placementOf(position.board), 'r4bnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKB1R');
  assert.deepEqual([...exploded].sort(), ['c8', 'd7', 'd8', 'e8']);
  assert.deepEqual(last, ['e5', 'd7']);
  assert.deepEqual(frames[4].exploded, []);
});

test('check is seen, but not between touching kings in atomic, nor in fog of war', () => {
  const checked = '4k3/8/8/8/8/8/8/4K2r w - - 0 1';
  assert.equal(checkedKing(checked, 'standard'), sq('e1'));
  assert.equal(checkedKing(checked, 'fog'), -1);
  // The rook on a1 attacks e1, but a king touching its own cannot be taken.
  assert.equal(checkedKing('8/8/8/8/8/8/3k4/r3K3 w - - 0 1', 'atomic'), -1);
  assert.equal(checkedKing('8/8/8/8/8/8/2k5/r3K3 w - - 0 1', 'atomic'), sq('e1'));
  assert.equal(checkedKing(START_FEN, 'standard'), -1);
  const [, , , check] = replay(START_FEN, ['e2e4', 'f7f6', 'd1h5'], 'standard');
  assert.equal(check.check, sq('e8'));
});

test('a game with an unknown move or one the rules refuse has no replay', () => {
  assert.equal(replay(START_FEN, ['e2e4', null], 'fog'), null);
  assert.equal(replay(START_FEN, ['e2e5'], 'standard'), null);
});

test('a move in flight is drawn at once: castling both ways, en passant, promotion', () => {
  const castle = parseFen('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1').board;
  assert.equal(placementOf(drawMove(castle, 'e1g1')), 'r3k2r/8/8/8/8/8/8/R4RK1');
  assert.equal(placementOf(drawMove(castle, 'e1h1')), 'r3k2r/8/8/8/8/8/8/R4RK1');
  assert.equal(placementOf(drawMove(castle, 'e1a1')), 'r3k2r/8/8/8/8/8/8/2KR3R');
  assert.equal(placementOf(drawMove(parseFen('4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1').board, 'e5d6')), '4k3/8/3P4/8/8/8/8/4K3');
  assert.equal(drawMove(parseFen('8/4P3/8/8/8/8/8/k3K3 w - - 0 1').board, 'e7e8n')[sq('e8')].r, 'n');
  // No blast before the answer names its squares.
  const atomic = parseFen('4k3/8/8/3p4/4N3/8/8/4K3 w - - 0 1').board;
  assert.equal(placementOf(drawMove(atomic, 'e4d6')), '4k3/8/3N4/3p4/8/8/8/4K3');
});

test('a refused move names the rule it breaks', async () => {
  const { whyRefused } = await import('../js/rules.js');
  assert.equal(whyRefused('4k3/8/8/8/8/8/4p3/4K3 w - - 0 1', 'atomic', 'e1e2'), 'king_cannot_capture');
  assert.equal(whyRefused('4k3/8/8/8/8/3p4/4K3/2N5 w - - 0 1', 'atomic', 'c1d3'), 'own_king_explodes');
  assert.equal(whyRefused('4r1k1/8/8/8/8/8/4B3/4K3 w - - 0 1', 'standard', 'e2d3'), 'pinned');
  assert.equal(whyRefused('rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', 'standard', 'e2e4'), 'legal');
});

test("an atomic capture's blast: its squares and the kings it takes", async () => {
  const { blastOf } = await import('../js/rules.js');
  const nxd7 = blastOf('rnbqkbnr/1ppppppp/8/p3N3/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 3', 'atomic', 'e5d7');
  assert.deepEqual([...nxd7.squares].sort(), ['c8', 'd7', 'd8', 'e8']);
  assert.equal(nxd7.theirKing, 'e8');
  assert.equal(nxd7.ownKing, null);
  assert.equal(blastOf('4k3/8/8/8/8/3p4/4K3/2N5 w - - 0 1', 'atomic', 'c1d3').ownKing, 'e2');
  assert.equal(blastOf(START_FEN, 'atomic', 'e2e4'), null);
  assert.equal(blastOf('4k3/8/8/8/8/3p4/4K3/2N5 w - - 0 1', 'standard', 'c1d3'), null);
});
