//! `ccv3 diff A B [--json]` and `ccv3 set FILE FIELD VALUE -o OUT` (issue 16): field-by-field
//! differences between two cards or lorebooks in any containers, and scripted edits of a field.
//!
//! Both work on the V3 JSON of the documents (`ccv3 inspect --json`), so a PNG and a CHARX of
//! one card compare equal but for what really differs (asset URIs name their container).
//! A field is a dotted path into that JSON: `data.name`, `data.tags`,
//! `data.character_book.entries.3.content`, `data.extensions.fav`; a path that does not start
//! with `spec`, `spec_version` or `data` is taken inside `data` (`name` is `data.name`).
//!
//! How a difference is shown (issue 31): short values whole; a longer text as the change with
//! [`CONTEXT`] words around it (`git diff --word-diff` marks, or colors on a terminal); a list
//! of texts (tags, keys, greetings) as the items added, removed and moved; a lorebook's entries
//! paired by `id` (else by name and keys) before their fields are compared, so an inserted
//! entry is one difference. The comparison is the CLI's own (the libraries have no diff): the
//! diffs themselves come from the `similar` crate.

use crate::args::ColorChoice;
use crate::error::{CliError, CmdResult};
use crate::load::{load, load_whole};
use crate::output::emit;
use crate::shown::shown;
use ccv3::Document;
use serde_json::{json, Value};
use similar::{Algorithm, ChangeTag, DiffOp, TextDiff};
use std::path::Path;
use std::time::Duration;

/// The most differences listed (then a count).
const LISTED: usize = 1_000;

/// Text values up to this many characters (and without a line break) are shown whole.
const SHORT: usize = 60;

/// Words of unchanged text shown on each side of a change.
const CONTEXT: usize = 6;

/// How long one text's diff may search for the smallest change (then it settles for a larger
/// one: a hostile card's two 100 MB descriptions still compare in bounded time).
const DIFF_TIME: Duration = Duration::from_secs(2);

/// A document's V3 JSON.
fn v3(doc: &Document) -> Value {
    match doc {
        Document::Card(cf) => cf.card.to_v3_json(),
        Document::Lorebook(bf) => json!({"spec": "lorebook_v3", "data": bf.book.to_json()}),
    }
}

/// One run of a text diff: text kept, inserted (in B only) or deleted (in A only).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change {
    op: ChangeTag,
    text: String,
}

/// What happened to one item of a list of texts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ItemChange<'v> {
    Insert {
        value: &'v str,
        at: usize,
    },
    Delete {
        value: &'v str,
        at: usize,
    },
    Move {
        value: &'v str,
        from: usize,
        to: usize,
    },
}

/// How a difference is shown.
#[derive(Debug)]
enum Detail<'v> {
    /// Two values (or one missing): shown whole.
    Values,
    /// Two texts: the runs that make A into B.
    Text(Vec<Change>),
    /// Two lists of texts: items added, removed and moved.
    List(Vec<ItemChange<'v>>),
}

/// One difference at a path.
#[derive(Debug)]
struct Difference<'v> {
    path: String,
    a: Option<&'v Value>,
    b: Option<&'v Value>,
    detail: Detail<'v>,
}

/// Whether `--color` (and `NO_COLOR`, and where the output goes) asks for colors.
fn use_color(color: ColorChoice, output: Option<&Path>) -> bool {
    use std::io::IsTerminal;
    match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let to_stdout = output.is_none_or(|p| p == Path::new("-"));
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            to_stdout && !no_color && std::io::stdout().is_terminal()
        }
    }
}

