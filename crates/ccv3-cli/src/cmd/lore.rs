//! `ccv3 lore scan`: which lorebook entries a chat activates, and why the others did not.
//!
//! # `--json` output
//! ```text
//! {"activated":[{"book":B,"index":I,"name":N,"content":C,"position":P,"depth":D,"role":R,"reason":S}],
//!  "rejected":[{"book":B,"index":I,"name":N,"reason":S}],
//!  "tokens":T,
//!  "timing":{"load_ms":L,"compile_ms":M,"scan_ms":K}}      (only with --timing)
//! ```
//! Everything but `timing` is [`ccv3_lore::ScanReport`] (see its docs for the fields).

use super::validate::plural;
use crate::error::{CliError, CmdResult};
use crate::limits::InputLimits;
use ccv3::{Document, Lorebook};
use ccv3_lore::Strategy;
use ccv3_prompt::{ReadBook, ScanOutcome, Session, SessionOptions};
use serde::Serialize;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

pub use crate::args::LoreScanArgs as Args;

/// A loaded `--book`: its lorebook, the card it came from, and its file name.
struct Loaded {
    book: Lorebook,
    /// The card the book came from, without its book (its names, tags and texts serve
    /// entries' character filters and `match_*` flags).
    card: Option<ccv3::CardData>,
    name: String,
    /// Read from a SillyTavern World Info file (`ccv3_lore::BookInput::world_info`).
    world_info: bool,
    /// `--book-kind`.
    kind: Option<ccv3_lore::BookKind>,
}

/// `--timing` figures, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Timing {
    /// Reading and parsing the input files.
    load_ms: f64,
    /// Compiling the books.
    compile_ms: f64,
    /// The scan.
    scan_ms: f64,
}

/// The `--json` document: the library's report, plus `timing` with `--timing`.
#[derive(Serialize)]
struct ScanJson<'r> {
    activated: &'r [ccv3_lore::ActivatedItem<'r>],
    rejected: &'r [ccv3_lore::RejectedItem<'r>],
    tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    timing: Option<Value>,
}

