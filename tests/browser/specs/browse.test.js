// Looking back through a game. While it is played: a click (or a tap) on a
// move in the list shows the position after it, the board takes no move
// meanwhile, and End, the » button or "Back to the game" bring the live
// board back; in fog of war a player sees only its own views as they were,
// after a reload too.
// After the end the replay's keys work anywhere on the page, not only on a
// focused board.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, confirmClick, launch, startComputer, withShots } from '../lib/player.js';
import { boardShows } from '../lib/checks.js';
import { ALL_SQUARES } from '../lib/chess.js';

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

/** The move frame of ply `ply` this player received. */
const moveFrame = (p, ply) => p.received.find((f) => f.t === 'move' && f.ply === ply && f.game === p.currentGame());

async function plyShown(p, text) {
  await p.page.waitForFunction((t) => document.querySelector('[data-testid="replay-ply"]')?.textContent.trim() === t, text);
}

/** Plays `line` as white against the computer, waiting for each reply. */
async function playLine(p, line) {
  for (const uci of line) {
    const v = await p.waitTurn();
    const move = v.legal.includes(uci) ? uci : v.legal[0];
    await p.play(move, v.legal);
  }
  await p.waitTurn();
}

test('after the end, the arrow keys step through the game with the focus anywhere', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'keys-anywhere', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('replay-keys', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await playLine(p, ['e2e4', 'd2d4']);
    await confirmClick(p, 'resign');
    await p.waitEnd();
    await p.el('replay').waitFor({ state: 'visible' });
    const total = p.view().end.moves.length;
    await plyShown(p, `${total} / ${total}`);
    await p.page.evaluate(() => document.activeElement?.blur());
    await p.page.keyboard.press('ArrowLeft');
    await plyShown(p, `${total - 1} / ${total}`);
    await p.page.keyboard.press('Home');
    await plyShown(p, `0 / ${total}`);
    await p.page.keyboard.press('ArrowRight');
    await plyShown(p, `1 / ${total}`);
    await p.page.keyboard.press('End');
    await plyShown(p, `${total} / ${total}`);
  });
});

test('while a game is played, a move of the list shows its position and End brings the game back', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'browse-live', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('browse-live', () => players, server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    await playLine(p, ['e2e4', 'g1f3']);
    const live = p.view();
    assert.equal(live.ply, 4);
    await p.el('replay').waitFor({ state: 'visible' });

    await p.page.locator('[data-testid="moves"] [data-ply="0"]').click();
    await boardShows(p, moveFrame(p, 0).fen, 'the position after 1. e4');
    await p.el('replay-live').waitFor({ state: 'visible' });
    await plyShown(p, '1 / 4');
    assert.equal(await p.page.locator('[data-testid="board"] .square.movable').count(), 0, 'no piece may be moved while looking back');
    // Touching a piece says why nothing moves.
    await p.square('d2').click();
    await p.el('notice').filter({ hasText: 'earlier move' }).waitFor();
    await p.shotSizes('browse-earlier-move');

    // End, on the board, brings the live position back.
    await p.page.keyboard.press('End');
    await boardShows(p, live.fen, 'the live position');
    await p.el('replay-live').waitFor({ state: 'hidden' });

    // The arrows with the focus off the board, and the "Back to the game" button.
    await p.page.evaluate(() => document.activeElement?.blur());
    await p.page.keyboard.press('ArrowLeft');
    await boardShows(p, moveFrame(p, 2).fen, 'the position after 2. Nf3');
    await p.el('replay-live').click();
    await boardShows(p, live.fen, 'the live position again');

    // And the game goes on.
    const v = await p.waitTurn();
    await p.play(v.legal[0], v.legal);
  });
});

test("in fog of war, looking back shows the player's own views only", { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'browse-fog', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(p);
  await withShots('browse-fog', () => players, server, async () => {
    await startComputer(p, { variant: 'fog', color: 'white', level: 'easy' });
    await playLine(p, ['e2e4', 'g1f3']);
    for (const ply of [0, 1, 2]) {
      await p.page.locator(`[data-testid="moves"] [data-ply="${ply}"]`).click();
      const frame = moveFrame(p, ply);
      assert.ok(Array.isArray(frame.visible), 'a seat is told what it sees');
      await boardShows(p, frame.fen, `white's own view after ply ${ply}`);
      const fogged = await p.page.$$eval('[data-testid="board"] .square.fog', (els) => els.map((e) => e.dataset.square).sort());
      assert.deepEqual(fogged, ALL_SQUARES.filter((s) => !frame.visible.includes(s)).sort(), `the fog as white saw it after ply ${ply}`);
    }
    await p.page.keyboard.press('End');
    await boardShows(p, p.view().fen, 'the live view');
    // A reload keeps the views this seat saw.
    await p.page.reload();
    await p.board().waitFor();
    await p.page.locator('[data-testid="moves"] [data-ply="1"][role="button"]').click();
    await boardShows(p, moveFrame(p, 1).fen, "white's own view after ply 1, after a reload");
  });
});

test('on a phone, a tapped move shows its position', { timeout: 90_000 }, async () => {
  const p = await Player.open(browser, 'browse-touch', server.url, '/', { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  players.push(p);
  await withShots('browse-touch', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await playLine(p, ['e2e4']);
    await p.page.locator('[data-testid="moves"] [data-ply="0"]').tap();
    await boardShows(p, moveFrame(p, 0).fen, 'the position after 1. e4');
    const wide = await p.page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 390, `the page stays 390 px wide while looking back (${wide})`);
    await p.el('replay-live').tap();
    await boardShows(p, p.view().fen, 'the live position');
  });
});
