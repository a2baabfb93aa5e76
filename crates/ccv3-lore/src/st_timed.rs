//! SillyTavern's timed-effect state (`chat_metadata.timedWorldInfo`) as the [`ScanState`] of a
//! `Compat::SillyTavern` scan, so a scan starts from exactly the sticky and cooldown records
//! SillyTavern's own scan reads (issue 28).
//!
//! SillyTavern 1.19.0's `WorldInfoTimedEffects` (`public/scripts/world-info.js`, lines
//! 479-790) keeps `{sticky: {KEY: record}, cooldown: {KEY: record}}` where `KEY` is
//! `${entry.world}.${entry.uid}` (line 594) and a record is `{hash, start, end, protected}`
//! (lines 605-610): `start` the chat length when it began, `end = start + N`, `protected` for
//! a cooldown that followed a sticky period. Its checks compare the chat length with
//! `Number(start)` and `Number(end)` (lines 626-652), as compat mode's own records do.

use crate::compile::CompiledBooks;
use crate::state::{key as state_key, ScanState, TimedRecord};
use serde_json::Value;
use std::collections::HashMap;

impl CompiledBooks<'_> {
    /// The [`ScanState`] of SillyTavern's `timedWorldInfo` (the object itself, or a chat
    /// metadata object holding it under `timedWorldInfo`), for a `Compat::SillyTavern` scan.
    ///
    /// A record's key `world.uid` names the entry whose book has the name `world` (its display
    /// name or its own `name`, as a World Info file read with `name: world` has) and whose
    /// `id` (World Info `uid`) is `uid`; records of entries not in these books, and records
    /// that are not objects (SillyTavern deletes those, line 572), are left out: they change
    /// nothing in a scan. `start` and `end` are the numbers SillyTavern writes; one that is not
    /// a number fails SillyTavern's comparisons (`NaN`): such a `start` never drops the record
    /// and such an `end` never ends it. SillyTavern finds a record's entry by `hash` (a hash of its entry object), so
    /// after an entry is edited it no longer applies that entry's record; ccv3 cannot compute
    /// that hash and applies it: pass records of edited entries only if that is wanted.
    pub fn st_timed_state(&self, timed: &Value) -> ScanState {
        let timed = timed.get("timedWorldInfo").unwrap_or(timed);
        let mut state = ScanState::default();
        let by_key = self.st_keys();
        if let Some(r) = timed.get("sticky").and_then(Value::as_object) {
            read_records(self, &by_key, r, &mut state.sticky);
        }
        if let Some(r) = timed.get("cooldown").and_then(Value::as_object) {
            read_records(self, &by_key, r, &mut state.cooldown);
        }
        state
    }

    /// The names SillyTavern's `world` may give book `b`: its display name, and its own `name`
    /// when that differs.
    pub(crate) fn st_worlds(&self, b: usize) -> impl Iterator<Item = &str> {
        let info = &self.books[b];
        std::iter::once(info.name.as_str()).chain(info.own_name.as_deref())
    }

    /// Each entry's SillyTavern key `world.uid` (book name, World Info `uid`), to its rank;
    /// the first entry of a key wins.
    fn st_keys(&self) -> HashMap<String, usize> {
        let mut by_key = HashMap::with_capacity(self.entries.len());
        for (rank, e) in self.entries.iter().enumerate() {
            let uid = match &e.entry.id {
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::String(s)) => s.clone(),
                _ => continue,
            };
            for world in self.st_worlds(e.at.book) {
                by_key.entry(format!("{world}.{uid}")).or_insert(rank);
            }
        }
        by_key
    }
}

/// Reads one kind's records into ccv3 records keyed by the entries' identities.
fn read_records(
    cb: &CompiledBooks<'_>,
    by_key: &HashMap<String, usize>,
    records: &serde_json::Map<String, Value>,
    out: &mut std::collections::BTreeMap<String, TimedRecord>,
) {
    for (key, rec) in records {
        let (Some(&rank), Some(rec)) = (by_key.get(key), rec.as_object()) else {
            continue;
        };
        let e = &cb.entries[rank];
        // `length <= start` and `length >= end` with whole lengths; a value that is not a
        // number (`NaN` to SillyTavern) fails both comparisons.
        let num = |k: &str| rec.get(k).and_then(Value::as_f64).filter(|f| !f.is_nan());
        let record = TimedRecord {
            start: num("start").map_or(0, |f| f.floor().max(0.0) as u64),
            end: num("end").map_or(u64::MAX, |f| f.ceil().max(0.0) as u64),
            protected: match rec.get("protected") {
                Some(Value::Bool(b)) => *b,
                Some(Value::Null) | None => false,
                Some(Value::Number(n)) => n.as_f64() != Some(0.0),
                Some(Value::String(t)) => !t.is_empty(),
                Some(_) => true,
            },
            entry: format!("{}#{}", cb.books[e.at.book].name, e.at.index),
        };
        out.entry(state_key(cb.id(e))).or_insert(record);
    }
}

/// The set of [`crate::ScanOptions::st_activated`] from JSON: a list of `world.uid` keys (as
/// SillyTavern keys `allActivatedEntries`), or an object of lists of uids by world
/// (`{"world": [0, 3]}`).
///
/// # Errors
/// A message naming the first value of the wrong type.
///
/// ```
/// use serde_json::json;
/// let set = ccv3_lore::st_activated_set(&json!(["World.0", "World.3"]))?;
/// assert!(set.contains("World.3"));
/// let by_world = ccv3_lore::st_activated_set(&json!({"World": [0, 3]}))?;
/// assert_eq!(set, by_world);
/// assert!(ccv3_lore::st_activated_set(&json!([true])).is_err());
/// # Ok::<(), String>(())
/// ```
pub fn st_activated_set(v: &Value) -> Result<std::collections::HashSet<String>, String> {
    let uid = |u: &Value, at: &str| match u {
        Value::Number(n) => Ok(n.to_string()),
        Value::String(s) => Ok(s.clone()),
        _ => Err(format!("{at}: a uid must be a number or text")),
    };
    let mut set = std::collections::HashSet::new();
    match v {
        Value::Array(keys) => {
            for (i, k) in keys.iter().enumerate() {
                set.insert(uid(k, &format!("[{i}]"))?);
            }
        }
        Value::Object(worlds) => {
            for (world, uids) in worlds {
                let Value::Array(uids) = uids else {
                    return Err(format!("{world:?}: must be a list of uids"));
                };
                for (i, u) in uids.iter().enumerate() {
                    set.insert(format!("{world}.{}", uid(u, &format!("{world:?}[{i}]"))?));
                }
            }
        }
        _ => return Err("must be a list of world.uid keys or an object of uids by world".into()),
    }
    Ok(set)
}
