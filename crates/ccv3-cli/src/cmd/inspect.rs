//! `ccv3 inspect FILE [--json]`.

use super::validate::plural;
use crate::error::{CliError, CmdResult};
use crate::load::load;
use crate::shown::shown;
use ccv3::{Document, Severity};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Prints a summary, or the card as one V3 JSON object (to `-o FILE` when given).
pub fn run(path: &Path, json: bool, output: Option<&Path>) -> CmdResult {
    let doc = load(path, "FILE")?;
    // Written straight from the model to the output: no tree, no second copy of the text.
    let mut w = crate::output::Out::open(output)?;
    if json {
        match &doc {
            Document::Card(cf) => cf.card.write_v3_json(&mut w, true),
            Document::Lorebook(bf) => bf.book.write_lorebook_v3(&mut w, true),
        }
        .and_then(|()| w.write_all(b"\n"))?;
    } else {
        w.write_all(summary(crate::stdio::in_name(path), &doc).as_bytes())?;
    }
    w.finish()?;
    // The process ends next: a big card's allocations are left to the end of the process.
    std::mem::forget(doc);
    Ok(0)
}

/// `ccv3 inspect --summary [--json] [--tokens T] FILE`: what a character list shows of a card
/// (issue 29), as one JSON object or as lines; with `--tokens`, the permanent tokens counted.
pub fn run_summary(
    path: &Path,
    json: bool,
    tokens: Option<&str>,
    output: Option<&Path>,
) -> CmdResult {
    let tok = match tokens {
        Some(name) => {
            let kind: ccv3_tokens::TokenizerKind = name
                .parse()
                .map_err(|e| CliError::file(Path::new("--tokens"), e))?;
            Some(ccv3_tokens::load(&kind).map_err(|e| CliError::file(Path::new("--tokens"), e))?)
        }
        None => None,
    };
    let count = tok.as_ref().map(|t| move |text: &str| t.count(text));
    let s = crate::load::load_summary(
        path,
        "FILE",
        count.as_ref().map(|c| c as &dyn Fn(&str) -> usize),
    )?;
    let mut w = crate::output::Out::open(output)?;
    if json {
        let mut text = ccv3::json::to_pretty(&s);
        text.push(b'\n');
        w.write_all(&text)?;
    } else {
        w.write_all(summary_lines(&s).as_bytes())?;
    }
    w.finish()?;
    Ok(0)
}

/// The human form of a card summary: one `field: value` line each.
fn summary_lines(s: &ccv3::CardSummary) -> String {
    let mut rows: Vec<(&str, String)> = vec![("name:", shown(&s.name).into_owned())];
    if let Some(n) = &s.nickname {
        rows.push(("nickname:", shown(n).into_owned()));
    }
    rows.extend([
        ("creator:", shown(&s.creator).into_owned()),
        ("tags:", shown(&s.tags.join(", ")).into_owned()),
        ("spec:", format!("{} ({})", s.spec, shown(&s.spec_version))),
        ("container:", s.container.clone()),
        ("greetings:", s.greetings.to_string()),
        ("lorebook:", format!("{} entries", s.entries)),
        ("assets:", s.assets.to_string()),
    ]);
    if let Some(n) = s.permanent_tokens {
        rows.push(("permanent:", format!("{n} tokens")));
    }
    let mut out = String::new();
    for (label, value) in rows {
        let _ = writeln!(out, "{label:<13}{value}");
    }
    out
}

/// How many entries, files or assets a summary lists before it counts the rest.
const LISTED: usize = 50;

/// Cuts `text` to about `max` bytes, on a character boundary, marking the cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() > max {
        format!(
            "{}...",
            &text[..text.floor_char_boundary(max.saturating_sub(3))]
        )
    } else {
        text.to_string()
    }
}

/// One line per lorebook entry (issue 13: `inspect` lists a lorebook's entries): its id, its
/// name (or comment), its keys, and whether it is constant or disabled.
fn entries(s: &mut String, list: &[ccv3::Entry]) {
    for e in list.iter().take(LISTED) {
        let id = match &e.id {
            Some(serde_json::Value::String(t)) => format!("{} ", cut(t, 20)),
            Some(v) if !v.is_null() => format!("{} ", cut(&v.to_string(), 20)),
            _ => String::new(),
        };
        let title = e
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .or(e.comment.as_deref().filter(|c| !c.is_empty()))
            .unwrap_or("(untitled)");
        let mut flags = String::new();
        if e.constant == Some(true) {
            flags.push_str(" (constant)");
        }
        if !e.enabled {
            flags.push_str(" (disabled)");
        }
        let _ = writeln!(
            s,
            "  - {}\"{}\" keys: {}{flags}",
            shown(&id),
            shown(&cut(title, 60)),
            shown(&cut(&e.keys.join(", "), 80))
        );
    }
    if list.len() > LISTED {
        let _ = writeln!(s, "  ... {} more", list.len() - LISTED);
    }
}

