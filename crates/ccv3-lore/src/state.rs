//! The state a scan carries to the next one: timed effects and match history.
//!
//! Serialised as JSON:
//! `{"sticky":{ID:{"start":S,"end":E,"protected":false,"entry":"book#3"}},"cooldown":{...},
//!   "matched":{ID:{"first":S,"count":N,"entry":"book#3"}}}` where `ID` is the entry's identity
//! (16 hex digits: a hash of its book name and every field of the entry, so any edit of an entry
//! ends its effects, as SillyTavern's World Info documentation says) and `S`/`E` are chat lengths (message counts).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A sticky or cooldown effect: active while `start < chat length <= end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedRecord {
    /// The chat length when the effect began.
    pub start: u64,
    /// The last chat length at which the effect is active.
    pub end: u64,
    /// A cooldown that followed a sticky period (kept even when the chat did not advance).
    #[serde(default)]
    pub protected: bool,
    /// `book#index`, for people reading the file.
    #[serde(default)]
    pub entry: String,
}

/// The match history of an entry (for `@@keep_activate_after_match`/`@@dont_activate_after_match`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchRecord {
    /// The chat length at the first activation.
    pub first: u64,
    /// How many scans activated the entry.
    pub count: u64,
    /// `book#index`, for people reading the file.
    #[serde(default)]
    pub entry: String,
}

/// Everything a scan needs from earlier scans. `Default` is the state of a new chat.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ScanState {
    /// Sticky effects by entry identity.
    #[serde(default)]
    pub sticky: BTreeMap<String, TimedRecord>,
    /// Cooldown effects by entry identity.
    #[serde(default)]
    pub cooldown: BTreeMap<String, TimedRecord>,
    /// Match history by entry identity (kept for entries with an after-match decorator only).
    #[serde(default)]
    pub matched: BTreeMap<String, MatchRecord>,
    /// CBS variables (`{{setvar}}`, `{{getvar}}`, ...), kept with the lorebook state so one state
    /// file carries a conversation.
    #[serde(default, skip_serializing_if = "variables_empty")]
    pub variables: ccv3_cbs::Variables,
}

fn variables_empty(v: &ccv3_cbs::Variables) -> bool {
    *v == ccv3_cbs::Variables::default()
}

impl ScanState {
    /// Reads a state from JSON. Lone UTF-16 surrogate escapes (in CBS variables, say) become
    /// U+FFFD instead of failing the read (issue 12; see [`ccv3::json::from_slice_repaired`]).
    ///
    /// # Errors
    /// [`crate::error::LoreError::State`] when the text is not a state object.
    pub fn from_json(text: &str) -> Result<ScanState, crate::error::LoreError> {
        ccv3::json::from_slice_repaired(text.as_bytes())
            .map(|(state, _)| state)
            .map_err(|e| crate::error::LoreError::State(e.to_string()))
    }

    /// The state as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }
}

/// The identity key of an entry in a state.
pub(crate) fn key(id: impl Into<u64>) -> String {
    format!("{:016x}", id.into())
}
