//! `ccv3 index PATH... --db cards.sqlite` (issue 16): an SQLite index of every card of an archive.
//!
//! One row per file in table `cards` (see [`SCHEMA`]): its path, size and modification time, the
//! hash of the card data (SHA-256 of the card's V3 JSON without `assets`, whose URIs depend on
//! the container: the same card in a PNG, a CHARX and a JSON file has one hash, so duplicates
//! across containers are found with `GROUP BY card_hash`), name, creator, tags, spec version,
//! container, greetings, lorebook entries and assets counted, token counts per field and per
//! lorebook, the findings of `ccv3 validate`, or the error for a file that cannot be read. The
//! full-text table `cards_fts` (FTS5, contentless: the words, not the text; see
//! [`FTS_CONTENTLESS`]) indexes name, description, tags and creator for `ccv3 search`.
//!
//! Re-running updates only what changed: a file whose size and modification time are those
//! recorded is not read at all; one whose card hash is still the recorded one only has its
//! size and time updated; rows of files under the indexed folders that are gone are deleted.
//! Files are read on every core ([`crate::pipeline`]); the database is written by the calling
//! thread, in one transaction per 2,000 files.

use super::{CliError, CmdResult};
use crate::walk::{Item, SizeAndTime};
use ccv3::{Document, Severity};
use ccv3_tokens::{PieceCache, Tokenizer};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The tables (created when missing).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS cards (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    card_hash TEXT,
    kind TEXT NOT NULL,            -- card | lorebook | unreadable
    name TEXT,
    creator TEXT,
    tags TEXT,                     -- JSON array
    spec TEXT,                     -- V1 | V2 | V3
    spec_version TEXT,
    container TEXT,
    greetings INTEGER,             -- first_mes (1 when not empty) + alternate greetings
    group_greetings INTEGER,
    entries INTEGER,
    enabled_entries INTEGER,
    assets INTEGER,
    tokenizer TEXT,
    tokens TEXT,                   -- JSON object: field -> tokens, \"lorebook\" -> all entries
    tokens_total INTEGER,
    errors INTEGER NOT NULL DEFAULT 0,
    warnings INTEGER NOT NULL DEFAULT 0,
    findings TEXT,                 -- JSON array of {severity, code, path, message}
    error TEXT,                    -- why the file could not be read
    indexed_run INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS cards_card_hash ON cards(card_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS cards_fts USING fts5(name, description, tags, creator,
    content='', contentless_delete=1);
";

/// How [`SCHEMA`] declares `cards_fts` as contentless: FTS5 keeps its index of the words and
/// not a second copy of the text (the row's `rowid` is the card's `id` in `cards`), which
/// saves storing every description twice while `ccv3 index` runs. Phrase, column, prefix and
/// boolean queries and `bm25` ranking work as before; `name`, `description`, `tags` and
/// `creator` read from `cards_fts` are NULL (join `cards` on `cards.id = cards_fts.rowid`).
const FTS_CONTENTLESS: &str = "content=''";

/// FTS5 merges the word lists each transaction writes once 16 of them pile up at a level (its
/// default is 4, the range 2-16): fewer merges while an archive is indexed (the same matches;
/// a query reads a few more lists). Stored in the table's configuration, set on every open.
const FTS_AUTOMERGE: &str = "INSERT INTO cards_fts (cards_fts, rank) VALUES ('automerge', 16);";

/// How many files are written per transaction.
const BATCH: usize = 2_000;

/// The card text fields whose tokens are counted.
const FIELDS: [&str; 8] = [
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
    "system_prompt",
    "post_history_instructions",
    "creator_notes",
];

/// What the index knew of a file before this run.
#[derive(Clone)]
struct Known {
    size: i64,
    mtime_ns: i64,
    card_hash: Option<String>,
}

/// One file's row, or what to do with it.
enum Outcome {
    /// Size and time as recorded: not read (`true`: recorded as unreadable).
    Unchanged(String, bool),
    /// Read; the card is the one recorded: only size and time change.
    Touched {
        path: String,
        size: i64,
        mtime_ns: i64,
    },
    /// A new or changed row.
    Row(Box<Row>),
}

/// A row of `cards` and its full-text columns.
#[derive(Default)]
struct Row {
    path: String,
    size: i64,
    mtime_ns: i64,
    card_hash: Option<String>,
    kind: &'static str,
    name: Option<String>,
    creator: Option<String>,
    tags: Option<String>,
    tag_text: String,
    description: String,
    spec: Option<&'static str>,
    spec_version: Option<String>,
    container: Option<&'static str>,
    greetings: Option<i64>,
    group_greetings: Option<i64>,
    entries: Option<i64>,
    enabled_entries: Option<i64>,
    assets: Option<i64>,
    tokens: Option<String>,
    tokens_total: Option<i64>,
    errors: i64,
    warnings: i64,
    findings: Option<String>,
    error: Option<String>,
}

/// Arguments of `ccv3 index`.
pub struct Args {
    /// Files or folders.
    pub paths: Vec<PathBuf>,
    /// The database file (created when missing).
    pub db: PathBuf,
    /// The tokenizer of the token counts.
    pub tokenizer: String,
}

/// Opens (or creates) the index at `db` with its tables.
pub fn open(db: &Path) -> Result<Connection, CliError> {
    let conn = Connection::open(db).map_err(|e| CliError::file(db, e))?;
    // The default rollback journal: nothing is left beside the database after a run, and
    // readers (`search`, `export`) write nothing.
    conn.execute_batch("PRAGMA busy_timeout=5000;")
        .and_then(|()| migrate_fts(&conn))
        .and_then(|()| conn.execute_batch(SCHEMA))
        .and_then(|()| conn.execute_batch(FTS_AUTOMERGE))
        .map_err(|e| CliError::file(db, e))?;
    Ok(conn)
}

/// Moves an index made before `cards_fts` was contentless (it stored its text) to the
/// contentless table of [`SCHEMA`], in one transaction: the stored text is indexed again into
/// the new table under the same rowids, so nothing needs to be read from the cards again.
fn migrate_fts(conn: &Connection) -> rusqlite::Result<()> {
    let sql: Option<String> = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'cards_fts'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if sql.is_none_or(|sql| sql.contains(FTS_CONTENTLESS)) {
        return Ok(());
    }
    conn.execute_batch(
        "BEGIN;
         ALTER TABLE cards_fts RENAME TO cards_fts_stored;",
    )?;
    let moved = conn.execute_batch(SCHEMA).and_then(|()| {
        conn.execute_batch(
            "INSERT INTO cards_fts (rowid, name, description, tags, creator)
                     SELECT rowid, name, description, tags, creator FROM cards_fts_stored;
                 DROP TABLE cards_fts_stored;
                 COMMIT;",
        )
    });
    if moved.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    moved
}

/// Indexes every file; see the module docs. Exit 0, or 2 when a file could not be read (it
/// is still recorded, with its error).
pub fn run(args: &Args) -> CmdResult {
    let kind: ccv3_tokens::TokenizerKind = args
        .tokenizer
        .parse()
        .map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    let tokenizer =
        ccv3_tokens::load(&kind).map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    let mut conn = open(&args.db)?;
    let db_err = |e: rusqlite::Error| CliError::file(&args.db, e);
    let run_no: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(indexed_run), 0) + 1 FROM cards",
            [],
            |r| r.get(0),
        )
        .map_err(db_err)?;
    let known = load_known(&conn).map_err(db_err)?;
    let bar = crate::pipeline::spinner("{spinner} {pos} files indexed {elapsed}");
    let opts = super::walk_read_options(&args.paths);
    let work = |scratch: &mut ccv3::ReadScratch, item: Item| -> Outcome {
        match item {
            Item::File(path) => {
                let file = Found {
                    path: &path,
                    folder: None,
                };
                index_file(file, &known, &opts, tokenizer.as_ref(), scratch)
            }
            Item::InFolder(path, folder) => {
                let file = Found {
                    path: &path,
                    folder: Some(&folder),
                };
                index_file(file, &known, &opts, tokenizer.as_ref(), scratch)
            }
            Item::Error(path, e) => Outcome::Row(Box::new(Row {
                path: path.display().to_string(),
                kind: "unreadable",
                error: Some(e.to_string()),
                ..Row::default()
            })),
        }
    };
    let (mut files, mut new, mut changed, mut unchanged, mut unreadable) = (0, 0, 0, 0, 0);
    let mut tx_open = false;
    let mut in_tx = 0usize;
    let sink = |o: Outcome| -> Result<(), CliError> {
        if !tx_open {
            conn.execute_batch("BEGIN").map_err(db_err)?;
            tx_open = true;
        }
        files += 1;
        bar.inc(1);
        match o {
            Outcome::Unchanged(path, was_unreadable) => {
                unchanged += 1;
                unreadable += usize::from(was_unreadable);
                conn.prepare_cached("UPDATE cards SET indexed_run = ?1 WHERE path = ?2")
                    .and_then(|mut s| s.execute(params![run_no, path]))
                    .map_err(db_err)?;
            }
            Outcome::Touched {
                path,
                size,
                mtime_ns,
            } => {
                unchanged += 1;
                conn.prepare_cached(
                    "UPDATE cards SET size = ?1, mtime_ns = ?2, indexed_run = ?3 WHERE path = ?4",
                )
                .and_then(|mut s| s.execute(params![size, mtime_ns, run_no, path]))
                .map_err(db_err)?;
            }
            Outcome::Row(row) => {
                if known.contains_key(&row.path) {
                    changed += 1;
                } else {
                    new += 1;
                }
                if row.kind == "unreadable" {
                    unreadable += 1;
                    let line = format!(
                        "ccv3: {}: {}",
                        crate::shown::shown(&row.path),
                        crate::shown::shown(row.error.as_deref().unwrap_or(""))
                    );
                    bar.suspend(|| eprintln!("{line}"));
                }
                write_row(&conn, &row, run_no, tokenizer.name()).map_err(db_err)?;
            }
        }
        in_tx += 1;
        if in_tx >= BATCH {
            conn.execute_batch("COMMIT").map_err(db_err)?;
            tx_open = false;
            in_tx = 0;
        }
        Ok(())
    };
    crate::pipeline::each_file(&args.paths, work, sink)?;
    bar.finish_and_clear();
    if tx_open {
        conn.execute_batch("COMMIT").map_err(db_err)?;
    }
    // Files under the indexed paths that were not seen this run are gone.
    let tx = conn.transaction().map_err(db_err)?;
    let mut removed = 0usize;
    for root in &args.paths {
        let root = root.display().to_string();
        let under = format!("{}/", root.trim_end_matches('/'));
        let ids: Vec<(i64, String)> = {
            let mut st = tx
                .prepare("SELECT id, path FROM cards WHERE indexed_run < ?1")
                .map_err(db_err)?;
            let rows = st
                .query_map(params![run_no], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(db_err)?;
            rows.filter_map(Result::ok)
                .filter(|(_, p)| *p == root || p.starts_with(&under))
                .collect()
        };
        for (id, _) in ids {
            tx.execute("DELETE FROM cards WHERE id = ?1", params![id])
                .and_then(|_| tx.execute("DELETE FROM cards_fts WHERE rowid = ?1", params![id]))
                .map_err(db_err)?;
            removed += 1;
        }
    }
    tx.commit().map_err(db_err)?;
    let summary = format!(
        "{}: {new} new, {changed} changed, {unchanged} unchanged, {removed} removed, {unreadable} unreadable; {}\n",
        super::validate::plural(files, "file", "files"),
        crate::shown::shown(&args.db.display().to_string())
    );
    super::print(&summary)?;
    Ok(if unreadable > 0 { 2 } else { 0 })
}

/// What the index knew before this run, by path.
fn load_known(conn: &Connection) -> rusqlite::Result<HashMap<String, Known>> {
    let mut st = conn.prepare("SELECT path, size, mtime_ns, card_hash FROM cards")?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Known {
                size: r.get(1)?,
                mtime_ns: r.get(2)?,
                card_hash: r.get(3)?,
            },
        ))
    })?;
    rows.collect()
}

