'use strict';
// sillyTavernScanOptions (issue 28): SillyTavern 1.19.0's World Info settings as scan options,
// as its public/scripts/world-info.js reads them (checkWorldInfo's budget, updateWorldInfoSettings).
const test = require('node:test');
const assert = require('node:assert/strict');
const ccv3 = require('ccv3');
const { code } = require('./helpers.cjs');

test('sillyTavernScanOptions: budget share, cap, defaults, compat mode', () => {
  const o = ccv3.sillyTavernScanOptions({
    settings: { world_info_depth: 3, world_info_budget: 25, world_info_budget_cap: 0, world_info_recursive: true },
    maxContext: 3795,
  });
  assert.equal(o.compat, 'sillytavern');
  assert.equal(o.budget, 949); // Math.round(25 * 3795 / 100)
  assert.equal(o.scanDepth, 3);
  assert.equal(o.recursive, true);
  assert.equal(o.wholeWords, false);
  assert.equal(o.tokenizer, 'cl100k');
  const capped = ccv3.sillyTavernScanOptions({ settings: { world_info_budget: 25, world_info_budget_cap: 60 }, maxContext: 3795 });
  assert.equal(capped.budget, 60);
});

test('sillyTavernScanOptions: the options scan a World Info file in compat mode', () => {
  const world = { entries: { 0: { uid: 0, key: ['dragon'], content: 'Dragons.', order: 100, position: 0 } } };
  const options = ccv3.sillyTavernScanOptions({ settings: {}, maxContext: 4000 });
  const r = ccv3.scanLorebook({
    ...options,
    books: [new TextEncoder().encode(JSON.stringify(world))],
    chat: { messages: [{ name: 'User', is_user: true, mes: 'A dragon!' }] },
  });
  assert.deepEqual(r.activated.map((a) => a.index), [0]);
});

test('sillyTavernScanOptions: wrong shapes are bad-input', () => {
  assert.throws(() => ccv3.sillyTavernScanOptions(3), code('bad-input'));
  assert.throws(() => ccv3.sillyTavernScanOptions({ settings: [] }), code('bad-input'));
});
