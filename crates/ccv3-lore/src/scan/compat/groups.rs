//! SillyTavern's inclusion groups (`filterByInclusionGroups`): groups split on commas,
//! "already activated" compared with the whole group text, a member of two groups removed twice.

use super::matching::{Buffer, St};
use super::shared::{roll, State};
use crate::scan::{RejectReason, ScanOptions};
use std::collections::HashMap;
use std::sync::Arc;

/// SillyTavern's `filterByInclusionGroups` on the entries found in one step (`now`, in order).
#[allow(clippy::too_many_arguments)]
pub(super) fn groups(
    st: &mut St<'_, '_>,
    now: &mut Vec<usize>,
    activated: &[usize],
    buf: &Buffer,
    base: usize,
    state: State,
    sticky_on: &[bool],
    cooldown_on: &[bool],
    delay_on: &[bool],
    opts: &ScanOptions,
    len: usize,
    reasons: &mut HashMap<usize, RejectReason>,
    texts: &mut HashMap<i64, Arc<str>>,
) {
    // Groups in first-seen order, members in `now` order.
    let mut names: Vec<String> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for &i in now.iter() {
        for g in st.entries[i].groups() {
            match names.iter().position(|n| n == g) {
                Some(p) => members[p].push(i),
                None => {
                    names.push(g.to_string());
                    members.push(vec![i]);
                }
            }
        }
    }
    if names.is_empty() {
        return;
    }
    // `newEntries.splice(newEntries.indexOf(entry), 1)`: an entry already gone removes the last.
    let remove =
        |now: &mut Vec<usize>, i: usize, g: &str, reasons: &mut HashMap<usize, RejectReason>| {
            let victim = match now.iter().position(|&x| x == i) {
                Some(p) => now.remove(p),
                None => match now.pop() {
                    Some(v) => v,
                    None => return,
                },
            };
            reasons.insert(
                victim,
                RejectReason::Group {
                    group: g.to_string(),
                    winner: None,
                },
            );
        };
    // Timed effects.
    let mut has_sticky = vec![false; names.len()];
    for (gi, g) in names.iter().enumerate() {
        let group = members[gi].clone();
        if group.iter().any(|&i| sticky_on[i]) {
            for &i in &group {
                if !sticky_on[i] {
                    remove(now, i, g, reasons);
                }
            }
            has_sticky[gi] = true;
        }
        for &i in &group {
            if cooldown_on[i] {
                remove(now, i, g, reasons);
            }
        }
        for &i in &group {
            if delay_on[i] {
                remove(now, i, g, reasons);
            }
        }
    }
    // Scoring.
    for gi in 0..names.len() {
        let scored_any = opts.group_scoring
            || members[gi]
                .iter()
                .any(|&i| st.entries[i].group_scoring == Some(true));
        if !scored_any || has_sticky[gi] {
            continue;
        }
        let group = members[gi].clone();
        let scores: Vec<u32> = group
            .iter()
            .map(|&i| {
                let text = buf.text(texts, &st.entries[i], base, state);
                st.score(&text, i)
            })
            .collect();
        let max = scores.iter().copied().max().unwrap_or(0);
        let mut kept = Vec::new();
        for (k, &i) in group.iter().enumerate() {
            let scored = st.entries[i].group_scoring.unwrap_or(opts.group_scoring);
            if scored && scores[k] < max {
                remove(now, i, &names[gi], reasons);
            } else {
                kept.push(i);
            }
        }
        members[gi] = kept;
    }
    // Winners.
    for gi in 0..names.len() {
        let g = names[gi].clone();
        let group = members[gi].clone();
        if has_sticky[gi] {
            continue;
        }
        if activated.iter().any(|&i| st.entries[i].group == g) {
            for &i in &group {
                remove(now, i, &g, reasons);
            }
            continue;
        }
        if group.len() <= 1 {
            continue;
        }
        let mut prios: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&i| st.entries[i].group_override)
            .collect();
        prios.sort_by(|&a, &b| st.entries[b].order.total_cmp(&st.entries[a].order));
        let winner = if let Some(&w) = prios.first() {
            Some(w)
        } else if st.entries[group[0]].st_won.is_some() {
            // SillyTavern's draw: the member it activated (none: its winner fell later, to a
            // roll or the budget, and no member is activated).
            match group.iter().find(|&&i| st.entries[i].st_won == Some(true)) {
                Some(&w) => Some(w),
                None => {
                    for &i in &group {
                        remove(now, i, &g, reasons);
                    }
                    continue;
                }
            }
        } else {
            let total: f64 = group.iter().map(|&i| st.entries[i].group_weight).sum();
            let first = &st.entries[group[0]];
            let r = roll(opts.seed, first.id, len, g.len() as u64 ^ 0x4752_4f55) * total;
            let mut cur = 0.0;
            let mut w = None;
            for &i in &group {
                cur += st.entries[i].group_weight;
                if r <= cur {
                    w = Some(i);
                    break;
                }
            }
            w
        };
        let Some(w) = winner else { continue };
        for &i in &group {
            if i != w {
                remove(now, i, &g, reasons);
            }
        }
    }
}
