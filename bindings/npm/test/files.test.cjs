'use strict';
// readCardFiles, writeCard's `files` option and the `json-v2` format: what the web page for card
// creators needs to show a card's assets and download it again keeping them (issue 15: "Download
// as PNG (keeping the portrait and assets), CHARX, V3 JSON, V2 JSON").
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const ccv3 = require('ccv3');
const { CORPUS, example, code } = require('./helpers.cjs');

test('writeCard json-v2 writes the V2 backfill', () => {
  const card = ccv3.readCard(example('ember.png'));
  const bytes = ccv3.writeCard(card, { format: 'json-v2' });
  const v2 = JSON.parse(new TextDecoder().decode(bytes));
  assert.equal(v2.spec, 'chara_card_v2');
  assert.equal(ccv3.readCard(bytes).data.first_mes, card.data.first_mes);
  assert.throws(() => ccv3.writeCard(card, { format: 'json-v9' }), code('bad-input'));
});

test('readCardFiles: none for JSON, the CHARX entries for a CHARX; bad input is refused', () => {
  assert.deepEqual(ccv3.readCardFiles(example('ember.json')), []);
  assert.throws(() => ccv3.readCardFiles(example('world.json')), code('read-failed'));
  assert.throws(() => ccv3.readCardFiles('nope'), code('bad-input'));
  const file = path.join(CORPUS, 'charx', 'ca_fixture_baseline_v3_small.charx');
  if (!fs.existsSync(file)) return;
  const bytes = fs.readFileSync(file);
  const files = ccv3.readCardFiles(bytes);
  assert.ok(files.length > 0);
  for (const f of files) {
    assert.equal(typeof f.path, 'string');
    assert.ok(f.bytes instanceof Uint8Array);
  }
  // Written again with its files, the CHARX keeps them; without, it does not.
  const card = ccv3.readCard(bytes);
  const again = ccv3.readCardFiles(ccv3.writeCard(card, { format: 'charx', files }));
  for (const f of files) assert.ok(again.some((g) => Buffer.compare(g.bytes, f.bytes) === 0), f.path);
  const bare = ccv3.readCardFiles(ccv3.writeCard(card, { format: 'charx' }));
  assert.ok(files.every((f) => !bare.some((g) => Buffer.compare(g.bytes, f.bytes) === 0)));
  assert.throws(() => ccv3.writeCard(card, { format: 'charx', files: [{ path: 1 }] }), code('bad-input'));
});

test('writeCard charx with image: the PNG a card came in is its portrait', () => {
  const png = example('ember.png');
  const card = ccv3.readCard(png);
  const charx = ccv3.writeCard(card, { format: 'charx', image: png });
  const files = ccv3.readCardFiles(charx);
  assert.ok(files.some((f) => f.path.endsWith('.png') && f.bytes[0] === 0x89), JSON.stringify(files.map((f) => f.path)));
  assert.match(ccv3.readCard(charx).data.assets[0].uri, /^embeded:\/\//);
});

test('scanLorebook rejected: false leaves the rejected list empty, compiled or not', () => {
  const world = example('world.json');
  const chat = [{ role: 'user', name: 'User', content: 'The mainland and Harrowport.' }];
  const full = ccv3.scanLorebook({ books: [world], chat });
  assert.ok(full.rejected.length > 0);
  const lean = ccv3.scanLorebook({ books: [world], chat, rejected: false });
  assert.deepEqual(lean.activated, full.activated);
  assert.deepEqual(lean.rejected, []);
  const compiled = ccv3.compileLorebooks([world]);
  assert.deepEqual(ccv3.scanLorebook({ books: compiled, chat, rejected: false }).rejected, []);
  assert.deepEqual(ccv3.scanLorebook({ books: compiled, chat }).rejected, full.rejected);
  compiled.free();
});
