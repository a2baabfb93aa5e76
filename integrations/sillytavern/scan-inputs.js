// Moves the values SillyTavern's scan used into a ccv3 scan request (no rules of its own: the
// settings are translated by the package's sillyTavernScanOptions, the World Info files and
// SillyTavern chat messages are read by the package's readers).

/**
 * A snapshot of what SillyTavern's scan reads, taken while it runs (WORLDINFO_ENTRIES_LOADED).
 * `lore`: the event's {globalLore, characterLore, chatLore, personaLore}; `chat`: the messages
 * the generation scans (its interceptor's copy, taken as it is), else a copy of the whole chat;
 * `timedWorldInfo` likewise (a copy), else a copy of the chat metadata's.
 */
export function stScanInputs(st, lore, { settings, maxContext, trigger, chat, timedWorldInfo }) {
    const { world_info: _books, ...wiSettings } = settings || {};
    return {
        chatId: st.getCurrentChatId?.() ?? null,
        lore: structuredClone(lore),
        chat: chat ?? structuredClone(st.chat),
        settings: structuredClone(wiSettings),
        maxContext,
        trigger: trigger || 'normal',
        tokenizerModel: typeof st.getTokenizerModel === 'function' ? st.getTokenizerModel() : '',
        timedWorldInfo: timedWorldInfo ?? structuredClone(st.chatMetadata?.timedWorldInfo ?? {}),
        user: st.name1,
        char: st.name2,
    };
}

// SillyTavern's entry order (getSortedEntries): chat lore, persona lore, then the character and
// global lore in the strategy's order; each file becomes one book, in that order.
function sources(lore, strategy) {
    const cg = strategy === 'global-first'
        ? [lore.globalLore, lore.characterLore]
        : [lore.characterLore, lore.globalLore];
    const kinds = strategy === 'global-first'
        ? ['chat', 'persona', 'global', 'character']
        : ['chat', 'persona', 'character', 'global'];
    return [lore.chatLore, lore.personaLore, ...cg].flatMap((l, i) => (l || []).map((e) => [kinds[i], e]));
}

/**
 * The scan request for `inputs`, and `rows`: every entry scanned ({world, uid, entry}) with
 * `locate(book, index)` from a result item back to it.
 * `stActivated` (the `world.uid` SillyTavern activated) goes to the package's `stActivated`,
 * which settles SillyTavern's own random draws (probability rolls, inclusion-group picks); each
 * file is named by its world and given its lore kind (`bookKinds`), which set the book order.
 */
export function scanInputs(ccv3, inputs, stActivated, prevState) {
    const options = ccv3.sillyTavernScanOptions({
        settings: inputs.settings,
        maxContext: inputs.maxContext,
        tokenizerModel: inputs.tokenizerModel,
        trigger: inputs.trigger,
    });
    const files = new Map(); // world -> {name, entries: {uid: entry}}
    const kinds = new Map(); // world -> its lore kind
    for (const [kind, e] of sources(inputs.lore, options.strategy)) {
        if (!files.has(e.world)) {
            files.set(e.world, { name: e.world, entries: {} });
            kinds.set(e.world, kind);
        }
        const entry = { ...e };
        delete entry.world;
        files.get(e.world).entries[String(e.uid)] = entry;
    }
    const names = [...files.keys()];
    const encoder = new TextEncoder();
    const texts = names.map((w) => JSON.stringify(files.get(w)));
    const books = texts.map((t) => encoder.encode(t));
    const all = [];
    const byBook = new Map();
    names.forEach((w, i) => {
        // The reader takes a World Info file's entries in its key order (JSON's).
        const list = Object.entries(files.get(w).entries).map(([uid, entry]) => ({ world: w, uid, entry }));
        all.push(...list);
        byBook.set(w, list);
        byBook.set(`books[${i}]`, list);
    });
    const request = {
        ...options,
        books,
        chat: { messages: inputs.chat },
        state: prevState ?? null,
        bookKinds: names.map((w) => kinds.get(w)),
        stActivated: stActivated ?? null,
        // SillyTavern's own sticky/cooldown records (a dry run of SillyTavern ignores them).
        stTimed: stActivated ? (inputs.timedWorldInfo ?? null) : null,
        user: inputs.user,
        char: inputs.char,
    };
    return {
        request,
        rows: { all, locate: (book, index) => byBook.get(book)?.[index] ?? null },
        names,
        texts,
    };
}

const FLAGS = [
    ['scanDepth', '--scan-depth'],
    ['budget', '--budget'],
    ['minActivations', '--min-activations'],
    ['minActivationsDepthMax', '--min-activations-depth-max'],
    ['maxRecursionSteps', '--max-recursion-steps'],
    ['includeNames', '--include-names'],
    ['wholeWords', '--whole-words'],
    ['caseSensitive', '--case-sensitive'],
    ['groupScoring', '--group-scoring'],
    ['strategy', '--strategy'],
    ['tokenizer', '--tokenizer'],
    ['trigger', '--trigger'],
    ['user', '--user'],
    ['char', '--char'],
];

/**
 * A scenario `scripts/sillytavern-replay` turns into `ccv3 lore scan --compat sillytavern`
 * (books as World Info files, the chat, the state, the flags) with both activated sets.
 */
export function cliScenario(inputs, request, result, stActivated, names) {
    const decoder = new TextDecoder();
    const args = ['--compat', 'sillytavern', '--json'];
    if (request.recursive) args.push('--recursive');
    for (const [k, flag] of FLAGS) {
        const v = request[k];
        if (v === undefined || v === null || v === '') continue;
        args.push(flag, String(v));
    }
    return {
        ccv3_sillytavern_case: 1,
        books: request.books.map((b, i) => ({ file: `book${i}.json`, name: names?.[i] ?? null, world: JSON.parse(decoder.decode(b)) })),
        chat: inputs.chat,
        state: request.state,
        book_kinds: request.bookKinds ?? null,
        st_activated: request.stActivated ?? null,
        st_timed: request.stTimed ?? null,
        args,
        sillytavern: { settings: inputs.settings, maxContext: inputs.maxContext, timedWorldInfo: inputs.timedWorldInfo, activated: stActivated },
        ccv3_activated: result.activated.map((a) => `${a.book}#${a.index}`),
    };
}
