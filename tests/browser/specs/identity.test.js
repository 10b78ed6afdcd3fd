// A name that follows the player: a recovery code made in one browser
// (shown once) and typed into another makes that browser the same player,
// with the same name, games and ratings; revoked, the code no longer works
// and changes nothing. The first browser at 1280×900, the others on a
// 390×844 touch screen.

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

const wide = { viewport: { width: 1280, height: 900 } };
const phone = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true };

const playerOf = (p) => p.received.filter((f) => f.t === 'welcome').at(-1)?.player;

/** Waits until home's line of ratings says `pattern`. */
async function ratingsSay(p, pattern) {
  await p.page.waitForFunction((source) => new RegExp(source).test(document.querySelector('[data-testid="profile"]').textContent), pattern.source, { timeout: 30_000 });
  return p.el('profile').textContent();
}

test('a recovery code carries the name and ratings to another browser until revoked', { timeout: 150_000 }, async () => {
  await withShots('identity', () => players, server, async () => {
    const alice = await Player.open(browser, 'id-alice', server.url, '/', wide);
    players.push(alice);
    await alice.el('player-name').fill('Alice');
    await alice.el('player-name').press('Tab');
    await alice.el('friend-rated').check();
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'id-bob', server.url, '/', wide);
    players.push(bob);
    await openInvite(bob, link, { name: 'Bob' });
    for (const [p, uci] of [[alice, 'e2e4'], [bob, 'e7e5']]) {
      const v = await p.waitTurn();
      await p.play(uci, v.legal);
    }
    await confirmClick(bob, 'resign');
    await alice.waitEnd();
    await alice.page.goto(server.url);
    const aliceRatings = await ratingsSay(alice, /Atomic: \d+\?/);

    // The code, shown once on request.
    await alice.page.locator('[data-testid="identity"] summary').click();
    await alice.el('recovery-issue').click();
    await alice.el('recovery-code-box').waitFor();
    const code = (await alice.el('recovery-code').textContent()).trim();
    assert.match(code, /^[0-9A-Z]{5}(-[0-9A-Z]{1,5}){5}$/);
    await alice.shot('identity-code');

    // Another browser types it in: it is Alice, with her name and ratings.
    const phoneAlice = await Player.open(browser, 'id-phone', server.url, '/', phone);
    players.push(phoneAlice);
    await phoneAlice.waitFor(() => playerOf(phoneAlice), 'a first identity');
    assert.notEqual(playerOf(phoneAlice), playerOf(alice));
    await phoneAlice.page.locator('[data-testid="identity"] summary').click();
    await phoneAlice.el('recovery-input').fill(code.toLowerCase());
    await phoneAlice.el('recovery-use').click();
    await phoneAlice.waitFor(() => playerOf(phoneAlice) === playerOf(alice), "Alice's identity after the reload", 20_000);
    await phoneAlice.page.waitForFunction(() => document.querySelector('[data-testid="player-name"]').value === 'Alice');
    assert.equal(await ratingsSay(phoneAlice, /Atomic: \d+\?/), aliceRatings);
    await phoneAlice.shot('identity-carried');

    // Revoked in the first browser: a third cannot use it, and stays itself.
    await alice.el('recovery-revoke').click();
    await alice.page.waitForFunction(() => /revoked/.test(document.querySelector('[data-testid="recovery-status"]').textContent));
    const stranger = await Player.open(browser, 'id-stranger', server.url, '/', phone);
    players.push(stranger);
    await stranger.waitFor(() => playerOf(stranger), 'a first identity');
    const before = playerOf(stranger);
    await stranger.page.locator('[data-testid="identity"] summary').click();
    await stranger.el('recovery-input').fill(code);
    await stranger.el('recovery-use').click();
    await stranger.page.waitForFunction(() => /did not work/.test(document.querySelector('[data-testid="recovery-status"]').textContent));
    assert.equal(playerOf(stranger), before);
    assert.equal(await stranger.page.evaluate(() => JSON.parse(localStorage.getItem('fogblast.name') || 'null')), null);
  });
});
