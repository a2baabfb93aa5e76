//! Entries' stable identities (the keys of states and the seeds of rolls), hashed when a scan
//! first needs one.

use super::entry::CEntry;
use super::{BookInfo, CompiledBooks, EntryRef};
use crate::hash::{FxHasher, FxMap};
use crate::text::Fnv;
use ccv3::Entry;

/// The hash behind an entry's stable identity ([`CompiledBooks::id`]): FNV-1a over its book's
/// name (`book`, the hash state after it) and every field of the entry as it was (keys,
/// secondary keys, content, comment, name, the flags and numbers, `id`, `position`, every
/// `extensions` knob and every field the spec does not name), so that editing anything in an
/// entry ends its timed effects, as SillyTavern's World Info documentation says ("Timed Effects
/// Rules": making any changes to the entry removes its effect; SillyTavern hashes the whole
/// entry).
pub(super) fn identity_hash(entry: &Entry, book: u64) -> u64 {
    let mut h = Fnv(book).str("keys");
    for k in &entry.keys {
        h = h.str(k);
    }
    h = h.str("secondary_keys");
    for k in entry.secondary_keys.as_deref().unwrap_or(&[]) {
        h = h.str(k);
    }
    h = h
        .str("content")
        .str(&entry.content)
        .str(entry.comment.as_deref().unwrap_or("\u{0}none"))
        .str(entry.name.as_deref().unwrap_or("\u{0}none"))
        .str(&entry.insertion_order.to_string())
        .str(
            &entry
                .priority
                .as_ref()
                .map_or("\u{0}none".into(), |p| p.to_string()),
        )
        .str(entry.position.as_deref().unwrap_or("\u{0}none"))
        .bytes(&[
            entry.enabled as u8,
            entry.use_regex as u8,
            flag(entry.case_sensitive),
            flag(entry.constant),
            flag(entry.selective),
        ]);
    if let Some(id) = &entry.id {
        h = h.str("id").str(&id.to_string());
    }
    h = h.str("extensions");
    entry.extensions.visit(
        |_| true,
        |k, v| {
            h = h.str(k).str(&v.to_string());
        },
    );
    h = h.str("extra");
    for (k, v) in &entry.extra {
        h = h.str(k).str(&v.to_string());
    }
    h.0
}

/// An optional flag as one byte (absent, false, true).
fn flag(b: Option<bool>) -> u8 {
    match b {
        None => 2,
        Some(b) => b as u8,
    }
}

/// A fast hash of what [`identity_hash`] hashes (equal inputs, equal hashes), to find the rare
/// entries whose identities need a duplicate count: each text's length and its first and last
/// 16 bytes (texts that differ elsewhere only cost an exact hash).
fn quick_hash(entry: &Entry) -> u64 {
    use std::hash::Hasher;
    let mut h = FxHasher::default();
    let mut put = |s: &str| {
        let b = s.as_bytes();
        if b.len() <= 32 {
            h.write(b);
        } else {
            h.write(&b[..16]);
            h.write(&b[b.len() - 16..]);
        }
        h.write_u64(b.len() as u64);
    };
    for k in &entry.keys {
        put(k);
    }
    for k in entry.secondary_keys.as_deref().unwrap_or(&[]) {
        put(k);
    }
    put(&entry.content);
    put(entry.comment.as_deref().unwrap_or(""));
    put(entry.name.as_deref().unwrap_or(""));
    h.finish()
}

/// [`EntryRef`] as one number, the key of [`CompiledBooks::dups`].
fn packed(at: EntryRef) -> u64 {
    ((at.book as u64) << 32) | at.index as u64
}

/// The duplicate count of every entry that repeats earlier entries of its book (how many), by
/// [`packed`] place; entries that repeat none are not in the map.
fn count_duplicates(entries: &[CEntry<'_>], books: &[BookInfo]) -> FxMap<u64, u64> {
    // (book, quick hash, index, rank): equal quick hashes of a book end up side by side, in
    // book order; only such runs need exact hashes.
    let mut order: Vec<(u32, u64, u32, u32)> = entries
        .iter()
        .enumerate()
        .map(|(rank, e)| {
            (
                e.at.book as u32,
                quick_hash(e.entry),
                e.at.index as u32,
                rank as u32,
            )
        })
        .collect();
    order.sort_unstable();
    let mut dups = FxMap::default();
    let mut exact: FxMap<u64, u64> = FxMap::default();
    for run in order.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        if run.len() < 2 {
            continue;
        }
        exact.clear();
        for &(_, _, _, rank) in run {
            let e = &entries[rank as usize];
            let n = exact
                .entry(identity_hash(e.entry, books[e.at.book].id_seed))
                .or_insert(0);
            if *n > 0 {
                dups.insert(packed(e.at), *n);
            }
            *n += 1;
        }
    }
    dups
}

impl<'a> CompiledBooks<'a> {
    /// The stable identity of an entry (its key in states and the seed of its rolls):
    /// [`identity_hash`] and the entry's duplicate count in its book, mixed.
    pub(crate) fn id(&self, e: &CEntry<'_>) -> u64 {
        // Hashed here, not at compile time: hashing every entry's texts would cost more than
        // the rest of the compile, and most scans need no identity.
        let dups = self
            .dups
            .get_or_init(|| count_duplicates(&self.entries, &self.books));
        let dup = dups.get(&packed(e.at)).copied().unwrap_or(0);
        crate::text::mix(identity_hash(e.entry, self.books[e.at.book].id_seed) ^ dup)
    }

    /// The rank of the entry a state record's label (`book#index`) names, when there is one.
    pub(crate) fn rank_at_label(&self, label: &str) -> Option<u32> {
        let (name, index) = label.rsplit_once('#')?;
        let index: usize = index.parse().ok()?;
        let book = self.books.iter().position(|b| b.name == name)?;
        let at = EntryRef { book, index };
        self.entries
            .iter()
            .position(|e| e.at == at)
            .map(|rank| rank as u32)
    }

    /// From identity to rank (made on first use).
    pub(crate) fn by_id(&self) -> &FxMap<u64, u32> {
        self.by_id.get_or_init(|| {
            let mut m = FxMap::with_capacity_and_hasher(self.entries.len(), Default::default());
            for (rank, e) in self.entries.iter().enumerate() {
                m.insert(self.id(e), rank as u32);
            }
            m
        })
    }
}
