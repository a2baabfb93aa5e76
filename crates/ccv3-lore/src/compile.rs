//! Compiling books: decorators parsed, key macros resolved, every plain key of every entry in one
//! Aho-Corasick automaton per case mode, regex keys compiled once, entries put in activation order.
//!
//! Cost. Compiling is linear in the books and allocates little per entry: keys are borrowed from
//! the books when macros and trimming leave them unchanged and live in one flat table; SillyTavern
//! knobs are read in one pass over each entry's `extensions`; entries without decorators carry
//! none. The automata are built on a second thread while the regex keys are parsed (their
//! prefilter literals are known before the parse) and the entries are ordered. An entry's
//! identity (for states) is hashed only when a scan needs it (a state, a roll, a timed effect).

use crate::jsregex::{self, Engine};
use crate::scan::FxMap;
use crate::text::Fnv;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use ccv3::decorator::{self, DecoratorRole, Decorators};
use ccv3::{Diagnostic, Entry, Lorebook};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, LazyLock, OnceLock};

/// Whether a book belongs to the character or is a global book.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BookKind {
    /// The character's own book (`character_book` of a card).
    Character,
    /// A standalone (global) book.
    Global,
}

/// How character and global books are merged (SillyTavern's "character lore insertion strategy").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// All entries sorted together by insertion order.
    Evenly,
    /// Character book entries first, then global ones (SillyTavern's default).
    #[default]
    CharacterFirst,
    /// Global book entries first, then the character's.
    GlobalFirst,
}

impl Strategy {
    /// Parses `evenly`, `character-first` or `global-first` (underscores accepted too).
    pub fn parse(s: &str) -> Option<Strategy> {
        match s.replace('_', "-").as_str() {
            "evenly" | "sorted-evenly" => Some(Strategy::Evenly),
            "character-first" => Some(Strategy::CharacterFirst),
            "global-first" => Some(Strategy::GlobalFirst),
            _ => None,
        }
    }
}

/// One book to compile: the book, its kind and a display name (used in explanations and state).
#[derive(Debug, Clone)]
pub struct BookInput<'a> {
    /// The book, as read by `ccv3`.
    pub book: &'a Lorebook,
    /// Character or global.
    pub kind: BookKind,
    /// A name for output (a file name, say).
    pub name: String,
}

/// Where an entry is: its book (in the order given to the compiler) and its index in that book's
/// entries as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryRef {
    /// The book's place in the compiler's input.
    pub book: usize,
    /// The entry's place in its book's `entries`.
    pub index: usize,
}

/// Where an activated entry's content goes in the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Position {
    /// Before the character definitions (spec `before_char`; SillyTavern 0).
    BeforeChar,
    /// After the character definitions (spec `after_char`; SillyTavern 1).
    AfterChar,
    /// Top of the Author's Note (SillyTavern 2).
    AuthorsNoteTop,
    /// Bottom of the Author's Note (SillyTavern 3).
    AuthorsNoteBottom,
    /// In the chat at a depth (SillyTavern 4, `@@depth`, `@@reverse_depth`).
    AtDepth,
    /// Before the example messages (SillyTavern 5).
    ExamplesTop,
    /// After the example messages (SillyTavern 6).
    ExamplesBottom,
    /// A named outlet (SillyTavern 7), consumed by `{{outlet::name}}`.
    Outlet(String),
    /// A `@@position` value: `after_desc`, `before_desc`, `personality`, `scenario`, `pt_<name>`.
    Named(String),
}

impl Position {
    /// The name used in output: `before_char`, `after_char`, `an_top`, `an_bottom`, `at_depth`,
    /// `examples_top`, `examples_bottom`, `outlet`, or the `@@position` value.
    pub fn as_str(&self) -> &str {
        match self {
            Position::BeforeChar => "before_char",
            Position::AfterChar => "after_char",
            Position::AuthorsNoteTop => "an_top",
            Position::AuthorsNoteBottom => "an_bottom",
            Position::AtDepth => "at_depth",
            Position::ExamplesTop => "examples_top",
            Position::ExamplesBottom => "examples_bottom",
            Position::Outlet(_) => "outlet",
            Position::Named(s) => s,
        }
    }

    /// The rank of the position in prompt order (lower is earlier in the prompt).
    pub(crate) fn prompt_rank(&self) -> u8 {
        match self {
            Position::Named(s) if s == "before_desc" => 0,
            Position::BeforeChar => 1,
            Position::Named(s) if s == "after_desc" => 2,
            Position::Named(s) if s == "personality" => 3,
            Position::Named(s) if s == "scenario" => 4,
            Position::AfterChar => 5,
            Position::ExamplesTop => 6,
            Position::ExamplesBottom => 7,
            Position::Named(_) => 8,
            Position::AuthorsNoteTop => 9,
            Position::AuthorsNoteBottom => 10,
            Position::AtDepth => 11,
            Position::Outlet(_) => 12,
        }
    }
}

/// SillyTavern's selective logic for secondary keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SelectiveLogic {
    /// 0: any secondary key must match.
    #[default]
    AndAny,
    /// 1: not all secondary keys may match.
    NotAll,
    /// 2: no secondary key may match.
    NotAny,
    /// 3: all secondary keys must match.
    AndAll,
}

impl SelectiveLogic {
    /// `AND_ANY`, `NOT_ALL`, `NOT_ANY` or `AND_ALL`.
    pub fn as_str(self) -> &'static str {
        match self {
            SelectiveLogic::AndAny => "AND_ANY",
            SelectiveLogic::NotAll => "NOT_ALL",
            SelectiveLogic::NotAny => "NOT_ANY",
            SelectiveLogic::AndAll => "AND_ALL",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyKind {
    /// Index into the pattern table; `multiword` keys are never whole-word matched.
    Plain {
        pat: u32,
        multiword: bool,
    },
    Regex(u32),
    Invalid,
}

/// A key as resolved (macros expanded, trimmed); borrowed from the book when unchanged.
pub(crate) type KeyText<'a> = Cow<'a, str>;

/// The hash behind an entry's stable identity ([`CompiledBooks::id`]): FNV-1a over its book's
/// name (`book`, the hash state after it), keys, secondary keys, content, comment and name.
fn identity_hash(entry: &Entry, book: u64) -> u64 {
    let mut h = Fnv(book);
    for k in &entry.keys {
        h = h.str(k);
    }
    for k in entry.secondary_keys.as_deref().unwrap_or(&[]) {
        h = h.str(k);
    }
    h.str(&entry.content)
        .str(entry.comment.as_deref().unwrap_or(""))
        .str(entry.name.as_deref().unwrap_or(""))
        .0
}

/// A fast hash of what [`identity_hash`] hashes (equal inputs, equal hashes), to find the rare
/// entries whose identities need a duplicate count: each text's length and its first and last
/// 16 bytes (texts that differ elsewhere only cost an exact hash).
fn quick_hash(entry: &Entry) -> u64 {
    use std::hash::Hasher;
    let mut h = crate::scan::Fx::default();
    let mut put = |s: &str| {
        let b = s.as_bytes();
        if b.len() <= 32 {
            h.write(b);
        } else {
            h.write(&b[..16]);
            h.write(&b[b.len() - 16..]);
        }
        h.write_u64(b.len() as u64);
    };
    for k in &entry.keys {
        put(k);
    }
    for k in entry.secondary_keys.as_deref().unwrap_or(&[]) {
        put(k);
    }
    put(&entry.content);
    put(entry.comment.as_deref().unwrap_or(""));
    put(entry.name.as_deref().unwrap_or(""));
    h.finish()
}

/// [`EntryRef`] as one number, the key of [`CompiledBooks::dups`].
fn packed(at: EntryRef) -> u64 {
    ((at.book as u64) << 32) | at.index as u64
}

/// The duplicate count of every entry that repeats earlier entries of its book (how many), by
/// [`packed`] place; entries that repeat none are not in the map.
fn count_duplicates(entries: &[CEntry<'_>], books: &[BookInfo]) -> FxMap<u64, u64> {
    // (book, quick hash, index, rank): equal quick hashes of a book end up side by side, in
    // book order; only such runs need exact hashes.
    let mut order: Vec<(u32, u64, u32, u32)> = entries
        .iter()
        .enumerate()
        .map(|(rank, e)| {
            (
                e.at.book as u32,
                quick_hash(e.entry),
                e.at.index as u32,
                rank as u32,
            )
        })
        .collect();
    order.sort_unstable();
    let mut dups = FxMap::default();
    let mut exact: FxMap<u64, u64> = FxMap::default();
    for run in order.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        if run.len() < 2 {
            continue;
        }
        exact.clear();
        for &(_, _, _, rank) in run {
            let e = &entries[rank as usize];
            let n = exact
                .entry(identity_hash(e.entry, books[e.at.book].id_seed))
                .or_insert(0);
            if *n > 0 {
                dups.insert(packed(e.at), *n);
            }
            *n += 1;
        }
    }
    dups
}

/// A run of keys in [`CompiledBooks::keys`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KeyRange {
    pub start: u32,
    pub len: u32,
}

impl KeyRange {
    pub(crate) fn is_empty(self) -> bool {
        self.len == 0
    }
}

static NO_DECORATORS: LazyLock<Decorators> = LazyLock::new(Decorators::default);

/// An entry's decorators; `None` (most entries) stands for none at all, without an allocation.
#[derive(Debug)]
pub(crate) struct Dec(Option<Box<Decorators>>);

impl std::ops::Deref for Dec {
    type Target = Decorators;
    fn deref(&self) -> &Decorators {
        self.0.as_deref().unwrap_or(&NO_DECORATORS)
    }
}

/// Where an entry's depth comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum DepthSpec {
    None,
    Fixed(u64),
    /// `@@reverse_depth N`: total message count minus N.
    Reverse(i64),
}

