// Module hooks shared by the SillyTavern harnesses (scripts/st-compare, scripts/st-engine-compare;
// our own code). Register with
//   register(new URL('../st-stub-hooks.mjs', import.meta.url), { data: { scopeUrl, stubsUrl } })
// Modules inside `scopeUrl` (one file's URL, or a folder's URL ending in '/') load as they are;
// every module they import from outside it (SillyTavern's UI, chat state, libraries) is replaced
// by a generated stub that re-exports the names asked for from `stubsUrl`, or its do-nothing
// stand-in `ANY`.
import { readFileSync } from 'node:fs';

const SCHEME = 'st-stub:';
let scopeUrl = '';
let stubsUrl = '';

export async function initialize(data) {
    scopeUrl = data.scopeUrl;
    stubsUrl = data.stubsUrl;
}

/** The URL `specifier` names from `parent`; absolute paths count as outside every scope. */
function targetOf(specifier, parent) {
    if (specifier.startsWith('/')) return 'file:///outside' + specifier;
    try {
        return new URL(specifier, parent).href;
    } catch {
        return specifier;
    }
}

export async function resolve(specifier, context, next) {
    const parent = context.parentURL || '';
    if (scopeUrl && parent.startsWith(scopeUrl) && !targetOf(specifier, parent).startsWith(scopeUrl)) {
        const id = encodeURIComponent(specifier) + '|' + encodeURIComponent(parent);
        return { url: SCHEME + id, shortCircuit: true };
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
    if (url.startsWith(SCHEME)) {
        const [spec, parent] = url.slice(SCHEME.length).split('|').map(decodeURIComponent);
        const lines = [`import * as S from ${JSON.stringify(stubsUrl)};`];
        for (const name of importedNames(spec, parent)) {
            lines.push(`export const ${name} = (${JSON.stringify(name)} in S) ? S[${JSON.stringify(name)}] : S.ANY;`);
        }
        return { format: 'module', source: lines.join('\n'), shortCircuit: true };
    }
    return next(url, context);
}
