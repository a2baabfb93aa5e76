//! What static analysis needs of compiled books (issue 27): each entry as the engine reads it
//! ([`EntryFacts`]) and which entry's content can activate which entry in a recursion step
//! ([`CompiledBooks::recursion_edges`]), decided by the scan's own key rules.
//!
//! An edge A -> B exists when A and B are distinct, A is enabled, A's content (without
//! decorators, cleaned as recursion text is) is not blank and A has no `prevent_recursion`, B is
//! enabled, its content is not blank, it has neither `exclude_recursion` nor `@@dont_activate`, B's book recurses
//! ([`ScanOptions::recursive`] for books that do not say) and one of B's primary keys matches A's
//! content as a recursion step matches it: plain keys with B's case and whole-word rules, regex
//! keys run on the content with [`ScanOptions::regex_key_steps`] (a search that runs out of steps
//! does not match). Secondary keys, `@@additional_keys`, `@@exclude_keys`, probability, groups and
//! the budget are not part of an edge: they decide later whether the reached entry is kept.

use crate::compile::{Automata, CEntry, KeyKind, Seen};
use crate::hash::FxMap;
use crate::text::{clean_scan_text, whole_word_at};
use crate::{CompiledBooks, EntryRef, ScanOptions, SelectiveLogic};

/// One key of an entry as the engine compiled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFacts<'c> {
    /// The key after macros and trimming.
    pub text: &'c str,
    /// Matched as a regex (`/pattern/flags`, or every key with `use_regex`).
    pub regex: bool,
    /// A regex key whose pattern is invalid (it never matches; a diagnostic says why).
    pub invalid: bool,
    /// A plain key matched case-sensitively.
    pub case_sensitive: bool,
    /// A plain key containing whitespace (never matched as a whole word).
    pub multiword: bool,
}

/// One entry as the engine reads it: its fields, SillyTavern's knobs in `extensions` and its
/// decorators, resolved once by the compiler.
#[derive(Debug, Clone)]
pub struct EntryFacts<'c> {
    /// Where the entry is.
    pub at: EntryRef,
    /// `enabled`.
    pub enabled: bool,
    /// Constant (ignored with `use_regex`, as the spec says).
    pub constant: bool,
    /// The primary keys.
    pub keys: Vec<KeyFacts<'c>>,
    /// The secondary keys.
    pub secondary: Vec<KeyFacts<'c>>,
    /// `@@additional_keys` groups (each must match).
    pub additional_groups: usize,
    /// `selective` as the engine reads it.
    pub selective: bool,
    /// The selective logic (`selectiveLogic`).
    pub logic: SelectiveLogic,
    /// Whole-word matching, when the entry says.
    pub whole_words: Option<bool>,
    /// The probability in use (`@@probability`, else the extension unless `useProbability` is
    /// false); `None` when none applies.
    pub probability: Option<f64>,
    /// `exclude_recursion`: not activated in recursion steps.
    pub exclude_recursion: bool,
    /// `prevent_recursion`: its content does not recurse.
    pub prevent_recursion: bool,
    /// `delay_until_recursion`'s level, when set.
    pub delay_until_recursion: Option<u64>,
    /// Inclusion groups.
    pub groups: &'c [String],
    /// `@@activate`.
    pub activate: bool,
    /// `@@dont_activate`.
    pub dont_activate: bool,
    /// `ignore_budget`.
    pub ignore_budget: bool,
    /// The content without decorators.
    pub body: &'c str,
    /// The content without decorators is blank.
    pub body_empty: bool,
    /// The entry's book recurses under the given options.
    pub book_recursive: bool,
}

/// An edge of the recursion graph: `from`'s content contains `key`, a primary key of `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecursionEdge {
    /// The entry whose content is scanned.
    pub from: EntryRef,
    /// The entry a recursion step can activate.
    pub to: EntryRef,
    /// The first of `to`'s primary keys that matches.
    pub key: String,
}

