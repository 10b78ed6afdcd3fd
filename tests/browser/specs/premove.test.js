// Premoves in a game between two browsers (standard chess, no clock): while
// Black thinks, White queues a move with the usual clicks; its squares are
// marked (.square.premove) and nothing is sent; Black's move arrives and the
// queued move is played at once. A premove that is not legal when the turn
// comes (a pawn capture onto a square Black left empty) is dropped with a
// notice and nothing is sent. A click on an empty square, or on the queued
// piece, cancels a premove.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, withShots } from '../lib/player.js';
import { boardShows } from '../lib/checks.js';

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

const marked = (p) => p.page.evaluate(() => [...document.querySelectorAll('.square.premove')].map((e) => e.dataset.square).sort());
const movesSent = (p) => p.sent.filter((f) => f.t === 'move').map((f) => f.uci);

test('premoves: queued while the opponent thinks, played on arrival, dropped when illegal, cancelled by a click', { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice-pre', server.url);
  players.push(alice);
  await withShots('premove', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'standard', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob-pre', server.url, '/');
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');

    let v = await alice.waitTurn();
    await alice.play('e2e4', v.legal);
    await bob.waitTurn();

    // Queued while Black thinks: marked, not sent.
    await alice.square('d2').click();
    await alice.square('d4').click();
    await alice.page.waitForFunction(() => document.querySelectorAll('.square.premove').length === 2);
    assert.deepEqual(await marked(alice), ['d2', 'd4']);
    await alice.page.waitForTimeout(300);
    assert.deepEqual(movesSent(alice), ['e2e4'], 'the premove is not sent before its turn');
    await alice.shotSizes('premove-queued');

    // Black moves: the premove is played at once.
    let b = bob.view();
    await bob.play('e7e5', b.legal);
    await alice.waitFor(() => movesSent(alice).includes('d2d4'), 'the premove d2d4 to be sent');
    await alice.waitFor(() => alice.view().ply === 3, 'd2d4 played');
    assert.deepEqual(await marked(alice), []);
    await boardShows(bob, alice.view().fen, "bob's board after the premove");

    // A premove that is illegal when the turn comes is dropped with a note.
    await bob.waitTurn();
    await alice.square('d4').click();
    await alice.square('e5').click(); // dxe5 is legal now; Black's reply takes it away
    assert.deepEqual(await marked(alice), ['d4', 'e5']);
    b = bob.view();
    await bob.play('e5d4', b.legal);
    await alice.waitFor(() => alice.view().ply === 4, "black's exd4");
    await alice.page.waitForFunction(() => /dropped/.test(document.querySelector('[data-testid="notice"]').textContent));
    assert.deepEqual(movesSent(alice), ['e2e4', 'd2d4'], 'the dropped premove is not sent');
    assert.deepEqual(await marked(alice), []);

    // Alice moves normally; then cancels premoves by clicking an empty
    // square, and by clicking the queued piece.
    v = await alice.waitTurn();
    await alice.play('d1d4', v.legal);
    await bob.waitTurn();
    await alice.square('f1').click();
    await alice.square('c4').click();
    assert.deepEqual(await marked(alice), ['c4', 'f1']);
    await alice.square('a5').click();
    assert.deepEqual(await marked(alice), [], 'an empty square cancels it');
    await alice.square('g1').click();
    await alice.square('f3').click();
    assert.deepEqual(await marked(alice), ['f3', 'g1']);
    await alice.square('g1').click();
    assert.deepEqual(await marked(alice), [], 'the queued piece cancels it');
    b = bob.view();
    await bob.play('b8c6', b.legal);
    await alice.waitTurn();
    await alice.page.waitForTimeout(300);
    assert.deepEqual(movesSent(alice), ['e2e4', 'd2d4', 'd1d4'], 'a cancelled premove is not played');
  });
});
