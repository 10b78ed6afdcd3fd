// Notifications while the tab is in the background, asked for politely:
// the page never asks on its own, only when "Turn on notifications" is
// pressed; then, with the tab hidden, the game starting, the player's turn
// and a draw offer are told, and nothing while the page is in view. The
// browser's Notification is stood in for (headless Chromium shows none) and
// the tab's visibility is set by the test.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, withShots } from '../lib/player.js';

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

/** A Notification that records what it is asked, and a tab whose visibility the test sets. */
function standIns() {
  window.notified = [];
  window.asked = 0;
  window.tabHidden = false;
  function Notification(title, options = {}) {
    window.notified.push({ title, body: options.body || '', tag: options.tag || '' });
  }
  Notification.permission = 'default';
  Notification.requestPermission = async () => {
    window.asked += 1;
    Notification.permission = 'granted';
    return 'granted';
  };
  window.Notification = Notification;
  Object.defineProperty(document, 'visibilityState', { get: () => (window.tabHidden ? 'hidden' : 'visible') });
  Object.defineProperty(document, 'hidden', { get: () => window.tabHidden });
}

const notified = (p) => p.page.evaluate(() => window.notified.slice());
async function told(p, title) {
  await p.page.waitForFunction((t) => window.notified.some((n) => n.title === t), title, { timeout: 15_000 });
}

test('notifications: asked on request only; told in the background, not in view', { timeout: 90_000 }, async () => {
  const alice = await Player.open(browser, 'notify-alice', server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(alice);
  await alice.context.addInitScript(standIns);
  await alice.page.reload();
  await withShots('notify', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    assert.equal(await alice.page.evaluate(() => window.asked), 0, 'the page does not ask on its own');
    await alice.el('settings-open').click();
    await alice.el('setting-notify').click();
    await alice.page.waitForFunction(() => document.querySelector('[data-testid="setting-notify"]').textContent.includes('Turn off'));
    assert.equal(await alice.page.evaluate(() => window.asked), 1, 'asked once, on the click');
    await alice.el('settings-close').click();

    await alice.page.evaluate(() => { window.tabHidden = true; });
    const bob = await Player.open(browser, 'notify-bob', server.url);
    players.push(bob);
    await openInvite(bob, link);
    await told(alice, 'Your game started');

    let v = await alice.waitTurn();
    await alice.play('e2e4', v.legal);
    v = await bob.waitTurn();
    await bob.play('e7e5', v.legal);
    await told(alice, 'Your turn');
    const turn = (await notified(alice)).find((n) => n.title === 'Your turn');
    assert.match(turn.body, /e5/, 'the move is named');

    await bob.el('offer-draw').click();
    await told(alice, 'Draw offered');

    // In view: nothing more.
    await alice.page.evaluate(() => { window.tabHidden = false; });
    const before = (await notified(alice)).length;
    v = await alice.waitTurn();
    await alice.play('d2d4', v.legal);
    v = await bob.waitTurn();
    await bob.play('d7d6', v.legal);
    await alice.waitTurn();
    assert.equal((await notified(alice)).length, before, 'nothing told while the page is in view');
  });
});
