//! `ccv3 prompt`: a card, its lorebooks and a chat become the messages a model receives.
//!
//! `--json` prints [`ccv3_prompt::PromptReport`] (`{"messages","tokens","lore","cut"}`, plus
//! `over_limit` when the prompt does not fit), plus `text` (the prompt rendered through the
//! instruct template) with `--instruct`.
//!
//! Exit codes: 0, or 1 when the prompt is still over `--max-context` after every cut (the prompt
//! is printed all the same, with a warning on stderr); 2 when it cannot be built.

use crate::error::{CliError, CmdResult};
use crate::output::emit;
use ccv3::{Document, Lorebook};
use ccv3_lore::BookKind;
use ccv3_prompt::{
    InstructTemplate, ReportCut, ReportLore, ReportMessage, Session, SessionOptions, Template,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub use crate::args::PromptArgs as Args;

/// The `--json` document: the library's report, plus `text` with `--instruct`.
#[derive(Serialize)]
struct PromptJson<'r> {
    messages: &'r [ReportMessage],
    tokens: usize,
    lore: &'r [ReportLore],
    cut: &'r [ReportCut],
    #[serde(skip_serializing_if = "Option::is_none")]
    over_limit: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

/// Builds the prompt and prints it; with `--state`, writes the next state back.
pub fn run(args: Args) -> CmdResult {
    let flag = |name: &str| PathBuf::from(name);
    let kind: ccv3_tokens::TokenizerKind = args
        .tokenizer
        .parse()
        .map_err(|e| CliError::file(&flag("--tokenizer"), e))?;
    let tokenizer_thread = std::thread::spawn(move || ccv3_tokens::load(&kind));

    let limits = &args.limits;
    let output = args.output.as_deref();
    crate::limits::InputLimits::check_state_output(args.state.as_deref(), output)?;
    // The chat first: the memory its reading takes for a moment is free again for the books.
    let chat = limits.load_chat(&args.chat)?;
    let card = match limits.load(&args.card, "--card")? {
        Document::Card(cf) => cf.card.data,
        Document::Lorebook(_) => {
            return Err(CliError::file(&args.card, "is a lorebook, not a card"))
        }
    };
    let mut globals: Vec<(String, Lorebook)> = Vec::new();
    for path in &args.books {
        let name = display_name(path);
        match limits.load(path, "--book")? {
            Document::Card(cf) => match cf.card.data.character_book {
                Some(b) => globals.push((name, b)),
                None => return Err(CliError::file(path, "the card has no character_book")),
            },
            Document::Lorebook(bf) => globals.push((name, bf.book)),
        }
    }
    let state = limits.load_state(args.state.as_deref())?;
    let tokenizer = tokenizer_thread
        .join()
        .map_err(|_| CliError::file(&flag("--tokenizer"), "the tokenizer failed to load"))?
        .map_err(|e| CliError::file(&flag("--tokenizer"), e))?;
    let template = match &args.template {
        Some(p) if crate::stdio::is_dash(p) => {
            Template::from_json(&stdin_text("--template")?).map_err(|e| CliError::file(p, e))?
        }
        Some(p) => Template::from_file(p).map_err(|e| CliError::file(p, e))?,
        None => Template::default(),
    };
    let instruct = match args.instruct.as_deref() {
        Some("-") => Some(
            InstructTemplate::from_json(&stdin_text("--instruct")?)
                .map_err(|e| CliError::file(Path::new("-"), e))?,
        ),
        Some(name) => {
            Some(InstructTemplate::load(name).map_err(|e| CliError::file(Path::new(name), e))?)
        }
        None => None,
    };
    let options = SessionOptions {
        user_name: args.user.clone(),
        greeting: Some(args.greeting),
        seed: args.seed,
        system_prompt: args.system_prompt.clone(),
        max_context: args.max_context,
        template,
        now: Some(args.now.unwrap_or_else(crate::now::clock)),
        // One scan per call (same results; no automata over every key of the books).
        single_scan: true,
        cbs_budget: args.macros.budget(),
        engine: args.engine.settings(),
        dialect: args.dialect,
        compat: args.compat.unwrap_or_default(),
        // A big book compiled, and many cut entries explained, on two threads.
        threads: true,
        ..SessionOptions::default()
    }
    .with_instruct(instruct.as_ref());
    // The card's book is the character book, --book files are global.
    let mut session = Session::new(options, tokenizer).with_card(&card, display_name(&args.card));
    for (name, b) in &globals {
        session = session.with_book(b, BookKind::Global, name.clone());
    }
    session
        .check_books()
        .map_err(|e| CliError::file(args.books.first().unwrap_or(&args.card), e))?;
    let compile_notes = session.compiled().diagnostics().len();
    crate::warnings::print_diagnostics(session.compiled().diagnostics());
    let turn = session
        .prompt(&chat, &state)
        .map_err(|e| CliError::file(&args.card, e))?;
    // The scan's own warnings (a regex budget that ran out), after the books' ones.
    crate::warnings::print_diagnostics(turn.scan.diagnostics.iter().skip(compile_notes));

    // Macros cut by a bound say so (a card's own mistakes, like a bad argument, stay quiet).
    crate::warnings::print_capped(
        turn.warnings
            .iter()
            .filter(|w| crate::limits::is_bound(w))
            .map(crate::limits::macro_warning),
    );
    if let Some(p) = args.state.as_deref().filter(|p| !crate::stdio::is_dash(p)) {
        limits.write_state(p, &turn.state)?;
    }
    if args.json {
        let report = turn.report();
        let doc = PromptJson {
            messages: &report.messages,
            tokens: report.tokens,
            lore: &report.lore,
            cut: &report.cut,
            over_limit: report.over_limit,
            text: instruct.as_ref().map(|t| t.render(&turn.prompt)),
        };
        let mut text = serde_json::to_string(&doc).map_err(std::io::Error::from)?;
        text.push('\n');
        emit(output, &text)?;
    } else if let Some(t) = &instruct {
        emit(output, &t.render(&turn.prompt))?;
    } else {
        emit(output, &ccv3_prompt::to_text(&turn.prompt))?;
    }
    // With `--state -`, the next state follows on standard output.
    if let Some(p) = args.state.as_deref().filter(|p| crate::stdio::is_dash(p)) {
        limits.write_state(p, &turn.state)?;
    }
    // Issue 16: a prompt that still does not fit says so on stderr and exits 1.
    if let (Some(over), Some(max)) = (turn.prompt.overflow, args.max_context) {
        eprintln!(
            "ccv3: warning: the prompt is over --max-context {max} by {}: the parts that are never cut do not fit",
            super::validate::plural(over, "token", "tokens")
        );
        return Ok(1);
    }
    Ok(0)
}

/// The most bytes of a template read from standard input (the library's own limits, 64 KiB for
/// a prompt template and 1 MiB for an instruct template, apply to what is read).
const MAX_TEMPLATE_STDIN: u64 = 1 << 20;

/// A template's text from standard input (`--template -`, `--instruct -`).
fn stdin_text(what: &str) -> Result<String, CliError> {
    let bytes = crate::stdio::read(what, MAX_TEMPLATE_STDIN, "(templates are small)")?;
    String::from_utf8(bytes).map_err(|e| CliError::file(Path::new("-"), e))
}

fn display_name(path: &Path) -> String {
    let path = crate::stdio::in_name(path);
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