/// Runs one scan; with `--state`, reads the state first and writes the next state back.
pub fn run(args: Args) -> CmdResult {
    let t0 = Instant::now();
    let output = args.output.as_deref();
    InputLimits::check_state_output(args.state.as_deref(), output)?;
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
    // The chat first: the memory its reading takes for a moment is free again for the books.
    let chat = args.limits.load_chat(&args.chat)?;
    let mut loaded = Vec::new();
    for (i, path) in args.books.iter().enumerate() {
        let mut l = load_book(&args.limits, path)?;
        l.kind = args.book_kinds.get(i).copied();
        loaded.push(l);
    }
    let mut state = args.limits.load_state(args.state.as_deref())?;
    let st_timed = match &args.st_timed {
        Some(p) => Some(args.limits.load_state_json(p, "--st-timed")?),
        None => None,
    };
    let st_activated = match &args.st_activated {
        Some(p) => {
            let v = args.limits.load_state_json(p, "--st-activated")?;
            let set = ccv3_lore::st_activated_set(&v).map_err(|e| CliError::file(p, e))?;
            Some(std::sync::Arc::new(set))
        }
        None => None,
    };
    let tokenizer = tokenizer_thread
        .join()
        .map_err(|_| CliError::file(Path::new("--tokenizer"), "the tokenizer failed to load"))?
        .map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    // What is not given is the library's default (issue 26: the bindings' scan is the same):
    // `{{char}}` the first card's name, greeting 0, `auto` the first card's dialect.
    let defaults = SessionOptions::default();
    let options = SessionOptions {
        user_name: args.user.clone(),
        char_name: args.char_name.clone(),
        greeting: args.greeting.or(defaults.greeting),
        scan_depth: args.scan_depth,
        recursive: args.recursive,
        strategy,
        seed: args.seed,
        // One scan per call: no automata over every key of the books, only over those that can
        // occur in the chat.
        single_scan: true,
        engine: args.engine.settings(),
        dialect: args.dialect,
        compat: args.compat.unwrap_or_default(),
        // A big book compiled, and many cut entries explained, on two threads.
        threads: true,
        ..defaults
    };
    // The first card's book is the character book; every other book is global.
    let session =
        Session::new(options, tokenizer).with_read_books(loaded.iter().map(|l| ReadBook {
            book: &l.book,
            card: l.card.as_ref(),
            name: l.name.clone(),
            file: l.card.as_ref().map(|_| l.name.clone()),
            kind: l.kind,
            world_info: l.world_info,
        }));
    let mut session = session;
    session.set_st_activated(st_activated);
    if let Some(t) = &st_timed {
        let st = session.compiled().st_timed_state(t);
        state.sticky = st.sticky;
        state.cooldown = st.cooldown;
    }
    let load_ms = ms(t0);
    session
        .check_books()
        .map_err(|e| CliError::file(args.books.first().map_or(Path::new("--book"), |p| p), e))?;
    let t1 = Instant::now();
    session.compiled();
    let compile_ms = ms(t1);
    let t2 = Instant::now();
    let out = session.scan(&chat, &state);
    let scan_ms = ms(t2);
    if let Some(p) = args.state.as_deref().filter(|p| !crate::stdio::is_dash(p)) {
        args.limits.write_state(p, out.state())?;
    }
    let mut w = crate::output::Out::open(output)?;
    if args.json {
        let timing = args.timing.then_some(Timing {
            load_ms,
            compile_ms,
            scan_ms,
        });
        write_json(&out, timing, &mut w).and_then(|()| w.write_all(b"\n"))?;
    } else {
        let mut text = render_table(&out);
        if args.timing {
            text.push_str(&format!(
                "timing: load {load_ms:.2} ms, compile {compile_ms:.2} ms, scan {scan_ms:.2} ms\n"
            ));
        }
        w.write_all(text.as_bytes())?;
    }
    w.finish()?;
    // With `--state -`, the next state follows on standard output.
    if let Some(p) = args.state.as_deref().filter(|p| crate::stdio::is_dash(p)) {
        args.limits.write_state(p, out.state())?;
    }
    // The books' compile diagnostics, then the scan's own (a regex budget that ran out).
    crate::warnings::print_diagnostics(&out.result.diagnostics);
    // The process ends next: handing a big book's million allocations back one by one would
    // cost more than the scan did, so they are left to the end of the process.
    std::mem::forget(out);
    std::mem::forget(session);
    std::mem::forget(loaded);
    Ok(0)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        json!(f as i64)
    } else {
        json!(f)
    }
}

fn round3(f: f64) -> f64 {
    (f * 1000.0).round() / 1000.0
}

/// Writes the `--json` document straight to `w` (streamed: with every entry explained, a tree
/// of it would be most of the memory a cold scan of a big book touches).
fn write_json<W: Write>(
    out: &ScanOutcome<'_>,
    timing: Option<Timing>,
    w: &mut W,
) -> std::io::Result<()> {
    let report = out.report();
    let doc = ScanJson {
        activated: &report.activated,
        rejected: &report.rejected,
        tokens: report.tokens,
        timing: timing.map(|t| {
            json!({"load_ms": num(round3(t.load_ms)), "compile_ms": num(round3(t.compile_ms)), "scan_ms": num(round3(t.scan_ms))})
        }),
    };
    serde_json::to_writer(w, &doc).map_err(std::io::Error::from)
}

