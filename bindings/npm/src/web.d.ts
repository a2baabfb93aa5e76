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
 * Fetches, compiles and instantiates only the read core (`web/ccv3_read_bg.wasm`, about a third of
 * the full core): enough for `readCard`, its entries and `readCardSummary` without token counts,
 * so that a page that only reads cards (a character list, an import preview) waits for less.
 * Every other call throws an error with code `not-initialized` until `init()` has loaded the full
 * core, which can be called later. Safe to call more than once, and before or after `init()`.
 *
 * @example
 * ```js
 * import { initReadCore, readCard } from 'ccv3/web';
 *
 * await initReadCore(); // fetches web/ccv3_read_bg.wasm, beside the module
 * const response = await fetch('examples/ember.png');
 * console.log(readCard(new Uint8Array(await response.arrayBuffer())).data.name); // => Ember Vale
 * ```
 */
export declare function initReadCore(input?: InitInput | Promise<InitInput> | { module_or_path: InitInput }): Promise<void>;
/**
 * Instantiates the read core synchronously from its bytes or a compiled module (see `initReadCore`).
 *
 * @example
 * ```js
 * import { initReadCoreSync, readCard } from 'ccv3/web';
 *
 * const url = new URL('ccv3_read_bg.wasm', import.meta.resolve('ccv3/web'));
 * initReadCoreSync(await (await fetch(url)).arrayBuffer());
 * const card = await (await fetch('examples/ember.png')).arrayBuffer();
 * console.log(readCard(new Uint8Array(card)).data.name); // => Ember Vale
 * ```
 */
export declare function initReadCoreSync(input: BufferSource | WebAssembly.Module | { module: BufferSource | WebAssembly.Module }): void;
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
