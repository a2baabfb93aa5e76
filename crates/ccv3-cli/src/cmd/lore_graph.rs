//! `ccv3 lore graph BOOK` (issue 27): which entry triggers which in a recursion step.
//!
//! The graph is [`ccv3_analyze::lore_graph`]'s (decided by the lorebook engine); this command
//! prints it: for people (each entry's edges, then the cycles), as JSON
//! (`{nodes: [{entry, name, constant, enabled}], edges: [{from, to, key}]}`), as Graphviz DOT or
//! as a Mermaid flowchart.

use crate::args::{GraphFormat, LoreGraphArgs};
use crate::error::{CliError, CmdResult};
use crate::load::load;
use crate::output::emit;
use crate::shown::shown;
use ccv3::{Document, Lorebook};
use std::path::Path;

/// Prints the recursion graph of the card's book or of the lorebook.
pub fn run(args: &LoreGraphArgs) -> CmdResult {
    let path: &Path = &args.book;
    let book: Lorebook = match load(path, "BOOK")? {
        Document::Card(cf) => cf
            .card
            .data
            .character_book
            .ok_or_else(|| CliError::file(path, "the card has no character_book"))?,
        Document::Lorebook(bf) => bf.book,
    };
    let graph = ccv3_analyze::lore_graph(&book);
    let format = if args.json {
        Some(GraphFormat::Json)
    } else {
        args.format
    };
    let text = match format {
        Some(GraphFormat::Json) => {
            let mut s = serde_json::to_string(&graph).map_err(std::io::Error::from)?;
            s.push('\n');
            s
        }
        Some(GraphFormat::Dot) => graph.to_dot(),
        Some(GraphFormat::Mermaid) => graph.to_mermaid(),
        None => human(path, &graph),
    };
    emit(args.output.as_deref(), &text)?;
    Ok(0)
}

/// The edges of each entry and the cycles, for people.
fn human(path: &Path, g: &ccv3_analyze::Graph) -> String {
    let mut s = format!(
        "{}: {}, {}\n",
        shown(&crate::stdio::in_name(path).display().to_string()),
        super::validate::plural(g.nodes.len(), "entry", "entries"),
        super::validate::plural(g.edges.len(), "edge", "edges"),
    );
    let name = |i: usize| {
        g.nodes
            .get(i)
            .and_then(|n| n.name.as_deref())
            .map(|n| format!("#{i} {}", shown(n)))
            .unwrap_or_else(|| format!("#{i}"))
    };
    let mut from = usize::MAX;
    for e in &g.edges {
        if e.from != from {
            from = e.from;
            s.push_str(&format!("  {} triggers\n", name(from)));
        }
        s.push_str(&format!(
            "    -> {} (key {:?})\n",
            name(e.to),
            shown(&e.key)
        ));
    }
    if g.truncated {
        s.push_str("the search stopped at its limits: some edges may be missing\n");
    }
    let cycles = g.cycles();
    if cycles.is_empty() {
        s.push_str("no cycles\n");
    } else {
        s.push_str(&format!(
            "{}:\n",
            super::validate::plural(cycles.len(), "cycle", "cycles")
        ));
        for c in &cycles {
            let mut names: Vec<String> = c.iter().map(|&i| format!("#{i}")).collect();
            if let Some(first) = names.first().cloned() {
                names.push(first);
            }
            s.push_str(&format!("  {}\n", names.join(" -> ")));
        }
    }
    s
}