/// A file the walk found: its path, and its folder's handle when the walk has it.
struct Found<'a> {
    path: &'a Path,
    folder: Option<&'a crate::walk::Folder>,
}

impl Found<'_> {
    /// The file's size and time, looked up relative to its folder when the walk has the handle
    /// (issue 16, as `validate` opens files), without opening it.
    fn size_and_time(&self) -> std::io::Result<SizeAndTime> {
        match self.folder {
            Some(folder) => folder.size_and_time(self.path),
            None => SizeAndTime::of_path(self.path),
        }
    }

    /// Opens the file for reading, relative to its folder when the walk has the handle.
    fn open(&self) -> std::io::Result<std::fs::File> {
        match self.folder {
            Some(folder) => folder.open(self.path),
            None => std::fs::File::open(self.path),
        }
    }
}

/// Reads one file into its row (or finds it unchanged, without opening it).
fn index_file(
    found: Found<'_>,
    known: &HashMap<String, Known>,
    opts: &ccv3::ReadOptions,
    tok: &dyn Tokenizer,
    scratch: &mut ccv3::ReadScratch,
) -> Outcome {
    let path = found.path;
    let key = path.display().to_string();
    let unreadable = |e: String| {
        Outcome::Row(Box::new(Row {
            path: key.clone(),
            kind: "unreadable",
            error: Some(e),
            ..Row::default()
        }))
    };
    let (len, size, mtime_ns) = match found.size_and_time() {
        Ok(s) => (
            s.size,
            i64::try_from(s.size).unwrap_or(i64::MAX),
            s.mtime_ns,
        ),
        Err(e) => return unreadable(e.to_string()),
    };
    let before = known.get(&key);
    if let Some(k) = before {
        if k.size == size && k.mtime_ns == mtime_ns {
            return Outcome::Unchanged(key, k.card_hash.is_none());
        }
    }
    // The length just looked up: the file's metadata is not asked for again.
    let read = found
        .open()
        .map_err(ccv3::Error::from)
        .and_then(|file| ccv3::read_open_file_reusing(file, Some(len), opts, scratch));
    let doc = match read {
        Ok(d) => d,
        Err(e) => {
            let mut row = Row {
                size,
                mtime_ns,
                ..Row::default()
            };
            if let Outcome::Row(r) = unreadable(super::with_hint(e)) {
                row.path = r.path;
                row.kind = r.kind;
                row.error = r.error;
            }
            return Outcome::Row(Box::new(row));
        }
    };
    let findings = ccv3::check_document(&doc);
    let mut row = Row {
        path: key.clone(),
        size,
        mtime_ns,
        errors: findings
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count() as i64,
        warnings: findings
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count() as i64,
        findings: Some(serde_json::to_string(&findings).unwrap_or_default()),
        ..Row::default()
    };
    match doc {
        Document::Card(mut cf) => {
            let d = &cf.card.data;
            row.kind = "card";
            row.name = Some(d.name.clone());
            row.creator = Some(d.creator.clone());
            row.tags = Some(serde_json::to_string(&d.tags).unwrap_or_default());
            row.tag_text = d.tags.join(" ");
            row.description = d.description.clone();
            row.spec = cf.card.origin.map(|o| o.label());
            row.spec_version = Some(cf.card.spec_version.clone());
            row.container = Some(cf.container.label());
            row.greetings =
                Some(i64::from(!d.first_mes.is_empty()) + d.alternate_greetings.len() as i64);
            row.group_greetings = Some(d.group_only_greetings.len() as i64);
            row.assets = Some(d.assets.as_ref().map_or(0, |a| a.len() as i64));
            let texts = [
                &d.description,
                &d.personality,
                &d.scenario,
                &d.first_mes,
                &d.mes_example,
                &d.system_prompt,
                &d.post_history_instructions,
                &d.creator_notes,
            ];
            let mut tokens = serde_json::Map::new();
            let mut total = 0usize;
            for (name, text) in FIELDS.iter().zip(texts) {
                let n = count(tok, text);
                total += n;
                tokens.insert((*name).to_string(), json!(n));
            }
            if let Some(b) = &d.character_book {
                row.entries = Some(b.entries.len() as i64);
                row.enabled_entries = Some(b.entries.iter().filter(|e| e.enabled).count() as i64);
                let n: usize = b.entries.iter().map(|e| count(tok, &e.content)).sum();
                total += n;
                tokens.insert("lorebook".into(), json!(n));
            }
            row.tokens = Some(serde_json::Value::Object(tokens).to_string());
            row.tokens_total = Some(total as i64);
            // The card's data without `assets` (their URIs depend on the container).
            cf.card.data.assets = None;
            row.card_hash = Some(hash_of(|w| cf.card.write_v3_json(w, false)));
        }
        Document::Lorebook(bf) => {
            row.kind = "lorebook";
            row.name = bf.book.name.clone();
            row.description = bf.book.description.clone().unwrap_or_default();
            row.container = Some("JSON");
            row.entries = Some(bf.book.entries.len() as i64);
            row.enabled_entries = Some(bf.book.entries.iter().filter(|e| e.enabled).count() as i64);
            let n: usize = bf.book.entries.iter().map(|e| count(tok, &e.content)).sum();
            row.tokens = Some(json!({ "lorebook": n }).to_string());
            row.tokens_total = Some(n as i64);
            row.card_hash = Some(hash_of(|w| bf.book.write_lorebook_v3(w, false)));
        }
    }
    if let Some(k) = before {
        if k.card_hash.is_some() && k.card_hash == row.card_hash {
            return Outcome::Touched {
                path: key,
                size,
                mtime_ns,
            };
        }
    }
    Outcome::Row(Box::new(row))
}

