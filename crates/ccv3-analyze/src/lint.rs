//! `ccv3 lint`: static analysis of a card's lorebook, macros and decorators, beyond validity.
//!
//! Every finding has a stable `code` (issue 27; `tests/codes.rs` builds a book for each and names
//! the source of its rule):
//!
//! | code | severity | what |
//! |---|---|---|
//! | `lore-entry-no-keys` | warning | enabled, not constant, no primary key, no `@@activate` |
//! | `lore-entry-zero-probability` | warning | probability in use and 0 |
//! | `lore-entry-recursion-dead` | warning | delay until recursion and exclude recursion |
//! | `lore-entry-unreachable` | warning | delay until recursion, no entry's content holds one of its keys |
//! | `lore-entry-disabled-by-decorator` | warning / info | `@@dont_activate` on an entry with keys |
//! | `lore-key-too-broad` | warning | a key of one or two characters, or a common English word |
//! | `lore-key-duplicate` | info | the same key in two or more enabled entries |
//! | `lore-regex-invalid` | warning | a `/pattern/flags` key ECMAScript rejects |
//! | `lore-secondary-unused` | info | a selective logic without secondary keys, or secondary keys unused |
//! | `lore-group-single` | info | an inclusion group with one enabled member |
//! | `lore-constant-over-budget` | warning | the constant entries alone exceed the budget |
//! | `lore-budget-plan` | info | the budget, with [`BudgetPlan`] |
//! | `cbs-unknown-macro` | warning | a macro no dialect of the target knows |
//! | `cbs-other-dialect` | warning | a macro of another application's dialect |
//! | `cbs-unclosed-block` | error | a block macro without its end |
//! | `decorator-unknown` | warning | a decorator no dialect defines, without a `@@@` fallback |
//! | `decorator-ignored-by-app` | info | a decorator the target application ignores |
//!
//! The lorebook facts (keys, probability, recursion knobs, decorators) are the engine's own
//! reading of the entry ([`ccv3_lore::EntryFacts`]), so lint and `ccv3 lore scan` agree.

use crate::app::App;
use ccv3::decorator::{self, Kind};
use ccv3::{Card, Document, Lorebook, Severity};
use ccv3_cbs::{Dialect, Registry, Template, Warning};
use ccv3_lore::{
    BookInput, BookKind, EntryFacts, LorebookCompiler, RejectReason, ScanOptions, SelectiveLogic,
};
use ccv3_tokens::Tokenizer;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// One lint finding: `{file, severity, code, path, entry, message}` (and `budget` on
/// `lore-budget-plan`), as `ccv3 lint --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The file it is about (set by the caller; left out when `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// The stable code (see the [module docs](self)).
    pub code: String,
    /// The JSON path of the value, as `ccv3 validate` writes it (`data.character_book.entries[3].keys[0]`).
    pub path: String,
    /// The entry's index in its book (as `ccv3 lore list` numbers it); `None` for card-level findings.
    pub entry: Option<usize>,
    /// What is found and what it means.
    pub message: String,
    /// The budget plan (on `lore-budget-plan` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetPlan>,
}

/// The token budget of a book: the limit and what its entries take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BudgetPlan {
    /// The budget in tokens ([`LintOptions::limit`]).
    pub limit: usize,
    /// Tokens of the enabled constant entries together.
    pub constant: usize,
    /// Tokens of all enabled non-constant entries together (the most keys can add).
    pub triggered_max: usize,
    /// `constant + triggered_max`.
    pub total: usize,
    /// Every enabled entry's tokens, in book order.
    pub entries: Vec<EntryTokens>,
}

/// One entry's tokens in a [`BudgetPlan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryTokens {
    /// The entry's index.
    pub entry: usize,
    /// Tokens of its content without decorators, before macro expansion (as `lore scan` counts).
    pub tokens: usize,
}

