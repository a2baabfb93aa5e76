//! The character card: one V3 model for V1, V2 and V3 input.

use super::asset::Asset;
use super::book::Lorebook;
use super::fields::{
    self, arrange, arranged, index, join, list, s, Arranged, At, Field, KeyOrder, Object, Out,
    Repairs,
};
use super::raw::Raw;
use crate::diag::Severity;
use crate::error::Result;
use serde_json::{Number, Value};
use std::borrow::Cow;

/// Which card format the input was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecVersion {
    /// A flat V1 card (no `spec`).
    V1,
    /// `chara_card_v2`.
    V2,
    /// `chara_card_v3`.
    V3,
}

impl SpecVersion {
    /// `V1`, `V2` or `V3`.
    pub fn label(self) -> &'static str {
        match self {
            SpecVersion::V1 => "V1",
            SpecVersion::V2 => "V2",
            SpecVersion::V3 => "V3",
        }
    }
}

/// A character card, read from any version into the V3 model.
///
/// Unknown top-level fields (V1 fields that exporters write beside `data`, say) stay in `extra`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Card {
    /// The `spec_version` string as read (`"3.0"` for cards that were not V3).
    pub spec_version: String,
    /// The card's fields.
    pub data: CardData,
    /// Top-level fields other than `spec`, `spec_version` and `data`, in file order.
    pub extra: Object,
    /// The format the card was read from.
    pub origin: Option<SpecVersion>,
    /// The key order as read (written back the same way); `KeyOrder::default()` for new values.
    pub order: KeyOrder,
}

/// The `data` object of a V3 card. Unknown fields are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(missing_docs)]
pub struct CardData {
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    pub creator: String,
    pub character_version: String,
    pub mes_example: String,
    /// Application data (`depth_prompt`, `risuai`, `talkativeness`, ...), kept as is.
    pub extensions: Object,
    pub system_prompt: String,
    pub post_history_instructions: String,
    pub first_mes: String,
    pub alternate_greetings: Vec<String>,
    pub personality: String,
    pub scenario: String,
    pub creator_notes: String,
    pub character_book: Option<Lorebook>,
    /// `None` when absent: the spec then assumes [`Asset::default_list`].
    pub assets: Option<Vec<Asset>>,
    pub nickname: Option<String>,
    /// Language code to creator notes (values should be strings; kept as read).
    pub creator_notes_multilingual: Option<Object>,
    pub source: Option<Vec<String>>,
    pub group_only_greetings: Vec<String>,
    pub creation_date: Option<Number>,
    pub modification_date: Option<Number>,
    /// Fields the spec does not name, in file order.
    pub extra: Object,
    /// The key order as read (written back the same way); `KeyOrder::default()` for new values.
    pub order: KeyOrder,
}

/// The warning line the spec asks V2 backfills to carry in `creator_notes`.
pub const V2_BACKFILL_WARNING: &str = "This character card is Character Card V3, but it is loaded as a Character Card V2. Please use a Character Card V3 compatible application to use this character card properly.";

