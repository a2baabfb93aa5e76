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
//!   (`{"use_regex": bool, "decorators": "@@..."}`). `extensions` is the one place the V2 spec
//!   obliges every reader to keep.

use crate::decorator;
use crate::model::{Card, Entry, Object, V2_BACKFILL_WARNING};
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

/// The key under `extensions` where V3-only data is kept in a V2 backfill.
pub const STASH_KEY: &str = "ccv3";

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
pub fn entry_to_v2(e: &Entry, stash: bool) -> Object {
    let parsed = decorator::split(&e.content);
    let mut v2 = e.clone();
    v2.content = parsed.body.to_string();
    if stash && (e.use_regex || !parsed.header.is_empty()) {
        let mut s = Object::new();
        s.insert("use_regex".into(), Value::Bool(e.use_regex));
        if !parsed.header.is_empty() {
            s.insert(
                "decorators".into(),
                Value::String(parsed.header.to_string()),
            );
        }
        v2.extensions.insert(STASH_KEY.into(), Value::Object(s));
    }
    v2.to_object(false)
}
