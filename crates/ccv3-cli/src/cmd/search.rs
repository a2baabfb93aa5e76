//! `ccv3 search --db cards.sqlite QUERY` and `ccv3 export --db cards.sqlite --format jsonl`
//! (issue 16): reading the index that `ccv3 index` writes ([`super::index::SCHEMA`]).
//!
//! `search` runs an FTS5 query over name, description, tags and creator (FTS5 syntax:
//! `lighthouse`, `"old sol"`, `name:ember`, `tea AND storm`, `light*`) and prints the best
//! matches first: one line per card (`path  name  by creator  [tags]`), or with `--json` one JSON
//! array of `{"path","name","creator","tags","spec","container","rank"}`.
//!
//! `export` writes every row of the index as one JSON object per line, with the columns of
//! `cards` as keys (`tags`, `tokens` and `findings` as JSON values, not strings), in path order.
//! Parquet is not built in (see the README).

use super::{CliError, CmdResult};
use crate::shown::shown;
use rusqlite::{params, Connection, OpenFlags};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;

/// Opens an existing index read-only.
fn open_existing(db: &Path) -> Result<Connection, CliError> {
    if !db.is_file() {
        return Err(CliError::file(
            db,
            "no such index: build it with `ccv3 index DIR --db FILE`",
        ));
    }
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| CliError::file(db, e))
}

/// Runs a full-text search; exit 0 with matches, 1 without.
pub fn search(db: &Path, query: &str, limit: usize, as_json: bool) -> CmdResult {
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
    super::print(&out)?;
    Ok(if found.is_empty() { 1 } else { 0 })
}

/// Writes every row as JSON lines to stdout or `output`.
pub fn export(db: &Path, output: Option<&Path>) -> CmdResult {
    let conn = open_existing(db)?;
    let write = |w: &mut dyn Write| -> Result<(), CliError> {
        let mut st = conn
            .prepare("SELECT * FROM cards ORDER BY path")
            .map_err(|e| CliError::file(db, e))?;
        let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
        let mut rows = st.query([]).map_err(|e| CliError::file(db, e))?;
        while let Some(r) = rows.next().map_err(|e| CliError::file(db, e))? {
            let mut obj = Map::new();
            for (i, name) in names.iter().enumerate() {
                if name == "id" || name == "indexed_run" {
                    continue;
                }
                use rusqlite::types::ValueRef;
                let v = match r.get_ref(i).map_err(|e| CliError::file(db, e))? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(n) => json!(n),
                    ValueRef::Real(f) => json!(f),
                    ValueRef::Text(t) => {
                        let t = String::from_utf8_lossy(t);
                        if matches!(name.as_str(), "tags" | "tokens" | "findings") {
                            serde_json::from_str(&t).unwrap_or(Value::String(t.into_owned()))
                        } else {
                            Value::String(t.into_owned())
                        }
                    }
                    ValueRef::Blob(_) => Value::Null,
                };
                obj.insert(name.clone(), v);
            }
            serde_json::to_writer(&mut *w, &obj).map_err(std::io::Error::from)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    };
    match output {
        Some(path) if path != Path::new("-") => {
            crate::output::write_atomic_with(path, |f| {
                let mut w = std::io::BufWriter::new(f);
                write(&mut w)?;
                w.flush().map_err(CliError::from)
            })?;
        }
        _ => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            write(&mut w)?;
            w.flush()?;
        }
    }
    Ok(0)
}
