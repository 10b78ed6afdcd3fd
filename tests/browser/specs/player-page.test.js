// A player's page: a name in the game's strips opens it, with the player's
// rating per variant ("?" while provisional), games won, lost and drawn, and
// their finished games, each opening its replay; home's "Your page" opens
// one's own. At 1280×900 and on a 390×844 touch screen.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, confirmClick, createFriendGame, launch, openInvite, withShots } from '../lib/player.js';

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

/** Waits until the archive lists a finished game of `player`. */
async function archived(player) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${server.url}/api/players/${player}/games?page_size=5`).catch(() => null);
    const body = res && res.ok ? await res.json() : null;
    if (body && body.games && body.games.length) return body.games;
    if (Date.now() > deadline) throw new Error(`the archive never listed a game of ${player}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("a player's page from their name: ratings per variant and finished games", { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'page-alice', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(alice);
  await withShots('player-page', () => players, server, async () => {
    await alice.el('friend-rated').check();
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'page-bob', server.url, '/', { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    players.push(bob);
    await openInvite(bob, link, { name: 'Bobby' });
    for (const [p, uci] of [[alice, 'e2e4'], [bob, 'e7e5']]) {
      const v = await p.waitTurn();
      await p.play(uci, v.legal);
    }
    await confirmClick(alice, 'resign');
    await alice.waitEnd();
    const bobId = bob.received.filter((f) => f.t === 'welcome').at(-1)?.player;
    assert.ok(bobId, "bob's id from his welcome");
    await archived(bobId);

    // Bob's name in Alice's strip opens his page.
    const name = alice.page.locator('[data-strip="top"] .player-name a');
    assert.equal((await name.textContent()).trim(), 'Bobby');
    await name.click();
    await alice.el('player-page').waitFor();
    await alice.page.waitForFunction(() => document.querySelector('[data-testid="player-page-name"]').textContent === 'Bobby');
    const row = alice.page.locator('[data-testid="player-ratings"] tr[data-variant="atomic"]');
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[0], 'Atomic');
    assert.match(cells[1], /^\d+\?$/, 'a provisional rating has a "?"');
    assert.deepEqual(cells.slice(2), ['1', '1', '0', '0'], 'one game, won');
    assert.equal(await alice.page.locator('[data-testid="player-games"] li').count(), 1);
    assert.match(alice.page.url(), /#player=/);
    await alice.shotSizes('player-page');

    // A game of the list opens its replay.
    await alice.page.locator('[data-testid="player-games"] li a').first().click();
    await alice.el('game').waitFor();
    await alice.el('result').filter({ hasText: /wins|won|lost/i }).waitFor();

    // On Bob's phone: his own page from home.
    await bob.el('new-game').tap();
    await bob.el('home').waitFor();
    const mine = bob.el('my-player-page');
    await mine.waitFor({ timeout: 20_000 });
    await mine.tap();
    await bob.el('player-page').waitFor();
    await bob.page.locator('[data-testid="player-ratings"] tr[data-variant="atomic"]').waitFor();
    const table = await bob.el('player-ratings').boundingBox();
    assert.ok(table.x >= 0 && table.x + table.width <= 390, `the ratings fit the phone: ${JSON.stringify(table)}`);
    await bob.el('player-page-home').tap();
    await bob.el('home').waitFor();
  });
});
