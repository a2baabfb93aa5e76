'use strict';
// Hostile inputs: every failure is an Error with a stable code, and the instance keeps working.
const test = require('node:test');
const assert = require('node:assert/strict');
const ccv3 = require('ccv3');
const { example, code } = require('./helpers.cjs');

function isCcv3Error(e) {
  return e instanceof Error && typeof e.code === 'string' && e.code !== 'internal' && e.message.length > 0;
}

function stillWorks() {
  assert.equal(ccv3.readCard(example('ember.json')).data.name, 'Ember Vale');
}

test('truncated PNG, random bytes, empty input', () => {
  const png = example('ember.png');
  for (const cut of [0, 1, 8, 20, 33, 100, png.length >> 1, png.length - 1]) {
    try {
      ccv3.readCard(png.subarray(0, cut));
    } catch (e) {
      assert.ok(isCcv3Error(e), `cut ${cut}: ${e}`);
    }
  }
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) & 0xff;
  for (let n = 0; n < 200; n++) {
    const bytes = Uint8Array.from({ length: (n * 37) % 700 }, rand);
    if (n % 3 === 0) bytes.set(png.subarray(0, Math.min(8, bytes.length)));
    if (n % 3 === 1) bytes.set(Buffer.from('PK\x03\x04').subarray(0, Math.min(4, bytes.length)));
    for (const f of [ccv3.readCard, ccv3.readLorebook, ccv3.validateCard, ccv3.validateLorebook]) {
      try {
        f(bytes);
      } catch (e) {
        assert.ok(isCcv3Error(e), `${f.name}: ${e}`);
      }
    }
  }
  assert.throws(() => ccv3.readCard(new Uint8Array(0)), code('read-failed'));
  stillWorks();
});

test('deep JSON and huge numbers', () => {
  const deep = '['.repeat(100000) + ']'.repeat(100000);
  assert.throws(() => ccv3.readCard(Buffer.from(deep)), isCcv3Error);
  assert.throws(() => ccv3.readLorebook(Buffer.from(`{"entries":${deep}}`)), isCcv3Error);
  let nested = {};
  for (let i = 0; i < 5000; i++) nested = { a: nested };
  assert.throws(() => ccv3.validateCard({ spec: 'chara_card_v3', data: { name: 'x', extensions: nested } }), isCcv3Error);
  const huge = Buffer.from('{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"x","creation_date":1e999,"character_book":{"entries":[{"keys":["a"],"content":"c","insertion_order":1e308,"enabled":true}]}}}');
  try {
    ccv3.readCard(huge);
  } catch (e) {
    assert.ok(isCcv3Error(e), String(e));
  }
  try {
    ccv3.scanLorebook({ books: [{ entries: [] }], chat: [], seed: 1e300, scanDepth: Number.MAX_VALUE });
  } catch (e) {
    assert.ok(isCcv3Error(e), String(e));
  }
  assert.throws(() => ccv3.scanLorebook({ books: [{ entries: [] }], chat: [], seed: -1 }), isCcv3Error);
  stillWorks();
});

test('wrong types for every argument', () => {
  const values = [undefined, null, 0, 1.5, NaN, 'text', true, [], {}, [1, 2], new Uint8Array(3), () => 1, Symbol('s'), 10n];
  const calls = [
    (v) => ccv3.readCard(v),
    (v) => ccv3.readCard(example('ember.json'), v),
    (v) => ccv3.readCard(example('ember.json'), { parseDecorators: v }),
    (v) => ccv3.readLorebook(v),
    (v) => ccv3.parseDecorators(v),
    (v) => ccv3.serializeDecorators(v, 'x'),
    (v) => ccv3.serializeDecorators([v], 'x'),
    (v) => ccv3.serializeDecorators([], v),
    (v) => ccv3.writeCard(v, { format: 'json' }),
    (v) => ccv3.writeCard(ccv3.readCard(example('ember.json')), v),
    (v) => ccv3.writeCard(ccv3.readCard(example('ember.json')), { format: v }),
    (v) => ccv3.writeCard(ccv3.readCard(example('ember.json')), { format: 'png', image: v }),
    (v) => ccv3.writeCard({ spec: 'chara_card_v3', data: v }, { format: 'json' }),
    (v) => ccv3.writeLorebook(v),
    (v) => ccv3.writeLorebook({ entries: v }),
    (v) => ccv3.writeLorebook({ entries: [] }, v),
    (v) => ccv3.validateCard(v),
    (v) => ccv3.validateLorebook(v),
    (v) => ccv3.scanLorebook(v),
    (v) => ccv3.scanLorebook({ books: v, chat: [] }),
    (v) => ccv3.scanLorebook({ books: [], chat: v }),
    (v) => ccv3.scanLorebook({ books: [], chat: [v] }),
    (v) => ccv3.scanLorebook({ books: [], chat: [], state: v }),
    (v) => ccv3.scanLorebook({ books: [], chat: [], seed: v }),
    (v) => ccv3.scanLorebook({ books: [], chat: [], scanDepth: v }),
    (v) => ccv3.buildPrompt(v),
    (v) => ccv3.buildPrompt({ card: v, chat: [] }),
    (v) => ccv3.buildPrompt({ card: ccv3.readCard(example('ember.json')), chat: v }),
    (v) => ccv3.buildPrompt({ card: ccv3.readCard(example('ember.json')), chat: [], maxContext: v }),
    (v) => ccv3.buildPrompt({ card: ccv3.readCard(example('ember.json')), chat: [], instruct: v }),
    (v) => ccv3.buildPrompt({ card: ccv3.readCard(example('ember.json')), chat: [], user: v }),
    (v) => ccv3.expandMacros(v),
    (v) => ccv3.expandMacros('{{user}}', v),
    (v) => ccv3.expandMacros('{{user}}', { user: v, now: v }),
    (v) => ccv3.countTokens(v),
    (v) => ccv3.countTokens('x', v),
    (v) => ccv3.compileLorebooks(v),
  ];
  calls.forEach((call, i) => {
    for (const v of values) {
      try {
        call(v);
      } catch (e) {
        assert.ok(isCcv3Error(e), `call ${i} with ${typeof v}: ${e && e.stack}`);
      }
    }
  });
  stillWorks();
});

test('chats of the wrong shape are clear errors', () => {
  assert.throws(() => ccv3.scanLorebook({ books: [], chat: 'hello' }), isCcv3Error);
  assert.throws(() => ccv3.scanLorebook({ books: [], chat: [{ role: 'user' }] }), isCcv3Error);
  assert.throws(() => ccv3.scanLorebook({ books: [], chat: { foo: [] } }), isCcv3Error);
});

test('cyclic values and BigInt are bad-input', () => {
  const cyclic = { entries: [] };
  cyclic.self = cyclic;
  assert.throws(() => ccv3.writeLorebook(cyclic), code('bad-input'));
  assert.throws(() => ccv3.validateCard({ spec: 'chara_card_v3', data: { n: 1n } }), code('bad-input'));
});
