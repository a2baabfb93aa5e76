// Drafts and recent files in the browser's IndexedDB (nothing leaves the browser).
//
// Stores: `drafts` (one per opened file: the edited object, the file as opened, the time),
// `recent` (the last RECENT files opened: name, size, time) and `recent-bytes` (their bytes, up
// to MAX_RECENT_BYTES each, read only when one is opened again).

const DB = 'ccv3-card-editor';
const RECENT = 8;
const MAX_RECENT_BYTES = 32 * 1024 * 1024;
const MAX_DRAFTS = 8;

let opening = null;

function db() {
  if (!opening) {
    opening = new Promise((resolve, reject) => {
      const req = indexedDB.open(DB, 2);
      req.onupgradeneeded = () => {
        const d = req.result;
        if (!d.objectStoreNames.contains('drafts')) d.createObjectStore('drafts', { keyPath: 'id' });
        if (d.objectStoreNames.contains('recent')) d.deleteObjectStore('recent');
        d.createObjectStore('recent', { keyPath: 'key' });
        if (!d.objectStoreNames.contains('recent-bytes')) d.createObjectStore('recent-bytes');
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }
  return opening;
}

function done(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function tx(name, mode, f) {
  const d = await db();
  const t = d.transaction(name, mode);
  const result = await f(t.objectStore(name));
  await new Promise((resolve, reject) => {
    t.oncomplete = resolve;
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error);
  });
  return result;
}

/** Saves (replaces) a draft; keeps the newest MAX_DRAFTS. */
export async function saveDraft(draft) {
  await tx('drafts', 'readwrite', (s) => done(s.put(draft)));
  const all = await tx('drafts', 'readonly', (s) => done(s.getAll()));
  all.sort((a, b) => b.time - a.time);
  if (all.length > MAX_DRAFTS) {
    await tx('drafts', 'readwrite', (s) => Promise.all(all.slice(MAX_DRAFTS).map((d) => done(s.delete(d.id)))));
  }
}

/** The newest draft, or null. */
export async function latestDraft() {
  const all = await tx('drafts', 'readonly', (s) => done(s.getAll()));
  all.sort((a, b) => b.time - a.time);
  return all[0] || null;
}

/** Forgets a draft. */
export async function deleteDraft(id) {
  await tx('drafts', 'readwrite', (s) => done(s.delete(id)));
}

/** Remembers a file opened; keeps the newest RECENT. */
export async function addRecent(fileName, bytes) {
  if (bytes.length > MAX_RECENT_BYTES) return;
  const key = `${fileName}:${bytes.length}`;
  await tx('recent-bytes', 'readwrite', (s) => done(s.put(bytes, key)));
  await tx('recent', 'readwrite', (s) => done(s.put({ key, fileName, size: bytes.length, time: Date.now() })));
  const list = await recent();
  for (const old of list.slice(RECENT)) {
    await tx('recent', 'readwrite', (s) => done(s.delete(old.key)));
    await tx('recent-bytes', 'readwrite', (s) => done(s.delete(old.key)));
  }
}

/** The recent files, newest first (without their bytes). */
export async function recent() {
  const all = await tx('recent', 'readonly', (s) => done(s.getAll()));
  return all.sort((a, b) => b.time - a.time);
}

/** The bytes of a recent file, or null. */
export async function recentBytes(key) {
  const bytes = await tx('recent-bytes', 'readonly', (s) => done(s.get(key)));
  return bytes || null;
}
