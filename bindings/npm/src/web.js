// Browser entry (ES module): `import init, { readCard } from 'ccv3/web'; await init();`
//
// `init()` fetches and instantiates the WebAssembly core next to this file (or takes what
// wasm-bindgen's init takes: a URL, Response, bytes or WebAssembly.Module). `initSync(bytesOrModule)`
// does the same synchronously. An application that only reads cards can load the read core instead
// (issue 29: about a third of the full core, so a page's first read waits for less):
// `await initReadCore()` (or `initReadCoreSync`) makes readCard, its entries and readCardSummary
// without token counts ready; every other call needs `init()`, which can come later. Tokenizer
// vocabularies are not in the core: `await loadTokenizer('o200k')` (or 'cl100k') before countTokens,
// scanLorebook, compileLorebooks, buildPrompt or readCardSummary's `tokens` option (they count tokens).
import * as glue from './ccv3_wasm.js';
import * as readGlue from './ccv3_read.js';
import { makeApi } from './api.js';

let ready = false; // the full core
let compiled = null; // its WebAssembly.Module, kept to restart a trapped instance
let readReady = false; // the read core (initReadCore)
let readCompiled = null;
let api = null;

function notReady() {
  const e = readReady
    ? new Error("ccv3/web: this call needs the full core: call `await init()` (initReadCore loaded only the read core: readCard and readCardSummary without token counts)")
    : new Error("ccv3/web: call `await init()` (or initSync) before using the package");
  e.code = 'not-initialized';
  return e;
}

function host() {
  return {
    // Reads go to the read core when it is loaded, everything else (and reads without it) to the
    // full core: a card read before init() keeps its lazy entries on the same core after it.
    raw(core) {
      if (core === 'read' && readReady) return readGlue;
      if (!ready) throw notReady();
      return glue;
    },
    restart() {
      if (compiled !== null) {
        ready = false;
        glue.__ccv3_reset();
        glue.initSync({ module: compiled });
        ready = true;
      }
      if (readCompiled !== null) {
        readReady = false;
        readGlue.__ccv3_reset();
        readGlue.initSync({ module: readCompiled });
        readReady = true;
      }
    },
    loadVocabulary() {
      return false; // web: vocabularies are loaded asynchronously with loadTokenizer()
    },
    missingVocabulary(name) {
      return `ccv3/web: counting tokens needs the ${name} vocabulary: call \`await loadTokenizer('${name}')\` first (countTokens, scanLorebook, compileLorebooks, buildPrompt and readCardSummary's \`tokens\` option count tokens)`;
    },
    version: '__CCV3_VERSION__',
  };
}

api = makeApi(host());

// `input` as a compiled module; `beside` is the file next to this module used when it is undefined.
async function toModule(input, beside) {
  if (input instanceof WebAssembly.Module) return input;
  if (input === undefined) input = beside;
  if (input instanceof ArrayBuffer || ArrayBuffer.isView(input)) return WebAssembly.compile(input);
  if (typeof input === 'string' || input instanceof URL) input = fetch(input);
  const response = await input;
  if (typeof WebAssembly.compileStreaming === 'function' && response.headers &&
      String(response.headers.get('Content-Type')).startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

/** Fetches, compiles and instantiates the WebAssembly core. Safe to call more than once. */
export default async function init(input) {
  if (ready) return;
  if (input && typeof input === 'object' && 'module_or_path' in input) input = input.module_or_path;
  const module = await toModule(await input, new URL('./ccv3_wasm_bg.wasm', import.meta.url));
  if (ready) return;
  compiled = module;
  glue.initSync({ module });
  ready = true;
}

/** Instantiates the WebAssembly core synchronously from its bytes or a compiled module. */
export function initSync(input) {
  if (ready) return;
  if (input && typeof input === 'object' && 'module' in input) input = input.module;
  compiled = input instanceof WebAssembly.Module ? input : new WebAssembly.Module(input);
  glue.initSync({ module: compiled });
  ready = true;
}

/**
 * Fetches, compiles and instantiates only the read core (web/ccv3_read_bg.wasm, beside this module,
 * or what init takes): readCard, its entries and readCardSummary without token counts. Safe to
 * call more than once, and before or after init().
 */
export async function initReadCore(input) {
  if (readReady) return;
  if (input && typeof input === 'object' && 'module_or_path' in input) input = input.module_or_path;
  const module = await toModule(await input, new URL('./ccv3_read_bg.wasm', import.meta.url));
  if (readReady) return;
  readCompiled = module;
  readGlue.initSync({ module });
  readReady = true;
}

/** Instantiates the read core synchronously from its bytes or a compiled module (see initReadCore). */
export function initReadCoreSync(input) {
  if (readReady) return;
  if (input && typeof input === 'object' && 'module' in input) input = input.module;
  readCompiled = input instanceof WebAssembly.Module ? input : new WebAssembly.Module(input);
  readGlue.initSync({ module: readCompiled });
  readReady = true;
}

/**
 * Loads a tokenizer vocabulary ('o200k' default, or 'cl100k'). `source` may be a URL, a Response
 * or the bytes; by default the file shipped beside this module (../vocab/NAME_base.vocab).
 */
export async function loadTokenizer(encoding = 'o200k', source) {
  const name = encoding === 'o200k_base' ? 'o200k' : encoding === 'cl100k_base' ? 'cl100k' : encoding;
  if (source === undefined) source = new URL(`../vocab/${name}_base.vocab`, import.meta.url);
  let bytes;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) bytes = source;
  else {
    const response = await (typeof source === 'string' || source instanceof URL ? fetch(source) : source);
    if (response.ok === false) {
      const e = new Error(`ccv3/web: could not load the ${name} vocabulary (HTTP ${response.status})`);
      e.code = 'tokenizer-unavailable';
      throw e;
    }
    bytes = new Uint8Array(await response.arrayBuffer());
  }
  api.registerVocabulary(name, bytes);
}

export const {
  readCard,
  readCardFiles,
  readCardSummary,
  readLorebook,
  parseDecorators,
  serializeDecorators,
  writeCard,
  writeLorebook,
  validateCard,
  validateLorebook,
  lintCard,
  lintLorebook,
  loreGraph,
  portability,
  scanLorebook,
  compileLorebooks,
  CompiledLorebooks,
  sillyTavernScanOptions,
  buildPrompt,
  expandMacros,
  countTokens,
  registerVocabulary,
  version,
} = api;
