// The header's connection line after a short network blip: the socket
// lives through it, and the line says "connected" again at once (not
// "offline" for good while moves go through).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, launch, startComputer, withShots } from '../lib/player.js';

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

const state = (p) => p.el('connection').getAttribute('data-state');

test('the connection line comes back to "connected" after a one-second blip', { timeout: 60_000 }, async () => {
  const p = await Player.open(browser, 'blip', server.url);
  players.push(p);
  await withShots('connection-blip', () => players, server, async () => {
    await startComputer(p, { variant: 'standard', color: 'white', level: 'easy' });
    await p.page.waitForSelector('[data-testid="connection"][data-state="connected"]');
    await p.context.setOffline(true);
    await p.page.waitForSelector('[data-testid="connection"][data-state="offline"]');
    await p.page.waitForFunction(() => !navigator.onLine);
    await p.context.setOffline(false);
    await p.page.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 10_000 });
    assert.equal((await p.el('connection').textContent()).trim(), 'connected');
    // And the game goes on.
    const v = await p.waitTurn();
    await p.play('e2e4', v.legal);
    assert.equal(await state(p), 'connected');
  });
});
