// The World Info inspector: after every generation, every entry of every book SillyTavern scanned,
// with its fate as ccv3's engine explains it in SillyTavern compat mode, computed from the
// inputs SillyTavern's own scan used; a mark where ccv3's activated set differs from
// SillyTavern's (WORLD_INFO_ACTIVATED).
import { getWorldInfoSettings, getMaxPromptTokens } from './st-imports.js';
import { stScanInputs, scanInputs, cliScenario } from './scan-inputs.js';

/** Fate of a rejected entry: the first words of ccv3's reason, as a short code. */
export function fateOf(reason) {
    const head = String(reason).split(/[("0-9@]/)[0].trim().toLowerCase();
    const words = head.split(/\s+/).filter(Boolean);
    if (words[0] === 'decorator') return 'decorator';
    if (words[0] === 'secondary') return 'secondary-logic';
    if (words[0] === 'probability') return 'probability';
    if (words[0] === 'scan') return 'scan-depth';
    return words.join('-') || 'unknown';
}

function el(tag, attrs = {}, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
        if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    }
    if (text !== undefined) e.textContent = text;
    return e;
}

export function createInspector(context, panel, ready) {
    const ev = context().eventSource;
    const T = context().eventTypes;
    let pending = null; // the generation in progress
    const states = new Map(); // chat id -> ccv3's state after the last inspected scan
    let last = null; // {inputs, result, stActivated}
    let inspecting = Promise.resolve(); // the deferred inspections, one after another

    panel.append(
        el('div', { class: 'ccv3-wi-head' }, 'World Info inspector (ccv3)'),
    );
    const controls = el('div', { class: 'ccv3-wi-controls' });
    const filter = el('select', { 'data-testid': 'ccv3-wi-filter' });
    for (const [v, label] of [['all', 'All entries'], ['fired', 'Fired only'], ['not-fired', 'Not fired only']]) {
        filter.append(el('option', { value: v }, label));
    }
    const search = el('input', { type: 'search', placeholder: 'Search key or name', 'data-testid': 'ccv3-wi-search', class: 'text_pole' });
    const dry = el('button', { class: 'menu_button', 'data-testid': 'ccv3-wi-dry-run', type: 'button' }, 'Dry run');
    const copy = el('button', { class: 'menu_button', 'data-testid': 'ccv3-wi-copy-case', type: 'button' }, 'Copy as test case');
    controls.append(filter, search, dry, copy);
    const summary = el('div', { class: 'ccv3-wi-summary', 'data-testid': 'ccv3-wi-summary' }, 'No generation inspected yet.');
    const bar = el('progress', { class: 'ccv3-wi-budget', 'data-testid': 'ccv3-wi-budget', max: 1, value: 0 });
    const list = el('div', { class: 'ccv3-wi-list', 'data-testid': 'ccv3-wi-list' });
    panel.append(controls, summary, bar, list);

    const applyFilter = () => {
        const f = filter.value;
        const q = search.value.trim().toLowerCase();
        for (const row of list.children) {
            const fired = row.dataset.fate === 'activated';
            let show = f === 'all' || (f === 'fired' ? fired : !fired);
            if (show && q) show = row.dataset.search.includes(q);
            if (row.hidden !== !show) row.hidden = !show;
        }
    };
    filter.addEventListener('change', applyFilter);
    search.addEventListener('input', applyFilter);

    copy.addEventListener('click', async () => {
        if (!last) return;
        const text = JSON.stringify(cliScenario(last.inputs, last.request, last.result, last.stActivated, last.names), null, 2);
        panel.dataset.lastCase = text;
        try {
            await navigator.clipboard.writeText(text);
            toastr.success('Copied the scenario (replay: scripts/sillytavern-replay FILE)');
        } catch (_) {
            // No clipboard permission (headless, http): the scenario stays in data-last-case.
        }
    });

    // Captures what SillyTavern's scan reads, when it reads it. Dry runs (SillyTavern builds
    // prompts to count tokens, even while a generation is in flight) are left alone.
    ev.on(T.GENERATION_STARTED, (type, _params, dryRun) => {
        if (dryRun) return;
        pending = { type, inputs: null, stActivated: [], ready: false };
    });
    // SillyTavern's generation interceptor (manifest `generate_interceptor`) runs only for real
    // generations, just before their World Info scan, and is handed the chat the generation
    // uses (hidden messages left out, a swiped reply removed) and the context size it gives
    // the scan. The scan changes the timed-effect state: it is read here, before.
    globalThis.ccv3GenerateInterceptor = (chat, contextSize) => {
        if (!pending) return;
        const t = performance.now();
        pending.chat = structuredClone(chat);
        pending.maxContext = contextSize;
        pending.settings = getWorldInfoSettings();
        pending.timed = structuredClone(context().chatMetadata?.timedWorldInfo ?? {});
        pending.ready = true;
        pending.inGeneration = performance.now() - t;
    };
    // The books: the entries SillyTavern loads for its scan (the same for a dry run's scan
    // at that moment), at the first load after the interceptor.
    ev.on(T.WORLDINFO_ENTRIES_LOADED, (lore) => {
        if (!pending || !pending.ready || pending.inputs) return;
        const t = performance.now();
        pending.inputs = stScanInputs(context(), lore, {
            settings: pending.settings,
            maxContext: pending.maxContext,
            trigger: pending.type,
            chat: pending.chat,
            timedWorldInfo: pending.timed,
        });
        pending.inGeneration += performance.now() - t;
        // What the inspector added to this generation (its handlers inside it); the scan and
        // the rows come after it.
        panel.dataset.addedMs = String(pending.inGeneration);
    });
    ev.on(T.WORLD_INFO_ACTIVATED, (entries) => {
        if (pending) pending.stActivated = entries.map((e) => `${e.world}.${e.uid}`);
    });
    // The inspection runs after the generation's events have returned (SillyTavern awaits its
    // listeners: work done inside them would hold up the generation), in a task of its own.
    const finish = () => {
        const g = pending;
        pending = null;
        if (!g || !g.inputs) return;
        const run = async () => {
            try {
                await inspect(g.inputs, g.stActivated, true);
            } catch (e) {
                // Never break SillyTavern's generation: say it in the panel.
                summary.textContent = `The inspector failed: ${e && e.message}`;
                panel.dataset.error = String(e && (e.stack || e.message));
                console.warn('[ccv3] the inspector failed', e);
            }
        };
        inspecting = inspecting.then(() => new Promise((resolve) => setTimeout(() => run().then(resolve), 0)));
    };
    ev.on(T.GENERATION_ENDED, finish);
    ev.on(T.GENERATION_STOPPED, finish);

    // The dry run: the next generation's scan, from what SillyTavern holds now.
    dry.addEventListener('click', async () => {
        const lore = await loadLoreForDryRun(context());
        if (!lore) return;
        const inputs = stScanInputs(context(), lore, {
            settings: getWorldInfoSettings(),
            maxContext: getMaxPromptTokens(),
            trigger: 'normal',
        });
        await inspect(inputs, null, false);
    });

    // The whole inspection on given inputs (the test's benchmark times it in the page), and
    // the end of the inspections queued so far (the test waits for it after a turn).
    panel.ccv3Inspect = (inputs, stActivated, keepState) => inspect(inputs, stActivated, keepState);
    panel.ccv3Settled = () => inspecting;

    async function inspect(inputs, stActivated, keepState) {
        let ccv3;
        try {
            ccv3 = await ready;
        } catch (_) {
            summary.textContent = 'ccv3 could not load its WebAssembly core.';
            return;
        }
        const t0 = performance.now();
        const prev = states.get(inputs.chatId) ?? null;
        const { request, rows, names, texts } = scanInputs(ccv3, inputs, stActivated, prev);
        const t1 = performance.now();
        const result = ccv3.scanLorebook({ ...request, books: compiled(ccv3, request, texts), rejected: true });
        const t2 = performance.now();
        if (keepState) states.set(inputs.chatId, result.state);
        last = { inputs, request, result, stActivated, names };
        render(ccv3, inputs, request, result, rows, stActivated, t2 - t0);
        const t3 = performance.now();
        panel.dataset.timing = JSON.stringify({ inputs: t1 - t0, scan: t2 - t1, render: t3 - t2 });
    }

    // The books compiled once and reused while SillyTavern's books and settings stay the same.
    let cache = { key: null, books: null };
    function compiled(ccv3, request, texts) {
        const { books: _b, chat: _c, state: _s, stActivated: _a, stTimed: _t, ...options } = request;
        const key = `${JSON.stringify(options)}\u0000${texts.join('\u0000')}`;
        if (cache.key !== key) {
            cache.books?.free();
            cache = { key, books: ccv3.compileLorebooks(request.books, options) };
        }
        return cache.books;
    }

    // Token counts of entry contents, kept across generations.
    const tokenCounts = new Map();
    function tokensOf(ccv3, text, encoding) {
        const k = `${encoding}\u0000${text}`;
        let n = tokenCounts.get(k);
        if (n === undefined) {
            if (tokenCounts.size > 50_000) tokenCounts.clear();
            n = ccv3.countTokens(text, encoding);
            tokenCounts.set(k, n);
        }
        return n;
    }

    const rowCache = new Map(); // world.uid -> {row, parts, values}
    function updateRow(key, at, v) {
        let r = rowCache.get(key);
        if (!r) {
            const row = el('div', { 'data-testid': 'ccv3-wi-entry', 'data-book': at.world, 'data-uid': at.uid });
            const parts = { name: el('span', { class: 'ccv3-wi-name' }), fate: el('span', { class: 'ccv3-wi-fate' }), tokens: el('span', { class: 'ccv3-wi-tokens' }) };
            row.append(parts.name, parts.fate, parts.tokens);
            r = { row, parts, values: {} };
            rowCache.set(key, r);
        }
        const old = r.values;
        if (old.fate !== v.fate) {
            r.row.className = `ccv3-wi-entry ccv3-fate-${v.fate}`;
            r.row.dataset.fate = v.fate;
        }
        if (old.reason !== v.reason) r.row.dataset.reason = v.reason;
        if (old.search !== v.search) r.row.dataset.search = v.search;
        if (old.name !== v.name) r.parts.name.textContent = v.name;
        if (old.fateText !== v.fateText) r.parts.fate.textContent = v.fateText;
        if (old.tokens !== v.tokens) r.parts.tokens.textContent = v.tokens;
        for (const k of ['step', 'position', 'depth']) {
            if (old[k] !== v[k]) {
                if (v[k] === undefined || v[k] === null) delete r.row.dataset[k];
                else r.row.dataset[k] = String(v[k]);
            }
        }
        if (old.mismatch !== v.mismatch) {
            r.row.querySelector('.ccv3-wi-mismatch')?.remove();
            if (v.mismatch) r.row.append(el('span', { class: 'ccv3-wi-mismatch', 'data-testid': 'ccv3-wi-mismatch', title: v.mismatch }, 'mismatch'));
        }
        r.values = v;
        return r.row;
    }

    function render(ccv3, inputs, request, result, rows, stActivated, ms) {
        const stSet = stActivated ? new Set(stActivated) : null;
        const budget = request.budget || 0;
        const items = [];
        for (const a of result.activated) items.push({ item: a, fired: true });
        for (const r of result.rejected) items.push({ item: r, fired: false });
        const byKey = new Map();
        for (const { item, fired } of items) {
            const at = rows.locate(item.book, item.index);
            if (at) byKey.set(`${at.world}.${at.uid}`, { item, fired, at });
        }
        // Inclusion groups' winners: the activated entries of each group (SillyTavern splits
        // `group` on commas), named for the entries that lost to them.
        const groupsOf = (entry) => String(entry.group || '').split(/,\s*/).filter(Boolean);
        const winners = new Map();
        for (const { fired, at } of byKey.values()) {
            if (!fired) continue;
            for (const g of groupsOf(at.entry)) {
                if (!winners.has(g)) winners.set(g, []);
                winners.get(g).push(`${at.world} / ${at.entry.comment || `#${at.uid}`}`);
            }
        }
        const lostTo = (entry) => [...new Set(groupsOf(entry).flatMap((g) => winners.get(g) || []))];
        // Rows are kept across generations and only what changed is written: SillyTavern's
        // mutation observers (translations, accessibility) see every DOM change.
        let mismatches = 0;
        const order = [];
        for (const at of rows.all) {
            const key = `${at.world}.${at.uid}`;
            const found = byKey.get(key);
            const fired = !!found?.fired;
            const reason = found ? found.item.reason : 'not reported by the scan';
            const fate = fired ? 'activated' : found ? fateOf(reason) : 'missing';
            const tokens = tokensOf(ccv3, at.entry.content || '', request.tokenizer === 'o200k' ? 'o200k' : 'cl100k');
            const name = at.entry.comment || (at.entry.key || []).join(', ') || `#${at.uid}`;
            const search = [at.entry.comment, ...(at.entry.key || []), ...(at.entry.keysecondary || [])].join('\n').toLowerCase();
            const step = fired && Number.isInteger(found.item.step) ? found.item.step + 1 : null;
            let fateText = fired ? activatedText(found.item, reason, step) : fate === 'budget' ? budgetText(reason, result.tokens, budget) : reason;
            if (fate === 'group' && !/won by/.test(reason)) {
                const to = lostTo(at.entry);
                if (to.length) fateText = `${reason}: lost to ${to.join(', ')}`;
            }
            let mismatch = null;
            if (stSet && stSet.has(key) !== fired) {
                mismatches++;
                mismatch = stSet.has(key) ? 'SillyTavern activated it, ccv3 did not' : 'ccv3 activated it, SillyTavern did not';
            }
            const where = fired ? { step, position: found.item.position, depth: found.item.depth } : {};
            order.push(updateRow(key, at, { fate, reason, name: `${at.world} / ${name}`, search, fateText, tokens: `${tokens} tokens`, mismatch, ...where }));
        }
        const current = list.children;
        let same = current.length === order.length;
        for (let i = 0; same && i < order.length; i++) same = current[i] === order[i];
        if (!same) list.replaceChildren(...order);
        for (const [key, r] of rowCache) if (!r.row.isConnected) rowCache.delete(key);
        bar.max = Math.max(budget, 1);
        bar.value = Math.min(result.tokens, bar.max);
        bar.title = `${result.tokens} of ${budget} tokens`;
        summary.textContent = `${result.activated.length} of ${rows.all.length} entries activated; ` +
            `budget ${result.tokens} / ${budget} tokens; ${stSet ? `${mismatches} mismatch(es) with SillyTavern` : 'dry run'}; ` +
            `scan ${ms.toFixed(1)} ms`;
        panel.dataset.scanMs = String(ms);
        panel.dataset.mismatches = String(mismatches);
        panel.dataset.turns = String(Number(panel.dataset.turns || 0) + (stSet ? 1 : 0));
        applyFilter();
    }
}

/** An activated entry's fate: the reason, the scan step, where it goes. */
function activatedText(item, reason, step) {
    const place = `${item.position}${item.depth != null ? ` at depth ${item.depth}` : ''}`;
    const when = step == null ? "" : `scan step ${step}${step > 1 ? " (recursion or min activations)" : ""}, `;
    return `activated: ${reason} (${when}${place})`;
}

/** A budget cut: the entry's tokens (in ccv3's reason) and the budget used and left. */
function budgetText(reason, used, budget) {
    return `${reason}: ${used} of ${budget} tokens used, ${Math.max(budget - used, 0)} left`;
}

/** The books SillyTavern would scan now, through the same event its scan emits. */
async function loadLoreForDryRun(st) {
    // getSortedEntries is not in the context; a dry-run prompt build emits the event with
    // the books the next generation will scan.
    let lore = null;
    const grab = (l) => { lore = l; };
    st.eventSource.on(st.eventTypes.WORLDINFO_ENTRIES_LOADED, grab);
    try {
        await st.getWorldInfoPrompt(
            st.chat.filter((m) => !m.is_system).map((m) => `${m.name}: ${m.mes}`).reverse(),
            getMaxPromptTokens(),
            true,
        );
    } finally {
        st.eventSource.removeListener(st.eventTypes.WORLDINFO_ENTRIES_LOADED, grab);
    }
    return lore;
}
