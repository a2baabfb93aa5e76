// Stand-ins for the browser and application modules SillyTavern's world-info.js imports.
// Our own code: only what checkWorldInfo needs behaves; everything else is a do-nothing proxy.

/** A callable, constructible object whose every property is itself: UI code runs and does nothing. */
function makeAny() {
    const target = function () {};
    const proxy = new Proxy(target, {
        get(_t, prop) {
            if (prop === Symbol.toPrimitive) return () => '';
            if (prop === Symbol.iterator) return function* () {};
            if (prop === 'then') return undefined;
            if (prop === 'length') return 0;
            return proxy;
        },
        apply() { return proxy; },
        construct() { return proxy; },
        set() { return true; },
        has() { return true; },
    });
    return proxy;
}
export const ANY = makeAny();
globalThis.$ = ANY;
globalThis.jQuery = ANY;
globalThis.toastr = ANY;
globalThis.document = ANY;
globalThis.window = globalThis;
globalThis.localStorage ??= { getItem: () => null, setItem() {}, removeItem() {} };

/** Per-chat metadata: timed effects live here between turns. The driver resets it per scenario. */
export const chat_metadata = {};
export const characters = [];
export const this_chid = undefined;
export const power_user = {};
export const extension_settings = { note: {} };
export const extension_prompt_roles = { SYSTEM: 0, USER: 1, ASSISTANT: 2 };
export const shouldWIAddPrompt = false;
export const NOTE_MODULE_NAME = '2_floating_prompt';
export const metadata_keys = { prompt: 'note_prompt', interval: 'note_interval', depth: 'note_depth', position: 'note_position', role: 'note_role' };
export const event_types = new Proxy({}, { get: (_t, p) => String(p) });
export const eventSource = { on() {}, emit: async () => {}, once() {}, removeListener() {} };
export const debounce_timeout = { quick: 100, short: 200, standard: 300, relaxed: 1000, extended: 5000 };
export const regex_placement = { WORLD_INFO: 5 };

/** `{{user}}` and `{{char}}` as the harness names them (`ccv3 --user User --char Char`). */
export function substituteParams(text) {
    return String(text ?? '').replace(/\{\{user\}\}|<user>/gi, 'User').replace(/\{\{char\}\}|<char>|<bot>/gi, 'Char');
}
export function getRegexedString(text) { return text; }
export function getCharaFilename() { return ''; }
export function getTagKeyForEntity() { return undefined; }
export function getExtensionPromptByName() { return ''; }
export function getContext() { return { extensionPrompts: {}, tagMap: {}, setExtensionPrompt() {} }; }
export function debounce(fn) { return fn; }
export function cancelDebounce() {}
export function isTrueBoolean(v) { return ['on', 'true', '1'].includes(String(v).trim().toLowerCase()); }
export function isFalseBoolean(v) { return ['off', 'false', '0'].includes(String(v).trim().toLowerCase()); }
export function escapeRegex(s) { return s.replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&'); }
export function onlyUnique(v, i, a) { return a.indexOf(v) === i; }
export function parseStringArray(s) { try { const v = JSON.parse(s); return Array.isArray(v) ? v : []; } catch { return []; } }
export function equalsIgnoreCaseAndAccents(a, b) { return String(a).localeCompare(String(b), undefined, { sensitivity: 'base' }) === 0; }

/** FNV-1a over UTF-16 units: entry identity for timed effects (any stable hash will do here). */
export function getStringHash(str) {
    let h = 0x811c9dc5;
    for (let i = 0; i < str.length; i++) {
        h ^= str.charCodeAt(i);
        h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h;
}

/** SillyTavern's "guesstimate" tokenizer, the same as `ccv3 --tokenizer estimate`. */
export async function getTokenCountAsync(text) {
    if (!text) return 0;
    return Math.ceil((text.length * 100) / 335);
}

/** A map whose values are cloned on read. */
export class StructuredCloneMap extends Map {
    constructor() { super(); }
    get(key) {
        const v = super.get(key);
        return v === undefined ? v : structuredClone(v);
    }
}
