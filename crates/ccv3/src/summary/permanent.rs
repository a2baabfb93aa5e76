//! A card's permanent tokens: the tokens of the fields a chat's prompt always carries, as
//! SillyTavern counts them beside its character editor (issue 29).

use super::text::Text;
use crate::Card;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// The fields whose tokens are a character's permanent tokens, as SillyTavern 1.19.0 marks its
/// editor's token counters (`data-token-permanent="true"` in `public/index.html`): the name,
/// the description, the personality, the scenario and the character's note
/// (`extensions.depth_prompt.prompt`). The first message, the example messages, the system
/// prompt and the post-history instructions are not among them (SillyTavern counts them in its
/// total only). Each field is counted on its own and the counts are added, as SillyTavern adds
/// its counters; the texts are counted as written (SillyTavern substitutes `{{char}}`-style
/// macros first for a saved character).
pub const PERMANENT_FIELDS: [&str; 5] = [
    "name",
    "description",
    "personality",
    "scenario",
    "extensions.depth_prompt.prompt",
];

/// The permanent tokens of a card read in full ([`PERMANENT_FIELDS`]), each field counted by
/// `count` (a tokenizer's count) and added.
///
/// ```
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{
///   "name":"Ember","description":"A fire spirit.","first_mes":"Hello there, traveller."}}"#)? else { panic!() };
/// // Counted here in words; the first message is not permanent.
/// let words = |t: &str| t.split_whitespace().count();
/// assert_eq!(ccv3::permanent_tokens(&cf.card, &words), 1 + 3);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn permanent_tokens(card: &Card, count: &dyn Fn(&str) -> usize) -> usize {
    let d = &card.data;
    let note = d
        .extensions
        .get("depth_prompt")
        .and_then(|p| p.get("prompt"))
        .and_then(|p| p.as_str())
        .unwrap_or("");
    count_fields(
        [
            d.name.as_str(),
            &d.description,
            &d.personality,
            &d.scenario,
            note,
        ],
        count,
    )
}

/// The permanent fields' texts (in [`PERMANENT_FIELDS`] order) each counted by `count` and
/// added; an empty field counts 0 without asking `count`.
fn count_fields(fields: [&str; 5], count: &dyn Fn(&str) -> usize) -> usize {
    fields
        .into_iter()
        .map(|t| if t.is_empty() { 0 } else { count(t) })
        .sum()
}

/// The permanent tokens of the card JSON text the summary read (a wrapped V2/V3 card), or
/// `None` when a permanent field is not a string (`null` included: the full reader then
/// decides).
pub(super) fn permanent_tokens_of_text(
    text: &[u8],
    count: &dyn Fn(&str) -> usize,
) -> Option<usize> {
    let top: Top<'_> = serde_json::from_slice(text).ok()?;
    let d = top.data;
    let note = d.note.as_deref().unwrap_or("");
    Some(count_fields(
        [
            &d.name.0,
            &d.description.0,
            &d.personality.0,
            &d.scenario.0,
            note,
        ],
        count,
    ))
}

/// The top-level object: its `data`.
#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow)]
    data: Data<'a>,
}

/// The permanent fields of `data`, borrowed from the text when they hold no escape (a missing
/// one is empty; `null` or another type is not read).
#[derive(Deserialize)]
struct Data<'a> {
    #[serde(borrow, default)]
    name: Text<'a>,
    #[serde(borrow, default)]
    description: Text<'a>,
    #[serde(borrow, default)]
    personality: Text<'a>,
    #[serde(borrow, default)]
    scenario: Text<'a>,
    #[serde(default, rename = "extensions", deserialize_with = "depth_prompt_note")]
    note: Option<String>,
}

/// `extensions.depth_prompt.prompt` when it is a string; the rest of `extensions` skipped.
fn depth_prompt_note<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
            let mut note = None;
            while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
                if k == "depth_prompt" {
                    let v: serde_json::Value = map.next_value()?;
                    note = v.get("prompt").and_then(|p| p.as_str()).map(str::to_owned);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(note)
        }
    }
    d.deserialize_map(V)
}
