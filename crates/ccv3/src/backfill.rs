//! V3 to V2 backfill (SPEC_V3 "PNG/APNG" and "Decorators": *On backfilling V2, the application
//! SHOULD remove all decorators*).
//!
//! What a backfilled V2 card holds:
//! - `spec: "chara_card_v2"`, `spec_version: "2.0"` and every V2 field of the card, unknown ones
//!   included, in their original order.
//! - `creator_notes` starts with the spec's warning line ([`V2_BACKFILL_WARNING`]) followed by a
//!   blank line and the original notes, unless the export is for V2 only.
//! - Lorebook entries lose their decorator lines (and the newlines around them).
//! - Where a V2 reader will not lose it, the V3-only data is kept: the card's V3 fields
//!   (`nickname`, `assets`, `creator_notes_multilingual`, `source`, `group_only_greetings`,
//!   `creation_date`, `modification_date`) go into `data.extensions.ccv3`, and each entry's
//!   `use_regex` and its decorator lines go into that entry's `extensions.ccv3`
//!   (`{"use_regex": bool, "decorators": "@@...\n\n"}`: the lines before the body as written).
//!   `extensions` is the one place the V2 spec obliges every reader to keep.
//! - The V3 key order, where the way back up would not find it: `data`'s keys as the V3 card
//!   writes them ([`KEY_ORDER`] in the card's stash), and the key each entry's `use_regex`
//!   comes before ([`USE_REGEX_BEFORE`] in the entry's stash), so that V3 -> V2 -> V3 gives
//!   back the same JSON text.
//!
//! The way back up is [`restore_v3`], which the reader runs on every V2 card: V3 -> V2 -> V3
//! gives back the V3 card, through any container, `ccv3 convert` and the bindings. The V2
//! fields always come from the V2 card; the stash only fills in what V2 cannot hold (see
//! [`restore_v3`] for what happens when the two disagree).

use crate::decorator;
use crate::diag::{Diagnostic, Severity};
use crate::model::fields::{self, index, join, Repairs};
use crate::model::{Asset, Card, Entry, Object, Raw, V2_BACKFILL_WARNING};
use serde_json::Value;

/// Options for [`to_v2`].
#[derive(Debug, Clone)]
pub struct BackfillOptions {
    /// Add the spec's warning line to `creator_notes` (false when exporting for V2 only).
    pub warning: bool,
    /// Keep V3-only data under `extensions.ccv3` (card and entries).
    pub stash_v3: bool,
}

impl Default for BackfillOptions {
    fn default() -> Self {
        BackfillOptions {
            warning: true,
            stash_v3: true,
        }
    }
}

pub use crate::model::STASH_KEY;

impl Card {
    /// The card as a V2 JSON object, backfilled as the spec says (see [`crate::backfill`]).
    pub fn to_v2_json(&self, options: &BackfillOptions) -> Value {
        to_v2(self, options)
    }
}

