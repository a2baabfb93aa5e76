//! A prefilter for SillyTavern's plain-text key matching: one Aho-Corasick pass over a scan
//! text finds which keys occur in it at all, so a key that does not is answered without a
//! search of its own. A key that occurs is still checked the way `matchKeys` checks it (whole
//! words, regex fallback), so the answers are the same; only the work is less (a 2,000-entry
//! book's keys searched one by one in every step's text cost ~0.5 s; issue 28).

use super::entry::StEntry;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rustc_hash::FxHashMap;

/// No pattern (an empty key).
const NONE: u32 = u32::MAX;

/// The keys of one scan lower-cased, and which of them the current text holds.
pub(super) struct KeyFilter {
    ac: AhoCorasick,
    /// Entry `i`'s keys (primary, then secondary) are `ids[starts[i]..starts[i + 1]]`: the
    /// pattern of each key as written and of it trimmed.
    starts: Vec<u32>,
    ids: Vec<[u32; 2]>,
    /// One bit per pattern: found in the current text (while `valid`).
    present: Vec<u64>,
    valid: bool,
}

impl KeyFilter {
    /// The filter of the entries' keys; `None` when there is no key or the automaton cannot be
    /// built (every key is then searched on its own).
    pub(super) fn new(entries: &[StEntry<'_>]) -> Option<KeyFilter> {
        let mut by_pattern: FxHashMap<String, u32> = FxHashMap::default();
        let mut patterns: Vec<String> = Vec::new();
        let mut starts = Vec::with_capacity(entries.len() + 1);
        let mut ids = Vec::new();
        let mut id_of = |s: &str| -> Option<u32> {
            let p = s.to_lowercase();
            if p.is_empty() {
                return Some(NONE);
            }
            if let Some(&id) = by_pattern.get(&p) {
                return Some(id);
            }
            let id = u32::try_from(patterns.len())
                .ok()
                .filter(|&id| id != NONE)?;
            by_pattern.insert(p.clone(), id);
            patterns.push(p);
            Some(id)
        };
        for e in entries {
            starts.push(u32::try_from(ids.len()).ok()?);
            for key in e.keys.iter().chain(&e.secondary) {
                ids.push([id_of(key)?, id_of(key.trim())?]);
            }
        }
        starts.push(u32::try_from(ids.len()).ok()?);
        if patterns.is_empty() {
            return None;
        }
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::NoncontiguousNFA))
            .build(&patterns)
            .ok()?;
        Some(KeyFilter {
            ac,
            starts,
            ids,
            present: vec![0; patterns.len().div_ceil(64)],
            valid: false,
        })
    }

    /// The text changed: the next question searches it again.
    pub(super) fn reset(&mut self) {
        self.valid = false;
    }

    /// False when `key` (the text of one of entry `i`'s keys, as written or trimmed)
    /// lower-cased certainly does not occur in `lowered` (the current text, lower-cased); true
    /// when it does, or when `key` is none of them.
    pub(super) fn may_occur(
        &mut self,
        entries: &[StEntry<'_>],
        lowered: &str,
        i: usize,
        key: &str,
    ) -> bool {
        let Some(e) = entries.get(i) else {
            return true;
        };
        // The callers hand over a copy of the key (or of it trimmed): found by its text.
        let from = self.starts[i] as usize;
        let id = e
            .keys
            .iter()
            .chain(&e.secondary)
            .enumerate()
            .find_map(|(k, written)| {
                let [raw, trimmed] = self.ids[from + k];
                if key == written.as_str() {
                    Some(raw)
                } else if key == written.trim() {
                    Some(trimmed)
                } else {
                    None
                }
            });
        let Some(id) = id.filter(|&id| id != NONE) else {
            return true;
        };
        if !self.valid {
            self.present.fill(0);
            for m in self.ac.find_overlapping_iter(lowered) {
                let p = m.pattern().as_usize();
                self.present[p / 64] |= 1 << (p % 64);
            }
            self.valid = true;
        }
        (self.present[id as usize / 64] >> (id % 64)) & 1 == 1
    }
}
