//! The functions of the `ccv3` npm and Python packages, on JSON values and bytes.
//!
//! Both packages export the same functions (`readCard` / `read_card`, ...). Each lives here
//! once, over [`serde_json::Value`] and byte slices, so the binding crates only convert values
//! (JavaScript values or Python objects to and from JSON) and map [`EmbedError`] to their own
//! error type: no spec logic is written twice, and JavaScript and Python agree.
//!
//! # Tour
//!
//! - Cards and lorebooks: [`read_card`], [`read_lorebook`], [`write_card`], [`write_lorebook`],
//!   [`validate_card`], [`validate_lorebook`]. A card is the V3 object `{spec, spec_version,
//!   data}` whatever was read; with [`ReadOptions::parse_decorators`] each lorebook entry gets
//!   a `decorators` list and its `content` without the decorator lines, and the writers put them
//!   back as `@@` lines. [`read_card_parts`] reads a card from a random-access source in two
//!   parts, for bindings that build a big book's entries only when they are first used.
//! - Decorators: [`parse_decorators`], [`serialize_decorators`] (the list form of
//!   [`ccv3::decorator::Decorator`]).
//! - The lorebook engine and prompts: [`scan_lorebook`] and [`build_prompt`], through the turn
//!   policy of [`ccv3_prompt::Session`]; each returns the `state` the next turn passes back in.
//! - Text: [`expand_macros`] (CBS), [`count_tokens`].
//! - Static analysis (issue 27): [`lint_card`] (and [`lint_card_json`]: a card object's JSON
//!   text in, the findings' JSON text out), [`lint_lorebook`], [`lore_graph`],
//!   [`portability`], the JSON of `ccv3 lint`, `ccv3 lore graph` and `ccv3 portability --json`.
//!
//! Option keys in request objects are accepted in `snake_case` and in `camelCase`
//! (`max_context` or `maxContext`); `null` is the same as absent.
//!
//! # Errors
//!
//! Every function returns an [`EmbedError`] with a stable kebab-case [`EmbedError::code`]
//! instead of panicking, whatever the input.
//!
//! ```
//! let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0",
//!     "data": {"name": "Ember", "character_book": {"entries": [
//!         {"keys": ["fire"], "content": "@@depth 2\nEmber is warm.", "enabled": true,
//!          "insertion_order": 0}]}}});
//! let png = ccv3_embed::write_card(&card, "png", None)?;
//! let back = ccv3_embed::read_card(&png, &ccv3_embed::ReadOptions::default())?;
//! let entry = &back["data"]["character_book"]["entries"][0];
//! assert_eq!(entry["content"], "Ember is warm.");
//! assert_eq!(entry["decorators"][0], serde_json::json!({"type": "depth", "value": 2}));
//! # Ok::<(), ccv3_embed::EmbedError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

mod analyze;
mod cards;
mod decorators;
mod encoding;
mod error;
mod opts;
mod parts;
mod sillytavern;
mod source;
mod text;
mod turn;

pub use analyze::{lint_card, lint_card_json, lint_lorebook, lore_graph, portability};
pub use cards::{
    read_card, read_card_json, read_card_path_json, read_lorebook, read_lorebook_json,
    validate_card, validate_lorebook, write_card, write_lorebook, ReadOptions,
};
pub use cards::{read_card_files, write_card_with_files};
pub use cards::{
    read_card_summary_json, read_card_summary_path_json, read_card_summary_seekable_json,
};
// The card as the model, for native bindings that build their own objects (ccv3-py).
pub use cards::{read_card_model, read_card_path_model, read_card_path_model_on_this_thread};
/// The ECMAScript syntax check of regex keys in WebAssembly builds (see
/// [`ccv3::set_regex_syntax_check`]); the npm package registers JavaScript's `RegExp`.
pub use ccv3::{set_regex_syntax_check, SyntaxCheck};
pub use decorators::{parse_decorators, serialize_decorators};
pub use error::EmbedError;
pub use parts::{
    card_entries_at_json, card_entries_json, read_card_as_is, read_card_parts,
    read_card_path_as_is, AsIsCard, CardParts, PartEntries,
};
pub use sillytavern::sillytavern_scan_options;
pub use source::Source;
pub use text::{count_tokens, expand_macros};
pub use turn::{build_prompt, build_prompt_json, scan_lorebook, scan_lorebook_json, CompiledBooks};

/// The version of the ccv3 workspace (and of the npm and Python packages).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
