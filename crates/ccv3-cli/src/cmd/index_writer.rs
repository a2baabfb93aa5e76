//! How `ccv3 index` writes its database ([`super::index`]): the connection's settings while it
//! writes ([`build_settings`]) and the statements of a row, prepared once ([`Writer`]).
//!
//! The rows are written by the calling thread while the workers read cards, so every statement
//! and every `fsync` it spares is time the workers are not kept waiting (issue 16, "Indexing is
//! within 2x of validating").

use rusqlite::{params, Connection, ErrorCode, Statement};

/// Pages SQLite keeps in memory while `ccv3 index` writes, in KiB (its default is 2,000 KiB):
/// past its cache, SQLite writes changed pages out before the commit, and in the rollback
/// journal each such spill syncs the journal once more. A fixed bound, whatever the archive.
pub const BUILD_CACHE_KIB: i64 = 32 * 1024;

/// The connection's settings while `ccv3 index` writes: a [`BUILD_CACHE_KIB`] page cache. The
/// journal stays SQLite's default (rollback, `synchronous=FULL`): an index is consistent and
/// every committed batch kept after a crash or a power cut. (Write-ahead logging would spare a
/// few syncs, measured: 23 against 24 on 10,000 cards with this cache and 2,000 files a
/// transaction, for 70% more bytes written; it is not used.)
pub fn build_settings(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("PRAGMA cache_size = -{BUILD_CACHE_KIB};"))
}

/// The statements `ccv3 index` runs per file, prepared once for the run (not looked up by
/// their text for every row), and the run's transaction.
pub struct Writer<'c> {
    conn: &'c Connection,
    run_no: i64,
    tokenizer: String,
    batch: usize,
    in_tx: usize,
    mark_unchanged: Statement<'c>,
    touch: Statement<'c>,
    find_id: Statement<'c>,
    delete_card: Statement<'c>,
    delete_fts: Statement<'c>,
    insert_card: Statement<'c>,
    insert_fts: Statement<'c>,
}

/// A row of `cards` (see [`super::index::SCHEMA`] for its columns; `tokenizer` is the run's,
/// set where `tokens` is) and its full-text columns.
#[derive(Default)]
pub struct Row {
    /// The file's path (the row's key).
    pub path: String,
    /// The file's size in bytes.
    pub size: i64,
    /// The file's modification time, nanoseconds since 1970.
    pub mtime_ns: i64,
    /// SHA-256 (hex) of the card's data (see [`super::index`]).
    pub card_hash: Option<String>,
    /// `card`, `lorebook` or `unreadable` (no full-text row).
    pub kind: &'static str,
    /// Column and full-text column `name`.
    pub name: Option<String>,
    /// Column and full-text column `creator`.
    pub creator: Option<String>,
    /// Column `tags`: a JSON array.
    pub tags: Option<String>,
    /// Full-text column `tags`: the tags separated by spaces.
    pub tag_text: String,
    /// Full-text column `description`.
    pub description: String,
    /// Column `spec`.
    pub spec: Option<&'static str>,
    /// Column `spec_version`.
    pub spec_version: Option<String>,
    /// Column `container`.
    pub container: Option<&'static str>,
    /// Column `greetings`.
    pub greetings: Option<i64>,
    /// Column `group_greetings`.
    pub group_greetings: Option<i64>,
    /// Column `entries`.
    pub entries: Option<i64>,
    /// Column `enabled_entries`.
    pub enabled_entries: Option<i64>,
    /// Column `assets`.
    pub assets: Option<i64>,
    /// Column `tokens`: a JSON object.
    pub tokens: Option<String>,
    /// Column `tokens_total`.
    pub tokens_total: Option<i64>,
    /// Column `errors`.
    pub errors: i64,
    /// Column `warnings`.
    pub warnings: i64,
    /// Column `findings`: a JSON array.
    pub findings: Option<String>,
    /// Column `error`: why the file could not be read.
    pub error: Option<String>,
}

