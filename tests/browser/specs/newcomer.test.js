// What every new player meets first: the main buttons stay readable under
// the mouse (contrast of text against the fill drawn on screen ≥ 3:1 while
// hovered, the curtain's button included), and an untimed game against the
// computer waits for the player's first move however long they read the
// board, while a game between people shows its first-move countdown.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, T, createFriendGame, launch, openInvite, rng, startComputer, withShots } from '../lib/player.js';
import { contrastRatio, decodePng, dominantColor } from '../lib/png.js';

// A short first-move timeout, so the tests of the first move wait well
// past it; the buttons are looked at on a server with the default one, so a
// game on one device is not aborted while its curtain is measured.
const NO_START_MS = 1500;

let server;
let defaults;
let browser;
const players = [];
before(async () => {
  server = await startServer({ extraArgs: ['--no-start-ms', String(NO_START_MS)] });
  defaults = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
  await defaults?.stop();
});

/**
 * The contrast ratio (WCAG) between a button's text colour and the colour
 * the page actually drew as its fill (the most common pixel of a
 * screenshot of the hovered button), so backgrounds made of gradients,
 * images or colour mixes are judged as seen.
 */
async function hoveredContrast(player, testid) {
  const el = player.el(testid);
  await el.scrollIntoViewIfNeeded();
  await el.hover();
  // Past any transition of the hover style.
  await player.page.waitForTimeout(400);
  const fill = dominantColor(decodePng(await el.screenshot()));
  const text = await el.evaluate((node) => {
    const m = /rgba?\(([^)]+)\)/.exec(getComputedStyle(node).color);
    return m[1].split(/[\s,/]+/).filter(Boolean).slice(0, 3).map(Number);
  });
  return { ratio: contrastRatio(fill, text), background: fill, text };
}

test('every primary button stays readable while hovered', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'hover', defaults.url);
  players.push(p);
  await withShots('hover', () => players, defaults, async () => {
    for (const id of ['computer-start', 'friend-create', 'join-submit', 'seek-start']) {
      const { ratio, background, text } = await hoveredContrast(p, id);
      assert.ok(ratio >= 3, `${id} while hovered: text ${text} on ${background}, contrast ${ratio.toFixed(2)}:1`);
    }
    // The curtain of a fog game on one device: its button sits right under the mouse.
    await p.choose('friend-variant', 'fog');
    await p.choose('friend-minutes', 0);
    await p.el('friend-hotseat').check();
    await p.el('friend-create').click();
    await p.el('curtain').waitFor({ state: 'visible' });
    const { ratio, background, text } = await hoveredContrast(p, 'curtain-ready');
    assert.ok(ratio >= 3, `curtain-ready while hovered: text ${text} on ${background}, contrast ${ratio.toFixed(2)}:1`);
    await p.shot('hover-curtain');
  });
});

test('an untimed game against the computer waits for the first move', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'reader', server.url);
  players.push(p);
  await withShots('computer-waits', () => players, server, async () => {
    await p.choose('computer-clock', 'none');
    await startComputer(p, { variant: 'atomic', color: 'white', level: 'easy' });
    assert.equal(p.view().you, 'white');
    // Read the board for twice the first-move timeout.
    await p.page.waitForTimeout(2 * NO_START_MS + 500);
    assert.equal(p.view().end, null, `the game ended while the player read the board: ${JSON.stringify(p.view().end)}`);
    const status = (await p.el('status').textContent()) || '';
    assert.doesNotMatch(status, /aborted|first move within/i, `no countdown against the computer: "${status}"`);
    const v = await p.waitTurn(5_000);
    assert.ok(v, 'still the player to move');
    await p.play(p.pickMove(v, rng(17)), v.legal);
    await p.waitFor(() => p.view().ply >= 2, 'the computer answers the first move');
  });
});

test('a game between people shows its first-move countdown', { timeout: 60_000 }, async () => {
  const host = await Player.open(browser, 'host', server.url);
  const guest = await Player.open(browser, 'guest', server.url);
  players.push(host, guest);
  await withShots('first-move-countdown', () => players, server, async () => {
    const url = await createFriendGame(host, { variant: 'atomic', color: 'white', minutes: 0 });
    await openInvite(guest, url);
    const status = host.el('status');
    await host.page.waitForFunction(
      (sel) => /first move within \d+ s/.test(document.querySelector(sel)?.textContent || ''),
      T('status'),
      { timeout: 5_000 },
    );
    const text = (await status.textContent()) || '';
    const seconds = Number(/within (\d+) s/.exec(text)[1]);
    assert.ok(seconds >= 1 && seconds <= NO_START_MS / 1000 + 1, `the countdown says ${seconds} s: "${text}"`);
    const guestText = (await guest.el('status').textContent()) || '';
    assert.match(guestText, /aborted in \d+ s/, `the opponent sees the countdown too: "${guestText}"`);
    await host.waitEnd(10_000);
    assert.equal(host.view().end.reason, 'aborted');
  });
});
