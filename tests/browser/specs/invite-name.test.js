// A guest opening an invite link chooses a display name before joining: the
// page shows the invite card (the game's code, a name field holding the
// stored name, "Join game") instead of joining at once; the name typed there
// is stored, said in a fresh hello and is the name the host sees beside the
// board.

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

test('the invite page asks the guest for a name before joining', { timeout: 90_000 }, async () => {
  const alice = await Player.open(browser, 'alice', server.url);
  players.push(alice);
  await withShots('invite-name', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const code = link.match(/\/g\/([0-9A-Za-z]+)/)[1].toUpperCase();
    const bob = await Player.open(browser, 'bob', server.url, '/');
    players.push(bob);
    await bob.page.goto(link);

    // The card, not the game: nothing is joined until the guest says so.
    await bob.el('invite-card').waitFor();
    assert.equal((await bob.el('invite-card-code').textContent()).trim(), code);
    assert.equal(await bob.el('invite-name').inputValue(), '');
    await bob.shotSizes('invite-name');
    await bob.page.waitForTimeout(500);
    assert.equal(bob.sent.filter((f) => f.t === 'join').length, 0, 'no join before the click');
    assert.equal(await bob.el('game').isVisible(), false);

    await openInvite(bob, link, { name: 'Bob the guest' });
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
    // The name went in a hello before the join, and is stored for next time.
    const hellos = bob.sent.filter((f) => f.t === 'hello');
    const join = bob.sent.findIndex((f) => f.t === 'join');
    const named = bob.sent.findIndex((f) => f.t === 'hello' && f.name === 'Bob the guest');
    assert.ok(named >= 0 && named < join, `a hello with the name before the join (hellos: ${JSON.stringify(hellos.map((h) => h.name ?? null))})`);
    assert.equal(await bob.page.evaluate(() => JSON.parse(localStorage.getItem('fogblast.name'))), 'Bob the guest');

    // The host sees the guest's name beside the board.
    await alice.page.waitForFunction(
      () => [...document.querySelectorAll('.player-name')].some((e) => e.textContent.includes('Bob the guest')),
      null,
      { timeout: 15_000 },
    );
    // And the guest's own home page shows it in its name field.
    assert.equal(await bob.el('player-name').inputValue(), 'Bob the guest');
  });
});
