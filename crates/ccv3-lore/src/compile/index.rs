//! The key index: Aho-Corasick automata over every pattern (plain keys and regex prefilter
//! literals), pattern ids in one numbering, and the fan-out from each pattern to the entries
//! whose primary keys it can trigger.

use super::entry::CEntry;
use super::keys::{KeyKind, RegexKey};
use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::{dfa, nfa, Anchored, MatchKind, PatternID};
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
    pub ci: Option<Ac>,
    pub ci_ids: Vec<u32>,
    pub cs: Option<Ac>,
    pub cs_ids: Vec<u32>,
    /// Patterns longer than [`LONG_PATTERN`] left out of automata built for every text: each
    /// text builds a small automaton of those that can occur in it ([`Automata::long_for`]).
    pub long_ci: Vec<u32>,
    pub long_cs: Vec<u32>,
}

/// Patterns longer than this are left out of the automata built at compile time: an automaton
/// takes tens of bytes per pattern byte (one 8 MB key took 330 MB and 1.6 s), and such a key
/// can only occur in a text at least as long.
pub(crate) const LONG_PATTERN: usize = 64 << 10;

/// An Aho-Corasick automaton of the kind that suits its patterns: a DFA for few short ones, a
/// contiguous NFA for up to 10,000, a noncontiguous one (fastest to build) for more or for a
/// large total of pattern bytes (a DFA's size is its states times its alphabet).
#[derive(Debug)]
pub(crate) enum Ac {
    Dfa(dfa::DFA),
    Contiguous(nfa::contiguous::NFA),
    Noncontiguous(nfa::noncontiguous::NFA),
}

/// The states a walk has passed through (see [`Ac::walk`]), reused from text to text.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// (state, followed by a word boundary) → the longest pattern of the state, for states met
    /// followed by a boundary; `u32::MAX` for the others.
    states: crate::hash::FxMap<usize, (u32, usize)>,
    /// For a noncontiguous NFA: pattern → the pattern after it in every state's list (the
    /// longest pattern that is a proper suffix of it, or its duplicate), as learned so far.
    next: crate::hash::FxMap<u32, PatternID>,
}

impl Ac {
    fn build(list: &[&[u8]]) -> Option<Ac> {
        let total: usize = list.iter().map(|p| p.len()).sum();
        if list.len() <= 100 && total <= 16 << 10 {
            if let Ok(d) = dfa::Builder::new()
                .match_kind(MatchKind::Standard)
                .build(list)
            {
                return Some(Ac::Dfa(d));
            }
        }
        if list.len() <= 10_000 && total <= 4 << 20 {
            if let Ok(n) = nfa::contiguous::Builder::new()
                .match_kind(MatchKind::Standard)
                .build(list)
            {
                return Some(Ac::Contiguous(n));
            }
        }
        nfa::noncontiguous::Builder::new()
            .match_kind(MatchKind::Standard)
            .build(list)
            .ok()
            .map(Ac::Noncontiguous)
    }

    /// Calls `f(pattern, start, end)` for the occurrences of patterns in `text` that can tell a
    /// scan something new: every occurrence the first time its state is reached (twice: once
    /// followed by a word character, once by a boundary), and later only the longest pattern of
    /// a state followed by a boundary (the others are preceded by the same characters, inside
    /// the state's text, so they are whole words or not as before). Occurrences come in text
    /// order, so each pattern's first occurrence, and its first whole-word one, are among them.
    /// Linear in the text plus the patterns of the states reached: keys that are prefixes of
    /// each other (`x`, `xx`, `xxx`...) no longer report every occurrence of every one (issue 12).
    pub(crate) fn walk(&self, text: &str, seen: &mut Seen, f: impl FnMut(u32, usize, usize)) {
        match self {
            Ac::Dfa(a) => walk(a, text, seen, false, f),
            Ac::Contiguous(a) => walk(a, text, seen, false, f),
            Ac::Noncontiguous(a) => walk(a, text, seen, true, f),
        }
        seen.states.clear();
        seen.next.clear();
    }
}

/// Calls `each` with the patterns of state `sid`, in the automaton's order.
///
/// `chained` (a noncontiguous NFA): the automaton reaches a state's i-th pattern in i steps, so
/// listing a state of k patterns one index at a time costs k^2/2 (3,000 keys nested in one
/// another, `x`, `xx`, ..., took 20 s over a run of `x`: issue 31). A state's list is its own
/// patterns followed by the list of its failure state, so the pattern after `p` in any list is
/// the same everywhere (the longest pattern that is a proper suffix of `p`, or `p`'s duplicate):
/// once learned (`next`), the rest of a list is followed pattern to pattern, and the automaton
/// is asked only for the patterns after ones never listed before.
fn each_pattern<A: Automaton>(
    a: &A,
    sid: StateID,
    chained: bool,
    next: &mut crate::hash::FxMap<u32, PatternID>,
    mut each: impl FnMut(PatternID),
) {
    let n = a.match_len(sid);
    if !chained {
        for k in 0..n {
            each(a.match_pattern(sid, k));
        }
        return;
    }
    if n == 0 {
        return;
    }
    let mut pid = a.match_pattern(sid, 0);
    for k in 1..n {
        each(pid);
        let after = match next.get(&pid.as_u32()) {
            Some(&q) => q,
            None => {
                let q = a.match_pattern(sid, k);
                next.insert(pid.as_u32(), q);
                q
            }
        };
        pid = after;
    }
    each(pid);
}