/// Builds the V2 JSON object of a card.
///
/// ```
/// let mut card = ccv3::Card::new("Aqua");
/// card.data.nickname = Some("Aq".into());
/// let v2 = ccv3::backfill::to_v2(&card, &Default::default());
/// assert_eq!(v2["spec"], "chara_card_v2");
/// assert!(v2["data"]["creator_notes"].as_str().unwrap().starts_with("This character card is Character Card V3"));
/// assert_eq!(v2["data"]["extensions"]["ccv3"]["nickname"], "Aq");
/// ```
pub fn to_v2(card: &Card, options: &BackfillOptions) -> Value {
    let d = &card.data;
    let notes = if options.warning {
        if d.creator_notes.is_empty() {
            V2_BACKFILL_WARNING.to_string()
        } else {
            format!("{V2_BACKFILL_WARNING}\n\n{}", d.creator_notes)
        }
    } else {
        d.creator_notes.clone()
    };
    let mut extensions = d.extensions.clone();
    if options.stash_v3 {
        let mut stash = Object::new();
        if let Some(n) = &d.nickname {
            stash.insert("nickname".into(), Value::String(n.clone()));
        }
        if let Some(a) = &d.assets {
            stash.insert(
                "assets".into(),
                Value::Array(a.iter().map(|x| x.to_json()).collect()),
            );
        }
        if let Some(m) = &d.creator_notes_multilingual {
            stash.insert(
                "creator_notes_multilingual".into(),
                Value::Object(m.clone()),
            );
        }
        if let Some(s) = &d.source {
            stash.insert(
                "source".into(),
                s.iter().map(|x| Value::String(x.clone())).collect(),
            );
        }
        if !d.group_only_greetings.is_empty() {
            stash.insert(
                "group_only_greetings".into(),
                d.group_only_greetings
                    .iter()
                    .map(|x| Value::String(x.clone()))
                    .collect(),
            );
        }
        if let Some(n) = &d.creation_date {
            stash.insert("creation_date".into(), Value::Number(n.clone()));
        }
        if let Some(n) = &d.modification_date {
            stash.insert("modification_date".into(), Value::Number(n.clone()));
        }
        // The V3 order of `data`'s keys, when the way back up would not find it by itself
        // (it puts the V3-only fields after the V2 ones, in `APPENDED_ORDER`).
        let v3_keys = card.v3_data_keys();
        let is_v3_only = |k: &String| APPENDED_ORDER.contains(&k.as_str());
        let mut tail: Vec<&String> = v3_keys.iter().filter(|k| is_v3_only(k)).collect();
        tail.sort_by_key(|k| APPENDED_ORDER.iter().position(|f| f == k));
        let found = v3_keys.iter().filter(|k| !is_v3_only(k)).chain(tail);
        if !found.eq(v3_keys.iter()) {
            stash.insert(
                KEY_ORDER.into(),
                v3_keys.into_iter().map(Value::String).collect(),
            );
        }
        if !stash.is_empty() {
            extensions.insert(STASH_KEY.into(), Value::Object(stash));
        }
    }
    let book = d.character_book.as_ref().map(|b| {
        Value::Object(b.to_object_with(|e| Value::Object(entry_to_v2(e, options.stash_v3))))
    });
    let data = card.v2_data(book, &notes, extensions);
    card.wrap("chara_card_v2", "2.0", data)
}

/// An entry in V2 shape: decorators removed from `content`, V3-only data stashed when asked.
///
/// ```
/// let mut entry = ccv3::Entry::new(&["dragon"], "@@depth 4\nDragons breathe fire.");
/// entry.use_regex = true;
/// let v2 = ccv3::backfill::entry_to_v2(&entry, false);
/// assert_eq!(v2["content"], "Dragons breathe fire."); // decorators are V3 only
/// assert_eq!(v2["keys"][0], "dragon");
/// ```
pub fn entry_to_v2(e: &Entry, stash: bool) -> Object {
    let parsed = decorator::split(&e.content);
    let mut v2 = e.clone();
    v2.content = parsed.body.to_string();
    // Where `use_regex` goes back, when it is not the entry's last key.
    let before = if stash { e.key_after_use_regex() } else { None };
    if stash && (e.use_regex || !parsed.header.is_empty() || before.is_some()) {
        let mut s = Object::new();
        s.insert("use_regex".into(), Value::Bool(e.use_regex));
        if let Some(k) = before {
            s.insert(USE_REGEX_BEFORE.into(), Value::String(k));
        }
        if !parsed.header.is_empty() {
            // Everything before the body, as written: the lines, their blank lines and line ends.
            let prefix = &e.content[..e.content.len() - parsed.body.len()];
            s.insert("decorators".into(), Value::String(prefix.to_string()));
        }
        v2.extensions.insert(STASH_KEY.into(), Value::Object(s));
    }
    v2.to_object(false)
}

/// The key of the stash that holds the V3 order of `data`'s keys (written only when the
/// default order of [`restore_v3`] would differ).
pub const KEY_ORDER: &str = "key_order";

/// The key of an entry's stash that names the key `use_regex` comes before in the V3 entry
/// (written only when `use_regex` is not its last key).
pub const USE_REGEX_BEFORE: &str = "use_regex_before";

/// The V3-only fields in the order the writer puts them after the others when the read order
/// does not name them (the order of the card's V3 fields in `model/card.rs`).
const APPENDED_ORDER: [&str; 7] = [
    "assets",
    "nickname",
    "creator_notes_multilingual",
    "source",
    "group_only_greetings",
    "creation_date",
    "modification_date",
];

/// The card fields [`to_v2`] keeps under `data.extensions.ccv3`, in the order it writes them.
pub const STASHED_CARD_FIELDS: [&str; 7] = [
    "nickname",
    "assets",
    "creator_notes_multilingual",
    "source",
    "group_only_greetings",
    "creation_date",
    "modification_date",
];

