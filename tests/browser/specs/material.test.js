// Material beside the names: the pieces each side took, drawn small, and
// the lead in points. In atomic chess a blast's whole toll counts (Nxc7
// takes a pawn, a knight, a bishop and the queen, and the knight). In fog
// of war each seat sees only what it knows (what it took, what it lost),
// with no score, and keeps it across a reload; a spectator sees nothing.

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

async function pair(variant, bobOptions = {}) {
  const alice = await Player.open(browser, `alice-${variant}`, server.url, '/', { viewport: { width: 1280, height: 900 } });
  players.push(alice);
  const link = await createFriendGame(alice, { variant, color: 'white', minutes: 0 });
  const bob = await Player.open(browser, `bob-${variant}`, server.url, '/', bobOptions);
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
    const other = mover === alice ? bob : alice;
    await other.waitFor(() => other.view().ply > i, `${other.name} to see ply ${i}`);
  }
}

/** What the page shows beside `color`'s name: the roles of the pieces taken and the lead. */
async function shown(p, color) {
  return p.page.evaluate((c) => {
    const el = document.querySelector(`[data-testid="material-${c}"]`);
    if (!el || el.hidden) return { taken: [], ahead: '' };
    return { taken: [...el.querySelectorAll('.taken')].map((t) => t.dataset.role), ahead: el.querySelector('.ahead')?.textContent || '' };
  }, color);
}

async function shows(p, color, want) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = await shown(p, color);
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    if (Date.now() > deadline) assert.deepEqual(got, want, `${p.name}: beside ${color}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("atomic: a blast's whole toll beside the names, and the lead", { timeout: 90_000 }, async () => {
  const [alice, bob] = await pair('atomic', { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  await withShots('material-atomic', () => players, server, async () => {
    await playLine(alice, bob, ['b1c3', 'a7a6', 'c3d5', 'h7h6', 'd5c7']);
    for (const p of [alice, bob]) {
      await shows(p, 'white', { taken: ['q', 'b', 'n', 'p'], ahead: '+13' });
      await shows(p, 'black', { taken: ['n'], ahead: '' });
    }
    // On the phone it fits beside the name.
    const box = await bob.el('material-white').boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the material fits on the phone: ${JSON.stringify(box)}`);
    await alice.shotSizes('material-atomic');
  });
});

test('fog of war: each seat shows what it knows, a spectator nothing', { timeout: 90_000 }, async () => {
  const [alice, bob] = await pair('fog');
  await withShots('material-fog', () => players, server, async () => {
    const carol = await Player.open(browser, 'carol-fog', server.url, `/#game=${alice.currentGame()}`);
    players.push(carol);
    await carol.board().waitFor();
    await playLine(alice, bob, ['e2e4', 'd7d5', 'e4d5']);
    await shows(alice, 'white', { taken: ['p'], ahead: '' });
    await shows(alice, 'black', { taken: [], ahead: '' });
    await shows(bob, 'white', { taken: ['p'], ahead: '' });
    await shows(bob, 'black', { taken: [], ahead: '' });
    // Bob takes back on d5 with his queen: he took a pawn, Alice lost one.
    const v = await bob.waitTurn();
    await bob.play('d8d5', v.legal);
    await alice.waitFor(() => alice.view().ply === 4, 'alice to see the capture');
    await shows(bob, 'black', { taken: ['p'], ahead: '' });
    await shows(alice, 'black', { taken: ['p'], ahead: '' });
    for (const color of ['white', 'black']) await shows(carol, color, { taken: [], ahead: '' });
    // A reload keeps what Alice took in the fog.
    await alice.page.reload();
    await alice.board().waitFor();
    await shows(alice, 'white', { taken: ['p'], ahead: '' });
    await shows(alice, 'black', { taken: ['p'], ahead: '' });
  });
});
