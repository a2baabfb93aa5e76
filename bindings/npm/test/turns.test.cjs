'use strict';
// scanLorebook and buildPrompt over turns (issue 11 section 2; SPEC_V3.md lorebook decorators).
const test = require('node:test');
const assert = require('node:assert/strict');
const ccv3 = require('ccv3');
const { example, code } = require('./helpers.cjs');

const book = {
  name: 'Dragons',
  extensions: {},
  entries: [
    { keys: ['dragon'], content: '@@keep_activate_after_match\nDragons breathe fire.', enabled: true, insertion_order: 0, use_regex: false, extensions: {} },
    { keys: ['castle'], content: 'The castle is old.', enabled: true, insertion_order: 1, use_regex: false, extensions: {} },
  ],
};
const turn1 = [{ role: 'user', name: 'U', content: 'I saw a dragon!' }];
const turn2 = [...turn1, { role: 'assistant', name: 'C', content: 'Really?' }, { role: 'user', name: 'U', content: 'Yes, near the castle.' }];

test('scanLorebook: activations, rejections, tokens and state', () => {
  const r = ccv3.scanLorebook({ books: [book], chat: turn1 });
  assert.deepEqual(r.activated.map((a) => a.content), ['Dragons breathe fire.']);
  assert.equal(r.activated[0].book, 'Dragons');
  assert.deepEqual(r.rejected.map((x) => x.index), [1]);
  assert.ok(r.tokens > 0);
  assert.equal(typeof r.state, 'object');
});

test('scanLorebook: state carries @@keep_activate_after_match to the next turn (SPEC_V3.md)', () => {
  const first = ccv3.scanLorebook({ books: [book], chat: turn1 });
  const withState = ccv3.scanLorebook({ books: [book], chat: turn2, state: first.state, scanDepth: 1 });
  const without = ccv3.scanLorebook({ books: [book], chat: turn2, scanDepth: 1 });
  assert.deepEqual(withState.activated.map((a) => a.index).sort(), [0, 1]);
  assert.deepEqual(without.activated.map((a) => a.index), [1]);
  // snake_case options are the same options.
  assert.deepEqual(ccv3.scanLorebook({ books: [book], chat: turn2, state: first.state, scan_depth: 1 }), withState);
});

test('compileLorebooks: the same results as scanLorebook, turn after turn', () => {
  const compiled = ccv3.compileLorebooks([book], { scanDepth: 1 });
  let stateA = null;
  let stateB = null;
  for (const chat of [turn1, turn2, [...turn2, { role: 'user', name: 'U', content: 'ok' }]]) {
    const a = ccv3.scanLorebook({ books: compiled, chat, state: stateA });
    const b = ccv3.scanLorebook({ books: [book], chat, state: stateB, scanDepth: 1 });
    assert.deepEqual(a, b);
    stateA = a.state;
    stateB = b.state;
  }
  compiled.free();
  assert.throws(() => ccv3.scanLorebook({ books: compiled, chat: turn1 }), code('bad-input'));
});

test('scanLorebook: books as file bytes (a card means its character book), seed is deterministic', () => {
  const bytes = example('ember.png');
  const a = ccv3.scanLorebook({ books: [bytes, example('world.json')], chat: turn1, seed: 7 });
  const b = ccv3.scanLorebook({ books: [bytes, example('world.json')], chat: turn1, seed: 7 });
  assert.deepEqual(a, b);
  assert.ok(a.activated.length + a.rejected.length > 0);
});

test('buildPrompt: messages, tokens, lore, cut and state', () => {
  const card = ccv3.readCard(example('ember.png'));
  const chat = [{ role: 'user', name: 'User', content: 'Tell me about the lighthouse.' }];
  const p = ccv3.buildPrompt({ card, chat, user: 'Sam', books: [book] });
  assert.ok(Array.isArray(p.messages) && p.messages.length >= 2);
  for (const m of p.messages) {
    assert.equal(typeof m.role, 'string');
    assert.equal(typeof m.content, 'string');
  }
  assert.ok(p.messages.some((m) => m.role === 'user' && m.content === 'Tell me about the lighthouse.'));
  assert.ok(p.tokens > 0);
  assert.ok(Array.isArray(p.lore) && Array.isArray(p.cut));
  assert.equal(typeof p.state, 'object');
  // The card as bytes gives the same prompt.
  assert.deepEqual(ccv3.buildPrompt({ card: example('ember.png'), chat, user: 'Sam', books: [book] }), p);
  // A small context cuts something.
  const small = ccv3.buildPrompt({ card, chat, maxContext: 200 });
  assert.ok(small.tokens <= 200 || small.cut.length > 0);
});

test('expandMacros and countTokens', () => {
  const card = ccv3.readCard(example('ember.json'));
  // {{char}} is the nickname when the card has one (SPEC_V3.md "nickname").
  assert.equal(ccv3.expandMacros('{{char}} meets {{user}}', { card, user: 'Sam' }), `${card.data.nickname || card.data.name} meets Sam`);
  assert.equal(ccv3.expandMacros('{{getvar::x}}', { variables: { x: 'five' } }), 'five');
  assert.equal(ccv3.countTokens('hello world'), 2);
  assert.equal(ccv3.countTokens('hello world', 'cl100k'), 2);
  assert.equal(ccv3.countTokens(''), 0);
  assert.throws(() => ccv3.countTokens('x', 'gpt2000'), code('bad-input'));
});
