// The browser entry `ccv3/web` in a real browser (issue 11 section 2: "In browsers,
// `import init, {readCard} from 'ccv3/web'`, `await init()`"). A local HTTP server serves the built
// npm package and the repository's examples; headless Chromium (Debian's, driven by playwright-core)
// loads a page that imports the package as a browser app would and runs the functions; the results
// come back here and are checked. Run by scripts/test-web (CCV3_NPM = the built package folder).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = process.env.CCV3_REPO || path.resolve(here, '..', '..', '..');
const PKG = process.env.CCV3_NPM || path.join(REPO, 'target', 'bindings', 'npm');
const BROWSER = process.env.CCV3_CHROMIUM || '/usr/bin/chromium';

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.json': 'application/json' };

// The page: what a browser app writes. Results are collected into window.__results.
const PAGE = `<!doctype html><meta charset="utf-8"><title>ccv3/web</title>
<script type="module">
import init, * as ccv3 from '/pkg/web/index.js';
const out = {};
const bytes = async (p) => new Uint8Array(await (await fetch(p)).arrayBuffer());
try {
  try { ccv3.readCard(new Uint8Array([1])); out.beforeInit = 'no error'; }
  catch (e) { out.beforeInit = e.code; }
  await init();
  await init(); // a second call is harmless
  out.version = ccv3.version;
  const png = await bytes('/examples/ember.png');
  const card = ccv3.readCard(png);
  out.spec = card.spec;
  out.name = card.data.name;
  out.entries = card.data.character_book ? card.data.character_book.entries.length : 0;
  out.decoratorsParsed = card.data.character_book
    ? card.data.character_book.entries.every((e) => Array.isArray(e.decorators)) : null;
  const charx = ccv3.writeCard(card, { format: 'charx' });
  out.charxName = ccv3.readCard(charx).data.name;
  const written = ccv3.writeCard(card, { format: 'png' });
  out.pngMagic = Array.from(written.slice(1, 4)).map((c) => String.fromCharCode(c)).join('');
  out.pngName = ccv3.readCard(written).data.name;
  try { ccv3.readCard(new TextEncoder().encode('{"spec": 5')); out.badCode = 'no error'; }
  catch (e) { out.badCode = e.code; out.badIsError = e instanceof Error; out.badMessage = e.message; }
  const text = '@@depth 4\\n@@@role system\\n@@weird thing\\nbody';
  const parsed = ccv3.parseDecorators(text);
  out.decorators = parsed;
  out.roundTrip = JSON.stringify(ccv3.parseDecorators(ccv3.serializeDecorators(parsed.decorators, parsed.content))) === JSON.stringify(parsed);
  const world = await bytes('/examples/world.json');
  const chat = await (await fetch('/examples/chat.json')).json();
  try { ccv3.scanLorebook({ books: [world], chat }); out.scanBeforeLoad = 'scanned'; }
  catch (e) { out.scanBeforeLoad = e.code; out.scanBeforeLoadMessage = e.message; }
  try { ccv3.countTokens('hello world'); out.tokensBeforeLoad = 'counted'; }
  catch (e) { out.tokensBeforeLoad = e.code; }
  await ccv3.loadTokenizer('o200k');
  const scan = ccv3.scanLorebook({ books: [world], chat });
  out.scanKeys = Object.keys(scan).sort();
  out.activated = scan.activated.length;
  const turn2 = ccv3.scanLorebook({ books: [world], chat, state: scan.state });
  out.turn2 = Array.isArray(turn2.activated);
  out.validate = ccv3.validateCard(png).every((d) => ['error', 'warning', 'info'].includes(d.severity));
  out.macros = ccv3.expandMacros('{{char}} and {{user}}', { card, user: 'Sam' });
  out.tokens = ccv3.countTokens('hello world');
  const prompt = ccv3.buildPrompt({ card, chat, user: 'Sam', maxContext: 2000 });
  out.promptKeys = Object.keys(prompt).sort();
  out.messages = prompt.messages.length;
  out.promptTokens = prompt.tokens;
  out.lorebookName = ccv3.readLorebook(world).entries.length;
} catch (e) {
  out.thrown = String(e && e.stack || e);
}
window.__results = out;
</script>`;

// A page that only reads cards loads the read core alone (issue 29: initReadCore), and the full
// core when it needs more.
const READ_PAGE = `<!doctype html><meta charset="utf-8"><title>ccv3/web, read core</title>
<script type="module">
import init, * as ccv3 from '/pkg/web/index.js';
const out = {};
const wasmFetched = () => performance.getEntriesByType('resource').map((r) => new URL(r.name).pathname).filter((p) => p.endsWith('.wasm'));
try {
  await ccv3.initReadCore();
  await ccv3.initReadCore(); // a second call is harmless
  const png = new Uint8Array(await (await fetch('/examples/ember.png')).arrayBuffer());
  const card = ccv3.readCard(png);
  out.name = card.data.name;
  out.entries = card.data.character_book.entries.length;
  out.summaryName = ccv3.readCardSummary(png).name;
  out.wasmBeforeInit = wasmFetched();
  try { ccv3.validateCard(png); out.validateBeforeInit = 'validated'; }
  catch (e) { out.validateBeforeInit = e.code; out.validateBeforeInitMessage = e.message; }
  await init();
  out.validateAfterInit = Array.isArray(ccv3.validateCard(png));
  out.nameAfterInit = ccv3.readCard(png).data.name;
  out.wasmAfterInit = wasmFetched();
} catch (e) {
  out.thrown = String(e && e.stack || e);
}
window.__results = out;
</script>`;

