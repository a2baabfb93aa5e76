//! Compiling books: decorators parsed, key macros resolved, every plain key of every entry in one
//! Aho-Corasick automaton per case mode, regex keys compiled once, entries put in activation order.

use crate::jsregex::{self, Engine};
use crate::text::{resolve_key_macros, Fnv};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use ccv3::decorator::{self, DecoratorRole, Decorators};
use ccv3::{Diagnostic, Entry, Lorebook, Object};
use serde_json::Value;
use std::collections::HashMap;

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

#[derive(Debug, Clone)]
pub(crate) struct CKey {
    pub text: std::sync::Arc<str>,
    pub kind: KeyKind,
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
    pub dec: Decorators,
    pub id: u64,
    pub enabled: bool,
    pub constant: bool,
    pub primary: Vec<CKey>,
    pub secondary: Vec<CKey>,
    pub additional: Vec<Vec<CKey>>,
    pub exclude: Vec<CKey>,
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
    pub groups: Vec<String>,
    pub group_override: bool,
    pub group_weight: f64,
    pub group_scoring: Option<bool>,
    pub sticky: u64,
    pub cooldown: u64,
    pub delay: u64,
    pub exclude_recursion: bool,
    pub prevent_recursion: bool,
    pub delay_until_recursion: Option<u64>,
    pub ignore_budget: bool,
    pub triggers: Vec<String>,
    /// 0 or 1: the strategy's book-kind rank (character/global first).
    pub kind_rank: u8,
}

impl<'a> CEntry<'a> {
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
}

impl Default for LorebookCompiler {
    fn default() -> Self {
        LorebookCompiler {
            char_name: String::new(),
            user_name: "User".into(),
            case_sensitive: false,
            strategy: Strategy::CharacterFirst,
        }
    }
}

/// Books compiled for scanning. Borrows the books; build once, scan many times.
#[derive(Debug)]
pub struct CompiledBooks<'a> {
    pub(crate) books: Vec<BookInfo>,
    /// In activation order (rank).
    pub(crate) entries: Vec<CEntry<'a>>,
    pub(crate) ac_ci: Option<AhoCorasick>,
    pub(crate) ac_cs: Option<AhoCorasick>,
    pub(crate) n_ci: u32,
    pub(crate) fan_off: Vec<u32>,
    pub(crate) fan: Vec<u32>,
    pub(crate) always: Vec<u32>,
    pub(crate) regexes: Vec<RegexKey>,
    pub(crate) by_id: HashMap<u64, u32>,
    pub(crate) max_depth: u64,
    pub(crate) levels: Vec<u64>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Per entry rank.
    pub(crate) meta: Vec<Meta>,
}

