//! Prompt templates: the order of the prompt's slots.
//!
//! A template is a JSON array of slot names. The default, [`Template::default`], is the order users
//! of chat frontends know:
//!
//! ```json
//! ["system", "lore_before_char", "description", "personality", "scenario",
//!  "lore_after_char", "examples", "history", "post_history", "prefill"]
//! ```
//!
//! | slot | what it holds |
//! |---|---|
//! | `system` | the card's `system_prompt` (`{{original}}` = the application's system prompt), or the application's own when the card's is empty; dropped by `@@disable_ui_prompt system_prompt` |
//! | `lore_before_char` | lorebook entries at `before_char` |
//! | `description` | `@@position before_desc` entries, the card's `description`, `@@position after_desc` entries |
//! | `personality` | the card's `personality` (through the personality format), then `@@position personality` entries |
//! | `scenario` | the card's `scenario` (through the scenario format), then `@@position scenario` entries |
//! | `lore_after_char` | lorebook entries at `after_char` |
//! | `examples` | entries at examples top, each `<START>` block of `mes_example`, entries at examples bottom |
//! | `history` | the greeting and the chat, with `@@depth` / `@@reverse_depth` entries and the author's note inside |
//! | `post_history` | the card's `post_history_instructions` (`{{original}}` = the application's), or the application's own; dropped by `@@disable_ui_prompt post_history_instructions` |
//! | `prefill` | depth-0 assistant entries, joined into one partial assistant message |
//!
//! A slot left out of a template is left out of the prompt (lorebook entries for it are reported
//! as cut with the reason `not in template`). Each slot may appear at most once.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// One section of the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    /// The system prompt.
    System,
    /// Lorebook entries before the character definitions.
    LoreBeforeChar,
    /// The description (with `before_desc` / `after_desc` entries).
    Description,
    /// The personality (with its entries).
    Personality,
    /// The scenario (with its entries).
    Scenario,
    /// Lorebook entries after the character definitions.
    LoreAfterChar,
    /// Example dialogue blocks.
    Examples,
    /// The greeting and chat history with depth insertions.
    History,
    /// Post-history instructions.
    PostHistory,
    /// The assistant prefill.
    Prefill,
}

impl Slot {
    /// Every slot, in the default order.
    pub const ALL: [Slot; 10] = [
        Slot::System,
        Slot::LoreBeforeChar,
        Slot::Description,
        Slot::Personality,
        Slot::Scenario,
        Slot::LoreAfterChar,
        Slot::Examples,
        Slot::History,
        Slot::PostHistory,
        Slot::Prefill,
    ];

    /// The slot's name in templates.
    pub fn as_str(self) -> &'static str {
        match self {
            Slot::System => "system",
            Slot::LoreBeforeChar => "lore_before_char",
            Slot::Description => "description",
            Slot::Personality => "personality",
            Slot::Scenario => "scenario",
            Slot::LoreAfterChar => "lore_after_char",
            Slot::Examples => "examples",
            Slot::History => "history",
            Slot::PostHistory => "post_history",
            Slot::Prefill => "prefill",
        }
    }
}

impl std::fmt::Display for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Slot {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Slot::ALL
            .into_iter()
            .find(|slot| slot.as_str() == s)
            .ok_or_else(|| {
                Error::Template(format!(
                    "unknown slot {s:?}; the slots are {}",
                    Slot::ALL.map(Slot::as_str).join(", ")
                ))
            })
    }
}

/// The order of the prompt's slots (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    slots: Vec<Slot>,
}

impl Default for Template {
    fn default() -> Self {
        Template {
            slots: Slot::ALL.to_vec(),
        }
    }
}

/// The largest template file read (64 KiB).
pub const MAX_TEMPLATE_BYTES: usize = 64 * 1024;

impl Template {
    /// A template from slots, in order.
    ///
    /// # Errors
    /// [`Error::Template`] when a slot appears twice.
    pub fn new(slots: Vec<Slot>) -> Result<Self, Error> {
        for (i, s) in slots.iter().enumerate() {
            if slots[..i].contains(s) {
                return Err(Error::Template(format!(
                    "slot {s:?} appears twice",
                    s = s.as_str()
                )));
            }
        }
        Ok(Template { slots })
    }

    /// Reads a template from JSON text: an array of slot names.
    ///
    /// # Errors
    /// [`Error::Template`] for text that is not an array of known, distinct slot names, and
    /// [`Error::Limit`] above [`MAX_TEMPLATE_BYTES`].
    ///
    /// ```
    /// use ccv3_prompt::{Slot, Template};
    /// let t = Template::from_json(r#"["system","description","history"]"#)?;
    /// assert_eq!(t.slots(), [Slot::System, Slot::Description, Slot::History]);
    /// assert!(Template::from_json(r#"["system","nope"]"#).is_err());
    /// # Ok::<(), ccv3_prompt::Error>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Self, Error> {
        if text.len() > MAX_TEMPLATE_BYTES {
            return Err(Error::Limit {
                what: "prompt template".into(),
                size: text.len() as u64,
                limit: MAX_TEMPLATE_BYTES as u64,
            });
        }
        let names: Vec<String> = serde_json::from_str(text)
            .map_err(|e| Error::Template(format!("expected a JSON array of slot names: {e}")))?;
        let slots = names
            .iter()
            .map(|n| n.parse())
            .collect::<Result<Vec<Slot>, Error>>()?;
        Template::new(slots)
    }

    /// Reads a template file (see [`Template::from_json`]).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read, else as [`Template::from_json`].
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self, Error> {
        let text = crate::file::read_capped(path.as_ref(), MAX_TEMPLATE_BYTES, "prompt template")?;
        Template::from_json(&text)
    }

    /// The slots, in order.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Whether the template has `slot`.
    pub fn contains(&self, slot: Slot) -> bool {
        self.slots.contains(&slot)
    }

    /// The template as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.slots.iter().map(|s| s.as_str()).collect::<Vec<_>>())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_default_is_documented_order() {
        assert_eq!(
            Template::default().to_json(),
            r#"["system","lore_before_char","description","personality","scenario","lore_after_char","examples","history","post_history","prefill"]"#
        );
    }

    #[test]
    fn template_duplicate_slot_is_an_error() {
        let err = Template::from_json(r#"["system","system"]"#).unwrap_err();
        assert!(err.to_string().contains("twice"), "{err}");
    }

    #[test]
    fn template_round_trips_through_json() {
        let t = Template::from_json(r#"["history","system"]"#).unwrap();
        assert_eq!(Template::from_json(&t.to_json()).unwrap(), t);
    }
}