#[derive(Debug)]
pub(crate) struct CEntry<'a> {
    pub at: EntryRef,
    pub entry: &'a Entry,
    pub body: &'a str,
    pub body_empty: bool,
    pub dec: Dec,
    pub enabled: bool,
    pub constant: bool,
    pub primary: KeyRange,
    pub secondary: KeyRange,
    pub exclude: KeyRange,
    pub selective: bool,
    pub logic: SelectiveLogic,
    pub whole_words: Option<bool>,
    pub scan_depth: Option<u64>,
    pub order: f64,
    pub priority: f64,
    pub position: Position,
    pub depth: DepthSpec,
    pub role: Option<DecoratorRole>,
    pub probability: Option<f64>,
    pub exclude_recursion: bool,
    pub prevent_recursion: bool,
    pub ignore_budget: bool,
    /// 0 or 1: the strategy's book-kind rank (character/global first).
    pub kind_rank: u8,
    /// What few entries set; `None` for the defaults ([`CEntry::rare`]).
    pub rare: Option<Box<Rare>>,
}

/// The parts of an entry that few entries set (extra key groups, inclusion groups, timed
/// effects, recursion levels, triggers): boxed, so the rest carry a null pointer instead.
#[derive(Debug)]
pub(crate) struct Rare {
    /// `@@additional_keys` groups, each of which must match.
    pub additional: Vec<KeyRange>,
    pub groups: Vec<String>,
    pub group_override: bool,
    pub group_weight: f64,
    pub group_scoring: Option<bool>,
    pub sticky: u64,
    pub cooldown: u64,
    pub delay: u64,
    pub delay_until_recursion: Option<u64>,
    pub triggers: Vec<String>,
}

impl Rare {
    /// What an entry that sets none of these has.
    const NONE: Rare = Rare {
        additional: Vec::new(),
        groups: Vec::new(),
        group_override: false,
        group_weight: 100.0,
        group_scoring: None,
        sticky: 0,
        cooldown: 0,
        delay: 0,
        delay_until_recursion: None,
        triggers: Vec::new(),
    };

    fn is_none(&self) -> bool {
        self.additional.is_empty()
            && self.groups.is_empty()
            && !self.group_override
            && self.group_weight == 100.0
            && self.group_scoring.is_none()
            && self.sticky == 0
            && self.cooldown == 0
            && self.delay == 0
            && self.delay_until_recursion.is_none()
            && self.triggers.is_empty()
    }
}

/// [`Rare::NONE`], for entries without a box.
static NO_RARE: Rare = Rare::NONE;

impl<'a> CEntry<'a> {
    /// The entry's rarely set parts (the defaults when it has none).
    pub(crate) fn rare(&self) -> &Rare {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }

    /// The entry's `name`, else its `comment` (empty ones skipped).
    pub(crate) fn display_name(&self) -> Option<&'a str> {
        self.entry.name.as_deref().filter(|s| !s.is_empty()).or(self
            .entry
            .comment
            .as_deref()
            .filter(|s| !s.is_empty()))
    }
}

/// `Meta::flags`: the entry is in an inclusion group.
pub(crate) const META_GROUP: u8 = 1;
/// `Meta::flags`: the entry ignores the budget.
pub(crate) const META_IGNORE_BUDGET: u8 = 2;

/// What a scan needs of an entry before checking it, kept small and dense.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    pub book: u32,
    /// Place in budget order (constant first, strategy, priority highest first, rank).
    pub budget_pos: u32,
    /// The same with `@@ignore_on_max_context` entries last.
    pub budget_pos_late: u32,
    pub flags: u8,
}

#[derive(Debug)]
pub(crate) struct RegexKey {
    pub engine: Result<Engine, String>,
    /// Prefilter literal patterns; empty: always run.
    pub lits: Vec<u32>,
}

#[derive(Debug)]
pub(crate) struct BookInfo {
    pub name: String,
    pub kind: BookKind,
    pub recursive: Option<bool>,
    pub scan_depth: Option<u64>,
    pub token_budget: Option<usize>,
    /// The hash state after the book's name, where its entries' identities start
    /// ([`CompiledBooks::id`]).
    pub id_seed: u64,
}

/// Options that shape compilation: macros in keys, default case sensitivity, merge strategy.
///
/// ```
/// use ccv3_lore::{LorebookCompiler, BookInput, BookKind, ScanOptions, chat::{Chat, Message, Role}};
/// let mut book = ccv3::Lorebook::default();
/// book.entries.push(ccv3::Entry::new(&["dragon"], "Dragons breathe fire."));
/// let compiled = LorebookCompiler::new()
///     .compile(&[BookInput { book: &book, kind: BookKind::Global, name: "world".into() }]);
/// let chat = Chat { messages: vec![Message::new(Role::User, "I saw a dragon!")], ..Default::default() };
/// let r = compiled.scan(&chat, &Default::default(), &ScanOptions::default(), &ccv3_tokens::Estimate);
/// assert_eq!(r.activated[0].content, "Dragons breathe fire.");
/// ```
#[derive(Debug, Clone)]
pub struct LorebookCompiler {
    /// What `{{char}}`, `<char>` and `<bot>` stand for in keys.
    pub char_name: String,
    /// What `{{user}}` and `<user>` stand for in keys.
    pub user_name: String,
    /// Case sensitivity for entries that do not say (SillyTavern's default: false).
    pub case_sensitive: bool,
    /// How character and global books merge.
    pub strategy: Strategy,
    /// The books will be scanned once (a command-line call): the key automata are not built at
    /// compile time, and a scan that cannot recurse builds them from only the keys that can
    /// occur in its text. Scans give the same results either way.
    pub single_scan: bool,
}

impl Default for LorebookCompiler {
    fn default() -> Self {
        LorebookCompiler {
            char_name: String::new(),
            user_name: "User".into(),
            case_sensitive: false,
            strategy: Strategy::CharacterFirst,
            single_scan: false,
        }
    }
}

