'use strict';
// Every corpus file (../shared/corpus, see MANIFEST.tsv) and the repository's examples/.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const ccv3 = require('ccv3');
const { corpusRows, example, code } = require('./helpers.cjs');

const rows = corpusRows();

test('corpus: every card reads as V3 and validates; every lorebook reads', { skip: rows ? false : 'no ../shared/corpus beside the repository' }, () => {
  let cards = 0;
  let books = 0;
  for (const row of rows) {
    const bytes = fs.readFileSync(row.path);
    if (row.kind === 'lorebook') {
      const book = ccv3.readLorebook(bytes);
      assert.ok(Array.isArray(book.entries), row.file);
      for (const e of book.entries) assert.ok(Array.isArray(e.decorators), row.file);
      assert.ok(Array.isArray(ccv3.validateLorebook(bytes)), row.file);
      books++;
    } else if (/MALFORMED\/negative/.test(row.notes)) {
      assert.throws(() => ccv3.readCard(bytes), code('read-failed'), row.file);
    } else {
      const card = ccv3.readCard(bytes);
      assert.equal(card.spec, 'chara_card_v3', row.file);
      assert.equal(typeof card.data.name, 'string', row.file);
      const diags = ccv3.validateCard(bytes);
      for (const d of diags) {
        assert.ok(['error', 'warning', 'info'].includes(d.severity), row.file);
        assert.equal(typeof d.code, 'string');
        assert.equal(typeof d.path, 'string');
      }
      cards++;
    }
  }
  assert.ok(cards >= 30 && books >= 8, `${cards} cards, ${books} books`);
});

test('corpus: parseDecorators false keeps the raw content and no decorators field', { skip: rows ? false : 'no corpus' }, () => {
  const row = rows.find((r) => r.file.includes('akerodia'));
  const raw = ccv3.readCard(fs.readFileSync(row.path), { parseDecorators: false });
  const parsed = ccv3.readCard(fs.readFileSync(row.path));
  const rawEntries = raw.data.character_book.entries;
  const entries = parsed.data.character_book.entries;
  assert.ok(rawEntries.some((e) => e.content.startsWith('@@')), 'the card has decorator lines');
  for (let i = 0; i < entries.length; i++) {
    assert.equal(rawEntries[i].decorators, undefined);
    assert.equal(ccv3.serializeDecorators(entries[i].decorators, entries[i].content), rawEntries[i].content);
  }
});

test('examples: ember in JSON, PNG and CHARX read the same card', () => {
  const json = ccv3.readCard(example('ember.json'));
  const png = ccv3.readCard(example('ember.png'));
  const charx = ccv3.readCard(example('ember.charx'));
  assert.equal(json.data.name, 'Ember Vale');
  assert.deepEqual(png.data.character_book, json.data.character_book);
  assert.deepEqual(charx.data.character_book, json.data.character_book);
  const world = ccv3.readLorebook(example('world.json'));
  assert.ok(world.entries.length > 0);
  assert.deepEqual(ccv3.validateCard(json), ccv3.validateCard(example('ember.json')));
});

test('a card\'s bytes given to readLorebook mean its character book', () => {
  const card = ccv3.readCard(example('ember.png'));
  const book = ccv3.readLorebook(example('ember.png'));
  assert.deepEqual(book.entries, card.data.character_book.entries);
});
