'use strict';
// readCard hands out a card whose book entries are parsed on first access (issue 11 section 5,
// the Node readCard speed target). The hard rule of that change: the returned object behaves as
// the plain JSON object would, for JSON.stringify, structuredClone, deep equality, Object.keys,
// spread and for...in, touched or not. The plain object here is the WebAssembly core's
// read_card (the whole card as one JSON text, what readCard returned before).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const ccv3 = require('ccv3');
const { corpusRows, example, code } = require('./helpers.cjs');

const raw = require(path.join(path.dirname(require.resolve('ccv3')), 'node', 'ccv3_wasm.js'));
const plain = (bytes, parse = true) => JSON.parse(raw.read_card(bytes, parse));
// A book over 64 KiB of entries is read by the core on first access (the later path); a small
// one that needs the core (ember.png: decorator lines to split off) arrives as JSON text (one
// that does not goes the later path too: touch.test.cjs). Each test below runs on both.
function bigPng() {
  const entries = Array.from({ length: 600 }, (_, i) => ({
    keys: [`k${i}`],
    content: i % 3 === 0 ? `@@depth ${i % 7}\nEntry ${i} \u00e9.` : `Entry ${i} \u00e9.`,
    extensions: { position: i % 3 },
    enabled: i % 2 === 0,
    insertion_order: i,
    zz_extra: 'x'.repeat(i % 40),
  }));
  const card = { spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'Big', character_book: { name: 'B', entries, after: 1 }, tags: ['t'] } };
  return ccv3.writeCard(card, { format: 'png' });
}
const big = bigPng();

function inputs() {
  const list = ['ember.png', 'ember.json', 'ember.charx'].map((n) => [n, example(n)]);
  list.push(['big.png', big]);
  for (const row of corpusRows() || []) {
    if (row.kind !== 'lorebook' && !/MALFORMED\/negative/.test(row.notes)) list.push([row.file, fs.readFileSync(row.path)]);
  }
  return list;
}

test('readCard equals the plain card for every example and corpus card, both parseDecorators', () => {
  for (const [name, bytes] of inputs()) {
    for (const parse of [true, false]) {
      assert.deepStrictEqual(ccv3.readCard(bytes, { parseDecorators: parse }), plain(bytes, parse), name);
      assert.deepStrictEqual(plain(bytes, parse), ccv3.readCard(bytes, { parseDecorators: parse }), name);
    }
  }
});

test('an untouched card: JSON.stringify gives the plain card text', () => {
  for (const [name, bytes] of inputs()) {
    assert.equal(JSON.stringify(ccv3.readCard(bytes)), raw.read_card(bytes, true), name);
  }
});

