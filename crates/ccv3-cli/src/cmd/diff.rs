//! `ccv3 diff A B [--json]` and `ccv3 set FILE FIELD VALUE -o OUT` (issue 16): field-by-field
//! differences between two cards or lorebooks in any containers, and scripted edits of a field.
//!
//! Both work on the V3 JSON of the documents (`ccv3 inspect --json`), so a PNG and a CHARX of
//! one card compare equal but for what really differs (asset URIs name their container).
//! A field is a dotted path into that JSON: `data.name`, `data.tags`,
//! `data.character_book.entries.3.content`, `data.extensions.fav`; a path that does not start
//! with `spec`, `spec_version` or `data` is taken inside `data` (`name` is `data.name`).

use crate::error::{CliError, CmdResult};
use crate::load::{load, load_whole};
use crate::output::emit;
use crate::shown::shown;
use ccv3::Document;
use serde_json::{json, Value};
use std::path::Path;

/// The most differences listed (then a count).
const LISTED: usize = 1_000;

/// A document's V3 JSON.
fn v3(doc: &Document) -> Value {
    match doc {
        Document::Card(cf) => cf.card.to_v3_json(),
        Document::Lorebook(bf) => json!({"spec": "lorebook_v3", "data": bf.book.to_json()}),
    }
}

/// Prints the differences (to `-o FILE` when given); exit 0 when there are none, 1 when there
/// are.
pub fn diff(a: &Path, b: &Path, as_json: bool, output: Option<&Path>) -> CmdResult {
    let (va, vb) = (v3(&load(a, "A")?), v3(&load(b, "B")?));
    let mut found: Vec<(String, Option<&Value>, Option<&Value>)> = Vec::new();
    let mut count = 0usize;
    walk("", Some(&va), Some(&vb), &mut found, &mut count);
    if as_json {
        let items: Vec<Value> = found
            .iter()
            .map(|(p, x, y)| json!({"path": p, "a": x, "b": y}))
            .collect();
        emit(output, &format!("{}\n", Value::Array(items)))?;
    } else {
        let mut s = String::new();
        for (p, x, y) in &found {
            s.push_str(&format!("{}: {} -> {}\n", shown(p), short(*x), short(*y)));
        }
        if count > found.len() {
            s.push_str(&format!("... and {} more\n", count - found.len()));
        }
        s.push_str(&format!(
            "{}\n",
            super::validate::plural(count, "difference", "differences")
        ));
        emit(output, &s)?;
    }
    Ok(u8::from(count > 0))
}

/// A value in at most 60 characters, escaped; `(none)` for a missing one.
fn short(v: Option<&Value>) -> String {
    let Some(v) = v else {
        return "(none)".into();
    };
    let text = v.to_string();
    let cut: String = text.chars().take(60).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{}{more}", shown(&cut))
}

/// Collects the differences between `a` and `b` under `path` (objects by key, arrays by index).
fn walk<'v>(
    path: &str,
    a: Option<&'v Value>,
    b: Option<&'v Value>,
    out: &mut Vec<(String, Option<&'v Value>, Option<&'v Value>)>,
    count: &mut usize,
) {
    let at = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            for (k, v) in x {
                walk(&at(k), Some(v), y.get(k), out, count);
            }
            for (k, v) in y {
                if !x.contains_key(k) {
                    walk(&at(k), None, Some(v), out, count);
                }
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                walk(&at(&i.to_string()), x.get(i), y.get(i), out, count);
            }
        }
        (x, y) if x == y => {}
        (x, y) => {
            *count += 1;
            if out.len() < LISTED {
                out.push((path.to_string(), x, y));
            }
        }
    }
}

/// `ccv3 set`: writes FILE with FIELD set to VALUE (text, or JSON with `--json`) to OUT as
/// `kind` (`-`: standard input, standard output).
pub fn set(
    file: &Path,
    field: &str,
    value: &str,
    as_json: bool,
    out: &Path,
    kind: super::convert::OutKind,
) -> CmdResult {
    let new: Value = if as_json {
        serde_json::from_str(value)
            .map_err(|e| CliError::file(Path::new("VALUE"), format!("not JSON: {e}")))?
    } else {
        Value::String(value.to_string())
    };
    let doc = load_whole(file, "FILE")?;
    let mut tree = v3(&doc);
    let mut parts: Vec<&str> = field.split('.').collect();
    if !matches!(parts.first(), Some(&"spec" | &"spec_version" | &"data")) {
        parts.insert(0, "data");
    }
    let bad = |why: &str| CliError::file(Path::new(field), why);
    let (last, parents) = parts.split_last().ok_or_else(|| bad("empty field"))?;
    let mut at = &mut tree;
    for p in parents {
        at = match at {
            Value::Object(m) => m
                .get_mut(*p)
                .ok_or_else(|| bad(&format!("no field {p:?}")))?,
            Value::Array(v) => p
                .parse::<usize>()
                .ok()
                .and_then(|i| v.get_mut(i))
                .ok_or_else(|| bad(&format!("no item {p:?}")))?,
            _ => {
                return Err(bad(&format!(
                    "{p:?} is inside a value that is not an object"
                )))
            }
        };
    }
    match at {
        Value::Object(m) => {
            m.insert((*last).to_string(), new);
        }
        Value::Array(v) => {
            let slot = last
                .parse::<usize>()
                .ok()
                .and_then(|i| v.get_mut(i))
                .ok_or_else(|| bad(&format!("no item {last:?}")))?;
            *slot = new;
        }
        _ => return Err(bad("the field's parent is not an object or array")),
    }
    let mut diags = Vec::new();
    match doc {
        Document::Card(mut cf) => {
            cf.card =
                ccv3::Card::from_json(tree, &mut diags).map_err(|e| CliError::file(file, e))?;
            super::convert::write_card(cf, None, kind, ccv3::CardVersion::V3, None, out)?;
        }
        Document::Lorebook(_) => {
            let data = tree.get_mut("data").map(Value::take).unwrap_or_default();
            let book = ccv3::Lorebook::from_json(data, "", false, &mut diags)
                .ok_or_else(|| CliError::file(file, "the edited lorebook is not an object"))?;
            let out_name = crate::stdio::out_name(out);
            if kind != super::convert::OutKind::Json {
                return Err(CliError::file(out_name, "lorebooks are written as .json"));
            }
            let bytes = ccv3::write_lorebook_v3(&book);
            super::convert::write_output(out, true, |f| std::io::Write::write_all(f, &bytes))
                .map_err(|e| CliError::file(out_name, e))?;
        }
    }
    crate::warnings::print_diagnostics(&diags);
    Ok(0)
}
