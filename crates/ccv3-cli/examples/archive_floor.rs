//! What `ccv3 validate DIR` and `ccv3 index DIR` cost at their floor (issue 16, "Speed"): the
//! archive benchmark's folder read stage by stage, each stage timed alone (wall and CPU).
//!
//! ```text
//! cargo run --release -p ccv3-cli --example archive_floor -- DIR [--rounds N] [--threads N] [--json]
//! scripts/bench-archive --floor      # beside `ccv3 validate`, `ccv3 index` and tavern-card
//! ```
//!
//! An untimed pre-pass lists the PNG files under `DIR` (sorted, hidden names skipped) and finds
//! the offset and length of each one's `ccv3` tEXt value ([`ccv3::png::list_chunks`]); it also
//! reads every card (and keeps its text) into memory for stages f-h0. Then, per round:
//!
//! - a: open, one positional read of the `ccv3` value, close, base64 decode, UTF-8 check;
//! - b: a + `serde_json` into `IgnoredAny` (the parse alone, nothing built);
//! - c: a + `serde_json::Value` (a generic tree; `preserve_order` as in the workspace);
//! - d: a + ccv3's model read of the text ([`ccv3::Card::from_json_text`], no validation);
//! - e: d + validation ([`ccv3::validate_card`], PNG context);
//! - lib: the library's whole read of each file ([`ccv3::read_file_with`] with the CLI's
//!   options, the PNG walk included) + [`ccv3::check_document`], as `ccv3 validate` calls it;
//! - f: the o200k token counts `ccv3 index` stores ([`ccv3_cli::index_card::card_tokens`]);
//! - g: an FTS5 fill of the index's `cards_fts` (its [`ccv3_cli::index_card::SCHEMA`]), one
//!   thread, one transaction, in a database under the system's temporary folder;
//! - h: the card hash ([`ccv3_cli::index_card::card_hash`]);
//! - h0: SHA-256 alone of each card's JSON text as read (the hash's floor: `h` hashes the card
//!   written again, about as many bytes).
//!
//! Stages a-f, h and h0 run on `--threads` threads (default 2, like the CLI on this machine's two
//! cores) pulling batches of 32 cards; f-h0 work on text already in memory. CPU is the process's
//! user and system time (`getrusage`) over the stage. Each stage's median over the rounds is
//! printed; `--json` prints one JSON object per stage and round instead (for
//! `scripts/bench-archive.py`).

use ccv3::validate::ValidateContext;
use ccv3::Card;
use ccv3_cli::index_card::{card_hash, card_tokens, FTS_AUTOMERGE, SCHEMA};
use ccv3_tokens::Tokenizer;
use serde::de::IgnoredAny;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

// The allocator of the `ccv3` binary: card reading is allocation-heavy.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Cards handed to a worker at a time (the CLI's `pipeline::BATCH`).
const BATCH: usize = 32;

/// The most files taken from the folder.
const MAX_FILES: usize = 10_000_000;

/// Where a card's `ccv3` tEXt value is in its file.
struct Located {
    path: PathBuf,
    offset: u64,
    len: usize,
}

/// One stage's cost: wall, user and system seconds.
#[derive(Clone, Copy)]
struct Cost {
    wall: f64,
    user: f64,
    sys: f64,
}

/// The options of the command line.
struct Options {
    dir: PathBuf,
    rounds: usize,
    threads: usize,
    json: bool,
}

fn main() {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "archive_floor: {e}\nusage: archive_floor DIR [--rounds N] [--threads N] [--json]"
            );
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&opts) {
        eprintln!("archive_floor: {e}");
        std::process::exit(2);
    }
}

/// Reads the command line.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        dir: PathBuf::new(),
        rounds: 5,
        threads: 2,
        json: false,
    };
    let number = |v: Option<String>, flag: &str| -> Result<usize, String> {
        v.and_then(|v| v.parse().ok())
            .filter(|&n| (1..=1000).contains(&n))
            .ok_or_else(|| format!("{flag} takes a number from 1 to 1000"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => o.rounds = number(args.next(), "--rounds")?,
            "--threads" => o.threads = number(args.next(), "--threads")?,
            "--json" => o.json = true,
            _ if a.starts_with('-') => return Err(format!("unknown option {a}")),
            _ => o.dir = PathBuf::from(a),
        }
    }
    if o.dir.as_os_str().is_empty() {
        return Err("no folder given".into());
    }
    Ok(o)
}