/// Books compiled for scanning. Borrows the books; build once, scan many times.
#[derive(Debug)]
pub struct CompiledBooks<'a> {
    pub(crate) books: Vec<BookInfo>,
    /// In activation order (rank).
    pub(crate) entries: Vec<CEntry<'a>>,
    /// Every plain key and regex literal, by pattern id.
    pub(crate) patterns: Patterns<'a>,
    /// The automata of every pattern (built at compile time, or on first need for a single scan).
    pub(crate) automata: OnceLock<Automata>,
    /// Compiled for a single scan: a scan that cannot recurse builds automata for its own text.
    pub(crate) single_scan: bool,
    pub(crate) n_ci: u32,
    pub(crate) fan_off: Vec<u32>,
    pub(crate) fan: Vec<u32>,
    pub(crate) always: Vec<u32>,
    pub(crate) regexes: Vec<RegexKey>,
    /// Every key of every entry; entries hold [`KeyRange`]s into it.
    pub(crate) keys: Vec<KeyKind>,
    /// The text of each key in `keys` (apart: scans look at kinds, explanations at texts).
    pub(crate) key_text: Vec<KeyText<'a>>,
    /// From identity to rank, made on first use (scans with a state).
    pub(crate) by_id: OnceLock<FxMap<u64, u32>>,
    /// Duplicate counts for identities, made on first use ([`count_duplicates`]).
    pub(crate) dups: OnceLock<FxMap<u64, u64>>,
    pub(crate) max_depth: u64,
    pub(crate) levels: Vec<u64>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Per entry rank.
    pub(crate) meta: Vec<Meta>,
}

/// The patterns of the automata: lowercased keys (and regex literals) matched against the
/// lowercased scan text, and case-sensitive ones matched against the text as written.
#[derive(Debug)]
pub(crate) struct Patterns<'a> {
    pub ci: Vec<Cow<'a, str>>,
    pub cs: Vec<Cow<'a, str>>,
}

/// Aho-Corasick automata over [`Patterns`] (or over the part of them that can occur in a text),
/// each with the pattern id of every automaton pattern (empty: the same numbers).
#[derive(Debug)]
pub(crate) struct Automata {
    pub ci: Option<AhoCorasick>,
    pub ci_ids: Vec<u32>,
    pub cs: Option<AhoCorasick>,
    pub cs_ids: Vec<u32>,
}

impl Automata {
    /// Builds the automata of every pattern, or with `texts` (lowercased, as written), of the
    /// patterns that can occur in them.
    pub(crate) fn build(p: &Patterns<'_>, texts: Option<(&str, &str)>) -> Automata {
        let one = |pats: &[Cow<'_, str>], text: Option<&str>| -> (Option<AhoCorasick>, Vec<u32>) {
            let (list, ids): (Vec<&[u8]>, Vec<u32>) = match text {
                None => (pats.iter().map(|t| t.as_bytes()).collect(), Vec::new()),
                Some(text) => {
                    let grams = crate::grams::Grams::of(&[text.as_bytes()]);
                    pats.iter()
                        .enumerate()
                        .filter(|(_, t)| grams.may_contain(t.as_bytes()))
                        .map(|(i, t)| (t.as_bytes(), i as u32))
                        .unzip()
                }
            };
            if list.is_empty() {
                return (None, Vec::new());
            }
            let ac = AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                // Huge pattern sets: the noncontiguous NFA builds fastest (no conversion), and
                // searching a chat with it costs a fraction of a millisecond more.
                .kind(if list.len() > 10_000 {
                    Some(AhoCorasickKind::NoncontiguousNFA)
                } else {
                    None
                })
                .build(list)
                .ok();
            (ac, ids)
        };
        let (ci, ci_ids) = one(&p.ci, texts.map(|t| t.0));
        let (cs, cs_ids) = one(&p.cs, texts.map(|t| t.1));
        Automata {
            ci,
            ci_ids,
            cs,
            cs_ids,
        }
    }
}

impl<'a> CompiledBooks<'a> {
    /// The automata of every pattern (built on first use when compiled for a single scan).
    pub(crate) fn automata(&self) -> &Automata {
        self.automata
            .get_or_init(|| Automata::build(&self.patterns, None))
    }

    /// The text of the `i`th key of a range, as an `Arc` for an explanation (empty when out of
    /// range; made when asked for: most keys are never named in one).
    pub(crate) fn key_arc(&self, r: KeyRange, i: usize) -> Arc<str> {
        Arc::from(self.key_text.get(r.start as usize + i).map_or("", |t| &**t))
    }

    /// The keys of a range.
    pub(crate) fn keys_of(&self, r: KeyRange) -> &[KeyKind] {
        let start = r.start as usize;
        self.keys
            .get(start..start + r.len as usize)
            .unwrap_or_default()
    }

    /// The stable identity of an entry (its key in states and the seed of its rolls):
    /// [`identity_hash`] and the entry's duplicate count in its book, mixed.
    pub(crate) fn id(&self, e: &CEntry<'_>) -> u64 {
        // Hashed here, not at compile time: hashing every entry's texts would cost more than
        // the rest of the compile, and most scans need no identity.
        let dups = self
            .dups
            .get_or_init(|| count_duplicates(&self.entries, &self.books));
        let dup = dups.get(&packed(e.at)).copied().unwrap_or(0);
        crate::text::mix(identity_hash(e.entry, self.books[e.at.book].id_seed) ^ dup)
    }

    /// From identity to rank (made on first use).
    pub(crate) fn by_id(&self) -> &FxMap<u64, u32> {
        self.by_id.get_or_init(|| {
            let mut m = FxMap::with_capacity_and_hasher(self.entries.len(), Default::default());
            for (rank, e) in self.entries.iter().enumerate() {
                m.insert(self.id(e), rank as u32);
            }
            m
        })
    }

    /// Diagnostics found while compiling (invalid or refused regex keys, decorator problems).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
    /// The number of entries in all books.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// True when the books have no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// The display names of the books, in input order.
    pub fn book_names(&self) -> Vec<&str> {
        self.books.iter().map(|b| b.name.as_str()).collect()
    }
}

// ---- lenient readers of SillyTavern knobs in `extensions` ----

pub(crate) fn val_f64(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

pub(crate) fn val_u64(v: Option<&Value>) -> Option<u64> {
    val_f64(v).filter(|f| *f >= 0.0).map(|f| f.min(1e15) as u64)
}

pub(crate) fn val_bool(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|f| f != 0.0),
        Value::String(s) => match s.trim() {
            "true" | "1" => Some(true),
            "false" | "0" | "" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn val_strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// A SillyTavern knob of an entry's `extensions`.
#[derive(Debug, Clone, Copy)]
enum Knob {
    SelectiveLogic,
    DisplayIndex,
    UseProbability,
    ExcludeRecursion,
    CaseSensitive,
    ScanDepth,
    Role,
    Probability,
    DelayUntilRecursion,
    MatchWholeWords,
    Group,
    GroupOverride,
    GroupWeight,
    UseGroupScoring,
    Sticky,
    Cooldown,
    Delay,
    PreventRecursion,
    IgnoreBudget,
    Triggers,
    Position,
    Depth,
    OutletName,
}

impl Knob {
    /// How many knobs there are.
    const COUNT: usize = 23;

    /// The knob an `extensions` key names.
    fn of(name: &str) -> Option<Knob> {
        Some(match name {
            "selectiveLogic" => Knob::SelectiveLogic,
            "display_index" => Knob::DisplayIndex,
            "useProbability" => Knob::UseProbability,
            "exclude_recursion" => Knob::ExcludeRecursion,
            "case_sensitive" => Knob::CaseSensitive,
            "scan_depth" => Knob::ScanDepth,
            "role" => Knob::Role,
            "probability" => Knob::Probability,
            "delay_until_recursion" => Knob::DelayUntilRecursion,
            "match_whole_words" => Knob::MatchWholeWords,
            "group" => Knob::Group,
            "group_override" => Knob::GroupOverride,
            "group_weight" => Knob::GroupWeight,
            "use_group_scoring" => Knob::UseGroupScoring,
            "sticky" => Knob::Sticky,
            "cooldown" => Knob::Cooldown,
            "delay" => Knob::Delay,
            "prevent_recursion" => Knob::PreventRecursion,
            "ignore_budget" => Knob::IgnoreBudget,
            "triggers" => Knob::Triggers,
            "position" => Knob::Position,
            "depth" => Knob::Depth,
            "outlet_name" => Knob::OutletName,
            _ => return None,
        })
    }
}

/// The SillyTavern knobs of an entry's `extensions`, found in one pass over the object, read
/// straight from its text when it is still the text of the file.
struct Knobs<'o> {
    /// Whether the entry carries SillyTavern's World Info knobs (it came from SillyTavern, which
    /// writes `use_regex: true` on every exported entry and ignores it on import):
    /// `selectiveLogic`, `display_index`, `useProbability` or `exclude_recursion` is present.
    st_marked: bool,
    /// Where each knob's value is in `found` ([`u8::MAX`]: the entry does not have it).
    slot: [u8; Knob::COUNT],
    /// The values found (a buffer that goes from entry to entry).
    found: Vec<Cow<'o, Value>>,
}

impl<'o> Knobs<'o> {
    /// Reads the knobs of `ext` into `found` (cleared first; hand it back with
    /// [`Knobs::into_buffer`]).
    fn read(ext: &'o ccv3::Extensions, mut found: Vec<Cow<'o, Value>>) -> Self {
        found.clear();
        let mut slot = [u8::MAX; Knob::COUNT];
        ext.visit(
            |name| Knob::of(name).is_some(),
            |name, v| {
                if let Some(k) = Knob::of(name) {
                    match slot[k as usize] {
                        u8::MAX if found.len() < usize::from(u8::MAX) => {
                            slot[k as usize] = found.len() as u8;
                            found.push(v);
                        }
                        u8::MAX => {}
                        // A name written twice: the last value counts, as in a map.
                        at => found[usize::from(at)] = v,
                    }
                }
            },
        );
        let mut k = Knobs {
            st_marked: false,
            slot,
            found,
        };
        k.st_marked = [
            Knob::SelectiveLogic,
            Knob::DisplayIndex,
            Knob::UseProbability,
            Knob::ExcludeRecursion,
        ]
        .iter()
        .any(|&n| k.get(n).is_some());
        k
    }

    /// The knob's value, when the entry has it.
    fn get(&self, k: Knob) -> Option<&Value> {
        self.found
            .get(usize::from(self.slot[k as usize]))
            .map(|v| &**v)
    }

    /// The buffer, for the next entry.
    fn into_buffer(self) -> Vec<Cow<'o, Value>> {
        self.found
    }
}

