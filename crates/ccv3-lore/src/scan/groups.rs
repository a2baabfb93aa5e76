//! Inclusion groups (step 4 of the scan order): the members matched in a pass are checked
//! before the budget walk and resolved among themselves.

use super::context::{NewAct, Pass, Scan, ST_FAILED};
use super::RejectReason;
use crate::hash::FxMap;
use crate::text;

impl<'s, 'a> Scan<'s, 'a> {
    /// Checks the candidates in inclusion groups (`grouped`, in rank order), resolves each
    /// group among its matched members (`active`: groups an earlier pass has a winner for) and
    /// rolls the survivors' probability (sticky entries skip it); returns every match, the
    /// losers marked dead.
    pub(super) fn check_groups(
        &mut self,
        grouped: &[u32],
        (pass, level, skew): (Pass, Option<u64>, u64),
        active: &FxMap<&str, u32>,
    ) -> Vec<NewAct> {
        let mut new: Vec<NewAct> = Vec::new();
        for &rank in grouped {
            if let Some(a) = self.check(rank, pass, level, skew) {
                new.push(NewAct {
                    new_index: new.len() as u32,
                    ..a
                });
            }
        }
        self.resolve_groups(&mut new, active);
        for a in new.iter_mut() {
            if a.alive && !a.sticky && !self.roll_passes(a.rank) {
                a.alive = false;
            }
        }
        new
    }

    /// Resolves each group among its members in `new`: an earlier winner blocks the group;
    /// sticky members win; optional scoring; `group_override` takes the highest order; else a
    /// weighted roll.
    fn resolve_groups(&mut self, new: &mut [NewAct], active: &FxMap<&str, u32>) {
        let cb = self.cb;
        let mut names: Vec<&str> = Vec::new();
        for a in new.iter() {
            for g in &cb.entries[a.rank as usize].rare().groups {
                if !names.contains(&g.as_str()) {
                    names.push(g);
                }
            }
        }
        for g in names {
            let members: Vec<usize> = (0..new.len())
                .filter(|&i| {
                    new[i].alive
                        && cb.entries[new[i].rank as usize]
                            .rare()
                            .groups
                            .iter()
                            .any(|x| x == g)
                })
                .collect();
            if members.is_empty() {
                continue;
            }
            let lose = |this: &mut Self, new: &mut [NewAct], i: usize, winner: Option<u32>| {
                new[i].alive = false;
                this.status[new[i].rank as usize] = ST_FAILED;
                this.reasons.insert(
                    new[i].rank,
                    RejectReason::Group {
                        group: g.to_string(),
                        winner: winner.map(|w| cb.entries[w as usize].at),
                    },
                );
            };
            if let Some(&w) = active.get(g) {
                for &i in &members {
                    lose(self, new, i, Some(w));
                }
                continue;
            }
            if members.len() < 2 {
                continue;
            }
            let stickies: Vec<usize> = members.iter().copied().filter(|&i| new[i].sticky).collect();
            if !stickies.is_empty() {
                let w = new[stickies[0]].rank;
                for &i in &members {
                    if !new[i].sticky {
                        lose(self, new, i, Some(w));
                    }
                }
                continue;
            }
            let mut pool = members.clone();
            let scoring = pool.iter().any(|&i| {
                cb.entries[new[i].rank as usize]
                    .rare()
                    .group_scoring
                    .unwrap_or(self.opts.group_scoring)
            });
            if scoring {
                let best = pool.iter().map(|&i| new[i].score).max().unwrap_or(0);
                let w = pool
                    .iter()
                    .copied()
                    .find(|&i| new[i].score == best)
                    .map(|i| new[i].rank);
                for &i in &pool {
                    if new[i].score < best {
                        lose(self, new, i, w);
                    }
                }
                pool.retain(|&i| new[i].score == best);
            }
            if pool.len() < 2 {
                continue;
            }
            let overrides: Vec<usize> = pool
                .iter()
                .copied()
                .filter(|&i| cb.entries[new[i].rank as usize].rare().group_override)
                .collect();
            let winner = if !overrides.is_empty() {
                let mut w = overrides[0];
                for &i in &overrides[1..] {
                    if cb.entries[new[i].rank as usize].order
                        > cb.entries[new[w].rank as usize].order
                    {
                        w = i;
                    }
                }
                w
            } else {
                let total: f64 = pool
                    .iter()
                    .map(|&i| cb.entries[new[i].rank as usize].rare().group_weight)
                    .sum();
                let mut w = pool[0];
                if total > 0.0 {
                    let subject = text::Fnv::new().str(g).0;
                    let mut r = text::roll(self.opts.seed, subject, self.len, 2) / 100.0 * total;
                    for &i in &pool {
                        let wt = cb.entries[new[i].rank as usize].rare().group_weight;
                        if r < wt {
                            w = i;
                            break;
                        }
                        r -= wt;
                    }
                }
                w
            };
            let wr = new[winner].rank;
            for &i in &pool {
                if i != winner {
                    lose(self, new, i, Some(wr));
                }
            }
        }
    }
}