let server;
let base;
let browser;

function serve(req, res) {
  const url = new URL(req.url, 'http://localhost');
  let file = null;
  if (url.pathname === '/' || url.pathname === '/read') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(url.pathname === '/' ? PAGE : READ_PAGE);
    return;
  }
  if (url.pathname.startsWith('/pkg/')) file = path.join(PKG, url.pathname.slice(5));
  else if (url.pathname.startsWith('/examples/')) file = path.join(REPO, 'examples', url.pathname.slice(10));
  const roots = [PKG, path.join(REPO, 'examples')];
  if (!file || !roots.some((r) => path.resolve(file).startsWith(r + path.sep)) || !fs.existsSync(file)) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
}

let results;

before(async () => {
  assert.ok(fs.existsSync(path.join(PKG, 'web', 'index.js')), `no built package at ${PKG}: run scripts/build-bindings`);
  server = http.createServer(serve);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: BROWSER,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}/`);
  await page.waitForFunction(() => window.__results !== undefined, null, { timeout: 60_000 });
  results = await page.evaluate(() => window.__results);
  assert.deepEqual(errors, [], 'the page raised errors');
  assert.equal(results.thrown, undefined, results.thrown);
});

after(async () => {
  if (browser) await browser.close();
  if (server) await new Promise((resolve) => server.close(resolve));
});

test('functions before init() throw code not-initialized', () => {
  assert.equal(results.beforeInit, 'not-initialized');
});

test('init() then readCard of a PNG card gives the V3 object', () => {
  assert.match(results.version, /^\d+\.\d+\.\d+/);
  assert.equal(results.spec, 'chara_card_v3');
  assert.equal(results.name, 'Ember Vale');
  assert.ok(results.entries > 0);
  assert.equal(results.decoratorsParsed, true);
});

test('writeCard to CHARX and PNG reads back in the browser', () => {
  assert.equal(results.charxName, 'Ember Vale');
  assert.equal(results.pngMagic, 'PNG');
  assert.equal(results.pngName, 'Ember Vale');
});

test('bad input throws an Error with a stable code', () => {
  assert.equal(results.badIsError, true);
  assert.equal(typeof results.badCode, 'string');
  assert.ok(['bad-input', 'read-failed'].includes(results.badCode), results.badCode);
  assert.ok(results.badMessage.length > 0);
});

test('decorators parse with fallbacks and unknown ones, and round-trip (SPEC_V3.md decorators)', () => {
  const d = results.decorators;
  assert.equal(d.content, 'body');
  assert.deepEqual(d.decorators[0], { type: 'depth', value: 4, fallbacks: [{ type: 'role', value: 'system' }] });
  assert.deepEqual(d.decorators[1], { type: 'unknown', name: 'weird', value: 'thing' });
  assert.equal(results.roundTrip, true);
});

test('before loadTokenizer, counting functions throw tokenizer-unavailable naming loadTokenizer', () => {
  assert.equal(results.scanBeforeLoad, 'tokenizer-unavailable');
  assert.match(results.scanBeforeLoadMessage, /loadTokenizer\('o200k'\)/);
  assert.equal(results.tokensBeforeLoad, 'tokenizer-unavailable');
});

test('scanLorebook runs and hands back state for the next turn', () => {
  assert.deepEqual(results.scanKeys, ['activated', 'rejected', 'state', 'tokens']);
  assert.ok(results.activated > 0);
  assert.equal(results.turn2, true);
  assert.equal(results.validate, true);
  assert.equal(results.lorebookName > 0, true);
});

test('macros expand; vocabularies load on demand, then tokens and prompts count', () => {
  assert.equal(results.macros, 'Ember and Sam'); // the card's nickname stands for {{char}} (SPEC_V3.md nickname)
  assert.equal(results.tokens, 2);
  assert.deepEqual(results.promptKeys, ['cut', 'lore', 'messages', 'state', 'tokens']);
  assert.ok(results.messages > 0);
  assert.ok(results.promptTokens > 0);
});

test('initReadCore: a page that only reads loads the read core alone, init() adds the rest (issue 29)', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}/read`);
  await page.waitForFunction(() => window.__results !== undefined, null, { timeout: 60_000 });
  const r = await page.evaluate(() => window.__results);
  await page.close();
  assert.deepEqual(errors, []);
  assert.equal(r.thrown, undefined, r.thrown);
  assert.equal(r.name, 'Ember Vale');
  assert.ok(r.entries > 0);
  assert.equal(r.summaryName, 'Ember Vale');
  assert.deepEqual(r.wasmBeforeInit, ['/pkg/web/ccv3_read_bg.wasm']);
  assert.equal(r.validateBeforeInit, 'not-initialized');
  assert.match(r.validateBeforeInitMessage, /await init\(\)/);
  assert.equal(r.validateAfterInit, true);
  assert.equal(r.nameAfterInit, 'Ember Vale');
  assert.deepEqual(r.wasmAfterInit, ['/pkg/web/ccv3_read_bg.wasm', '/pkg/web/ccv3_wasm_bg.wasm']);
});
