//! `ccv3 cbs TEXT [--card FILE] [--char NAME] [--user NAME] [--chat CHAT] [--seed N] [--display]`.

use super::{load, print, CliError, CmdResult};
use ccv3_cbs::{Mode, Template, Variables};
use ccv3_prompt::adapters::CbsExpander;
use ccv3_prompt::{ChatMessage, PromptOptions};
use std::io::Read;
use std::path::Path;

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
            ccv3::Document::Card(cf) => cf.card.data,
            ccv3::Document::Lorebook(_) => {
                return Err(CliError::file(path, "is a lorebook, not a card"))
            }
        },
        None => ccv3::CardData::default(),
    };
    let chat = match &args.chat {
        Some(path) => load_chat(path)?,
        None => Vec::new(),
    };
    let opts = PromptOptions {
        user_name: args.user,
        char_name: args.char_name,
        seed: args.seed.unwrap_or_else(|| seed_from_chat(&chat)),
        ..PromptOptions::default()
    };
    let expander = CbsExpander::new(&card, &chat, &opts);
    let mode = if args.display {
        Mode::Display
    } else {
        Mode::Prompt
    };
    let out = Template::parse(&text).expand(&expander.context, &mut Variables::new(), mode);
    for w in &out.warnings {
        eprintln!("ccv3: warning: {}", w.render(&text));
    }
    print(&out.text)?;
    Ok(0)
}

/// Reads a chat file, naming it on failure.
pub fn load_chat(path: &Path) -> Result<Vec<ChatMessage>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::file(path, e))?;
    let chat = ccv3_lore::chat::parse_chat(&text).map_err(|e| CliError::file(path, e))?;
    Ok(ccv3_prompt::adapters::chat_from_lore(&chat))
}

/// A seed that is the same for the same chat (FNV-1a over the messages), so `{{pick}}` gives
/// the same choice when the same prompt is built again.
pub fn seed_from_chat(chat: &[ChatMessage]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for m in chat {
        for b in m.content.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}