/// Prints the differences (to `-o FILE` when given); exit 0 when there are none, 1 when there
/// are.
pub fn diff(
    a: &Path,
    b: &Path,
    as_json: bool,
    color: ColorChoice,
    output: Option<&Path>,
) -> CmdResult {
    let (va, vb) = (v3(&load(a, "A")?), v3(&load(b, "B")?));
    let mut found: Vec<Difference<'_>> = Vec::new();
    let mut count = 0usize;
    walk("", Some(&va), Some(&vb), &mut found, &mut count);
    if as_json {
        let items: Vec<Value> = found.iter().map(to_json).collect();
        emit(output, &format!("{}\n", Value::Array(items)))?;
    } else {
        let paint = Paint(use_color(color, output));
        let mut s = String::new();
        for d in &found {
            render(d, paint, &mut s);
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

/// One difference as `--json` prints it: `{path, a, b}`, with `changes` for texts and `items`
/// for lists of texts.
fn to_json(d: &Difference<'_>) -> Value {
    let mut item = json!({"path": d.path, "a": d.a, "b": d.b});
    match &d.detail {
        Detail::Values => {}
        Detail::Text(changes) => {
            item["changes"] = changes
                .iter()
                .map(|c| json!({"op": op_name(c.op), "text": c.text}))
                .collect();
        }
        Detail::List(items) => {
            item["items"] = items
                .iter()
                .map(|i| match i {
                    ItemChange::Insert { value, at } => {
                        json!({"op": "insert", "value": value, "at": at})
                    }
                    ItemChange::Delete { value, at } => {
                        json!({"op": "delete", "value": value, "at": at})
                    }
                    ItemChange::Move { value, from, to } => {
                        json!({"op": "move", "value": value, "from": from, "to": to})
                    }
                })
                .collect();
        }
    }
    item
}

fn op_name(op: ChangeTag) -> &'static str {
    match op {
        ChangeTag::Equal => "equal",
        ChangeTag::Insert => "insert",
        ChangeTag::Delete => "delete",
    }
}

/// Colors (or, without them, `git diff --word-diff` marks) for inserted and deleted text.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn deleted(self, text: &str) -> String {
        if self.0 {
            format!("\x1b[31m{text}\x1b[0m")
        } else {
            format!("[-{text}-]")
        }
    }
    fn inserted(self, text: &str) -> String {
        if self.0 {
            format!("\x1b[32m{text}\x1b[0m")
        } else {
            format!("{{+{text}+}}")
        }
    }
}

/// Appends the lines of one difference.
fn render(d: &Difference<'_>, paint: Paint, s: &mut String) {
    let path = shown(&d.path);
    match &d.detail {
        Detail::Text(changes) if !is_short(d.a) || !is_short(d.b) => {
            s.push_str(&format!("{path}:\n"));
            for line in text_lines(changes, paint) {
                s.push_str(&format!("  {line}\n"));
            }
        }
        Detail::List(items) => {
            let shown_items: Vec<String> = items
                .iter()
                .map(|i| match i {
                    ItemChange::Insert { value, .. } => {
                        paint.inserted(&format!("+{}", quoted(value)))
                    }
                    ItemChange::Delete { value, .. } => {
                        paint.deleted(&format!("-{}", quoted(value)))
                    }
                    ItemChange::Move { value, from, to } => {
                        format!("moved {} ({from} -> {to})", quoted(value))
                    }
                })
                .collect();
            s.push_str(&format!("{path}: {}\n", shown_items.join(", ")));
        }
        _ => s.push_str(&format!("{path}: {} -> {}\n", short(d.a), short(d.b))),
    }
}

/// A text as JSON writes it (quoted, escaped), cut to [`SHORT`] characters.
fn quoted(text: &str) -> String {
    short(Some(&Value::String(text.to_string())))
}

/// Whether a value is a text short enough to show whole (or not a text).
fn is_short(v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(t)) => t.chars().count() <= SHORT && !t.contains('\n'),
        _ => true,
    }
}

/// The runs of a text diff shown with [`CONTEXT`] words of unchanged text around each change
/// (`…` where some are left out), split into lines at the texts' line breaks.
fn text_lines(changes: &[Change], paint: Paint) -> Vec<String> {
    let mut lines = vec![String::new()];
    let last = changes.len().saturating_sub(1);
    for (i, c) in changes.iter().enumerate() {
        let text = match c.op {
            ChangeTag::Equal => context(&c.text, i > 0, i < last),
            _ => c.text.clone(),
        };
        for (k, piece) in text.split('\n').enumerate() {
            if k > 0 {
                lines.push(String::new());
            }
            if piece.is_empty() {
                continue;
            }
            // Escaped before it is colored: the card's text cannot send its own escapes.
            let piece = shown(piece);
            let line = lines.last_mut().expect("one line at least");
            match c.op {
                ChangeTag::Equal => line.push_str(&piece),
                ChangeTag::Delete => line.push_str(&paint.deleted(&piece)),
                ChangeTag::Insert => line.push_str(&paint.inserted(&piece)),
            }
        }
    }
    lines
}