/// The pre-pass, then every stage `rounds` times.
fn run(o: &Options) -> Result<(), String> {
    let mut files = Vec::new();
    list_pngs(&o.dir, &mut files)?;
    files.sort();
    let located: Vec<Located> = files
        .iter()
        .map(|p| locate(p))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    let b64: usize = located.iter().map(|l| l.len).sum();
    let mut cards: Vec<Card> = Vec::with_capacity(located.len());
    let mut texts: Vec<String> = Vec::with_capacity(located.len());
    for l in &located {
        let text = read_value(l).map_err(|e| format!("{}: {e}", l.path.display()))?;
        cards.push(model_read(&text).map_err(|e| format!("{}: {e}", l.path.display()))?);
        texts.push(text);
    }
    let kind: ccv3_tokens::TokenizerKind = "o200k".parse().map_err(|e| format!("{e}"))?;
    let tok = ccv3_tokens::load(&kind).map_err(|e| e.to_string())?;
    let db_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    if !o.json {
        println!(
            "{} PNG files, {} with a ccv3 chunk ({:.0} MB of base64), {} threads, median of {} rounds",
            files.len(),
            located.len(),
            b64 as f64 / 1e6,
            o.threads,
            o.rounds
        );
    }
    let mut ctx = Context {
        located: &located,
        cards,
        texts,
        threads: o.threads,
        tok: tok.as_ref(),
        db_dir: db_dir.path(),
        read_opts: ccv3::ReadOptions::default().mmap(true),
    };
    let mut results: Vec<Vec<Cost>> = vec![Vec::new(); STAGES.len()];
    for round in 0..o.rounds {
        for (i, (id, _)) in STAGES.iter().enumerate() {
            let cost = ctx.run(id)?;
            if o.json {
                println!(
                    "{{\"round\":{round},\"stage\":\"{id}\",\"wall\":{:.4},\"user\":{:.4},\"sys\":{:.4}}}",
                    cost.wall, cost.user, cost.sys
                );
            }
            results[i].push(cost);
        }
    }
    if !o.json {
        println!(
            "{:<4} {:<52} {:>8} {:>8} {:>8} {:>8}",
            "", "stage", "wall s", "user s", "sys s", "CPU s"
        );
        for ((id, what), costs) in STAGES.iter().zip(&results) {
            let m = |f: fn(&Cost) -> f64| median(costs.iter().map(f).collect());
            println!(
                "{id:<4} {what:<52} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
                m(|c| c.wall),
                m(|c| c.user),
                m(|c| c.sys),
                m(|c| c.user + c.sys)
            );
        }
    }
    Ok(())
}

/// The stages, in the order they run: id and what is measured.
const STAGES: [(&str, &str); 10] = [
    ("a", "open + read ccv3 value + close + base64 + UTF-8"),
    ("b", "a + serde_json into IgnoredAny"),
    ("c", "a + serde_json::Value"),
    ("d", "a + ccv3 model read (Card::from_json_text)"),
    ("e", "d + validate_card"),
    ("lib", "read_file_with + check_document (whole file)"),
    ("f", "o200k token counts of the index (in memory)"),
    ("g", "FTS5 fill of cards_fts, 1 thread, 1 transaction"),
    ("h", "card hash (in memory)"),
    ("h0", "SHA-256 of the chunk's JSON text alone (in memory)"),
];

/// What the stages work on.
struct Context<'a> {
    located: &'a [Located],
    cards: Vec<Card>,
    texts: Vec<String>,
    threads: usize,
    tok: &'a dyn Tokenizer,
    db_dir: &'a Path,
    read_opts: ccv3::ReadOptions,
}

impl Context<'_> {
    /// Runs the stage `id` of [`STAGES`] once.
    fn run(&mut self, id: &str) -> Result<Cost, String> {
        let (loc, t) = (self.located, self.threads);
        Ok(match id {
            "a" => on_values(loc, t, |_| {}),
            "b" => on_values(loc, t, |s| {
                let _ = black_box(serde_json::from_str::<IgnoredAny>(s));
            }),
            "c" => on_values(loc, t, |s| {
                let _ = black_box(serde_json::from_str::<serde_json::Value>(s));
            }),
            "d" => on_values(loc, t, |s| {
                let _ = black_box(model_read(s));
            }),
            "e" => on_values(loc, t, |s| {
                if let Ok(card) = model_read(s) {
                    black_box(ccv3::validate_card(
                        &card,
                        &ValidateContext::png(Vec::new()),
                    ));
                }
            }),
            "lib" => {
                let opts = &self.read_opts;
                on_items(loc.iter(), t, |l| {
                    if let Ok(doc) = ccv3::read_file_with(&l.path, opts) {
                        black_box(ccv3::check_document(&doc));
                    }
                })
            }
            "f" => {
                let tok = self.tok;
                on_items(self.cards.iter(), t, |c| {
                    black_box(card_tokens(tok, &c.data));
                })
            }
            "g" => fts_fill(&self.cards, self.db_dir)?,
            "h" => on_items(self.cards.iter_mut(), t, |c| {
                black_box(card_hash(c));
            }),
            "h0" => on_items(self.texts.iter(), t, |s| {
                black_box(Sha256::digest(s.as_bytes()));
            }),
            _ => return Err(format!("no stage {id}")),
        })
    }
}