fn walk<A: Automaton>(
    a: &A,
    text: &str,
    seen: &mut Seen,
    chained: bool,
    mut f: impl FnMut(u32, usize, usize),
) {
    let Ok(mut sid) = a.start_state(Anchored::No) else {
        return;
    };
    for (i, &b) in text.as_bytes().iter().enumerate() {
        sid = a.next_state(Anchored::No, sid, b);
        if !a.is_special(sid) || !a.is_match(sid) {
            continue;
        }
        let end = i + 1;
        // Patterns are UTF-8, so a match ends on a character boundary.
        let boundary = !text
            .get(end..)
            .and_then(|s| s.chars().next())
            .is_some_and(crate::text::is_word_char);
        let key = sid.as_usize().wrapping_mul(2) | usize::from(boundary);
        match seen.states.get(&key) {
            None => {
                let mut longest = (0usize, u32::MAX);
                each_pattern(a, sid, chained, &mut seen.next, |pid| {
                    let len = a.pattern_len(pid);
                    if len >= longest.0 {
                        longest = (len, pid.as_u32());
                    }
                    f(pid.as_u32(), end.saturating_sub(len), end);
                });
                let value = if boundary {
                    (longest.1, longest.0)
                } else {
                    (u32::MAX, 0)
                };
                seen.states.insert(key, value);
            }
            Some(&(pid, len)) if pid != u32::MAX => f(pid, end.saturating_sub(len), end),
            Some(_) => {}
        }
    }
}

impl Automata {
    /// Builds the automata of every pattern, or with `texts` (lowercased, as written), of the
    /// patterns that can occur in them.
    pub(crate) fn build(p: &Patterns<'_>, texts: Option<(&str, &str)>) -> Automata {
        let one = |pats: &[Cow<'_, str>], text: Option<&str>| -> (Option<Ac>, Vec<u32>, Vec<u32>) {
            let (list, ids, long): (Vec<&[u8]>, Vec<u32>, Vec<u32>) = match text {
                None if pats.iter().all(|t| t.len() <= LONG_PATTERN) => (
                    pats.iter().map(|t| t.as_bytes()).collect(),
                    Vec::new(),
                    Vec::new(),
                ),
                None => {
                    let (short, long): (Vec<_>, Vec<_>) = (0..pats.len() as u32)
                        .partition(|&i| pats[i as usize].len() <= LONG_PATTERN);
                    let list = short.iter().map(|&i| pats[i as usize].as_bytes()).collect();
                    (list, short, long)
                }
                Some(text) => {
                    let (list, ids) = Self::may_occur(pats, 0..pats.len() as u32, text);
                    (list, ids, Vec::new())
                }
            };
            if list.is_empty() {
                return (None, Vec::new(), long);
            }
            (Ac::build(&list), ids, long)
        };
        let (ci, ci_ids, long_ci) = one(&p.ci, texts.map(|t| t.0));
        let (cs, cs_ids, long_cs) = one(&p.cs, texts.map(|t| t.1));
        Automata {
            ci,
            ci_ids,
            cs,
            cs_ids,
            long_ci,
            long_cs,
        }
    }