/// What lint checks against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintOptions {
    /// The target application of the macro and decorator checks (`None`: the card's own, where
    /// it can be told, else [`App::Spec`]).
    pub app: Option<App>,
    /// The budget in tokens (else the book's `token_budget`, else a quarter of `max_context`).
    pub budget: Option<usize>,
    /// The model's context, for the default budget (default 8192).
    pub max_context: usize,
    /// A ceiling on the budget, whatever sets it (as `lore scan --budget-cap`).
    pub budget_cap: Option<usize>,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            app: None,
            budget: None,
            max_context: 8192,
            budget_cap: None,
        }
    }
}

impl LintOptions {
    /// The budget of `book`: [`LintOptions::budget`], else the book's positive `token_budget`,
    /// else 25% of [`LintOptions::max_context`]; capped by [`LintOptions::budget_cap`].
    pub fn limit(&self, book: &Lorebook) -> usize {
        let own = book
            .token_budget
            .as_ref()
            .and_then(|n| n.as_f64())
            .filter(|f| *f > 0.0)
            .map(|f| f.min(1e15) as usize);
        let limit = self.budget.or(own).unwrap_or(self.max_context / 4);
        match self.budget_cap {
            Some(cap) => limit.min(cap),
            None => limit,
        }
    }
}

/// The application a card is written for, where its data tells: RisuAI's extension
/// (`extensions.risuai`), SillyTavern's (`depth_prompt`, `talkativeness`, `fav`, `world`, or
/// entries carrying its knobs: `selectiveLogic`, `display_index`); else `None`.
///
/// ```
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(br#"{"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "extensions": {"risuai": {}}}}"#)? else { panic!() };
/// assert_eq!(ccv3_analyze::lint::card_app(&cf.card), Some(ccv3_analyze::App::Risu));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn card_app(card: &Card) -> Option<App> {
    let ext = &card.data.extensions;
    if ext.contains_key(ccv3::lorebook::risu::NAMESPACE) {
        return Some(App::Risu);
    }
    if ["depth_prompt", "talkativeness", "fav", "world"]
        .iter()
        .any(|k| ext.contains_key(*k))
    {
        return Some(App::SillyTavern);
    }
    card.data.character_book.as_ref().and_then(book_app)
}

/// The application a book's entries are written for, where they tell (SillyTavern's knobs).
fn book_app(book: &Lorebook) -> Option<App> {
    book.entries
        .iter()
        .any(|e| {
            e.extensions.contains_key("selectiveLogic")
                || e.extensions.contains_key("display_index")
        })
        .then_some(App::SillyTavern)
}

/// Lints a card: its lorebook (if any) and the macros of its text fields.
///
/// ```
/// use ccv3_analyze::{lint_card, App, LintOptions};
/// let text = br#"{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember",
///     "description": "{{#when::1}}warm{{/when}}"}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let opts = LintOptions { app: Some(App::SillyTavern), ..LintOptions::default() };
/// let found = lint_card(&cf.card, &opts, &ccv3_tokens::Estimate);
/// // RisuAI's block macro, in a card for SillyTavern.
/// assert!(found.iter().any(|f| f.code == "cbs-other-dialect" && f.path == "data.description"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn lint_card(card: &Card, opts: &LintOptions, tok: &dyn Tokenizer) -> Vec<Finding> {
    let app = opts.app.or_else(|| card_app(card)).unwrap_or(App::Spec);
    let mut out = Vec::new();
    let d = &card.data;
    for (name, text) in d.prompt_texts() {
        check_macros(text, &format!("data.{name}"), None, app, &mut out);
    }
    for (i, g) in d.alternate_greetings.iter().enumerate() {
        check_macros(
            g,
            &format!("data.alternate_greetings[{i}]"),
            None,
            app,
            &mut out,
        );
    }
    for (i, g) in d.group_only_greetings.iter().enumerate() {
        check_macros(
            g,
            &format!("data.group_only_greetings[{i}]"),
            None,
            app,
            &mut out,
        );
    }
    if let Some(book) = &d.character_book {
        lint_book(book, "data.character_book", app, opts, tok, &mut out);
    }
    out
}

