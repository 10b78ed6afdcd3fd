// Atomic's blast preview: with a piece picked up, pointing at a capture
// marks every square its explosion would clear, before anything is played;
// a capture that would take your own king marks that king apart. Pointing
// elsewhere, or at nothing to capture, marks nothing. On a touch screen,
// where nothing hovers, a finger held on a capture shows its blast: lifting
// it plays the capture, sliding it off the board puts the capture off.

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

const marked = (p, cls) => p.page.$$eval(`[data-testid="board"] .square.${cls}`, (els) => els.map((e) => e.dataset.square).sort());

async function playLine(alice, bob, line) {
  for (const [i, uci] of line.entries()) {
    const mover = i % 2 === 0 ? alice : bob;
    const other = i % 2 === 0 ? bob : alice;
    const v = await mover.waitTurn();
    await mover.play(uci, v.legal);
    await other.waitFor(() => other.view().ply > i, `${other.name} to see ply ${i}`);
  }
}

test('pointing at a capture previews its blast', { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice', server.url);
  players.push(alice);
  await withShots('blast', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob', server.url);
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
    await playLine(alice, bob, ['g1f3', 'a7a6', 'f3e5', 'a6a5']);
    await alice.waitTurn();

    await alice.square('e5').click();
    await alice.square('d7').hover();
    await alice.page.waitForFunction(() => document.querySelectorAll('[data-testid="board"] .square.blast').length > 0);
    assert.deepEqual(await marked(alice, 'blast'), ['c8', 'd7', 'd8', 'e8'], 'the blast of Nxd7');
    assert.deepEqual(await marked(alice, 'blast-own-king'), []);
    await alice.shotSizes('blast-preview');
    // A square with nothing to capture: no blast.
    await alice.square('f3').hover();
    assert.deepEqual(await marked(alice, 'blast'), []);
    // Nothing was played meanwhile.
    assert.equal(alice.view().ply, 4);
  });
});

test("a capture beside your own king shows your king in the blast", { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice2', server.url);
  players.push(alice);
  await withShots('blast-own', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob2', server.url);
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
    // 6... Nc2: beside the white king on d2; the queen on d1 may not take it.
    await playLine(alice, bob, ['b2b3', 'c7c6', 'c2c4', 'g8h6', 'h2h4', 'b8a6', 'h4h5', 'a8b8', 'd2d4', 'a6b4', 'e1d2', 'b4c2']);
    await alice.waitTurn();
    await alice.square('d1').click();
    await alice.square('c2').hover();
    await alice.page.waitForFunction(() => document.querySelectorAll('[data-testid="board"] .square.blast-own-king').length > 0);
    assert.deepEqual(await marked(alice, 'blast-own-king'), ['d2'], 'your king would go');
    assert.ok((await marked(alice, 'blast')).includes('c2'));
    await alice.shotSizes('blast-own-king');
  });
});

test('on a touch screen a finger held on a capture shows its blast; lifting plays it, sliding off puts it off', { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice3', server.url, '/', { hasTouch: true });
  players.push(alice);
  await withShots('blast-touch', () => players, server, async () => {
    const link = await createFriendGame(alice, { variant: 'atomic', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'bob3', server.url);
    players.push(bob);
    await openInvite(bob, link);
    await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
    await playLine(alice, bob, ['g1f3', 'a7a6', 'f3e5', 'a6a5']);
    await alice.waitTurn();

    const cdp = await alice.context.newCDPSession(alice.page);
    const touch = (type, [x, y]) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x, y }] });
    const centre = (sq) => alice.centre(sq);
    const selected = () => alice.page.$$eval('[data-testid="board"] .square.selected', (els) => els.map((e) => e.dataset.square));
    const movesSent = () => alice.sent.filter((f) => f.t === 'move').length;
    const sentBefore = movesSent();

    // A tap picks up the knight.
    await touch('touchStart', await centre('e5'));
    await touch('touchEnd', await centre('e5'));
    await alice.page.waitForFunction(() => document.querySelector('[data-testid="board"] .square.selected')?.dataset.square === 'e5');
    // A finger held on d7: the blast shows, nothing is played.
    await touch('touchStart', await centre('d7'));
    await alice.page.waitForFunction(() => document.querySelectorAll('[data-testid="board"] .square.blast').length > 0);
    assert.deepEqual(await marked(alice, 'blast'), ['c8', 'd7', 'd8', 'e8'], 'the blast of Nxd7 under the finger');
    await alice.shotSizes('blast-touch', { fullPage: false });
    assert.equal(movesSent(), sentBefore, 'holding plays nothing');
    // Slid off the board and lifted: no blast, no move, the knight still in hand.
    const board = await alice.board().boundingBox();
    await touch('touchMove', [board.x + board.width / 2, board.y + board.height + 40]);
    await alice.page.waitForFunction(() => document.querySelectorAll('[data-testid="board"] .square.blast').length === 0);
    await touch('touchEnd', [board.x + board.width / 2, board.y + board.height + 40]);
    await alice.page.waitForTimeout(400);
    assert.equal(movesSent(), sentBefore, 'sliding off puts the capture off');
    assert.deepEqual(await selected(), ['e5'], 'the knight stays in hand');
    assert.equal(alice.view().ply, 4);
    // Held again and lifted on d7: the capture is played.
    await touch('touchStart', await centre('d7'));
    await alice.page.waitForFunction(() => document.querySelectorAll('[data-testid="board"] .square.blast').length > 0);
    await touch('touchEnd', await centre('d7'));
    await alice.waitFor(() => alice.seatFrames().some((f) => f.t === 'move' && f.ply === 4), 'the capture to be played');
    assert.equal(alice.seatFrames().find((f) => f.t === 'move' && f.ply === 4).uci, 'e5d7');
  });
});