/// Undoes [`to_v2`] on a card read from V2: the way back up of V3 -> V2 -> V3.
///
/// The reader calls it for every V2 card (any container), so converting a backfilled V2 card to
/// V3 gives back the V3 card. What it restores, and only when the V2 card has no value of its
/// own there (a V2 application that edited the card is never overridden by a stale stash):
/// - `data.extensions.ccv3`: each of [`STASHED_CARD_FIELDS`] that the V2 `data` does not hold
///   itself. A field the V2 `data` does hold (a V2 application wrote `nickname`, say) keeps the
///   V2 value and the stashed one is dropped, with an info `v2-stash-overridden`. Keys of the
///   stash that are not V3 fields, or whose value has the wrong type, stay in the stash.
/// - each entry's `extensions.ccv3`: `use_regex` (unless the V2 entry has its own) and the
///   decorator lines, put back in front of `content` (unless the V2 content starts with
///   decorator lines of its own). The V2 content is the body: when a V2 application edited it,
///   the restored entry has the edited body under the original decorators.
/// - the V3 key order ([`KEY_ORDER`], [`USE_REGEX_BEFORE`]); without it (stashes written
///   before it existed, or none needed) the V3-only fields follow the V2 ones.
/// - the spec's warning line at the start of `creator_notes` (SPEC_V3 "PNG/APNG": the backfill
///   SHOULD be trimmed on import) is removed, with an info `backfill-warning-trimmed`.
///
/// The fields V2 holds (name, description, greetings, the book's entries, ...) always come from
/// the V2 card, even when the stash came from an older version of it: so `creator_notes_multilingual`
/// and `modification_date` come back as they were when the V3 card was backfilled, and say
/// nothing of edits made in a V2 application since. Restored stashes are removed from
/// `extensions`, and an info `v2-stash-restored` names what came back.
///
/// ```
/// let mut card = ccv3::Card::new("Aqua");
/// card.data.nickname = Some("Aq".into());
/// let v2 = ccv3::backfill::to_v2(&card, &Default::default());
/// let mut diags = Vec::new();
/// let back = ccv3::Card::from_json(v2, &mut diags)?; // the reader restores the stash
/// assert_eq!(back.data.nickname.as_deref(), Some("Aq"));
/// assert!(back.data.extensions.is_empty());
/// assert_eq!(back.data.creator_notes, "");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn restore_v3(card: &mut Card, diags: &mut Vec<Diagnostic>) {
    trim_warning(card, diags);
    let d = &mut card.data;
    let mut restored: Vec<&str> = Vec::new();
    if let Some(Value::Object(mut stash)) = d.extensions.shift_remove(STASH_KEY) {
        let base = format!("data.extensions.{STASH_KEY}");
        let mut quiet = Vec::new();
        let mut r = Repairs {
            diags: &mut quiet,
            must: Severity::Warning,
        };
        for key in STASHED_CARD_FIELDS {
            let Some(v) = stash.get(key).cloned() else {
                continue;
            };
            let p = join(&base, key);
            let before = r.diags.len();
            let held = match key {
                "nickname" => d.nickname.is_some(),
                "assets" => d.assets.is_some(),
                "creator_notes_multilingual" => d.creator_notes_multilingual.is_some(),
                "source" => d.source.is_some(),
                "group_only_greetings" => !d.group_only_greetings.is_empty(),
                "creation_date" => d.creation_date.is_some(),
                _ => d.modification_date.is_some(),
            };
            if held {
                stash.shift_remove(key);
                diags.push(Diagnostic::info(
                    "v2-stash-overridden",
                    p,
                    format!("the V2 card has its own {key}; kept it and dropped the stashed one"),
                ));
                continue;
            }
            let ok = match (key, v) {
                ("nickname", Value::String(s)) => {
                    d.nickname = Some(s);
                    true
                }
                ("assets", Value::Array(items)) => {
                    let assets: Vec<Asset> = items
                        .into_iter()
                        .enumerate()
                        .filter_map(|(i, a)| Asset::read(Raw::from_value(a), &index(&p, i), &mut r))
                        .collect();
                    d.assets = Some(assets);
                    r.diags.len() == before
                }
                ("creator_notes_multilingual", Value::Object(m)) => {
                    d.creator_notes_multilingual = Some(m);
                    true
                }
                ("source", v @ Value::Array(_)) => {
                    d.source = Some(fields::string_list(v, &p, false, &mut r));
                    r.diags.len() == before
                }
                ("group_only_greetings", v @ Value::Array(_)) => {
                    d.group_only_greetings = fields::string_list(v, &p, false, &mut r);
                    r.diags.len() == before
                }
                ("creation_date", Value::Number(n)) => {
                    d.creation_date = Some(n);
                    true
                }
                ("modification_date", Value::Number(n)) => {
                    d.modification_date = Some(n);
                    true
                }
                _ => false,
            };
            if ok {
                stash.shift_remove(key);
                restored.push(key);
            } else {
                // Not what `to_v2` writes: left in the stash, the V3 field as it was.
                r.diags.truncate(before);
                match key {
                    "assets" => d.assets = None,
                    "source" => d.source = None,
                    "group_only_greetings" => d.group_only_greetings.clear(),
                    _ => {}
                }
                diags.push(Diagnostic::warning(
                    "v2-stash-unreadable",
                    p,
                    format!("the stashed {key} does not have the V3 type; left it in the stash"),
                ));
            }
        }
        // The V3 key order (stashes written before it existed have none: then the V3-only
        // fields follow the V2 ones).
        if let Some(Value::Array(keys)) = stash.get(KEY_ORDER) {
            if keys.iter().all(Value::is_string) {
                d.reorder_keys(keys.iter().filter_map(Value::as_str));
                stash.shift_remove(KEY_ORDER);
            }
        }
        if !stash.is_empty() {
            d.extensions.insert(STASH_KEY.into(), Value::Object(stash));
        }
    }
    let mut entries = 0usize;
    if let Some(book) = d.character_book.as_mut() {
        let quoted = format!("\"{STASH_KEY}\"");
        let finder = memchr::memmem::Finder::new(quoted.as_bytes());
        for e in book.entries.iter_mut() {
            if restore_entry(e, &finder) {
                entries += 1;
            }
        }
    }
    if entries > 0 {
        restored.push("entries");
    }
    if !restored.is_empty() {
        let what = restored
            .iter()
            .map(|k| match *k {
                "entries" => format!("use_regex and decorators of {entries} entries"),
                k => k.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ");
        diags.push(Diagnostic::info(
            "v2-stash-restored",
            format!("data.extensions.{STASH_KEY}"),
            format!("restored the V3 fields the V2 card kept in extensions.{STASH_KEY}: {what}"),
        ));
    }
}

/// Restores one entry's stash; true when something came back. `quoted` finds `"ccv3"`.
fn restore_entry(e: &mut Entry, quoted: &memchr::memmem::Finder<'_>) -> bool {
    // Most entries have no stash: look for the key in the text before parsing anything.
    if !e.extensions.mentions(STASH_KEY, quoted)
        || !matches!(e.extensions.get(STASH_KEY), Some(Value::Object(_)))
    {
        return false;
    }
    let ext: &mut Object = &mut e.extensions;
    let Some(Value::Object(stash)) = ext.get_mut(STASH_KEY) else {
        return false;
    };
    let use_regex = match stash.get("use_regex") {
        Some(Value::Bool(b)) => {
            let b = *b;
            stash.shift_remove("use_regex");
            Some(b)
        }
        _ => None,
    };
    let before = match stash.get(USE_REGEX_BEFORE) {
        Some(Value::String(_)) => match stash.shift_remove(USE_REGEX_BEFORE) {
            Some(Value::String(k)) => Some(k),
            _ => None,
        },
        _ => None,
    };
    let header = match stash.get("decorators") {
        Some(Value::String(_)) => match stash.shift_remove("decorators") {
            Some(Value::String(h)) => Some(h),
            _ => None,
        },
        _ => None,
    };
    if stash.is_empty() {
        ext.shift_remove(STASH_KEY);
    }
    let done = use_regex.is_some() || header.is_some();
    if let Some(b) = use_regex {
        if !e.order.has("use_regex") {
            e.use_regex = b;
            if let Some(k) = &before {
                e.put_use_regex_before(k);
            }
        }
    }
    if let Some(mut header) = header {
        if decorator::split(&e.content).header.is_empty() {
            if !header.ends_with('\n') && !e.content.is_empty() {
                header.push('\n');
            }
            header.push_str(&e.content);
            e.content = header;
        }
    }
    done
}

/// Removes the spec's backfill warning line from `creator_notes` (SPEC_V3 "PNG/APNG": the
/// backfilled card SHOULD be trimmed on import).
fn trim_warning(card: &mut Card, diags: &mut Vec<Diagnostic>) {
    let notes = &card.data.creator_notes;
    if let Some(rest) = notes.strip_prefix(V2_BACKFILL_WARNING) {
        card.data.creator_notes = rest.trim_start_matches(['\n', '\r']).to_string();
        diags.push(Diagnostic::info(
            "backfill-warning-trimmed",
            "data.creator_notes",
            "removed the V3 backfill warning line from the creator notes",
        ));
    }
}
