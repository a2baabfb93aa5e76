// The package's functions over the raw WebAssembly exports (shared by the Node and web entries).
//
// Values cross the boundary as JSON text (JSON.stringify / JSON.parse on this side, serde_json on
// the Rust side), bytes as Uint8Array. Every failure is an Error with a stable `code`. If the
// WebAssembly instance ever traps (it must not: the Rust side does not panic on any input), the
// host restarts it and the call fails with code 'internal'.
'use strict';

// The calls the read core serves (see makeApi's host.raw).
const READ = 'read';

const ENCODINGS = { o200k: 'o200k', o200k_base: 'o200k', cl100k: 'cl100k', cl100k_base: 'cl100k' };

function ccv3Error(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

function badInput(message) {
  return ccv3Error('bad-input', message);
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);
}

function asBytes(v, what) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw badInput(`${what} must be a Uint8Array, got ${describe(v)}`);
}

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (ArrayBuffer.isView(v)) return v.constructor.name;
  return typeof v;
}

function toJson(v, what) {
  let text;
  try {
    text = JSON.stringify(v);
  } catch (e) {
    throw badInput(`${what} cannot be turned into JSON: ${e && e.message}`);
  }
  if (typeof text !== 'string') throw badInput(`${what} cannot be turned into JSON`);
  return text;
}

function fromJson(text) {
  return JSON.parse(text);
}

function boolOption(options, name, fallback) {
  if (options === undefined || options === null) return fallback;
  if (!isPlainObject(options)) throw badInput(`options must be an object, got ${describe(options)}`);
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw badInput(`options.${name} must be a boolean, got ${describe(v)}`);
  return v;
}

function encodingName(v, what) {
  if (v === undefined || v === null) return 'o200k';
  if (typeof v !== 'string') throw badInput(`${what} must be a string, got ${describe(v)}`);
  return ENCODINGS[v] || v;
}

// Sorts `books` (array, or one book) into JSON text (null where a file's bytes go) plus the
// files' bytes concatenated and their lengths.
function packBooks(books, what) {
  const list = Array.isArray(books) ? books : [books];
  const json = [];
  const parts = [];
  let total = 0;
  for (let i = 0; i < list.length; i++) {
    const b = list[i];
    if (b instanceof Uint8Array || b instanceof ArrayBuffer || ArrayBuffer.isView(b)) {
      const bytes = asBytes(b, `${what}[${i}]`);
      parts.push(bytes);
      total += bytes.length;
      json.push(null);
    } else if (isPlainObject(b)) {
      json.push(b);
    } else {
      throw badInput(`${what}[${i}] must be a lorebook object or file bytes, got ${describe(b)}`);
    }
  }
  const blob = new Uint8Array(total);
  const lens = new Uint32Array(parts.length);
  let at = 0;
  parts.forEach((p, i) => {
    blob.set(p, at);
    at += p.length;
    lens[i] = p.length;
  });
  return { json: toJson(json, what), blob, lens };
}

let utf8;

function utf8Decoder() {
  if (!utf8) utf8 = new TextDecoder();
  return utf8;
}

// Makes `obj[key]` (an existing data property, so its place among the keys stays) the value
// `make()` returns, made on first access. The property is enumerable and replaces itself with a
// plain data property when first read or assigned, so JSON.stringify, structuredClone,
// Object.keys, spread, for...in and deep equality all see a plain object.
// Node's util.inspect (console.log) would show the accessor as [Getter/Setter]: until then the
// object carries a non-enumerable inspect hook (Node's registered symbol) that makes the value
// first; JSON, structuredClone, deep equality, keys and spread never see it.
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