/// Distinct pattern texts, each with its id (its place in `texts`): the hash table holds only
/// the ids (4 bytes a slot), where a map would hold each text beside its id.
#[derive(Default)]
struct PatternTable<'a> {
    texts: Vec<Cow<'a, str>>,
    ids: hashbrown::HashTable<u32>,
}

impl<'a> PatternTable<'a> {
    fn with_capacity(n: usize) -> Self {
        PatternTable {
            texts: Vec::new(),
            ids: hashbrown::HashTable::with_capacity(n),
        }
    }

    fn hash(text: &str) -> u64 {
        use std::hash::BuildHasher;
        std::hash::BuildHasherDefault::<crate::scan::Fx>::default().hash_one(text)
    }

    /// The id of `text`, a new one (the next number) when it is not in the table yet.
    fn id_of(&mut self, text: Cow<'a, str>) -> u32 {
        let h = Self::hash(&text);
        let texts = &self.texts;
        if let Some(&id) = self.ids.find(h, |&id| texts[id as usize] == text) {
            return id;
        }
        let id = texts.len() as u32;
        self.ids
            .insert_unique(h, id, |&i| Self::hash(&texts[i as usize]));
        self.texts.push(text);
        id
    }
}

struct Builder<'a> {
    /// A buffer for [`Knobs::read`].
    knobs: Vec<Cow<'a, Value>>,
    /// Case-insensitive patterns (lower-cased) and their temporary ids.
    pats_ci: PatternTable<'a>,
    /// Case-sensitive patterns and their temporary ids (`1 << 31 | n`).
    pats_cs: PatternTable<'a>,
    regex_ids: FxMap<(String, String), u32>,
    regexes: Vec<RegexKey>,
    keys: Vec<KeyKind>,
    texts: Vec<KeyText<'a>>,
    /// Diagnostics in the order met; a regex key's is known once its pattern is parsed.
    diags: Vec<DiagSlot>,
    /// Pattern and flags of each regex (by id), parsed after the entries are read.
    pending: Vec<(String, String)>,
}

enum DiagSlot {
    Ready(Diagnostic),
    /// The regex with this id, first met at this path: a diagnostic when it is not usable.
    Regex(u32, String),
}

/// Books with at least this many entries are compiled on two threads.
const PARALLEL_COMPILE: usize = 2048;

/// Entries the first compiling thread claims at a time (the other claims a quarter of what is
/// left, never fewer than this).
const COMPILE_STEP: usize = 256;

/// `s` lower-cased, borrowed when it has no upper-case letter.
fn lower<'a>(s: Cow<'a, str>) -> Cow<'a, str> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(s.to_ascii_lowercase())
        } else {
            s
        }
    } else {
        Cow::Owned(s.to_lowercase())
    }
}

