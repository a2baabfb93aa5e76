'use strict';
// The Node entry's two cores (issue 29, first read in a fresh process): `require('ccv3')` compiles
// only the read core (web/ccv3_read_bg.wasm), which serves readCard, its lazy entries and
// readCardSummary without token counts; the full core (web/ccv3_wasm_bg.wasm) is compiled on the
// first call that needs it. The same results and errors as the full core, and a trap restarts both.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const ccv3 = require('ccv3');
const { corpusRows, example } = require('./helpers.cjs');

const PKG = path.dirname(require.resolve('ccv3'));
const READ_GLUE = path.join(PKG, 'node', 'ccv3_read.js');
const FULL_GLUE = path.join(PKG, 'node', 'ccv3_wasm.js');
const full = require(FULL_GLUE);

// Runs `script` in a fresh Node process beside this file (node_modules/ccv3 is the package) and
// returns what it printed as JSON.
function fresh(script) {
  const out = execFileSync(process.execPath, ['-e', script], {
    cwd: __dirname,
    env: { ...process.env, CCV3_REPO: require('./helpers.cjs').REPO },
  });
  return JSON.parse(String(out));
}

function inputs() {
  const list = ['ember.png', 'ember.json', 'ember.charx'].map((n) => [n, example(n)]);
  for (const row of corpusRows() || []) list.push([row.file, fs.readFileSync(row.path)]);
  return list;
}

function outcome(f) {
  try {
    return { value: JSON.stringify(f()) };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

test('require compiles the read core only; a call that needs more compiles the full core', () => {
  const seen = fresh(`
    const path = require('path');
    const ccv3 = require('ccv3');
    const pkg = path.dirname(require.resolve('ccv3'));
    const loaded = () => ({
      read: require.resolve(path.join(pkg, 'node', 'ccv3_read.js')) in require.cache,
      full: require.resolve(path.join(pkg, 'node', 'ccv3_wasm.js')) in require.cache,
    });
    const out = { atRequire: loaded(), version: ccv3.version };
    const bytes = require('fs').readFileSync(path.join(process.env.CCV3_REPO, 'examples', 'ember.png'));
    const card = ccv3.readCard(bytes);
    void card.data.character_book.entries.length;
    ccv3.readCardSummary(bytes);
    out.afterReads = loaded();
    ccv3.validateCard(bytes);
    out.afterValidate = loaded();
    console.log(JSON.stringify(out));
  `);
  assert.deepEqual(seen.atRequire, { read: true, full: false });
  assert.deepEqual(seen.afterReads, { read: true, full: false });
  assert.deepEqual(seen.afterValidate, { read: true, full: true });
  assert.equal(seen.version, full.version());
});

test('readCardSummary with token counts asks the full core (the read core has no tokenizer)', () => {
  const seen = fresh(`
    const path = require('path');
    const ccv3 = require('ccv3');
    const pkg = path.dirname(require.resolve('ccv3'));
    const bytes = require('fs').readFileSync(path.join(process.env.CCV3_REPO, 'examples', 'ember.png'));
    const summary = ccv3.readCardSummary(bytes, { tokens: 'o200k' });
    console.log(JSON.stringify({ summary, full: require.resolve(path.join(pkg, 'node', 'ccv3_wasm.js')) in require.cache }));
  `);
  assert.equal(seen.full, true);
  assert.equal(typeof seen.summary.permanent_tokens, 'number');
  assert.deepEqual(seen.summary, ccv3.readCardSummary(example('ember.png'), { tokens: 'o200k' }));
});

test('the read core reads every file as the full core does: the same cards, summaries and errors', () => {
  const list = inputs();
  assert.ok(list.length > 3);
  for (const [name, bytes] of list) {
    for (const parse of [true, false]) {
      const got = outcome(() => ccv3.readCard(bytes, { parseDecorators: parse }));
      const want = outcome(() => JSON.parse(full.read_card(bytes, parse)));
      assert.deepEqual(got, want, `${name} (parseDecorators ${parse})`);
    }
    const got = outcome(() => ccv3.readCardSummary(bytes));
    const want = outcome(() => JSON.parse(full.read_card_summary(new Uint8Array(bytes))));
    assert.deepEqual(got, want, `${name} (summary)`);
  }
});

test('a trap in the read core restarts both cores, as one core did before (api.js guard)', () => {
  const seen = fresh(`
    const path = require('path');
    const ccv3 = require('ccv3');
    const pkg = path.dirname(require.resolve('ccv3'));
    const readGlue = require.resolve(path.join(pkg, 'node', 'ccv3_read.js'));
    const fullGlue = require.resolve(path.join(pkg, 'node', 'ccv3_wasm.js'));
    const bytes = require('fs').readFileSync(path.join(process.env.CCV3_REPO, 'examples', 'ember.png'));
    const compiled = ccv3.compileLorebooks([ccv3.readCard(bytes).data.character_book]);
    const fullBefore = require.cache[fullGlue].exports;
    // A trap as WebAssembly raises it (the Rust side never panics: this stands in for one).
    require.cache[readGlue].exports.read_card_parts = () => {
      throw new WebAssembly.RuntimeError('unreachable');
    };
    const out = {};
    try {
      ccv3.readCard(bytes);
    } catch (e) {
      out.trap = { code: e.code, message: e.message };
    }
    out.readAgain = ccv3.readCard(bytes).data.name;
    out.fullRestarted = require.cache[fullGlue].exports !== fullBefore;
    try {
      ccv3.scanLorebook({ books: compiled, chat: ['x'] });
    } catch (e) {
      out.oldHandle = e.code;
    }
    out.tokensAgain = ccv3.countTokens('hello there');
    console.log(JSON.stringify(out));
  `);
  assert.equal(seen.trap.code, 'internal');
  assert.match(seen.trap.message, /unreachable.*restarted/);
  assert.equal(seen.readAgain, ccv3.readCard(example('ember.png')).data.name);
  assert.equal(seen.fullRestarted, true);
  assert.equal(seen.oldHandle, 'bad-input');
  assert.equal(seen.tokensAgain, ccv3.countTokens('hello there'));
});