impl<'c> Writer<'c> {
    /// Prepares the statements of run `run_no` (token counts made with `tokenizer`), which
    /// commits every `batch` files.
    pub fn new(
        conn: &'c Connection,
        run_no: i64,
        tokenizer: &str,
        batch: usize,
    ) -> rusqlite::Result<Self> {
        Ok(Writer {
            conn,
            run_no,
            tokenizer: tokenizer.to_string(),
            batch,
            in_tx: 0,
            mark_unchanged: conn.prepare("UPDATE cards SET indexed_run = ?1 WHERE path = ?2")?,
            touch: conn.prepare(
                "UPDATE cards SET size = ?1, mtime_ns = ?2, indexed_run = ?3 WHERE path = ?4",
            )?,
            find_id: conn.prepare("SELECT id FROM cards WHERE path = ?1")?,
            delete_card: conn.prepare("DELETE FROM cards WHERE id = ?1")?,
            delete_fts: conn.prepare("DELETE FROM cards_fts WHERE rowid = ?1")?,
            insert_card: conn.prepare(
                "INSERT INTO cards (id, path, size, mtime_ns, card_hash, kind, name, creator, tags,
                    spec, spec_version, container, greetings, group_greetings, entries,
                    enabled_entries, assets, tokenizer, tokens, tokens_total, errors, warnings,
                    findings, error, indexed_run)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
            )?,
            insert_fts: conn.prepare(
                "INSERT INTO cards_fts (rowid, name, description, tags, creator)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
        })
    }

    /// Starts a transaction when none is open.
    fn begin(&mut self) -> rusqlite::Result<()> {
        if self.conn.is_autocommit() {
            self.conn.execute_batch("BEGIN")?;
            self.in_tx = 0;
        }
        Ok(())
    }

    /// Counts a file written and commits every `batch` files.
    fn written(&mut self) -> rusqlite::Result<()> {
        self.in_tx += 1;
        if self.in_tx >= self.batch {
            self.commit()?;
        }
        Ok(())
    }

    /// Commits the open transaction, if any.
    pub fn commit(&mut self) -> rusqlite::Result<()> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("COMMIT")?;
        }
        self.in_tx = 0;
        Ok(())
    }

    /// Records that the file at `path` was seen unchanged in this run.
    pub fn unchanged(&mut self, path: &str) -> rusqlite::Result<()> {
        self.begin()?;
        self.mark_unchanged.execute(params![self.run_no, path])?;
        self.written()
    }

    /// Records a file's new size and time (its card as recorded).
    pub fn touched(&mut self, path: &str, size: i64, mtime_ns: i64) -> rusqlite::Result<()> {
        self.begin()?;
        self.touch
            .execute(params![size, mtime_ns, self.run_no, path])?;
        self.written()
    }

    /// Inserts or replaces `row` and its full-text row. A path the index did not hold before
    /// this run (`recorded` false) is inserted at once, without looking for its row first; were
    /// it written already in this run (a path given twice), the insert is refused by the
    /// `UNIQUE` path and the row is replaced as a recorded one is.
    pub fn put(&mut self, row: &Row, recorded: bool) -> rusqlite::Result<()> {
        self.begin()?;
        let fresh = !recorded && {
            match self.insert(row, None) {
                Ok(()) => true,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == ErrorCode::ConstraintViolation =>
                {
                    false
                }
                Err(e) => return Err(e),
            }
        };
        if !fresh {
            let old: Option<i64> = self.find_id.query_row(params![row.path], |r| r.get(0)).ok();
            if let Some(id) = old {
                self.delete_fts.execute(params![id])?;
                self.delete_card.execute(params![id])?;
            }
            self.insert(row, old)?;
        }
        self.written()
    }

    /// Inserts `row` (with the `id` of the row it replaces) and its full-text row.
    fn insert(&mut self, row: &Row, id: Option<i64>) -> rusqlite::Result<()> {
        self.insert_card.execute(params![
            id,
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
            row.tokens.as_ref().map(|_| self.tokenizer.as_str()),
            row.tokens,
            row.tokens_total,
            row.errors,
            row.warnings,
            row.findings,
            row.error,
            self.run_no,
        ])?;
        if row.kind != "unreadable" {
            let id = self.conn.last_insert_rowid();
            self.insert_fts.execute(params![
                id,
                row.name.as_deref().unwrap_or(""),
                row.description,
                row.tag_text,
                row.creator.as_deref().unwrap_or(""),
            ])?;
        }
        Ok(())
    }
}