/// `s` in a column `width` terminal columns wide: control characters escaped
/// ([`crate::shown::shown`]), East Asian wide characters counted as two columns, cut with `…`
/// when too long, padded with spaces when short.
fn cell(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let shown = crate::shown::shown(s);
    let cols = columns(&shown);
    if cols <= width {
        let mut out = shown.into_owned();
        out.extend(std::iter::repeat_n(' ', width - cols));
        return out;
    }
    let mut out = String::new();
    let mut used = 0usize;
    for c in shown.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width.saturating_sub(1) {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    used += 1;
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// How many terminal columns `s` takes (East Asian wide characters count two).
fn columns(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// A readable table of the same data as the `--json` document.
fn render_table(out: &ScanOutcome<'_>) -> String {
    let book = |b: usize| out.book_names.get(b).map(String::as_str).unwrap_or("");
    // `book#index` is never cut: its column is as wide as its widest value (at least 22).
    let at = |b: usize, i: usize| crate::shown::shown(&format!("{}#{i}", book(b))).into_owned();
    let first = out
        .result
        .activated
        .iter()
        .map(|a| at(a.entry.book, a.entry.index))
        .chain(
            out.result
                .rejected
                .iter()
                .map(|r| at(r.entry.book, r.entry.index)),
        )
        .map(|s| columns(&s))
        .fold(22, usize::max);
    let mut s = String::new();
    s.push_str(&format!(
        "activated: {}, {}\n",
        plural(out.result.activated.len(), "entry", "entries"),
        plural(out.result.tokens, "token", "tokens")
    ));
    s.push_str(&format!(
        "  {} {} {} {} {}\n",
        cell("book#index", first),
        cell("name", 24),
        cell("position", 14),
        cell("reason", 36),
        "content"
    ));
    for a in &out.result.activated {
        let mut pos = match a.depth {
            Some(d) => format!("{}@{d}", a.position.as_str()),
            None => a.position.as_str().to_string(),
        };
        if a.position_default {
            pos.push('*');
        }
        s.push_str(&format!(
            "  {} {} {} {} {}\n",
            cell(&at(a.entry.book, a.entry.index), first),
            cell(a.name.unwrap_or("-"), 24),
            cell(&pos, 14),
            cell(&a.reason.to_string(), 36),
            cell(a.content, 40).trim_end()
        ));
    }
    if out.result.activated.iter().any(|a| a.position_default) {
        s.push_str(
            "* no position written: after_char, where SillyTavern's card import places it\n",
        );
    }
    if out
        .result
        .activated
        .iter()
        .any(|a| a.position == ccv3_lore::Position::Nowhere)
    {
        s.push_str(
            "nowhere: a World Info entry without a position SillyTavern places: activated, in no prompt slot\n",
        );
    }
    s.push_str(&format!(
        "rejected: {}\n",
        plural(out.result.rejected.len(), "entry", "entries")
    ));
    for r in &out.result.rejected {
        s.push_str(&format!(
            "  {} {} {}\n",
            cell(&at(r.entry.book, r.entry.index), first),
            cell(r.name.unwrap_or("-"), 24),
            crate::shown::shown(&r.reason.to_string())
        ));
    }
    s
}

fn load_book(limits: &InputLimits, path: &Path) -> Result<Loaded, CliError> {
    let name = crate::stdio::in_name(path).file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    match limits.load(path, "--book")? {
        Document::Card(cf) => {
            let mut card = cf.card.data;
            let book = card
                .character_book
                .take()
                .ok_or_else(|| CliError::file(path, "the card has no character_book"))?;
            Ok(Loaded {
                book,
                card: Some(card),
                name,
                world_info: false,
                kind: None,
            })
        }
        Document::Lorebook(bf) => Ok(Loaded {
            world_info: bf.format == ccv3::lorebook::BookFormat::WorldInfo,
            book: bf.book,
            card: None,
            name,
            kind: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccv3_lore::chat::{Chat, Message};
    use ccv3_lore::BookKind;
    use serde_json::json;

    fn book(entries: Value) -> Lorebook {
        let mut d = Vec::new();
        Lorebook::from_json(json!({ "entries": entries }), "", false, &mut d).expect("book")
    }

    fn entry(keys: &[&str], content: &str) -> Value {
        json!({"keys": keys, "content": content, "extensions": {}, "enabled": true, "insertion_order": 100, "use_regex": false})
    }

    /// `ccv3 lore scan --json --timing` (README): the report's fields, then `timing`.
    #[test]
    fn lore_scan_json_shape_with_timing_and_table() {
        let b = book(json!([
            entry(&["a"], "@@depth 2\nHello"),
            entry(&["a"], ""),
            entry(&["zz"], "Z")
        ]));
        let options = SessionOptions {
            char_name: Some("Aqua".into()),
            seed: Some(1),
            greeting: Some(0),
            single_scan: true,
            ..SessionOptions::default()
        };
        let session = Session::new(options, std::sync::Arc::new(ccv3_tokens::Estimate)).with_book(
            &b,
            BookKind::Character,
            "card",
        );
        let out = session.scan(
            &Chat::from(vec![Message::user("a")]),
            &ccv3_lore::ScanState::default(),
        );
        let timing = Timing {
            load_ms: 1.0,
            compile_ms: 2.25,
            scan_ms: 3.0004,
        };
        let mut text = Vec::new();
        write_json(&out, Some(timing), &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["activated", "rejected", "tokens", "timing"]);
        assert_eq!(v["activated"][0]["book"], "card");
        assert_eq!(v["activated"][0]["content"], "Hello");
        assert_eq!(v["activated"][0]["depth"], 2);
        assert_eq!(v["rejected"][0]["reason"], "empty content");
        assert_eq!(v["rejected"][1]["reason"], "no key matched");
        assert_eq!(v["tokens"], 2);
        assert_eq!(
            v["timing"],
            json!({"load_ms": 1, "compile_ms": 2.25, "scan_ms": 3})
        );
        assert!(text.ends_with(r#""timing":{"load_ms":1,"compile_ms":2.25,"scan_ms":3}}"#));
        let mut bare = Vec::new();
        write_json(&out, None, &mut bare).unwrap();
        assert_eq!(
            String::from_utf8(bare).unwrap(),
            serde_json::to_string(&out.report()).unwrap()
        );
        let table = render_table(&out);
        assert!(
            table.contains("card#0") && table.contains("empty content"),
            "{table}"
        );
    }

    /// Issue 16 "Tables": East Asian wide characters take two columns, control characters are
    /// escaped, and cut cells end in `…` at the column's width.
    #[test]
    fn cells_measure_wide_characters_and_escape_controls() {
        assert_eq!(cell("ab", 4), "ab  ");
        assert_eq!(cell("日本", 6), "日本  ");
        assert_eq!(columns(&cell("日本語の名前です", 7)), 7);
        assert_eq!(cell("日本語の名前です", 7), "日本語…");
        assert_eq!(cell("日本語の名前です", 8), "日本語… ");
        assert_eq!(cell("a\nb\x1b[2J", 12), "a\\nb\\x1b[2J ");
        assert_eq!(cell("abcdef", 4), "abc…");
    }

    /// Issue 16 "Tables": `book#index` is never cut, however long the book's name.
    #[test]
    fn book_index_column_is_never_cut() {
        let b = book(json!([entry(&["a"], "A"), entry(&["zz"], "Z")]));
        let name = "a-very-long-book-file-name-with-日本語.json";
        let session = Session::new(
            SessionOptions::default(),
            std::sync::Arc::new(ccv3_tokens::Estimate),
        )
        .with_book(&b, BookKind::Global, name);
        let out = session.scan(
            &Chat::from(vec![Message::user("a")]),
            &ccv3_lore::ScanState::default(),
        );
        let table = render_table(&out);
        assert!(table.contains(&format!("{name}#0 ")), "{table}");
        assert!(table.contains(&format!("{name}#1 ")), "{table}");
        // Every row's second column starts at the same terminal column.
        let starts: Vec<usize> = table
            .lines()
            .filter(|l| l.starts_with("  "))
            .map(|l| columns(&l[..l.find(" A ").or(l.find(" - ")).or(l.find(" name")).unwrap()]))
            .collect();
        assert!(
            starts.windows(2).all(|w| w[0] == w[1]),
            "{starts:?}\n{table}"
        );
    }
}
