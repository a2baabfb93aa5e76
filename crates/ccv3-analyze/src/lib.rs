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

mod app;
pub mod graph;
pub mod lint;
pub mod portability;
mod words;

pub use app::App;
pub use graph::{lore_graph, Graph, GraphEdge, GraphNode};
pub use lint::{
    lint_card, lint_document, lint_lorebook, BudgetPlan, EntryTokens, Finding, LintOptions,
};
pub use portability::{portability, PortabilityFinding};
