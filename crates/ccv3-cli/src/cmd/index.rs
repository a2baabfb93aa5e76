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
//! thread, in one transaction per 5,000 files.

use super::index_writer::{build_settings, Row, Writer};
use crate::error::{CliError, CmdResult};
use crate::walk::{Item, SizeAndTime};
use ccv3::{Document, Severity};
use ccv3_cli::index_card::{book_tokens, card_hash, card_tokens, hash_of, FTS_AUTOMERGE};
use ccv3_tokens::Tokenizer;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use ccv3_cli::index_card::SCHEMA;

/// How [`SCHEMA`] declares `cards_fts` as contentless: FTS5 keeps its index of the words and
/// not a second copy of the text (the row's `rowid` is the card's `id` in `cards`), which
/// saves storing every description twice while `ccv3 index` runs. Phrase, column, prefix and
/// boolean queries and `bm25` ranking work as before; `name`, `description`, `tags` and
/// `creator` read from `cards_fts` are NULL (join `cards` on `cards.id = cards_fts.rowid`).
const FTS_CONTENTLESS: &str = "content=''";

/// How many files are written per transaction. Each commit syncs the journal and the database
/// (four `fsync`s in SQLite's rollback journal): 2,000 until session 10, 5,000 since, which halves
/// the syncs of a large archive (tens of milliseconds each on a busy or spinning disk) while a
/// crash still loses at most a few seconds of reading, and a batch of small cards stays well
/// within the build's page cache (`index_writer::BUILD_CACHE_KIB`), so no page is written out
/// before its commit.
const BATCH: usize = 5_000;

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
        .and_then(|()| create_tables(&conn))
        .map_err(|e| CliError::file(db, e))?;
    Ok(conn)
}

/// Creates the tables of [`SCHEMA`] and sets [`FTS_AUTOMERGE`] in one transaction (one commit,
/// not one per statement: a commit syncs the journal and the database), writing nothing when
/// the index has them already.
fn create_tables(conn: &Connection) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch(SCHEMA)?;
    let automerge: Option<i64> = tx
        .query_row(
            "SELECT v FROM cards_fts_config WHERE k = 'automerge'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if automerge != Some(16) {
        tx.execute_batch(FTS_AUTOMERGE)?;
    }
    tx.commit()
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
    let conn = open(&args.db)?;
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
    let opts = crate::load::walk_read_options(&args.paths);
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
    build_settings(&conn).map_err(db_err)?;
    let mut writer = Writer::new(&conn, run_no, tokenizer.name(), BATCH).map_err(db_err)?;
    let sink = |o: Outcome| -> Result<(), CliError> {
        files += 1;
        bar.inc(1);
        match o {
            Outcome::Unchanged(path, was_unreadable) => {
                unchanged += 1;
                unreadable += usize::from(was_unreadable);
                writer.unchanged(&path).map_err(db_err)?;
            }
            Outcome::Touched {
                path,
                size,
                mtime_ns,
            } => {
                unchanged += 1;
                writer.touched(&path, size, mtime_ns).map_err(db_err)?;
            }
            Outcome::Row(row) => {
                let recorded = known.contains_key(&row.path);
                if recorded {
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
                writer.put(&row, recorded).map_err(db_err)?;
            }
        }
        Ok(())
    };
    crate::pipeline::each_file(&args.paths, work, sink)?;
    bar.finish_and_clear();
    writer.commit().map_err(db_err)?;
    drop(writer);
    let removed = remove_gone(&conn, &args.paths, run_no).map_err(db_err)?;
    let summary = format!(
        "{}: {new} new, {changed} changed, {unchanged} unchanged, {removed} removed, {unreadable} unreadable; {}\n",
        super::validate::plural(files, "file", "files"),
        crate::shown::shown(&args.db.display().to_string())
    );
    crate::output::print(&summary)?;
    Ok(if unreadable > 0 { 2 } else { 0 })
}

/// Deletes the rows of files under `paths` that run `run_no` did not see (they are gone), in
/// one transaction; returns how many.
fn remove_gone(conn: &Connection, paths: &[PathBuf], run_no: i64) -> rusqlite::Result<usize> {
    let tx = conn.unchecked_transaction()?;
    let mut removed = 0usize;
    for root in paths {
        let root = root.display().to_string();
        let under = format!("{}/", root.trim_end_matches('/'));
        let ids: Vec<(i64, String)> = {
            let mut st = tx.prepare("SELECT id, path FROM cards WHERE indexed_run < ?1")?;
            let rows = st.query_map(params![run_no], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })?;
            rows.filter_map(Result::ok)
                .filter(|(_, p)| *p == root || p.starts_with(&under))
                .collect()
        };
        for (id, _) in ids {
            tx.execute("DELETE FROM cards WHERE id = ?1", params![id])?;
            tx.execute("DELETE FROM cards_fts WHERE rowid = ?1", params![id])?;
            removed += 1;
        }
    }
    tx.commit()?;
    Ok(removed)
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
    let key = path.to_string_lossy().into_owned();
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
            if let Outcome::Row(r) = unreadable(crate::load::with_hint(e)) {
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
            if let Some(b) = &d.character_book {
                row.entries = Some(b.entries.len() as i64);
                row.enabled_entries = Some(b.entries.iter().filter(|e| e.enabled).count() as i64);
            }
            let tokens = card_tokens(tok, d);
            row.tokens = Some(tokens.json);
            row.tokens_total = Some(tokens.total as i64);
            row.card_hash = Some(card_hash(&mut cf.card));
        }
        Document::Lorebook(bf) => {
            row.kind = "lorebook";
            row.name = bf.book.name.clone();
            row.description = bf.book.description.clone().unwrap_or_default();
            row.container = Some("JSON");
            row.entries = Some(bf.book.entries.len() as i64);
            row.enabled_entries = Some(bf.book.entries.iter().filter(|e| e.enabled).count() as i64);
            let tokens = book_tokens(tok, &bf.book.entries);
            row.tokens = Some(tokens.json);
            row.tokens_total = Some(tokens.total as i64);
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
