//! `ccv3 cbs TEXT [--card FILE] [--char NAME] [--user NAME] [--chat CHAT] [--seed N] [--now T]
//! [--display] [--dialect D]`, and `ccv3 cbs --list [--dialect D] [--json]` (the macros of a
//! dialect, from the library's catalog: `ccv3_cbs::Registry::macros`).

use crate::error::{CliError, CmdResult};
use crate::output::emit;
use ccv3_cbs::{Mode, Variables};
use ccv3_lore::chat::Chat;
use ccv3_prompt::{Session, SessionOptions};
use std::path::Path;
use std::sync::Arc;

pub use crate::args::CbsArgs as Args;

/// Expands the text and prints it (no trailing newline is added beyond the text's own).
pub fn run(args: Args) -> CmdResult {
    let limits = &args.limits;
    let text = match args.text.as_deref() {
        Some("-") => limits.read_text(Path::new("-"))?,
        Some(text) => text.to_owned(),
        None => String::new(),
    };
    let card = match &args.card {
        Some(path) => match limits.load(path, "--card")? {
            ccv3::Document::Card(cf) => Some(cf.card.data),
            ccv3::Document::Lorebook(_) => {
                return Err(CliError::file(path, "is a lorebook, not a card"))
            }
        },
        None => None,
    };
    let chat = match &args.chat {
        Some(path) => limits.load_chat(path)?,
        None => Chat::default(),
    };
    if args.list {
        let dialect = match &card {
            Some(card) => ccv3_prompt::adapters::card_dialect(card, args.dialect),
            None => args.dialect,
        };
        return list(dialect, args.json, args.output.as_deref());
    }
    let options = SessionOptions {
        dialect: args.dialect,
        user_name: args.user,
        char_name: args.char_name,
        seed: args.seed,
        now: Some(args.now.unwrap_or_else(crate::now::clock)),
        cbs_budget: args.macros.budget(),
        ..SessionOptions::default()
    };
    // No tokenizer is needed to expand macros.
    let mut session = Session::new(options, Arc::new(ccv3_tokens::Estimate));
    if let Some(card) = &card {
        session = session.with_card(card, "");
    }
    let mode = if args.display {
        Mode::Display
    } else {
        Mode::Prompt
    };
    let out = session.expand_macros(&text, &chat, &mut Variables::new(), mode);
    crate::warnings::print_capped(out.warnings.iter().map(|w| {
        let text = w.render(&text);
        match crate::limits::macro_hint(w) {
            Some(option) => (
                w.kind().to_string(),
                format!("{text}\n({option} raises it)"),
            ),
            None => (w.kind().to_string(), text),
        }
    }));
    emit(args.output.as_deref(), &out.text)?;
    Ok(0)
}

/// Prints the macros of `dialect`: one line each (usage, description, other names), or a JSON
/// array of `{name, usage, aliases, args, description, dialects, unavailable?}`.
fn list(dialect: ccv3_cbs::Dialect, json: bool, output: Option<&Path>) -> CmdResult {
    let macros = ccv3_cbs::Registry::dialect_ref(dialect).macros();
    if json {
        let items: Vec<serde_json::Value> = macros
            .iter()
            .map(|m| {
                let mut v = serde_json::to_value(m).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    o.insert("usage".into(), m.usage().into());
                }
                v
            })
            .collect();
        emit(output, &format!("{}\n", serde_json::Value::Array(items)))?;
        return Ok(0);
    }
    let mut out = String::new();
    for m in macros {
        let usage = m.usage();
        out.push_str(&format!("{usage:<32} {}", m.description));
        if !m.aliases.is_empty() {
            out.push_str(&format!(" (also {})", m.aliases.join(", ")));
        }
        if let Some(why) = m.unavailable {
            out.push_str(&format!(" [stays text: {why}]"));
        }
        out.push('\n');
    }
    emit(output, &out)?;
    Ok(0)
}
