// A deterministic generator of World Info scenarios for the comparison harness (our own code).
// Every scenario: settings, 1-3 books of SillyTavern World Info entries, and turns (the chat
// growing, sometimes a swipe). Rolls are kept decidable: probabilities are 0 or 100, and each
// inclusion group has at most one member with a non-zero weight, so SillyTavern's Math.random
// cannot change a result.

/** mulberry32: a small seeded PRNG. */
export function rng(seed) {
    let a = seed >>> 0;
    const next = () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const r = {
        next,
        int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
        chance: (p) => next() < p,
        pick: (xs) => xs[Math.floor(next() * xs.length)],
    };
    return r;
}

const WORDS = ['dragon', 'castle', 'river', 'lamp', 'storm', 'king', 'sword', 'forest', 'tea', 'ship',
    'tower', 'wolf', 'moon', 'harbor', 'bell', 'Mira', 'Orin', 'salt', 'ember', 'gate'];
const FILLER = ['the', 'a', 'we', 'saw', 'near', 'old', 'and', 'then', 'walked', 'quietly', 'over', 'to'];

function key(r) {
    const w = r.pick(WORDS);
    const k = r.next();
    if (k < 0.08) return `/${w.slice(0, 3)}\\w*/i`;
    if (k < 0.12) return `/\\b${w}s?\\b/`;
    if (k < 0.18) return `${r.pick(FILLER)} ${w}`;
    if (k < 0.24) return w.toUpperCase();
    if (k < 0.28) return w.slice(0, 3);
    return w;
}

function sentence(r, n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(r.chance(0.35) ? r.pick(WORDS) : r.pick(FILLER));
    return out.join(' ');
}

/**
 * Makes SillyTavern's rolls unable to change a result: at most one member of each inclusion
 * group keeps a non-zero weight (the roll then always picks the same winner), and probabilities
 * other than 0 and 100 are turned off (real books only have those).
 */
export function decidable(books) {
    const groups = new Set();
    for (const book of books) {
        for (const e of Object.values(book.entries)) {
            for (const g of String(e.group ?? '').split(/,\s*/)) if (g) groups.add(g);
            if (e.useProbability && e.probability !== 0 && e.probability !== 100) e.useProbability = false;
        }
    }
    for (const g of groups) {
        let seen = false;
        for (const book of books) {
            for (const e of Object.values(book.entries)) {
                if (!String(e.group ?? '').split(/,\s*/).includes(g) || e.groupWeight === 0) continue;
                if (seen) e.groupWeight = 0;
                seen = true;
            }
        }
    }
}

/** Scenario number `i` of the generator seeded with `seed`. */
export function scenario(seed, i) {
    const r = rng((seed * 1000003 + i * 7919) >>> 0);
    const settings = {
        depth: r.pick([0, 1, 2, 2, 2, 3, 4]),
        recursive: r.chance(0.5),
        include_names: !r.chance(0.1),
        match_whole_words: !r.chance(0.2),
        case_sensitive: false,
        group_scoring: r.chance(0.2),
        min_activations: r.chance(0.2) ? r.int(1, 6) : 0,
        min_activations_depth_max: 0,
        max_recursion_steps: r.chance(0.15) ? r.int(1, 3) : 0,
        budget: r.chance(0.3) ? r.int(5, 60) : null,
    };
    if (settings.min_activations && r.chance(0.5)) settings.min_activations_depth_max = r.int(1, 6);
    if (settings.min_activations) settings.max_recursion_steps = 0;
    const nbooks = r.int(1, 3);
    const books = [];
    const groupNames = ['g1', 'g2', 'g3'];
    for (let b = 0; b < nbooks; b++) {
        const entries = {};
        const n = r.int(2, 10);
        for (let uid = 0; uid < n; uid++) {
            const keys = [];
            const nk = r.chance(0.06) ? 0 : r.int(1, 3);
            for (let k = 0; k < nk; k++) keys.push(key(r));
            const secondary = r.chance(0.2) ? [key(r), ...(r.chance(0.5) ? [key(r)] : [])] : [];
            const position = r.pick([0, 1, 1, 4]);
            const e = {
                uid,
                key: keys,
                keysecondary: secondary,
                comment: `entry ${b}.${uid}`,
                content: `${r.chance(0.06) ? r.pick(['@@activate\n', '@@dont_activate\n', '@@@activate\n', '@@depth 2\n@@@activate\n']) : ''}E${b}.${uid} ${sentence(r, r.int(2, 8))}`,
                constant: r.chance(0.1),
                selective: true,
                selectiveLogic: r.int(0, 3),
                order: r.pick([10, 50, 100, 100, 100, 200]),
                position,
                disable: r.chance(0.04),
                excludeRecursion: r.chance(0.12),
                preventRecursion: r.chance(0.12),
                delayUntilRecursion: r.chance(0.1) ? r.pick([true, 1, 2, 3]) : false,
                probability: r.chance(0.06) ? 0 : 100,
                useProbability: r.chance(0.9),
                depth: position === 4 ? r.int(0, 4) : 4,
                role: position === 4 ? 0 : null,
                group: r.chance(0.3) ? r.pick(['g1', 'g2', 'g3', 'g1,g2', 'g2, g3']) : '',
                groupOverride: r.chance(0.1),
                groupWeight: r.chance(0.3) ? 100 : 0,
                useGroupScoring: r.pick([null, null, true, false]),
                scanDepth: r.chance(0.1) ? r.int(0, 4) : null,
                caseSensitive: r.pick([null, null, null, true, false]),
                matchWholeWords: r.pick([null, null, true, false]),
                sticky: r.chance(0.15) ? r.int(1, 3) : 0,
                cooldown: r.chance(0.15) ? r.int(1, 3) : 0,
                delay: r.chance(0.08) ? r.int(1, 4) : 0,
                displayIndex: uid,
            };
            entries[uid] = e;
        }
        books.push({ name: `b${b}.json`, entries });
    }
    decidable(books);
    const turns = [];
    const chat = [];
    const nturns = r.int(1, 5);
    for (let t = 0; t < nturns; t++) {
        if (t > 0 && r.chance(0.15)) {
            chat[chat.length - 1] = { ...chat[chat.length - 1], content: sentence(r, r.int(3, 10)) };
        } else {
            const add = r.int(1, 2);
            for (let k = 0; k < add; k++) {
                const user = chat.length % 2 === 0;
                chat.push({ role: user ? 'user' : 'assistant', name: user ? 'User' : 'Char', content: sentence(r, r.int(3, 10)) });
            }
        }
        turns.push({ chat: chat.map((m) => ({ ...m })) });
    }
    return { id: `gen-${seed}-${i}`, settings, books, turns };
}
