// Runs SillyTavern's own MacroEngine (from the npm package, not kept here) on cases read as
// JSON lines from stdin ({"text", "local"?, "global"?, "mes_example"?}) and prints one JSON line per case:
// {"text", "output"} (our own code).
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

const stRoot = process.argv[2];
process.env.ST_ROOT = stRoot;
const macrosUrl = pathToFileURL(stRoot + '/public/scripts/macros/').href;
const stubsUrl = new URL('./stubs.mjs', import.meta.url).href;
register(new URL('../st-stub-hooks.mjs', import.meta.url), { data: { scopeUrl: macrosUrl, stubsUrl } });

function vars(map) {
    return {
        // As variables.js getLocalVariable: numbers come back as numbers, unset as ''.
        get: (k) => {
            const v = map.get(k);
            return (v?.trim?.() === '' || isNaN(Number(v))) ? (v || '') : Number(v);
        },
        has: (k) => map.has(k),
        set: (k, v) => map.set(k, String(v)),
        add: (k, v) => {
            const cur = map.get(k) ?? 0;
            const [a, b] = [Number(cur), Number(v)];
            map.set(k, !isNaN(a) && !isNaN(b) && String(v).trim() !== '' ? String(a + b) : String(cur) + String(v));
            return '';
        },
        inc: (k) => { const n = Number(map.get(k) ?? 0) + 1; map.set(k, String(n)); return n; },
        dec: (k) => { const n = Number(map.get(k) ?? 0) - 1; map.set(k, String(n)); return n; },
    };
}

const local = new Map();
const global = new Map();
globalThis.SillyTavern = {
    getContext: () => ({ variables: { local: vars(local), global: vars(global) } }),
};

const base = macrosUrl;
const { MacroEngine } = await import(base + 'engine/MacroEngine.js');
const { registerCoreMacros } = await import(base + 'definitions/core-macros.js');
const { registerVariableMacros } = await import(base + 'definitions/variable-macros.js');
const { registerEnvMacros } = await import(base + 'definitions/env-macros.js');
const { registerTimeMacros } = await import(base + 'definitions/time-macros.js');
registerCoreMacros();
registerVariableMacros();
registerEnvMacros();
registerTimeMacros();

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
    if (!line.trim()) continue;
    const c = JSON.parse(line);
    local.clear();
    global.clear();
    for (const [k, v] of Object.entries(c.local ?? {})) local.set(k, v);
    for (const [k, v] of Object.entries(c.global ?? {})) global.set(k, v);
    const env = {
        content: c.text,
        contentHash: 0,
        names: { user: 'Bob', char: 'Alice', group: 'Alice', groupNotMuted: 'Alice', notChar: 'Bob' },
        // As getCharacterCardFields: the card's mes_example trimmed (cases hold no macros there).
        character: { mesExamplesRaw: (c.mes_example ?? '').trim() },
        system: { model: '' },
        functions: { postProcess: (x) => x },
        dynamicMacros: {},
        extra: {},
    };
    let output;
    try {
        output = MacroEngine.evaluate(c.text, env);
    } catch (e) {
        output = 'ERROR: ' + e.message;
    }
    console.log(JSON.stringify({ text: c.text, output }));
}
