// Side-by-side benchmarks of the npm package (issue 11 section 5), in one run:
//  1. readCard of the 8.6 MB card with a 2,000-entry book (peers harness: gen.py -> card_5MB_post.png),
//     WebAssembly start-up included once, against SillyTavern's read path (png-chunks-extract +
//     png-chunk-text + base64 + JSON.parse) and @character-foundry/loader parseCard; then each
//     reader followed by JSON.stringify of what it returned (every value touched).
//  2. scanLorebook of the 50,000-entry book over 100 messages with compiled books reused across
//     calls, against the native warm scan of the same facade calls (examples/native_scan.rs).
//
//  0. (--only summary) readCardSummary against readCard and the peers over 1,000 cards of a folder
//     (issue 29).
//
//  (--only first) the first read in a fresh Node process and in headless Chromium (issue 29).
//
// node bindings/npm/bench/bench.mjs --gen /tmp/gen --peers DIR_WITH_node_modules [--pkg target/bindings/npm] [--only read] [--rounds 60] [--baseline PKG]
//   --only read: part 1 only; --rounds: rounds of the interleaved readCard comparison
//   --baseline: another build of the package, interleaved beside this one (read + touch rows)
//   --gen: python3 ../shared/peers/gen.py --out /tmp/gen
//   --peers: a folder where `npm ci` ran over a copy of ../shared/peers/package{,-lock}.json
// Prints one JSON line per measurement and a summary table.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..');
const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const gen = args.gen || '/tmp/gen';
const pkg = path.resolve(args.pkg || path.join(repo, 'target', 'bindings', 'npm'));
const peers = args.peers ? path.resolve(args.peers) : null;

function bench(fn, { warmup = 2, iters = 10, minMs = 500, maxIters = 200 } = {}) {
  for (let i = 0; i < warmup; i++) fn();
  const t = [];
  const start = performance.now();
  while (t.length < iters || (performance.now() - start < minMs && t.length < maxIters)) {
    const a = performance.now();
    fn();
    t.push(performance.now() - a);
  }
  t.sort((x, y) => x - y);
  return { n: t.length, median_ms: t[Math.floor(t.length / 2)], min_ms: t[0] };
}

const rows = [];
function report(row) {
  rows.push(row);
  console.log(JSON.stringify(row));
}

/** The median of a list of times. */
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

/**
 * Interleaved rounds: `warmup` untimed calls of each reader, then `rounds` rounds that call each
 * reader once in turn; the times of each reader, by its key in `impls`.
 */
async function interleaved(impls, rounds, warmup) {
  for (let i = 0; i < warmup; i++) for (const k in impls) await impls[k]();
  const t = Object.fromEntries(Object.keys(impls).map((k) => [k, []]));
  for (let i = 0; i < rounds; i++) {
    for (const k in impls) {
      const b = performance.now();
      await impls[k]();
      t[k].push(performance.now() - b);
    }
  }
  return t;
}

