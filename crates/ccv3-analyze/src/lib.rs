//! Static analysis of Character Card V3 cards and lorebooks (issue 27): the questions card
//! creators ask that validation does not answer.
//!
//! - [`lint`]: which entries can never fire and why, which fire more or less than meant, what
//!   eats the token budget ([`lint::BudgetPlan`]), which macros and decorators the target
//!   application does not know; typed [`lint::Finding`]s that serialise as `ccv3 lint --json`.
//! - [`graph`]: which entry triggers which in a recursion step, decided by the lorebook engine
//!   itself ([`ccv3_lore::CompiledBooks::recursion_edges`]); cycles; JSON, Graphviz and Mermaid.
//! - [`mod@portability`]: what SillyTavern, RisuAI, Agnai and any V2 reader do with a card, from
//!   facts recorded with their sources (`docs/portability.md`).
//! - [`App`]: the applications these analyses target.
//!
//! No clock, no thread, no I/O: every function is a function of its inputs.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod graph;
pub mod lint;
pub mod portability;
mod words;

pub use graph::{lore_graph, Graph, GraphEdge, GraphNode};
pub use lint::{
    lint_card, lint_document, lint_lorebook, BudgetPlan, EntryTokens, Finding, LintOptions,
};
pub use portability::{portability, PortabilityFinding};

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