impl CardData {
    /// Puts the keys of `data` in the order `keys` gives (the V3 order a backfill stashed;
    /// see [`fields::reorder`]).
    pub(crate) fn reorder_keys<'k>(&mut self, keys: impl Iterator<Item = &'k str>) {
        fields::reorder(&mut self.order, &mut self.extra, &DATA_FIELDS, keys);
    }

    /// The name `{{char}}` stands for: the nickname when set and not empty, else the name.
    pub fn char_name(&self) -> &str {
        match self.nickname.as_deref() {
            Some(n) if !n.is_empty() => n,
            _ => &self.name,
        }
    }

    /// The seven text fields an application puts into the prompt, by their JSON names, in the
    /// spec's order: description, personality, scenario, first message, example messages,
    /// system prompt, post-history instructions (the greetings beside `first_mes` and the
    /// lorebook are not among them).
    ///
    /// ```
    /// let d = ccv3::CardData { scenario: "A storm.".into(), ..Default::default() };
    /// let fields = d.prompt_texts();
    /// assert_eq!(fields[2], ("scenario", "A storm."));
    /// assert_eq!(fields.map(|(name, _)| name)[6], "post_history_instructions");
    /// ```
    pub fn prompt_texts(&self) -> [(&'static str, &str); 7] {
        [
            ("description", &self.description),
            ("personality", &self.personality),
            ("scenario", &self.scenario),
            ("first_mes", &self.first_mes),
            ("mes_example", &self.mes_example),
            ("system_prompt", &self.system_prompt),
            ("post_history_instructions", &self.post_history_instructions),
        ]
    }

    /// The creator notes to show to a user whose language is `lang` (ISO 639-1, like `en`).
    ///
    /// SPEC_V3 `creator_notes`: without `creator_notes_multilingual`, `creator_notes` is the note;
    /// with it, the entry for `lang` is used, `creator_notes` stands for `en` when the map has no
    /// `en`, and otherwise the map's `en` entry, then its first entry, is the fallback.
    ///
    /// ```
    /// let mut d = ccv3::CardData { creator_notes: "Hello".into(), ..Default::default() };
    /// assert_eq!(d.creator_notes_for("fr"), "Hello");
    /// d.creator_notes_multilingual = Some(serde_json::from_str(r#"{"fr":"Bonjour"}"#).unwrap());
    /// assert_eq!(d.creator_notes_for("fr"), "Bonjour");
    /// assert_eq!(d.creator_notes_for("en"), "Hello");
    /// ```
    pub fn creator_notes_for(&self, lang: &str) -> &str {
        let Some(map) = &self.creator_notes_multilingual else {
            return &self.creator_notes;
        };
        let get = |code: &str| map.get(code).and_then(Value::as_str);
        if let Some(note) = get(lang) {
            return note;
        }
        if lang == "en" || !map.contains_key("en") {
            if map.contains_key("en") {
                return get("en").unwrap_or(&self.creator_notes);
            }
            if lang == "en" {
                return &self.creator_notes;
            }
        }
        get("en")
            .or_else(|| map.values().find_map(Value::as_str))
            .unwrap_or(&self.creator_notes)
    }

    /// The assets, or the spec's default list when `assets` is absent.
    pub fn assets_or_default(&self) -> Vec<Asset> {
        self.assets.clone().unwrap_or_else(Asset::default_list)
    }

    pub(super) fn read(
        pairs: Vec<(Cow<'_, str>, Raw<'_>)>,
        path: &str,
        r: &mut Repairs,
    ) -> CardData {
        let path_d: &dyn std::fmt::Display = &path;
        let mut d = CardData {
            order: KeyOrder::with_capacity(pairs.len()),
            ..Default::default()
        };
        // The required fields, by their place in `DATA_FIELDS`; read once all keys are seen.
        let mut req: [Option<Field>; REQUIRED_COUNT] = Default::default();
        for (k, v) in pairs {
            let p = At(path_d, &k);
            let place = data_field(&k);
            let Some(name) = d.order.note_at(place, &DATA_FIELDS) else {
                d.extra.insert(k.into_owned(), v.into_value());
                continue;
            };
            if let Some(slot) = place.and_then(|i| req.get_mut(i)) {
                *slot = Some(Field::from_raw(v));
                continue;
            }
            match name {
                "character_book" => d.character_book = Lorebook::read(v, &join(path, &k), r),
                "assets" => {
                    d.assets = match v {
                        Raw::Null => None,
                        Raw::Array(items) => {
                            let base = join(path, &k);
                            Some(
                                items
                                    .into_iter()
                                    .enumerate()
                                    .filter_map(|(i, a)| Asset::read(a, &index(&base, i), r))
                                    .collect(),
                            )
                        }
                        other => {
                            let other = other.into_value();
                            let sev = Severity::Error;
                            r.push(
                                sev,
                                "wrong-type",
                                &p,
                                format!(
                                    "assets must be an array, found {}; kept it as is",
                                    fields::type_name(&other)
                                ),
                            );
                            d.order.keep_last_as_extra();
                            d.extra.insert(k.into_owned(), other);
                            None
                        }
                    }
                }
                "nickname" => d.nickname = fields::string(v.into_value(), &p, r),
                "creator_notes_multilingual" => {
                    d.creator_notes_multilingual = match v.into_value() {
                        Value::Null => None,
                        Value::Object(m) => Some(m),
                        other => {
                            let sev = Severity::Error;
                            r.push(sev, "wrong-type", &p, format!("creator_notes_multilingual must be an object, found {}; kept it as is", fields::type_name(&other)));
                            d.order.keep_last_as_extra();
                            d.extra.insert(k.into_owned(), other);
                            None
                        }
                    }
                }
                "source" => {
                    d.source = if v.is_null() {
                        None
                    } else {
                        Some(fields::string_list(v.into_value(), &p, false, r))
                    }
                }
                "creation_date" => d.creation_date = fields::number(v.into_value(), &p, r),
                _ => d.modification_date = fields::number(v.into_value(), &p, r),
            }
        }
        for (&k, v) in DATA_FIELDS.iter().zip(req) {
            let p = At(path_d, k);
            match k {
                "tags" => d.tags = fields::req_string_list_field(v, &p, true, r),
                "alternate_greetings" => {
                    d.alternate_greetings = fields::req_string_list_field(v, &p, false, r)
                }
                // V3-only: a card that does not claim V3 is not told it lacks it.
                "group_only_greetings" if v.is_none() && r.must != Severity::Error => {}
                "group_only_greetings" => {
                    d.group_only_greetings = fields::req_string_list_field(v, &p, false, r)
                }
                "extensions" => d.extensions = fields::object(v.map(Field::into_value), &p, r),
                _ => {
                    let text = fields::req_string_field(v, &p, r);
                    *d.text_field_mut(k) = text;
                }
            }
        }
        d
    }

    fn text_field_mut(&mut self, k: &str) -> &mut String {
        match k {
            "name" => &mut self.name,
            "description" => &mut self.description,
            "creator" => &mut self.creator,
            "character_version" => &mut self.character_version,
            "mes_example" => &mut self.mes_example,
            "system_prompt" => &mut self.system_prompt,
            "post_history_instructions" => &mut self.post_history_instructions,
            "first_mes" => &mut self.first_mes,
            "personality" => &mut self.personality,
            "scenario" => &mut self.scenario,
            _ => &mut self.creator_notes,
        }
    }

    fn fields<'a>(
        &'a self,
        v3: bool,
        book: Option<Out<'a>>,
    ) -> Vec<(&'static str, Option<Out<'a>>)> {
        let mut f = vec![
            ("name", s(&self.name)),
            ("description", s(&self.description)),
            ("tags", list(&self.tags)),
            ("creator", s(&self.creator)),
            ("character_version", s(&self.character_version)),
            ("mes_example", s(&self.mes_example)),
            ("extensions", Some(Out::Obj(&self.extensions))),
            ("system_prompt", s(&self.system_prompt)),
            (
                "post_history_instructions",
                s(&self.post_history_instructions),
            ),
            ("first_mes", s(&self.first_mes)),
            ("alternate_greetings", list(&self.alternate_greetings)),
            ("personality", s(&self.personality)),
            ("scenario", s(&self.scenario)),
            ("creator_notes", s(&self.creator_notes)),
            ("character_book", book),
        ];
        if v3 {
            f.extend([
                ("assets", self.assets.as_deref().map(Out::Assets)),
                ("nickname", self.nickname.as_deref().and_then(s)),
                (
                    "creator_notes_multilingual",
                    self.creator_notes_multilingual.as_ref().map(Out::Obj),
                ),
                ("source", self.source.as_deref().and_then(list)),
                ("group_only_greetings", list(&self.group_only_greetings)),
                ("creation_date", self.creation_date.as_ref().map(Out::Num)),
                (
                    "modification_date",
                    self.modification_date.as_ref().map(Out::Num),
                ),
            ]);
        }
        f
    }
}

