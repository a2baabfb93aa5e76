//! Everything behind `ccv3 lore scan`: one call from the command's options to a result, and the
//! two renderers.
//!
//! # `--json` output
//! ```text
//! {"activated":[{"book":B,"index":I,"name":N,"content":C,"position":P,"depth":D,"role":R,"reason":S}],
//!  "rejected":[{"book":B,"index":I,"name":N,"reason":S}],
//!  "tokens":T,
//!  "timing":{"load_ms":L,"compile_ms":M,"scan_ms":K}}      (only with --timing)
//! ```
//! `activated` is in prompt order; `B` is the book's display name, `I` the entry's place in its
//! book's entries as read; `content` has its decorators removed; `depth` and `role` are `null`
//! unless the entry goes in the chat at a depth (or has `@@role`); `reason` is the explanation
//! in words (`key "dragon" in message 3`, `constant`, `sticky`, `decorator @@activate`, ...).
//! `rejected` lists every other entry, in book order, with the rule that stopped it (`disabled`,
//! `no keys`, `no key matched`, `secondary logic AND_ANY`, `scan depth (...)`,
//! `decorator @@is_greeting`, `probability roll ...`, `group ...`, `cooldown`, `delay`,
//! `budget (...)`, `empty content`, ...).

use crate::chat::Chat;
use crate::{BookInput, EntryRef, LorebookCompiler, ScanOptions, ScanResult, ScanState, Strategy};
use ccv3::Diagnostic;
use ccv3_tokens::Tokenizer;
use serde_json::{json, Value};
use std::time::Instant;

/// The options of `ccv3 lore scan`, with books already loaded.
pub struct LoreScanArgs<'a> {
    /// The books: the first card's book as [`crate::BookKind::Character`], standalone books as
    /// global ones, each with a display name.
    pub books: Vec<BookInput<'a>>,
    /// The chat, oldest message first.
    pub chat: Chat,
    /// The state from the previous turn (`Default` for a new chat).
    pub state: ScanState,
    /// `--seed`.
    pub seed: u64,
    /// `--greeting`: the active greeting index (0 = `first_mes`).
    pub greeting: Option<usize>,
    /// `--char`: the character name for macros and unnamed messages.
    pub char_name: String,
    /// `--user`: the user name for macros and unnamed messages.
    pub user_name: String,
    /// `--recursive`: recursion for books that do not say.
    pub recursive: bool,
    /// `--scan-depth`: the scan depth for books that do not say.
    pub scan_depth: Option<u64>,
    /// `--strategy`.
    pub strategy: Strategy,
    /// `--tokenizer`.
    pub tokenizer: &'a dyn Tokenizer,
}

/// The result of [`run_scan`].
#[derive(Debug)]
pub struct LoreScanOutput<'a> {
    /// The scan result (its `state` is what `--state` writes back).
    pub result: ScanResult<'a>,
    /// The books' display names, in input order.
    pub book_names: Vec<String>,
    /// Compile diagnostics (invalid regex keys, decorator problems).
    pub diagnostics: Vec<Diagnostic>,
    /// Milliseconds spent compiling.
    pub compile_ms: f64,
    /// Milliseconds spent scanning.
    pub scan_ms: f64,
    /// The compiled books (kept so that a caller about to exit need not free them).
    pub compiled: crate::CompiledBooks<'a>,
}

/// `--timing` figures.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timing {
    /// Reading and parsing the input files.
    pub load_ms: f64,
    /// Compiling the books.
    pub compile_ms: f64,
    /// The scan.
    pub scan_ms: f64,
}

/// Compiles the books and scans the chat, explaining every entry.
pub fn run_scan<'a>(args: &LoreScanArgs<'a>) -> LoreScanOutput<'a> {
    let t0 = Instant::now();
    // One scan per call: no automata over every key of the books, only over those that can
    // occur in the chat.
    let compiled = LorebookCompiler::new()
        .names(&args.char_name, &args.user_name)
        .strategy(args.strategy)
        .for_single_scan(true)
        .compile(&args.books);
    let compile_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let mut opts = ScanOptions {
        recursive: args.recursive,
        seed: args.seed,
        greeting: args.greeting,
        char_name: args.char_name.clone(),
        user_name: args.user_name.clone(),
        explain_all: true,
        ..Default::default()
    };
    if let Some(d) = args.scan_depth {
        opts.scan_depth = d;
    }
    let t1 = Instant::now();
    let mut result = compiled.scan(&args.chat, &args.state, &opts, args.tokenizer);
    let scan_ms = t1.elapsed().as_secs_f64() * 1000.0;
    result
        .diagnostics
        .splice(0..0, compiled.diagnostics().iter().cloned());
    LoreScanOutput {
        result,
        book_names: args.books.iter().map(|b| b.name.clone()).collect(),
        diagnostics: compiled.diagnostics().to_vec(),
        compile_ms,
        scan_ms,
        compiled,
    }
}

fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        json!(f as i64)
    } else {
        json!(f)
    }
}

