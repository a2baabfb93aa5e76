'use strict';
// readCardSummary (issue 29, "Library list"): what a character list shows of a card, the
// values readCard gives, for every container and every card of the corpus.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const ccv3 = require('ccv3');
const { CORPUS, example, code } = require('./helpers.cjs');

// The summary readCard's card gives (the same rules as the Rust CardSummary::from_card).
function expected(card, container) {
  const d = card.data;
  return {
    name: d.name,
    nickname: d.nickname === undefined ? null : d.nickname,
    creator: d.creator,
    tags: d.tags,
    spec_version: card.spec_version,
    container,
    greetings: (d.first_mes ? 1 : 0) + d.alternate_greetings.length,
    entries: d.character_book ? d.character_book.entries.length : 0,
    assets: d.assets ? d.assets.length : 0,
  };
}

test('readCardSummary gives the listed fields, as readCard has them', () => {
  for (const [name, container] of [['ember.json', 'JSON'], ['ember.png', 'PNG'], ['ember.charx', 'CHARX']]) {
    const bytes = example(name);
    const s = ccv3.readCardSummary(bytes);
    assert.deepEqual(Object.keys(s), [
      'name', 'nickname', 'creator', 'tags', 'spec', 'spec_version', 'container', 'greetings', 'entries', 'assets',
    ]);
    assert.equal(s.spec, 'V3');
    const { spec, ...rest } = s;
    assert.deepEqual(rest, expected(ccv3.readCard(bytes), container), name);
  }
});

test('readCardSummary agrees with readCard on every corpus card, or fails like it', () => {
  if (!fs.existsSync(CORPUS)) return;
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && e.name !== 'MANIFEST.tsv') files.push(p);
    }
  };
  walk(CORPUS);
  let cards = 0;
  for (const file of files) {
    const bytes = fs.readFileSync(file);
    let card;
    try {
      card = ccv3.readCard(bytes);
    } catch (_) {
      assert.throws(() => ccv3.readCardSummary(bytes), file);
      continue;
    }
    const s = ccv3.readCardSummary(bytes);
    assert.equal(s.name, card.data.name, file);
    assert.deepEqual(s.tags, card.data.tags, file);
    assert.equal(s.creator, card.data.creator, file);
    assert.equal(s.greetings, (card.data.first_mes ? 1 : 0) + card.data.alternate_greetings.length, file);
    assert.equal(s.entries, card.data.character_book ? card.data.character_book.entries.length : 0, file);
    cards++;
  }
  assert.ok(cards > 0);
});

test('readCardSummary refuses a lorebook and what is not bytes', () => {
  assert.throws(() => ccv3.readCardSummary(example('world.json')), /lorebook/);
  assert.throws(() => ccv3.readCardSummary('nope'), code('bad-input'));
  assert.throws(() => ccv3.readCardSummary(example('ember.json'), 5), code('bad-input'));
});

// Issue 29: "the token count of the permanent fields if asked": `{ tokens: encoding }` adds
// `permanent_tokens` (last), the name, description, personality, scenario and character's note
// (`extensions.depth_prompt.prompt`) each counted by countTokens and added (SillyTavern 1.19.0's
// permanent counters, public/index.html `data-token-permanent`; ccv3::PERMANENT_FIELDS).
test('readCardSummary counts the permanent tokens when asked', () => {
  for (const name of ['ember.json', 'ember.png', 'ember.charx']) {
    const bytes = example(name);
    assert.equal(ccv3.readCardSummary(bytes).permanent_tokens, undefined, name);
    const d = ccv3.readCard(bytes).data;
    for (const enc of ['o200k', 'cl100k', 'estimate']) {
      const s = ccv3.readCardSummary(bytes, { tokens: enc });
      assert.equal(Object.keys(s).at(-1), 'permanent_tokens');
      const note = d.extensions.depth_prompt ? d.extensions.depth_prompt.prompt : '';
      assert.ok(note.length > 0, 'ember has a character note');
      const expected = [d.name, d.description, d.personality, d.scenario, note]
        .map((t) => (t ? ccv3.countTokens(t, enc) : 0))
        .reduce((a, b) => a + b, 0);
      assert.equal(s.permanent_tokens, expected, `${name} ${enc}`);
      const { permanent_tokens, ...rest } = s;
      assert.deepEqual(rest, ccv3.readCardSummary(bytes), name);
    }
  }
  assert.throws(() => ccv3.readCardSummary(example('ember.json'), { tokens: 'nope' }), code('bad-input'));
  assert.throws(() => ccv3.readCardSummary(example('ember.json'), { tokens: 5 }), code('bad-input'));
});

// The summary reads a PNG's chunk headers in place through a DataView of the array (issue 29):
// from a view into a bigger buffer (an offset) the answer is the same as from the bytes alone,
// whole, cut short anywhere or with a byte flipped (the same values, or the same error code).
test('readCardSummary reads a PNG in place: offsets, cuts, damage', () => {
  const png = example('ember.png');
  const answer = (bytes) => {
    try {
      return ccv3.readCardSummary(bytes);
    } catch (e) {
      assert.equal(typeof e.code, 'string', e.message);
      return e.code;
    }
  };
  const atOffset = (bytes) => {
    const big = new Uint8Array(bytes.length + 13);
    big.set(bytes, 7);
    return big.subarray(7, 7 + bytes.length);
  };
  assert.deepEqual(answer(atOffset(png)), answer(png));
  assert.deepEqual(answer(Buffer.from(png)), answer(png));
  assert.equal(answer(png).name, 'Ember Vale');
  const step = Math.max(1, Math.floor(png.length / 61));
  for (let cut = 0; cut < png.length; cut += step) {
    const part = Uint8Array.from(png.subarray(0, cut));
    assert.deepEqual(answer(atOffset(part)), answer(part), `cut at ${cut}`);
    const flipped = Uint8Array.from(png);
    flipped[cut] ^= 0x20;
    assert.deepEqual(answer(atOffset(flipped)), answer(flipped), `byte ${cut} flipped`);
  }
});
