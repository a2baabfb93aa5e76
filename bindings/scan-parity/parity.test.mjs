// One scan policy for every interface (issue 26 section 1): each scenario in scenarios/ runs
// through `ccv3 lore scan --json --state FILE`, the npm package's scanLorebook and the Python
// package's scan_lorebook, turn after turn (each passing its own previous state back), and all
// three must give the same activations, rejections, tokens and state, and the activations the
// scenario expects.
//
// Run by scripts/test-bindings after scripts/build-bindings. Paths (defaults under target/):
// CCV3_BIN (the CLI, target/debug/ccv3), CCV3_NPM (the npm package, target/bindings/npm),
// CCV3_PYTHON (a Python with the wheel installed, target/bindings/venv/bin/python).
//
// Scenario files: {about, books: [{file, data}], options?, turns: [[message...]...],
// expect: [[activated content...] per turn]}. `options` are the bindings' request keys
// (snake_case); the CLI gets them as flags (`scan_depth` -> `--scan-depth`). Each book's `name`
// is its `file`: the CLI calls a book by its file name and the packages by its `name`, and the
// state's keys hold that name, so all three outputs can be compared byte for byte.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = process.env.CCV3_REPO || path.resolve(HERE, '..', '..');
const BIN = process.env.CCV3_BIN || path.join(REPO, 'target', 'debug', 'ccv3');
const NPM = process.env.CCV3_NPM || path.join(REPO, 'target', 'bindings', 'npm');
const PYTHON = process.env.CCV3_PYTHON || path.join(REPO, 'target', 'bindings', 'venv', 'bin', 'python');
const ccv3 = createRequire(import.meta.url)(path.join(NPM, 'index.cjs'));

const SCENARIOS = path.join(HERE, 'scenarios');
const names = fs.readdirSync(SCENARIOS).filter((f) => f.endsWith('.json')).sort();

/** The CLI flags of a scenario's options. */
function flags(options) {
  const out = [];
  for (const [k, v] of Object.entries(options)) {
    const flag = `--${k.replace(/_/g, '-')}`;
    if (v === true) out.push(flag);
    else if (v !== false) out.push(flag, String(v));
  }
  return out;
}

/** A scan's result and the state it leaves. The bindings' activated items also carry their
 * scan `step` (issue 28), which `ccv3 lore scan --json` leaves out: checked, then set aside. */
function comparable(out, state) {
  const activated = out.activated.map((a) => {
    if (!('step' in a)) return a;
    assert.ok(Number.isInteger(a.step) && a.step >= 0, `a scan step: ${a.step}`);
    const { step: _step, ...rest } = a;
    return rest;
  });
  return { activated, rejected: out.rejected, tokens: out.tokens, state };
}

function viaCli(dir, s, files) {
  const statePath = path.join(dir, 'cli-state.json');
  const results = [];
  s.turns.forEach((chat, i) => {
    const chatPath = path.join(dir, `chat-${i}.json`);
    fs.writeFileSync(chatPath, JSON.stringify(chat));
    const args = ['lore', 'scan', '--json', '--chat', chatPath, '--state', statePath];
    for (const f of files) args.push('--book', f);
    args.push(...flags(s.options || {}));
    const r = spawnSync(BIN, args, { encoding: 'utf8' });
    assert.equal(r.status, 0, `ccv3 ${args.join(' ')}: ${r.stderr}`);
    const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
    results.push(comparable(JSON.parse(r.stdout), state));
  });
  return results;
}

function viaNpm(s, files) {
  const books = files.map((f) => new Uint8Array(fs.readFileSync(f)));
  let state = null;
  return s.turns.map((chat) => {
    const out = ccv3.scanLorebook({ ...(s.options || {}), books, chat, state });
    state = out.state;
    return comparable(out, out.state);
  });
}

function viaPython(dir, s, files) {
  const job = path.join(dir, 'job.json');
  fs.writeFileSync(job, JSON.stringify({ books: files, turns: s.turns, options: s.options || {} }));
  const r = spawnSync(PYTHON, [path.join(HERE, 'scan.py'), job], { encoding: 'utf8' });
  assert.equal(r.status, 0, `python scan.py: ${r.stderr}`);
  return JSON.parse(r.stdout).map((out) => comparable(out, out.state));
}

test('the scenarios are there', () => {
  assert.ok(names.length >= 4, `scenarios in ${SCENARIOS}`);
  assert.ok(fs.existsSync(BIN), `no CLI at ${BIN} (cargo build -p ccv3-cli)`);
  assert.ok(fs.existsSync(PYTHON), `no Python at ${PYTHON} (scripts/bindings/python.sh)`);
});

for (const name of names) {
  const s = JSON.parse(fs.readFileSync(path.join(SCENARIOS, name), 'utf8'));
  test(`${name}: ${s.about}`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ccv3-scan-parity-'));
    try {
      const files = s.books.map((b) => {
        const book = b.data.data.character_book ?? b.data.data;
        assert.equal(book.name, b.file, `${b.file}: a book's name is its file (see the header)`);
        const f = path.join(dir, b.file);
        fs.writeFileSync(f, JSON.stringify(b.data));
        return f;
      });
      const cli = viaCli(dir, s, files);
      const npm = viaNpm(s, files);
      const py = viaPython(dir, s, files);
      assert.equal(cli.length, s.expect.length);
      cli.forEach((turn, i) => {
        assert.deepEqual(
          turn.activated.map((a) => a.content),
          s.expect[i],
          `turn ${i}: the activations the scenario expects`,
        );
        assert.deepEqual(npm[i], turn, `turn ${i}: npm scanLorebook = ccv3 lore scan --json`);
        assert.deepEqual(py[i], turn, `turn ${i}: Python scan_lorebook = ccv3 lore scan --json`);
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
