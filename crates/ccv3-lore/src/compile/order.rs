//! Orders: the activation order of entries (their rank) and the budget order scans count them
//! in, with the recursion levels entries wait for.

use super::entry::CEntry;
use super::input::{BookInfo, BookKind, EntryRef, Strategy};

/// `Meta::flags`: the entry is in an inclusion group.
pub(crate) const META_GROUP: u8 = 1;
/// `Meta::flags`: the entry ignores the budget.
pub(crate) const META_IGNORE_BUDGET: u8 = 2;

/// What a scan needs of an entry before checking it, kept small and dense.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    pub book: u32,
    /// Place in budget order (constant first, strategy, priority highest first, rank).
    pub budget_pos: u32,
    /// The same with `@@ignore_on_max_context` entries last.
    pub budget_pos_late: u32,
    pub flags: u8,
}

/// An `f64` as a `u64` in the same total order (`f64::total_cmp`).
pub(crate) fn total_key(f: f64) -> u64 {
    let bits = f.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Sets each entry's book-kind rank under the merge strategy (lowest for the books that go
/// first): SillyTavern's `getSortedEntries` (`world-info.js` of 1.19.0, lines 4608-4625) puts
/// the chat lore first, the persona lore next, then the character and global lore as the
/// strategy says (sorted together when evenly).
pub(super) fn set_kind_ranks(entries: &mut [CEntry<'_>], infos: &[BookInfo], strategy: Strategy) {
    let kind_rank = |k: BookKind| match (strategy, k) {
        (_, BookKind::Chat) => 0,
        (_, BookKind::Persona) => 1,
        (Strategy::Evenly, _) => 2,
        (Strategy::CharacterFirst, BookKind::Character)
        | (Strategy::GlobalFirst, BookKind::Global) => 2,
        _ => 3,
    };
    for e in entries.iter_mut() {
        e.kind_rank = kind_rank(infos[e.at.book].kind);
    }
}

/// Puts the entries in activation order: SillyTavern sorts by order, highest first (stable):
/// here by book-kind rank, then order highest first, then place in the books.
pub(super) fn sort_for_activation(entries: &mut [CEntry<'_>]) {
    // Sort small keys, then move each entry in place along the permutation's cycles.
    let mut order: Vec<(u8, u64, EntryRef, u32)> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.kind_rank, !total_key(e.order), e.at, i as u32))
        .collect();
    order.sort_unstable();
    let perm: Vec<u32> = order.iter().map(|k| k.3).collect();
    drop(order);
    let mut done = vec![false; perm.len()];
    for start in 0..perm.len() {
        if done[start] {
            continue;
        }
        let mut cur = start;
        loop {
            done[cur] = true;
            let src = perm[cur] as usize;
            if src == start {
                break;
            }
            entries.swap(cur, src);
            cur = src;
        }
    }
}

/// The `delay_until_recursion` levels entries wait for, lowest first, each once.
pub(super) fn recursion_levels(entries: &[CEntry<'_>]) -> Vec<u64> {
    let mut levels: Vec<u64> = entries
        .iter()
        .filter_map(|e| e.rare().delay_until_recursion)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels
}

/// Each entry's [`Meta`] (by rank): its book, flags and places in budget order, without and
/// with a maximum context (`@@ignore_on_max_context` entries last).
pub(super) fn budget_meta(entries: &[CEntry<'_>]) -> Vec<Meta> {
    let any_late = entries.iter().any(|e| e.dec.ignore_on_max_context);
    let mut meta: Vec<Meta> = entries
        .iter()
        .map(|e| Meta {
            book: e.at.book as u32,
            budget_pos: 0,
            budget_pos_late: 0,
            flags: (if e.rare().groups.is_empty() {
                0
            } else {
                META_GROUP
            }) | (if e.ignore_budget {
                META_IGNORE_BUDGET
            } else {
                0
            }),
        })
        .collect();
    for late in [false, true] {
        if late && !any_late {
            for m in &mut meta {
                m.budget_pos_late = m.budget_pos;
            }
            break;
        }
        // (late last, constant first, strategy, priority highest first, rank).
        let mut order: Vec<(u8, u64, u32)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let l = late && e.dec.ignore_on_max_context;
                (
                    (u8::from(l) << 3) | (u8::from(!e.constant) << 2) | e.kind_rank.min(3),
                    !total_key(e.priority),
                    i as u32,
                )
            })
            .collect();
        order.sort_unstable();
        for (pos, &(_, _, i)) in order.iter().enumerate() {
            if late {
                meta[i as usize].budget_pos_late = pos as u32;
            } else {
                meta[i as usize].budget_pos = pos as u32;
            }
        }
    }
    meta
}
