//! `ccv3 cbs TEXT [--card FILE] [--char NAME] [--user NAME] [--chat CHAT] [--seed N] [--now T]
//! [--display]`.

use super::{load, print, CliError, CmdResult};
use ccv3_cbs::{Mode, Variables};
use ccv3_lore::chat::{Chat, MAX_CHAT_BYTES};
use ccv3_prompt::{Session, SessionOptions};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

pub use crate::args::CbsArgs as Args;

/// Expands the text and prints it (no trailing newline is added beyond the text's own).
pub fn run(args: Args) -> CmdResult {
    let text = if args.text == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| CliError::file(Path::new("<stdin>"), e))?;
        s
    } else {
        args.text
    };
    let card = match &args.card {
        Some(path) => match load(path)? {
            ccv3::Document::Card(cf) => Some(cf.card.data),
            ccv3::Document::Lorebook(_) => {
                return Err(CliError::file(path, "is a lorebook, not a card"))
            }
        },
        None => None,
    };
    let chat = match &args.chat {
        Some(path) => load_chat(path)?,
        None => Chat::default(),
    };
    let options = SessionOptions {
        user_name: args.user,
        char_name: args.char_name,
        seed: args.seed,
        now: Some(args.now.unwrap_or_else(crate::now::clock)),
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
    crate::warnings::print_capped(
        out.warnings
            .iter()
            .map(|w| (w.kind().to_string(), w.render(&text))),
    );
    print(&out.text)?;
    Ok(0)
}

/// Reads a chat file (at most [`MAX_CHAT_BYTES`]) with ccv3's one chat reader, naming the file
/// on failure.
pub fn load_chat(path: &Path) -> Result<Chat, CliError> {
    let file = std::fs::File::open(path).map_err(|e| CliError::file(path, e))?;
    let mut bytes = Vec::new();
    file.take(MAX_CHAT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::file(path, e))?;
    if bytes.len() > MAX_CHAT_BYTES {
        return Err(CliError::file(
            path,
            format!("the chat is larger than {MAX_CHAT_BYTES} bytes"),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| CliError::file(path, e))?;
    ccv3_lore::chat::parse_chat(&text).map_err(|e| CliError::file(path, e))
}