/// Lints a standalone lorebook (its paths start at `data`, as `validate` writes them).
///
/// ```
/// use ccv3_analyze::{lint_lorebook, LintOptions};
/// let text = br#"{"spec": "lorebook_v3", "data": {"entries": [
///     {"keys": ["a"], "content": "Fires on every 'a'.", "enabled": true, "insertion_order": 0}]}}"#;
/// let ccv3::Document::Lorebook(bf) = ccv3::read_bytes(text)? else { panic!() };
/// let found = lint_lorebook(&bf.book, &LintOptions::default(), &ccv3_tokens::Estimate);
/// assert!(found.iter().any(|f| f.code == "lore-key-too-broad" && f.entry == Some(0)));
/// // Every book gets its budget plan.
/// assert!(found.iter().any(|f| f.code == "lore-budget-plan" && f.budget.is_some()));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn lint_lorebook(book: &Lorebook, opts: &LintOptions, tok: &dyn Tokenizer) -> Vec<Finding> {
    let app = opts.app.or_else(|| book_app(book)).unwrap_or(App::Spec);
    let mut out = Vec::new();
    lint_book(book, "data", app, opts, tok, &mut out);
    out
}

/// Lints whatever a file holds; a lorebook's format tells its application (World Info:
/// SillyTavern, RisuAI exports and modules: RisuAI, Agnai memory books: Agnai).
///
/// ```
/// use ccv3_analyze::{lint_document, LintOptions};
/// let doc = ccv3::read_bytes(br#"{"spec": "lorebook_v3", "data": {"entries": [
///     {"keys": ["castle"], "content": "x", "enabled": true, "insertion_order": 0,
///      "extensions": {"delay_until_recursion": true, "exclude_recursion": true}}]}}"#)?;
/// let found = lint_document(&doc, &LintOptions::default(), &ccv3_tokens::Estimate);
/// assert!(found.iter().any(|f| f.code == "lore-entry-recursion-dead"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn lint_document(doc: &Document, opts: &LintOptions, tok: &dyn Tokenizer) -> Vec<Finding> {
    match doc {
        Document::Card(cf) => lint_card(&cf.card, opts, tok),
        Document::Lorebook(bf) => {
            use ccv3::lorebook::BookFormat as F;
            let from_format = match bf.format {
                F::WorldInfo => Some(App::SillyTavern),
                F::Risu | F::RisuModule => Some(App::Risu),
                F::Agnai => Some(App::Agnai),
                _ => None,
            };
            let o = LintOptions {
                app: opts.app.or(from_format),
                ..opts.clone()
            };
            lint_lorebook(&bf.book, &o, tok)
        }
    }
}

fn finding(
    severity: Severity,
    code: &str,
    path: String,
    entry: Option<usize>,
    message: String,
) -> Finding {
    Finding {
        file: None,
        severity,
        code: code.to_string(),
        path,
        entry,
        message,
        budget: None,
    }
}