// ---- 0. Library list (issue 29): readCardSummary vs readCard vs the peers over a folder ----
// node bindings/npm/bench/bench.mjs --only summary [--peers DIR] [--st 1] [--cards DIR] [--count 1000] [--rounds 15]
// Every file under DIR (default ../shared/corpus) that readCard reads (and, with --peers, that
// @character-foundry/loader's parseCard reads too) is taken, in memory, and repeated in order up
// to --count cards. One round reads the whole list with each reader in turn (interleaved); each
// ratio is the median over rounds of (other reader's time / readCardSummary's time). The
// SillyTavern read path (png-chunks-extract + png-chunk-text + base64 + JSON.parse, JSON.parse of
// a .json file) reads only PNG and JSON cards: it is timed on that part of the list, beside
// readCardSummary of the same part, only with --st 1 (png-chunks-extract checks every chunk's CRC
// in JavaScript: about 50 s a round on this list).
if (args.only === 'summary') {
  const require = createRequire(import.meta.url);
  const ccv3 = require(path.join(pkg, 'index.cjs'));
  const dir = path.resolve(args.cards || path.join(repo, '..', 'shared', 'corpus'));
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files.push(p);
    }
  };
  walk(dir);
  let parseCard = null;
  let stRead = null;
  if (peers) {
    const preq = createRequire(path.join(peers, 'package.json'));
    ({ parseCard } = await import(pathToImport(preq.resolve('@character-foundry/loader'))));
    const extract = preq('png-chunks-extract');
    const PNGtext = preq('png-chunk-text');
    stRead = (buf) => {
      if (buf[0] === 0x89) {
        const tc = extract(buf).filter((c) => c.name === 'tEXt').map((c) => PNGtext.decode(c.data));
        for (const kw of ['ccv3', 'chara']) {
          const c = tc.find((x) => x.keyword.toLowerCase() === kw);
          if (c) return JSON.parse(Buffer.from(c.text, 'base64').toString('utf8'));
        }
        throw new Error('no card');
      }
      return JSON.parse(buf.toString('utf8'));
    };
  }
  const cards = [];
  for (const f of files) {
    const bytes = fs.readFileSync(f);
    try {
      ccv3.readCard(bytes);
      if (parseCard) await parseCard(bytes);
      cards.push({ bytes, st: stRead !== null && /\.(png|json)$/i.test(f) && (() => { try { stRead(bytes); return true; } catch (_) { return false; } })() });
    } catch (_) {
      // Not a card (a lorebook, a broken file) or one a peer cannot read: not in the list.
    }
  }
  const count = Number(args.count || 1000);
  const list = Array.from({ length: count }, (_, i) => cards[i % cards.length]);
  const all = list.map((c) => c.bytes);
  const stList = list.filter((c) => c.st).map((c) => c.bytes);
  const mb = (l) => (l.reduce((n, b) => n + b.length, 0) / 1e6).toFixed(1);
  const impls = {
    readCardSummary: async () => {
      for (const b of all) ccv3.readCardSummary(b);
    },
    readCard: async () => {
      for (const b of all) ccv3.readCard(b);
    },
  };
  if (parseCard) {
    impls['@character-foundry/loader parseCard'] = async () => {
      for (const b of all) await parseCard(b);
    };
  }
  if (parseCard && args.st) {
    impls['readCardSummary (PNG and JSON part)'] = async () => {
      for (const b of stList) ccv3.readCardSummary(b);
    };
    impls['SillyTavern read path (PNG and JSON part)'] = async () => {
      for (const b of stList) stRead(b);
    };
  }
  const rounds = Number(args.rounds || 15);
  const t = await interleaved(impls, rounds, 1);
  const over = (k, base) => median(t[k].map((x, i) => x / t[base][i]));
  const row = {
    op: `library list: ${count} cards (${cards.length} distinct, ${mb(all)} MB; PNG and JSON part ${stList.length} cards, ${mb(stList)} MB) from ${path.relative(repo, dir)}`,
    rounds,
  };
  for (const k in impls) row[`${k} median_ms`] = median(t[k]);
  row['readCard / readCardSummary'] = over('readCard', 'readCardSummary');
  if (parseCard) {
    row['parseCard / readCardSummary'] = over('@character-foundry/loader parseCard', 'readCardSummary');
  }
  if (parseCard && args.st) {
    row['SillyTavern / readCardSummary (PNG and JSON part)'] = over(
      'SillyTavern read path (PNG and JSON part)',
      'readCardSummary (PNG and JSON part)',
    );
  }
  report(row);
  process.exit(0);
}

