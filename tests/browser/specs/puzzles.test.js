// Puzzles: home shows the daily puzzle and leads to the Puzzles screen; an
// atomic puzzle is solved on the board (the opponent's reply plays itself)
// and a fog puzzle from the solver's view alone, the fogged squares drawn
// as fog; each solve is judged by the server and moves the player's puzzle
// rating, which the page shows with its change; a wrong move lowers it and
// the board shows the solution's move. No request of the normal flow is
// refused (the page logs no error).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../lib/server.js';
import { Player, launch, withShots } from '../lib/player.js';
import { REPO } from '../lib/paths.js';

const STARTER = readFileSync(join(REPO, 'crates/puzzles/data/starter.jsonl'), 'utf8')
  .split('\n')
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line));

let server;
let browser;
const players = [];
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const square = (player, name) => player.page.locator(`[data-testid="puzzle-board-grid"] .square[data-square="${name}"]`);

async function move(player, uci) {
  await square(player, uci.slice(0, 2)).click();
  await square(player, uci.slice(2, 4)).click();
}

async function openPuzzle(player, id) {
  await player.page.evaluate((id) => { location.hash = `#puzzle=${id}`; }, id);
  await player.page.waitForFunction(
    (id) => document.querySelector('[data-testid="puzzle-screen"]').dataset.puzzle === id
      && document.querySelector('[data-testid="puzzle-screen"]').dataset.result === '',
    id,
  );
}

async function solved(player) {
  await player.page.waitForFunction(() => document.querySelector('[data-testid="puzzle-screen"]').dataset.result === 'solved');
  return {
    rating: Number((await player.el('puzzle-rating').textContent()).replace('?', '')),
    change: (await player.el('puzzle-change').textContent()).trim(),
  };
}

test('an atomic and a fog puzzle are solved and rated in the page', { timeout: 120_000 }, async () => {
  const solver = await Player.open(browser, 'puzzler', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(solver);
  await withShots('puzzles', () => players, server, async () => {
    await solver.el('daily-puzzle').waitFor();
    const daily = (await solver.el('daily-puzzle-link').getAttribute('href')).split('=')[1];
    assert.ok(STARTER.some((p) => p.id === daily), `the daily puzzle ${daily} is a starter puzzle`);
    await solver.el('puzzles-link').click();
    await solver.el('puzzles').waitFor();
    await solver.page.waitForFunction(() => document.querySelector('[data-testid="puzzle-screen"]').dataset.puzzle);

    // Atomic, three plies: the solver's move, the reply played by the page, the solver's again.
    const atomic = STARTER.find((p) => p.variant === 'atomic' && p.solution.length === 3);
    await openPuzzle(solver, atomic.id);
    assert.equal(await solver.page.locator('[data-testid="puzzle-board-grid"] .square.fog').count(), 0);
    await move(solver, atomic.solution[0]);
    await solver.page.waitForFunction((to) => {
      const sq = document.querySelector(`[data-testid="puzzle-board-grid"] .square[data-square="${to}"]`);
      return sq.classList.contains('last-move') && document.querySelector('[data-testid="puzzle-status"]').textContent.includes('again');
    }, atomic.solution[1].slice(2, 4));
    await move(solver, atomic.solution[2]);
    const first = await solved(solver);
    assert.ok(first.rating > 1500, `solving raised the rating from 1500: ${first.rating}`);
    assert.match(first.change, /^\+\d+$/);

    // Fog: the board shows the view only, and the one safe move solves it.
    const fog = STARTER.find((p) => p.variant === 'fog' && p.themes[0] === 'safeCapture');
    await openPuzzle(solver, fog.id);
    const fogged = fog.fen.split(' ')[0].split('').filter((c) => c === '*').length;
    assert.equal(await solver.page.locator('[data-testid="puzzle-board-grid"] .square.fog').count(), fogged);
    await move(solver, fog.solution[0]);
    const second = await solved(solver);
    assert.ok(second.rating > first.rating, `${second.rating} after ${first.rating}`);
    assert.match(second.change, /^\+\d+$/);

    // A wrong move fails: the rating drops, and the board shows the solution's move.
    const other = STARTER.find((p) => p.variant === 'fog' && p.id !== fog.id && p.themes[0] === 'trade');
    const served = await (await fetch(`${server.url}/api/puzzle/${other.id}`)).json();
    const to = other.solution[0].slice(2, 4);
    // A wrong move that touches not the solution's square, so only the solution marks it.
    const wrong = served.puzzle.legal[0].find((m) => !m.includes(to));
    await openPuzzle(solver, other.id);
    await move(solver, wrong);
    await solver.page.waitForFunction(() => document.querySelector('[data-testid="puzzle-screen"]').dataset.result === 'failed');
    assert.match((await solver.el('puzzle-change').textContent()).trim(), /^−\d+$/);
    await solver.page.waitForFunction(
      (to) => document.querySelector(`[data-testid="puzzle-board-grid"] .square[data-square="${to}"]`).classList.contains('last-move'),
      to,
    );
    assert.deepEqual(solver.errors, [], 'the page logged no error');
  });
});