/// The card's embedded files, each marked when no asset points at it (issue 13: such files are
/// kept, and `inspect` lists them).
fn files(s: &mut String, cf: &ccv3::CardFile) {
    let referenced: std::collections::HashSet<&str> = cf
        .card
        .data
        .assets
        .iter()
        .flatten()
        .filter_map(|a| match a.parsed_uri() {
            ccv3::AssetUri::Embedded(p) | ccv3::AssetUri::PngChunk(p) => Some(p),
            _ => None,
        })
        .collect();
    let loose = cf
        .files
        .iter()
        .filter(|f| !referenced.contains(f.path.as_str()))
        .count();
    let _ = writeln!(
        s,
        "files:       {} embedded ({loose} referenced by no asset)",
        cf.files.len()
    );
    for f in cf.files.iter().take(LISTED) {
        let note = if referenced.contains(f.path.as_str()) {
            ""
        } else {
            " (no asset)"
        };
        let _ = writeln!(
            s,
            "  - {} {}{note}",
            shown(&cut(&f.path, 100)),
            plural(f.data.len(), "byte", "bytes")
        );
    }
    if cf.files.len() > LISTED {
        let _ = writeln!(s, "  ... {} more", cf.files.len() - LISTED);
    }
}

fn summary(path: &Path, doc: &Document) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "file:        {}", shown(&path.display().to_string()));
    match doc {
        Document::Card(cf) => {
            let d = &cf.card.data;
            let _ = writeln!(s, "name:        {}", shown(&d.name));
            if let Some(n) = d.nickname.as_deref().filter(|n| !n.is_empty()) {
                let _ = writeln!(s, "nickname:    {}", shown(n));
            }
            let origin = cf.card.origin.map_or("?", |o| o.label());
            let _ = writeln!(
                s,
                "spec:        {origin} (written as spec_version {})",
                shown(&cf.card.spec_version)
            );
            let _ = writeln!(s, "container:   {}", cf.container.label());
            if !d.creator.is_empty() {
                let _ = writeln!(s, "creator:     {}", shown(&d.creator));
            }
            if !d.tags.is_empty() {
                let _ = writeln!(s, "tags:        {}", shown(&d.tags.join(", ")));
            }
            let _ = writeln!(
                s,
                "greetings:   1 first + {} alternate + {} group-only",
                d.alternate_greetings.len(),
                d.group_only_greetings.len()
            );
            match &d.character_book {
                Some(b) => {
                    let enabled = b.entries.iter().filter(|e| e.enabled).count();
                    let _ = writeln!(
                        s,
                        "lorebook:    {} ({enabled} enabled)",
                        plural(b.entries.len(), "entry", "entries")
                    );
                }
                None => {
                    let _ = writeln!(s, "lorebook:    none");
                }
            }
            match &d.assets {
                Some(list) => {
                    let _ = writeln!(s, "assets:      {}", list.len());
                    for a in list.iter().take(50) {
                        let uri = if a.uri.len() > 60 {
                            format!("{}...", &a.uri[..a.uri.floor_char_boundary(57)])
                        } else {
                            a.uri.clone()
                        };
                        let _ = writeln!(
                            s,
                            "  - {} \"{}\" .{} {}",
                            shown(&a.kind),
                            shown(&a.name),
                            shown(&a.ext),
                            shown(&uri)
                        );
                    }
                    if list.len() > 50 {
                        let _ = writeln!(s, "  ... {} more", list.len() - 50);
                    }
                }
                None => {
                    let _ = writeln!(
                        s,
                        "assets:      none listed (default: the card image as main icon)"
                    );
                }
            }
            if !cf.files.is_empty() {
                files(&mut s, cf);
            }
            let ext: Vec<&str> = d.extensions.keys().map(String::as_str).collect();
            if !ext.is_empty() {
                let _ = writeln!(s, "extensions:  {}", shown(&ext.join(", ")));
            }
        }
        Document::Lorebook(bf) => {
            let b = &bf.book;
            let _ = writeln!(
                s,
                "lorebook:    {}",
                shown(b.name.as_deref().unwrap_or("(unnamed)"))
            );
            let _ = writeln!(s, "format:      {:?}", bf.format);
            let enabled = b.entries.iter().filter(|e| e.enabled).count();
            let _ = writeln!(s, "entries:     {} ({enabled} enabled)", b.entries.len());
            entries(&mut s, &b.entries);
        }
    }
    let diags = ccv3::check_document(doc);
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    let _ = writeln!(
        s,
        "diagnostics: {}, {}",
        plural(errors, "error", "errors"),
        plural(warnings, "warning", "warnings")
    );
    for d in diags.iter().take(30) {
        let _ = writeln!(s, "  {}", shown(&d.to_string()));
    }
    if diags.len() > 30 {
        let _ = writeln!(
            s,
            "  ... {} more (ccv3 validate --json lists all)",
            diags.len() - 30
        );
    }
    s
}
