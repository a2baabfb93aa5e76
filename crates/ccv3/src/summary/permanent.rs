//! A card's permanent tokens: the tokens of the fields a chat's prompt always carries, as
//! SillyTavern counts them beside its character editor (issue 29).

use super::text::Text;
use crate::Card;

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

/// The permanent fields of a card text's `data` besides the name, as the summary reads them in
/// its own pass when they are counted (a missing one is empty; `null` or another type fails the
/// summary, and the full reader then decides).
#[derive(Default)]
pub(super) struct Permanent<'a> {
    pub(super) description: Option<Text<'a>>,
    pub(super) personality: Option<Text<'a>>,
    pub(super) scenario: Option<Text<'a>>,
    /// `extensions.depth_prompt.prompt` ([`depth_prompt_note`]).
    pub(super) note: Option<String>,
}

impl Permanent<'_> {
    /// The permanent tokens of these fields and the card's `name`, each counted by `count`.
    pub(super) fn count(&self, name: Option<&Text<'_>>, count: &dyn Fn(&str) -> usize) -> usize {
        count_fields(
            [
                text(name),
                text(self.description.as_ref()),
                text(self.personality.as_ref()),
                text(self.scenario.as_ref()),
                self.note.as_deref().unwrap_or(""),
            ],
            count,
        )
    }
}

/// A field's text, empty when it is missing.
fn text<'t>(field: Option<&'t Text<'_>>) -> &'t str {
    field.map_or("", |t| t.0.as_ref())
}

/// The character's note of an `extensions.depth_prompt` value: its `prompt` when that is a
/// string (anything else counts as no note, as [`permanent_tokens`] reads the card).
pub(super) fn depth_prompt_note(depth_prompt: &serde_json::Value) -> Option<String> {
    depth_prompt
        .get("prompt")
        .and_then(|p| p.as_str())
        .map(str::to_owned)
}