/// A recursion graph: its edges, and whether it is complete.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecursionGraph {
    /// The edges found, by `from` then `to`.
    pub edges: Vec<RecursionEdge>,
    /// False when [`GraphLimits`] stopped the search (then some edges may be missing) or a
    /// regex key ran out of steps.
    pub complete: bool,
}

/// Bounds of one recursion graph (hostile books: a key in every entry and every content makes
/// entries squared edges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphLimits {
    /// The most edges (default 1,000,000).
    pub max_edges: usize,
    /// The most work: bytes of content searched plus candidate entries checked (default
    /// 200,000,000, about a second).
    pub max_work: u64,
    /// The steps all regex searches may take together (default [`crate::REGEX_SCAN_STEPS`]).
    pub regex_steps: u64,
}

impl Default for GraphLimits {
    fn default() -> Self {
        GraphLimits {
            max_edges: 1_000_000,
            max_work: 200_000_000,
            regex_steps: crate::REGEX_SCAN_STEPS,
        }
    }
}

/// Whether a recursion step reaches an entry.
enum Reach {
    Key(String),
    No,
    OutOfSteps,
}

impl<'a> CompiledBooks<'a> {
    /// Every entry as the engine reads it, in book order (book, then index); `opts` decides
    /// the recursion of books that do not say.
    pub fn entry_facts(&self, opts: &ScanOptions) -> Vec<EntryFacts<'_>> {
        let mut out: Vec<EntryFacts<'_>> = self
            .entries
            .iter()
            .map(|e| {
                let rare = e.rare();
                EntryFacts {
                    at: e.at,
                    enabled: e.enabled,
                    constant: e.constant,
                    keys: self.key_facts(e.primary),
                    secondary: self.key_facts(e.secondary),
                    additional_groups: rare.additional.len(),
                    selective: e.selective,
                    logic: e.logic,
                    whole_words: e.whole_words,
                    probability: e.probability,
                    exclude_recursion: e.exclude_recursion,
                    prevent_recursion: e.prevent_recursion,
                    delay_until_recursion: rare.delay_until_recursion,
                    groups: &rare.groups,
                    activate: e.dec.activate,
                    dont_activate: e.dec.dont_activate,
                    ignore_budget: e.ignore_budget,
                    body: e.body,
                    body_empty: e.body_empty,
                    book_recursive: self.recurses(e.at.book, opts),
                }
            })
            .collect();
        out.sort_by_key(|f| f.at);
        out
    }

    fn key_facts(&self, r: crate::compile::KeyRange) -> Vec<KeyFacts<'_>> {
        let kinds = self.keys_of(r);
        kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let text = self.key_text.get(r.start as usize + i).map_or("", |t| &**t);
                let (regex, invalid, case_sensitive, multiword) = match *k {
                    KeyKind::Plain { pat, multiword } => {
                        (false, false, pat >= self.n_ci, multiword)
                    }
                    KeyKind::Regex(_) => (true, false, false, false),
                    KeyKind::Invalid => (true, true, false, false),
                };
                KeyFacts {
                    text,
                    regex,
                    invalid,
                    case_sensitive,
                    multiword,
                }
            })
            .collect()
    }

    /// Every entry in the order the budget counts entries of one pass (constant and sticky
    /// entries first, then `priority` highest first, then activation order; see the crate's
    /// choice 14): when the budget ends, the entries after it in this order are the ones cut.
    pub fn budget_order(&self) -> Vec<EntryRef> {
        let mut order: Vec<(u32, EntryRef)> = self
            .entries
            .iter()
            .zip(&self.meta)
            .map(|(e, m)| (m.budget_pos, e.at))
            .collect();
        order.sort_unstable();
        order.into_iter().map(|(_, at)| at).collect()
    }

    /// True when `book`'s entries are matched in recursion text under `opts`.
    fn recurses(&self, book: usize, opts: &ScanOptions) -> bool {
        self.books
            .get(book)
            .and_then(|b| b.recursive)
            .unwrap_or(opts.recursive)
    }

    /// The recursion graph: every edge A -> B (see the [module docs](self)), ordered by `from`
    /// then `to` (book order), one edge per pair with the first of B's keys that matches.
    /// Linear in the contents plus the entries each content reaches, within
    /// [`GraphLimits::default`] ([`RecursionGraph::complete`] says whether they cut it).
    pub fn recursion_edges(&self, opts: &ScanOptions) -> RecursionGraph {
        self.recursion_graph(opts, &GraphLimits::default(), &|_| true)
    }

    /// [`CompiledBooks::recursion_edges`] within `limits`, keeping only the edges into the
    /// entries `into` accepts (the others cost one check each).
    pub fn recursion_graph(
        &self,
        opts: &ScanOptions,
        limits: &GraphLimits,
        into: &dyn Fn(EntryRef) -> bool,
    ) -> RecursionGraph {
        let mut graph = RecursionGraph {
            edges: Vec::new(),
            complete: true,
        };
        // Only entries a recursion step can activate have edges in.
        let wanted: Vec<bool> = self
            .entries
            .iter()
            .map(|e| {
                e.enabled
                    && !e.body_empty
                    && !e.exclude_recursion
                    && !e.dec.dont_activate
                    && self.recurses(e.at.book, opts)
                    && into(e.at)
            })
            .collect();
        if !wanted.contains(&true) {
            return graph;
        }
        // The automata of the patterns that can occur in the contents scanned (a 4-gram test),
        // unless the books have all of theirs already: building every pattern of a big book
        // costs far more than the contents need (100,000 keys `k0`..`k99999`: 16 s).
        let own;
        let aut = match self.automata.get() {
            Some(a) => a,
            None => {
                let mut lower_all = String::new();
                let mut orig_all = String::new();
                for e in self.entries.iter() {
                    if e.enabled && !e.prevent_recursion && !e.body_empty {
                        let text = clean_scan_text(e.body, true);
                        let text = text.as_deref().unwrap_or(e.body);
                        orig_all.push_str(text);
                        orig_all.push('\n');
                        lower_all.push_str(&text.to_lowercase());
                        lower_all.push('\n');
                    }
                }
                own = Automata::build(&self.patterns, Some((&lower_all, &orig_all)));
                &own
            }
        };
        let mut seen = Seen::default();
        let mut hits: FxMap<u32, (bool, bool)> = FxMap::default();
        let mut cands: Vec<u32> = Vec::new();
        let mut flag = vec![false; self.entries.len()];
        let mut order: Vec<u32> = (0..self.entries.len() as u32).collect();
        order.sort_by_key(|&r| self.entries[r as usize].at);
        let mut work: u64 = 0;
        let mut steps = limits.regex_steps;
        'sources: for &a in &order {
            let src = &self.entries[a as usize];
            if !src.enabled || src.prevent_recursion || src.body_empty {
                continue;
            }
            let text = clean_scan_text(src.body, true);
            let text = text.as_deref().unwrap_or(src.body);
            let lower = text.to_lowercase();
            work = work.saturating_add(text.len() as u64);
            hits.clear();
            self.pattern_hits(aut, &lower, text, &mut seen, &mut hits);
            cands.clear();
            for &p in hits.keys() {
                let lo = self.fan_off.get(p as usize).copied().unwrap_or(0) as usize;
                let hi = self.fan_off.get(p as usize + 1).copied().unwrap_or(0) as usize;
                let fan = self.fan.get(lo..hi).unwrap_or_default();
                work = work.saturating_add(fan.len() as u64);
                for &r in fan {
                    if wanted[r as usize] && !flag[r as usize] {
                        flag[r as usize] = true;
                        cands.push(r);
                    }
                }
            }
            for &r in &self.always {
                if wanted[r as usize] && !flag[r as usize] {
                    flag[r as usize] = true;
                    cands.push(r);
                }
            }
            work = work.saturating_add(self.always.len() as u64);
            let mut out: Vec<RecursionEdge> = Vec::new();
            for &b in &cands {
                flag[b as usize] = false;
            }
            if work > limits.max_work {
                graph.complete = false;
                break 'sources;
            }
            for &b in &cands {
                if b == a {
                    continue;
                }
                let dst = &self.entries[b as usize];
                match self.reached(dst, text, &hits, opts, &mut steps) {
                    Reach::Key(key) => out.push(RecursionEdge {
                        from: src.at,
                        to: dst.at,
                        key,
                    }),
                    Reach::No => {}
                    Reach::OutOfSteps => graph.complete = false,
                }
            }
            out.sort_by_key(|e| e.to);
            if graph.edges.len() + out.len() > limits.max_edges {
                graph.complete = false;
                break;
            }
            graph.edges.extend(out);
        }
        graph
    }

    /// Where each pattern occurs in one text: `(anywhere, as a whole word)`.
    fn pattern_hits(
        &self,
        aut: &Automata,
        lower: &str,
        orig: &str,
        seen: &mut Seen,
        hits: &mut FxMap<u32, (bool, bool)>,
    ) {
        let long = aut.long_for(&self.patterns, (lower, orig));
        let mut note = |p: u32, whole: bool| {
            let h = hits.entry(p).or_insert((false, false));
            h.0 = true;
            h.1 |= whole;
        };
        for aut in std::iter::once(aut).chain(long.as_ref()) {
            let id = |ids: &[u32], p: u32| ids.get(p as usize).copied().unwrap_or(p);
            if let Some(ac) = &aut.ci {
                ac.walk(lower, seen, |p, start, end| {
                    note(id(&aut.ci_ids, p), whole_word_at(lower, start, end))
                });
            }
            if let Some(ac) = &aut.cs {
                ac.walk(orig, seen, |p, start, end| {
                    note(
                        self.n_ci + id(&aut.cs_ids, p),
                        whole_word_at(orig, start, end),
                    )
                });
            }
        }
    }

    /// The first primary key of `dst` that a recursion step finds in `text` (`hits`: its
    /// patterns), when a recursion step can activate `dst` at all; regex searches take their
    /// steps from `steps` (at most [`ScanOptions::regex_key_steps`] each).
    fn reached(
        &self,
        dst: &CEntry<'_>,
        text: &str,
        hits: &FxMap<u32, (bool, bool)>,
        opts: &ScanOptions,
        steps: &mut u64,
    ) -> Reach {
        if !dst.enabled
            || dst.body_empty
            || dst.exclude_recursion
            || dst.dec.dont_activate
            || !self.recurses(dst.at.book, opts)
        {
            return Reach::No;
        }
        let whole = dst.whole_words.unwrap_or(opts.match_whole_words);
        let keys = self.keys_of(dst.primary);
        let mut out_of_steps = false;
        for (i, k) in keys.iter().enumerate() {
            let found = match *k {
                KeyKind::Plain { pat, multiword } => {
                    hits.get(&pat)
                        .is_some_and(|h| if whole && !multiword { h.1 } else { h.0 })
                }
                KeyKind::Regex(rx) => {
                    let r = &self.regexes[rx as usize];
                    let pre = r.lits.is_empty() || r.lits.iter().any(|l| hits.contains_key(l));
                    pre && match &r.engine {
                        Ok(engine) => {
                            let given = opts.regex_key_steps.min(*steps);
                            let mut left = given;
                            let found = engine.find(text, &mut left);
                            *steps -= given - left;
                            match found {
                                Ok(m) => m.is_some(),
                                Err(_) => {
                                    out_of_steps = true;
                                    false
                                }
                            }
                        }
                        Err(_) => false,
                    }
                }
                KeyKind::Invalid => false,
            };
            if found {
                return Reach::Key(self.key_arc(dst.primary, i).to_string());
            }
        }
        if out_of_steps {
            Reach::OutOfSteps
        } else {
            Reach::No
        }
    }
}
