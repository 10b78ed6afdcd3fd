// A finished game's PGN as the page offers it: the archive writes the game's
// `Site` as a path of its own (it does not know the address it is served
// at), so the page fetches the PGN and names the game's page on this origin
// instead (`https://host/#game=ID`, which opens its replay), then offers the
// text as a data link. Until the text is there, or if it never comes, the
// link is the archive's own.

import { pgnUrl } from './archive.js';

/** `pgn` with its Site tag (added after Event if missing) set to `site`. */
export function withSite(pgn, site) {
  const tag = `[Site "${site.replace(/["\\]/g, '\\$&')}"]`;
  if (/^\[Site "(?:[^"\\]|\\.)*"\]$/m.test(pgn)) return pgn.replace(/^\[Site "(?:[^"\\]|\\.)*"\]$/m, tag);
  if (/^\[Event .*\]$/m.test(pgn)) return pgn.replace(/^(\[Event .*\])$/m, `$1\n${tag}`);
  return `${tag}\n${pgn}`;
}

/** The address of game `id`'s page on `origin`. */
export function gameSite(origin, id) {
  return `${origin}/#game=${encodeURIComponent(id)}`;
}

export function dataLink(pgn) {
  return `data:application/x-chess-pgn;charset=utf-8,${encodeURIComponent(pgn)}`;
}

/**
 * Makes `link` download game `id`'s PGN with an absolute Site: the first
 * click fetches the text and downloads it as a data link (the archive may
 * have stored the game only a moment before); a link whose text could not
 * be read downloads the archive's file as it is.
 */
export function linkPgn(link, id) {
  if (link.dataset.pgnGame === id) return;
  link.dataset.pgnGame = id;
  link.href = pgnUrl(id);
  if (!link.dataset.pgnBound) {
    link.dataset.pgnBound = '1';
    link.addEventListener('click', downloadWithSite);
  }
}

async function downloadWithSite(e) {
  const link = e.currentTarget;
  const id = link.dataset.pgnGame;
  if (!id || link.href.startsWith('data:') || link.dataset.pgnPlain === id) return;
  e.preventDefault();
  const text = await fetch(pgnUrl(id), { headers: { accept: 'application/x-chess-pgn' } })
    .then((response) => (response.ok ? response.text() : null))
    .catch(() => null);
  if (link.dataset.pgnGame !== id) return;
  if (text) link.href = dataLink(withSite(text, gameSite(location.origin, id)));
  else link.dataset.pgnPlain = id;
  link.click();
}