impl<'a> CompiledBooks<'a> {
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

pub(crate) fn ext_f64(o: &Object, k: &str) -> Option<f64> {
    match o.get(k)? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

pub(crate) fn ext_u64(o: &Object, k: &str) -> Option<u64> {
    ext_f64(o, k)
        .filter(|f| *f >= 0.0)
        .map(|f| f.min(1e15) as u64)
}

pub(crate) fn ext_bool(o: &Object, k: &str) -> Option<bool> {
    match o.get(k)? {
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

fn ext_str<'o>(o: &'o Object, k: &str) -> Option<&'o str> {
    o.get(k)?.as_str()
}

fn ext_strings(o: &Object, k: &str) -> Vec<String> {
    match o.get(k) {
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

/// Whether an entry carries SillyTavern's World Info knobs (it came from SillyTavern, which writes
/// `use_regex: true` on every exported entry and ignores it on import).
fn st_marked(ext: &Object) -> bool {
    [
        "selectiveLogic",
        "display_index",
        "useProbability",
        "exclude_recursion",
    ]
    .iter()
    .any(|k| ext.contains_key(*k))
}

struct Builder {
    pats: crate::scan::FxMap<(bool, String), u32>,
    ci: Vec<String>,
    cs: Vec<String>,
    regex_ids: crate::scan::FxMap<(String, String), u32>,
    regexes: Vec<RegexKey>,
    regex_pats: Vec<(bool, String)>,
    diags: Vec<Diagnostic>,
}

impl Builder {
    fn pattern(&mut self, ci: bool, text: String) -> u32 {
        let key = (ci, text);
        if let Some(&id) = self.pats.get(&key) {
            return id;
        }
        // Temporary ids: case-insensitive patterns are renumbered after the sensitive ones are known.
        let id = if ci {
            self.ci.push(key.1.clone());
            (self.ci.len() - 1) as u32
        } else {
            self.cs.push(key.1.clone());
            (1u32 << 31) | (self.cs.len() - 1) as u32
        };
        self.pats.insert(key, id);
        id
    }

    fn regex(&mut self, pat: &str, flags: &str, path: &dyn Fn() -> String) -> u32 {
        let key = (pat.to_string(), flags.to_string());
        if let Some(&id) = self.regex_ids.get(&key) {
            return id;
        }
        let c = jsregex::compile(pat, flags);
        if let Err(why) = &c.engine {
            self.diags.push(Diagnostic::warning(
                if why.contains("refused") {
                    "lore-regex-refused"
                } else {
                    "lore-regex-invalid"
                },
                path(),
                format!("{why}; the key never matches"),
            ));
        }
        let lits = if c.engine.is_ok() {
            c.literals
                .into_iter()
                .map(|l| self.pattern(c.icase, l))
                .collect()
        } else {
            Vec::new()
        };
        let id = self.regexes.len() as u32;
        self.regexes.push(RegexKey {
            engine: c.engine,
            lits,
        });
        self.regex_ids.insert(key, id);
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn keys(
        &mut self,
        raw: &[String],
        regex_mode: bool,
        case_sensitive: bool,
        names: (&str, &str),
        at: (&str, usize, &str),
    ) -> Vec<CKey> {
        let mut out = Vec::with_capacity(raw.len());
        for (i, r) in raw.iter().enumerate() {
            let resolved = resolve_key_macros(r, names.0, names.1);
            let k = resolved.trim();
            if k.is_empty() {
                continue;
            }
            let p = || format!("{}: entries[{}].{}[{i}]", at.0, at.1, at.2);
            let kind = if let Some((pat, flags)) = jsregex::split_slash(k) {
                KeyKind::Regex(self.regex(pat, flags, &p))
            } else if regex_mode {
                KeyKind::Regex(self.regex(k, if case_sensitive { "" } else { "i" }, &p))
            } else {
                let text = if case_sensitive {
                    k.to_string()
                } else {
                    k.to_lowercase()
                };
                KeyKind::Plain {
                    pat: self.pattern(!case_sensitive, text),
                    multiword: k.contains(char::is_whitespace),
                }
            };
            let kind = match kind {
                KeyKind::Regex(id) if self.regexes[id as usize].engine.is_err() => KeyKind::Invalid,
                k => k,
            };
            out.push(CKey {
                text: std::sync::Arc::from(k),
                kind,
            });
        }
        out
    }
}

fn position_of(e: &Entry, d: &Decorators) -> (Position, DepthSpec) {
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
    let ext = &e.extensions;
    let st = ext_f64(ext, "position").or_else(|| match e.extra.get("position") {
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
                let depth = ext_u64(ext, "depth").unwrap_or(4);
                return (Position::AtDepth, DepthSpec::Fixed(depth));
            }
            5 => Position::ExamplesTop,
            6 => Position::ExamplesBottom,
            7 => Position::Outlet(ext_str(ext, "outlet_name").unwrap_or("").to_string()),
            _ => Position::AfterChar,
        };
        return (pos, DepthSpec::None);
    }
    match e.position.as_deref() {
        Some("before_char") => (Position::BeforeChar, DepthSpec::None),
        _ => (Position::AfterChar, DepthSpec::None),
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

    /// Compiles `books` (in the given order; the order names them in [`EntryRef::book`]).
    pub fn compile<'a>(&self, books: &[BookInput<'a>]) -> CompiledBooks<'a> {
        let mut b = Builder {
            pats: Default::default(),
            ci: Vec::new(),
            cs: Vec::new(),
            regex_ids: Default::default(),
            regexes: Vec::new(),
            regex_pats: Vec::new(),
            diags: Vec::new(),
        };
        let names = (self.char_name.as_str(), self.user_name.as_str());
        let mut infos = Vec::with_capacity(books.len());
        let mut entries: Vec<CEntry<'a>> = Vec::new();
        let mut max_depth = 0u64;
        for (bi, input) in books.iter().enumerate() {
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
            });
            let mut dup: HashMap<u64, u64> = HashMap::new();
            for (ei, e) in book.entries.iter().enumerate() {
                let bn = input.name.as_str();
                let parsed = decorator::parse(&e.content);
                for p in &parsed.problems {
                    b.diags.push(Diagnostic::info(
                        "lore-decorator",
                        format!("{bn}: entries[{ei}].content"),
                        format!("line {}: {}", p.line, p.message),
                    ));
                }
                let dec = parsed.decorators;
                let ext = &e.extensions;
                let regex_mode = e.use_regex && !st_marked(ext);
                let case_sensitive = e
                    .case_sensitive
                    .or_else(|| ext_bool(ext, "case_sensitive"))
                    .unwrap_or(self.case_sensitive);
                let primary = b.keys(&e.keys, regex_mode, case_sensitive, names, (bn, ei, "keys"));
                let sec_raw = e.secondary_keys.as_deref().unwrap_or(&[]);
                let secondary = if regex_mode {
                    Vec::new()
                } else {
                    b.keys(
                        sec_raw,
                        false,
                        case_sensitive,
                        names,
                        (bn, ei, "secondary_keys"),
                    )
                };
                let additional = dec
                    .additional_keys
                    .iter()
                    .map(|g| {
                        b.keys(
                            g,
                            regex_mode,
                            case_sensitive,
                            names,
                            (bn, ei, "@@additional_keys"),
                        )
                    })
                    .collect();
                let exclude = if regex_mode {
                    Vec::new()
                } else {
                    b.keys(
                        &dec.exclude_keys,
                        false,
                        case_sensitive,
                        names,
                        (bn, ei, "@@exclude_keys"),
                    )
                };
                let logic = match ext_f64(ext, "selectiveLogic").map(|f| f as i64) {
                    Some(1) => SelectiveLogic::NotAll,
                    Some(2) => SelectiveLogic::NotAny,
                    Some(3) => SelectiveLogic::AndAll,
                    _ => SelectiveLogic::AndAny,
                };
                let entry_depth = dec.scan_depth.or_else(|| ext_u64(ext, "scan_depth"));
                max_depth = max_depth.max(entry_depth.unwrap_or(0));
                let order = dec.order.unwrap_or_else(|| e.insertion_order_f64());
                let priority = dec.priority.or_else(|| e.priority_f64()).unwrap_or(order);
                let (position, depth) = position_of(e, &dec);
                let role = dec.role.or(match ext_f64(ext, "role").map(|f| f as i64) {
                    Some(0) => Some(DecoratorRole::System),
                    Some(1) => Some(DecoratorRole::User),
                    Some(2) => Some(DecoratorRole::Assistant),
                    _ => None,
                });
                let probability = dec.probability.or_else(|| {
                    if ext_bool(ext, "useProbability").unwrap_or(true) {
                        ext_f64(ext, "probability").map(|p| p.clamp(0.0, 100.0))
                    } else {
                        None
                    }
                });
                let delay_until_recursion = match ext.get("delay_until_recursion") {
                    Some(Value::Bool(true)) => Some(1),
                    Some(v) if !v.is_boolean() => {
                        ext_u64(ext, "delay_until_recursion").filter(|n| *n > 0)
                    }
                    _ => None,
                };
                let mut h = Fnv::new().str(&input.name);
                for k in &e.keys {
                    h = h.str(k);
                }
                for k in sec_raw {
                    h = h.str(k);
                }
                h = h
                    .str(&e.content)
                    .str(e.comment.as_deref().unwrap_or(""))
                    .str(e.name.as_deref().unwrap_or(""));
                let n = dup.entry(h.0).or_insert(0);
                let id = crate::text::mix(h.0 ^ *n);
                *n += 1;
                entries.push(CEntry {
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
                    additional,
                    exclude,
                    selective: e.selective.unwrap_or(false),
                    logic,
                    whole_words: ext_bool(ext, "match_whole_words"),
                    scan_depth: entry_depth,
                    order,
                    priority,
                    position,
                    depth,
                    role,
                    probability,
                    groups: ext_strings(ext, "group"),
                    group_override: ext_bool(ext, "group_override").unwrap_or(false),
                    group_weight: ext_f64(ext, "group_weight").unwrap_or(100.0).max(0.0),
                    group_scoring: ext_bool(ext, "use_group_scoring"),
                    sticky: ext_u64(ext, "sticky").unwrap_or(0),
                    cooldown: ext_u64(ext, "cooldown").unwrap_or(0),
                    delay: ext_u64(ext, "delay").unwrap_or(0),
                    exclude_recursion: ext_bool(ext, "exclude_recursion").unwrap_or(false),
                    prevent_recursion: ext_bool(ext, "prevent_recursion").unwrap_or(false),
                    delay_until_recursion,
                    ignore_budget: ext_bool(ext, "ignore_budget").unwrap_or(false),
                    triggers: ext_strings(ext, "triggers"),
                    kind_rank: 0,
                    id,
                    dec,
                });
            }
        }
        let _ = &b.regex_pats;
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
        // Sort small keys, then move each (large) entry once.
        let mut order: Vec<(u8, u64, EntryRef, usize)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let bits = e.order.to_bits();
                let asc = if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | (1 << 63)
                };
                (e.kind_rank, !asc, e.at, i)
            })
            .collect();
        order.sort_unstable();
        let mut slots: Vec<Option<CEntry<'a>>> = entries.into_iter().map(Some).collect();
        let mut entries: Vec<CEntry<'a>> = order
            .iter()
            .filter_map(|k| slots.get_mut(k.3).and_then(Option::take))
            .collect();
        // Renumber patterns: case-insensitive first, then case-sensitive.
        let n_ci = b.ci.len() as u32;
        let fix = |p: u32| {
            if p & (1 << 31) != 0 {
                n_ci + (p & !(1 << 31))
            } else {
                p
            }
        };
        for e in &mut entries {
            for k in e
                .primary
                .iter_mut()
                .chain(e.secondary.iter_mut())
                .chain(e.exclude.iter_mut())
                .chain(e.additional.iter_mut().flatten())
            {
                if let KeyKind::Plain { pat, .. } = &mut k.kind {
                    *pat = fix(*pat);
                }
            }
        }
        for r in &mut b.regexes {
            for l in &mut r.lits {
                *l = fix(*l);
            }
        }
        let n_pat = n_ci + b.cs.len() as u32;
        // Fan-out from patterns to the entries whose primary keys they can trigger.
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut always = Vec::new();
        for (rank, e) in entries.iter().enumerate() {
            let rank = rank as u32;
            let mut is_always = e.constant || e.dec.activate || e.dec.keep_activate_after_match;
            for k in &e.primary {
                match k.kind {
                    KeyKind::Plain { pat, .. } => pairs.push((pat, rank)),
                    KeyKind::Regex(r) => {
                        let lits = &b.regexes[r as usize].lits;
                        if lits.is_empty() {
                            is_always = true;
                        }
                        pairs.extend(lits.iter().map(|&l| (l, rank)));
                    }
                    KeyKind::Invalid => {}
                }
            }
            if is_always {
                always.push(rank);
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut fan_off = vec![0u32; n_pat as usize + 1];
        for &(p, _) in &pairs {
            fan_off[p as usize + 1] += 1;
        }
        for i in 1..fan_off.len() {
            fan_off[i] += fan_off[i - 1];
        }
        let fan = pairs.iter().map(|&(_, r)| r).collect();
        let build = |pats: &[String]| -> Option<AhoCorasick> {
            if pats.is_empty() {
                return None;
            }
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .build(pats)
                .ok()
        };
        let ac_ci = build(&b.ci);
        let ac_cs = build(&b.cs);
        let mut by_id = HashMap::with_capacity(entries.len());
        let mut levels = Vec::new();
        for (rank, e) in entries.iter().enumerate() {
            by_id.insert(e.id, rank as u32);
            if let Some(l) = e.delay_until_recursion {
                levels.push(l);
            }
        }
        levels.sort_unstable();
        levels.dedup();
        let mut meta: Vec<Meta> = entries
            .iter()
            .map(|e| Meta {
                book: e.at.book as u32,
                budget_pos: 0,
                budget_pos_late: 0,
                flags: (if e.groups.is_empty() { 0 } else { META_GROUP })
                    | (if e.ignore_budget {
                        META_IGNORE_BUDGET
                    } else {
                        0
                    }),
            })
            .collect();
        for late in [false, true] {
            let mut order: Vec<usize> = (0..entries.len()).collect();
            order.sort_by(|&x, &y| {
                let (ex, ey) = (&entries[x], &entries[y]);
                let lx = late && ex.dec.ignore_on_max_context;
                let ly = late && ey.dec.ignore_on_max_context;
                lx.cmp(&ly)
                    .then(ey.constant.cmp(&ex.constant))
                    .then(ex.kind_rank.cmp(&ey.kind_rank))
                    .then(ey.priority.total_cmp(&ex.priority))
                    .then(x.cmp(&y))
            });
            for (pos, i) in order.into_iter().enumerate() {
                if late {
                    meta[i].budget_pos_late = pos as u32;
                } else {
                    meta[i].budget_pos = pos as u32;
                }
            }
        }
        CompiledBooks {
            books: infos,
            entries,
            ac_ci,
            ac_cs,
            n_ci,
            fan_off,
            fan,
            always,
            regexes: b.regexes,
            by_id,
            max_depth,
            levels,
            diagnostics: b.diags,
            meta,
        }
    }
}
