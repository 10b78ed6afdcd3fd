// A Swiss in the page. Home lists it among the tournaments (its name as
// typed: markup stays text) with a countdown to its start; its page joins
// and withdraws, shows round 1's pairing with the bye of the odd player,
// each board's result once in, the standings with their tie-breaks, and
// the countdown to the next round once every game of the round is over.
// Two of the three players are programs on lichess's Swiss API; Ann plays
// in the browser and is taken straight to her game when paired.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, T, launch, withShots } from '../lib/player.js';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const DESKTOP = { viewport: { width: 1280, height: 900 } };

async function api(method, path, token, form) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/x-www-form-urlencoded' },
    body: form ? new URLSearchParams(form) : undefined,
  });
  const body = await response.json();
  assert.equal(response.status, 200, `${method} ${path}: ${JSON.stringify(body)}`);
  return body;
}

/** A program player: its token and id. */
async function program() {
  const { access_token: token } = await api('POST', '/api/token');
  const { id } = await api('GET', '/api/account', token);
  return { token, id };
}

/** The Swiss once round `round` is paired, as the API gives it. */
async function roundPaired(id, round) {
  for (const start = Date.now(); Date.now() - start < 90_000; await new Promise((r) => setTimeout(r, 300))) {
    const t = await api('GET', `/api/swiss/${id}`);
    if (t.round >= round) return t;
  }
  throw new Error(`round ${round} was not paired`);
}

/** The rows of `p`'s standings: [{rank, name, points, buchholz}]. */
function standings(p) {
  return p.page.evaluate(() => [...document.querySelectorAll('[data-testid="swiss-standings"] tbody tr')].map((tr) => {
    const c = tr.children;
    return { rank: c[0].textContent, name: c[1].querySelector('a').textContent, points: c[3].textContent, buchholz: c[4].textContent };
  }));
}

