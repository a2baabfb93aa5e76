// Observes RisuAI's RPack table by running RisuAI's own published encoder, and writes what it saw.
// Our own code; nothing of RisuAI is kept in this repository. See README.md beside this file.
//
// node observe.mjs --risuai RISUAI_GIT_DIR_OR_CHECKOUT [--rev HEAD]
//                  [--table OUT.rs] [--module MODULE.json --risum OUT.risum]
// node observe.mjs --wasm rpack_bg.wasm ...   (the encoder file itself, no provenance but its hash)
//
// RisuAI encodes `.risum` blocks with `encodeRPack` (its src/ts/rpack/rpack_bg.js), a WebAssembly
// module (src/ts/rpack/rpack_bg.wasm) with exports `encode` and `decode`. This script loads that
// module as it is, calls `encode` and `decode` on every byte value 0..255, checks that both are
// byte-for-byte substitutions (each byte maps to one byte wherever it stands in a block) and
// inverse bijections, and writes the decoding table as Rust data. With --module it also writes a
// `.risum` file of a module we author, laid out as RisuAI's exportModule lays it out, every block
// encoded by RisuAI's `encode`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const args = process.argv.slice(2);
function opt(name, dflt) {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : dflt;
}
function fail(msg) {
    console.error(`observe.mjs: ${msg}`);
    process.exit(1);
}

const WASM_PATH = 'src/ts/rpack/rpack_bg.wasm';

/** The encoder's bytes and where they came from. */
function loadEncoder() {
    const wasmFile = opt('wasm');
    if (wasmFile) {
        return { bytes: readFileSync(wasmFile), source: `the file ${wasmFile}` };
    }
    const risuai = opt('risuai');
    if (!risuai) fail('give --risuai RISUAI_GIT_DIR_OR_CHECKOUT or --wasm FILE');
    const rev = opt('rev', 'HEAD');
    // A checkout (with a work tree; `.git` a folder or, in a worktree, a file) or a bare/mirror
    // git directory: read the file at `rev`.
    const where = existsSync(join(risuai, '.git')) ? ['-C', risuai] : ['--git-dir', risuai];
    const git = (...a) => execFileSync('git', [...where, ...a], { maxBuffer: 1 << 26 });
    const commit = git('rev-parse', `${rev}^{commit}`).toString().trim();
    const date = git('show', '-s', '--format=%cI', commit).toString().trim();
    const bytes = git('show', `${commit}:${WASM_PATH}`);
    return { bytes, source: `RisuAI (github.com/kwaroran/RisuAI), commit\n//! ${commit} (${date}),\n//! file ${WASM_PATH}` };
}

/** RisuAI's `encode`/`decode` exports, called through the wasm-bindgen calling convention. */
function instantiate(bytes) {
    const module = new WebAssembly.Module(bytes);
    const imports = WebAssembly.Module.imports(module);
    if (imports.length) fail(`the encoder wants imports ${JSON.stringify(imports)}; not the expected module`);
    const x = new WebAssembly.Instance(module, {}).exports;
    for (const f of ['encode', 'decode', '__wbindgen_malloc', '__wbindgen_free', '__wbindgen_add_to_stack_pointer']) {
        if (typeof x[f] !== 'function') fail(`the encoder has no export ${f}`);
    }
    // Input: copied into memory the module allocates. Output: a (pointer, length) pair the
    // function writes at a return slot on the module's stack, which we copy and then free.
    const call = (fn, data) => {
        const slot = x.__wbindgen_add_to_stack_pointer(-16);
        try {
            const ptr = x.__wbindgen_malloc(data.length, 1) >>> 0;
            new Uint8Array(x.memory.buffer).set(data, ptr);
            fn(slot, ptr, data.length);
            const view = new DataView(x.memory.buffer);
            const outPtr = view.getInt32(slot, true) >>> 0;
            const outLen = view.getInt32(slot + 4, true) >>> 0;
            const out = new Uint8Array(x.memory.buffer, outPtr, outLen).slice();
            x.__wbindgen_free(outPtr, outLen, 1);
            return out;
        } finally {
            x.__wbindgen_add_to_stack_pointer(16);
        }
    };
    return { encode: (d) => call(x.encode, d), decode: (d) => call(x.decode, d) };
}

/** A deterministic byte stream (xorshift32), for blocks of mixed bytes. */
function bytesFrom(seed, n) {
    let s = seed >>> 0 || 1;
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
        s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
        out[i] = s & 255;
    }
    return out;
}

