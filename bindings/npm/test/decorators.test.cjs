'use strict';
// Decorators (SPEC_V3.md "Decorators"): list form, @@@ fallbacks, unknown ones, round trips.
const test = require('node:test');
const assert = require('node:assert/strict');
const ccv3 = require('ccv3');
const { code } = require('./helpers.cjs');

test('parseDecorators: numbers, strings, lists, flags, fallbacks, unknown', () => {
  const text = '@@depth 4\n@@@role system\n@@role assistant\n@@additional_keys a,b\n@@activate\n@@frobnicate x y\n@@lonely\nBody line\n@@not a decorator after content';
  const { decorators, content } = ccv3.parseDecorators(text);
  assert.deepEqual(decorators, [
    { type: 'depth', value: 4, fallbacks: [{ type: 'role', value: 'system' }] },
    { type: 'role', value: 'assistant' },
    { type: 'additional_keys', value: ['a', 'b'] },
    { type: 'activate' },
    { type: 'unknown', name: 'frobnicate', value: 'x y' },
    { type: 'unknown', name: 'lonely' },
  ]);
  assert.equal(content, 'Body line\n@@not a decorator after content');
});

test('parseDecorators: no decorators gives the content back unchanged', () => {
  for (const c of ['', 'plain', 'text first\n@@depth 2', 'email me @@ noon']) {
    const r = ccv3.parseDecorators(c);
    assert.equal(r.content, c);
    assert.deepEqual(r.decorators, []);
  }
});

test('serializeDecorators then parseDecorators is the identity', () => {
  const cases = [
    [[{ type: 'depth', value: 0 }], 'x'],
    [[{ type: 'scan_depth', value: 3, fallbacks: [{ type: 'depth', value: 2 }] }, { type: 'dont_activate' }], 'multi\nline'],
    [[{ type: 'exclude_keys', value: ['k1', 'k2'] }, { type: 'position', value: 'after_desc' }], ''],
    [[{ type: 'unknown', name: 'custom', value: 'v a l' }, { type: 'unknown', name: 'flag' }], 'body'],
    [[], 'no decorators'],
  ];
  for (const [d, c] of cases) {
    const text = ccv3.serializeDecorators(d, c);
    assert.deepEqual(ccv3.parseDecorators(text), { decorators: d, content: c }, text);
  }
});

test('serializeDecorators rejects values of the wrong shape', () => {
  assert.throws(() => ccv3.serializeDecorators([{ type: 'depth', value: 'deep' }], 'x'), code('bad-input'));
  assert.throws(() => ccv3.serializeDecorators([{ value: 1 }], 'x'), code('bad-input'));
  assert.throws(() => ccv3.serializeDecorators('not a list', 'x'), code('bad-input'));
  assert.throws(() => ccv3.serializeDecorators([], 5), code('bad-input'));
});
