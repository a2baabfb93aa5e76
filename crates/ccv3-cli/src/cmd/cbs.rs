//! `ccv3 cbs TEXT [--card FILE] [--char NAME] [--user NAME] [--chat CHAT] [--seed N] [--now T]
//! [--display]`.

use super::{print, CliError, CmdResult};
use ccv3_cbs::{Mode, Variables};
use ccv3_lore::chat::Chat;
use ccv3_prompt::{Session, SessionOptions};
use std::path::Path;
use std::sync::Arc;

pub use crate::args::CbsArgs as Args;

/// Expands the text and prints it (no trailing newline is added beyond the text's own).
pub fn run(args: Args) -> CmdResult {
    let limits = &args.limits;
    let text = if args.text == "-" {
        limits.read_text(Path::new("<stdin>"), std::io::stdin().lock())?
    } else {
        args.text
    };
    let card = match &args.card {
        Some(path) => match limits.load(path)? {
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
    let options = SessionOptions {
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
    print(&out.text)?;
    Ok(0)
}
