//! Reading a card: [`Card::from_json`], [`Card::from_json_text`] and the raw-tree reader the
//! files' readers use, which tell a wrapped V2/V3 card from a flat V1 card or a bare `data`
//! object, repair what they can and bring back what a V2 backfill stashed
//! ([`crate::backfill::restore_v3`]). Apart from `card.rs` (the card's types and writing) so
//! that the backfill, which writes cards, sits between the two.

use super::card::{Card, CardData, SpecVersion, DATA_FIELDS};
use super::fields::{self, At, KeyOrder, Object, Repairs};
use super::raw::Raw;
use crate::diag::{Diagnostic, Severity};
use crate::error::{Error, Result};
use serde_json::Value;
use std::borrow::Cow;

/// The V2/V3 `data` fields every card has, in spec order, with V1's alternative names.
const V1_FIELDS: [&str; 6] = [
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
];

/// Old Pygmalion / TavernAI field names and the V1 field each stands for.
const V1_ALIASES: [(&str, &str); 5] = [
    ("char_name", "name"),
    ("char_persona", "personality"),
    ("world_scenario", "scenario"),
    ("char_greeting", "first_mes"),
    ("example_dialogue", "mes_example"),
];

impl Card {
    /// Reads a card from a parsed JSON value: V3, V2 or V1 (flat), repairing what it can.
    ///
    /// Every repair is recorded in `diags`. Fails only when the value is not a card at all.
    ///
    /// ```
    /// let v = serde_json::json!({"name": "Aqua", "description": "a goddess", "first_mes": "Hi!"});
    /// let mut diags = Vec::new();
    /// let card = ccv3::Card::from_json(v, &mut diags)?;
    /// assert_eq!(card.data.name, "Aqua");
    /// assert_eq!(card.origin, Some(ccv3::SpecVersion::V1));
    /// # Ok::<(), ccv3::Error>(())
    /// ```
    pub fn from_json(v: Value, diags: &mut Vec<Diagnostic>) -> Result<Card> {
        Self::from_raw(Raw::from_value(v), diags)
    }

    /// Reads a card from JSON text (UTF-8, a BOM or UTF-16 accepted with a diagnostic), as the
    /// PNG and CHARX readers read the text of a `ccv3`/`chara` chunk or a `card.json`: the fast
    /// path, with no `Value` tree for the fields the model knows.
    ///
    /// ```
    /// let mut diags = Vec::new();
    /// let card = ccv3::Card::from_json_text(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#, &mut diags)?;
    /// assert_eq!(card.data.name, "A");
    /// # Ok::<(), ccv3::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Json`] for text that is not JSON, [`Error::Limit`] for text over [`crate::json::MAX_JSON_LEN`], and the
    /// errors of [`Card::from_json`].
    pub fn from_json_text(text: &[u8], diags: &mut Vec<Diagnostic>) -> Result<Card> {
        super::stream::with_raw(text, &crate::ReadOptions::default(), false, |raw, d| {
            diags.extend(d);
            Card::from_raw(raw, diags)
        })
    }

    /// Reads a card from the fast raw tree (see [`Card::from_json`]).
    pub(crate) fn from_raw(v: Raw, diags: &mut Vec<Diagnostic>) -> Result<Card> {
        let pairs = match v {
            Raw::Object(pairs) => pairs,
            other => {
                return Err(Error::format(
                    "",
                    format!(
                        "a card must be a JSON object, found {}",
                        fields::type_name(&other.into_value())
                    ),
                ))
            }
        };
        match card_kind(&pairs) {
            CardKind::Wrapped(origin, note) => {
                if let Some(d) = note {
                    diags.push(d);
                }
                let mut card = Self::read_wrapped(pairs, origin, diags)?;
                if origin == SpecVersion::V2 {
                    // A V2 card may be the backfill of a V3 card: bring back what V2 cannot hold.
                    crate::backfill::restore_v3(&mut card, diags);
                }
                Ok(card)
            }
            CardKind::V1 => Ok(Self::read_v1(pairs, diags)),
            CardKind::BareData(origin) => Ok(Self::read_bare_data(pairs, origin, diags)),
            CardKind::NotACard(e) => Err(e),
        }
    }

