// Offline: the page's files are cached when the service worker installs and served from the
// cache first. scripts/build-web fills in FILES and VERSION (a hash of the built files).
const VERSION = '__VERSION__';
const FILES = __FILES__;
const CACHE = `ccv3-card-editor-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('ccv3-card-editor-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin) return;
  event.respondWith(
    caches.open(CACHE).then((c) => c.match(event.request, { ignoreSearch: true }).then((hit) => hit || fetch(event.request))),
  );
});