/// Every `data` field the spec names; the first [`REQUIRED_COUNT`] are the required ones
/// (SPEC_V3 "CharacterCard Object"), the rest are optional.
pub(super) const DATA_FIELDS: [&str; 22] = [
    "name",
    "description",
    "tags",
    "creator",
    "character_version",
    "mes_example",
    "extensions",
    "system_prompt",
    "post_history_instructions",
    "first_mes",
    "alternate_greetings",
    "personality",
    "scenario",
    "creator_notes",
    "group_only_greetings",
    "character_book",
    "assets",
    "nickname",
    "creator_notes_multilingual",
    "source",
    "creation_date",
    "modification_date",
];

/// How many of [`DATA_FIELDS`] (the first ones) a V3 card must have.
pub(super) const REQUIRED_COUNT: usize = 15;

/// The place of `key` in [`DATA_FIELDS`] (a `match`, not a search through the list with a
/// string compare per field, for the keys every card repeats).
pub(super) fn data_field(key: &str) -> Option<usize> {
    Some(match key {
        "name" => 0,
        "description" => 1,
        "tags" => 2,
        "creator" => 3,
        "character_version" => 4,
        "mes_example" => 5,
        "extensions" => 6,
        "system_prompt" => 7,
        "post_history_instructions" => 8,
        "first_mes" => 9,
        "alternate_greetings" => 10,
        "personality" => 11,
        "scenario" => 12,
        "creator_notes" => 13,
        "group_only_greetings" => 14,
        "character_book" => 15,
        "assets" => 16,
        "nickname" => 17,
        "creator_notes_multilingual" => 18,
        "source" => 19,
        "creation_date" => 20,
        "modification_date" => 21,
        _ => return None,
    })
}

