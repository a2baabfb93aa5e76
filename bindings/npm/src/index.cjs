'use strict';
// Node entry (CommonJS): the WebAssembly core is instantiated synchronously on first require.
const fs = require('fs');
const path = require('path');
const { makeApi } = require('./api.cjs');

const GLUE = require.resolve('./node/ccv3_wasm.js');
let raw = require(GLUE);

function restart() {
  delete require.cache[GLUE];
  raw = require(GLUE);
}

function loadVocabulary(encoding, register) {
  const file = path.join(__dirname, 'vocab', `${encoding}_base.vocab`);
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (_) {
    return false;
  }
  register(encoding, bytes);
  return true;
}

module.exports = makeApi({ raw: () => raw, restart, loadVocabulary, version: raw.version() });
