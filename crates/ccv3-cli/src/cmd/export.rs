//! `ccv3 export --db cards.sqlite [--format jsonl|parquet] [-o FILE]` (issue 16): every row of
//! the index that `ccv3 index` writes ([`super::index::SCHEMA`]), in path order, for data work.
//!
//! Both formats have the same rows and the same columns: those of table `cards` but its
//! internal `id` and `indexed_run`, in the table's order.
//! - `jsonl`: one JSON object per row and line, the columns as keys; `tags`, `tokens` and
//!   `findings` as JSON values (not strings). pandas: `read_json(FILE, lines=True)`.
//! - `parquet`: one Apache Parquet file (Snappy pages, row groups of [`ROW_GROUP`] rows),
//!   written with the `parquet` crate's low-level column writer: INTEGER columns as nullable
//!   INT64, TEXT columns as nullable UTF-8 strings, `tags` as a nullable LIST of strings,
//!   `tokens` and `findings` as JSON text (logical type JSON). pandas: `read_parquet(FILE)`.
//!
//! Memory stays flat: JSON lines are streamed, Parquet holds one row group at a time.

use super::search::open_existing;
use crate::args::ExportFormat;
use crate::error::{CliError, CmdResult};
use crate::output::Out;
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Rows per Parquet row group (a group is held in memory while it is built).
pub const ROW_GROUP: usize = 8_192;

/// Bytes of text after which a row group is written early (cards with huge findings).
const ROW_GROUP_BYTES: usize = 64 << 20;

/// The columns holding JSON text in the index.
const JSON_COLUMNS: [&str; 3] = ["tags", "tokens", "findings"];

/// Writes the index `db` as `format` to `output` (`None` or `-`: standard output).
pub fn run(db: &Path, format: ExportFormat, output: Option<&Path>) -> CmdResult {
    let conn = open_existing(db)?;
    let mut out = Out::open(output)?;
    match format {
        ExportFormat::Jsonl => jsonl(&conn, db, &mut out)?,
        ExportFormat::Parquet => parquet(&conn, db, output, &mut out)?,
    }
    out.finish()?;
    Ok(0)
}

/// The exported columns of `cards`: name and declared type, in the table's order.
fn columns(conn: &Connection, db: &Path) -> Result<Vec<(String, String)>, CliError> {
    let mut st = conn
        .prepare("SELECT name, type FROM pragma_table_info('cards') ORDER BY cid")
        .map_err(|e| CliError::file(db, e))?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(|e| CliError::file(db, e))?;
    let mut out = Vec::new();
    for r in rows {
        let (name, kind) = r.map_err(|e| CliError::file(db, e))?;
        if name != "id" && name != "indexed_run" {
            out.push((name, kind));
        }
    }
    if out.is_empty() {
        return Err(CliError::file(
            db,
            "no table `cards`: not an index ccv3 wrote",
        ));
    }
    Ok(out)
}