/// The lorebook checks.
fn lint_book(
    book: &Lorebook,
    prefix: &str,
    app: App,
    opts: &LintOptions,
    tok: &dyn Tokenizer,
    out: &mut Vec<Finding>,
) {
    if book.entries.is_empty() {
        return;
    }
    let input = [BookInput {
        book,
        kind: BookKind::Character,
        name: String::new(),
        world_info: false,
    }];
    // Compiled for one use: the key automata are built only if the recursion graph needs them.
    let compiler = LorebookCompiler::new().for_single_scan(true);
    let Ok(compiled) = compiler.try_compile(&input) else {
        // Over the engine's entry limit: `validate` and `lore scan` say so; nothing to lint.
        return;
    };
    // Recursion for books that do not say: SillyTavern's default setting is on (its
    // `world_info_recursive`), as RisuAI's `recursiveScanning` is.
    let scan_opts = ScanOptions {
        recursive: true,
        ..ScanOptions::default()
    };
    let facts = compiled.entry_facts(&scan_opts);
    let ep = |i: usize| format!("{prefix}.entries[{i}]");
    let book_recurses = book.recursive_scanning.unwrap_or(true);

    // Entries that cannot fire.
    let mut delayed = Vec::new();
    for f in &facts {
        let i = f.at.index;
        let Some(entry) = book.entries.get(i) else {
            continue;
        };
        if !f.enabled {
            continue;
        }
        if !f.constant && f.keys.is_empty() && !f.activate {
            out.push(finding(
                Severity::Warning,
                "lore-entry-no-keys",
                format!("{}.keys", ep(i)),
                Some(i),
                "no primary keys, not constant and no @@activate: nothing can activate this entry"
                    .into(),
            ));
        }
        if f.probability == Some(0.0) {
            out.push(finding(
                Severity::Warning,
                "lore-entry-zero-probability",
                format!("{}.extensions.probability", ep(i)),
                Some(i),
                "probability is in use and 0: the entry never passes its roll".into(),
            ));
        }
        if f.delay_until_recursion.is_some() {
            if f.exclude_recursion {
                out.push(finding(
                    Severity::Warning,
                    "lore-entry-recursion-dead",
                    format!("{}.extensions.delay_until_recursion", ep(i)),
                    Some(i),
                    "delay until recursion with exclude recursion: it may fire only in a recursion \
                     step, and recursion steps may not activate it"
                        .into(),
                ));
            } else if !f.keys.is_empty() && !f.constant && !f.activate {
                delayed.push(i);
            }
        }
        let _ = entry;
    }
    if !delayed.is_empty() {
        let mut wanted = vec![false; book.entries.len()];
        for &i in &delayed {
            wanted[i] = true;
        }
        let g = compiled.recursion_graph(&scan_opts, &Default::default(), &|at| {
            wanted.get(at.index).copied().unwrap_or(false)
        });
        let mut reached = vec![false; book.entries.len()];
        for e in &g.edges {
            if let Some(r) = reached.get_mut(e.to.index) {
                *r = true;
            }
        }
        if !g.complete {
            // The search was cut: an entry without an edge found may still be reachable.
            delayed.clear();
        }
        for i in delayed {
            if reached[i] {
                continue;
            }
            let why = if !book_recurses {
                "the book turns recursion off (recursive_scanning: false), so no entry's content is scanned for its keys"
            } else {
                "no other entry whose content is scanned for recursion contains one of its keys"
            };
            out.push(finding(
                Severity::Warning,
                "lore-entry-unreachable",
                format!("{}.extensions.delay_until_recursion", ep(i)),
                Some(i),
                format!("delay until recursion, but {why}: no entry of the book can reach it in a recursion step"),
            ));
        }
    }
    disabled_by_decorator(&facts, &ep, out);
    key_checks(&facts, book, &ep, out);
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for f in facts.iter().filter(|f| f.enabled) {
        let i = f.at.index;
        let logic_set = f.logic != SelectiveLogic::AndAny;
        if logic_set && f.secondary.is_empty() {
            out.push(finding(
                Severity::Info,
                "lore-secondary-unused",
                format!("{}.extensions.selectiveLogic", ep(i)),
                Some(i),
                format!(
                    "selective logic {} without secondary keys: the logic has no effect",
                    f.logic.as_str()
                ),
            ));
        } else if !f.secondary.is_empty() && !f.selective {
            out.push(finding(
                Severity::Info,
                "lore-secondary-unused",
                format!("{}.secondary_keys", ep(i)),
                Some(i),
                "secondary keys with selective: false: they are not used".into(),
            ));
        }
        for g in f.groups {
            groups.entry(g.as_str()).or_default().push(i);
        }
    }
    let mut single: Vec<(usize, &str)> = groups
        .into_iter()
        .filter_map(|(g, m)| (m.len() == 1).then(|| (m[0], g)))
        .collect();
    single.sort_unstable();
    for (i, g) in single {
        {
            out.push(finding(
                Severity::Info,
                "lore-group-single",
                format!("{}.extensions.group", ep(i)),
                Some(i),
                format!("inclusion group {g:?} has one enabled member: it chooses nothing"),
            ));
        }
    }
    budget(book, prefix, &compiled, &facts, opts, tok, out);
    for f in &facts {
        let i = f.at.index;
        if let Some(e) = book.entries.get(i) {
            check_decorators(&e.content, &format!("{}.content", ep(i)), i, app, out);
            if f.enabled {
                check_macros(f.body, &format!("{}.content", ep(i)), Some(i), app, out);
            }
        }
    }
}

