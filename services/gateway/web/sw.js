// The service worker: keeps every file of the page so it opens and plays
// the computer offline after one visit. The gateway serves this file at
// /sw.js with the list of its embedded files and their combined version
// filled in; a new version re-caches everything and drops the old cache.
const VERSION = '__VERSION__';
const ASSETS = __ASSETS__;
const CACHE = `fogblast-${VERSION}`;
/** How long the network gets before the cached copy answers. */
const NETWORK_WAIT_MS = 2500;

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(['/', ...ASSETS])).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('fogblast-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  // The live game and the archive only make sense from the server.
  if (url.pathname === '/ws' || url.pathname.startsWith('/api/') || url.pathname === '/sw.js') return;
  // Every page route (/, /g/CODE) is the same page.
  const key = request.mode === 'navigate' ? '/' : url.pathname;
  event.respondWith(networkFirst(request, key));
});

/** The network's answer when it comes in time (and it refreshes the cache), else the cached copy. */
async function networkFirst(request, key) {
  const cache = await caches.open(CACHE);
  const fromNetwork = fetch(request).then((response) => {
    if (response.ok && response.type === 'basic') cache.put(key, response.clone());
    return response;
  });
  const cached = await cache.match(key);
  if (!cached) return fromNetwork;
  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), NETWORK_WAIT_MS));
  try {
    return (await Promise.race([fromNetwork, timeout])) || cached;
  } catch {
    return cached;
  }
}
