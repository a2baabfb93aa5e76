'use strict';
// Shared paths for the tests: they run over the built package (scripts/test-bindings links it
// as node_modules/ccv3 beside a copy of these files).
const fs = require('fs');
const path = require('path');

const REPO = process.env.CCV3_REPO || path.resolve(__dirname, '..', '..', '..');
const CORPUS = path.resolve(REPO, '..', 'shared', 'corpus');
const EXAMPLES = path.join(REPO, 'examples');

function corpusRows() {
  const manifest = path.join(CORPUS, 'MANIFEST.tsv');
  if (!fs.existsSync(manifest)) return null;
  const lines = fs.readFileSync(manifest, 'utf8').split('\n').slice(1).filter(Boolean);
  return lines.map((l) => {
    const [file, kind, , , , , notes] = l.split('\t');
    return { file, kind, notes: notes || '', path: path.join(CORPUS, file) };
  });
}

function example(name) {
  return fs.readFileSync(path.join(EXAMPLES, name));
}

function code(expected) {
  return (e) => e instanceof Error && e.code === expected && typeof e.message === 'string' && e.message.length > 0;
}

module.exports = { REPO, CORPUS, EXAMPLES, corpusRows, example, code };
