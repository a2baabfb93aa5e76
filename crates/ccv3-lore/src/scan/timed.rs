//! Timed effects and match history: the previous state advanced to this chat (step 1 of the
//! scan order) and the next state recorded from this scan's activations (step 6).

use super::context::{Act, Scan};
use crate::compile::CEntry;
use crate::state::{self, MatchRecord, ScanState, TimedRecord};

impl<'s, 'a> Scan<'s, 'a> {
    /// Takes over the effects of `prev` that still hold at this chat length (see the module
    /// docs of [`crate::scan`], step 1).
    pub(super) fn advance_state(&mut self, prev: &ScanState) {
        let l = self.len as u64;
        for (k, r) in &prev.matched {
            if r.first < l {
                if let Some((id, _)) = self.resolve(k, &r.entry) {
                    self.state.matched.insert(k.clone(), r.clone());
                    self.prev_matched.insert(id);
                }
            }
        }
        for (k, r) in &prev.sticky {
            let Some((_, rank)) = self.resolve(k, &r.entry) else {
                continue;
            };
            if r.start >= l && !r.protected {
                continue;
            }
            if l > r.end {
                let cd = self.cb.entries[rank as usize].rare().cooldown;
                if cd > 0 {
                    self.state.cooldown.insert(
                        k.clone(),
                        TimedRecord {
                            start: r.end,
                            end: r.end.saturating_add(cd),
                            protected: true,
                            entry: r.entry.clone(),
                        },
                    );
                }
                continue;
            }
            self.state.sticky.insert(k.clone(), r.clone());
        }
        for (k, r) in &prev.cooldown {
            if self.resolve(k, &r.entry).is_none() {
                continue;
            }
            if (r.start >= l && !r.protected) || l > r.end || self.state.cooldown.contains_key(k) {
                continue;
            }
            self.state.cooldown.insert(k.clone(), r.clone());
        }
        self.sticky_ids = self
            .state
            .sticky
            .iter()
            .filter_map(|(k, r)| self.resolve(k, &r.entry).map(|x| x.0))
            .collect();
        self.cooldown_ids = self
            .state
            .cooldown
            .iter()
            .filter_map(|(k, r)| self.resolve(k, &r.entry).map(|x| x.0))
            .collect();
    }

    /// Records the new timed effects and match history of `activated` in the next state (only
    /// entries with timed effects or after-match decorators need it).
    pub(super) fn record_state(&mut self, activated: &[Act]) {
        let cb = self.cb;
        let l = self.len as u64;
        for &(rank, ..) in activated {
            let e: &CEntry<'a> = &cb.entries[rank as usize];
            let after_match = e.dec.keep_activate_after_match || e.dec.dont_activate_after_match;
            if e.rare().sticky > 0 || e.rare().cooldown > 0 || after_match {
                let key = state::key(cb.id(e));
                let label = format!("{}#{}", cb.books[e.at.book].name, e.at.index);
                if e.rare().sticky > 0 && !self.state.sticky.contains_key(&key) {
                    let r = TimedRecord {
                        start: l,
                        end: l.saturating_add(e.rare().sticky),
                        protected: false,
                        entry: label.clone(),
                    };
                    self.state.sticky.insert(key.clone(), r);
                } else if e.rare().sticky == 0
                    && e.rare().cooldown > 0
                    && !self.state.cooldown.contains_key(&key)
                {
                    let r = TimedRecord {
                        start: l,
                        end: l.saturating_add(e.rare().cooldown),
                        protected: false,
                        entry: label.clone(),
                    };
                    self.state.cooldown.insert(key.clone(), r);
                }
                if after_match {
                    let m = self.state.matched.entry(key).or_insert(MatchRecord {
                        first: l,
                        count: 0,
                        entry: label,
                    });
                    m.count = m.count.saturating_add(1);
                }
            }
        }
    }
}
