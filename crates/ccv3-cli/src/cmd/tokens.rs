//! `ccv3 tokens FILE [--tokenizer T] [--json]` (issue 16): token counts of a card's text fields
//! and of each lorebook entry (its content after the decorator lines, macros unexpanded), with
//! the tokenizer named.

use crate::error::{CliError, CmdResult};
use crate::load::load;
use crate::output::emit;
use crate::shown::shown;
use ccv3::Document;
use serde_json::{json, Map, Value};
use std::path::Path;

/// Prints the counts (to `-o FILE` when given).
pub fn run(path: &Path, tokenizer: &str, as_json: bool, output: Option<&Path>) -> CmdResult {
    let kind: ccv3_tokens::TokenizerKind = tokenizer
        .parse()
        .map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    let tok = ccv3_tokens::load(&kind).map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    let doc = load(path, "FILE")?;
    let mut fields: Vec<(&str, usize)> = Vec::new();
    let book = match &doc {
        Document::Card(cf) => {
            let d = &cf.card.data;
            for (name, text) in d.prompt_texts() {
                fields.push((name, tok.count(text)));
            }
            fields.push(("creator_notes", tok.count(&d.creator_notes)));
            let alt: usize = d.alternate_greetings.iter().map(|g| tok.count(g)).sum();
            fields.push(("alternate_greetings", alt));
            let group: usize = d.group_only_greetings.iter().map(|g| tok.count(g)).sum();
            fields.push(("group_only_greetings", group));
            d.character_book.as_ref()
        }
        Document::Lorebook(bf) => Some(&bf.book),
    };
    let entries: Vec<(usize, &str, usize)> = book
        .map(|b| {
            b.entries
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let body = ccv3::decorator::split(&e.content).body;
                    let name = e.name.as_deref().or(e.comment.as_deref()).unwrap_or("-");
                    (i, name, tok.count(body))
                })
                .collect()
        })
        .unwrap_or_default();
    let lore: usize = entries.iter().map(|e| e.2).sum();
    let total = fields.iter().map(|f| f.1).sum::<usize>() + lore;
    if as_json {
        let f: Map<String, Value> = fields
            .iter()
            .map(|(k, v)| ((*k).to_string(), json!(v)))
            .collect();
        let e: Vec<Value> = entries
            .iter()
            .map(|(i, n, t)| json!({"index": i, "name": n, "tokens": t}))
            .collect();
        let doc = json!({"tokenizer": tok.name(), "fields": f, "entries": e, "lorebook": lore, "total": total});
        emit(output, &format!("{doc}\n"))?;
        return Ok(0);
    }
    let mut s = format!("tokenizer: {}\n", tok.name());
    for (name, n) in &fields {
        s.push_str(&format!("  {name:<26} {n:>8}\n"));
    }
    if book.is_some() {
        s.push_str(&format!(
            "  {:<26} {lore:>8}  ({})\n",
            "lorebook",
            super::validate::plural(entries.len(), "entry", "entries")
        ));
        for (i, name, n) in &entries {
            let label = format!("#{i} {}", shown(name));
            let label: String = label.chars().take(24).collect();
            s.push_str(&format!("    {label:<24} {n:>8}\n"));
        }
    }
    s.push_str(&format!("  {:<26} {total:>8}\n", "total"));
    emit(output, &s)?;
    Ok(0)
}
