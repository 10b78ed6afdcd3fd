// The game's chat: two players and a spectator. Lines travel between the
// players' pages and show as text (markup stays literal); a spectator reads
// only the spectators' room, which players can switch to; the 140-character
// limit is shown; a refused line (too fast, or empty) is said politely; the
// opponent's lines can be hidden, and that stays after a reload. On a phone
// (390×844, touch) the chat lies clear of the board and both clocks. In fog
// of war moves put nothing in the chat.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, createFriendGame, launch, openInvite, withShots } from '../lib/player.js';

let server;
let browser;
before(async () => {
  // Every page here loads from 127.0.0.1, nine page loads in well under a
  // minute, within the default budgets of one address.
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The texts of the chat lines on screen. */
const lines = (p) => p.page.$$eval('[data-testid="chat-lines"] .chat-line .chat-text', (els) => els.map((e) => e.textContent));

async function say(p, text) {
  await p.el('chat-input').fill(text);
  await p.el('chat-input').press('Enter');
}

async function waitLine(p, text) {
  await p.page.waitForFunction(
    (t) => [...document.querySelectorAll('[data-testid="chat-lines"] .chat-text')].some((e) => e.textContent === t),
    text,
    { timeout: 15_000 },
  );
}

/** A friend game between two fresh players; resolves to [alice, bob, gameId]. */
async function twoPlayers(players, { variant = 'atomic', viewport } = {}) {
  const options = viewport ? { viewport, hasTouch: true, isMobile: true } : { viewport: { width: 1280, height: 900 } };
  const alice = await Player.open(browser, `alice-${variant}`, server.url, '/', options);
  players.push(alice);
  const link = await createFriendGame(alice, { variant, color: 'white', minutes: 5, increment: 0 });
  const bob = await Player.open(browser, `bob-${variant}`, server.url, '/', options);
  players.push(bob);
  await openInvite(bob, link);
  await bob.waitFor(() => bob.view().you === 'black', 'bob to hold black');
  await alice.waitFor(() => alice.received.some((f) => f.t === 'seated'), 'bob to sit down');
  return [alice, bob, alice.view().game];
}

test('players chat as text, spectators have their room, the opponent can be hidden, refusals are polite', { timeout: 180_000 }, async () => {
  const players = [];
  await withShots('chat', () => players, server, async () => {
    const [alice, bob, game] = await twoPlayers(players);
    for (const p of [alice, bob]) await p.el('chat').waitFor();
    assert.equal(await alice.el('chat-room-players').getAttribute('aria-pressed'), 'true');

    // A line with markup arrives as the very characters typed.
    const marked = 'good luck <b>bob</b> <img src=x onerror=alert(1)>';
    await say(alice, marked);
    await waitLine(bob, marked);
    await waitLine(alice, marked);
    assert.equal(await bob.page.locator('[data-testid="chat-lines"] b, [data-testid="chat-lines"] img').count(), 0, 'no markup became elements');
    const sent = alice.sent.find((f) => f.t === 'chat');
    assert.deepEqual({ t: sent.t, game: sent.game, room: sent.room, text: sent.text }, { t: 'chat', game, room: 'players', text: marked });

    // The limit is shown, and the box takes no more.
    await bob.el('chat-input').fill('x'.repeat(150));
    assert.equal((await bob.el('chat-input').inputValue()).length, 140);
    assert.equal(await bob.el('chat-count').textContent(), '140/140');
    await bob.el('chat-input').fill('');
    assert.equal(await bob.el('chat-count').textContent(), '0/140');

    // Only spaces: refused before sending, in words.
    await say(bob, '   ');
    await bob.page.waitForFunction(() => !document.querySelector('[data-testid="chat-error"]').hidden);
    assert.equal(await bob.el('chat-error').textContent(), 'A message is 1 to 140 characters.');

    // A spectator reads the spectators' room only, and writes there.
    const carol = await Player.open(browser, 'carol', server.url, `/#game=${game}`, { viewport: { width: 1280, height: 900 } });
    players.push(carol);
    await carol.el('chat').waitFor();
    await carol.waitFor(() => carol.received.some((f) => f.t === 'state' && f.game === game && f.you === 'spectator'), 'carol to watch');
    assert.ok(await carol.el('chat-room-players').isHidden(), 'a spectator has no players room to pick');
    assert.deepEqual(await lines(carol), [], `the players' lines are not the spectators': ${await lines(carol)}`);
    await say(carol, 'hello players');
    await waitLine(carol, 'hello players');
    assert.ok(!(await lines(alice)).includes('hello players'), "the players' room does not show the spectators' lines");
    await alice.el('chat-room-spectators').click();
    await waitLine(alice, 'hello players');
    assert.ok(!(await lines(alice)).includes(marked));
    await alice.el('chat-room-players').click();
    await waitLine(alice, marked);

    // Bob hides his opponent's lines: kept in this browser's settings, over a reload.
    await bob.el('chat-opponent').uncheck();
    await bob.page.waitForFunction(() => !document.querySelector('[data-testid="chat-muted"]').hidden);
    assert.deepEqual(await lines(bob), [], 'the opponent’s line went');
    await say(alice, 'are you there?');
    await waitLine(alice, 'are you there?');
    await bob.waitFor(() => bob.received.some((f) => f.t === 'chat' && f.text === 'are you there?'), 'the line to reach bob');
    assert.deepEqual(await lines(bob), [], 'hidden lines stay hidden');
    const settings = await bob.page.evaluate(() => JSON.parse(localStorage.getItem('fogblast.settings')));
    assert.equal(settings.opponentChat, false);
    await bob.page.reload();
    await bob.el('chat').waitFor();
    await bob.waitFor(() => bob.received.filter((f) => f.t === 'state' && f.game === game).length >= 2, 'a fresh state after the reload');
    assert.equal(await bob.el('chat-opponent').isChecked(), false);
    assert.deepEqual(await lines(bob), []);
    await bob.el('chat-opponent').check();
    await waitLine(bob, 'are you there?');

    // Too many lines too fast: the server says rate_limited, the page says it politely and gives the line back.
    for (let i = 0; i < 14; i++) {
      await say(bob, `line ${i}`);
      if (!(await bob.el('chat-error').isHidden())) break;
    }
    await bob.page.waitForFunction(() => !document.querySelector('[data-testid="chat-error"]').hidden, null, { timeout: 15_000 });
    assert.match(await bob.el('chat-error').textContent(), /^You are writing faster than the chat allows/);
    assert.ok(bob.received.some((f) => f.t === 'error' && f.code === 'rate_limited'), 'the server refused a line');
    assert.match(await bob.el('chat-input').inputValue(), /^line \d+$/, 'the refused line is given back');
    for (const p of players) assert.deepEqual(p.errors, [], `${p.name}: no errors in the page`);
  });
});

test('on a phone the chat lies clear of the board and the clocks', { timeout: 120_000 }, async () => {
  const players = [];
  await withShots('chat-phone', () => players, server, async () => {
    const [alice, bob] = await twoPlayers(players, { variant: 'standard', viewport: { width: 390, height: 844 } });
    await say(alice, 'hi from the phone');
    await waitLine(bob, 'hi from the phone');
    for (const p of [alice, bob]) {
      const chat = await p.el('chat').boundingBox();
      for (const id of ['board', 'clock-white', 'clock-black']) {
        const box = await p.el(id).boundingBox();
        const apart = chat.y >= box.y + box.height || chat.y + chat.height <= box.y || chat.x >= box.x + box.width || chat.x + chat.width <= box.x;
        assert.ok(apart, `${p.name}: the chat ${JSON.stringify(chat)} overlaps ${id} ${JSON.stringify(box)}`);
      }
    }
    await alice.shotSizes('chat');
    for (const p of players) assert.deepEqual(p.errors, [], `${p.name}: no errors in the page`);
  });
});

test('in fog of war, moves put nothing in the chat', { timeout: 120_000 }, async () => {
  const players = [];
  await withShots('chat-fog', () => players, server, async () => {
    const [alice, bob, game] = await twoPlayers(players, { variant: 'fog' });
    for (let i = 0; i < 4; i++) {
      const mover = i % 2 === 0 ? alice : bob;
      const v = await mover.waitTurn();
      await mover.play(v.legal.find((m) => /^[a-h][27][a-h][36]$/.test(m)) || v.legal[0], v.legal);
    }
    await say(bob, 'gl');
    await waitLine(alice, 'gl');
    for (const p of [alice, bob]) {
      assert.deepEqual(await lines(p), ['gl'], `${p.name}: only what was written is in the chat`);
      const chatFrames = p.received.filter((f) => f.t === 'chat' && f.game === game);
      assert.deepEqual(chatFrames.map((f) => f.text), ['gl']);
    }
  });
});

test('a player gives the opponent 15 seconds; both clocks show it', { timeout: 120_000 }, async () => {
  const players = [];
  await withShots('give-time', () => players, server, async () => {
    const [alice, bob, game] = await twoPlayers(players, { variant: 'standard' });
    const blackClockReads = (p, text) => p.page.waitForFunction(
      (t) => document.querySelector('[data-testid="clock-black"]').textContent === t, text, { timeout: 15_000 });
    for (const p of [alice, bob]) await blackClockReads(p, '5:00');
    // Bob is told in words; the notice shows for a few seconds, so it is caught as it comes.
    const told = bob.page.waitForFunction(
      () => document.querySelector('[data-testid="notice"]').textContent === 'Your opponent gave you 15 seconds.', null, { timeout: 15_000 });
    await alice.el('give-time').click();
    for (const p of [alice, bob]) await blackClockReads(p, '5:15');
    await told;
    assert.deepEqual(alice.sent.filter((f) => f.t === 'give_time').map((f) => f.game), [game]);
    assert.equal(await alice.el('clock-white').textContent(), '5:00', "the giver's own clock is untouched");
    for (const p of players) assert.deepEqual(p.errors, [], `${p.name}: no errors in the page`);
  });
});
