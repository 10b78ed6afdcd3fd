// What the page writes after a quick-paired rated game: a result banner
// ("You won" / "You lost") with the rating change; back home the seek
// line no longer says "Opponent found!", your ratings count "1 game" (not
// "1 games"), and the PGN you download names the game's page on this
// server as an absolute URL in its Site tag.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer } from '../lib/server.js';
import { Player, confirmClick, launch, withShots } from '../lib/player.js';

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

/** Seeks a rated standard 3+2 game from the home page. */
async function seek(p) {
  await p.choose('seek-variant', 'standard');
  await p.choose('seek-clock', '3+2');
  await p.el('seek-rated').check();
  await p.el('seek-start').click();
}

test('after a quick-paired game: a fresh seek line, "1 game", and an absolute PGN Site', { timeout: 120_000 }, async () => {
  const alice = await Player.open(browser, 'alice', server.url);
  const bob = await Player.open(browser, 'bob', server.url);
  players.push(alice, bob);
  await withShots('texts', () => players, server, async () => {
    await seek(alice);
    await seek(bob);
    for (const p of [alice, bob]) {
      await p.el('game').waitFor({ timeout: 30_000 });
      await p.waitFor(() => p.view().you, 'a seat');
    }
    const white = alice.view().you === 'white' ? alice : bob;
    const black = white === alice ? bob : alice;
    for (const [p, uci] of [[white, 'e2e4'], [black, 'e7e5']]) {
      const v = await p.waitTurn();
      await p.play(uci, v.legal);
    }
    await confirmClick(white, 'resign');
    const end = await white.waitEnd();
    await black.waitEnd();

    // The banner says how it went for each, with the rating change beside it.
    for (const [p, words, sign] of [[white, 'You lost', '-'], [black, 'You won', '+']]) {
      const banner = p.el('result-banner');
      await banner.waitFor({ state: 'visible' });
      assert.equal((await banner.textContent()).trim(), words, `${p.name}'s banner`);
      const change = p.el('rating-change');
      await change.waitFor({ state: 'visible', timeout: 20_000 });
      const text = (await change.textContent()).trim();
      assert.ok(text.startsWith(sign) && /→ \d+/.test(text), `${p.name}'s rating change reads "${text}"`);
    }
    await black.shotSizes('result-banner');

    // The PGN link downloads the game with its page's absolute address as Site.
    const game = end.game;
    const link = black.el('pgn-link');
    await link.waitFor({ state: 'visible' });
    let pgn = '';
    for (let i = 0; i < 40 && !/\[Result /.test(pgn); i++) {
      const [download] = await Promise.all([black.page.waitForEvent('download'), link.click()]);
      pgn = readFileSync(await download.path(), 'utf8');
      if (!/\[Result /.test(pgn)) await new Promise((r) => setTimeout(r, 250));
    }
    assert.match(pgn, new RegExp(`^\\[Site "${server.url.replace(/[.]/g, '\\.')}/#game=${game}"\\]$`, 'm'), pgn);
    assert.match(pgn, /1\. e4 .*e5/);

    // Home again: the seek line is reset and the rating counts one game.
    await black.el('new-game').click();
    await black.el('home').waitFor();
    assert.equal((await black.el('seek-status').textContent()).trim(), '', 'the seek line back home');
    await black.page.waitForFunction(
      (sel) => /\(1 game\)/.test(document.querySelector(sel)?.textContent || ''),
      '[data-testid="profile"]',
      { timeout: 20_000 },
    ).catch(() => {});
    const profile = (await black.el('profile').textContent()).trim();
    assert.match(profile, /Standard: \d+\?? \(1 game\)/, `the profile line reads "${profile}"`);
    await black.shotSizes('home-after-game');
  });
});
