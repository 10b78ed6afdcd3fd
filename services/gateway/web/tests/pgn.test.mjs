// The PGN the page offers names the game's page on this origin as its Site.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gameSite, withSite } from '../js/pgn.js';

const ARCHIVED = '[Event "Casual atomic game"]\n[Site "/games/e5dvhdtnazzv"]\n[Date "2026.12.02"]\n\n1. Nf3 a6 2. Ne5 a5 3. Nxd7# 1-0\n';

test('the Site tag becomes the game page\'s absolute URL', () => {
  const site = gameSite('https://fogblast.example', 'e5dvhdtnazzv');
  assert.equal(site, 'https://fogblast.example/#game=e5dvhdtnazzv');
  const pgn = withSite(ARCHIVED, site);
  assert.match(pgn, /^\[Site "https:\/\/fogblast\.example\/#game=e5dvhdtnazzv"\]$/m);
  assert.equal(pgn.match(/\[Site /g).length, 1);
  assert.ok(pgn.endsWith('3. Nxd7# 1-0\n'), 'the moves are untouched');
});

test('a PGN without a Site tag gets one after its Event', () => {
  const pgn = withSite('[Event "x"]\n[Date "?"]\n\n*\n', 'http://h/#game=g');
  assert.equal(pgn, '[Event "x"]\n[Site "http://h/#game=g"]\n[Date "?"]\n\n*\n');
});
