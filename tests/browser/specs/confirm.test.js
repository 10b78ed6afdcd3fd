// Buttons that end a game ask to be sure: the first click on Resign or
// Abort turns it into "Confirm resign?" / "Confirm abort?" for a few
// seconds and sends nothing; only a second click does it. A rematch offer
// can be declined: the prompt goes, the offerer is told and may offer again.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, confirmClick, createFriendGame, launch, openInvite, startComputer, withShots } from '../lib/player.js';

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

const sentOf = (p, t) => p.sent.filter((f) => f.t === t);

test('resign and abort take a second click', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'confirm', server.url);
  players.push(p);
  await withShots('confirm', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await p.waitTurn();
    await p.el('abort').click();
    assert.equal((await p.el('abort').textContent()).trim(), 'Confirm abort?');
    await p.shotSizes('confirm-abort');
    // Left alone, it goes back and nothing was sent.
    await p.page.waitForFunction((sel) => document.querySelector(sel)?.textContent.trim() === 'Abort', '[data-testid="abort"]', { timeout: 8000 });
    assert.deepEqual(sentOf(p, 'abort'), [], 'no abort sent');

    const v = await p.waitTurn();
    await p.play('e2e4', v.legal);
    await p.waitTurn();

    await p.el('resign').click();
    assert.equal((await p.el('resign').textContent()).trim(), 'Confirm resign?');
    assert.deepEqual(sentOf(p, 'resign'), [], 'no resign sent after one click');
    await p.el('resign').click();
    const end = await p.waitEnd();
    assert.equal(end.reason, 'resign');
    assert.equal(sentOf(p, 'resign').length, 1);
  });
});

test('a rematch offer can be declined', { timeout: 90_000 }, async () => {
  const alice = await Player.open(browser, 'alice', server.url);
  players.push(alice);
  await withShots('rematch-decline', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob', server.url);
    players.push(bob);
    await openInvite(bob, link);
    for (const [p, uci] of [[alice, 'e2e4'], [bob, 'e7e5']]) {
      const v = await p.waitTurn();
      await p.play(uci, v.legal);
    }
    await confirmClick(alice, 'resign');
    await bob.waitEnd();
    await alice.el('rematch').click();
    const prompt = bob.page.locator('[data-prompt="rematch"]');
    await prompt.waitFor({ state: 'visible' });
    await bob.shotSizes('rematch-offer');
    await bob.el('decline-rematch').click();
    await prompt.waitFor({ state: 'hidden' });
    // Alice hears it: her offer no longer stands and she may make another.
    // The status line says so (the screen readers' live region may say it
    // too, at the same moment).
    await alice.el('status').filter({ hasText: 'your opponent declined the rematch' }).waitFor();
    const aliceRematch = alice.el('rematch');
    await aliceRematch.waitFor({ state: 'visible' });
    assert.equal(await aliceRematch.isDisabled(), false);
    assert.equal((await aliceRematch.textContent()).trim(), 'Rematch');
    // Bob stays on the finished game and may still ask for one himself;
    // the server forgot the offer, so a reload does not bring it back.
    assert.equal(bob.currentGame(), alice.view().game);
    await bob.el('rematch').waitFor({ state: 'visible' });
    await bob.page.reload();
    await bob.el('rematch').waitFor({ state: 'visible' });
    assert.equal(await prompt.isVisible(), false);
  });
});

test('a rematch agreed opens the new game for both, colours swapped', { timeout: 90_000 }, async () => {
  const alice = await Player.open(browser, 'alice-again', server.url);
  players.push(alice);
  await withShots('rematch-agreed', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob-again', server.url);
    players.push(bob);
    await openInvite(bob, link);
    const first = alice.view().game;
    for (const [p, uci] of [[alice, 'e2e4'], [bob, 'e7e5']]) {
      const v = await p.waitTurn();
      await p.play(uci, v.legal);
    }
    await confirmClick(bob, 'resign');
    await alice.waitEnd();
    await bob.el('rematch').click();
    const prompt = alice.page.locator('[data-prompt="rematch"]');
    await prompt.waitFor({ state: 'visible' });
    await alice.el('accept-rematch').click();
    // Both are taken to the new game: the one who offered hears of it, the
    // one who accepted is answered with it; bob has white now.
    for (const p of [alice, bob]) {
      await p.waitFor(() => p.view().game && p.view().game !== first && p.view().fen, 'the rematch');
    }
    assert.equal(alice.view().game, bob.view().game);
    assert.equal(alice.view().you, 'black');
    assert.equal(bob.view().you, 'white');
    const v = await bob.waitTurn();
    await bob.play('d2d4', v.legal);
    await alice.waitFor(() => alice.view().ply === 1, 'bob\'s first move of the rematch');
    const errors = [alice, bob].flatMap((p) => p.received.filter((f) => f.t === 'error'));
    assert.deepEqual(errors, [], 'no error on the way');
  });
});
