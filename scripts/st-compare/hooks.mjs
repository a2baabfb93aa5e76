// Module hooks for the SillyTavern comparison harness (our own code).
// Every module that SillyTavern's world-info.js imports is replaced by a generated stub that
// re-exports the names it asks for from stubs.mjs (or a do-nothing stand-in).
import { readFileSync } from 'node:fs';

let wiUrl = '';
let wiSource = '';
const stubsUrl = new URL('./stubs.mjs', import.meta.url).href;

export async function initialize(data) {
    wiUrl = data.wiUrl;
    wiSource = readFileSync(new URL(wiUrl), 'utf8');
}

export async function resolve(specifier, context, next) {
    if (context.parentURL === wiUrl && specifier !== wiUrl) {
        return { url: 'stcompare-stub:' + encodeURIComponent(specifier), shortCircuit: true };
    }
    return next(specifier, context);
}

/** The names world-info.js imports from `spec`. */
function importedNames(spec) {
    const names = new Set();
    const re = /import\s*\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g;
    for (const m of wiSource.matchAll(re)) {
        if (m[2] !== spec) continue;
        for (const part of m[1].split(',')) {
            const name = part.trim().split(/\s+as\s+/)[0].trim();
            if (name) names.add(name);
        }
    }
    return [...names];
}

export async function load(url, context, next) {
    if (url.startsWith('stcompare-stub:')) {
        const spec = decodeURIComponent(url.slice('stcompare-stub:'.length));
        const lines = [`import * as S from ${JSON.stringify(stubsUrl)};`];
        for (const name of importedNames(spec)) {
            lines.push(`export const ${name} = (${JSON.stringify(name)} in S) ? S[${JSON.stringify(name)}] : S.ANY;`);
        }
        return { format: 'module', source: lines.join('\n'), shortCircuit: true };
    }
    return next(url, context);
}