// ---- First read in a fresh process (issue 29) ----
// node bindings/npm/bench/bench.mjs --only first --gen DIR --peers DIR [--rounds 15] [--baseline PKG]
//   [--chromium /usr/bin/chromium] [--playwright DIR_WITH_node_modules (default web/test)]
// Node: each round spawns, in turn, a bare `node -e ''`, a Node process that requires the package
// and reads card_5MB_post.png once with readCard (module load, WebAssembly compile and
// instantiate, one read), the same with --baseline's package when given, and one that imports
// @character-foundry/loader and reads the card once with parseCard. The card's bytes are read
// before the clock starts. Medians over rounds of: the whole process's wall time minus the bare
// process's (Node's own start), and, inside the process, the import and the first read: their
// wall times, and their CPU times (all threads; the main thread's on Linux), which a loaded machine
// moves much less (the CPU readings add about 1 ms to each whole process, the same for each).
// Chromium (headless, when found): each round a fresh browser context (no HTTP or code cache)
// opens a page that fetches the card's bytes, then times `import('ccv3/web')`, `await init()`
// and the first readCard; `init()` compiles the core as it streams in (compileStreaming of the
// served application/wasm) or, in the `bytes` variant, from the fetched bytes (WebAssembly.compile);
// the `read` and `read-bytes` variants call `initReadCore()` instead (the read core alone,
// streaming or from bytes fetched before the clock, as a page that preloads it);
// with --peers, the `cf` variant times `import('@character-foundry/loader')` (bare names mapped to
// the peers' node_modules by an import map) and its first parseCard.
if (args.only === 'first-child') {
  // One measurement in this fresh process: prints {import_ms, read_ms} and the CPU time of each:
  // the process's (all threads: V8 compiles on worker threads) and, on Linux, the main thread's
  // (/proc schedstat, brought up to date by a 10 µs futex wait; taken outside the timed spans).
  // Under load the CPU times move much less than the walls.
  const bytes = fs.readFileSync(args.card);
  const cpu = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const ia = new Int32Array(new SharedArrayBuffer(4));
  const stat = `/proc/self/task/${process.pid}/schedstat`;
  const mainCpu = () => {
    try {
      Atomics.wait(ia, 0, 0, 0.01);
      return Number(fs.readFileSync(stat, 'latin1').split(' ')[0]) / 1e6;
    } catch (_) {
      return NaN;
    }
  };
  const c0 = [cpu(), mainCpu()];
  const t0 = performance.now();
  let read;
  if (args.which === 'cf') {
    const preq = createRequire(path.join(path.resolve(args.peers), 'package.json'));
    const { parseCard } = await import(pathToImport(preq.resolve('@character-foundry/loader')));
    read = parseCard;
  } else {
    const lib = createRequire(import.meta.url)(path.join(path.resolve(args.which), 'index.cjs'));
    read = (b) => lib.readCard(b);
  }
  const t1 = performance.now();
  const c1 = [cpu(), mainCpu()];
  const t1b = performance.now();
  const card = await read(bytes);
  const t2 = performance.now();
  const c2 = [cpu(), mainCpu()];
  if (!(card.card || card).data.name) throw new Error('no card read');
  const times = { import_ms: t1 - t0, read_ms: t2 - t1b, import_cpu_ms: c1[0] - c0[0], read_cpu_ms: c2[0] - c1[0] };
  if (!Number.isNaN(c0[1])) Object.assign(times, { import_main_cpu_ms: c1[1] - c0[1], read_main_cpu_ms: c2[1] - c1[1] });
  console.log(JSON.stringify(times));
  process.exit(0);
}
if (args.only === 'first') {
  const { spawnSync } = await import('node:child_process');
  const card = path.join(gen, 'card_5MB_post.png');
  const rounds = Number(args.rounds || 15);
  const self = fileURLToPath(import.meta.url);
  const run = (argv) => {
    const a = performance.now();
    const r = spawnSync(process.execPath, argv, { encoding: 'utf8' });
    const wall = performance.now() - a;
    if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
    return { wall, ...(r.stdout.trim() ? JSON.parse(r.stdout.trim().split('\n').pop()) : {}) };
  };
  const child = (which) => () => run([self, '--only', 'first-child', '--which', which, '--card', card, '--peers', peers || '']);
  const impls = { bare: () => run(['-e', '']), ccv3: child(pkg) };
  if (args.baseline) impls.baseline = child(path.resolve(args.baseline));
  if (peers) impls.cf = child('cf');
  const t = Object.fromEntries(Object.keys(impls).map((k) => [k, []]));
  for (const k in impls) impls[k](); // warm the page cache
  for (let i = 0; i < rounds; i++) for (const k in impls) t[k].push(impls[k]());
  const bare = median(t.bare.map((x) => x.wall));
  const row = { op: 'first read in a fresh Node process: card_5MB_post.png', rounds, load: os.loadavg().map((x) => x.toFixed(1)).join(' '), bare_node_ms: bare };
  for (const k of Object.keys(impls).filter((x) => x !== 'bare')) {
    row[`${k} process_minus_bare_ms`] = median(t[k].map((x) => x.wall)) - bare;
    row[`${k} import_ms`] = median(t[k].map((x) => x.import_ms));
    row[`${k} first_read_ms`] = median(t[k].map((x) => x.read_ms));
    row[`${k} import_plus_read_ms`] = median(t[k].map((x) => x.import_ms + x.read_ms));
    // CPU times (see first-child): all threads, and the main thread where Linux gives it.
    for (const c of ['import_cpu_ms', 'read_cpu_ms', 'import_main_cpu_ms', 'read_main_cpu_ms']) {
      if (t[k][0][c] !== undefined) row[`${k} ${c}`] = median(t[k].map((x) => x[c]));
    }
  }
  if (peers) {
    // Per round: ccv3's (import + read) / cf's read after its import; whole processes.
    row['ccv3 (require + read) / cf read'] = median(t.ccv3.map((x, i) => (x.import_ms + x.read_ms) / t.cf[i].read_ms));
    if (t.baseline) row['baseline (require + read) / cf read'] = median(t.baseline.map((x, i) => (x.import_ms + x.read_ms) / t.cf[i].read_ms));
    row['ccv3 process / cf process (minus bare)'] = median(t.ccv3.map((x, i) => (x.wall - t.bare[i].wall) / (t.cf[i].wall - t.bare[i].wall)));
  }
  report(row);
  await firstReadInChromium(card, rounds);
  process.exit(0);
}

