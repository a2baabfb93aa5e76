//! The key index: Aho-Corasick automata over every pattern (plain keys and regex prefilter
//! literals), pattern ids in one numbering, and the fan-out from each pattern to the entries
//! whose primary keys it can trigger.

use super::entry::{CEntry, KeyKind};
use super::keys::RegexKey;
use super::CompiledBooks;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use std::borrow::Cow;

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
}

/// Renumbers the pattern ids of `keys` and of the regexes' literals (the builder's temporary
/// ids: case-sensitive ones with the top bit set) into one numbering, case-insensitive patterns
/// first; returns how many case-insensitive patterns there are.
pub(super) fn renumber(
    patterns: &Patterns<'_>,
    keys: &mut [KeyKind],
    regexes: &mut [RegexKey],
) -> u32 {
    let n_ci = patterns.ci.len() as u32;
    let fix = |p: u32| {
        if p & (1 << 31) != 0 {
            n_ci + (p & !(1 << 31))
        } else {
            p
        }
    };
    for k in keys.iter_mut() {
        if let KeyKind::Plain { pat, .. } = k {
            *pat = fix(*pat);
        }
    }
    for r in regexes.iter_mut() {
        for l in &mut r.lits {
            *l = fix(*l);
        }
    }
    n_ci
}

/// The fan-out from patterns to the entries whose primary keys they can trigger, and the
/// entries every scan must look at.
pub(super) struct FanOut {
    /// Where each pattern's ranks start in `ranks` (one more slot at the end).
    pub offsets: Vec<u32>,
    /// Entry ranks, ascending within a pattern, each once.
    pub ranks: Vec<u32>,
    /// Entries a scan checks whatever its text: constant, forced, regex keys without literals.
    pub always: Vec<u32>,
}

impl FanOut {
    /// Builds the fan-out of `entries` (in rank order) over `n_pat` patterns: a counting sort
    /// by pattern.
    pub(super) fn build(
        entries: &[CEntry<'_>],
        keys: &[KeyKind],
        regexes: &[RegexKey],
        n_pat: u32,
    ) -> FanOut {
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
        FanOut {
            offsets: fan_off,
            ranks: fan,
            always,
        }
    }
}
