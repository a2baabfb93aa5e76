'use strict';
// Node entry (CommonJS). Two WebAssembly cores, each instantiated synchronously (issue 29):
// - the read core (web/ccv3_read_bg.wasm, shared with the browser entry's initReadCore; about a
//   third of the full one: only what readCard, its lazy entries and readCardSummary without token
//   counts need), compiled at require, so that an application that starts and reads a card
//   compiles only that;
// - the full core (web/ccv3_wasm_bg.wasm, every export), compiled on the first call that needs it.
const fs = require('fs');
const path = require('path');
const { makeApi } = require('./api.cjs');

const READ_GLUE = require.resolve('./node/ccv3_read.js');
const FULL_GLUE = require.resolve('./node/ccv3_wasm.js');
let read = require(READ_GLUE);
let full = null;

function raw(core) {
  if (core === 'read') return read;
  if (full === null) full = require(FULL_GLUE);
  return full;
}

// A trap leaves no instance trusted: both cores start again (the full one if it was loaded).
function restart() {
  delete require.cache[READ_GLUE];
  read = require(READ_GLUE);
  if (full !== null) {
    full = null;
    delete require.cache[FULL_GLUE];
    full = require(FULL_GLUE);
  }
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

// The bytes of a Uint8Array read as Latin-1: readCard's entries text when it is ASCII (issue 29:
// Node decodes Latin-1 about 5x faster than UTF-8, and ASCII reads the same either way).
function latin1(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
}

module.exports = makeApi({ raw, restart, loadVocabulary, latin1, version: read.version() });
