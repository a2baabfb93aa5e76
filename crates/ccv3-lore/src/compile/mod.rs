//! Compiling books: decorators parsed, key macros resolved, every plain key of every entry in one
//! Aho-Corasick automaton per case mode, regex keys compiled once, entries put in activation order.
//!
//! The steps, one module each, in the order [`LorebookCompiler::compile`] runs them:
//! 1. `parallel`: every entry compiled, in book order, into one key table (`keys`); big books
//!    are split between two threads with the `parallel` feature.
//! 2. `entry`: one entry's compiled facts (decorators, SillyTavern knobs, keys, position).
//! 3. `keys`: the key table: distinct patterns, regex keys, their diagnostics.
//! 4. `order`: activation order and the budget order scans walk.
//! 5. `index`: the key index: automata over every pattern, the fan-out from patterns to entries.
//! 6. `identity`: entries' stable identities, hashed when a scan first needs one.
//!
//! Cost. Compiling is linear in the books and allocates little per entry: keys are borrowed from
//! the books when macros and trimming leave them unchanged and live in one flat table; SillyTavern
//! knobs are read in one pass over each entry's `extensions`; entries without decorators carry
//! none. With the `parallel` feature the automata are built on a second thread while the regex
//! keys are parsed (their prefilter literals are known before the parse) and the entries are
//! ordered; without it the same steps run one after the other on the calling thread. An entry's
//! identity (for states) is hashed only when a scan needs it (a state, a roll, a timed effect).

mod entry;
mod identity;
mod index;
mod input;
mod keys;
mod order;
mod parallel;
#[cfg(test)]
mod tests;

pub(crate) use entry::{CEntry, DepthSpec};
pub(crate) use index::{Automata, Patterns, Seen};
pub(crate) use input::BookInfo;
pub use input::{BookInput, BookKind, EntryRef, LorebookCompiler, Strategy, MAX_ENTRIES};
pub(crate) use keys::{KeyKind, KeyRange, KeyText, RegexKey};
pub(crate) use order::{total_key, Meta, META_GROUP, META_IGNORE_BUDGET};

use crate::hash::FxMap;
use crate::text::Fnv;
use ccv3::{Diagnostic, Lorebook};
use keys::Builder;
use std::sync::{Arc, OnceLock};

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
    /// Duplicate counts for identities, made on first use (`identity::count_duplicates`).
    pub(crate) dups: OnceLock<FxMap<u64, u64>>,
    /// `Compat::SillyTavern`'s regex keys, compiled on first use and kept for later scans.
    pub(crate) st_regex: crate::st_regex::StRegexCache,
    /// The compiler's case sensitivity for entries that do not say ([`LorebookCompiler::case_sensitive`]).
    pub(crate) case_sensitive: bool,
    pub(crate) max_depth: u64,
    pub(crate) levels: Vec<u64>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Per entry rank.
    pub(crate) meta: Vec<Meta>,
}

impl<'a> CompiledBooks<'a> {
    /// The text of the `i`th key of a range, as an `Arc` for an explanation (empty when out of
    /// range; made when asked for: most keys are never named in one).
    pub(crate) fn key_arc(&self, r: KeyRange, i: usize) -> Arc<str> {
        Arc::from(self.key_text.get(r.start as usize + i).map_or("", |t| &**t))
    }

    /// The automata of every pattern (built on first use when compiled for a single scan).
    pub(crate) fn automata(&self) -> &Automata {
        self.automata
            .get_or_init(|| Automata::build(&self.patterns, None))
    }

