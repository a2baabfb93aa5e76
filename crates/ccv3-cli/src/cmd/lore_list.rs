//! `ccv3 lore list FILE [--json]` (issue 16): a lorebook's entries at a glance.
//!
//! One line per entry: index, name (else comment), keys, position, insertion order, enabled,
//! and the decorator lines at the top of its content. `--json` prints one array of
//! `{"index","name","keys","secondary_keys","position","order","enabled","constant","decorators"}`
//! (`decorators` as [`ccv3::decorator::Decorator`] serialises).

use crate::error::{CliError, CmdResult};
use crate::load::load;
use crate::output::emit;
use crate::shown::shown;
use ccv3::{Document, Lorebook};
use serde_json::{json, Value};
use std::path::Path;

/// Lists the entries of the card's book or of the lorebook (to `-o FILE` when given).
pub fn run(path: &Path, as_json: bool, output: Option<&Path>) -> CmdResult {
    let book: Lorebook = match load(path, "FILE")? {
        Document::Card(cf) => cf
            .card
            .data
            .character_book
            .ok_or_else(|| CliError::file(path, "the card has no character_book"))?,
        Document::Lorebook(bf) => bf.book,
    };
    if as_json {
        let items: Vec<Value> = book
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let (decorators, _) = ccv3::decorator::parse_list(&e.content);
                json!({
                    "index": i,
                    "name": e.name.as_deref().or(e.comment.as_deref()),
                    "keys": e.keys,
                    "secondary_keys": e.secondary_keys.as_deref().unwrap_or(&[]),
                    "position": e.position,
                    "order": e.insertion_order,
                    "enabled": e.enabled,
                    "constant": e.constant.unwrap_or(false),
                    "decorators": decorators,
                })
            })
            .collect();
        emit(output, &format!("{}\n", Value::Array(items)))?;
        return Ok(0);
    }
    let mut s = format!(
        "{}: {}\n",
        shown(&crate::stdio::in_name(path).display().to_string()),
        super::validate::plural(book.entries.len(), "entry", "entries")
    );
    for (i, e) in book.entries.iter().enumerate() {
        let name = e.name.as_deref().or(e.comment.as_deref()).unwrap_or("-");
        let header = ccv3::decorator::split(&e.content).header;
        let mut line = format!(
            "  #{i:<4} {:<24} keys: {:<30} {:<11} order {:<5} {}",
            shown(name),
            shown(&e.keys.join(", ")),
            e.position.as_deref().unwrap_or("-"),
            e.insertion_order.to_string(),
            if e.enabled { "enabled " } else { "disabled" }
        );
        if e.constant == Some(true) {
            line.push_str(" constant");
        }
        if !header.is_empty() {
            line.push_str("  ");
            line.push_str(&shown(&header.replace('\n', " ")));
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    emit(output, &s)?;
    Ok(0)
}
