//! The applications the analyses target ([`App`]), named as `--app` and the JSON `app` field name them.

use serde::{Deserialize, Serialize};

/// An application a card is written for or read by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum App {
    /// The spec alone (SPEC_V3): its nine macros, every decorator it defines.
    #[serde(rename = "spec")]
    Spec,
    /// SillyTavern (1.19).
    #[serde(rename = "sillytavern")]
    SillyTavern,
    /// RisuAI.
    #[serde(rename = "risuai")]
    Risu,
    /// Agnai.
    #[serde(rename = "agnai")]
    Agnai,
    /// Any reader of Character Card V2 (portability only).
    #[serde(rename = "v2")]
    V2,
}

impl App {
    /// The applications `ccv3 portability` reports on by default, in its order.
    pub const PORTABILITY: [App; 4] = [App::SillyTavern, App::Risu, App::Agnai, App::V2];

    /// The id used on the command line and in JSON: `spec`, `sillytavern`, `risuai`, `agnai`, `v2`.
    pub fn as_str(self) -> &'static str {
        match self {
            App::Spec => "spec",
            App::SillyTavern => "sillytavern",
            App::Risu => "risuai",
            App::Agnai => "agnai",
            App::V2 => "v2",
        }
    }

    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            App::Spec => "the spec",
            App::SillyTavern => "SillyTavern",
            App::Risu => "RisuAI",
            App::Agnai => "Agnai",
            App::V2 => "a V2 reader",
        }
    }

    /// Reads an id as [`App::as_str`] writes it (also `st`, `risu`), any case.
    pub fn parse(s: &str) -> Option<App> {
        match s.trim().to_ascii_lowercase().as_str() {
            "spec" => Some(App::Spec),
            "sillytavern" | "st" => Some(App::SillyTavern),
            "risuai" | "risu" => Some(App::Risu),
            "agnai" => Some(App::Agnai),
            "v2" => Some(App::V2),
            _ => None,
        }
    }
}

impl std::fmt::Display for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
