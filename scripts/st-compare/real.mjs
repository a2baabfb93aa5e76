// Real books for the comparison: each file (a World Info book, a lorebook or a card) is turned
// into World Info by `ccv3 convert`, then scanned with chats made of its own keys. Our own code.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { decidable, rng } from './gen.mjs';

/** Scenarios for one real book: chats that mention some of its keys, over a few turns. */
export function realScenarios(file, bin) {
    const dir = mkdtempSync(join(tmpdir(), 'st-real-'));
    try {
        const out = join(dir, 'wi.json');
        const r = spawnSync(bin, ['convert', file, out, '--to', 'worldinfo'], { encoding: 'utf8' });
        if (r.status !== 0) return [];
        const wi = JSON.parse(readFileSync(out, 'utf8'));
        const entries = wi.entries ?? {};
        decidable([{ entries }]);
        // Entries without a uid or a position: SillyTavern's own importers always write both
        // (without a position it activates the entry but puts it nowhere; see the docs).
        for (const [k, e] of Object.entries(entries)) {
            if (e.uid === undefined) e.uid = Number.isInteger(Number(k)) ? Number(k) : k;
            if (e.position === undefined) e.position = 0;
        }
        const name = basename(file).replace(/[^A-Za-z0-9._-]/g, '_') + '.json';
        const keys = Object.values(entries).flatMap((e) => (Array.isArray(e.key) ? e.key : [])).filter((k) => typeof k === 'string' && k && !k.startsWith('/'));
        if (!Object.keys(entries).length) return [];
        const scens = [];
        for (let v = 0; v < 3; v++) {
            const g = rng(v * 31 + name.length);
            const chat = [];
            const turns = [];
            for (let t = 0; t < 4; t++) {
                const words = [];
                for (let w = 0; w < 6; w++) words.push(g.chance(0.3) && keys.length ? g.pick(keys) : g.pick(['the', 'and', 'we', 'went', 'there', 'then']));
                const user = chat.length % 2 === 0;
                chat.push({ role: user ? 'user' : 'assistant', name: user ? 'User' : 'Char', content: words.join(' ') });
                turns.push({ chat: chat.map((m) => ({ ...m })) });
            }
            scens.push({ id: `real-${name}-${v}`, settings: { depth: 2, recursive: v === 1, include_names: true, match_whole_words: true }, books: [{ name, entries, uids: Object.values(entries).map((e) => e.uid) }], turns });
        }
        return scens;
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}
