//! One chat turn from Rust: read a card, scan its lorebook, assemble the prompt, print what
//! `ccv3 prompt --json` prints.
//!
//! `cargo run -p ccv3-prompt --example turn -- examples/ember.png "What are the Teeth?"`
use ccv3_prompt::{Chat, ChatMessage, Session, SessionOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "examples/ember.png".into());
    let said = args.next().unwrap_or_else(|| "What are the Teeth?".into());

    let ccv3::Document::Card(file) = ccv3::read_file(path.as_ref())? else {
        return Err(format!("{path} is a lorebook, not a card").into());
    };
    let tokenizer = std::sync::Arc::new(ccv3_tokens::Tiktoken::o200k()?);
    let session =
        Session::new(SessionOptions::default(), tokenizer).with_card(&file.card.data, &path);
    let chat = Chat::from(vec![ChatMessage::user(said)]);
    // Activations, the assembled prompt and the next state (pass it to the next turn).
    let turn = session.prompt(&chat, &Default::default())?;
    println!("{}", serde_json::to_string_pretty(&turn.report())?);
    Ok(())
}