impl<'a> Builder<'a> {
    /// An empty builder with room for `n_keys` keys.
    fn with_capacity(n_keys: usize) -> Self {
        Builder {
            knobs: Vec::new(),
            pats_ci: PatternTable::with_capacity(n_keys / 2),
            pats_cs: PatternTable::default(),
            regex_ids: FxMap::default(),
            regexes: Vec::new(),
            keys: Vec::with_capacity(n_keys),
            texts: Vec::with_capacity(n_keys),
            diags: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Takes in the builder `other` that compiled the entries right after this one's, and
    /// `entries`, the entries it compiled: its patterns and regexes get this builder's ids
    /// (new ones in the order `other` met them, as if this builder had gone on alone), its keys
    /// and diagnostics follow this builder's, and the entries' key ranges are moved to match.
    fn absorb(&mut self, other: Builder<'a>, entries: &mut [CEntry<'a>]) {
        let key_base = self.keys.len() as u32;
        // Each of `other`'s patterns, in its id order, gets this builder's id.
        let remap = |from: PatternTable<'a>, into: &mut PatternTable<'a>, base: u32| -> Vec<u32> {
            from.texts
                .into_iter()
                .map(|text| base | into.id_of(text))
                .collect()
        };
        let ci = remap(other.pats_ci, &mut self.pats_ci, 0);
        let cs = remap(other.pats_cs, &mut self.pats_cs, 1 << 31);
        let fix = |p: u32| -> u32 {
            if p & (1 << 31) != 0 {
                cs.get((p & !(1 << 31)) as usize).copied().unwrap_or(p)
            } else {
                ci.get(p as usize).copied().unwrap_or(p)
            }
        };
        let mut rx = Vec::with_capacity(other.regexes.len());
        let mut fresh = Vec::with_capacity(other.regexes.len());
        for (key, mut r) in other.pending.into_iter().zip(other.regexes) {
            match self.regex_ids.get(&key) {
                Some(&id) => {
                    rx.push(id);
                    fresh.push(false);
                }
                None => {
                    let id = self.regexes.len() as u32;
                    for l in &mut r.lits {
                        *l = fix(*l);
                    }
                    self.regexes.push(r);
                    self.pending.push(key.clone());
                    self.regex_ids.insert(key, id);
                    rx.push(id);
                    fresh.push(true);
                }
            }
        }
        for d in other.diags {
            match d {
                DiagSlot::Ready(d) => self.diags.push(DiagSlot::Ready(d)),
                // A regex this builder had met already has its diagnostic here.
                DiagSlot::Regex(id, path) => {
                    if fresh.get(id as usize) == Some(&true) {
                        self.diags.push(DiagSlot::Regex(rx[id as usize], path));
                    }
                }
            }
        }
        self.keys.extend(other.keys.into_iter().map(|k| match k {
            KeyKind::Plain { pat, multiword } => KeyKind::Plain {
                pat: fix(pat),
                multiword,
            },
            KeyKind::Regex(id) => KeyKind::Regex(rx.get(id as usize).copied().unwrap_or(id)),
            KeyKind::Invalid => KeyKind::Invalid,
        }));
        self.texts.extend(other.texts);
        // Empty ranges point nowhere; the unset ones (0, 0) are left as they are.
        let shift = |r: &mut KeyRange| {
            if r.start > 0 || r.len > 0 {
                r.start += key_base;
            }
        };
        for e in entries {
            shift(&mut e.primary);
            shift(&mut e.secondary);
            shift(&mut e.exclude);
            if let Some(r) = &mut e.rare {
                r.additional.iter_mut().for_each(shift);
            }
        }
    }

    fn pattern(&mut self, ci: bool, text: Cow<'a, str>) -> u32 {
        // Temporary ids: case-insensitive patterns are renumbered after the sensitive ones are known.
        if ci {
            self.pats_ci.id_of(text)
        } else {
            (1u32 << 31) | self.pats_cs.id_of(text)
        }
    }

    /// Registers a regex key: its prefilter literals join the automata now; the pattern itself
    /// is parsed later ([`Builder::parse_regexes`]), while the automata are built.
    fn regex(&mut self, pat: &str, flags: &str, path: &dyn Fn() -> String) -> u32 {
        let key = (pat.to_string(), flags.to_string());
        if let Some(&id) = self.regex_ids.get(&key) {
            return id;
        }
        let (literals, icase) = jsregex::literals(pat, flags);
        let lits = literals
            .into_iter()
            .map(|l| self.pattern(icase, Cow::Owned(l)))
            .collect();
        let id = self.regexes.len() as u32;
        self.regexes.push(RegexKey {
            engine: Err(String::new()),
            lits,
        });
        self.diags.push(DiagSlot::Regex(id, path()));
        self.pending.push(key.clone());
        self.regex_ids.insert(key, id);
        id
    }

    /// Parses the regex keys (`pending` holds each one's pattern and flags); an unusable one
    /// loses its literals. (They stay in the automata, where nothing refers to them.)
    fn parse_regexes(regexes: &mut [RegexKey], pending: &[(String, String)]) {
        for (r, (pat, flags)) in regexes.iter_mut().zip(pending) {
            r.engine = jsregex::engine(pat, flags);
            if r.engine.is_err() {
                r.lits.clear();
            }
        }
    }

    /// Marks the keys whose regex did not parse as [`KeyKind::Invalid`] and turns the regex
    /// diagnostics into warnings.
    fn finish_regexes(
        regexes: &[RegexKey],
        keys: &mut [KeyKind],
        diags: Vec<DiagSlot>,
    ) -> Vec<Diagnostic> {
        for k in keys.iter_mut() {
            if let KeyKind::Regex(id) = *k {
                if regexes.get(id as usize).is_none_or(|r| r.engine.is_err()) {
                    *k = KeyKind::Invalid;
                }
            }
        }
        diags
            .into_iter()
            .filter_map(|d| match d {
                DiagSlot::Ready(d) => Some(d),
                DiagSlot::Regex(id, path) => match &regexes.get(id as usize)?.engine {
                    Ok(_) => None,
                    Err(why) => Some(Diagnostic::warning(
                        if why.contains("refused") {
                            "lore-regex-refused"
                        } else {
                            "lore-regex-invalid"
                        },
                        path,
                        format!("{why}; the key never matches"),
                    )),
                },
            })
            .collect()
    }

    /// Compiles the keys of a book entry (borrowed from the book when macros and trimming leave
    /// them unchanged).
    fn keys(
        &mut self,
        raw: &'a [String],
        regex_mode: bool,
        case_sensitive: bool,
        names: (&str, &str),
        at: (&str, usize, &str),
    ) -> KeyRange {
        let resolved =
            raw.iter().map(
                |r| match crate::text::resolve_key_macros_cow(r, names.0, names.1) {
                    Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
                    Cow::Owned(o) => Cow::Owned(o.trim().to_string()),
                },
            );
        self.keys_from(resolved, regex_mode, case_sensitive, at)
    }

    /// Compiles keys that do not live in the book (decorator values).
    fn keys_owned(
        &mut self,
        raw: &[String],
        regex_mode: bool,
        case_sensitive: bool,
        names: (&str, &str),
        at: (&str, usize, &str),
    ) -> KeyRange {
        let resolved = raw.iter().map(|r| {
            Cow::Owned(
                crate::text::resolve_key_macros(r, names.0, names.1)
                    .trim()
                    .to_string(),
            )
        });
        self.keys_from(resolved, regex_mode, case_sensitive, at)
    }

    fn keys_from(
        &mut self,
        resolved: impl Iterator<Item = Cow<'a, str>>,
        regex_mode: bool,
        case_sensitive: bool,
        at: (&str, usize, &str),
    ) -> KeyRange {
        let start = self.keys.len() as u32;
        for (i, k) in resolved.enumerate() {
            if k.is_empty() {
                continue;
            }
            let p = || format!("{}: entries[{}].{}[{i}]", at.0, at.1, at.2);
            let kind = if let Some((pat, flags)) = jsregex::split_slash(&k) {
                KeyKind::Regex(self.regex(pat, flags, &p))
            } else if regex_mode {
                KeyKind::Regex(self.regex(&k, if case_sensitive { "" } else { "i" }, &p))
            } else {
                let multiword = k.contains(char::is_whitespace);
                let text = if case_sensitive {
                    k.clone()
                } else {
                    lower(k.clone())
                };
                KeyKind::Plain {
                    pat: self.pattern(!case_sensitive, text),
                    multiword,
                }
            };
            self.keys.push(kind);
            self.texts.push(k);
        }
        KeyRange {
            start,
            len: self.keys.len() as u32 - start,
        }
    }
}

fn position_of(e: &Entry, d: &Decorators, kn: &Knobs<'_>) -> (Position, DepthSpec) {
    if let Some(p) = &d.position {
        let pos = match p.as_str() {
            "before_char" => Position::BeforeChar,
            "after_char" => Position::AfterChar,
            other => Position::Named(other.to_string()),
        };
        return (pos, DepthSpec::None);
    }
    if let Some(depth) = d.depth {
        return (Position::AtDepth, DepthSpec::Fixed(depth.max(0) as u64));
    }
    if let Some(r) = d.reverse_depth {
        return (Position::AtDepth, DepthSpec::Reverse(r));
    }
    let st = val_f64(kn.get(Knob::Position)).or_else(|| match e.extra.get("position") {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    });
    if let Some(n) = st {
        let pos = match n as i64 {
            0 => Position::BeforeChar,
            1 => Position::AfterChar,
            2 => Position::AuthorsNoteTop,
            3 => Position::AuthorsNoteBottom,
            4 => {
                let depth = val_u64(kn.get(Knob::Depth)).unwrap_or(4);
                return (Position::AtDepth, DepthSpec::Fixed(depth));
            }
            5 => Position::ExamplesTop,
            6 => Position::ExamplesBottom,
            7 => Position::Outlet(
                kn.get(Knob::OutletName)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ),
            _ => Position::AfterChar,
        };
        return (pos, DepthSpec::None);
    }
    match e.position.as_deref() {
        Some("before_char") => (Position::BeforeChar, DepthSpec::None),
        _ => (Position::AfterChar, DepthSpec::None),
    }
}

/// An `f64` as a `u64` in the same total order (`f64::total_cmp`).
fn total_key(f: f64) -> u64 {
    let bits = f.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

impl LorebookCompiler {
    /// A compiler with the defaults (`{{user}}` = `User`, case-insensitive, character first).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the names the key macros stand for.
    pub fn names(mut self, char_name: &str, user_name: &str) -> Self {
        self.char_name = char_name.to_string();
        self.user_name = user_name.to_string();
        self
    }

    /// Sets the merge strategy.
    pub fn strategy(mut self, s: Strategy) -> Self {
        self.strategy = s;
        self
    }

    /// Sets the default case sensitivity.
    pub fn case_sensitive(mut self, yes: bool) -> Self {
        self.case_sensitive = yes;
        self
    }

    /// Compiles for a single scan (see [`LorebookCompiler::single_scan`]).
    pub fn for_single_scan(mut self, yes: bool) -> Self {
        self.single_scan = yes;
        self
    }

    /// Compiles `books` (in the given order; the order names them in [`EntryRef::book`]).
    pub fn compile<'a>(&self, books: &[BookInput<'a>]) -> CompiledBooks<'a> {
        let total: usize = books.iter().map(|b| b.book.entries.len()).sum();
        self.compile_with(books, total >= PARALLEL_COMPILE)
    }

    /// [`LorebookCompiler::compile`], with the entries compiled on two threads or on one.
    fn compile_with<'a>(&self, books: &[BookInput<'a>], two_threads: bool) -> CompiledBooks<'a> {
        let total: usize = books.iter().map(|b| b.book.entries.len()).sum();
        // Sized up front: growing tables of this size copies them and touches fresh memory
        // twice, which costs more than the counting.
        let n_keys: usize = books
            .iter()
            .flat_map(|b| &b.book.entries)
            .map(|e| e.keys.len() + e.secondary_keys.as_ref().map_or(0, Vec::len))
            .sum();
        let mut b = Builder::with_capacity(n_keys);
        let names = (self.char_name.as_str(), self.user_name.as_str());
        let mut infos = Vec::with_capacity(books.len());
        let mut entries: Vec<CEntry<'a>> = Vec::with_capacity(total);
        let mut max_depth = 0u64;
        for input in books.iter() {
            let book = input.book;
            let scan_depth = book
                .scan_depth
                .as_ref()
                .and_then(|n| n.as_f64())
                .filter(|f| *f >= 0.0)
                .map(|f| f.min(1e9) as u64);
            max_depth = max_depth.max(scan_depth.unwrap_or(0));
            infos.push(BookInfo {
                name: input.name.clone(),
                kind: input.kind,
                recursive: book.recursive_scanning,
                scan_depth,
                token_budget: book
                    .token_budget
                    .as_ref()
                    .and_then(|n| n.as_f64())
                    .filter(|f| *f > 0.0)
                    .map(|f| f.min(1e15) as usize),
                id_seed: Fnv::new().str(&input.name).0,
            });
        }
        // Every entry as (book, index); big books are compiled on two threads, the second with
        // a builder of its own per chunk, merged into this one afterwards (ids assigned as if
        // one builder had met every entry in order).
        let work = |b: &mut Builder<'a>,
                    range: std::ops::Range<usize>,
                    max_depth: &mut u64,
                    out: &mut Vec<CEntry<'a>>| {
            let mut first = 0usize;
            for (bi, input) in books.iter().enumerate() {
                let n = input.book.entries.len();
                let (lo, hi) = (range.start.max(first), range.end.min(first + n));
                for flat in lo..hi {
                    let ei = flat - first;
                    let e = &input.book.entries[ei];
                    out.push(self.compile_entry(
                        b,
                        (bi, ei, input.name.as_str()),
                        e,
                        names,
                        max_depth,
                    ));
                }
                first += n;
            }
        };
        if two_threads && total > 1 {
            // This thread compiles from the front in small steps into `b`; the other from the
            // back in shrinking chunks, each with a builder of its own. They meet wherever their
            // speeds put the boundary (a thread that starts with cold memory is slower), and the
            // back chunks are then merged in book order.
            let unclaimed = std::sync::Mutex::new(0..total);
            let claim = |from_back: bool| {
                let mut left = unclaimed.lock().unwrap_or_else(|e| e.into_inner());
                let n = left.len();
                if n == 0 {
                    return None;
                }
                Some(if from_back {
                    let take = (n / 4).max(COMPILE_STEP).min(n);
                    left.end -= take;
                    left.end..left.end + take
                } else {
                    let take = COMPILE_STEP.min(n);
                    left.start += take;
                    left.start - take..left.start
                })
            };
            let back = || {
                let mut chunks = Vec::new();
                while let Some(range) = claim(true) {
                    // The chunk's share of the keys.
                    let mut b2 = Builder::with_capacity(n_keys.saturating_mul(range.len()) / total);
                    let mut depth = 0u64;
                    let mut out = Vec::with_capacity(range.len());
                    work(&mut b2, range, &mut depth, &mut out);
                    chunks.push((b2, out, depth));
                }
                chunks
            };
            let mut chunks = std::thread::scope(|scope| {
                let worker = std::thread::Builder::new()
                    .name("ccv3-lore-compile".into())
                    .spawn_scoped(scope, back)
                    .ok();
                while let Some(range) = claim(false) {
                    work(&mut b, range, &mut max_depth, &mut entries);
                }
                match worker.map(|w| w.join()) {
                    Some(Ok(chunks)) => chunks,
                    Some(Err(e)) => std::panic::resume_unwind(e),
                    // No second thread: this one has compiled everything.
                    None => Vec::new(),
                }
            });
            // Claimed from the back: the last chunk claimed comes first in the book.
            chunks.reverse();
            for (b2, mut part, depth) in chunks {
                max_depth = max_depth.max(depth);
                b.absorb(b2, &mut part);
                entries.extend(part);
            }
        } else {
            work(&mut b, 0..total, &mut max_depth, &mut entries);
        }
        let Builder {
            pats_ci,
            pats_cs,
            mut regexes,
            mut keys,
            texts,
            diags,
            pending,
            ..
        } = b;
        // The patterns by id, case-insensitive ones and case-sensitive ones.
        let patterns = Patterns {
            ci: pats_ci.texts,
            cs: pats_cs.texts,
        };
        let single_scan = self.single_scan;
        // A second thread builds the automata (or, for a single scan, which builds its own,
        // checks seven eighths of the regex keys) while this one checks the other regex keys
        // and orders the entries; a single thread does all of it when no thread can be had.
        let half = if single_scan {
            regexes.len() / 8
        } else {
            regexes.len()
        };
        let (automata, half_done, levels, meta) = std::thread::scope(|scope| {
            let (mine, theirs) = regexes.split_at_mut(half);
            let (my_src, their_src) = pending.split_at(half.min(pending.len()));
            let pats = &patterns;
            let worker = std::thread::Builder::new()
                .name("ccv3-lore-compile".into())
                .spawn_scoped(scope, move || {
                    Builder::parse_regexes(theirs, their_src);
                    (!single_scan).then(|| Automata::build(pats, None))
                })
                .ok();
            Builder::parse_regexes(mine, my_src);
            // Activation order: SillyTavern sorts by order, highest first (stable).
            let kind_rank = |k: BookKind| match (self.strategy, k) {
                (Strategy::Evenly, _) => 0,
                (Strategy::CharacterFirst, BookKind::Character)
                | (Strategy::GlobalFirst, BookKind::Global) => 0,
                _ => 1,
            };
            for e in &mut entries {
                e.kind_rank = kind_rank(infos[e.at.book].kind);
            }
            // Sort small keys, then move each entry in place along the permutation's cycles.
            let mut order: Vec<(u8, u64, EntryRef, u32)> = entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.kind_rank, !total_key(e.order), e.at, i as u32))
                .collect();
            order.sort_unstable();
            let perm: Vec<u32> = order.iter().map(|k| k.3).collect();
            drop(order);
            let mut done = vec![false; perm.len()];
            for start in 0..perm.len() {
                if done[start] {
                    continue;
                }
                let mut cur = start;
                loop {
                    done[cur] = true;
                    let src = perm[cur] as usize;
                    if src == start {
                        break;
                    }
                    entries.swap(cur, src);
                    cur = src;
                }
            }
            let mut levels = Vec::new();
            let mut any_late = false;
            for e in &entries {
                if let Some(l) = e.rare().delay_until_recursion {
                    levels.push(l);
                }
                any_late |= e.dec.ignore_on_max_context;
            }
            levels.sort_unstable();
            levels.dedup();
            let mut meta: Vec<Meta> = entries
                .iter()
                .map(|e| Meta {
                    book: e.at.book as u32,
                    budget_pos: 0,
                    budget_pos_late: 0,
                    flags: (if e.rare().groups.is_empty() {
                        0
                    } else {
                        META_GROUP
                    }) | (if e.ignore_budget {
                        META_IGNORE_BUDGET
                    } else {
                        0
                    }),
                })
                .collect();
            for late in [false, true] {
                if late && !any_late {
                    for m in &mut meta {
                        m.budget_pos_late = m.budget_pos;
                    }
                    break;
                }
                // (late last, constant first, strategy, priority highest first, rank).
                let mut order: Vec<(u8, u64, u32)> = entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let l = late && e.dec.ignore_on_max_context;
                        (
                            (u8::from(l) << 2) | (u8::from(!e.constant) << 1) | e.kind_rank.min(1),
                            !total_key(e.priority),
                            i as u32,
                        )
                    })
                    .collect();
                order.sort_unstable();
                for (pos, &(_, _, i)) in order.iter().enumerate() {
                    if late {
                        meta[i as usize].budget_pos_late = pos as u32;
                    } else {
                        meta[i as usize].budget_pos = pos as u32;
                    }
                }
            }

            let joined = worker.map(|w| w.join());
            match joined {
                Some(Ok(built)) => (built, true, levels, meta),
                Some(Err(e)) => std::panic::resume_unwind(e),
                None => (None, false, levels, meta),
            }
        });
        // No second thread could be had: this one does its share.
        if !half_done {
            Builder::parse_regexes(
                &mut regexes[half..],
                pending.get(half..).unwrap_or_default(),
            );
        }
        let automata = match automata {
            Some(a) => OnceLock::from(a),
            None if !single_scan => OnceLock::from(Automata::build(&patterns, None)),
            None => OnceLock::new(),
        };
        let diagnostics = Builder::finish_regexes(&regexes, &mut keys, diags);
        // Renumber patterns: case-insensitive first, then case-sensitive.
        let n_ci = patterns.ci.len() as u32;
        let fix = |p: u32| {
            if p & (1 << 31) != 0 {
                n_ci + (p & !(1 << 31))
            } else {
                p
            }
        };
        for k in &mut keys {
            if let KeyKind::Plain { pat, .. } = k {
                *pat = fix(*pat);
            }
        }
        for r in &mut regexes {
            for l in &mut r.lits {
                *l = fix(*l);
            }
        }
        let n_pat = n_ci + patterns.cs.len() as u32;
        // Fan-out from patterns to the entries whose primary keys they can trigger: a counting
        // sort by pattern (ranks ascending within a pattern, each once).
        let mut always = Vec::new();
        let mut fan_off = vec![0u32; n_pat as usize + 1];
        let mut pats: Vec<u32> = Vec::new();
        let mut spans: Vec<(u32, u32)> = Vec::with_capacity(entries.len());
        let mut flat: Vec<u32> = Vec::with_capacity(keys.len());
        for (rank, e) in entries.iter().enumerate() {
            let mut is_always = e.constant || e.dec.activate || e.dec.keep_activate_after_match;
            pats.clear();
            let start = e.primary.start as usize;
            for k in keys
                .get(start..start + e.primary.len as usize)
                .unwrap_or_default()
            {
                match *k {
                    KeyKind::Plain { pat, .. } => pats.push(pat),
                    KeyKind::Regex(r) => {
                        let lits = &regexes[r as usize].lits;
                        if lits.is_empty() {
                            is_always = true;
                        }
                        pats.extend_from_slice(lits);
                    }
                    KeyKind::Invalid => {}
                }
            }
            if is_always {
                always.push(rank as u32);
            }
            pats.sort_unstable();
            pats.dedup();
            let s0 = flat.len() as u32;
            for &p in &pats {
                fan_off[p as usize + 1] += 1;
            }
            flat.extend_from_slice(&pats);
            spans.push((s0, flat.len() as u32));
        }
        for i in 1..fan_off.len() {
            fan_off[i] += fan_off[i - 1];
        }
        let mut cursor = fan_off.clone();
        let mut fan = vec![0u32; flat.len()];
        for (rank, &(s0, s1)) in spans.iter().enumerate() {
            for &p in &flat[s0 as usize..s1 as usize] {
                let c = &mut cursor[p as usize];
                fan[*c as usize] = rank as u32;
                *c += 1;
            }
        }
        drop((flat, spans, cursor));
        CompiledBooks {
            books: infos,
            entries,
            patterns,
            automata,
            single_scan,
            n_ci,
            fan_off,
            fan,
            always,
            regexes,
            keys,
            key_text: texts,
            by_id: OnceLock::new(),
            dups: OnceLock::new(),
            max_depth,
            levels,
            diagnostics,
            meta,
        }
    }
}