impl Card {
    /// A new, empty V3 card with a name and no dates (the library reads no clock: see
    /// [`Card::new_at`]).
    ///
    /// ```
    /// let card = ccv3::Card::new("Aqua");
    /// assert_eq!(card.data.name, "Aqua");
    /// assert!(card.data.creation_date.is_none());
    /// ```
    pub fn new(name: &str) -> Self {
        Card {
            spec_version: "3.0".into(),
            data: CardData {
                name: name.into(),
                ..Default::default()
            },
            origin: Some(SpecVersion::V3),
            ..Default::default()
        }
    }

    /// A new, empty V3 card with a name, its `creation_date` and `modification_date` set to `now`
    /// (seconds since the Unix epoch, from the caller's clock; SPEC_V3: applications SHOULD add
    /// `creation_date` when a card is created).
    ///
    /// ```
    /// let card = ccv3::Card::new_at("Aqua", 1_700_000_000);
    /// assert_eq!(card.data.creation_date, Some(1_700_000_000u64.into()));
    /// assert_eq!(card.data.modification_date, Some(1_700_000_000u64.into()));
    /// ```
    pub fn new_at(name: &str, now: u64) -> Self {
        let mut card = Card::new(name);
        card.data.creation_date = Some(Number::from(now));
        card.data.modification_date = Some(Number::from(now));
        card
    }

    /// The card as a V3 JSON object, `{"spec":"chara_card_v3","spec_version":...,"data":{...}}`.
    ///
    /// Every field, unknown ones included, is written in its original order.
    pub fn to_v3_json(&self) -> Value {
        Value::Object(self.v3_arranged().into_object())
    }