    /// The patterns among `ids` that can occur in `text` (a 4-gram test; a key longer than the
    /// text cannot occur in it and costs nothing more), with their ids.
    fn may_occur<'p>(
        pats: &'p [Cow<'_, str>],
        ids: impl Iterator<Item = u32>,
        text: &str,
    ) -> (Vec<&'p [u8]>, Vec<u32>) {
        let grams = crate::grams::Grams::of(&[text.as_bytes()]);
        ids.filter_map(|i| Some((pats.get(i as usize)?.as_bytes(), i)))
            .filter(|(t, _)| t.len() <= text.len() && grams.may_contain(t))
            .unzip()
    }

    /// The automata of the long patterns left out of these (`long_ci`, `long_cs`) that can
    /// occur in `texts` (lowercased, as written); `None` when there are none.
    pub(crate) fn long_for(&self, p: &Patterns<'_>, texts: (&str, &str)) -> Option<Automata> {
        if self.long_ci.is_empty() && self.long_cs.is_empty() {
            return None;
        }
        let one = |pats: &[Cow<'_, str>], long: &[u32], text: &str| -> (Option<Ac>, Vec<u32>) {
            let (list, ids) = Self::may_occur(pats, long.iter().copied(), text);
            if list.is_empty() {
                return (None, Vec::new());
            }
            (Ac::build(&list), ids)
        };
        let (ci, ci_ids) = one(&p.ci, &self.long_ci, texts.0);
        let (cs, cs_ids) = one(&p.cs, &self.long_cs, texts.1);
        (ci.is_some() || cs.is_some()).then(|| Automata {
            ci,
            ci_ids,
            cs,
            cs_ids,
            long_ci: Vec::new(),
            long_cs: Vec::new(),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::whole_word_at;

    /// Per pattern: the end of its first occurrence and of its first whole-word one.
    fn firsts(
        pats: &[&str],
        text: &str,
        via_walk: Option<bool>,
    ) -> Vec<(Option<usize>, Option<usize>)> {
        let mut out = vec![(None, None); pats.len()];
        let mut note = |p: usize, start: usize, end: usize| {
            let o: &mut (Option<usize>, Option<usize>) = &mut out[p];
            o.0.get_or_insert(end);
            if whole_word_at(text, start, end) {
                o.1.get_or_insert(end);
            }
        };
        if let Some(noncontiguous) = via_walk {
            let list: Vec<&[u8]> = pats.iter().map(|p| p.as_bytes()).collect();
            let ac = if noncontiguous {
                Ac::Noncontiguous(
                    nfa::noncontiguous::Builder::new()
                        .match_kind(MatchKind::Standard)
                        .build(&list)
                        .unwrap(),
                )
            } else {
                Ac::build(&list).unwrap()
            };
            ac.walk(text, &mut Seen::default(), |p, s, e| note(p as usize, s, e));
        } else {
            for end in 0..=text.len() {
                for (p, pat) in pats.iter().enumerate() {
                    if end >= pat.len() && text.as_bytes()[end - pat.len()..end] == *pat.as_bytes()
                    {
                        note(p, end - pat.len(), end);
                    }
                }
            }
        }
        out
    }

    proptest::proptest! {
        /// The walk reports every pattern's first occurrence and first whole-word occurrence,
        /// as the full list of occurrences would (issue 12: the walk skips most of that list).
        #[test]
        fn walk_finds_first_and_first_whole_occurrences(
            pats in proptest::collection::btree_set("[ab é]{1,5}", 1..12),
            text in "[ab é]{0,40}",
        ) {
            let pats: Vec<&str> = pats.iter().map(String::as_str).collect();
            let every = firsts(&pats, &text, None);
            proptest::prop_assert_eq!(firsts(&pats, &text, Some(false)), every.clone());
            // Issue 31: the noncontiguous NFA's lists are followed pattern to pattern.
            proptest::prop_assert_eq!(firsts(&pats, &text, Some(true)), every);
        }
    }

    #[test]
    fn nested_keys_list_each_state_in_linear_steps() {
        // Issue 31: 3,000 keys x, xx, ... (4.5 MB: a noncontiguous NFA) over a run of x took
        // 20 s, listing each state's patterns one index at a time. Every state's patterns are
        // still reported once.
        let keys: Vec<String> = (1..=3000).map(|n| "x".repeat(n)).collect();
        let list: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        let ac = Ac::build(&list).unwrap();
        assert!(matches!(ac, Ac::Noncontiguous(_)));
        let text = "x".repeat(3500);
        let mut first_end = vec![usize::MAX; keys.len()];
        let mut reported = 0usize;
        ac.walk(&text, &mut Seen::default(), |p, _, e| {
            reported += 1;
            first_end[p as usize] = first_end[p as usize].min(e);
        });
        // Each state once followed by an `x`, and the deepest once more at the text's end
        // (followed by a boundary).
        assert_eq!(reported, 3000 * 3001 / 2 + 3000);
        assert!(first_end.iter().enumerate().all(|(i, &e)| e == i + 1));
    }

    #[test]
    fn prefix_keys_are_not_reported_at_every_place() {
        // Issue 12: `x`, `xx`, ... each occur at every place of a run of x.
        let keys: Vec<String> = (1..=300).map(|n| "x".repeat(n)).collect();
        let list: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        let ac = Ac::build(&list).unwrap();
        let text = "x".repeat(20_000) + " ";
        let mut reported = 0usize;
        ac.walk(&text, &mut Seen::default(), |_, _, _| reported += 1);
        // Every occurrence would be about 300 x 20,000; the walk reports each state's patterns
        // once, plus the longest at the one boundary.
        assert!(reported < 100_000, "{reported}");
    }
}
