'use strict';
// lintCard, lintLorebook, loreGraph, portability (issue 27, "The same from the library and every
// interface"): the objects of `ccv3 lint --json`, `ccv3 lore graph --json` and
// `ccv3 portability --json`, from bytes, text or an object, with stable error codes.
const test = require('node:test');
const assert = require('node:assert/strict');
const ccv3 = require('ccv3');
const { example, code } = require('./helpers.cjs');

// A book made for the checks: "forge" in entry 0's content is a key of entry 1 (a recursion
// edge), "x" is a one-character key (lore-key-too-broad), {{nosuchmacro}} no dialect knows.
const card = {
  spec: 'chara_card_v3',
  spec_version: '3.0',
  data: {
    name: 'Ember',
    description: '{{char}} {{nosuchmacro}}',
    character_book: {
      entries: [
        { keys: ['fire'], content: 'Ember likes the forge.', enabled: true, insertion_order: 0 },
        { keys: ['forge'], content: 'The forge is hot.', enabled: true, insertion_order: 1 },
        { keys: ['x'], content: 'X.', enabled: true, insertion_order: 2 },
      ],
    },
  },
};

function codes(findings) {
  return findings.map((f) => f.code);
}

test('lintCard: typed findings with the budget plan', () => {
  const found = ccv3.lintCard(card, { tokenizer: 'estimate' });
  assert.ok(Array.isArray(found));
  for (const f of found) {
    assert.ok(['error', 'warning', 'info'].includes(f.severity), JSON.stringify(f));
    assert.equal(typeof f.code, 'string');
    assert.equal(typeof f.path, 'string');
    assert.ok(f.entry === null || Number.isInteger(f.entry));
    assert.equal(typeof f.message, 'string');
    assert.equal(f.file, undefined);
  }
  assert.ok(codes(found).includes('cbs-unknown-macro'), codes(found).join());
  const broad = found.find((f) => f.code === 'lore-key-too-broad');
  assert.equal(broad.entry, 2);
  const plan = found.find((f) => f.code === 'lore-budget-plan').budget;
  assert.equal(plan.limit, 8192 / 4);
  assert.equal(plan.entries.length, 3);
  assert.equal(plan.total, plan.constant + plan.triggered_max);
});

test('lintCard: options as the CLI flags', () => {
  const plan = (o) => ccv3.lintCard(card, o).find((f) => f.code === 'lore-budget-plan').budget;
  assert.equal(plan({ tokenizer: 'estimate', budget: 50 }).limit, 50);
  assert.equal(plan({ tokenizer: 'estimate', maxContext: 4000 }).limit, 1000);
  assert.equal(plan({ tokenizer: 'estimate', maxContext: 4000, budgetCap: 100 }).limit, 100);
  // The default tokenizer (o200k) loads its vocabulary lazily.
  assert.ok(plan({}).entries.every((e) => e.tokens > 0));
  assert.ok(plan({ tokenizer: 'cl100k' }).entries.every((e) => e.tokens > 0));
});

test('bytes, text and objects agree', () => {
  const text = JSON.stringify(card);
  const bytes = new TextEncoder().encode(text);
  const o = { tokenizer: 'estimate' };
  assert.deepEqual(ccv3.lintCard(bytes, o), ccv3.lintCard(card, o));
  assert.deepEqual(ccv3.lintCard(text, o), ccv3.lintCard(card, o));
  assert.deepEqual(ccv3.loreGraph(bytes), ccv3.loreGraph(card));
  assert.deepEqual(ccv3.portability(bytes), ccv3.portability(card));
  // The bundled example, as PNG and JSON.
  assert.deepEqual(ccv3.lintCard(example('ember.png'), o), ccv3.lintCard(example('ember.json'), o));
});

test('lintLorebook: a World Info file and a book object', () => {
  const found = ccv3.lintLorebook(example('world.json'), { tokenizer: 'estimate' });
  assert.ok(found.some((f) => f.code === 'lore-budget-plan'));
  assert.ok(found.every((f) => f.path === '' || f.path.startsWith('data')), JSON.stringify(found));
  const book = ccv3.lintLorebook(card.data.character_book, { tokenizer: 'estimate' });
  assert.ok(codes(book).includes('lore-key-too-broad'));
  assert.throws(() => ccv3.lintLorebook(example('ember.json')), code('read-failed'));
  assert.throws(() => ccv3.lintCard(example('world.json')), code('read-failed'));
});

test('loreGraph: nodes and the recursion edge', () => {
  const g = ccv3.loreGraph(card);
  assert.deepEqual(
    g.nodes.map((n) => n.entry),
    [0, 1, 2],
  );
  assert.deepEqual(g.edges, [{ from: 0, to: 1, key: 'forge' }]);
  assert.equal(g.truncated, undefined);
  const world = ccv3.loreGraph(example('world.json'));
  assert.ok(world.nodes.length > 0);
  const bare = { spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'A' } };
  assert.throws(() => ccv3.loreGraph(bare), code('bad-input'));
});

test('portability: every application, or the ones asked for', () => {
  const all = ccv3.portability(example('ember.png'));
  for (const f of all) assert.ok(['sillytavern', 'risuai', 'agnai', 'v2'].includes(f.app), f.app);
  const st = ccv3.portability(example('ember.png'), { apps: ['st'] });
  assert.ok(st.every((f) => f.app === 'sillytavern'));
  assert.deepEqual(
    st,
    all.filter((f) => f.app === 'sillytavern'),
  );
});

test('bad options and inputs have stable codes', () => {
  assert.throws(() => ccv3.lintCard(card, { app: 'nope' }), code('bad-input'));
  assert.throws(() => ccv3.lintCard(card, { budget: -1 }), code('bad-input'));
  assert.throws(() => ccv3.lintCard(card, { tokenizer: 'nope' }), code('bad-input'));
  assert.throws(() => ccv3.lintCard(card, 'sillytavern'), code('bad-input'));
  assert.throws(() => ccv3.portability(card, { apps: ['nope'] }), code('bad-input'));
  assert.throws(() => ccv3.lintCard(42), code('bad-input'));
  assert.throws(() => ccv3.portability(new Uint8Array([1, 2, 3])), code('read-failed'));
  assert.throws(() => ccv3.loreGraph(new Uint8Array(0)), code('read-failed'));
  assert.equal(ccv3.lintCard(card, { app: 'sillytavern', tokenizer: 'estimate' }).length > 0, true);
});