/// Runs `SELECT` of the exported columns in path order and hands each row to `row`.
fn each_row(
    conn: &Connection,
    db: &Path,
    cols: &[(String, String)],
    mut row: impl FnMut(&rusqlite::Row<'_>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let list: Vec<String> = cols
        .iter()
        .map(|(n, _)| format!("\"{}\"", n.replace('"', "\"\"")))
        .collect();
    let sql = format!("SELECT {} FROM cards ORDER BY path", list.join(", "));
    let mut st = conn.prepare(&sql).map_err(|e| CliError::file(db, e))?;
    let mut rows = st.query([]).map_err(|e| CliError::file(db, e))?;
    while let Some(r) = rows.next().map_err(|e| CliError::file(db, e))? {
        row(r)?;
    }
    Ok(())
}

/// One JSON object per row and line.
fn jsonl(conn: &Connection, db: &Path, w: &mut Out) -> Result<(), CliError> {
    let cols = columns(conn, db)?;
    each_row(conn, db, &cols, |r| {
        let mut obj = Map::new();
        for (i, (name, _)) in cols.iter().enumerate() {
            let v = match r.get_ref(i).map_err(|e| CliError::file(db, e))? {
                ValueRef::Null | ValueRef::Blob(_) => Value::Null,
                ValueRef::Integer(n) => json!(n),
                ValueRef::Real(f) => json!(f),
                ValueRef::Text(t) => {
                    let t = String::from_utf8_lossy(t);
                    if JSON_COLUMNS.contains(&name.as_str()) {
                        serde_json::from_str(&t).unwrap_or(Value::String(t.into_owned()))
                    } else {
                        Value::String(t.into_owned())
                    }
                }
            };
            obj.insert(name.clone(), v);
        }
        serde_json::to_writer(&mut *w, &obj).map_err(std::io::Error::from)?;
        w.write_all(b"\n")?;
        Ok(())
    })
}

/// One column of a row group being built: the defined values and the definition levels (and
/// for `tags`, the repetition levels).
enum Column {
    /// INTEGER: nullable INT64.
    Int(Vec<i64>, Vec<i16>),
    /// REAL: nullable DOUBLE.
    Real(Vec<f64>, Vec<i16>),
    /// TEXT (and the JSON columns but `tags`): nullable UTF-8.
    Text(Vec<ByteArray>, Vec<i16>),
    /// `tags`: a nullable list of strings (definition 0 null, 1 empty, 3 an element).
    List(Vec<ByteArray>, Vec<i16>, Vec<i16>),
}

impl Column {
    /// The column for an index column of declared type `kind`.
    fn new(name: &str, kind: &str) -> Column {
        let kind = kind.to_ascii_uppercase();
        if name == "tags" {
            Column::List(Vec::new(), Vec::new(), Vec::new())
        } else if kind.contains("INT") {
            Column::Int(Vec::new(), Vec::new())
        } else if kind.contains("REAL") || kind.contains("FLOA") || kind.contains("DOUB") {
            Column::Real(Vec::new(), Vec::new())
        } else {
            Column::Text(Vec::new(), Vec::new())
        }
    }

    /// Its Parquet type.
    fn schema(&self, name: &str) -> parquet::errors::Result<Type> {
        let leaf = |name: &str, physical: Physical, logical: Option<LogicalType>| {
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
        };
        match self {
            Column::Int(..) => leaf(name, Physical::INT64, None),
            Column::Real(..) => leaf(name, Physical::DOUBLE, None),
            Column::Text(..) => {
                let logical = if JSON_COLUMNS.contains(&name) {
                    LogicalType::Json
                } else {
                    LogicalType::String
                };
                leaf(name, Physical::BYTE_ARRAY, Some(logical))
            }
            Column::List(..) => {
                let element = leaf("element", Physical::BYTE_ARRAY, Some(LogicalType::String))?;
                let list = Type::group_type_builder("list")
                    .with_repetition(Repetition::REPEATED)
                    .with_fields(vec![Arc::new(element)])
                    .build()?;
                Type::group_type_builder(name)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(Some(LogicalType::List))
                    .with_fields(vec![Arc::new(list)])
                    .build()
            }
        }
    }

    /// Adds one row's value; returns the bytes of text it holds.
    fn push(&mut self, v: ValueRef<'_>) -> usize {
        match self {
            Column::Int(vals, def) => {
                let n = match v {
                    ValueRef::Integer(n) => Some(n),
                    ValueRef::Text(t) => std::str::from_utf8(t).ok().and_then(|t| t.parse().ok()),
                    _ => None,
                };
                def.push(i16::from(n.is_some()));
                vals.extend(n);
                0
            }
            Column::Real(vals, def) => {
                let f = match v {
                    ValueRef::Real(f) => Some(f),
                    ValueRef::Integer(n) => Some(n as f64),
                    _ => None,
                };
                def.push(i16::from(f.is_some()));
                vals.extend(f);
                0
            }
            Column::Text(vals, def) => {
                let text: Option<Vec<u8>> = match v {
                    // Valid UTF-8 whatever the database holds (as `jsonl` writes it).
                    ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned().into_bytes()),
                    ValueRef::Integer(n) => Some(n.to_string().into_bytes()),
                    ValueRef::Real(f) => Some(f.to_string().into_bytes()),
                    ValueRef::Null | ValueRef::Blob(_) => None,
                };
                def.push(i16::from(text.is_some()));
                let len = text.as_ref().map_or(0, Vec::len);
                vals.extend(text.map(ByteArray::from));
                len
            }
            Column::List(vals, def, rep) => {
                let tags: Option<Vec<Value>> = match v {
                    ValueRef::Text(t) => serde_json::from_slice(t).ok(),
                    _ => None,
                };
                let Some(tags) = tags else {
                    def.push(0);
                    rep.push(0);
                    return 0;
                };
                if tags.is_empty() {
                    def.push(1);
                    rep.push(0);
                    return 0;
                }
                let mut len = 0;
                for (i, tag) in tags.into_iter().enumerate() {
                    let text = match tag {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    len += text.len();
                    def.push(3);
                    rep.push(i16::from(i > 0));
                    vals.push(ByteArray::from(text.into_bytes()));
                }
                len
            }
        }
    }

    /// Writes the column's values into the row group's next column and empties it.
    fn write(
        &mut self,
        col: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    ) -> parquet::errors::Result<()> {
        match self {
            Column::Int(vals, def) => {
                col.typed::<Int64Type>()
                    .write_batch(vals, Some(def), None)?;
                vals.clear();
                def.clear();
            }
            Column::Real(vals, def) => {
                col.typed::<DoubleType>()
                    .write_batch(vals, Some(def), None)?;
                vals.clear();
                def.clear();
            }
            Column::Text(vals, def) => {
                col.typed::<ByteArrayType>()
                    .write_batch(vals, Some(def), None)?;
                vals.clear();
                def.clear();
            }
            Column::List(vals, def, rep) => {
                col.typed::<ByteArrayType>()
                    .write_batch(vals, Some(def), Some(rep))?;
                vals.clear();
                def.clear();
                rep.clear();
            }
        }
        Ok(())
    }
}

/// One Parquet file of every row.
fn parquet(
    conn: &Connection,
    db: &Path,
    output: Option<&Path>,
    w: &mut Out,
) -> Result<(), CliError> {
    let target = output.map_or(Path::new(crate::stdio::STDOUT), crate::stdio::out_name);
    let failed = |e: parquet::errors::ParquetError| match e {
        // A write error already names the file (and a closed pipe stays quiet).
        parquet::errors::ParquetError::External(inner) => {
            match inner.downcast::<std::io::Error>() {
                Ok(io) => CliError::from(*io),
                Err(other) => CliError::file(target, other),
            }
        }
        e => CliError::file(target, e),
    };
    let cols = columns(conn, db)?;
    let mut buffers: Vec<Column> = cols.iter().map(|(n, k)| Column::new(n, k)).collect();
    let fields = cols
        .iter()
        .zip(&buffers)
        .map(|((name, _), c)| c.schema(name).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    let schema = Type::group_type_builder("cards")
        .with_fields(fields)
        .build()
        .map_err(failed)?;
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_created_by(format!("ccv3 {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut writer =
        SerializedFileWriter::new(&mut *w, Arc::new(schema), Arc::new(props)).map_err(failed)?;
    let mut rows = 0usize;
    let mut bytes = 0usize;
    each_row(conn, db, &cols, |r| {
        for (i, buf) in buffers.iter_mut().enumerate() {
            bytes += buf.push(r.get_ref(i).map_err(|e| CliError::file(db, e))?);
        }
        rows += 1;
        if rows == ROW_GROUP || bytes >= ROW_GROUP_BYTES {
            write_group(&mut buffers, &mut writer).map_err(failed)?;
            rows = 0;
            bytes = 0;
        }
        Ok(())
    })?;
    if rows > 0 {
        write_group(&mut buffers, &mut writer).map_err(failed)?;
    }
    writer.close().map_err(failed)?;
    Ok(())
}

/// Writes the buffered rows as one row group.
fn write_group<W: Write + Send>(
    buffers: &mut [Column],
    writer: &mut SerializedFileWriter<W>,
) -> parquet::errors::Result<()> {
    let mut group = writer.next_row_group()?;
    for buf in buffers.iter_mut() {
        let Some(mut col) = group.next_column()? else {
            break;
        };
        buf.write(&mut col)?;
        col.close()?;
    }
    group.close()?;
    Ok(())
}