/** The browser entry's first read in headless Chromium (see `--only first`). */
async function firstReadInChromium(cardPath, rounds) {
  const executablePath = args.chromium || '/usr/bin/chromium';
  let chromium;
  try {
    const preq = createRequire(path.join(path.resolve(args.playwright || path.join(repo, 'web', 'test')), 'package.json'));
    ({ chromium } = preq('playwright-core'));
  } catch (_) {
    console.log('(no playwright-core: `cd web/test && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci`; Chromium part skipped)');
    return;
  }
  if (!fs.existsSync(executablePath)) {
    console.log(`(no Chromium at ${executablePath}; Chromium part skipped)`);
    return;
  }
  const http = await import('node:http');
  const types = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
  // character-foundry's ES modules import bare package names: an import map points them at the
  // peers' node_modules (its browser path: atob for base64, fflate's browser build).
  const cfPkgs = ['charx', 'core', 'loader', 'lorebook', 'media', 'normalizer', 'png', 'schemas', 'voxta'];
  const imports = { '@character-foundry/core/zip': '/peers/@character-foundry/core/dist/zip.js', fflate: '/peers/fflate/esm/browser.js', zod: '/peers/zod/index.js' };
  for (const n of cfPkgs) imports[`@character-foundry/${n}`] = `/peers/@character-foundry/${n}/dist/index.js`;
  const cf = peers && fs.existsSync(path.join(peers, 'node_modules', '@character-foundry', 'loader'));
  const page = `<!doctype html><script type="importmap">${JSON.stringify({ imports })}</script><script type="module">
    const q = new URLSearchParams(location.search);
    const variant = q.get('variant');
    const card = new Uint8Array(await (await fetch('/card.png')).arrayBuffer());
    if (variant === 'cf') {
      const t0 = performance.now();
      const m = await import('@character-foundry/loader');
      const t1 = performance.now();
      const c = await m.parseCard(card);
      const t2 = performance.now();
      window.result = { import_ms: t1 - t0, init_ms: 0, read_ms: t2 - t1, total_ms: t2 - t0, name: (c.card || c).data.name };
    } else {
      const core = { bytes: '/pkg/web/ccv3_wasm_bg.wasm', 'read-bytes': '/pkg/web/ccv3_read_bg.wasm' }[variant];
      const wasm = core ? await (await fetch(core)).arrayBuffer() : undefined;
      const t0 = performance.now();
      const m = await import('/pkg/web/index.js');
      const t1 = performance.now();
      await (variant.startsWith('read') ? m.initReadCore(wasm) : m.default(wasm));
      const t2 = performance.now();
      const c = m.readCard(card);
      const t3 = performance.now();
      window.result = { import_ms: t1 - t0, init_ms: t2 - t1, read_ms: t3 - t2, total_ms: t3 - t0, name: c.data.name };
    }
  </script>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let file = null;
    if (url.pathname === '/card.png') file = cardPath;
    else if (url.pathname.startsWith('/pkg/')) file = path.join(pkg, url.pathname.slice(5));
    else if (cf && url.pathname.startsWith('/peers/')) file = path.join(peers, 'node_modules', url.pathname.slice(7));
    if (url.pathname === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(page);
      return;
    }
    const inside = (dir) => path.resolve(file).startsWith(dir + path.sep);
    if (!file || !(inside(path.dirname(cardPath)) || inside(pkg) || (cf && inside(path.join(peers, 'node_modules')))) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const variants = ['streaming', 'bytes', 'read', 'read-bytes', ...(cf ? ['cf'] : [])];
    const t = Object.fromEntries(variants.map((v) => [v, []]));
    const once = async (variant) => {
      const context = await browser.newContext();
      const p = await context.newPage();
      await p.goto(`${base}/?variant=${variant}`);
      const r = await p.waitForFunction(() => window.result, null, { timeout: 60000 });
      const v = await r.jsonValue();
      await context.close();
      return v;
    };
    for (const v of variants) await once(v);
    for (let i = 0; i < rounds; i++) for (const v of variants) t[v].push(await once(v));
    const row = { op: 'first read in headless Chromium (fresh context): card_5MB_post.png', rounds, load: os.loadavg().map((x) => x.toFixed(1)).join(' ') };
    for (const v of variants) {
      for (const k of ['import_ms', 'init_ms', 'read_ms', 'total_ms']) row[`${v} ${k}`] = median(t[v].map((x) => x[k]));
    }
    if (cf) {
      // Per round, as in Node: ccv3's whole first read (import, init, read) against the peer's
      // read after its import, and the whole of each.
      row['streaming (import + init + read) / cf read'] = median(t.streaming.map((x, i) => x.total_ms / t.cf[i].read_ms));
      row['streaming total / cf total'] = median(t.streaming.map((x, i) => x.total_ms / t.cf[i].total_ms));
      // After the imports: ccv3's init + read against the peer's read.
      for (const v of ['streaming', 'bytes', 'read', 'read-bytes']) {
        row[`${v} (init + read) / cf read`] = median(t[v].map((x, i) => (x.init_ms + x.read_ms) / t.cf[i].read_ms));
      }
      row['read total / cf total'] = median(t.read.map((x, i) => x.total_ms / t.cf[i].total_ms));
    }
    report(row);
  } finally {
    await browser.close();
    server.close();
  }
}

// ---- 1. readCard ----
const cardFile = path.join(gen, 'card_5MB_post.png');
const cardBytes = fs.readFileSync(cardFile);
const t0 = performance.now();
const require = createRequire(import.meta.url);
const ccv3 = require(path.join(pkg, 'index.cjs'));
const startup = performance.now() - t0;
const t1 = performance.now();
const first = ccv3.readCard(cardBytes);
const firstRead = performance.now() - t1;
const warm = bench(() => ccv3.readCard(cardBytes));
report({ op: 'readCard', impl: 'ccv3 (wasm)', startup_ms: startup, first_ms: firstRead, startup_plus_first_ms: startup + firstRead, ...warm, entries: first.data.character_book.entries.length });
// readCard, then every value of the card touched: JSON.stringify reads each property (the
// entries, which ccv3 parses on first access, included). The same for each peer below.
const touch = (card) => JSON.stringify(card).length;
const cardTextLength = touch(first);
report({ op: 'readCard + JSON.stringify', impl: 'ccv3 (wasm)', ...bench(() => touch(ccv3.readCard(cardBytes))), json_chars: cardTextLength });

if (peers) {
  const preq = createRequire(path.join(peers, 'package.json'));
  const extract = preq('png-chunks-extract');
  const PNGtext = preq('png-chunk-text');
  const st = (buf) => {
    const tc = extract(buf).filter((c) => c.name === 'tEXt').map((c) => PNGtext.decode(c.data));
    for (const kw of ['ccv3', 'chara']) {
      const c = tc.find((x) => x.keyword.toLowerCase() === kw);
      if (c) return JSON.parse(Buffer.from(c.text, 'base64').toString('utf8'));
    }
    throw new Error('no card');
  };
  let a = performance.now();
  const stCard = st(cardBytes);
  report({ op: 'readCard', impl: 'SillyTavern read path', first_ms: performance.now() - a, ...bench(() => st(cardBytes)), entries: stCard.data.character_book.entries.length });
  report({ op: 'readCard + JSON.stringify', impl: 'SillyTavern read path', ...bench(() => touch(st(cardBytes))) });
  const { parseCard } = await import(pathToImport(preq.resolve('@character-foundry/loader')));
  a = performance.now();
  const cf = await parseCard(cardBytes);
  const cfFirst = performance.now() - a;
  // parseCard may be sync or async: time it with await either way.
  const times = [];
  for (let i = 0; i < 2; i++) await parseCard(cardBytes);
  const start = performance.now();
  while (times.length < 10 || (performance.now() - start < 500 && times.length < 200)) {
    const b = performance.now();
    await parseCard(cardBytes);
    times.push(performance.now() - b);
  }
  times.sort((x, y) => x - y);
  report({ op: 'readCard', impl: '@character-foundry/loader', first_ms: cfFirst, n: times.length, median_ms: times[times.length >> 1], min_ms: times[0], entries: (cf.card || cf).data?.character_book?.entries?.length });
  const touched = [];
  const start2 = performance.now();
  while (touched.length < 10 || (performance.now() - start2 < 500 && touched.length < 200)) {
    const b = performance.now();
    { const r = await parseCard(cardBytes); touch(r.card || r); }
    touched.push(performance.now() - b);
  }
  touched.sort((x, y) => x - y);
  report({ op: 'readCard + JSON.stringify', impl: '@character-foundry/loader', n: touched.length, median_ms: touched[touched.length >> 1], min_ms: touched[0] });
}

// Interleaved: one call of each reader per round, so that a busy machine slows them alike; the
// ratio is the median over rounds of (peer time / ccv3 time).
if (peers) {
  const preq = createRequire(path.join(peers, 'package.json'));
  const { parseCard } = await import(pathToImport(preq.resolve('@character-foundry/loader')));
  const impls = {
    ccv3: async () => ccv3.readCard(cardBytes),
    cf: async () => parseCard(cardBytes),
    'ccv3 + JSON.stringify': async () => touch(ccv3.readCard(cardBytes)),
    'cf + JSON.stringify': async () => {
      const r = await parseCard(cardBytes);
      return touch(r.card || r);
    },
  };
  const rounds = Number(args.rounds || 60);
  const t = await interleaved(impls, rounds, 3);
  const ratio = (ours, theirs) => median(t[ours].map((x, i) => t[theirs][i] / x));
  report({
    op: 'readCard interleaved with @character-foundry/loader',
    impl: 'ccv3 (wasm)',
    rounds,
    ccv3_median_ms: median(t.ccv3),
    cf_median_ms: median(t.cf),
    cf_over_ccv3: ratio('ccv3', 'cf'),
    ccv3_stringify_median_ms: median(t['ccv3 + JSON.stringify']),
    cf_stringify_median_ms: median(t['cf + JSON.stringify']),
    cf_over_ccv3_stringify: ratio('ccv3 + JSON.stringify', 'cf + JSON.stringify'),
  });
}

// ---- Read + touch everything, interleaved (issue 29; helper jsread) ----
// readCard then JSON.stringify of the card (every value touched, the entries included), one
// call of each reader per round, on the 8.6 MB card, the same card with a 0.5 MB image and the
// small 0.5 MB card (20 entries; text chunks before and after the image); with
// --baseline DIR (another build of the package, e.g. of the commit before) that build too.
// Medians over rounds of each reader's time and of character-foundry's time / ccv3's.
if (peers) {
  const preq = createRequire(path.join(peers, 'package.json'));
  const { parseCard } = await import(pathToImport(preq.resolve('@character-foundry/loader')));
  const baseline = args.baseline ? require(path.join(path.resolve(args.baseline), 'index.cjs')) : null;
  const rounds = Number(args.rounds || 60);
  const files = ['card_5MB_post.png', 'card_0.5MB_post.png', 'cardsmall_0.5MB_post.png', 'cardsmall_0.5MB_pre.png'];
  for (const file of files) {
    const bytes = fs.readFileSync(path.join(gen, file));
    const impls = {
      ccv3: async () => touch(ccv3.readCard(bytes)),
      ...(baseline ? { baseline: async () => touch(baseline.readCard(bytes)) } : {}),
      cf: async () => {
        const r = await parseCard(bytes);
        return touch(r.card || r);
      },
    };
    const t = await interleaved(impls, rounds, 3);
    const row = { op: 'readCard + JSON.stringify interleaved', impl: 'ccv3 (wasm)', file, rounds };
    for (const k in impls) row[`${k}_median_ms`] = median(t[k]);
    row.cf_over_ccv3 = median(t.ccv3.map((x, i) => t.cf[i] / x));
    if (baseline) row.cf_over_baseline = median(t.baseline.map((x, i) => t.cf[i] / x));
    report(row);
  }
}
// ---- end of issue 29 (jsread) ----

function pathToImport(p) {
  return new URL(`file://${p}`).href;
}

