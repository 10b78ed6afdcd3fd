// A refused move says why, in words: in an atomic game between two
// browsers, the king that tries to capture hears that kings cannot capture,
// a capture beside your own king that it would explode, a king stepping
// into a knight's reach that it would be in check, and a piece touched out
// of turn that it is not your turn in fog of war, where no premove is queued
// (on one device: whose turn it is). In
// fog of war, a piece taken out of sight is announced in the status line.

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

/** Alice (white) and Bob (black) in a game for a friend of `variant`. */
async function pair(variant) {
  const alice = await Player.open(browser, `alice-${variant}`, server.url);
  players.push(alice);
  const link = await createFriendGame(alice, { variant, color: 'white', minutes: 0 });
  const bob = await Player.open(browser, `bob-${variant}`, server.url);
  players.push(bob);
  await openInvite(bob, link);
  await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
  return [alice, bob];
}

async function playLine(alice, bob, line) {
  for (const [i, uci] of line.entries()) {
    const mover = i % 2 === 0 ? alice : bob;
    const v = await mover.waitTurn();
    await mover.play(uci, v.legal);
    const other = i % 2 === 0 ? bob : alice;
    await other.waitFor(() => other.view().ply > i, `${other.name} to see ply ${i}`);
  }
}

/** Clicks `from`, then `to`, and returns the notice the page shows. */
async function tryMove(p, from, to, before = '') {
  await p.square(from).click();
  await p.square(to).click();
  return noticeAfter(p, before);
}

async function noticeAfter(p, before) {
  await p.page.waitForFunction(
    ([sel, old]) => { const n = document.querySelector(sel); return n && !n.hidden && n.textContent.trim() && n.textContent !== old; },
    ['[data-testid="notice"]', before],
  );
  return (await p.el('notice').textContent()).trim();
}

test('atomic: refused moves say which rule they break', { timeout: 120_000 }, async () => {
  const [alice, bob] = await pair('atomic');
  await withShots('refusals', () => players, server, async () => {
    // 6... Nc2: the black knight sits beside the white king on d2 and the queen on d1.
    const line = ['b2b3', 'c7c6', 'c2c4', 'g8h6', 'h2h4', 'b8a6', 'h4h5', 'a8b8', 'd2d4', 'a6b4', 'e1d2'];
    await playLine(alice, bob, line);
    // Alice moves her own piece while Bob is to move: that queues a premove
    // (fog of war below refuses it instead), which a click on the piece cancels.
    const queued = await tryMove(alice, 'a2', 'a3');
    assert.equal(queued, 'Premove a2–a3 queued: it is played as soon as it is your turn.');
    await alice.square('a2').click();
    const outOfTurn = await noticeAfter(alice, queued);
    assert.equal(outOfTurn, 'Premove cancelled.');
    const v = await bob.waitTurn();
    await bob.play('b4c2', v.legal);
    await alice.waitFor(() => alice.view().ply === 12 && alice.view().legal, 'alice to move after Nc2');

    let text = await tryMove(alice, 'd2', 'c2', outOfTurn);
    assert.equal(text, 'Kings cannot capture in atomic chess: the explosion would take your own king too.');
    text = await tryMove(alice, 'd1', 'c2', text);
    assert.equal(text, 'Your king would explode: it stands next to c2, where this capture blows up.');
    text = await tryMove(alice, 'd2', 'e1', text);
    assert.equal(text, 'Your king would be in check on e1.');
    await alice.shotSizes('refused-move');
    // Nothing was sent for any of them: the game is still at ply 12.
    assert.equal(alice.view().ply, 12);
  });
});

test('fog of war: a piece taken out of sight is announced in the status line', { timeout: 120_000 }, async () => {
  const [alice, bob] = await pair('fog');
  await withShots('refusals-fog', () => players, server, async () => {
    await playLine(alice, bob, ['e2e4', 'f7f5', 'e4f5']);
    await bob.page.waitForFunction(
      (sel) => /your pawn on f5 was taken/.test(document.querySelector(sel)?.textContent || ''),
      '[data-testid="status"]',
    ).catch(() => {});
    const status = (await bob.el('status').textContent()).trim();
    assert.equal(status, 'A move was played: your pawn on f5 was taken — your turn.');
    await bob.shotSizes('fog-piece-taken');
    // No premoves in fog of war: Alice touching her piece on Bob's turn is told why.
    const outOfTurn = await tryMove(alice, 'a2', 'a3');
    assert.equal(outOfTurn, 'It is not your turn: wait for your opponent to move.');
  });
});

test("both players on one device: the other side's piece waits for its turn", { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'hotseat-refusal', server.url);
  players.push(p);
  await withShots('refusals-hotseat', () => [p], server, async () => {
    await p.choose('friend-variant', 'atomic');
    await p.choose('friend-minutes', 0);
    await p.el('friend-hotseat').check();
    await p.el('friend-create').click();
    await p.el('game').waitFor();
    await p.waitFor(() => p.received.filter((f) => f.t === 'state' && f.status === 'playing').length >= 1, 'the game to start');
    await p.page.waitForFunction(() => document.querySelector('[data-testid="board"] .square.movable'));
    await p.square('e7').click();
    assert.equal(await noticeAfter(p, ''), "It is White's turn.");
  });
});