function lazyValue(obj, key, make) {
  let value;
  let made = false;
  const settle = (v) => {
    value = v;
    made = true;
    make = null;
    try {
      Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
      delete obj[INSPECT];
    } catch (_) {
      // The object was sealed or frozen: the accessor stays and serves the value.
    }
  };
  if (!Object.prototype.hasOwnProperty.call(obj, INSPECT)) {
    Object.defineProperty(obj, INSPECT, {
      enumerable: false,
      configurable: true,
      writable: true,
      value() {
        void obj[key];
        return this;
      },
    });
  }
  Object.defineProperty(obj, key, {
    enumerable: true,
    configurable: true,
    get() {
      if (!made) settle(make());
      return value;
    },
    set(v) {
      if (Object.isFrozen(obj)) throw new TypeError(`Cannot assign to read only property '${key}' of object`);
      settle(v);
    },
  });
}

/**
 * Builds the public functions.
 * host.raw(core) -> the current raw exports; `core` is 'read' when the call needs only the read
 * core's (read_card_parts, card_entries, card_entries_at, read_card_summary without token counts,
 * version): the Node host serves those from a smaller module (issue 29), the web host has one;
 * host.restart() -> replaces every trapped or possibly trapped instance;
 * host.loadVocabulary(encoding, register) -> registers a vocabulary synchronously with
 * register(encoding, bytes), or returns false if it cannot; host.version -> the version string;
 * host.latin1(bytes) (optional) -> the bytes of a Uint8Array read as Latin-1, for text the core
 * found to be ASCII, where it is faster than UTF-8 decoding (Node's Buffer; issue 29).
 */
