//! `ccv3 lore scan`: which lorebook entries a chat activates, and why the others did not.

use super::{load, print, CliError, CmdResult};
use crate::output::write_atomic;
use ccv3::{Document, Lorebook};
use ccv3_lore::cli::{render_table, run_scan, write_cli_json, LoreScanArgs, Timing};
use ccv3_lore::{BookInput, BookKind, ScanState, Strategy};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

pub use crate::args::LoreScanArgs as Args;

/// A loaded `--book`: its lorebook, whether it came from a card, and the card's name.
struct Loaded {
    book: Lorebook,
    from_card: bool,
    card_char_name: Option<String>,
    name: String,
}

/// Runs one scan; with `--state`, reads the state first and writes the next state back.
pub fn run(args: Args) -> CmdResult {
    let t0 = Instant::now();
    let strategy = Strategy::parse(&args.strategy).ok_or_else(|| {
        CliError::file(
            Path::new("--strategy"),
            format!(
                "unknown strategy {:?}: use evenly, character-first or global-first",
                args.strategy
            ),
        )
    })?;
    let kind: ccv3_tokens::TokenizerKind = args
        .tokenizer
        .parse()
        .map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    // Building a BPE tokenizer takes a good part of a cold run: do it on the other core while
    // the books are read.
    let tokenizer_thread = std::thread::spawn(move || ccv3_tokens::load(&kind));
    let mut loaded = Vec::new();
    for path in &args.books {
        loaded.push(load_book(path)?);
    }
    let chat_text =
        std::fs::read_to_string(&args.chat).map_err(|e| CliError::file(&args.chat, e))?;
    let chat =
        ccv3_lore::chat::parse_chat(&chat_text).map_err(|e| CliError::file(&args.chat, e))?;
    let state = match &args.state {
        Some(p) if p.exists() => {
            let text = std::fs::read_to_string(p).map_err(|e| CliError::file(p, e))?;
            ScanState::from_json(&text).map_err(|e| CliError::file(p, e))?
        }
        _ => ScanState::default(),
    };
    let char_name = args
        .char_name
        .clone()
        .or_else(|| loaded.iter().find_map(|l| l.card_char_name.clone()))
        .unwrap_or_else(|| "Character".to_string());
    // The first card's book is the character book; every other book is global.
    let mut character_taken = false;
    let books: Vec<BookInput> = loaded
        .iter()
        .map(|l| {
            let kind = if l.from_card && !character_taken {
                character_taken = true;
                BookKind::Character
            } else {
                BookKind::Global
            };
            BookInput {
                book: &l.book,
                kind,
                name: l.name.clone(),
            }
        })
        .collect();
    let tokenizer = tokenizer_thread
        .join()
        .map_err(|_| CliError::file(Path::new("--tokenizer"), "the tokenizer failed to load"))?
        .map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    let load_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let scan_args = LoreScanArgs {
        books,
        chat,
        state,
        seed: args.seed,
        greeting: args.greeting,
        char_name,
        user_name: args.user.clone(),
        recursive: args.recursive,
        scan_depth: args.scan_depth,
        strategy,
        tokenizer: tokenizer.as_ref(),
    };
    let out = run_scan(&scan_args);
    if let Some(p) = &args.state {
        write_atomic(p, out.result.state.to_json().as_bytes()).map_err(|e| CliError::file(p, e))?;
    }
    if args.json {
        let timing = args.timing.then_some(Timing {
            load_ms,
            compile_ms: out.compile_ms,
            scan_ms: out.scan_ms,
        });
        let stdout = std::io::stdout().lock();
        let mut w = std::io::BufWriter::with_capacity(1 << 16, stdout);
        write_cli_json(&out, timing, &mut w)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush())?;
    } else {
        let mut text = render_table(&out);
        if args.timing {
            text.push_str(&format!(
                "timing: load {load_ms:.2} ms, compile {:.2} ms, scan {:.2} ms\n",
                out.compile_ms, out.scan_ms
            ));
        }
        print(&text)?;
    }
    for d in &out.diagnostics {
        eprintln!("ccv3: warning: {d}");
    }
    // The process ends next: handing a big book's million allocations back one by one would
    // cost more than the scan did, so they are left to the end of the process.
    std::mem::forget(out);
    std::mem::forget(scan_args);
    std::mem::forget(loaded);
    Ok(0)
}

fn load_book(path: &Path) -> Result<Loaded, CliError> {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    match load(path)? {
        Document::Card(cf) => {
            let char_name = cf.card.data.char_name().to_string();
            let book = cf
                .card
                .data
                .character_book
                .ok_or_else(|| CliError::file(path, "the card has no character_book"))?;
            Ok(Loaded {
                book,
                from_card: true,
                card_char_name: Some(char_name),
                name,
            })
        }
        Document::Lorebook(bf) => Ok(Loaded {
            book: bf.book,
            from_card: false,
            card_char_name: None,
            name,
        }),
    }
}