    /// The keys of a range.
    pub(crate) fn keys_of(&self, r: KeyRange) -> &[KeyKind] {
        let start = r.start as usize;
        self.keys
            .get(start..start + r.len as usize)
            .unwrap_or_default()
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

    /// Sets the dialect of the key macros ([`LorebookCompiler::dialect`]).
    pub fn dialect(mut self, dialect: ccv3_cbs::Dialect) -> Self {
        self.dialect = dialect;
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

    /// Lets a big book be compiled on a second thread ([`LorebookCompiler::threads`]).
    pub fn threads(mut self, yes: bool) -> Self {
        self.threads = yes;
        self
    }

    /// Sets the most entries the books may have ([`LorebookCompiler::max_entries`]).
    pub fn max_entries(mut self, n: usize) -> Self {
        self.max_entries = n;
        self
    }

    /// Checks that `books` are within the compiler's limits ([`LorebookCompiler::max_entries`]):
    /// the error names the limit and the option that raises it.
    pub fn check(&self, books: &[BookInput<'_>]) -> Result<(), crate::error::LoreError> {
        let total: usize = books.iter().map(|b| b.book.entries.len()).sum();
        if total > self.max_entries {
            return Err(crate::error::LoreError::Limit(format!(
                "the books have {total} entries, more than the limit of {} \
                 (LorebookCompiler::max_entries; default {MAX_ENTRIES})",
                self.max_entries
            )));
        }
        Ok(())
    }

    /// Compiles `books` (in the given order; the order names them in [`EntryRef::book`]), or
    /// says which limit they exceed ([`LorebookCompiler::check`]) before allocating anything.
    pub fn try_compile<'a>(
        &self,
        books: &[BookInput<'a>],
    ) -> Result<CompiledBooks<'a>, crate::error::LoreError> {
        self.check(books)?;
        Ok(self.compile(books))
    }

    /// Compiles `books` (in the given order; the order names them in [`EntryRef::book`]).
    /// Books over [`LorebookCompiler::max_entries`] compile to no entries at all, with the
    /// error as a diagnostic (`lore-entries-limit`); [`LorebookCompiler::try_compile`] returns
    /// it instead.
    pub fn compile<'a>(&self, books: &[BookInput<'a>]) -> CompiledBooks<'a> {
        if let Err(e) = self.check(books) {
            let (infos, _) = book_infos(books);
            let mut empty = self.compile_with(&[], false);
            empty.books = infos;
            empty
                .diagnostics
                .push(Diagnostic::error("lore-entries-limit", "", e.to_string()));
            return empty;
        }
        let total: usize = books.iter().map(|b| b.book.entries.len()).sum();
        self.compile_with(
            books,
            cfg!(feature = "parallel") && self.threads && total >= parallel::PARALLEL_COMPILE,
        )
    }

    /// [`LorebookCompiler::compile`], with the entries split between two workers (`split`: two
    /// threads with the `parallel` feature, one after the other without) or compiled by one.
    /// Either way gives the same books.
    fn compile_with<'a>(&self, books: &[BookInput<'a>], split: bool) -> CompiledBooks<'a> {
        let (infos, books_depth) = book_infos(books);
        let (b, mut entries, entries_depth) = self.compile_entries(books, split);
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
        let (automata, levels, meta) =
            self.index_and_order(&patterns, &mut regexes, &pending, &mut entries, &infos);
        let diagnostics = Builder::finish_regexes(&regexes, &mut keys, diags);
        let n_ci = index::renumber(&patterns, &mut keys, &mut regexes);
        let fan_out =
            index::FanOut::build(&entries, &keys, &regexes, n_ci + patterns.cs.len() as u32);
        CompiledBooks {
            books: infos,
            entries,
            patterns,
            automata,
            single_scan: self.single_scan,
            n_ci,
            fan_off: fan_out.offsets,
            fan: fan_out.ranks,
            always: fan_out.always,
            regexes,
            keys,
            key_text: texts,
            by_id: OnceLock::new(),
            dups: OnceLock::new(),
            st_regex: Default::default(),
            case_sensitive: self.case_sensitive,
            max_depth: books_depth.max(entries_depth),
            levels,
            diagnostics,
            meta,
        }
    }

    /// Parses the regex keys and builds the automata (unless compiling for a single scan, whose
    /// scan builds its own) while the entries are put in activation order and their recursion
    /// levels and budget order found: on two threads with the `parallel` feature. For a single
    /// scan, the other thread parses seven eighths of the regex keys instead of building automata.
    fn index_and_order<'a>(
        &self,
        patterns: &Patterns<'a>,
        regexes: &mut [RegexKey],
        pending: &[(String, String)],
        entries: &mut [CEntry<'a>],
        infos: &[BookInfo],
    ) -> (OnceLock<Automata>, Vec<u64>, Vec<Meta>) {
        let single_scan = self.single_scan;
        let half = if single_scan {
            regexes.len() / 8
        } else {
            regexes.len()
        };
        let (mine, theirs) = regexes.split_at_mut(half);
        let (my_src, their_src) = pending.split_at(half.min(pending.len()));
        let ((levels, meta), (their_engines, automata)) = crate::par::both(
            self.threads,
            "ccv3-lore-compile",
            || {
                Builder::parse_regexes(mine, my_src);
                order::set_kind_ranks(entries, infos, self.strategy);
                order::sort_for_activation(entries);
                (
                    order::recursion_levels(entries),
                    order::budget_meta(entries),
                )
            },
            || {
                (
                    Builder::engines(their_src),
                    (!single_scan).then(|| Automata::build(patterns, None)),
                )
            },
        );
        Builder::set_engines(theirs, their_engines);
        let automata = match automata {
            Some(a) => OnceLock::from(a),
            None => OnceLock::new(),
        };
        (automata, levels, meta)
    }
}

/// What the scan needs of each book, and the deepest scan depth the books set.
fn book_infos(books: &[BookInput<'_>]) -> (Vec<BookInfo>, u64) {
    let mut max_depth = 0u64;
    let infos = books
        .iter()
        .map(|input| {
            let book: &Lorebook = input.book;
            let scan_depth = book
                .scan_depth
                .as_ref()
                .and_then(|n| n.as_f64())
                .filter(|f| *f >= 0.0)
                .map(|f| f.min(1e9) as u64);
            max_depth = max_depth.max(scan_depth.unwrap_or(0));
            BookInfo {
                name: input.name.clone(),
                kind: input.kind,
                world_info: input.world_info,
                own_name: book.name.clone().filter(|n| *n != input.name),
                recursive: book.recursive_scanning,
                scan_depth,
                token_budget: book
                    .token_budget
                    .as_ref()
                    .and_then(|n| n.as_f64())
                    .filter(|f| *f > 0.0)
                    .map(|f| f.min(1e15) as usize),
                id_seed: Fnv::new().str(&input.name).0,
            }
        })
        .collect();
    (infos, max_depth)
}