/** Observes the tables and checks what ccv3 relies on: a position-free byte substitution. */
function observe(rpack) {
    const enc = new Uint8Array(256);
    const dec = new Uint8Array(256);
    for (let b = 0; b < 256; b++) {
        const e = rpack.encode(Uint8Array.of(b));
        const d = rpack.decode(Uint8Array.of(b));
        if (e.length !== 1 || d.length !== 1) fail(`byte ${b}: encode gave ${e.length} bytes, decode ${d.length}; not a substitution`);
        enc[b] = e[0];
        dec[b] = d[0];
    }
    for (let b = 0; b < 256; b++) {
        if (dec[enc[b]] !== b) fail(`decode(encode(${b})) is ${dec[enc[b]]}, not ${b}`);
        if (enc[dec[b]] !== b) fail(`encode(decode(${b})) is ${enc[dec[b]]}, not ${b}`);
    }
    if (new Set(enc).size !== 256 || new Set(dec).size !== 256) fail('encode or decode maps two bytes to one');
    // The same substitution wherever a byte stands: all bytes in order and reversed, a run of
    // zeros, and mixed blocks of many lengths.
    const blocks = [
        Uint8Array.from({ length: 256 }, (_, i) => i),
        Uint8Array.from({ length: 256 }, (_, i) => 255 - i),
        new Uint8Array(1000),
        new Uint8Array(0),
    ];
    for (let k = 1; k <= 64; k++) blocks.push(bytesFrom(k * 2654435761, k * 97));
    let checked = 0;
    for (const block of blocks) {
        const e = rpack.encode(block);
        const d = rpack.decode(block);
        if (e.length !== block.length || d.length !== block.length) fail(`a ${block.length}-byte block changed length`);
        for (let i = 0; i < block.length; i++) {
            if (e[i] !== enc[block[i]] || d[i] !== dec[block[i]]) fail(`byte ${i} of a ${block.length}-byte block is not substituted as alone`);
        }
        const back = rpack.decode(e);
        if (back.some((v, i) => v !== block[i])) fail(`a ${block.length}-byte block does not decode back`);
        checked += block.length;
    }
    return { enc, dec, checked, blocks: blocks.length };
}

/** The decoding table as a Rust source file, with where and how it was observed. */
function rustTable(dec, source, hash, checked, blocks) {
    const rows = [];
    for (let i = 0; i < 256; i += 16) {
        rows.push('    ' + Array.from(dec.slice(i, i + 16), (v) => `${v},`).join(' '));
    }
    return `//! RisuAI's RPack decoding table, as observed by running RisuAI's own encoder.
//!
//! Generated by \`scripts/risum-table/observe.mjs\`; do not edit. Observed from
//! ${source},
//! sha256 \`${hash}\`.
//! Its \`encode\` and \`decode\` run on each byte value 0..255 gave one byte each and were inverse
//! bijections, and ${blocks} blocks (${checked} bytes) checked that every byte is substituted the
//! same wherever it stands. To observe it again (after a
//! RisuAI release): \`node scripts/risum-table/observe.mjs --risuai RISUAI_GIT_DIR --table
//! crates/ccv3/src/lorebook/risum_table.rs\` (see \`scripts/risum-table/README.md\`).

/// Byte \`b\` of an RPack-encoded block stands for \`RISUAI_DECODE[b]\`.
#[rustfmt::skip]
pub const RISUAI_DECODE: [u8; 256] = [
${rows.join('\n')}
];
`;
}

/** A \`.risum\` file of the module at \`path\`, laid out as RisuAI's exportModule lays it out. */
function risumOf(path, rpack) {
    const module = JSON.parse(readFileSync(path, 'utf8'));
    // A module's assets are [name, data, ext]; here `data` names a file beside the module. Export
    // writes the list with the data blanked, and each asset's bytes as a block after the main one.
    const assets = (module.assets ?? []).map((a) => readFileSync(resolve(dirname(path), a[1])));
    module.assets = (module.assets ?? []).map((a) => [a[0], '', a[2]]);
    const main = Buffer.from(JSON.stringify({ module, type: 'risuModule' }, null, 2), 'utf8');
    const parts = [Uint8Array.of(111, 0)];
    const length = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n, 0); return b; };
    const encodedMain = rpack.encode(main);
    parts.push(length(encodedMain.length), encodedMain);
    for (const a of assets) {
        const e = rpack.encode(a);
        parts.push(Uint8Array.of(1), length(e.length), e);
    }
    parts.push(Uint8Array.of(0));
    return Buffer.concat(parts);
}

const { bytes, source } = loadEncoder();
const hash = createHash('sha256').update(bytes).digest('hex');
const rpack = instantiate(bytes);
const { dec, enc, checked, blocks } = observe(rpack);
console.log(`observed from ${source.replaceAll('\n//! ', ' ')}`);
console.log(`encoder sha256 ${hash}; bijection on 0..255; ${blocks} blocks, ${checked} bytes substituted as alone`);
console.log(`encode: ${Buffer.from(enc).toString('hex')}`);
console.log(`decode: ${Buffer.from(dec).toString('hex')}`);
const table = opt('table');
if (table) {
    writeFileSync(table, rustTable(dec, source, hash, checked, blocks));
    console.log(`wrote ${table}`);
}
const modulePath = opt('module');
if (modulePath) {
    const out = opt('risum');
    if (!out) fail('--module needs --risum OUT.risum');
    writeFileSync(out, risumOf(modulePath, rpack));
    console.log(`wrote ${out}`);
}