thread_local! {
    /// Each worker's piece -> count table ([`ccv3_tokens::PieceCache`], 256 KiB a thread): card
    /// texts repeat their words, and a hit skips the vocabulary lookup (issue 16).
    static PIECES: RefCell<PieceCache> = RefCell::new(PieceCache::new());
}

/// The tokens of `text`, counted through this thread's piece cache.
fn count(tok: &dyn Tokenizer, text: &str) -> usize {
    PIECES.with(|cache| match cache.try_borrow_mut() {
        Ok(mut cache) => tok.count_cached(text, &mut cache),
        Err(_) => tok.count(text),
    })
}

/// Bytes gathered before each SHA-256 update: the serializer writes a card a few bytes at a
/// time (a quote, a key, a comma), and each write was a call into the hasher.
const HASH_BUFFER: usize = 16 * 1024;

/// SHA-256 (hex) of what `write` writes.
fn hash_of(write: impl FnOnce(&mut BufWriter<&mut Sha256>) -> std::io::Result<()>) -> String {
    let mut h = Sha256::new();
    {
        let mut w = BufWriter::with_capacity(HASH_BUFFER, &mut h);
        let _ = write(&mut w).and_then(|()| w.flush());
    }
    let digest = h.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

/// Inserts or replaces `row` and its full-text row.
fn write_row(conn: &Connection, row: &Row, run_no: i64, tokenizer: &str) -> rusqlite::Result<()> {
    let old: Option<i64> = conn
        .prepare_cached("SELECT id FROM cards WHERE path = ?1")?
        .query_row(params![row.path], |r| r.get(0))
        .ok();
    if let Some(id) = old {
        conn.prepare_cached("DELETE FROM cards_fts WHERE rowid = ?1")?
            .execute(params![id])?;
        conn.prepare_cached("DELETE FROM cards WHERE id = ?1")?
            .execute(params![id])?;
    }
    conn.prepare_cached(
        "INSERT INTO cards (id, path, size, mtime_ns, card_hash, kind, name, creator, tags, spec,
            spec_version, container, greetings, group_greetings, entries, enabled_entries, assets,
            tokenizer, tokens, tokens_total, errors, warnings, findings, error, indexed_run)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
    )?
    .execute(params![
        old,
        row.path,
        row.size,
        row.mtime_ns,
        row.card_hash,
        row.kind,
        row.name,
        row.creator,
        row.tags,
        row.spec,
        row.spec_version,
        row.container,
        row.greetings,
        row.group_greetings,
        row.entries,
        row.enabled_entries,
        row.assets,
        row.tokens.as_ref().map(|_| tokenizer),
        row.tokens,
        row.tokens_total,
        row.errors,
        row.warnings,
        row.findings,
        row.error,
        run_no,
    ])?;
    let id = conn.last_insert_rowid();
    if row.kind != "unreadable" {
        conn.prepare_cached(
            "INSERT INTO cards_fts (rowid, name, description, tags, creator) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            id,
            row.name.as_deref().unwrap_or(""),
            row.description,
            row.tag_text,
            row.creator.as_deref().unwrap_or(""),
        ])?;
    }
    Ok(())
}
