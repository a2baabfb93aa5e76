'use strict';
// The WebAssembly core (without tokenizer vocabularies) stays under 2.5 MB: issue 11, section 5
// ("WebAssembly core (no tokenizer vocabularies) under 2.5 MB"). The limit is on the file the
// package ships, web/ccv3_wasm_bg.wasm, after wasm-opt (scripts/build-bindings).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');

const LIMIT = 2_500_000;

test('the WebAssembly core is under 2.5 MB (issue 11, section 5)', () => {
  const core = path.join(path.dirname(require.resolve('ccv3')), 'web', 'ccv3_wasm_bg.wasm');
  const size = fs.statSync(core).size;
  assert.ok(
    size < LIMIT,
    `the WebAssembly core ${core} is ${size.toLocaleString('en')} bytes, over the limit of ` +
      `${LIMIT.toLocaleString('en')} (issue 11); measure what grew with the recipe in ` +
      'docs/benchmarks.md (WebAssembly size)',
  );
});

// The Node entry's read core (issue 29, first read in a fresh process): `require('ccv3')` compiles
// it, so its size is the start-up cost; it holds only the reads (crates/ccv3-wasm, feature
// read-core). An export that is not a read left in it by mistake would grow it past this.
const READ_LIMIT = 1_000_000;

test('the read core that require compiles stays under 1 MB (issue 29)', () => {
  const core = path.join(path.dirname(require.resolve('ccv3')), 'web', 'ccv3_read_bg.wasm');
  const size = fs.statSync(core).size;
  assert.ok(
    size < READ_LIMIT,
    `the read core ${core} is ${size.toLocaleString('en')} bytes, over ${READ_LIMIT.toLocaleString('en')}: ` +
      'check that crates/ccv3-wasm leaves every export but the reads out with the feature read-core',
  );
});
