// TypeScript declarations for `ccv3/web` (browsers): call `await init()` first.
/**
 * The npm package `ccv3` in browsers and bundlers: the functions of `ccv3`, usable once
 * `await init()` has loaded the WebAssembly core; `await loadTokenizer()` before the functions
 * that count tokens.
 *
 * @module ccv3/web
 */
export * from '../index.mjs';

/** What init accepts: nothing (the .wasm beside the module), a URL, a Response, bytes or a compiled module. */
export type InitInput = string | URL | Request | Response | BufferSource | WebAssembly.Module;

/**
 * Fetches, compiles and instantiates the WebAssembly core. Safe to call more than once.
 *
 * @example
 * ```js
 * import init, { readCard } from 'ccv3/web';
 *
 * await init(); // fetches web/ccv3_wasm_bg.wasm, beside the module (or pass its URL, a Response or the bytes)
 * const response = await fetch('examples/ember.png');
 * const card = readCard(new Uint8Array(await response.arrayBuffer()));
 * console.log(card.data.name); // => Ember Vale
 * ```
 */
export default function init(input?: InitInput | Promise<InitInput> | { module_or_path: InitInput }): Promise<void>;
/**
 * Instantiates the WebAssembly core synchronously from its bytes or a compiled module.
 *
 * @example
 * ```js
 * import { initSync, readCardSummary } from 'ccv3/web';
 *
 * // Where the bytes are at hand already (a worker that was sent them, a test); init() fetches them.
 * const url = new URL('ccv3_wasm_bg.wasm', import.meta.resolve('ccv3/web'));
 * initSync(await (await fetch(url)).arrayBuffer());
 * const card = await (await fetch('examples/ember.png')).arrayBuffer();
 * console.log(readCardSummary(new Uint8Array(card)).name); // => Ember Vale
 * ```
 */
export declare function initSync(input: BufferSource | WebAssembly.Module | { module: BufferSource | WebAssembly.Module }): void;
/**
 * Loads a tokenizer vocabulary (default: the file shipped in the package's `vocab/`).
 *
 * @example
 * ```js
 * import init, { countTokens, loadTokenizer } from 'ccv3/web';
 *
 * await init();
 * await loadTokenizer('o200k'); // before countTokens, scanLorebook, compileLorebooks and buildPrompt
 * console.log(countTokens('hello world')); // => 2
 * ```
 */
export declare function loadTokenizer(encoding?: 'o200k' | 'cl100k', source?: string | URL | Response | BufferSource): Promise<void>;