    /// Writes [`Card::to_v3_json`] to `w` as JSON text, indented or compact, without building
    /// the tree first (the same text as serialising that tree).
    ///
    /// ```
    /// let card = ccv3::Card::new("Ember");
    /// let mut text = Vec::new();
    /// card.write_v3_json(&mut text, false).unwrap();
    /// assert_eq!(text, serde_json::to_vec(&card.to_v3_json()).unwrap());
    /// ```
    pub fn write_v3_json<W: std::io::Write>(&self, w: W, pretty: bool) -> std::io::Result<()> {
        crate::json::write(w, &self.v3_arranged(), pretty)
    }

    /// Serialises [`Card::to_v3_json`] with any serde serializer, without building the tree
    /// first (the value [`Card::write_v3_json`] writes as text; the Python package builds its
    /// objects this way).
    ///
    /// ```
    /// let card = ccv3::Card::new("Ember");
    /// let v = card.serialize_v3(serde_json::value::Serializer).unwrap();
    /// assert_eq!(v, card.to_v3_json());
    /// ```
    ///
    /// # Errors
    /// The serializer's own errors.
    pub fn serialize_v3<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&self.v3_arranged(), ser)
    }

    /// The V3 card's keys in writing order.
    pub(crate) fn v3_arranged(&self) -> Arranged<'_> {
        let version = if self.origin == Some(SpecVersion::V3) && !self.spec_version.is_empty() {
            self.spec_version.as_str()
        } else {
            "3.0"
        };
        let book = self
            .data
            .character_book
            .as_ref()
            .map(|b| Out::Book(b, true));
        let data = arranged(
            &self.data.order,
            self.data.fields(true, book),
            &self.data.extra,
        );
        self.wrap_arranged("chara_card_v3", version, Out::Arranged(Box::new(data)))
    }

    /// The keys of the card's V3 `data`, in the order [`Card::to_v3_json`] writes them.
    pub(crate) fn v3_data_keys(&self) -> Vec<String> {
        let book = self
            .data
            .character_book
            .as_ref()
            .map(|b| Out::Book(b, true));
        arranged(
            &self.data.order,
            self.data.fields(true, book),
            &self.data.extra,
        )
        .keys()
        .map(str::to_string)
        .collect()
    }

    pub(crate) fn v2_data(
        &self,
        book: Option<Value>,
        creator_notes: &str,
        extensions: Object,
    ) -> Object {
        let mut fields = self.data.fields(false, book.map(Out::Owned));
        let mut extensions = Some(extensions);
        for f in fields.iter_mut() {
            match f.0 {
                "creator_notes" => f.1 = s(creator_notes),
                "extensions" => f.1 = extensions.take().map(|e| Out::Owned(Value::Object(e))),
                _ => {}
            }
        }
        // V3-only fields never appear in V2 data, even when they were unknown extras.
        let mut extra = self.data.extra.clone();
        for k in [
            "assets",
            "nickname",
            "creator_notes_multilingual",
            "source",
            "group_only_greetings",
            "creation_date",
            "modification_date",
        ] {
            extra.shift_remove(k);
        }
        arrange(&self.data.order, fields, &extra)
    }

    pub(crate) fn wrap(&self, spec: &str, version: &str, data: Object) -> Value {
        let data = Out::Owned(Value::Object(data));
        Value::Object(self.wrap_arranged(spec, version, data).into_object())
    }

    /// The card's top level around `data`.
    fn wrap_arranged<'a>(&'a self, spec: &'a str, version: &'a str, data: Out<'a>) -> Arranged<'a> {
        arranged(
            &self.order,
            vec![
                ("spec", s(spec)),
                ("spec_version", s(version)),
                ("data", Some(data)),
            ],
            &self.extra,
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn data_field_places_match_the_field_list() {
        // SPEC_V3.md "CharacterCard Object": the `data` fields, found by a match (issue 16).
        for (i, k) in super::DATA_FIELDS.iter().enumerate() {
            assert_eq!(super::data_field(k), Some(i), "{k}");
        }
        assert_eq!(super::data_field("Name"), None);
        assert_eq!(super::data_field("entries"), None);
    }
}
