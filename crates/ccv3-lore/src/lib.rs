//! The lorebook engine: every field and decorator of Character Card V3 lorebooks plus
//! SillyTavern's World Info behaviours, compiled once, scanned fast, and able to explain itself.
//!
//! # Tour
//! - [`LorebookCompiler`] compiles books ([`BookInput`]: a `ccv3::Lorebook`, its kind and a
//!   name) into [`CompiledBooks`]: decorators parsed, key macros resolved, every plain key in one
//!   Aho-Corasick automaton per case mode, regex keys compiled once ([`jsregex`]). With the
//!   `parallel` feature and [`LorebookCompiler::threads`], books of thousands of entries are
//!   compiled on two threads. Compiled with
//!   [`LorebookCompiler::for_single_scan`] (the CLI), no automata are built at compile time: a
//!   scan that cannot recurse builds small ones from the keys that can occur in its text.
//! - [`CompiledBooks::scan`] is a pure function of (books, [`chat::Chat`], [`ScanState`],
//!   [`ScanOptions`] with its seed, tokenizer) returning a [`ScanResult`]: activations in prompt
//!   order, every rejection with the rule that stopped it, tokens and the next state. The scan
//!   order is documented in [`scan`]. [`ExplainSink`] receives explanations as they come.
//! - [`ScanReport`] is a scan's result as data: it derives `serde::Serialize`, and its
//!   serialisation is the `ccv3 lore scan --json` document (the CLI and the bindings serialise
//!   this one type).
//! - [`chat`] is ccv3's one chat reader and message type.
//!
//! # Features
//! - `parallel` (off by default): threads when the caller asks for them
//!   ([`LorebookCompiler::threads`], [`ScanOptions::threads`], both off by default). Books of
//!   thousands of entries are compiled on two threads (the automata built on one while the regex
//!   keys are parsed and the entries ordered on the other), and with [`ScanOptions::explain_all`]
//!   the entries a budget cut unchecked are explained on two. Without it, or without the
//!   options, the library starts no thread: the same work runs on the calling thread, with the
//!   same results. The `ccv3` CLI turns it on and asks for threads; so does the Python package.
//!
//! # Choices
//! Where SPEC_V3 decides, the engine follows it; where it leaves a choice, SillyTavern's
//! documented behaviour is followed. With [`ScanOptions::compat`] set to
//! [`Compat::SillyTavern`] the engine reproduces SillyTavern's code instead, where it departs from
//! its documentation (`docs/sillytavern-compat.md` lists every difference). Every choice:
//!
//! 1. **Scan text** is SillyTavern's: newest message first, `name: text`, joined by `\n\x01`
//!    with a leading `\x01`; keys may match across a message boundary as in SillyTavern.
//!    SillyTavern chat files' hidden (`is_system`) messages are left out.
//! 2. **Case**: `case_sensitive` (entry field, else the `case_sensitive` extension, else the
//!    compiler default, false as in SillyTavern).
//! 3. **Whole words** (the `match_whole_words` extension, else the scan option, default on as in
//!    SillyTavern): keys containing whitespace match as substrings (SillyTavern); a single-word key
//!    needs a non-word character or the text edge on both sides. A word character is a Unicode
//!    letter, digit or `_`, except in scripts written without spaces (CJK, kana, Hangul, Thai,
//!    Lao, Khmer, Myanmar), whose characters are always boundaries; SillyTavern uses ASCII `\W`,
//!    which makes `é` a boundary (so `caf` matched `café`); here it does not.
//! 4. **Regex keys**: SillyTavern's `/pattern/flags` form is detected in every key; with
//!    `use_regex` every key is a pattern (bare patterns get the `i` flag unless the entry is case
//!    sensitive). An invalid pattern never matches and yields a diagnostic (SillyTavern falls
//!    back to plain text; the spec says no match). Patterns run on the raw scan text; case and
//!    whole-word settings do not apply (use flags). See [`jsregex`] for the engines. Every
//!    search has a step budget ([`ScanOptions::regex_key_steps`], and
//!    [`ScanOptions::regex_scan_steps`] for the whole scan): a key that runs out does not
//!    match, and its entry is explained `regex-budget` (JavaScript has no such limit; one
//!    pattern must not hang a server).
//! 5. **`use_regex` from SillyTavern exports**: SillyTavern writes `use_regex: true` on every
//!    entry and ignores it on import; entries carrying SillyTavern's knobs in `extensions`
//!    (`selectiveLogic`, `display_index`, `useProbability`, `exclude_recursion`) are read the same
//!    way: `use_regex` is ignored for them (per-key `/…/` detection still applies).
//! 6. **`use_regex: true`** (spec): `secondary_keys` and `@@exclude_keys` are ignored and
//!    `constant` is ignored, as SPEC_V3 says.
//! 7. **Secondary keys** use SillyTavern's four logics (`selectiveLogic`, default AND ANY, the
//!    spec's rule); they apply when `selective` is true and the list is not empty.
//! 8. **Decorator precedence**: `enabled: false` beats everything; `@@activate` beats every
//!    other rule ("in any case"), including timed effects; `@@dont_activate_after_match` beats
//!    `@@keep_activate_after_match`; `@@dont_activate` comes next; forced matches still pass
//!    through groups, probability and the budget, as SillyTavern's `@@activate` does.
//! 9. **"Matched before"** for the after-match decorators means activated in an earlier scan
//!    at a shorter chat length (a regenerate at the same length does not count), as RisuAI
//!    does it.
//! 10. **Message counts** for `@@activate_only_after`/`_every` count the assistant messages of
//!     the chat (the greeting included when it is there). `@@is_greeting` and `@@is_user_icon`
//!     are ignored when the scan options do not say the active greeting / icon.
//! 11. **Depth decorators**: `@@position` beats `@@depth`, which beats `@@reverse_depth`
//!     (total messages minus N; the spec's "if the context is chat based, ignore" is read as a
//!     typo for "is not"). `@@instruct_depth`, `@@reverse_instruct_depth` and
//!     `@@instruct_scan_depth` are parsed and ignored: this engine scans chats.
//! 12. **Positions**: `@@position` values `before_char`, `after_char`, `after_desc`,
//!     `before_desc`, `personality`, `scenario` and `pt_<name>`; SillyTavern's `position`
//!     numbers 0-7 in `extensions` beat the spec's `position` string; unset is `after_char`
//!     (SillyTavern's card import maps `before_char` to 0 and anything else to 1, After Char
//!     Defs), and the explanation says so ([`Activation::position_default`], issue 14). Prompt order: by position, then deeper first, then
//!     `insertion_order` lowest first (spec).
//! 13. **Scan depth**: `@@scan_depth`, else the `scan_depth` extension, else the book's
//!     `scan_depth`, else the scan option (default 2, SillyTavern's). 0 scans no message (only
//!     recursion).
//! 14. **Budget**: each book's `token_budget` (a positive number; 0 means none) caps that book,
//!     and [`ScanOptions::token_budget`] and `max_context - context_tokens` cap all books.
//!     Order: sticky, constant, then chat and persona books ([`BookKind::Chat`],
//!     [`BookKind::Persona`]), then the strategy's first books (character first / global
//!     first), then `priority` highest first (falling back to `insertion_order`, as the spec
//!     allows), then activation order; entries from earlier
//!     passes (direct matches) before recursive ones. As in SillyTavern the first entry that does
//!     not fit ends the budget (it and all later ones are cut) except `ignore_budget` entries.
//!     Tokens are of the content without decorators, before macro expansion. "Exceeds" is strict:
//!     an entry that exactly fills the budget fits.
//! 15. **`@@ignore_on_max_context`**: with a max context, such entries are counted last, so
//!     they are the first cut.
//! 16. **Recursion**: a book recurses when its `recursive_scanning` is true, or unset and the
//!     `recursive` option is on (default off). Text from any activated entry (without
//!     `prevent_recursion`) can activate entries of recursing books; `exclude_recursion` entries
//!     are not activated in recursion passes. `delay_until_recursion` (true = level 1, or a
//!     level) entries are eligible in recursion passes once their level is reached (levels open
//!     from the lowest, one more each time a pass finds nothing), even when no book recurses, as
//!     in SillyTavern.
//! 17. **Probability** (`@@probability`, else the `probability` extension unless
//!     `useProbability` is false) rolls a number in `[0, 100)` from the seed, the entry's
//!     identity and the chat length; the entry passes when the roll is below the probability.
//!     Group weights roll the same way from the group name. So a scan never depends on the order
//!     of unrelated entries and each turn rolls anew.
//! 18. **Timed effects** follow the World Info doc's timeline, with chat length = number of
//!     messages: sticky is active while `start < length <= start + sticky`, then a cooldown runs
//!     for `cooldown` more messages; a cooldown alone blocks while
//!     `start < length <= start + cooldown`; delay blocks while `length < delay`.
//! 19. **Entry identity** (for state and rolls) is a hash of the book name and every field of
//!     the entry (keys, content, order, flags, `extensions`, unknown fields; plus a counter for
//!     identical entries), so any edit of an entry ends its timed effects, as SillyTavern's
//!     World Info documentation says (issue 14).
//! 20. **Empty content**: a matched entry whose content (without decorators) is blank is
//!     rejected with `empty content` and takes part in nothing else.
//! 21. **Explanations**: a scan reports the entries that had a chance (a key found anywhere in the
//!     scan text, constant, forced, sticky); with [`ScanOptions::explain_all`] every entry, the
//!     others as `no key matched` / `no keys` / `disabled`. Once the budget has ended, candidates
//!     are not checked (see [`scan`]).
//! 22. **Regex keys on the linear engine** are checked for syntax when the books are compiled and
//!     built on first use (a book with thousands of regex keys compiles fast; each pattern is
//!     still built at most once).
//! 23. **Limits** (issue 12): books of more than [`LorebookCompiler::max_entries`] entries are
//!     refused ([`LorebookCompiler::try_compile`]); a key's CBS macros expand to at most twice
//!     the key (plus the names); a key longer than the scan text is not searched; plain keys
//!     that overlap (`x`, `xx`, `xxx`...) cost time linear in the text.
//! 24. **SillyTavern's per-entry settings** (issue 14, World Info doc): `triggers` against
//!     [`ScanOptions::trigger`] (default `normal`); the character filter (`character_filter`
//!     extension or field, World Info `characterFilter`: names against
//!     [`ScanOptions::char_name`] and [`ScanOptions::character_names`], tags against
//!     [`ScanOptions::character_tags`], include or exclude; tags only when the scan has a
//!     character name); the `match_*` flags add the texts of [`ScanOptions::sources`] to the
//!     entry's scan text (after its window: a key in both is reported in its message);
//!     group scoring counts the keys of every member, constant and `@@activate` ones too.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod chat;
mod compile;
mod error;
mod grams;
pub mod graph;
mod hash;
pub mod jsregex;
mod par;
mod position;
mod report;
pub mod scan;
mod selective_logic;
mod source;
mod st_regex;
mod st_timed;
mod state;
mod text;

#[cfg(test)]
mod tests;

pub use compile::{
    BookInput, BookKind, CompiledBooks, EntryRef, LorebookCompiler, Strategy, MAX_ENTRIES,
};
pub use error::LoreError;
pub use graph::{EntryFacts, GraphLimits, KeyFacts, RecursionEdge, RecursionGraph};
pub use position::Position;
pub use report::{ActivatedItem, RejectedItem, ScanReport};
pub use scan::{
    Activation, ActivationReason, Compat, ExplainSink, Explanation, MatchSources, NoSink,
    RejectReason, Rejected, ScanOptions, ScanResult, Source, Trigger, VecSink, REGEX_KEY_STEPS,
    REGEX_SCAN_STEPS,
};
pub use selective_logic::SelectiveLogic;
pub use st_timed::st_activated_set;
pub use state::{MatchRecord, ScanState, TimedRecord};
pub use text::resolve_key_macros;
