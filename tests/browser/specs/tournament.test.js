// Tournaments in the page, against a server that allows one-minute arenas.
// Home lists them with a countdown, names shown as typed (markup stays
// text); the create form shows the server's refusals and opens the new
// arena's page; joining and withdrawing from that page. Then a whole
// arena: two players join, are paired and taken straight to their game,
// one goes berserk (the clock halves, the mark shows on both pages), a
// spectator of the tournament page watches the top game, the standings
// follow each result (a win's 2, then the flame of a player on fire),
// and the podium shows at the end.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.js';
import { Player, T, confirmClick, launch, withShots } from '../lib/player.js';

let server;
let browser;
before(async () => {
  server = await startServer({ tournamentMinMinutes: 1 });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const DESKTOP = { viewport: { width: 1280, height: 900 } };

/** A player with a display name, connected (its token stored), on the home screen. */
async function named(players, name, options = DESKTOP) {
  const p = await Player.open(browser, name, server.url, '/', options);
  players.push(p);
  await p.page.waitForFunction(() => localStorage.getItem('fogblast.token'));
  await p.page.evaluate((n) => localStorage.setItem('fogblast.name', JSON.stringify(n)), name);
  return p;
}

const tokenOf = (p) => p.page.evaluate(() => JSON.parse(localStorage.getItem('fogblast.token')));

/** POST /api/tournament as `p`, the way a tool would. */
async function createArena(p, fields) {
  const response = await fetch(`${server.url}/api/tournament`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await tokenOf(p)}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ clockTime: '1', clockIncrement: '0', variant: 'atomic', rated: 'false', ...fields }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

async function openTournament(p, id) {
  await p.page.goto(new URL(`/#tournament=${id}`, server.url).href);
  await p.el('tournament-page').waitFor();
  await p.page.waitForFunction((sel) => document.querySelector(sel).textContent !== 'Tournament', T('tournament-name'));
}

/** The standings row of the player named `name` on `p`'s tournament page: {rank, score, sheet, fire}. */
function row(p, name) {
  return p.page.evaluate((n) => {
    const tr = [...document.querySelectorAll('[data-testid="tournament-standings"] tbody tr')].find((r) => r.children[1].querySelector('a').textContent === n);
    if (!tr) return null;
    const c = tr.children;
    return { rank: c[0].textContent, score: c[4].textContent, sheet: [...c[3].querySelectorAll('.sheet-score')].map((s) => s.textContent).join(''), fire: !!c[3].querySelector('[data-testid="tournament-fire"]') };
  }, name);
}

async function waitRow(p, name, check, what) {
  const start = Date.now();
  for (;;) {
    const r = await row(p, name);
    if (r && check(r)) return r;
    if (Date.now() - start > 30_000) throw new Error(`${p.name}: ${what}; the row is ${JSON.stringify(r)}`);
    await p.page.waitForTimeout(200);
  }
}

test('home lists arenas as text with a countdown; the form shows refusals and creates one; join and withdraw', { timeout: 180_000 }, async () => {
  const players = [];
  await withShots('tournament-home', () => players, server, async () => {
    const dave = await named(players, 'Dave');
    const listed = await createArena(dave, { name: 'Test <b>arena</b>', description: '<script>alert(1)</script>', minutes: '30', waitMinutes: '5' });

    // Home shows it under "Starting soon", its name literally, with a countdown.
    await dave.page.reload();
    const item = dave.page.locator(`${T('tournaments-created')} li[data-tournament="${listed.id}"]`);
    await item.waitFor({ timeout: 15_000 });
    assert.equal(await item.locator('.tournament-link').textContent(), 'Test <b>arena</b> Arena');
    assert.equal(await item.locator('b').count(), 0, 'the markup stays text');
    await dave.page.waitForFunction((sel) => /^Starts in [45]:\d\d$/.test(document.querySelector(sel)?.textContent || ''), `${T('tournaments-created')} li[data-tournament="${listed.id}"] .tournament-when`);

    // The form: the server's refusals, in its words.
    await dave.el('tournament-create-box').locator('summary').click();
    await dave.el('tournament-name-input').fill('x');
    await dave.el('tournament-create').click();
    await dave.page.waitForFunction((sel) => document.querySelector(sel).textContent.startsWith('Not created:'), T('tournament-create-status'));
    assert.equal(await dave.el('tournament-create-status').textContent(), 'Not created: a tournament name is 2 to 30 characters');
    await dave.el('tournament-name-input').fill('Second arena');
    await dave.el('tournament-create').click();
    await dave.page.waitForFunction((sel) => /one tournament at a time/.test(document.querySelector(sel).textContent), T('tournament-create-status'));

    // Another player creates one with the form: its page opens.
    const erin = await named(players, 'Erin');
    await erin.el('tournament-create-box').locator('summary').click();
    await erin.el('tournament-name-input').fill("Erin's fog arena");
    await erin.choose('tournament-variant', 'fogOfWar');
    await erin.choose('tournament-clock', '5+3');
    await erin.choose('tournament-minutes', '45');
    await erin.choose('tournament-wait', '10');
    await erin.el('tournament-create').click();
    await erin.el('tournament-page').waitFor();
    await erin.page.waitForFunction((sel) => document.querySelector(sel).textContent === "Erin's fog arena Arena", T('tournament-name'));
    assert.match(await erin.el('tournament-info').textContent(), /^Fog of War · 5\+3 · 45 min · rated · 0 players$/i);
    assert.match(erin.page.url(), /#tournament=[a-z0-9]+$/);

    // Dave's arena page: the description as typed; join, then withdraw.
    await openTournament(dave, listed.id);
    assert.equal(await dave.el('tournament-name').textContent(), 'Test <b>arena</b> Arena');
    assert.equal(await dave.el('tournament-description').textContent(), '<script>alert(1)</script>');
    assert.match(await dave.el('tournament-countdown').textContent(), /^Starts in [45]:\d\d$/);
    assert.equal(await dave.el('tournament-action').textContent(), 'Join');
    await dave.el('tournament-action').click();
    await waitRow(dave, 'Dave', (r) => r.rank === '1', 'Dave in the standings');
    assert.equal(await dave.el('tournament-action').textContent(), 'Withdraw');
    await dave.shotSizes('tournament-upcoming');
    await dave.el('tournament-action').click();
    await dave.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Join again', T('tournament-action'));
    assert.equal(await dave.el('tournament-me').textContent(), 'You withdrew.');
    assert.equal(await dave.page.locator(`${T('tournament-standings')} .paused-mark`).textContent(), '(withdrawn)');
  });
});

test('an arena: paired straight into the game, berserk, live standings with fire, the top game watched, the podium', { timeout: 300_000 }, async () => {
  const players = [];
  await withShots('tournament-arena', () => players, server, async () => {
    const alice = await named(players, 'Alice');
    const bob = await named(players, 'Bob', { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    const carol = await named(players, 'Carol');
    const arena = await createArena(alice, { name: 'Quick arena', minutes: '1', waitMinutes: '0' });
    for (const p of [carol, alice, bob]) await openTournament(p, arena.id);
    await alice.page.waitForFunction((sel) => /^Ends in \d:\d\d$/.test(document.querySelector(sel).textContent), T('tournament-countdown'));

    /** Both click Join (or Join again); resolves to the game they were paired into. */
    const pairing = async (round) => {
      const seen = (p) => p.received.filter((f) => f.t === 'paired' && f.tournament === arena.id);
      const before = seen(alice).length;
      const paired = await alice.waitFor(() => seen(alice)[before], `pairing ${round}`, 60_000);
      await bob.waitFor(() => seen(bob).some((f) => f.game === paired.game), `bob's pairing ${round}`, 15_000);
      for (const p of [alice, bob]) {
        // Straight into the game, with the tournament's bar.
        await p.el('game').waitFor();
        await p.waitFor(() => p.view().game === paired.game && p.view().you, `${p.name} to show game ${paired.game}`);
        await p.el('tournament-bar').waitFor();
      }
      return paired;
    };
    for (const p of [alice, bob]) await p.el('tournament-action').click();
    const first = await pairing(1);
    assert.equal(await alice.el('tournament-back').getAttribute('href'), `/#tournament=${arena.id}`);
    await alice.page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Quick arena Arena', T('tournament-bar-name'));
    assert.equal(await alice.el('tournament-stake').textContent(), 'a win scores 2, a draw 1.');

    // Alice goes berserk before her first move: her clock halves, both pages mark her.
    const aliceColor = first.color;
    await alice.el('berserk').click();
    await alice.waitFor(() => alice.received.some((f) => f.t === 'berserk' && f.game === first.game && f.color === aliceColor), 'the berserk frame');
    await alice.page.waitForFunction((sel) => document.querySelector(sel).textContent === '0:30', T(`clock-${aliceColor}`));
    for (const p of [alice, bob]) await p.el(`berserk-mark-${aliceColor}`).waitFor();
    assert.ok(await alice.el('berserk').isHidden(), 'berserk is once');
    assert.match(await alice.el('tournament-stake').textContent(), /^a win scores 3, a draw 1/);

    // Carol, on the tournament page, sees the game among the top games and watches it.
    const watch = carol.page.locator(`${T('tournament-playing')} button[data-game="${first.game}"]`);
    await watch.waitFor({ timeout: 15_000 });
    assert.match(await watch.textContent(), /^(Alice – Bob|Bob – Alice)$/);
    await watch.click();
    await carol.waitFor(() => carol.received.some((f) => f.t === 'state' && f.game === first.game && f.you === 'spectator'), 'carol to watch');
    await carol.el(`berserk-mark-${aliceColor}`).waitFor();
    await carol.el('tournament-back').click();
    await carol.el('tournament-page').waitFor();

    /** Both make a move (white first), then Bob resigns. */
    const bobResigns = async (paired) => {
      const order = paired.color === 'white' ? [alice, bob] : [bob, alice];
      for (const mover of order) {
        const v = await mover.waitTurn();
        await mover.play(v.legal.find((m) => /^[a-h][27][a-h][36]$/.test(m)) || v.legal[0], v.legal);
      }
      await confirmClick(bob, 'resign');
      await alice.waitEnd();
    };
    await bobResigns(first);
    await waitRow(carol, 'Alice', (r) => r.score === '2' && r.sheet === '2' && !r.fire, "Alice's win in the standings");

    // The next pairing comes by itself; a second win sets Alice on fire.
    const second = await pairing(2);
    assert.notEqual(second.game, first.game);
    await bobResigns(second);
    await waitRow(carol, 'Alice', (r) => r.score === '4' && r.sheet === '22' && r.fire, 'Alice on fire');
    await carol.shotSizes('tournament-running');

    // Alice's own games, as her page lists them.
    await alice.el('tournament-back').click();
    await alice.el('tournament-page').waitFor();
    await alice.page.waitForFunction((sel) => document.querySelectorAll(`${sel} li`).length >= 2, T('tournament-my-games'));

    // The end: the podium, Alice first.
    const podium = carol.page.locator(`${T('tournament-podium')} li[data-rank="1"] .podium-name`);
    await podium.waitFor({ timeout: 150_000 });
    assert.equal(await podium.textContent(), 'Alice');
    assert.equal(await carol.el('tournament-countdown').textContent(), 'Finished');
    assert.ok(await carol.el('tournament-action').isHidden());
    await carol.shotSizes('tournament-podium');
    for (const p of players) assert.deepEqual(p.errors, [], `${p.name}: no errors in the page`);
  });
});