// ---- 2. scanLorebook, 50,000 entries x 100 messages ----
const scanPart = args.only !== 'read';

let compiled;
if (scanPart) {
  const bookFile = path.join(gen, 'lorebook_50000.json');
  const chatRaw = JSON.parse(fs.readFileSync(path.join(gen, 'chat.json'), 'utf8'));
  const chat = (chatRaw.messages || chatRaw).map((m) => ({
    role: m.role || (m.is_user ? 'user' : 'assistant'),
    name: m.name || '',
    content: m.content ?? m.mes ?? '',
  }));
  const options = { scanDepth: 100 };
  const bookBytes = fs.readFileSync(bookFile);
  let a = performance.now();
  compiled = ccv3.compileLorebooks([bookBytes], options);
  const compileMs = performance.now() - a;
  const scan = bench(() => ccv3.scanLorebook({ books: compiled, chat }), { warmup: 1, iters: 10, minMs: 1000 });
  const out = ccv3.scanLorebook({ books: compiled, chat });
  report({ op: 'scanLorebook 50k x 100', impl: 'ccv3 (wasm, compiled books)', compile_ms: compileMs, ...scan, activated: out.activated.length, rejected: out.rejected.length });

  const chatFile = path.join(os.tmpdir(), `ccv3-bench-chat-${process.pid}.json`);
  fs.writeFileSync(chatFile, JSON.stringify(chat));
  try {
    const exe = path.join(repo, 'target', 'release', 'examples', 'native_scan');
    if (!fs.existsSync(exe)) {
      execFileSync('cargo', ['build', '--release', '-q', '-p', 'ccv3-wasm', '--example', 'native_scan'], { cwd: repo, stdio: 'inherit' });
    }
    const native = JSON.parse(execFileSync(exe, [bookFile, chatFile, JSON.stringify(options), '20'], { encoding: 'utf8' }));
    report({ op: 'scanLorebook 50k x 100', impl: 'native (same facade calls)', compile_ms: native.compile_ms, median_ms: native.scan_median_ms, min_ms: native.scan_min_ms });
  } finally {
    fs.rmSync(chatFile, { force: true });
  }
}

