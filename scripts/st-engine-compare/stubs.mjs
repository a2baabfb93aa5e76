// Stand-ins for the SillyTavern modules the macro engine imports (our own code). Only what the
// engine and its core/variable/env macro definitions call while expanding text is real here.
export const chevrotain = await import(process.env.CHEVROTAIN_URL);
// moment and droll are the real npm packages SillyTavern bundles (run.sh installs them).
import { createRequire } from 'node:module';
const requireNode = createRequire(process.env.ST_NODE_DIR + '/');
export const moment = requireNode('moment');
export const droll = requireNode('droll');


/** A value usable as anything: a do-nothing function with any property. */
export const ANY = new Proxy(function () {}, {
    get: (t, p) => (p === Symbol.toPrimitive ? () => '' : ANY),
    apply: () => ANY,
    construct: () => ANY,
});

export function isFalseBoolean(arg) {
    return ['off', 'false', '0'].includes(arg?.trim()?.toLowerCase());
}
export function isTrueBoolean(arg) {
    return ['on', 'true', '1'].includes(arg?.trim()?.toLowerCase());
}
export function getStringHash(str) {
    let h = 0;
    for (const c of String(str)) h = (Math.imul(31, h) + c.codePointAt(0)) | 0;
    return h;
}
export function escapeRegex(s) {
    return String(s).replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&');
}
export const t = (strings, ...values) => String.raw({ raw: strings }, ...values);
export const power_user = { context: {}, instruct: {} };
export const chat_metadata = {};
export const extension_prompts = {};
export const inject_ids = {};
export const textgenerationwebui_banned_in_macros = [];
export const main_api = 'openai';
export const chat = [];
export const name1 = 'Bob';
export const name2 = 'Alice';
export const characters = [];
export const groups = [];
export const selected_group = null;
export const getCurrentChatId = () => 'chat';
export class SimpleMutex { async update() {} }
export function seedrandom() { return () => 0.5; }

// SillyTavern's own `parseMesExamples`, read at run time from the package's public/script.js
// (nothing of it is kept here) and run with the settings above (chat completion, no separator).
import { readFileSync } from 'node:fs';
function packageFunction(file, name, ...params) {
    const source = readFileSync(process.env.ST_ROOT + '/' + file, 'utf8');
    const start = source.indexOf(`export function ${name}(`);
    const end = source.indexOf('\n}\n', start);
    if (start < 0 || end < 0) throw new Error(`${name} not found in ${file}`);
    const body = source.slice(start + 'export '.length, end + 2);
    return new Function(...params, `${body}\nreturn ${name};`);
}
export const parseMesExamples = packageFunction('public/script.js', 'parseMesExamples',
    'power_user', 'main_api', 'substituteParams')(power_user, 'openai', (x) => x);
