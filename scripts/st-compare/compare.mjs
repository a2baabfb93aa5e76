// The comparison: the same books and chats to SillyTavern's checkWorldInfo and to
// `ccv3 lore scan --json`, in default mode and with `--compat sillytavern`. Our own code.
//
// node compare.mjs --st ST_CHECKOUT_OR_WORLD_INFO_JS --ccv3 BIN [--n 2000] [--seed 1]
//   [--real FILE...] [--record FIXTURE.json] [--no-ccv3] [--show 5]
// --no-ccv3 runs SillyTavern only (to record fixtures).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadST, runScenario } from './st.mjs';
import { scenario } from './gen.mjs';
import { realScenarios } from './real.mjs';

const args = process.argv.slice(2);
function opt(name, dflt) {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : dflt;
}
function many(name) {
    const out = [];
    args.forEach((a, i) => { if (a === `--${name}`) out.push(args[i + 1]); });
    return out;
}
const stPath = opt('st');
const bin = opt('ccv3', 'target/release/ccv3');
const n = Number(opt('n', '2000'));
const seed = Number(opt('seed', '1'));
const show = Number(opt('show', '5'));
const record = opt('record');
if (!stPath) throw new Error('--st PATH is required (a SillyTavern checkout or its world-info.js)');

/** Names the SillyTavern used: its package.json's version when there is one, else the path's last part. */
function stLabel(path) {
    const pkg = join(path, 'package.json');
    try {
        if (existsSync(pkg)) {
            const { version } = JSON.parse(readFileSync(pkg, 'utf8'));
            if (typeof version === 'string') return `sillytavern-${version}`;
        }
    } catch { /* not a directory or no readable package.json: fall back to the path */ }
    return path.split('/').filter(Boolean).pop();
}

const help = spawnSync(bin, ['lore', 'scan', '--help'], { encoding: 'utf8' }).stdout ?? '';
const has = (flag) => help.includes(flag);
const ROLES = { system: 0, user: 1, assistant: 2 };

/** The ccv3 flags a scenario's settings need; null when this ccv3 lacks one. */
function flags(s) {
    const f = ['--tokenizer', 'estimate', '--scan-depth', String(s.depth ?? 2), '--seed', '1', '--user', 'User', '--char', 'Char'];
    if (s.recursive) f.push('--recursive');
    const want = [
        ['--min-activations', s.min_activations, 0],
        ['--min-activations-depth-max', s.min_activations_depth_max, 0],
        ['--max-recursion-steps', s.max_recursion_steps, 0],
        ['--budget', s.budget, null],
        ['--include-names', s.include_names ?? true, true],
        ['--whole-words', s.match_whole_words ?? true, true],
        ['--case-sensitive', !!s.case_sensitive, false],
        ['--group-scoring', !!s.group_scoring, false],
    ];
    for (const [flag, v, dflt] of want) {
        if (v === undefined || v === null || v === dflt) continue;
        if (!has(flag)) return null;
        f.push(flag, String(v));
    }
    return f;
}

