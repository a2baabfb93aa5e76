//! SillyTavern's timed effects (`WorldInfoTimedEffects`): the records carried over from the
//! state (`checkTimedEffects`) and the new ones of the entries a scan activated
//! (`setTimedEffects`). A record runs from `start` to `end = start + N` and is active while the
//! chat length is below `end`.

use super::entry::StEntry;
use crate::compile::CompiledBooks;
use crate::state::{key as state_key, ScanState, TimedRecord};
use std::collections::HashMap;

/// The timed effects of one scan: the next state (records carried over, then new ones) and
/// which entries are sticky, cooling down or delayed.
pub(super) struct Timed {
    pub(super) state: ScanState,
    pub(super) sticky_on: Vec<bool>,
    pub(super) cooldown_on: Vec<bool>,
    pub(super) delay_on: Vec<bool>,
}

impl Timed {
    /// `checkTimedEffects`: the records of `prev` still running at chat length `len`.
    pub(super) fn check(entries: &[StEntry<'_>], prev: &ScanState, len: usize) -> Timed {
        let n = entries.len();
        let by_id: HashMap<u64, usize> =
            entries.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
        let mut state = ScanState {
            matched: prev.matched.clone(),
            variables: prev.variables.clone(),
            ..Default::default()
        };
        let mut sticky_on = vec![false; n];
        let mut cooldown_on = vec![false; n];
        let l = len as u64;
        for (k, rec) in &prev.sticky {
            let idx = u64::from_str_radix(k, 16)
                .ok()
                .and_then(|id| by_id.get(&id).copied());
            if l <= rec.start && !rec.protected {
                continue;
            }
            let Some(i) = idx else {
                if l < rec.end {
                    state.sticky.insert(k.clone(), rec.clone());
                }
                continue;
            };
            let e = &entries[i];
            if e.sticky == 0 {
                continue;
            }
            if l >= rec.end {
                if e.cooldown > 0 {
                    let r = TimedRecord {
                        start: l,
                        end: l + e.cooldown,
                        protected: true,
                        entry: rec.entry.clone(),
                    };
                    state.cooldown.insert(k.clone(), r);
                    cooldown_on[i] = true;
                }
                continue;
            }
            sticky_on[i] = true;
            state.sticky.insert(k.clone(), rec.clone());
        }
        for (k, rec) in &prev.cooldown {
            if state.cooldown.contains_key(k) {
                continue;
            }
            let idx = u64::from_str_radix(k, 16)
                .ok()
                .and_then(|id| by_id.get(&id).copied());
            if l <= rec.start && !rec.protected {
                continue;
            }
            let Some(i) = idx else {
                if l < rec.end {
                    state.cooldown.insert(k.clone(), rec.clone());
                }
                continue;
            };
            if entries[i].cooldown == 0 || l >= rec.end {
                continue;
            }
            cooldown_on[i] = true;
            state.cooldown.insert(k.clone(), rec.clone());
        }
        let delay_on: Vec<bool> = entries.iter().map(|e| e.delay > 0 && l < e.delay).collect();
        Timed {
            state,
            sticky_on,
            cooldown_on,
            delay_on,
        }
    }

    /// `setTimedEffects`: new records for the `activated` entries without one.
    pub(super) fn set(
        &mut self,
        cb: &CompiledBooks<'_>,
        entries: &[StEntry<'_>],
        activated: &[usize],
        len: usize,
    ) {
        let l = len as u64;
        let state = &mut self.state;
        for &i in activated {
            let e = &entries[i];
            let k = state_key(e.id);
            let at = cb.entries[e.rank as usize].at;
            let label = format!("{}#{}", cb.books[at.book].name, at.index);
            if e.sticky > 0 && !state.sticky.contains_key(&k) {
                state.sticky.insert(
                    k.clone(),
                    TimedRecord {
                        start: l,
                        end: l + e.sticky,
                        protected: false,
                        entry: label.clone(),
                    },
                );
            }
            if e.cooldown > 0 && !state.cooldown.contains_key(&k) {
                state.cooldown.insert(
                    k,
                    TimedRecord {
                        start: l,
                        end: l + e.cooldown,
                        protected: false,
                        entry: label,
                    },
                );
            }
        }
    }
}
