// The examples of the API reference run (issue 30: "the examples in the JavaScript docs run in the
// tests, doctest-style"). Every function the package's declarations export (index.d.ts for `ccv3`,
// web/index.d.ts for `ccv3/web`) and `version` carry an `@example` block; each block runs here as
// an ES module over the built package, from the repository root (its `examples/` paths), and every
// `console.log(...); // => TEXT` prints exactly TEXT (util.format of the arguments). A
// `console.log` without `// =>` may print anything. The web entry's examples run in Node with a
// `fetch` that reads `file:` URLs (Node's fetch does not; the package's default URLs for the core
// and vocabularies are `file:` URLs there) and resolves relative URLs against the repository root
// (as a page served from it would).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { format } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = process.env.CCV3_REPO || path.resolve(here, '..', '..', '..');
const PKG = path.dirname(fileURLToPath(import.meta.resolve('ccv3/package.json')));
const RUN = path.join(here, 'doc-examples');

/** The doc comments of a declarations file: [{name, kind, examples: [code]}] per exported name. */
function documented(file) {
  const text = fs.readFileSync(file, 'utf8');
  const items = [];
  const re = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*export (?:declare |default )*(function|const|class) (\w+)/g;
  for (const m of text.matchAll(re)) {
    const body = m[1].split('\n').map((l) => l.replace(/^\s*\* ?/, '')).join('\n');
    const examples = [];
    for (const part of body.split('@example').slice(1)) {
      const code = /```(?:js|javascript|ts)\n([\s\S]*?)```/.exec(part);
      if (code) examples.push(code[1]);
    }
    items.push({ name: m[3], kind: m[2], examples });
  }
  // Exported functions without any doc comment are caught here.
  const exported = [...text.matchAll(/^export (?:declare |default )*(?:function|const) (\w+)/gm)].map((m) => m[1]);
  return { items, exported };
}

const FILES = [
  ['ccv3', path.join(PKG, 'index.d.ts')],
  ['ccv3/web', path.join(PKG, 'web', 'index.d.ts')],
];

/** A fetch that also reads file: URLs (what a browser's fetch does for http: ones). */
const realFetch = globalThis.fetch;
/** A page served from the repository root: relative URLs resolve against it. */
async function fetchWithFiles(input, init) {
  const url = input instanceof URL ? input : typeof input === 'string' ? new URL(input, pathToFileURL(`${process.cwd()}/`)) : null;
  if (url && url.protocol === 'file:') {
    const type = url.pathname.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
    return new Response(fs.readFileSync(url), { headers: { 'Content-Type': type } });
  }
  return realFetch(input, init);
}

for (const [entry, file] of FILES) {
  const { items, exported } = documented(file);
  test(`${entry}: every exported function and constant has an @example`, () => {
    const names = new Set(items.map((i) => i.name));
    assert.deepEqual(exported.filter((n) => !names.has(n)), [], 'exported without a doc comment');
    const missing = items.filter((i) => i.kind !== 'class' && i.examples.length === 0).map((i) => i.name);
    assert.deepEqual(missing, [], 'no @example');
  });
  for (const item of items) {
    item.examples.forEach((code, n) => {
      test(`${entry}: the example of ${item.name}${n ? ` (${n + 1})` : ''}`, async () => {
        const expected = code
          .split('\n')
          .filter((l) => /\bconsole\.log\(/.test(l))
          .map((l) => (/\/\/ => (.*)$/.exec(l) || [])[1]);
        fs.mkdirSync(RUN, { recursive: true });
        const module = path.join(RUN, `${entry.replace('/', '-')}-${item.name}-${n + 1}.mjs`);
        fs.writeFileSync(module, code);
        const printed = [];
        const log = console.log;
        const cwd = process.cwd();
        console.log = (...args) => printed.push(format(...args));
        globalThis.fetch = fetchWithFiles;
        try {
          process.chdir(REPO);
          await import(pathToFileURL(module).href);
        } finally {
          console.log = log;
          globalThis.fetch = realFetch;
          process.chdir(cwd);
        }
        assert.equal(printed.length, expected.length, `printed ${JSON.stringify(printed)}`);
        expected.forEach((want, i) => {
          if (want !== undefined) assert.equal(printed[i], want, `console.log #${i + 1} of the example`);
        });
      });
    });
  }
}