/** Runs ccv3 on every turn of a scenario; per turn {activated (a set), prompt}. */
function runCcv3(sc, mode) {
    const f = flags(sc.settings);
    if (!f) return null;
    const dir = mkdtempSync(join(tmpdir(), 'st-compare-'));
    try {
        const books = [];
        for (const b of sc.books) {
            const p = join(dir, b.name);
            writeFileSync(p, JSON.stringify({ entries: b.entries }));
            books.push('--book', p);
        }
        const out = [];
        for (const turn of sc.turns) {
            writeFileSync(join(dir, 'chat.json'), JSON.stringify(turn.chat));
            const a = ['lore', 'scan', ...books, '--chat', join(dir, 'chat.json'), '--state', join(dir, 'state.json'), '--json', ...f];
            if (mode !== 'default') a.push('--compat', mode);
            const r = spawnSync(bin, a, { encoding: 'utf8', maxBuffer: 1 << 28 });
            if (r.status !== 0) return { error: (r.stderr || '').trim() };
            const doc = JSON.parse(r.stdout);
            const prompt = {};
            const activated = [];
            for (const it of doc.activated) {
                const id = `${it.book}#${sc.books.find((b) => b.name === it.book)?.uids?.[it.index] ?? it.index}`;
                activated.push(id);
                let key = it.position;
                if (key === 'at_depth' || key.startsWith('at_depth')) key = `at_depth/${it.depth ?? 4}/${ROLES[it.role] ?? 0}`;
                (prompt[key] ??= []).push(id);
            }
            out.push({ activated, prompt });
        }
        return out;
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

const sameSet = (a, b) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
const sameOrder = (a, b) => {
    const ka = Object.keys(a).filter((k) => a[k].length).sort();
    const kb = Object.keys(b).filter((k) => b[k].length).sort();
    return ka.join() === kb.join() && ka.every((k) => a[k].join() === b[k].join());
};

async function main() {
    const wi = await loadST(stPath);
    const scenarios = [];
    for (let i = 0; i < n; i++) scenarios.push(scenario(seed, i));
    for (const file of many('real')) scenarios.push(...realScenarios(file, bin));
    const modes = args.includes('--no-ccv3') ? [] : ['default', 'sillytavern'];
    const stats = {};
    for (const kind of ['gen', 'real']) for (const m of modes) stats[`${kind}/${m}`] = { scen: 0, set: 0, order: 0, turns: 0, tset: 0, torder: 0, skipped: 0, diffs: [] };
    const fixtures = [];
    for (const sc of scenarios) {
        const st = await runScenario(wi, sc);
        sc.turns.forEach((t, i) => { t.st = st[i]; });
        if (record && sc.id.startsWith('gen-')) fixtures.push(sc);
        for (const mode of modes) {
            const s = stats[`${sc.id.startsWith('gen-') ? 'gen' : 'real'}/${mode}`];
            const cc = runCcv3(sc, mode);
            if (!cc || cc.error) { s.skipped++; if (cc?.error && s.diffs.length < show) s.diffs.push({ id: sc.id, error: cc.error }); continue; }
            s.scen++;
            let allSet = true, allOrder = true;
            st.forEach((r, i) => {
                s.turns++;
                const okSet = sameSet(r.activated, cc[i].activated);
                const okOrder = okSet && sameOrder(r.prompt, cc[i].prompt);
                s.tset += okSet; s.torder += okOrder;
                if ((!okSet || !okOrder) && allSet && allOrder && s.diffs.length < show) {
                    const onlySt = r.activated.filter((x) => !cc[i].activated.includes(x));
                    const onlyCcv3 = cc[i].activated.filter((x) => !r.activated.includes(x));
                    s.diffs.push(okSet ? { id: sc.id, turn: i, order: true, st: r.prompt, ccv3: cc[i].prompt } : { id: sc.id, turn: i, onlySt, onlyCcv3 });
                }
                allSet &&= okSet; allOrder &&= okOrder;
            });
            s.set += allSet; s.order += allSet && allOrder;
        }
    }
    const pct = (a, b) => (b ? ((100 * a) / b).toFixed(1) : '-');
    for (const [k, s] of Object.entries(stats)) {
        if (!s.scen && !s.skipped) continue;
        console.log(`${k}: ${s.scen} scenarios (${s.turns} scans), sets ${pct(s.set, s.scen)}% (scans ${pct(s.tset, s.turns)}%), sets and orders ${pct(s.order, s.scen)}% (scans ${pct(s.torder, s.turns)}%)${s.skipped ? `, ${s.skipped} skipped` : ''}`);
        for (const d of s.diffs) console.log('  differs:', JSON.stringify(d));
    }
    if (record) {
        writeFileSync(record, JSON.stringify({ sillytavern: stLabel(stPath), scenarios: fixtures.map(compact) }));
        console.log(`recorded ${fixtures.length} scenarios in ${record}`);
    }
}

/** A fixture without fields that hold SillyTavern's defaults. */
function compact(sc) {
    const dflt = { constant: false, disable: false, excludeRecursion: false, preventRecursion: false, delayUntilRecursion: false, group: '', groupOverride: false, groupWeight: 100, useGroupScoring: null, scanDepth: null, caseSensitive: null, matchWholeWords: null, sticky: 0, cooldown: 0, delay: 0, role: null, depth: 4, keysecondary: [] };
    const books = sc.books.map((b) => ({ name: b.name, entries: Object.fromEntries(Object.entries(b.entries).map(([k, e]) => [k, Object.fromEntries(Object.entries(e).filter(([f, v]) => f !== 'displayIndex' && JSON.stringify(dflt[f]) !== JSON.stringify(v)))])) }));
    return { id: sc.id, settings: sc.settings, books, turns: sc.turns };
}

main();
