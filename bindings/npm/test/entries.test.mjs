// The package's entry points: import, require, and the web entry (initReadCoreSync, then initSync / init with bytes).
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import * as ccv3 from 'ccv3';
import * as web from 'ccv3/web';

const require = createRequire(import.meta.url);
const helpers = require('./helpers.cjs');
const NAMES = ['readCard', 'readLorebook', 'parseDecorators', 'serializeDecorators', 'writeCard', 'writeLorebook',
  'validateCard', 'validateLorebook', 'scanLorebook', 'buildPrompt', 'expandMacros', 'countTokens'];

test('import and require give the same ready functions', () => {
  const cjs = require('ccv3');
  for (const name of NAMES) {
    assert.equal(typeof ccv3[name], 'function', name);
    assert.equal(ccv3[name], cjs[name], name);
  }
  const pkg = JSON.parse(readFileSync(new URL(import.meta.resolve('ccv3/package.json')), 'utf8'));
  assert.equal(ccv3.version, pkg.version);
  assert.equal(cjs.version, pkg.version);
  assert.equal(ccv3.readCard(helpers.example('ember.json')).data.name, 'Ember Vale');
});

test('web entry: not usable before init, then the same results as Node', async () => {
  assert.throws(() => web.readCard(helpers.example('ember.json')), (e) => e.code === 'not-initialized');
  // The read core alone (issue 29: a page that only reads cards): the reads work, every other call
  // asks for init().
  const readCore = readFileSync(new URL('ccv3_read_bg.wasm', import.meta.resolve('ccv3/web')));
  web.initReadCoreSync(readCore);
  await web.initReadCore(readCore); // a second call is a no-op
  const early = helpers.example('ember.png');
  assert.deepEqual(web.readCard(early), ccv3.readCard(early));
  assert.deepEqual(web.readCardSummary(early), ccv3.readCardSummary(early));
  assert.throws(() => web.validateCard(early), (e) => e.code === 'not-initialized' && /await init\(\)/.test(e.message));
  const wasmUrl = new URL('ccv3_wasm_bg.wasm', import.meta.resolve('ccv3/web'));
  const bytes = readFileSync(wasmUrl);
  web.initSync(bytes);
  await web.default(bytes); // a second init is a no-op
  for (const name of NAMES) assert.equal(typeof web[name], 'function', name);
  assert.equal(web.version, ccv3.version);
  const card = helpers.example('ember.png');
  assert.deepEqual(web.readCard(card), ccv3.readCard(card));
  assert.throws(() => web.countTokens('hello'), (e) => e.code === 'tokenizer-unavailable');
  const vocab = readFileSync(new URL('../vocab/o200k_base.vocab', import.meta.resolve('ccv3/web')));
  await web.loadTokenizer('o200k', vocab);
  assert.equal(web.countTokens('hello world'), 2);
  assert.throws(() => web.readCard('x'), (e) => e.code === 'bad-input');
});
