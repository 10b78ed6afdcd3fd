// A name typed and a game asked for in the same gesture: the click that
// blurs the name field says hello again with the new name, and the game
// asked for waits for that hello instead of being lost under it (the game
// shows, made under the new name). A player's own open board in the lobby
// says the colour its creator plays and can always be opened and cancelled,
// from any page of that player.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, withShots } from '../lib/player.js';

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

/** The hello said on the socket that carried the first frame of type `t` sent. */
function helloBefore(p, t) {
  const frame = p.sent.find((f) => f.t === t);
  assert.ok(frame, `${p.name} sent a ${t}`);
  return p.sent.find((f) => f.t === 'hello' && f.socket === frame.socket);
}

async function connected(p) {
  await p.page.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 15_000 });
}

async function noDroppedNotice(p) {
  const text = (await p.el('notice').textContent()) || '';
  assert.doesNotMatch(text, /dropped|try again/i, `${p.name}: the notice says "${text}"`);
}

test('a name typed, then "Create a board" clicked at once, creates the board under that name', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'race-friend', server.url);
  players.push(p);
  await withShots('name-race-friend', () => players, server, async () => {
    await connected(p);
    await p.choose('friend-variant', 'atomic');
    await p.choose('friend-color', 'white');
    await p.choose('friend-minutes', 0);
    await p.el('player-name').fill('Zed');
    // The click blurs the name field: its change and the submit come together.
    await p.el('friend-create').click();
    await p.el('invite-link').waitFor({ timeout: 15_000 });
    await noDroppedNotice(p);
    assert.equal(helloBefore(p, 'create')?.name, 'Zed', 'the create went out after the hello with the new name');
    await p.waitFor(() => p.view().fen, 'the game state');
    const state = p.received.find((f) => f.t === 'state' && f.game === p.currentGame());
    assert.equal(state.players?.white?.name, 'Zed');
    // A reload comes back to it: it is remembered as the game in progress.
    await p.page.reload();
    await p.el('invite-link').waitFor({ timeout: 15_000 });
  });
});

test('a name typed, then "Play the computer" clicked at once, starts the game under that name', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'race-computer', server.url);
  players.push(p);
  await withShots('name-race-computer', () => players, server, async () => {
    await connected(p);
    await p.choose('computer-variant', 'atomic');
    await p.choose('computer-color', 'white');
    await p.choose('computer-level', 'easy');
    await p.el('player-name').fill('Ann');
    await p.el('computer-start').click();
    await p.el('game').waitFor({ timeout: 15_000 });
    await p.waitFor(() => p.view().fen, 'the game state');
    await noDroppedNotice(p);
    assert.equal(helloBefore(p, 'create')?.name, 'Ann');
    await p.page.waitForFunction(() => document.querySelector('[data-strip="bottom"] .player-name')?.textContent.includes('Ann'));
  });
});

test("one's own open board in the lobby says one's colour and can be opened and cancelled", { timeout: 90_000 }, async () => {
  const alice = await Player.open(browser, 'lobby-alice', server.url);
  const bob = await Player.open(browser, 'lobby-bob', server.url);
  players.push(alice, bob);
  await withShots('lobby-own', () => players, server, async () => {
    await connected(alice);
    await alice.choose('friend-variant', 'fog');
    await alice.choose('friend-color', 'white');
    await alice.choose('friend-minutes', 0);
    await alice.el('friend-create').click();
    await alice.el('invite-link').waitFor();
    const game = alice.currentGame();
    await alice.el('new-game').click();
    await alice.el('home').waitFor();

    const entry = (p) => p.page.locator(`[data-testid="lobby-entry"][data-game="${game}"]`);
    await entry(alice).waitFor({ timeout: 15_000 });
    assert.match(await entry(alice).textContent(), /you play white/, 'the creator reads the colour it plays');
    assert.equal(await entry(alice).locator('[data-testid="lobby-join"]').count(), 0);
    // The other player reads the seat it would take.
    await entry(bob).waitFor({ timeout: 15_000 });
    assert.match(await entry(bob).textContent(), /you play black/);
    assert.equal(await entry(bob).locator('[data-testid="lobby-join"]').isEnabled(), true);

    // Open: the board, still waiting for its opponent.
    await entry(alice).locator('[data-testid="lobby-open"]').click();
    await alice.el('invite-link').waitFor();
    assert.equal(alice.currentGame(), game);
    await alice.el('new-game').click();
    await alice.el('home').waitFor();

    // Cancel: it leaves the lobby, for both.
    await entry(alice).locator('[data-testid="lobby-cancel"]').click();
    await entry(alice).waitFor({ state: 'detached', timeout: 15_000 });
    await entry(bob).waitFor({ state: 'detached', timeout: 15_000 });
    assert.equal(alice.sent.filter((f) => f.t === 'abort' && f.game === game).length, 1);
    await alice.el('resume-banner').waitFor({ state: 'hidden' });
  });
});