/// The `--json` output (see the module docs) as a tree: what [`write_cli_json`] writes, read
/// back (one encoder of the contract, not two).
pub fn to_cli_json(out: &LoreScanOutput<'_>, timing: Option<Timing>) -> Value {
    let mut text = Vec::new();
    // Writing to memory cannot fail, and the text is JSON of our own making.
    if write_cli_json(out, timing, &mut text).is_err() {
        return Value::Null;
    }
    serde_json::from_slice(&text).unwrap_or(Value::Null)
}

/// Writes the `--json` output straight to `w`, without building a tree of it first: with every
/// entry explained, that tree is most of the memory a cold scan of a big book touches.
pub fn write_cli_json<W: std::io::Write>(
    out: &LoreScanOutput<'_>,
    timing: Option<Timing>,
    w: &mut W,
) -> std::io::Result<()> {
    use std::fmt::Write as _;
    let book = |b: usize| out.book_names.get(b).map(String::as_str).unwrap_or("");
    let text = |w: &mut W, s: &str| serde_json::to_writer(&mut *w, s).map_err(std::io::Error::from);
    // `{"book":B,"index":I,"name":N` (with a comma before all but the first item).
    let head = |w: &mut W, first: bool, at: EntryRef, name: Option<&str>| {
        w.write_all(if first { b"{\"book\":" } else { b",{\"book\":" })?;
        text(w, book(at.book))?;
        write!(w, ",\"index\":{},\"name\":", at.index)?;
        match name {
            Some(n) => text(w, n),
            None => w.write_all(b"null"),
        }
    };
    // `,"reason":R}`
    let mut reason = String::new();
    let mut tail = |w: &mut W, why: &dyn std::fmt::Display| {
        reason.clear();
        let _ = write!(reason, "{why}");
        w.write_all(b",\"reason\":")?;
        text(w, &reason)?;
        w.write_all(b"}")
    };
    w.write_all(b"{\"activated\":[")?;
    for (i, a) in out.result.activated.iter().enumerate() {
        head(w, i == 0, a.entry, a.name)?;
        w.write_all(b",\"content\":")?;
        text(w, a.content)?;
        w.write_all(b",\"position\":")?;
        text(w, a.position.as_str())?;
        match a.depth {
            Some(d) => write!(w, ",\"depth\":{d}")?,
            None => w.write_all(b",\"depth\":null")?,
        }
        w.write_all(b",\"role\":")?;
        match a.role {
            Some(r) => text(w, r.as_str())?,
            None => w.write_all(b"null")?,
        }
        tail(w, &a.reason)?;
    }
    w.write_all(b"],\"rejected\":[")?;
    for (i, r) in out.result.rejected.iter().enumerate() {
        head(w, i == 0, r.entry, r.name)?;
        tail(w, &r.reason)?;
    }
    write!(w, "],\"tokens\":{}", out.result.tokens)?;
    if let Some(t) = timing {
        w.write_all(b",\"timing\":")?;
        let v = json!({"load_ms": num(round3(t.load_ms)), "compile_ms": num(round3(t.compile_ms)), "scan_ms": num(round3(t.scan_ms))});
        serde_json::to_writer(&mut *w, &v)?;
    }
    w.write_all(b"}")
}

fn round3(f: f64) -> f64 {
    (f * 1000.0).round() / 1000.0
}

fn cell(s: &str, width: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let n = one_line.chars().count();
    if n <= width {
        format!("{one_line:<width$}")
    } else {
        let cut: String = one_line.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A readable table of the same data as [`to_cli_json`].
pub fn render_table(out: &LoreScanOutput<'_>) -> String {
    let book = |b: usize| out.book_names.get(b).map(String::as_str).unwrap_or("");
    let mut s = String::new();
    s.push_str(&format!(
        "activated: {} entries, {} tokens\n",
        out.result.activated.len(),
        out.result.tokens
    ));
    s.push_str(&format!(
        "  {} {} {} {} {}\n",
        cell("book#index", 22),
        cell("name", 24),
        cell("position", 14),
        cell("reason", 36),
        "content"
    ));
    for a in &out.result.activated {
        let pos = match a.depth {
            Some(d) => format!("{}@{d}", a.position.as_str()),
            None => a.position.as_str().to_string(),
        };
        s.push_str(&format!(
            "  {} {} {} {} {}\n",
            cell(&format!("{}#{}", book(a.entry.book), a.entry.index), 22),
            cell(a.name.unwrap_or("-"), 24),
            cell(&pos, 14),
            cell(&a.reason.to_string(), 36),
            cell(a.content, 40).trim_end()
        ));
    }
    s.push_str(&format!(
        "rejected: {} entries\n",
        out.result.rejected.len()
    ));
    for r in &out.result.rejected {
        s.push_str(&format!(
            "  {} {} {}\n",
            cell(&format!("{}#{}", book(r.entry.book), r.entry.index), 22),
            cell(r.name.unwrap_or("-"), 24),
            r.reason
        ));
    }
    s
}
