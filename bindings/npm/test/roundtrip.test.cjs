'use strict';
// write -> read round trips (issue 11 section 2: writeCard, writeLorebook).
const test = require('node:test');
const assert = require('node:assert/strict');
const ccv3 = require('ccv3');
const { example, code } = require('./helpers.cjs');

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

test('writeCard png, charx, json: each reads back as the same card', () => {
  const card = ccv3.readCard(example('ember.png'));
  for (const format of ['png', 'charx', 'json']) {
    const bytes = ccv3.writeCard(card, { format });
    assert.ok(bytes instanceof Uint8Array, format);
    const back = ccv3.readCard(bytes);
    assert.deepEqual(back.data.character_book, card.data.character_book, format);
    assert.equal(back.data.name, card.data.name, format);
    assert.equal(back.data.first_mes, card.data.first_mes, format);
  }
  assert.deepEqual([...ccv3.writeCard(card, { format: 'png' }).slice(0, 8)], PNG_SIGNATURE);
});

test('writeCard writes decorators back as @@ lines', () => {
  const card = ccv3.readCard(example('ember.json'));
  card.data.character_book.entries[0].decorators = [{ type: 'depth', value: 7 }];
  const json = JSON.parse(Buffer.from(ccv3.writeCard(card, { format: 'json' })).toString('utf8'));
  assert.ok(json.data.character_book.entries[0].content.startsWith('@@depth 7\n'));
  assert.equal(json.data.character_book.entries[0].decorators, undefined);
  const raw = ccv3.readCard(ccv3.writeCard(card, { format: 'json' }), { parseDecorators: false });
  assert.equal(raw.data.character_book.entries[0].content, json.data.character_book.entries[0].content);
});

test('writeCard png with options.image uses that image; PNG carries the V2 chara backfill', () => {
  const card = ccv3.readCard(example('ember.json'));
  const image = ccv3.writeCard(card, { format: 'png' });
  const again = ccv3.writeCard(card, { format: 'png', image });
  assert.equal(ccv3.readCard(again).data.name, 'Ember Vale');
  const text = Buffer.from(again).toString('latin1');
  assert.ok(text.includes('ccv3\0') && text.includes('chara\0'));
  assert.throws(() => ccv3.writeCard(card, { format: 'png', image: new Uint8Array([1, 2, 3]) }), code('bad-input'));
});

test('writeLorebook lorebook_v3 and worldinfo read back', () => {
  const book = ccv3.readLorebook(example('world.json'));
  for (const format of [undefined, 'lorebook_v3', 'worldinfo']) {
    const bytes = ccv3.writeLorebook(book, format ? { format } : undefined);
    const back = ccv3.readLorebook(bytes);
    assert.equal(back.entries.length, book.entries.length, String(format));
    assert.deepEqual(back.entries.map((e) => e.content), book.entries.map((e) => e.content), String(format));
    assert.deepEqual(back.entries.map((e) => e.keys), book.entries.map((e) => e.keys), String(format));
  }
  const wi = JSON.parse(Buffer.from(ccv3.writeLorebook(book, { format: 'worldinfo' })).toString('utf8'));
  assert.equal(typeof wi.entries, 'object');
  assert.ok(!Array.isArray(wi.entries));
  assert.throws(() => ccv3.writeLorebook(book, { format: 'docx' }), code('bad-input'));
});

test('writeCard without a format writes PNG; an unknown format is bad-input', () => {
  const card = ccv3.readCard(example('ember.json'));
  assert.deepEqual([...ccv3.writeCard(card).slice(0, 8)], PNG_SIGNATURE);
  assert.throws(() => ccv3.writeCard(card, { format: 'gif' }), code('bad-input'));
});