    fn read_wrapped(
        pairs: Vec<(Cow<'_, str>, Raw<'_>)>,
        origin: SpecVersion,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Card> {
        let must = if origin == SpecVersion::V3 {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut r = Repairs { diags, must };
        let mut card = Card {
            order: KeyOrder::with_capacity(pairs.len()),
            origin: Some(origin),
            ..Default::default()
        };
        let mut data = None;
        for (k, v) in pairs {
            match card.order.note(&k, &["spec", "spec_version", "data"]) {
                Some("spec") => {}
                Some("spec_version") => {
                    card.spec_version = match v {
                        Raw::String(s) => s,
                        Raw::Number(n) => {
                            r.push(Severity::Error, "wrong-type", &"spec_version", format!("spec_version must be a string, found the number {n}; used its text"));
                            n.to_string()
                        }
                        _ => {
                            r.push(
                                Severity::Error,
                                "wrong-type",
                                &"spec_version",
                                "spec_version must be a string; used \"3.0\"".into(),
                            );
                            String::new()
                        }
                    }
                }
                Some(_) => data = Some(v),
                None => {
                    card.extra.insert(k.into_owned(), v.into_value());
                }
            }
        }
        if card.spec_version.is_empty() {
            if !card.order.has("spec_version") {
                r.missing(&"spec_version", "used \"3.0\"");
            }
            card.spec_version = if origin == SpecVersion::V2 {
                "2.0".into()
            } else {
                "3.0".into()
            };
        }
        let Some(Raw::Object(mut data)) = data else {
            return Err(Error::format("data", "the card has no `data` object"));
        };
        fill_from_top_level(&mut data, &card.extra, &mut r);
        card.data = CardData::read(data, "data", &mut r);
        Ok(card)
    }

    /// Reads a V2 (or V3) card's `data` object written without its wrapper (issue 13): V2 data,
    /// not a V1 card, so the V2 fields are kept.
    fn read_bare_data(
        pairs: Vec<(Cow<'_, str>, Raw<'_>)>,
        origin: SpecVersion,
        diags: &mut Vec<Diagnostic>,
    ) -> Card {
        diags.push(Diagnostic::warning(
            "bare-card-data",
            "",
            format!(
                "the file is a {} card's `data` object without the `spec` and `data` around it; \
                 read it as {} data",
                origin.label(),
                origin.label()
            ),
        ));
        let must = if origin == SpecVersion::V3 {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut r = Repairs { diags, must };
        let data = CardData::read(pairs, "data", &mut r);
        Card {
            spec_version: if origin == SpecVersion::V3 {
                "3.0".into()
            } else {
                "2.0".into()
            },
            data,
            origin: Some(origin),
            ..Default::default()
        }
    }

    fn read_v1(pairs: Vec<(Cow<'_, str>, Raw<'_>)>, diags: &mut Vec<Diagnostic>) -> Card {
        let mut card = Card {
            origin: Some(SpecVersion::V1),
            ..Default::default()
        };
        let mut data: Vec<(Cow<'_, str>, Raw<'_>)> = Vec::new();
        let has = |data: &[(Cow<'_, str>, Raw<'_>)], key: &str| data.iter().any(|(k, _)| k == key);
        for (k, v) in pairs {
            let alias = V1_ALIASES.iter().find(|(a, _)| *a == k).map(|(_, t)| *t);
            if V1_FIELDS.contains(&k.as_ref()) {
                data.push((k, v));
            } else if let Some(target) = alias {
                if !has(&data, target) {
                    data.push((Cow::Borrowed(target), v.clone()));
                }
                // Kept at the top level too, like the V1 fields exporters write beside `data`.
                card.extra.insert(k.into_owned(), v.into_value());
            } else {
                card.extra.insert(k.into_owned(), v.into_value());
            }
        }
        // V1 cards carry creator notes and tags next to the fields; copy them without losing
        // the originals, which stay at the top level.
        if let Some(Value::String(c)) = card.extra.get("creatorcomment") {
            data.push((Cow::Borrowed("creator_notes"), Raw::String(c.clone())));
        }
        if let Some(t @ Value::Array(_)) = card.extra.get("tags") {
            data.push((Cow::Borrowed("tags"), Raw::from_value(t.clone())));
        }
        // V1 has none of the V2 fields: fill them quietly.
        let mut quiet = Vec::new();
        let mut rq = Repairs {
            diags: &mut quiet,
            must: Severity::Info,
        };
        let mut d = CardData::read(data, "data", &mut rq);
        diags.extend(
            quiet
                .into_iter()
                .filter(|d| d.code != "missing-required-field"),
        );
        d.order = KeyOrder::default();
        card.data = d;
        card.spec_version = "3.0".into();
        card
    }
}

/// What a top-level object is: a wrapped V2/V3 card (with a note when `spec` was odd), a flat
/// V1 card, a V2/V3 `data` object without its wrapper, or not a card at all.
enum CardKind {
    Wrapped(SpecVersion, Option<Diagnostic>),
    V1,
    BareData(SpecVersion),
    NotACard(Error),
}

/// Fields of V2 `data` that no V1 card has: with one of them, an unwrapped card is V2 data.
const V2_ONLY_FIELDS: [&str; 8] = [
    "creator_notes",
    "system_prompt",
    "post_history_instructions",
    "alternate_greetings",
    "character_book",
    "character_version",
    "creator",
    "extensions",
];

/// Fields of V3 `data` that V2 lacks.
const V3_ONLY_FIELDS: [&str; 7] = [
    "group_only_greetings",
    "assets",
    "nickname",
    "creator_notes_multilingual",
    "source",
    "creation_date",
    "modification_date",
];

/// The version of an unwrapped object that is a card's `data` (a string `name` and a field only
/// V2 or V3 data has), or `None`.
fn bare_data_origin(pairs: &[(Cow<'_, str>, Raw<'_>)]) -> Option<SpecVersion> {
    let named = pairs
        .iter()
        .any(|(k, v)| k == "name" && matches!(v, Raw::String(_)));
    if !named {
        return None;
    }
    let has_any = |keys: &[&str]| pairs.iter().any(|(k, _)| keys.contains(&k.as_ref()));
    if has_any(&V3_ONLY_FIELDS) {
        Some(SpecVersion::V3)
    } else if has_any(&V2_ONLY_FIELDS) {
        Some(SpecVersion::V2)
    } else {
        None
    }
}

/// Top-level names a hybrid card may hold a `data` field under, beside the field's own name.
const TOP_LEVEL_ALIASES: [(&str, &str); 1] = [("creatorcomment", "creator_notes")];

/// "Hybrid" cards (issue 13): a V2/V3 card whose fields stand at the top level while `data`
/// holds only `extensions` or a few fields. Each field `data` lacks is taken from the top level
/// (its own name, or SillyTavern's `creatorcomment` for `creator_notes`), as SillyTavern reads
/// such cards, with a `hybrid-card-field` warning; the top-level fields stay where they are.
fn fill_from_top_level(data: &mut Vec<(Cow<'_, str>, Raw<'_>)>, top: &Object, r: &mut Repairs) {
    if top.is_empty() {
        return;
    }
    for field in DATA_FIELDS {
        if data.iter().any(|(k, _)| k == field) {
            continue;
        }
        let found = top.get(field).map(|v| (field, v)).or_else(|| {
            TOP_LEVEL_ALIASES
                .iter()
                .filter(|(_, to)| *to == field)
                .find_map(|(from, _)| top.get(*from).map(|v| (*from, v)))
        });
        let Some((from, v)) = found else { continue };
        if v.is_null() {
            continue;
        }
        r.push(
            Severity::Warning,
            "hybrid-card-field",
            &At(&"data", field),
            format!("`data` has no {field}; took the top-level {from} (as SillyTavern does)"),
        );
        data.push((Cow::Borrowed(field), Raw::from_value(v.clone())));
    }
}

fn card_kind(pairs: &[(Cow<'_, str>, Raw<'_>)]) -> CardKind {
    let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let has_data = matches!(get("data"), Some(Raw::Object(_)));
    let spec = match get("spec") {
        Some(Raw::String(s)) => Some(s.as_str()),
        _ => None,
    };
    match spec {
        Some("chara_card_v3") => CardKind::Wrapped(SpecVersion::V3, None),
        Some("chara_card_v2") => CardKind::Wrapped(SpecVersion::V2, None),
        // `lorebook_v3`, ccardlib's `chara_book_v3`: a lorebook, not a card.
        Some(other) if other.contains("book") => CardKind::NotACard(Error::format(
            "spec",
            format!("{other:?} is a lorebook, not a character card"),
        )),
        Some(other) if has_data => CardKind::Wrapped(
            SpecVersion::V3,
            Some(Diagnostic::warning(
                "unknown-spec",
                "spec",
                format!("unknown spec {other:?}; read the card as V3"),
            )),
        ),
        None if has_data => CardKind::Wrapped(
            SpecVersion::V2,
            Some(Diagnostic::warning(
                "missing-spec",
                "spec",
                "card has `data` but no `spec`; read it as V2",
            )),
        ),
        // Agnai's own character export: read by `crate::agnai`, not as a V1 card.
        None if raw_is_agnai_character(pairs) => CardKind::NotACard(Error::format(
            "kind",
            "an Agnai character export (read it with ccv3::read_bytes)",
        )),
        // A World Info file with `name` and `description` (SillyTavern, Chub) is a lorebook.
        None if raw_holds_book_entries(pairs) => CardKind::NotACard(Error::format(
            "entries",
            "a lorebook (its `entries` hold lorebook entries), not a character card",
        )),
        None if bare_data_origin(pairs).is_some() => {
            CardKind::BareData(bare_data_origin(pairs).unwrap_or(SpecVersion::V2))
        }
        _ if looks_like_v1(pairs) && !raw_holds_book_entries(pairs) => CardKind::V1,
        Some(other) => CardKind::NotACard(Error::format(
            "spec",
            format!("unknown spec {other:?} and no `data` object"),
        )),
        None => CardKind::NotACard(Error::format(
            "",
            "not a character card: no `spec`, no `data` and no `name`",
        )),
    }
}

/// True when a parsed JSON object holds a character card (any version).
pub(crate) fn raw_is_card(v: &Raw) -> bool {
    match v {
        // A RisuAI module has a `name` and a `description` too (crate::lorebook::risu_module).
        Raw::Object(pairs)
            if pairs
                .iter()
                .any(|(k, v)| k == "type" && matches!(v, Raw::String(s) if s == "risuModule")) =>
        {
            false
        }
        Raw::Object(pairs) => !matches!(card_kind(pairs), CardKind::NotACard(_)),
        _ => false,
    }
}

/// Keys found in lorebook entries of every format (V3 `keys`/`content`, World Info `key`/`uid`,
/// NovelAI `text`, Agnai `entry`/`keywords`).
pub(crate) const ENTRY_MARKERS: [&str; 7] =
    ["keys", "key", "content", "uid", "text", "entry", "keywords"];

/// Fields only a character card has (V1 names and their Pygmalion aliases): with one of them, an
/// empty `entries` does not make a file a lorebook.
pub(crate) const CARD_ONLY_FIELDS: [&str; 8] = [
    "first_mes",
    "char_greeting",
    "personality",
    "char_persona",
    "scenario",
    "world_scenario",
    "mes_example",
    "example_dialogue",
];

/// True when an unwrapped object is a lorebook whatever else it carries (issue 13): its
/// `entries` is an array or object whose first item is entry-shaped, or an object with no
/// card-only field beside it (an empty World Info file with a name).
fn raw_holds_book_entries(pairs: &[(Cow<'_, str>, Raw<'_>)]) -> bool {
    let entry_shaped = |v: &Raw<'_>| match v {
        Raw::Object(e) => e.iter().any(|(k, _)| ENTRY_MARKERS.contains(&k.as_ref())),
        _ => false,
    };
    let card_only = || {
        pairs
            .iter()
            .any(|(k, _)| CARD_ONLY_FIELDS.contains(&k.as_ref()))
    };
    pairs.iter().any(|(k, v)| {
        k == "entries"
            && match v {
                Raw::Entries(s) => !s.entries.is_empty(),
                Raw::Array(items) => items.first().is_some_and(entry_shaped),
                Raw::Object(items) => match items.first() {
                    Some((_, first)) => entry_shaped(first),
                    None => !card_only(),
                },
                _ => false,
            }
    })
}

/// [`crate::agnai::is_agnai_character`] on the raw tree.
fn raw_is_agnai_character(pairs: &[(Cow<'_, str>, Raw<'_>)]) -> bool {
    let has = |key: &str| pairs.iter().any(|(k, _)| k == key);
    pairs
        .iter()
        .any(|(k, v)| k == "kind" && matches!(v, Raw::String(s) if s == "character"))
        || ["name", "persona", "greeting", "scenario", "sampleChat"]
            .iter()
            .all(|k| has(k))
}

/// A V1 card's text fields other than `description` (its own names and the older `char_*` ones).
const V1_TEXT_FIELDS: [&str; 6] = [
    "personality",
    "first_mes",
    "char_persona",
    "char_greeting",
    "scenario",
    "mes_example",
];

fn looks_like_v1(pairs: &[(Cow<'_, str>, Raw<'_>)]) -> bool {
    let has = |key: &str| pairs.iter().any(|(k, _)| k == key);
    let has_name = pairs
        .iter()
        .any(|(k, v)| (k == "name" || k == "char_name") && matches!(v, Raw::String(_)));
    let has_other_text = V1_TEXT_FIELDS.iter().any(|k| has(k));
    // A lorebook with a name and a description (SillyTavern World Info as ccv3 writes it) is
    // not a card: with `entries`, `description` alone does not make one.
    let only_description = has("entries") && !has("char_name") && !has_other_text;
    has_name && !only_description && (has("description") || has_other_text)
}
