// Watching: home's "Watch" section lists the games being played with
// their players, and "Watch TV" shows the best one as a spectator, fogged
// in fog of war (no piece of the other side, no move, until the end),
// then moves on to the next game when it ends. The spectator is on a
// 390×844 touch screen, the players at 1280×900.

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

const wide = { viewport: { width: 1280, height: 900 } };
const phone = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true };

/** The games the Watch list shows: [{game, text}]. */
const watchList = (p) => p.page.$$eval('[data-testid="watch-game"]', (links) => links.map((a) => ({ game: a.dataset.game, text: a.textContent })));

test('Watch lists the games in play, TV shows the best fogged and moves on when it ends', { timeout: 150_000 }, async () => {
  await withShots('tv', () => players, server, async () => {
    // An earlier game: against the computer.
    const dave = await Player.open(browser, 'tv-dave', server.url, '/', wide);
    players.push(dave);
    await dave.el('player-name').fill('Dave');
    await dave.el('player-name').press('Tab');
    await startComputer(dave, { variant: 'atomic', color: 'white', level: 'easy' });
    const daveGame = dave.currentGame();

    // A later fog game between people: first in the list (as rated, and newer).
    const alice = await Player.open(browser, 'tv-alice', server.url, '/', wide);
    players.push(alice);
    await alice.el('player-name').fill('Alice');
    await alice.el('player-name').press('Tab');
    const link = await createFriendGame(alice, { variant: 'fog', color: 'white', minutes: 0 });
    const bob = await Player.open(browser, 'tv-bob', server.url, '/', wide);
    players.push(bob);
    await openInvite(bob, link, { name: 'Bob' });
    const fogGame = alice.currentGame();
    for (const [p, uci] of [[alice, 'e2e4'], [bob, 'd7d5']]) {
      const v = await p.waitTurn();
      await p.play(uci, v.legal);
    }

    const carol = await Player.open(browser, 'tv-carol', server.url, '/', phone);
    players.push(carol);
    await carol.el('watch').waitFor();
    await carol.page.waitForFunction((ids) => ids.every((id) => document.querySelector(`[data-testid="watch-game"][data-game="${id}"]`)), [fogGame, daveGame], { timeout: 20_000 });
    const listed = await watchList(carol);
    assert.deepEqual(listed.map((g) => g.game), [fogGame, daveGame], 'the newer game first, ratings being equal');
    assert.match(listed[0].text, /Alice \(1500\?\) – Bob \(1500\?\)/);
    assert.match(listed[1].text, /Dave .* – Computer/);
    assert.match(await carol.page.locator('.watch-what').first().textContent(), /Fog of war/);
    assert.equal(await carol.el('watch-tv').isVisible(), true);

    // TV: the fog game as a spectator sees it, with the TV banner.
    await carol.el('watch-tv').click();
    await carol.el('game').waitFor();
    await carol.el('tv-banner').waitFor();
    await carol.waitFor(() => carol.received.some((f) => f.t === 'state' && f.game === fogGame && f.you === 'spectator'), 'the fog game on TV');
    const seen = carol.gameFrames(fogGame);
    for (const f of seen) {
      if (f.fen) assert.match(f.fen.split(' ')[0], /^[1-8/]+$/, `a spectator's frame shows a piece: ${f.fen}`);
      assert.ok(!(f.moves || []).some((m) => m && (m.uci || m.san)), `a spectator's frame shows a move: ${JSON.stringify(f)}`);
      assert.ok(!f.uci && !f.san, `a spectator's frame shows a move: ${JSON.stringify(f)}`);
    }
    assert.equal(await carol.page.evaluate(() => location.hash), '#tv');
    await carol.shot('tv-fog');

    // The game ends: TV moves on to the next best, Dave's.
    await confirmClick(alice, 'resign');
    await alice.waitEnd();
    await carol.waitFor(() => carol.currentGame() === daveGame, 'the next game on TV', 30_000);
    await carol.el('tv-banner').waitFor();
    await carol.waitFor(() => carol.received.some((f) => f.t === 'state' && f.game === daveGame && f.you === 'spectator'), 'the next game watched');
    await carol.shot('tv-next');
  });
});