impl LorebookCompiler {
    /// Compiles one entry (`ei` of book `bi`, named `bn`) with the builder `b`, raising
    /// `max_depth` to the entry's own scan depth.
    fn compile_entry<'a>(
        &self,
        b: &mut Builder<'a>,
        (bi, ei, bn): (usize, usize, &str),
        e: &'a Entry,
        names: (&str, &str),
        max_depth: &mut u64,
    ) -> CEntry<'a> {
        let parsed = decorator::parse(&e.content);
        for p in &parsed.problems {
            b.diags.push(DiagSlot::Ready(Diagnostic::info(
                "lore-decorator",
                format!("{bn}: entries[{ei}].content"),
                format!("line {}: {}", p.line, p.message),
            )));
        }
        // No decorator header: the body is the whole content and the decorators are none.
        let has_dec = parsed.body.len() != e.content.len();
        let dec = Dec(if has_dec {
            Some(Box::new(parsed.decorators))
        } else {
            None
        });
        let kn = Knobs::read(&e.extensions, std::mem::take(&mut b.knobs));
        let regex_mode = e.use_regex && !kn.st_marked;
        let case_sensitive = e
            .case_sensitive
            .or_else(|| val_bool(kn.get(Knob::CaseSensitive)))
            .unwrap_or(self.case_sensitive);
        let primary = b.keys(&e.keys, regex_mode, case_sensitive, names, (bn, ei, "keys"));
        let sec_raw: &'a [String] = e.secondary_keys.as_deref().unwrap_or(&[]);
        let secondary = if regex_mode {
            KeyRange::default()
        } else {
            b.keys(
                sec_raw,
                false,
                case_sensitive,
                names,
                (bn, ei, "secondary_keys"),
            )
        };
        let additional = match &dec.0 {
            Some(d) if !d.additional_keys.is_empty() => d
                .additional_keys
                .iter()
                .map(|g| {
                    b.keys_owned(
                        g,
                        regex_mode,
                        case_sensitive,
                        names,
                        (bn, ei, "@@additional_keys"),
                    )
                })
                .collect(),
            _ => Vec::new(),
        };
        let exclude = match &dec.0 {
            Some(d) if !regex_mode && !d.exclude_keys.is_empty() => b.keys_owned(
                &d.exclude_keys,
                false,
                case_sensitive,
                names,
                (bn, ei, "@@exclude_keys"),
            ),
            _ => KeyRange::default(),
        };
        let logic = match val_f64(kn.get(Knob::SelectiveLogic)).map(|f| f as i64) {
            Some(1) => SelectiveLogic::NotAll,
            Some(2) => SelectiveLogic::NotAny,
            Some(3) => SelectiveLogic::AndAll,
            _ => SelectiveLogic::AndAny,
        };
        let entry_depth = dec.scan_depth.or_else(|| val_u64(kn.get(Knob::ScanDepth)));
        *max_depth = (*max_depth).max(entry_depth.unwrap_or(0));
        let order = dec.order.unwrap_or_else(|| e.insertion_order_f64());
        let priority = dec.priority.or_else(|| e.priority_f64()).unwrap_or(order);
        let (position, depth) = position_of(e, &dec, &kn);
        let role = dec
            .role
            .or(match val_f64(kn.get(Knob::Role)).map(|f| f as i64) {
                Some(0) => Some(DecoratorRole::System),
                Some(1) => Some(DecoratorRole::User),
                Some(2) => Some(DecoratorRole::Assistant),
                _ => None,
            });
        let probability = dec.probability.or_else(|| {
            if val_bool(kn.get(Knob::UseProbability)).unwrap_or(true) {
                val_f64(kn.get(Knob::Probability)).map(|p| p.clamp(0.0, 100.0))
            } else {
                None
            }
        });
        let delay_until_recursion = match kn.get(Knob::DelayUntilRecursion) {
            Some(Value::Bool(true)) => Some(1),
            Some(v) if !v.is_boolean() => {
                val_u64(kn.get(Knob::DelayUntilRecursion)).filter(|n| *n > 0)
            }
            _ => None,
        };
        let rare = Rare {
            additional,
            groups: val_strings(kn.get(Knob::Group)),
            group_override: val_bool(kn.get(Knob::GroupOverride)).unwrap_or(false),
            group_weight: val_f64(kn.get(Knob::GroupWeight)).unwrap_or(100.0).max(0.0),
            group_scoring: val_bool(kn.get(Knob::UseGroupScoring)),
            sticky: val_u64(kn.get(Knob::Sticky)).unwrap_or(0),
            cooldown: val_u64(kn.get(Knob::Cooldown)).unwrap_or(0),
            delay: val_u64(kn.get(Knob::Delay)).unwrap_or(0),
            delay_until_recursion,
            triggers: val_strings(kn.get(Knob::Triggers)),
        };
        let compiled = CEntry {
            at: EntryRef {
                book: bi,
                index: ei,
            },
            entry: e,
            body: parsed.body,
            body_empty: parsed.body.trim().is_empty(),
            enabled: e.enabled,
            constant: e.constant.unwrap_or(false) && !regex_mode,
            primary,
            secondary,
            exclude,
            selective: e.selective.unwrap_or(false),
            logic,
            whole_words: val_bool(kn.get(Knob::MatchWholeWords)),
            scan_depth: entry_depth,
            order,
            priority,
            position,
            depth,
            role,
            probability,
            exclude_recursion: val_bool(kn.get(Knob::ExcludeRecursion)).unwrap_or(false),
            prevent_recursion: val_bool(kn.get(Knob::PreventRecursion)).unwrap_or(false),
            ignore_budget: val_bool(kn.get(Knob::IgnoreBudget)).unwrap_or(false),
            kind_rank: 0,
            rare: (!rare.is_none()).then(|| Box::new(rare)),
            dec,
        };
        b.knobs = kn.into_buffer();
        compiled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{mix, Fnv};

    #[test]
    fn two_thread_compile_is_the_one_thread_compile() {
        // Keys and regexes met in both halves, in one only, case-sensitive ones, invalid and
        // refused regexes, decorators with extra keys and problems, duplicate entries.
        let mut entries = Vec::new();
        for i in 0..600 {
            let k = |n: usize| format!("Key{}", n % 97);
            let mut e =
                ccv3::Entry::new(&[&k(i), &k(i * 7 + 3), "shared"], &format!("c{}", i % 50));
            match i % 6 {
                0 => e.keys.push(format!("/w{}+/i", i % 13)),
                1 => e.keys.push("/(a+)+$/".into()),
                2 => e.keys.push("/[unclosed/".into()),
                3 => e.case_sensitive = Some(true),
                4 => e.content = format!("@@additional_keys extra{}\n@@bogus x\nbody {i}", i % 5),
                _ => e.secondary_keys = Some(vec![k(i + 1), "second".into()]),
            }
            entries.push(e);
        }
        let book = ccv3::Lorebook {
            entries,
            ..Default::default()
        };
        let input = [BookInput {
            book: &book,
            kind: BookKind::Global,
            name: "b".into(),
        }];
        let c = LorebookCompiler::new();
        let one = c.compile_with(&input, false);
        let two = c.compile_with(&input, true);
        let facts = |cb: &CompiledBooks| {
            format!(
                "{:?}",
                (
                    &cb.keys,
                    &cb.key_text,
                    &cb.patterns,
                    &cb.diagnostics,
                    &cb.entries,
                    &cb.fan,
                    &cb.fan_off,
                    &cb.always,
                    cb.regexes
                        .iter()
                        .map(|r| (&r.lits, r.engine.is_ok()))
                        .collect::<Vec<_>>(),
                    cb.max_depth,
                )
            )
        };
        assert_eq!(facts(&one), facts(&two));
    }

    /// The identity as first defined: FNV-1a over book name, keys, secondary keys, content,
    /// comment and name, xor the count of earlier entries of the book with the same hash, mixed.
    fn reference_ids(name: &str, book: &Lorebook) -> Vec<u64> {
        let mut dup: std::collections::HashMap<u64, u64> = Default::default();
        book.entries
            .iter()
            .map(|e| {
                let mut h = Fnv::new().str(name);
                for k in e.keys.iter().chain(e.secondary_keys.iter().flatten()) {
                    h = h.str(k);
                }
                h = h
                    .str(&e.content)
                    .str(e.comment.as_deref().unwrap_or(""))
                    .str(e.name.as_deref().unwrap_or(""));
                let n = dup.entry(h.0).or_insert(0);
                let id = mix(h.0 ^ *n);
                *n += 1;
                id
            })
            .collect()
    }

    #[test]
    fn entry_ids_are_stable_and_count_duplicates_in_book_order() {
        let mut book = Lorebook::default();
        for (keys, content) in [
            (&["a", "b"][..], "x"),
            (&["a"][..], "x"),
            (&["a", "b"][..], "x"),
            (&["c"][..], "y"),
            (&["a", "b"][..], "x"),
            (&["a"][..], "x"),
        ] {
            book.entries.push(Entry::new(keys, content));
        }
        book.entries[1].secondary_keys = Some(vec!["b".into()]);
        let c = LorebookCompiler::new().compile(&[BookInput {
            book: &book,
            kind: BookKind::Global,
            name: "w".into(),
        }]);
        let want = reference_ids("w", &book);
        let mut got = vec![0u64; book.entries.len()];
        for e in &c.entries {
            got[e.at.index] = c.id(e);
        }
        assert_eq!(got, want);
        for (rank, e) in c.entries.iter().enumerate() {
            assert_eq!(c.by_id().get(&c.id(e)), Some(&(rank as u32)));
        }
    }

    #[test]
    fn entry_ids_count_duplicates_across_books_and_compile_halves() {
        // Two books (the same entries in each, duplicates in both halves of a two-thread
        // compile): counts restart per book and follow book order.
        let mut book = Lorebook::default();
        for i in 0..3000 {
            let n = if i % 7 == 0 { 0 } else { i };
            book.entries
                .push(Entry::new(&["k"], &format!("content {n}")));
        }
        let books = [("one", &book), ("two", &book)].map(|(name, book)| BookInput {
            book,
            kind: BookKind::Global,
            name: name.into(),
        });
        let c = LorebookCompiler::new();
        for two_threads in [false, true] {
            let compiled = c.compile_with(&books, two_threads);
            for (bi, (name, _)) in [("one", 0), ("two", 1)].iter().enumerate() {
                let want = reference_ids(name, &book);
                let mut got = vec![0u64; book.entries.len()];
                for e in compiled.entries.iter().filter(|e| e.at.book == bi) {
                    got[e.at.index] = compiled.id(e);
                }
                assert_eq!(got, want, "book {name}, two threads: {two_threads}");
            }
        }
    }

    #[test]
    fn diagnostics_keep_book_order_and_invalid_regex_keys_never_match() {
        let mut book = Lorebook::default();
        book.entries
            .push(Entry::new(&["a"], "@@nonsense_decorator\nA"));
        book.entries
            .push(Entry::new(&["/(unclosed/i", "/ok+/"], "B"));
        book.entries
            .push(Entry::new(&["/(unclosed/i"], "@@other_nonsense\nC"));
        let c = LorebookCompiler::new().compile(&[BookInput {
            book: &book,
            kind: BookKind::Global,
            name: "w".into(),
        }]);
        let codes: Vec<(&str, &str)> = c
            .diagnostics()
            .iter()
            .map(|d| (d.code.as_str(), d.path.as_str()))
            .collect();
        assert_eq!(
            codes,
            [
                ("lore-decorator", "w: entries[0].content"),
                ("lore-regex-invalid", "w: entries[1].keys[0]"),
                ("lore-decorator", "w: entries[2].content"),
            ]
        );
        let kinds: Vec<bool> = c
            .keys
            .iter()
            .map(|k| matches!(k, KeyKind::Invalid))
            .collect();
        assert_eq!(kinds, [false, true, false, true]);
    }
}
