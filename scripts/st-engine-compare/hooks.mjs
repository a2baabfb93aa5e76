// Module hooks for the SillyTavern macro engine comparison (our own code).
// The engine's modules (public/scripts/macros/) load as they are; every other module they import
// (SillyTavern's UI, chat state, lib.js) is replaced by a generated stub that re-exports the
// names asked for from stubs.mjs, or a do-nothing stand-in.
import { readFileSync } from 'node:fs';

let macrosUrl = '';
const stubsUrl = new URL('./stubs.mjs', import.meta.url).href;

export async function initialize(data) {
    macrosUrl = data.macrosUrl;
}

export async function resolve(specifier, context, next) {
    const parent = context.parentURL || '';
    if (parent.startsWith(macrosUrl)) {
        const target = specifier.startsWith('/')
            ? 'file:///outside' + specifier
            : new URL(specifier, parent).href;
        if (!target.startsWith(macrosUrl)) {
            const id = encodeURIComponent(specifier) + '|' + encodeURIComponent(parent);
            return { url: 'stengine-stub:' + id, shortCircuit: true };
        }
    }
    return next(specifier, context);
}

/** The names `parent` imports from `spec`. */
function importedNames(spec, parent) {
    const source = readFileSync(new URL(parent), 'utf8');
    const names = new Set();
    const re = /import\s*\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g;
    for (const m of source.matchAll(re)) {
        if (m[2] !== spec) continue;
        for (const part of m[1].split(',')) {
            const name = part.trim().split(/\s+as\s+/)[0].trim();
            if (name) names.add(name);
        }
    }
    return [...names];
}

export async function load(url, context, next) {
    if (url.startsWith('stengine-stub:')) {
        const [spec, parent] = url.slice('stengine-stub:'.length).split('|').map(decodeURIComponent);
        const lines = [`import * as S from ${JSON.stringify(stubsUrl)};`];
        for (const name of importedNames(spec, parent)) {
            lines.push(`export const ${name} = (${JSON.stringify(name)} in S) ? S[${JSON.stringify(name)}] : S.ANY;`);
        }
        return { format: 'module', source: lines.join('\n'), shortCircuit: true };
    }
    return next(url, context);
}