/// `lore-entry-disabled-by-decorator`: `@@dont_activate` on entries with keys; said once, as
/// info, when the book is triggered by `@@activate` only (every other enabled entry has it).
fn disabled_by_decorator(
    facts: &[EntryFacts<'_>],
    ep: &dyn Fn(usize) -> String,
    out: &mut Vec<Finding>,
) {
    let dont: Vec<usize> = facts
        .iter()
        .filter(|f| f.enabled && f.dont_activate && !f.activate && !f.keys.is_empty())
        .map(|f| f.at.index)
        .collect();
    if dont.is_empty() {
        return;
    }
    let others_activate = facts
        .iter()
        .filter(|f| f.enabled && !f.dont_activate)
        .all(|f| f.activate);
    let activated = facts.iter().any(|f| f.enabled && f.activate);
    if others_activate && activated {
        let first = dont[0];
        out.push(finding(
            Severity::Info,
            "lore-entry-disabled-by-decorator",
            format!("{}.content", ep(first)),
            Some(first),
            format!(
                "{} entries have keys and @@dont_activate: the book is triggered by @@activate only",
                dont.len()
            ),
        ));
        return;
    }
    for i in dont {
        out.push(finding(
            Severity::Warning,
            "lore-entry-disabled-by-decorator",
            format!("{}.content", ep(i)),
            Some(i),
            "@@dont_activate on an entry with keys: it never fires".into(),
        ));
    }
}

/// The most entries a duplicate key's message names.
const NAMED: usize = 5;

/// `lore-key-too-broad`, `lore-key-duplicate`, `lore-regex-invalid`.
fn key_checks(
    facts: &[EntryFacts<'_>],
    book: &Lorebook,
    ep: &dyn Fn(usize) -> String,
    out: &mut Vec<Finding>,
) {
    let mut seen: HashMap<Cow<'_, str>, Vec<usize>> = HashMap::new();
    let mut places: Vec<(usize, usize, Cow<'_, str>)> = Vec::new();
    for f in facts.iter().filter(|f| f.enabled) {
        let i = f.at.index;
        let raw_keys = book.entries.get(i).map(|e| &e.keys[..]).unwrap_or_default();
        for (k, key) in f.keys.iter().enumerate() {
            if let Some(raw) = raw_keys.get(k) {
                if let Some((pattern, flags)) = slash_regex(raw.trim()) {
                    if let Err(why) = ccv3::check_regex_syntax(pattern, flags) {
                        out.push(finding(
                            Severity::Warning,
                            "lore-regex-invalid",
                            format!("{}.keys[{k}]", ep(i)),
                            Some(i),
                            format!(
                                "key {raw:?} is not a valid ECMAScript regex ({why}): SillyTavern \
                                 matches it as plain text, the spec's engine never matches it"
                            ),
                        ));
                    }
                }
            }
            if key.regex || key.text.is_empty() {
                continue;
            }
            if !f.constant {
                if let Some(why) = too_broad(key.text, key.multiword, f.whole_words) {
                    out.push(finding(
                        Severity::Warning,
                        "lore-key-too-broad",
                        format!("{}.keys[{k}]", ep(i)),
                        Some(i),
                        format!("key {:?} {why}", key.text),
                    ));
                }
            }
            let norm: Cow<'_, str> =
                if key.case_sensitive || !key.text.chars().any(|c| c.is_uppercase()) {
                    Cow::Borrowed(key.text)
                } else {
                    Cow::Owned(key.text.to_lowercase())
                };
            let list = seen.entry(norm.clone()).or_default();
            if list.last() != Some(&i) {
                list.push(i);
                places.push((i, k, norm));
            }
        }
    }
    for (i, k, norm) in places {
        let Some(list) = seen.get(&norm) else {
            continue;
        };
        if list.len() < 2 {
            continue;
        }
        let others: Vec<String> = list
            .iter()
            .filter(|&&j| j != i)
            .take(NAMED)
            .map(|j| format!("#{j}"))
            .collect();
        let more = list.len() - 1 - others.len();
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        out.push(finding(
            Severity::Info,
            "lore-key-duplicate",
            format!("{}.keys[{k}]", ep(i)),
            Some(i),
            format!(
                "key {norm:?} is also a key of entries {}{more}",
                others.join(", ")
            ),
        ));
    }
}

/// A key written `/pattern/flags` (SillyTavern's per-key regex form): its pattern and flags.
fn slash_regex(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix('/')?;
    let end = rest.rfind('/')?;
    let (pattern, flags) = (&rest[..end], &rest[end + 1..]);
    (!pattern.is_empty() && flags.bytes().all(|b| b.is_ascii_alphabetic()))
        .then_some((pattern, flags))
}

/// Why a plain key matches more than its writer thinks, if it does.
fn too_broad(key: &str, multiword: bool, whole_words: Option<bool>) -> Option<String> {
    let short = key.chars().count() <= 2 && key.chars().all(|c| c.is_ascii_alphanumeric());
    let whole = whole_words.unwrap_or(true) && !multiword;
    if short && !whole {
        return Some(
            "has one or two characters and is matched inside other words (whole-word matching is off)"
                .into(),
        );
    }
    if short && key.chars().count() == 1 {
        return Some("has one character: it is found in most chats".into());
    }
    if crate::words::is_common(key) {
        return Some(format!(
            "is one of the most common English words: it is found {}",
            if whole {
                "in most chats"
            } else {
                "in most chats, inside other words too (whole-word matching is off)"
            }
        ));
    }
    None
}

/// `lore-budget-plan` and `lore-constant-over-budget`.
fn budget(
    book: &Lorebook,
    prefix: &str,
    compiled: &ccv3_lore::CompiledBooks<'_>,
    facts: &[EntryFacts<'_>],
    opts: &LintOptions,
    tok: &dyn Tokenizer,
    out: &mut Vec<Finding>,
) {
    let limit = opts.limit(book);
    let mut plan = BudgetPlan {
        limit,
        constant: 0,
        triggered_max: 0,
        total: 0,
        entries: Vec::new(),
    };
    // Counts of repeated pieces (words) come from one cache: the same counts, faster.
    let mut cache = ccv3_tokens::PieceCache::new();
    for f in facts.iter().filter(|f| f.enabled) {
        let tokens = if f.body_empty {
            0
        } else {
            tok.count_cached(f.body, &mut cache)
        };
        if f.constant {
            plan.constant = plan.constant.saturating_add(tokens);
        } else {
            plan.triggered_max = plan.triggered_max.saturating_add(tokens);
        }
        plan.entries.push(EntryTokens {
            entry: f.at.index,
            tokens,
        });
    }
    plan.total = plan.constant.saturating_add(plan.triggered_max);
    if plan.constant > limit {
        // The engine decides what it drops: a scan of an empty chat with this budget, no
        // recursion; the entries it cuts for the budget, in its budget order.
        let scan_opts = ScanOptions {
            token_budget: Some(limit),
            max_recursion_steps: 1,
            explain_cut: true,
            ..ScanOptions::default()
        };
        let chat = ccv3_lore::chat::Chat::default();
        let r = compiled.scan(&chat, &Default::default(), &scan_opts, tok);
        let cut: std::collections::HashSet<usize> = r
            .rejected
            .iter()
            .filter(|x| matches!(x.reason, RejectReason::Budget { .. }))
            .map(|x| x.entry.index)
            .collect();
        let constant: std::collections::HashSet<usize> = facts
            .iter()
            .filter(|f| f.enabled && f.constant)
            .map(|f| f.at.index)
            .collect();
        let dropped: Vec<String> = compiled
            .budget_order()
            .into_iter()
            .filter(|at| cut.contains(&at.index) && constant.contains(&at.index))
            .map(|at| format!("#{}", at.index))
            .collect();
        let shown: Vec<&str> = dropped.iter().take(20).map(String::as_str).collect();
        let more = dropped.len().saturating_sub(shown.len());
        out.push(finding(
            Severity::Warning,
            "lore-constant-over-budget",
            prefix.to_string(),
            None,
            format!(
                "the enabled constant entries take {} tokens, over the budget of {limit}: {} dropped \
                 on every turn, in this order: {}{}",
                plan.constant,
                dropped.len(),
                if shown.is_empty() { "none".to_string() } else { shown.join(", ") },
                if more > 0 { format!(" and {more} more") } else { String::new() }
            ),
        ));
    }
    out.push(Finding {
        file: None,
        severity: Severity::Info,
        code: "lore-budget-plan".into(),
        path: prefix.to_string(),
        entry: None,
        message: format!(
            "budget {limit} tokens: constant entries {}, triggered entries up to {}, all {}",
            plan.constant, plan.triggered_max, plan.total
        ),
        budget: Some(plan),
    });
}

/// The macros a target application knows.
fn knows(app: App, name: &str) -> bool {
    match app {
        App::Spec | App::V2 => Registry::dialect_ref(Dialect::Spec).contains(name),
        App::Risu => Registry::dialect_ref(Dialect::Risu).contains(name),
        // SillyTavern reads `{{#if}}` as its own `if` with the `#` flag.
        App::SillyTavern => {
            let r = Registry::dialect_ref(Dialect::SillyTavern);
            // ... and `{{.var}}` / `{{$var}}` as its variable shorthand (ccv3-cbs st_syntax).
            r.contains(name)
                || name.strip_prefix('#').is_some_and(|n| r.contains(n))
                || name.starts_with(['.', '$'])
        }
        // Agnai replaces `{{char}}` and `{{user}}` (its `common/memory.ts`; other-systems.md 2.7).
        App::Agnai => matches!(name, "char" | "user"),
    }
}

/// The other dialects that know a macro the target does not.
fn other_dialects(app: App, name: &str) -> Vec<App> {
    [App::Risu, App::SillyTavern]
        .into_iter()
        .filter(|&a| a != app && knows(a, name))
        .collect()
}

/// Whether a name is one of the text forms every parser leaves alone (closing tags, comments).
fn not_a_call(name: &str) -> bool {
    name.is_empty() || name.starts_with(['/', ':', '<'])
}

/// `cbs-unknown-macro`, `cbs-other-dialect`, `cbs-unclosed-block` of one text.
fn check_macros(text: &str, path: &str, entry: Option<usize>, app: App, out: &mut Vec<Finding>) {
    if !text.contains("{{") {
        return;
    }
    let t = Template::parse(text);
    for w in t.warnings() {
        if let Warning::UnclosedBlock { offset } = w {
            out.push(finding(
                Severity::Error,
                "cbs-unclosed-block",
                path.to_string(),
                entry,
                format!(
                    "byte {offset}: a block macro is never closed; it reaches the model as written"
                ),
            ));
        }
    }
    let mut reported: Vec<String> = Vec::new();
    let mut more = 0usize;
    for (offset, name) in t.macro_names() {
        if not_a_call(&name) || knows(app, &name) || reported.contains(&name) {
            continue;
        }
        if reported.len() >= MAX_PER_TEXT {
            more += 1;
            continue;
        }
        reported.push(name.clone());
        let others = other_dialects(app, &name);
        match others.first() {
            Some(_) => out.push(finding(
                Severity::Warning,
                "cbs-other-dialect",
                path.to_string(),
                entry,
                format!(
                    "byte {offset}: {{{{{name}}}}} is a macro of {}, not of {}: it reaches the model as written",
                    others.iter().map(|a| a.label()).collect::<Vec<_>>().join(" and "),
                    app.label()
                ),
            )),
            None => out.push(finding(
                Severity::Warning,
                "cbs-unknown-macro",
                path.to_string(),
                entry,
                format!(
                    "byte {offset}: {{{{{name}}}}} is not a macro of {}: it reaches the model as written",
                    app.label()
                ),
            )),
        }
    }
    if more > 0 {
        out.push(finding(
            Severity::Warning,
            "cbs-unknown-macro",
            path.to_string(),
            entry,
            format!(
                "{more} more macros {} does not know are not listed",
                app.label()
            ),
        ));
    }
}

/// The most macro or decorator findings one text gives (a hostile text may hold thousands).
const MAX_PER_TEXT: usize = 20;

/// True when some dialect defines the decorator `name`: the spec's (ccv3's parser) or RisuAI's
/// own (its `loadLoreBookV3Prompt`; other-systems.md 3.2).
pub(crate) fn decorator_known(name: &str) -> bool {
    spec_decorator(name) || RISU_DECORATORS.contains(&name)
}

/// A decorator of the spec (ccv3's parser takes the name with some value).
pub(crate) fn spec_decorator(name: &str) -> bool {
    ["", "1", "x", "a,b"]
        .iter()
        .any(|v| !matches!(Kind::from_line(name, v), Kind::Unknown { .. }))
}

/// The decorators RisuAI's lorebook code handles (other-systems.md 3.2, `loadLoreBookV3Prompt`).
pub(crate) const RISU_DECORATORS: &[&str] = &[
    "end",
    "activate_only_after",
    "activate_only_every",
    "keep_activate_after_match",
    "dont_activate_after_match",
    "depth",
    "reverse_depth",
    "role",
    "scan_depth",
    "is_greeting",
    "position",
    "inject_lore",
    "inject_at",
    "inject_replace",
    "inject_prepend",
    "ignore_on_max_context",
    "additional_keys",
    "exclude_keys",
    "exclude_keys_all",
    "match_full_word",
    "match_partial_word",
    "activate",
    "dont_activate",
    "probability",
    "priority",
    "unrecursive",
    "recursive",
    "no_recursive_search",
];

/// The decorators SillyTavern honours (world-info.js `parseDecorators`; other-systems.md 1).
pub(crate) const ST_DECORATORS: &[&str] = &["activate", "dont_activate"];

/// Whether `app` acts on the decorator `name`.
pub(crate) fn app_honours(app: App, name: &str) -> bool {
    match app {
        App::Spec => spec_decorator(name),
        App::SillyTavern => ST_DECORATORS.contains(&name),
        App::Risu => RISU_DECORATORS.contains(&name),
        App::Agnai | App::V2 => false,
    }
}

/// `decorator-unknown` and `decorator-ignored-by-app` of one entry's content.
fn check_decorators(content: &str, path: &str, entry: usize, app: App, out: &mut Vec<Finding>) {
    if !content.trim_start().starts_with("@@") {
        return;
    }
    let (list, _) = decorator::parse_list(content);
    let before = out.len();
    for d in &list {
        if out.len() - before >= MAX_PER_TEXT {
            out.push(finding(
                Severity::Info,
                "decorator-ignored-by-app",
                path.to_string(),
                Some(entry),
                format!(
                    "{} decorators in all; the findings after the first {MAX_PER_TEXT} are not listed",
                    list.len()
                ),
            ));
            break;
        }
        let name = d.kind.name();
        let fallback = d
            .fallbacks
            .iter()
            .map(|f| f.kind.name())
            .find(|n| app_honours(app, n));
        if !decorator_known(name) && d.fallbacks.is_empty() {
            out.push(finding(
                Severity::Warning,
                "decorator-unknown",
                path.to_string(),
                Some(entry),
                format!("@@{name} is not a decorator of the spec or of RisuAI, and no @@@ fallback follows it"),
            ));
            continue;
        }
        if app == App::Spec || app_honours(app, name) {
            continue;
        }
        out.push(finding(
            Severity::Info,
            "decorator-ignored-by-app",
            path.to_string(),
            Some(entry),
            format!(
                "{} ignores @@{name}{}",
                app.label(),
                match fallback {
                    Some(f) => format!("; it uses the fallback @@@{f} instead"),
                    None => "; no fallback it knows follows".into(),
                }
            ),
        ));
    }
}