/// The median of `xs` (the upper one of an even count).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

/// ccv3's model read of a card's JSON text.
fn model_read(text: &str) -> ccv3::Result<Card> {
    let mut diags = Vec::new();
    Card::from_json_text(text.as_bytes(), &mut diags)
}

/// Every `.png` file under `dir`, recursively, hidden names skipped.
fn list_pngs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') || out.len() >= MAX_FILES {
            continue;
        }
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if kind.is_dir() {
            list_pngs(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "png") {
            out.push(path);
        }
    }
    Ok(())
}

/// The keyword of the chunk read.
const KEYWORD: &str = "ccv3";

/// Where `path`'s `ccv3` tEXt value is (untimed: the whole file is read and walked); `None`
/// for a file without one or over [`ccv3::MAX_FILE_LEN`].
fn locate(path: &Path) -> Result<Option<Located>, String> {
    let too_big = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len()
        > ccv3::MAX_FILE_LEN;
    if too_big {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let chunks = ccv3::png::list_chunks(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(chunks
        .into_iter()
        .find(|c| c.kind == "tEXt" && c.keyword.as_deref() == Some(KEYWORD))
        .map(|c| Located {
            path: path.to_path_buf(),
            // The chunk's length and type (8 bytes), then the keyword and its NUL.
            offset: c.offset + 8 + KEYWORD.len() as u64 + 1,
            len: (c.length as usize).saturating_sub(KEYWORD.len() + 1),
        }))
}

/// Stage a for one card: opens the file, reads the `ccv3` value at its offset, closes the
/// file, decodes the base64 and checks the UTF-8.
fn read_value(l: &Located) -> Result<String, String> {
    let mut raw = vec![0u8; l.len];
    {
        let file = File::open(&l.path).map_err(|e| e.to_string())?;
        file.read_exact_at(&mut raw, l.offset)
            .map_err(|e| e.to_string())?;
    }
    let bytes = base64_simd::STANDARD
        .decode_to_vec(&raw)
        .map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// Stage a on every card on `threads` threads, then `then` on each card's text.
fn on_values(located: &[Located], threads: usize, then: impl Fn(&str) + Sync) -> Cost {
    on_items(located.iter(), threads, |l| {
        if let Ok(text) = read_value(l) {
            then(&text);
        }
    })
}

/// Runs `work` on every item on `threads` threads, each taking [`BATCH`] items at a time.
fn on_items<T: Send>(
    items: impl Iterator<Item = T> + Send,
    threads: usize,
    work: impl Fn(T) + Sync,
) -> Cost {
    let queue = Mutex::new(items);
    measure(|| {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let batch: Vec<T> = match queue.lock() {
                        Ok(mut q) => q.by_ref().take(BATCH).collect(),
                        Err(_) => return,
                    };
                    if batch.is_empty() {
                        return;
                    }
                    batch.into_iter().for_each(&work);
                });
            }
        });
    })
}

/// Stage g: a fresh database with the index's tables, and every card's name, description, tags
/// and creator inserted into `cards_fts` in one transaction.
fn fts_fill(cards: &[Card], dir: &Path) -> Result<Cost, String> {
    let path = dir.join("fts.sqlite");
    let _ = std::fs::remove_file(&path);
    let conn = rusqlite::Connection::open(&path).map_err(|e| e.to_string())?;
    conn.execute_batch(SCHEMA)
        .and_then(|()| conn.execute_batch(FTS_AUTOMERGE))
        .map_err(|e| e.to_string())?;
    let mut failed = None;
    let cost = measure(|| {
        let fill = || -> rusqlite::Result<()> {
            conn.execute_batch("BEGIN")?;
            let mut insert = conn.prepare(
                "INSERT INTO cards_fts (rowid, name, description, tags, creator) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (i, c) in cards.iter().enumerate() {
                let d = &c.data;
                insert.execute(rusqlite::params![
                    i as i64 + 1,
                    d.name,
                    d.description,
                    d.tags.join(" "),
                    d.creator
                ])?;
            }
            conn.execute_batch("COMMIT")
        };
        failed = fill().err();
    });
    match failed {
        Some(e) => Err(format!("{}: {e}", path.display())),
        None => Ok(cost),
    }
}

/// Wall and CPU time of `f`.
fn measure(f: impl FnOnce()) -> Cost {
    let (u0, s0) = cpu_times();
    let t = Instant::now();
    f();
    let wall = t.elapsed().as_secs_f64();
    let (u1, s1) = cpu_times();
    Cost {
        wall,
        user: u1 - u0,
        sys: s1 - s0,
    }
}

/// The process's user and system CPU seconds so far (all threads).
fn cpu_times() -> (f64, f64) {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `getrusage` writes a `rusage` into the pointer it is given; the memory is a
    // zeroed `rusage` owned here, and a failure leaves it zeroed.
    let ru = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr());
        ru.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}
