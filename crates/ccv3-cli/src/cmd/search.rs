//! `ccv3 search --db cards.sqlite QUERY` (issue 16): full-text search of the index that
//! `ccv3 index` writes ([`super::index::SCHEMA`]); `ccv3 export` is [`super::export`].
//!
//! `search` runs an FTS5 query over name, description, tags and creator (FTS5 syntax:
//! `lighthouse`, `"old sol"`, `name:ember`, `tea AND storm`, `light*`) and prints the best
//! matches first: one line per card (`path  name  by creator  [tags]`), or with `--json` one JSON
//! array of `{"path","name","creator","tags","spec","container","rank"}`.

use crate::error::{CliError, CmdResult};
use crate::shown::shown;
use rusqlite::{params, Connection, OpenFlags};
use serde_json::{json, Value};
use std::path::Path;

/// Opens an existing index read-only.
pub fn open_existing(db: &Path) -> Result<Connection, CliError> {
    if crate::stdio::is_dash(db) {
        return Err(CliError::file(
            Path::new("--db"),
            "the index is an SQLite file: give its path, not `-`",
        ));
    }
    if !db.is_file() {
        return Err(CliError::file(
            db,
            "no such index: build it with `ccv3 index DIR --db FILE`",
        ));
    }
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| CliError::file(db, e))
}

/// Runs a full-text search (printed to `-o FILE` when given); exit 0 with matches, 1 without.
pub fn search(
    db: &Path,
    query: &str,
    limit: usize,
    as_json: bool,
    output: Option<&Path>,
) -> CmdResult {
    let conn = open_existing(db)?;
    let mut st = conn
        .prepare(
            "SELECT c.path, c.name, c.creator, c.tags, c.spec, c.container, bm25(cards_fts) AS r
             FROM cards_fts JOIN cards c ON c.id = cards_fts.rowid
             WHERE cards_fts MATCH ?1 ORDER BY r, c.path LIMIT ?2",
        )
        .map_err(|e| CliError::file(db, e))?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = st
        .query_map(params![query, limit], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, f64>(6)?,
            ))
        })
        .map_err(|e| CliError::file(db, e))?;
    let mut found = Vec::new();
    for r in rows {
        // A malformed query shows up here (FTS5 parses it on the first step).
        found.push(
            r.map_err(|e| CliError::file(Path::new("QUERY"), format!("{e} (FTS5 query syntax)")))?,
        );
    }
    let mut out = String::new();
    if as_json {
        let items: Vec<Value> = found
            .iter()
            .map(|(path, name, creator, tags, spec, container, rank)| {
                let tags: Value = tags
                    .as_deref()
                    .and_then(|t| serde_json::from_str(t).ok())
                    .unwrap_or(Value::Null);
                json!({"path": path, "name": name, "creator": creator, "tags": tags,
                    "spec": spec, "container": container, "rank": rank})
            })
            .collect();
        out.push_str(&Value::Array(items).to_string());
        out.push('\n');
    } else {
        for (path, name, creator, tags, ..) in &found {
            let tags: Vec<String> = tags
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_default();
            out.push_str(&shown(path));
            out.push_str("  ");
            out.push_str(&shown(name.as_deref().unwrap_or("-")));
            if let Some(c) = creator.as_deref().filter(|c| !c.is_empty()) {
                out.push_str("  by ");
                out.push_str(&shown(c));
            }
            if !tags.is_empty() {
                out.push_str(&format!("  [{}]", shown(&tags.join(", "))));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "{}\n",
            super::validate::plural(found.len(), "match", "matches")
        ));
    }
    crate::output::emit(output, &out)?;
    Ok(if found.is_empty() { 1 } else { 0 })
}
