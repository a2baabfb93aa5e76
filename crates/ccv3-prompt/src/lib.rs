//! Prompt assembly: from a card, its lorebook activations and a chat to the messages a model
//! receives.
//!
//! # Tour
//!
//! - [`assemble()`] builds an [`Assembled`] prompt: ordered [`Part`]s, each with its slot, role and
//!   token count, plus the lorebook entries used and what was [`Cut`]. The [`assemble` module](mod@assemble) docs
//!   state the rules (order, greeting, depth insertions, UI prompts, fitting).
//! - [`Template`] orders the slots (JSON: an array of slot names); see [`template`].
//! - [`LoreInsert`] is one active lorebook entry with its [`InsertPosition`]; the lorebook engine's
//!   output is converted to these.
//! - [`Expander`] expands macros; [`SimpleExpander`] knows `{{char}}`, `{{user}}` and
//!   `{{original}}`; the [`adapters`] module plugs in the full CBS engine and the lorebook engine.
//! - [`TokenCounter`] counts through a [`ccv3_tokens::Tokenizer`] with a per-text cache.
//! - [`Session`] is the turn policy in one place: card, books, options; [`Session::scan`] and
//!   [`Session::prompt`] turn a chat and a state into activations, a prompt and the next state,
//!   deterministic from a seed that defaults to the chat's ([`session`]).
//! - Chats are read by ccv3's one reader, [`parse_chat`] (from `ccv3_lore::chat`).
//! - Output: [`Assembled::messages`] (OpenAI-style), [`Assembled::report`] (a [`PromptReport`],
//!   whose serialisation is `ccv3 prompt --json`), [`to_text`] (readable, with slot markers)
//!   and [`InstructTemplate::render`] (ChatML, Llama 3, Mistral, Alpaca or a custom JSON
//!   template).
//!
//! # Example
//!
//! ```
//! use ccv3_prompt::*;
//! let mut card = ccv3::Card::new("Aqua").data;
//! card.system_prompt = "{{original}} Stay in character as {{char}}.".into();
//! card.description = "A water goddess.".into();
//! card.first_mes = "Hi, {{user}}!".into();
//! let chat = parse_chat(r#"[{"role":"user","content":"Where are we?"}]"#)?;
//! let lore = [LoreInsert::new("town", "Axel is a town of beginners.",
//!     InsertPosition::Depth { depth: 0, role: Role::System })];
//! let opts = PromptOptions {
//!     user_name: "Kazuma".into(),
//!     system_prompt: Some("You are a roleplay partner.".into()),
//!     ..Default::default()
//! };
//! let counter = TokenCounter::new(ccv3_tokens::Estimate);
//! let prompt = assemble(&card, &chat.messages, &lore, &opts, &mut SimpleExpander, &counter)?;
//! let messages = prompt.messages();
//! assert_eq!(messages[0].content,
//!     "You are a roleplay partner. Stay in character as Aqua.\n\nA water goddess.");
//! assert_eq!(messages[1].content, "Hi, Kazuma!");
//! assert_eq!(messages[3].content, "Axel is a town of beginners.");
//! assert!(InstructTemplate::chatml().render(&prompt).ends_with("<|im_start|>assistant\n"));
//! # Ok::<(), ccv3_prompt::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod adapters;
pub mod assemble;
mod chat;
pub mod defaults;
mod error;
mod expand;
mod file;
pub mod instruct;
mod lore;
pub mod render;
pub mod session;
pub mod template;
mod tokens;

pub use assemble::{
    assemble, Assembled, Cut, CutKind, CutReason, LoreUse, Part, PartKind, PromptOptions,
};
pub use chat::{
    parse_chat, parse_chat_with, seed_from_messages, Chat, ChatLimits, ChatMessage, Role,
    CHAT_SHAPES, MAX_CHAT_BYTES, MAX_CHAT_MESSAGES,
};
pub use error::Error;
pub use expand::{ExpandContext, Expander, SimpleExpander};
pub use instruct::{InstructTemplate, Wrap};
pub use lore::{InsertPosition, LoreInsert, UiPrompt};
pub use render::{to_text, Message, PromptReport, ReportCut, ReportLore, ReportMessage};
pub use session::{
    EngineSettings, Expanded, ReadBook, ScanOutcome, Session, SessionOptions, TurnOutcome,
};
pub use template::{Slot, Template};
pub use tokens::TokenCounter;