function makeApi(host) {
  let generation = 0;
  const loaded = new Set();

  // Runs `f(raw)` on the core `core` asks for (see makeApi); errors with a code pass through,
  // anything else means the instance trapped.
  function guard(f, core) {
    const raw = host.raw(core);
    try {
      return f(raw);
    } catch (e) {
      if (e instanceof Error && typeof e.code === 'string') throw e;
      const why = (e && e.message) || String(e);
      generation++;
      loaded.clear();
      try {
        host.restart();
      } catch (_) {
        // The next call reports the broken instance again.
      }
      throw ccv3Error('internal', `ccv3 internal error: ${why} (the WebAssembly instance was restarted)`);
    }
  }

  // Runs `f` and, when it needs a tokenizer vocabulary not loaded yet, loads it and runs again.
  function withTokens(preferred, f) {
    for (let attempt = 0; ; attempt++) {
      try {
        return guard(f);
      } catch (e) {
        if (!e || e.code !== 'tokenizer-unavailable' || attempt >= 2) throw e;
        const named = /cl100k/.test(e.message) ? 'cl100k' : /o200k/.test(e.message) ? 'o200k' : preferred;
        const wanted = loaded.has(named) ? (named === 'o200k' ? 'cl100k' : 'o200k') : named;
        if (loaded.has(wanted) || !host.loadVocabulary(wanted, registerVocabulary)) {
          if (host.missingVocabulary) e.message = host.missingVocabulary(named, e.message);
          throw e;
        }
      }
    }
  }

  function registerVocabulary(encoding, bytes) {
    const enc = encodingName(encoding, 'encoding');
    const data = asBytes(bytes, 'vocabulary');
    guard((raw) => raw.register_vocabulary(enc, data));
    loaded.add(enc);
  }

  function readCard(bytes, options) {
    const data = asBytes(bytes, 'bytes');
    const parse = boolOption(options, 'parseDecorators', true);
    // The card comes in two parts: the card with its book's entries empty, and the entries,
    // made on first access (see lazyValue): from their JSON text as bytes; from their text as a
    // string when the core found that the model keeps every entry as it stands (decoded by the
    // core's call, no copy of the bytes kept); or, for a big book with entries to repair, from
    // the card's text (every error was found by read_card_parts already): parsed as they stand
    // where the core found that the model keeps them (asIsEntries), else read by the core.
    const parts = guard((raw) => raw.read_card_parts(data, parse, host.latin1), READ);
    const card = fromJson(parts[0]);
    const book = card.data && card.data.character_book;
    if (book && parts[1] !== undefined) {
      const text = parts[1];
      lazyValue(book, 'entries', () => JSON.parse(utf8Decoder().decode(text)));
    } else if (book && typeof parts[2] === 'string') {
      const text = parts[2];
      lazyValue(book, 'entries', () => asStands(JSON.parse(text), parse));
    } else if (book && parts[2] !== undefined && parts[3] !== undefined) {
      const text = parts[2];
      const places = parts[3];
      lazyValue(book, 'entries', () => asIsEntries(text, places, parse));
    } else if (book && parts[2] !== undefined) {
      const text = parts[2];
      lazyValue(book, 'entries', () => fromJson(guard((raw) => raw.card_entries(text, parse), READ)));
    }
    return card;
  }

  function readCardSummary(bytes, options) {
    const data = asBytes(bytes, 'bytes');
    if (options !== undefined && options !== null && !isPlainObject(options)) {
      throw badInput(`options must be an object, got ${describe(options)}`);
    }
    const tokens = options && options.tokens;
    if (tokens === undefined || tokens === null) return fromJson(guard((raw) => raw.read_card_summary(data), READ));
    // The permanent fields' tokens, counted with the encoding `tokens` (issue 29).
    const enc = encodingName(tokens, 'options.tokens');
    return fromJson(withTokens(enc, (raw) => raw.read_card_summary(data, enc)));
  }

  // Entries parsed as they stand: each given `decorators: []` at its end when decorators are
  // split off (the model's value for an entry without decorator lines).
  function asStands(list, parse) {
    if (parse) for (let i = 0; i < list.length; i++) list[i].decorators = [];
    return list;
  }

  // A book's entries from the card text `text`: `places` is [start, end, ...reread] (see
  // read_card_parts in crates/ccv3-wasm): the array at text[start..end] parsed as it is, each
  // entry given `decorators: []` at its end when they are split off (the model's value for an
  // entry without decorator lines), and the entries at the places `reread` read by the core.
  function asIsEntries(text, places, parse) {
    const start = places[0];
    const end = places[1];
    const list = asStands(JSON.parse(utf8Decoder().decode(text.subarray(start, end))), parse);
    if (places.length > 2) {
      const reread = places.subarray(2);
      const read = fromJson(guard((raw) => raw.card_entries_at(text, start, end, reread, parse), READ));
      for (let i = 0; i < reread.length; i++) list[reread[i]] = read[i];
    }
    return list;
  }

  function readLorebook(bytes, options) {
    const data = asBytes(bytes, 'bytes');
    const parse = boolOption(options, 'parseDecorators', true);
    return fromJson(guard((raw) => raw.read_lorebook(data, parse)));
  }

  function parseDecorators(content) {
    if (typeof content !== 'string') throw badInput(`content must be a string, got ${describe(content)}`);
    return fromJson(guard((raw) => raw.parse_decorators(content)));
  }

  function serializeDecorators(decorators, content) {
    if (!Array.isArray(decorators)) throw badInput(`decorators must be an array, got ${describe(decorators)}`);
    if (content === undefined || content === null) content = '';
    if (typeof content !== 'string') throw badInput(`content must be a string, got ${describe(content)}`);
    const json = toJson(decorators, 'decorators');
    return guard((raw) => raw.serialize_decorators(json, content));
  }

  function writeCard(card, options) {
    if (!isPlainObject(card)) throw badInput(`card must be an object, got ${describe(card)}`);
    if (options !== undefined && options !== null && !isPlainObject(options)) {
      throw badInput(`options must be an object, got ${describe(options)}`);
    }
    const format = options && options.format !== undefined ? options.format : 'png';
    if (typeof format !== 'string') throw badInput(`options.format must be a string, got ${describe(format)}`);
    const image = options && options.image !== undefined && options.image !== null ? asBytes(options.image, 'options.image') : undefined;
    const files = options && options.files !== undefined && options.files !== null ? options.files : undefined;
    const json = toJson(card, 'card');
    if (files === undefined) return guard((raw) => raw.write_card(json, format, image));
    if (!Array.isArray(files)) throw badInput(`options.files must be an array, got ${describe(files)}`);
    const paths = [];
    const parts = [];
    files.forEach((f, i) => {
      if (!isPlainObject(f) || typeof f.path !== 'string') throw badInput(`options.files[${i}] must be {path, bytes}`);
      paths.push(f.path);
      parts.push(asBytes(f.bytes, `options.files[${i}].bytes`));
    });
    const lens = new Uint32Array(parts.length);
    const blob = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    parts.forEach((p, i) => {
      blob.set(p, at);
      at += p.length;
      lens[i] = p.length;
    });
    const pathsJson = toJson(paths, 'options.files');
    return guard((raw) => raw.write_card_with_files(json, format, image, pathsJson, blob, lens));
  }

  function readCardFiles(bytes) {
    const data = asBytes(bytes, 'bytes');
    const parts = guard((raw) => raw.read_card_files(data));
    const paths = fromJson(parts[0]);
    const blob = parts[1];
    const lens = parts[2];
    const out = [];
    let at = 0;
    for (let i = 0; i < paths.length; i++) {
      out.push({ path: paths[i], bytes: blob.subarray(at, at + lens[i]) });
      at += lens[i];
    }
    return out;
  }

  function writeLorebook(lorebook, options) {
    if (!isPlainObject(lorebook)) throw badInput(`lorebook must be an object, got ${describe(lorebook)}`);
    if (options !== undefined && options !== null && !isPlainObject(options)) {
      throw badInput(`options must be an object, got ${describe(options)}`);
    }
    const format = options && options.format !== undefined && options.format !== null ? options.format : undefined;
    if (format !== undefined && typeof format !== 'string') {
      throw badInput(`options.format must be a string, got ${describe(format)}`);
    }
    const json = toJson(lorebook, 'lorebook');
    return guard((raw) => raw.write_lorebook(json, format));
  }

  function validate(which, input) {
    if (typeof input === 'string') input = new TextEncoder().encode(input);
    if (isPlainObject(input)) {
      const json = toJson(input, which);
      return fromJson(guard((raw) => raw[`validate_${which}`](undefined, json)));
    }
    const data = asBytes(input, `${which}`);
    return fromJson(guard((raw) => raw[`validate_${which}`](data, undefined)));
  }

  function validateCard(bytesOrCard) {
    return validate('card', bytesOrCard);
  }

  function validateLorebook(bytesOrLorebook) {
    return validate('lorebook', bytesOrLorebook);
  }

  // One analysis (issue 27) of a card or lorebook given as bytes, text or an object, with the
  // options of `ccv3 lint`/`lore graph`/`portability`; lint needs a tokenizer vocabulary.
  function analyze(fn, what, input, options, tokens) {
    if (options === undefined || options === null) options = {};
    if (!isPlainObject(options)) throw badInput(`options must be an object, got ${describe(options)}`);
    const opts = toJson(options, 'options');
    if (typeof input === 'string') input = new TextEncoder().encode(input);
    let json;
    let data;
    if (isPlainObject(input)) json = toJson(input, what);
    else data = asBytes(input, what);
    const call = (raw) => raw[fn](data, json, opts);
    return fromJson(tokens ? withTokens(tokenizerOf(options), call) : guard(call));
  }

  function lintCard(input, options) {
    return analyze('lint_card', 'card', input, options, true);
  }

  function lintLorebook(input, options) {
    return analyze('lint_lorebook', 'lorebook', input, options, true);
  }

  function loreGraph(input, options) {
    return analyze('lore_graph', 'input', input, options, false);
  }

  function portability(input, options) {
    return analyze('portability', 'input', input, options, false);
  }

  /** Compiled lorebooks, reusable across scanLorebook calls (see compileLorebooks). */
  class CompiledLorebooks {
    constructor(handle, gen) {
      this._handle = handle;
      this._generation = gen;
    }

    /** Frees the compiled books now instead of when garbage collected. */
    free() {
      if (this._handle) {
        try {
          if (this._generation === generation) this._handle.free();
        } catch (_) {
          // Already freed or from a restarted instance.
        }
        this._handle = null;
      }
    }
  }

  function compileLorebooks(books, options) {
    if (books instanceof CompiledLorebooks) return books;
    if (options === undefined || options === null) options = {};
    const rest = requestOf(options, 'options', ['books', 'chat', 'state', 'seed', 'rejected']);
    const packed = packBooks(books, 'books');
    const json = toJson(rest, 'options');
    const handle = withTokens(tokenizerOf(options), (raw) => raw.compile_books(packed.json, packed.blob, packed.lens, json));
    return new CompiledLorebooks(handle, generation);
  }

  function requestOf(request, what, without) {
    if (!isPlainObject(request)) throw badInput(`${what} must be an object, got ${describe(request)}`);
    const rest = {};
    for (const k of Object.keys(request)) if (!without.includes(k)) rest[k] = request[k];
    return rest;
  }

  function tokenizerOf(request) {
    const t = request.tokenizer !== undefined ? request.tokenizer : request.encoding;
    return typeof t === 'string' && ENCODINGS[t] ? ENCODINGS[t] : 'o200k';
  }

  function scanLorebook(request) {
    const rest = requestOf(request, 'the request', ['books']);
    if (request.books === undefined || request.books === null) throw badInput('books is required');
    const enc = tokenizerOf(request);
    if (request.books instanceof CompiledLorebooks) {
      const compiled = request.books;
      if (!compiled._handle || compiled._generation !== generation) {
        throw badInput('books: these compiled lorebooks were freed or belong to a restarted instance; compile them again');
      }
      const turn = {};
      // Per-scan keys; the rest were fixed at compile time.
      for (const k of ['chat', 'state', 'seed', 'rejected', 'stTimed', 'st_timed', 'stActivated', 'st_activated']) {
        if (request[k] !== undefined) turn[k] = request[k];
      }
      const turnJson = toJson(turn, 'the request');
      return fromJson(withTokens(enc, (raw) => raw.scan_compiled(compiled._handle, turnJson)));
    }
    const packed = packBooks(request.books, 'books');
    const json = toJson(rest, 'the request');
    return fromJson(withTokens(enc, (raw) => raw.scan_lorebook(packed.json, packed.blob, packed.lens, json)));
  }

  function sillyTavernScanOptions(request) {
    if (!isPlainObject(request)) throw badInput(`the request must be an object, got ${describe(request)}`);
    const json = toJson(request, 'the request');
    return fromJson(guard((raw) => raw.sillytavern_scan_options(json)));
  }

  function buildPrompt(request) {
    const rest = requestOf(request, 'the request', ['card', 'books']);
    const card = request.card;
    let cardJson;
    let cardBytes;
    if (isPlainObject(card)) cardJson = toJson(card, 'card');
    else if (card !== undefined && card !== null) cardBytes = asBytes(card, 'card');
    else throw badInput('card is required');
    const books = request.books === undefined || request.books === null ? [] : request.books;
    const packed = packBooks(books, 'books');
    const json = toJson(rest, 'the request');
    return fromJson(
      withTokens(tokenizerOf(request), (raw) =>
        raw.build_prompt(cardJson, cardBytes, packed.json, packed.blob, packed.lens, json),
      ),
    );
  }

  function expandMacros(text, context) {
    if (typeof text !== 'string') throw badInput(`text must be a string, got ${describe(text)}`);
    if (context === undefined || context === null) context = {};
    if (!isPlainObject(context)) throw badInput(`context must be an object, got ${describe(context)}`);
    const ctx = Object.assign({}, context);
    if (ctx.now instanceof Date) ctx.now = ctx.now.toISOString();
    const json = toJson(ctx, 'context');
    return guard((raw) => raw.expand_macros(text, json));
  }

  function countTokens(text, encoding) {
    if (typeof text !== 'string') throw badInput(`text must be a string, got ${describe(text)}`);
    const enc = encodingName(encoding, 'encoding');
    return withTokens(enc, (raw) => raw.count_tokens(text, enc));
  }

  return {
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
    version: host.version,
  };
}
