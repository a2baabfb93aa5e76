//! `ccv3 prompt`: a card, its lorebooks and a chat become the messages a model receives.

use super::{load, print, CliError, CmdResult};
use crate::output::write_atomic;
use ccv3::{Document, Lorebook};
use ccv3_lore::{BookInput, BookKind, LorebookCompiler, ScanOptions, ScanState};
use ccv3_prompt::adapters::{chat_from_lore, inserts_from_activations, CbsExpander};
use ccv3_prompt::{InstructTemplate, PromptOptions, Template, TokenCounter};
use std::path::{Path, PathBuf};

pub use crate::args::PromptArgs as Args;

/// Builds the prompt and prints it; with `--state`, writes the next state back.
pub fn run(args: Args) -> CmdResult {
    let flag = |name: &str| PathBuf::from(name);
    let kind: ccv3_tokens::TokenizerKind = args
        .tokenizer
        .parse()
        .map_err(|e| CliError::file(&flag("--tokenizer"), e))?;
    let tokenizer_thread = std::thread::spawn(move || ccv3_tokens::load(&kind));

    let card = match load(&args.card)? {
        Document::Card(cf) => cf.card.data,
        Document::Lorebook(_) => {
            return Err(CliError::file(&args.card, "is a lorebook, not a card"))
        }
    };
    let mut globals: Vec<(String, Lorebook)> = Vec::new();
    for path in &args.books {
        let name = display_name(path);
        match load(path)? {
            Document::Card(cf) => match cf.card.data.character_book {
                Some(b) => globals.push((name, b)),
                None => return Err(CliError::file(path, "the card has no character_book")),
            },
            Document::Lorebook(bf) => globals.push((name, bf.book)),
        }
    }
    let chat_text =
        std::fs::read_to_string(&args.chat).map_err(|e| CliError::file(&args.chat, e))?;
    let lore_chat =
        ccv3_lore::chat::parse_chat(&chat_text).map_err(|e| CliError::file(&args.chat, e))?;
    let chat = chat_from_lore(&lore_chat);
    let seed = args
        .seed
        .unwrap_or_else(|| super::cbs::seed_from_chat(&chat));
    let state = match &args.state {
        Some(p) if p.exists() => {
            let text = std::fs::read_to_string(p).map_err(|e| CliError::file(p, e))?;
            ScanState::from_json(&text).map_err(|e| CliError::file(p, e))?
        }
        _ => ScanState::default(),
    };
    let tokenizer = tokenizer_thread
        .join()
        .map_err(|_| CliError::file(&flag("--tokenizer"), "the tokenizer failed to load"))?
        .map_err(|e| CliError::file(&flag("--tokenizer"), e))?;

    // The lorebook scan: the card's book is the character book, --book files are global.
    let card_name = display_name(&args.card);
    let mut books: Vec<BookInput> = Vec::new();
    if let Some(b) = &card.character_book {
        books.push(BookInput {
            book: b,
            kind: BookKind::Character,
            name: card_name,
        });
    }
    for (name, b) in &globals {
        books.push(BookInput {
            book: b,
            kind: BookKind::Global,
            name: name.clone(),
        });
    }
    let char_name = card.char_name().to_string();
    let compiled = LorebookCompiler::new()
        .names(&char_name, &args.user)
        .compile(&books);
    let scan_opts = ScanOptions {
        seed,
        greeting: Some(args.greeting),
        char_name: char_name.clone(),
        user_name: args.user.clone(),
        max_context: args.max_context,
        ..Default::default()
    };
    let result = compiled.scan(&lore_chat, &state, &scan_opts, tokenizer.as_ref());
    for d in compiled.diagnostics() {
        eprintln!("ccv3: warning: {d}");
    }
    let inserts = inserts_from_activations(&result, &books);

    let template = match &args.template {
        Some(p) => Template::from_file(p).map_err(|e| CliError::file(p, e))?,
        None => Template::default(),
    };
    let opts = PromptOptions {
        user_name: args.user.clone(),
        greeting: args.greeting,
        seed,
        system_prompt: args.system_prompt.clone(),
        max_context: args.max_context,
        template,
        ..PromptOptions::default()
    };
    let mut expander =
        CbsExpander::new(&card, &chat, &opts).with_variables(state.variables.clone());
    let counter = TokenCounter::from_arc(tokenizer);
    let assembled = ccv3_prompt::assemble(&card, &chat, &inserts, &opts, &mut expander, &counter)
        .map_err(|e| CliError::file(&args.card, e))?;

    if let Some(p) = &args.state {
        let mut next = result.state.clone();
        next.variables = expander.variables.clone();
        write_atomic(p, next.to_json().as_bytes()).map_err(|e| CliError::file(p, e))?;
    }
    let instruct = match &args.instruct {
        Some(name) => {
            Some(InstructTemplate::load(name).map_err(|e| CliError::file(Path::new(name), e))?)
        }
        None => None,
    };
    if args.json {
        let mut v = ccv3_prompt::to_cli_json(&assembled);
        if let Some(t) = &instruct {
            v["text"] = serde_json::Value::String(t.render(&assembled));
        }
        print(&format!("{v}\n"))?;
    } else if let Some(t) = &instruct {
        print(&t.render(&assembled))?;
    } else {
        print(&ccv3_prompt::to_text(&assembled))?;
    }
    Ok(0)
}

fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
