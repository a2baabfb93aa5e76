// Runs SillyTavern's own checkWorldInfo (public/scripts/world-info.js of a checkout, loaded
// with its imports stubbed by ../st-stub-hooks.mjs) on a scenario, turn by turn. Our own code.
import { register } from 'node:module';
import { existsSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as stubs from './stubs.mjs';

/** Loads world-info.js from a checkout directory or the file itself. */
export async function loadST(path) {
    let file = path;
    if (existsSync(path) && statSync(path).isDirectory()) file = `${path}/public/scripts/world-info.js`;
    if (!existsSync(file)) throw new Error(`no world-info.js at ${file}`);
    const wiUrl = pathToFileURL(file).href;
    const stubsUrl = new URL('./stubs.mjs', import.meta.url).href;
    register(new URL('../st-stub-hooks.mjs', import.meta.url), { data: { scopeUrl: wiUrl, stubsUrl } });
    const quiet = { debug: console.debug, log: console.log, warn: console.warn, error: console.error };
    console.debug = console.log = console.warn = () => {};
    try {
        return await import(wiUrl);
    } finally {
        console.error = quiet.error;
        Object.assign(console, { debug: quiet.debug, log: quiet.log, warn: quiet.warn });
    }
}

/** SillyTavern's position numbers as ccv3 names them in `--json`. */
export const POSITIONS = ['before_char', 'after_char', 'an_top', 'an_bottom', 'at_depth', 'examples_top', 'examples_bottom', 'outlet'];

/**
 * Runs every turn of `scenario` ({settings, books: [{name, entries}], turns: [{chat}]}) and
 * returns, per turn, {activated: ["book#uid" in activation order], prompt: {"pos[/depth/role]": [...]}}.
 */
export async function runScenario(wi, scenario) {
    const s = scenario.settings;
    for (const k of Object.keys(stubs.chat_metadata)) delete stubs.chat_metadata[k];
    wi.worldInfoCache.clear();
    const names = scenario.books.map((b) => b.name);
    for (const b of scenario.books) wi.worldInfoCache.set(b.name, { entries: b.entries });
    const saved = { debug: console.debug, log: console.log, warn: console.warn };
    console.debug = console.log = console.warn = () => {};
    try {
        wi.setWorldInfoSettings({
            world_info: names,
            world_info_depth: s.depth ?? 2,
            world_info_min_activations: s.min_activations ?? 0,
            world_info_min_activations_depth_max: s.min_activations_depth_max ?? 0,
            world_info_budget: 100,
            world_info_budget_cap: 0,
            world_info_include_names: s.include_names ?? true,
            world_info_recursive: !!s.recursive,
            world_info_overflow_alert: false,
            world_info_case_sensitive: !!s.case_sensitive,
            world_info_match_whole_words: s.match_whole_words ?? true,
            world_info_use_group_scoring: !!s.group_scoring,
            world_info_character_strategy: 0,
            world_info_max_recursion_steps: s.max_recursion_steps ?? 0,
        }, { world_names: names });
        const out = [];
        for (const turn of scenario.turns) {
            const chat = turn.chat
                .map((m) => ((s.include_names ?? true) ? `${m.name}: ${m.content}` : m.content))
                .reverse();
            const maxContext = s.budget ?? 1e9;
            const res = await wi.checkWorldInfo(chat, maxContext, false);
            const acts = [...res.allActivatedEntries];
            const activated = acts.map((e) => `${e.world}#${e.uid}`);
            // The prompt: SillyTavern sorts by order (highest first, stable) and unshifts into
            // each position's list, so each list is that order reversed.
            const sorted = [...acts].sort((a, b) => b.order - a.order);
            const prompt = {};
            for (const e of sorted) {
                let key = POSITIONS[e.position] ?? `position_${e.position}`;
                if (e.position === 4) key += `/${e.depth ?? 4}/${e.role ?? 0}`;
                (prompt[key] ??= []).unshift(`${e.world}#${e.uid}`);
            }
            out.push({ activated, prompt });
        }
        return out;
    } finally {
        Object.assign(console, saved);
    }
}
