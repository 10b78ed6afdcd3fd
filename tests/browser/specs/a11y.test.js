// For screen readers and keyboards: a live region reads out the opponent's
// moves (not your own), an explosion's cleared squares and the result; the
// board's keyboard cursor is outlined while the keys drive it and not once
// the mouse has clicked.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, startComputer, withShots } from '../lib/player.js';

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

/** Collects every sentence the live region says, in window.said. */
async function listen(p) {
  await p.page.evaluate(() => {
    window.said = [];
    const el = document.querySelector('[data-testid="announcer"]');
    new MutationObserver(() => { if (el.textContent) window.said.push(el.textContent); }).observe(el, { childList: true, characterData: true, subtree: true });
  });
}

const said = (p) => p.page.evaluate(() => window.said.slice());

test("the live region reads out the opponent's moves and the result", { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice', server.url);
  players.push(alice);
  await withShots('a11y-live', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob', server.url);
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
    const live = bob.el('announcer');
    assert.equal(await live.getAttribute('aria-live'), 'polite');
    for (const p of [alice, bob]) await listen(p);
    const line = ['g1f3', 'a7a6', 'f3e5', 'a6a5', 'e5d7'];
    for (const [i, uci] of line.entries()) {
      const mover = i % 2 === 0 ? alice : bob;
      const other = i % 2 === 0 ? bob : alice;
      const v = await mover.waitTurn();
      await mover.play(uci, v.legal);
      await other.waitFor(() => other.view().ply > i, `${other.name} to see ply ${i}`);
    }
    await bob.waitEnd();
    await bob.page.waitForFunction(() => window.said.some((s) => s.includes('Game over')));
    const bobHeard = await said(bob);
    assert.equal(bobHeard[0], 'White: knight to f3. Your turn.', JSON.stringify(bobHeard));
    // The last move and the end it caused come together, and are said together.
    assert.equal(bobHeard.at(-1), 'White: knight takes d7, mate. The explosion cleared d7, c8, d8, e8. Game over. White wins — king exploded.');
    assert.ok(!bobHeard.some((s) => s.startsWith('Black:')), `Bob hears none of his own moves: ${JSON.stringify(bobHeard)}`);
    await alice.page.waitForFunction(() => window.said.some((s) => s.includes('Game over')));
    const aliceHeard = await said(alice);
    assert.ok(aliceHeard.includes('Black: a6. Your turn.'), JSON.stringify(aliceHeard));
    assert.ok(!aliceHeard.some((s) => s.startsWith('White:')), `Alice hears none of her own moves: ${JSON.stringify(aliceHeard)}`);
  });
});

test('the keyboard cursor is outlined for keys only, not after a click', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'keys', server.url);
  players.push(p);
  await withShots('a11y-focus', () => [p], server, async () => {
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    await p.waitTurn();
    const outline = () => p.page.evaluate(() => {
      const cursor = document.querySelector('[data-testid="board"] .square.cursor');
      return cursor ? getComputedStyle(cursor).outlineStyle : 'no cursor';
    });
    // Tab onto the board, then drive the cursor with the arrows.
    await p.el('board').focus();
    await p.page.keyboard.press('ArrowUp');
    assert.equal(await outline(), 'solid', 'the cursor is outlined while the keys drive it');
    await p.shotSizes('keyboard-cursor');
    // A click on an empty square: the board keeps the focus, the outline goes.
    await p.square('e4').click();
    assert.equal(await outline(), 'none', 'no cursor outline after a mouse click');
    await p.page.keyboard.press('ArrowLeft');
    assert.equal(await outline(), 'solid', 'the keys bring it back');
  });
});