/// Unchanged text between changes: its [`CONTEXT`] words after the change before it (`after`)
/// and before the change after it (`before`), the rest left out.
fn context(text: &str, after: bool, before: bool) -> String {
    let words = words(text);
    let keep = CONTEXT * (usize::from(after) + usize::from(before));
    if words.len() <= keep {
        return text.to_string();
    }
    let mut s = String::new();
    if after {
        // Up to the end of the CONTEXT-th word.
        let (at, w) = words[CONTEXT - 1];
        s.push_str(&text[..at + w.len()]);
        s.push(' ');
    }
    s.push('…');
    if before {
        let (at, _) = words[words.len() - CONTEXT];
        s.push(' ');
        s.push_str(&text[at..]);
    }
    s
}

/// The words of a text (runs without whitespace) with their byte offsets.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &text[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out
}

/// The word-level diff of two texts (line-level for texts of more than 1,000 lines or 1 MiB),
/// as runs.
fn text_changes(a: &str, b: &str) -> Vec<Change> {
    let mut config = TextDiff::configure();
    config.algorithm(Algorithm::Myers).timeout(DIFF_TIME);
    // Long texts by line: a word diff of megabytes holds a token for every word.
    let by_line = a.len() + b.len() > 1 << 20 || a.lines().count().max(b.lines().count()) > 1_000;
    let d = if by_line {
        config.diff_lines(a, b)
    } else {
        config.diff_words(a, b)
    };
    let mut out: Vec<Change> = Vec::new();
    for op in d.ops() {
        for change in d.iter_changes(op) {
            let text = change.value();
            match out.last_mut() {
                Some(last) if last.op == change.tag() => last.text.push_str(text),
                _ => out.push(Change {
                    op: change.tag(),
                    text: text.to_string(),
                }),
            }
        }
    }
    out
}

/// Items added, removed and moved between two lists of texts (an item removed at one place
/// and added at another is moved).
fn list_changes<'v>(a: &[&'v str], b: &[&'v str]) -> Vec<ItemChange<'v>> {
    let ops = similar::capture_diff_slices(Algorithm::Myers, a, b);
    let mut deleted: Vec<(usize, &str)> = Vec::new();
    let mut inserted: Vec<(usize, &str)> = Vec::new();
    for op in ops {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete {
                old_index, old_len, ..
            } => deleted.extend((old_index..old_index + old_len).map(|i| (i, a[i]))),
            DiffOp::Insert {
                new_index, new_len, ..
            } => inserted.extend((new_index..new_index + new_len).map(|i| (i, b[i]))),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                deleted.extend((old_index..old_index + old_len).map(|i| (i, a[i])));
                inserted.extend((new_index..new_index + new_len).map(|i| (i, b[i])));
            }
        }
    }
    let mut out = Vec::new();
    let mut moved_to = vec![false; inserted.len()];
    for (from, value) in deleted {
        let to = inserted
            .iter()
            .enumerate()
            .position(|(k, (_, v))| !moved_to[k] && *v == value);
        match to {
            Some(k) => {
                moved_to[k] = true;
                out.push(ItemChange::Move {
                    value,
                    from,
                    to: inserted[k].0,
                });
            }
            None => out.push(ItemChange::Delete { value, at: from }),
        }
    }
    for (k, (at, value)) in inserted.into_iter().enumerate() {
        if !moved_to[k] {
            out.push(ItemChange::Insert { value, at });
        }
    }
    out
}

/// A value in at most 60 characters, escaped; `(none)` for a missing one.
fn short(v: Option<&Value>) -> String {
    let Some(v) = v else {
        return "(none)".into();
    };
    let text = v.to_string();
    let cut: String = text.chars().take(SHORT).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{}{more}", shown(&cut))
}

