// TypeScript declarations for `ccv3/web` (browsers): call `await init()` first.
export * from '../index.mjs';

/** What init accepts: nothing (the .wasm beside the module), a URL, a Response, bytes or a compiled module. */
export type InitInput = string | URL | Request | Response | BufferSource | WebAssembly.Module;

/** Fetches, compiles and instantiates the WebAssembly core. Safe to call more than once. */
export default function init(input?: InitInput | Promise<InitInput> | { module_or_path: InitInput }): Promise<void>;
/** Instantiates the WebAssembly core synchronously from its bytes or a compiled module. */
export declare function initSync(input: BufferSource | WebAssembly.Module | { module: BufferSource | WebAssembly.Module }): void;
/** Loads a tokenizer vocabulary (default: the file shipped in the package's `vocab/`). */
export declare function loadTokenizer(encoding?: 'o200k' | 'cl100k', source?: string | URL | Response | BufferSource): Promise<void>;