// ---- Summary ----
const get = (op, impl) => rows.find((r) => r.op === op && r.impl.startsWith(impl));
const ours = get('readCard', 'ccv3');
const peersRead = rows.filter((r) => r.op === 'readCard' && !r.impl.startsWith('ccv3'));
console.log('\nsummary');
console.log(`  WebAssembly core: ${fs.statSync(path.join(pkg, 'web', 'ccv3_wasm_bg.wasm')).size} bytes`);
console.log(`  readCard warm median ${ours.median_ms.toFixed(1)} ms; start-up + first read ${ours.startup_plus_first_ms.toFixed(1)} ms`);
for (const p of peersRead) {
  console.log(`  ${p.impl}: warm median ${p.median_ms.toFixed(1)} ms, first ${p.first_ms.toFixed(1)} ms -> ccv3 warm ${(p.median_ms / ours.median_ms).toFixed(2)}x faster, cold-with-start-up vs their first ${(p.first_ms / ours.startup_plus_first_ms).toFixed(2)}x`);
}
const inter = rows.find((r) => r.op.startsWith('readCard interleaved'));
if (inter) {
  console.log(`  interleaved x${inter.rounds}: readCard ${inter.ccv3_median_ms.toFixed(1)} ms vs character-foundry ${inter.cf_median_ms.toFixed(1)} ms -> ${inter.cf_over_ccv3.toFixed(2)}x; + JSON.stringify ${inter.ccv3_stringify_median_ms.toFixed(1)} vs ${inter.cf_stringify_median_ms.toFixed(1)} ms -> ${inter.cf_over_ccv3_stringify.toFixed(2)}x`);
}
// issue 29 (jsread): read + touch everything, interleaved
for (const r of rows.filter((x) => x.op === 'readCard + JSON.stringify interleaved')) {
  const base = r.baseline_median_ms === undefined ? '' : `; baseline ${r.baseline_median_ms.toFixed(1)} ms -> ${r.cf_over_baseline.toFixed(2)}x`;
  console.log(`  ${r.file} readCard + JSON.stringify x${r.rounds}: ccv3 ${r.ccv3_median_ms.toFixed(1)} ms vs character-foundry ${r.cf_median_ms.toFixed(1)} ms -> ${r.cf_over_ccv3.toFixed(2)}x${base}`);
}
const oursTouch = get('readCard + JSON.stringify', 'ccv3');
console.log(`  readCard + JSON.stringify warm median ${oursTouch.median_ms.toFixed(1)} ms`);
for (const p of rows.filter((r) => r.op === 'readCard + JSON.stringify' && !r.impl.startsWith('ccv3'))) {
  console.log(`  ${p.impl} + JSON.stringify: warm median ${p.median_ms.toFixed(1)} ms -> ccv3 ${(p.median_ms / oursTouch.median_ms).toFixed(2)}x faster`);
}
const w = get('scanLorebook 50k x 100', 'ccv3');
const n = get('scanLorebook 50k x 100', 'native');
if (w && n) console.log(`  scanLorebook 50k x 100: wasm ${w.median_ms.toFixed(2)} ms vs native ${n.median_ms.toFixed(2)} ms = ${(w.median_ms / n.median_ms).toFixed(2)}x`);
if (compiled) compiled.free();