/// The texts of a list whose items are all texts.
fn texts(list: &[Value]) -> Option<Vec<&str>> {
    list.iter().map(Value::as_str).collect()
}

/// Whether `path` is a lorebook's entry list (a card's embedded book or a lorebook file's).
fn is_entries(path: &str) -> bool {
    path == "data.character_book.entries" || path == "data.entries"
}

/// What a lorebook entry is matched by: its `id`, else its name and keys.
fn entry_identity(e: &Value) -> (Option<String>, Option<String>) {
    let id = e.get("id").filter(|v| !v.is_null()).map(|v| v.to_string());
    let name_keys = json!([e.get("name"), e.get("comment"), e.get("keys")]).to_string();
    (id, Some(name_keys))
}

/// Pairs the entries of two lorebooks (by `id`, else by name and keys): the pairs (A index, B
/// index), in B's order, and the A entries left over.
fn pair_entries(a: &[Value], b: &[Value]) -> (Vec<(Option<usize>, usize)>, Vec<usize>) {
    let ida: Vec<_> = a.iter().map(entry_identity).collect();
    let idb: Vec<_> = b.iter().map(entry_identity).collect();
    let mut partner: Vec<Option<usize>> = vec![None; b.len()];
    let mut used = vec![false; a.len()];
    for by_id in [true, false] {
        let mut index: std::collections::HashMap<&str, Vec<usize>> = Default::default();
        for (i, (id, nk)) in ida.iter().enumerate().rev() {
            let key = if by_id { id } else { nk };
            if let (Some(k), false) = (key, used[i]) {
                index.entry(k.as_str()).or_default().push(i);
            }
        }
        for (j, (id, nk)) in idb.iter().enumerate() {
            if partner[j].is_some() {
                continue;
            }
            let key = if by_id { id } else { nk };
            let Some(k) = key else { continue };
            if let Some(i) = index.get_mut(k.as_str()).and_then(Vec::pop) {
                used[i] = true;
                partner[j] = Some(i);
            }
        }
    }
    let pairs = partner
        .into_iter()
        .enumerate()
        .map(|(j, i)| (i, j))
        .collect();
    let left = (0..a.len()).filter(|&i| !used[i]).collect();
    (pairs, left)
}

/// Records one difference (listing at most [`LISTED`]).
fn note<'v>(
    out: &mut Vec<Difference<'v>>,
    count: &mut usize,
    path: &str,
    (a, b): (Option<&'v Value>, Option<&'v Value>),
    detail: impl FnOnce() -> Detail<'v>,
) {
    *count += 1;
    if out.len() < LISTED {
        out.push(Difference {
            path: path.to_string(),
            a,
            b,
            detail: detail(),
        });
    }
}

/// Collects the differences between `a` and `b` under `path`: objects by key, lorebook entries
/// by identity, lists of texts by item, other arrays by index.
fn walk<'v>(
    path: &str,
    a: Option<&'v Value>,
    b: Option<&'v Value>,
    out: &mut Vec<Difference<'v>>,
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
        (Some(Value::Array(x)), Some(Value::Array(y))) if is_entries(path) => {
            let (pairs, left) = pair_entries(x, y);
            for i in left {
                walk(&at(&i.to_string()), x.get(i), None, out, count);
            }
            for (i, j) in pairs {
                walk(
                    &at(&j.to_string()),
                    i.and_then(|i| x.get(i)),
                    y.get(j),
                    out,
                    count,
                );
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => match (texts(x), texts(y)) {
            (Some(tx), Some(ty)) if tx != ty => {
                let items = list_changes(&tx, &ty);
                note(out, count, path, (a, b), || Detail::List(items));
            }
            (Some(_), Some(_)) => {}
            _ => {
                for i in 0..x.len().max(y.len()) {
                    walk(&at(&i.to_string()), x.get(i), y.get(i), out, count);
                }
            }
        },
        (x, y) if x == y => {}
        (Some(Value::String(x)), Some(Value::String(y))) => {
            note(out, count, path, (a, b), || {
                Detail::Text(text_changes(x, y))
            });
        }
        (x, y) => note(out, count, path, (x, y), || Detail::Values),
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