test('a Swiss: listed with its countdown, joined from its page, round 1 with a bye, results, standings and the wait for round 2', { timeout: 240_000 }, async () => {
  const players = [];
  await withShots('swiss', () => players, server, async () => {
    const ann = await Player.open(browser, 'Ann', server.url, '/', DESKTOP);
    players.push(ann);
    await ann.page.waitForFunction(() => localStorage.getItem('fogblast.token'));
    await ann.page.evaluate(() => localStorage.setItem('fogblast.name', JSON.stringify('Ann')));
    const annToken = await ann.page.evaluate(() => JSON.parse(localStorage.getItem('fogblast.token')));
    const [bea, cid] = [await program(), await program()];
    const swiss = await api('POST', '/api/swiss/new/any-team', bea.token, {
      name: 'Test <b>swiss</b>', description: '<i>three rounds</i>', 'clock.limit': '60', 'clock.increment': '0',
      nbRounds: '3', roundInterval: '20', variant: 'atomic', rated: 'false', startsAt: String(Date.now() + 25_000),
    });

    // Home lists it under "Starting soon", as text, with its countdown.
    await ann.page.reload();
    const item = ann.page.locator(`${T('tournaments-created')} li[data-tournament="${swiss.id}"]`);
    await item.waitFor({ timeout: 15_000 });
    assert.equal(await item.getAttribute('data-system'), 'swiss');
    assert.equal(await item.locator('.tournament-link').textContent(), 'Test <b>swiss</b> Swiss');
    assert.equal(await item.locator('b').count(), 0, 'the markup stays text');
    assert.equal(await item.locator('.tournament-what').textContent(), 'Atomic · 1+0 · 3 rounds · casual · 0 players');
    await ann.page.waitForFunction((sel) => /^Starts in 0:\d\d$/.test(document.querySelector(sel)?.textContent || ''), `${T('tournaments-created')} li[data-tournament="${swiss.id}"] .tournament-when`);

    // Its page: the description as typed; join, withdraw, join again.
    await item.locator('.tournament-link').click();
    await ann.el('swiss-page').waitFor();
    await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Test <b>swiss</b> Swiss', T('swiss-name'));
    assert.match(ann.page.url(), new RegExp(`#swiss=${swiss.id}$`));
    assert.equal(await ann.el('swiss-description').textContent(), '<i>three rounds</i>');
    assert.match(await ann.el('swiss-countdown').textContent(), /^Starts in 0:\d\d$/);
    await ann.el('swiss-action').click();
    await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Withdraw', T('swiss-action'));
    assert.equal(await ann.el('swiss-me').textContent(), 'You are in: round 1 is paired at the start.');
    await ann.el('swiss-action').click();
    await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Join again', T('swiss-action'));
    await ann.el('swiss-action').click();
    await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Withdraw', T('swiss-action'));
    for (const p of [bea, cid]) await api('POST', `/api/swiss/${swiss.id}/join`, p.token, {});
    await ann.page.waitForFunction((sel) => document.querySelectorAll(`${sel} tbody tr`).length === 3, T('swiss-standings'));
    await ann.shotSizes('swiss-upcoming');

    // Round 1: three players, one board and a bye.
    const info = await roundPaired(swiss.id, 1);
    const round = info.rounds[0];
    assert.equal(round.boards.length, 1);
    assert.ok(round.bye, 'the odd player has the bye');
    const board = round.boards[0];
    const tokens = { [bea.id]: bea.token, [cid.id]: cid.token };
    const annId = (await api('GET', '/api/account', annToken)).id;
    tokens[annId] = annToken;
    if (board.white === annId || board.black === annId) {
      // Paired: Ann is taken straight to her game, with the Swiss's bar.
      await ann.el('game').waitFor();
      await ann.el('tournament-bar').waitFor();
      await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'A win scores 1 point, a draw ½.', T('tournament-stake'));
      assert.ok(await ann.el('berserk').isHidden(), 'no berserk in a Swiss');
      assert.equal(await ann.el('tournament-back').getAttribute('href'), `/#swiss=${swiss.id}`);
      await ann.el('tournament-back').click();
    }
    await ann.el('swiss-page').waitFor();
    await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Round 1 of 3', T('swiss-round'));
    assert.equal(await ann.page.locator(`${T('swiss-pairings')} tbody tr`).count(), 1);
    assert.match(await ann.el('swiss-bye').textContent(), /^Bye \(1 point\): \S+\.$/);
    assert.equal(await ann.page.locator(`${T('swiss-pairings')} tbody tr td:nth-child(3)`).textContent(), 'playing');
    assert.match(await ann.el('swiss-countdown').textContent(), /^Round 1 of 3 being played$/);

    // Black resigns: the board shows 1-0, the standings follow, and round 2 is counted down.
    await api('POST', `/api/board/game/${board.id}/resign`, tokens[board.black]);
    await ann.page.waitForFunction((sel) => document.querySelector(sel)?.textContent === '1-0', `${T('swiss-pairings')} tbody tr td:nth-child(3)`, { timeout: 30_000 });
    await ann.page.waitForFunction((sel) => /^Round 2 starts in 0:\d\d$/.test(document.querySelector(sel).textContent), T('swiss-countdown'), { timeout: 30_000 });
    const lines = await standings(ann);
    assert.deepEqual(lines.map((l) => l.points).sort(), ['0', '1', '1'], JSON.stringify(lines));
    assert.equal(lines[2].points, '0', 'the loser last');
    await ann.shotSizes('swiss-between-rounds');
    // A phone shows every column of the pairing, the result too.
    await ann.page.setViewportSize({ width: 390, height: 844 });
    assert.ok(await ann.page.locator(`${T('swiss-pairings')} tbody tr td:nth-child(3)`).isVisible(), 'the result on a phone');
    await ann.page.setViewportSize(DESKTOP.viewport);

    // Round 2 comes by itself after the wait. Paired, Ann is taken to her
    // game once her notice arrives, which may be after the API shows the
    // round: wait for the game, then back to the page.
    const second = (await roundPaired(swiss.id, 2)).rounds[1];
    if (second.boards.some((b) => b.white === annId || b.black === annId)) {
      await ann.el('game').waitFor({ timeout: 30_000 });
      await ann.el('tournament-back').click();
    } else {
      await ann.page.goto(new URL(`/#swiss=${swiss.id}`, server.url).href);
    }
    await ann.el('swiss-page').waitFor();
    await ann.page.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'Round 2 of 3', T('swiss-round'));
    await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Withdraw', T('swiss-action'));
    await ann.el('swiss-action').click();
    await ann.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Join again', T('swiss-action'));
    for (const p of players) assert.deepEqual(p.errors, [], `${p.name}: no errors in the page`);
  });
});