for (const [label, png] of [['ember.png', example('ember.png')], ['big.png', big]]) {
  test(`${label}: an untouched card: structuredClone sees the whole card`, () => {
    const clone = structuredClone(ccv3.readCard(png));
    assert.deepStrictEqual(clone, plain(png));
    const d = Object.getOwnPropertyDescriptor(clone.data.character_book, 'entries');
    assert.ok(Array.isArray(d.value) && d.value.length > 0);
  });

  test(`${label}: an untouched card: Object.keys, for...in, spread and Object.entries see every key in order`, () => {
    const want = plain(png).data.character_book;
    const keys = (o) => {
      const out = [];
      for (const k in o) out.push(k);
      return out;
    };
    assert.deepStrictEqual(Object.keys(ccv3.readCard(png).data.character_book), Object.keys(want));
    assert.deepStrictEqual(keys(ccv3.readCard(png).data.character_book), keys(want));
    assert.deepStrictEqual({ ...ccv3.readCard(png).data.character_book }, { ...want });
    assert.deepStrictEqual(Object.assign({}, ccv3.readCard(png).data.character_book), want);
    assert.deepStrictEqual(Object.entries(ccv3.readCard(png).data.character_book), Object.entries(want));
    assert.ok(Object.keys(want).includes('entries'));
  });

  test(`${label}: util.inspect (console.log) shows the entries, not an accessor`, () => {
    const book = ccv3.readCard(png).data.character_book;
    const shown = require('util').inspect(book, { depth: 1 });
    assert.ok(!shown.includes('Getter'), shown.slice(0, 200));
    assert.deepStrictEqual(Object.getOwnPropertySymbols(book), []);
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(book, 'entries').value, plain(png).data.character_book.entries);
  });

  test(`${label}: first access replaces the accessor with a plain, writable data property`, () => {
    const book = ccv3.readCard(png).data.character_book;
    const entries = book.entries;
    assert.equal(book.entries, entries, 'the same array on every access');
    const d = Object.getOwnPropertyDescriptor(book, 'entries');
    assert.deepStrictEqual(d, { value: entries, writable: true, enumerable: true, configurable: true });
    entries.push({ keys: ['x'] });
    assert.equal(book.entries.length, plain(png).data.character_book.entries.length + 1);
  });

  test(`${label}: assigning or deleting entries before access behaves as on a plain object`, () => {
    const card = ccv3.readCard(png);
    card.data.character_book.entries = [];
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(card.data.character_book, 'entries').value, []);
    assert.equal(JSON.stringify(card.data.character_book.entries), '[]');
    const other = ccv3.readCard(png);
    assert.equal(delete other.data.character_book.entries, true);
    assert.equal('entries' in other.data.character_book, false);
    const want = plain(png);
    delete want.data.character_book.entries;
    assert.deepStrictEqual(other, want);
  });

  test(`${label}: a frozen or sealed book still gives its entries`, () => {
    const frozen = ccv3.readCard(png);
    Object.freeze(frozen.data.character_book);
    assert.deepStrictEqual(frozen.data.character_book.entries, plain(png).data.character_book.entries);
    assert.throws(() => {
      frozen.data.character_book.entries = [];
    }, TypeError);
    assert.deepStrictEqual(frozen, plain(png));
    const sealed = ccv3.readCard(png);
    Object.seal(sealed.data.character_book);
    sealed.data.character_book.entries = [1];
    assert.deepStrictEqual(sealed.data.character_book.entries, [1]);
  });

  test(`${label}: bytes in any view are read in place: Buffer, a view into a bigger buffer, ArrayBuffer, DataView`, () => {
    const want = plain(png);
    const big = new Uint8Array(png.length + 100);
    big.set(png, 37);
    assert.deepStrictEqual(ccv3.readCard(big.subarray(37, 37 + png.length)), want);
    assert.deepStrictEqual(ccv3.readCard(new Uint8Array(png).buffer), want);
    assert.deepStrictEqual(ccv3.readCard(new DataView(big.buffer, 37, png.length)), want);
    assert.deepStrictEqual(ccv3.readCard(Buffer.from(png)), want);
  });

  test(`${label}: errors keep their codes: truncated, corrupt and empty input, bad arguments (issue 12)`, () => {
    for (const cut of [0, 8, 20, 33, 100, png.length >> 1, png.length - 13, png.length - 1]) {
      let got;
      try {
        got = ccv3.readCard(png.subarray(0, cut));
      } catch (e) {
        assert.ok(code('read-failed')(e) || code('limit')(e), `cut ${cut}: ${e.code} ${e.message}`);
        continue;
      }
      // The card chunk came before the cut: the card read is the same card.
      assert.equal(got.data.name, plain(png).data.name, `cut ${cut}`);
    }
    const flipped = Buffer.from(png);
    for (let i = 8; i < flipped.length; i += 97) flipped[i] ^= 0x5a;
    assert.throws(() => ccv3.readCard(flipped), (e) => code('read-failed')(e) || code('limit')(e));
    assert.throws(() => ccv3.readCard('not bytes'), code('bad-input'));
    assert.throws(() => ccv3.readCard(png, { parseDecorators: 1 }), code('bad-input'));
    // The instance is still usable afterwards.
    assert.deepStrictEqual(ccv3.readCard(png), plain(png));
  });
}

test('a big book comes as card text read on first access, a small one as entries text', () => {
  const [, bigEntries, bigLater] = raw.read_card_parts(big, true);
  assert.equal(bigEntries, undefined);
  assert.ok(bigLater instanceof Uint8Array && bigLater.length > 64 * 1024);
  const [, smallEntries, smallLater] = raw.read_card_parts(example('ember.png'), true);
  assert.ok(smallEntries instanceof Uint8Array);
  assert.equal(smallLater, undefined);
  // The card text handed out is a copy: changing the input afterwards changes nothing.
  const bytes = Buffer.from(big);
  const card = ccv3.readCard(bytes);
  bytes.fill(0);
  assert.deepStrictEqual(card, plain(big));
});

test('a card without a book has no entries accessor', () => {
  const bytes = ccv3.writeCard({ spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'A' } }, { format: 'png' });
  const card = ccv3.readCard(bytes);
  assert.deepStrictEqual(card, plain(bytes));
  assert.equal(card.data.character_book, undefined);
});
