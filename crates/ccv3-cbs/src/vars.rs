//! Variable state kept between expansions.
//!
//! [`Variables`] holds two maps of strings: `local` (per chat: `setvar`, `getvar`, ...) and
//! `global` (shared by all chats: `setglobalvar`, ...). It is serde-serialisable so that a chat
//! or the lorebook engine's state can embed and persist it. Maps are ordered (`BTreeMap`) so
//! the serialised form is stable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Local (chat) and global variables, as strings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variables {
    /// Chat variables (`setvar`, `getvar`, `addvar`, `incvar`, `decvar`).
    #[serde(default)]
    pub local: BTreeMap<String, String>,
    /// Global variables (`setglobalvar`, `getglobalvar`, ...).
    #[serde(default)]
    pub global: BTreeMap<String, String>,
}

impl Variables {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of a variable in one scope, if set.
    pub fn get(&self, scope: Scope, name: &str) -> Option<&str> {
        self.map(scope).get(name).map(String::as_str)
    }

    /// Sets a variable (no limits are applied here; the expander applies [`crate::Limits`]).
    pub fn set(&mut self, scope: Scope, name: impl Into<String>, value: impl Into<String>) {
        self.map_mut(scope).insert(name.into(), value.into());
    }

    pub(crate) fn map(&self, scope: Scope) -> &BTreeMap<String, String> {
        match scope {
            Scope::Local => &self.local,
            Scope::Global => &self.global,
        }
    }

    pub(crate) fn map_mut(&mut self, scope: Scope) -> &mut BTreeMap<String, String> {
        match scope {
            Scope::Local => &mut self.local,
            Scope::Global => &mut self.global,
        }
    }
}

/// Which map of [`Variables`] a macro uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Chat variables.
    Local,
    /// Global variables.
    Global,
}
