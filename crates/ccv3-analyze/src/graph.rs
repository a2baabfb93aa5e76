//! `ccv3 lore graph`: which entry triggers which, as the engine decides it
//! ([`ccv3_lore::CompiledBooks::recursion_edges`]), with its cycles and pictures.

use ccv3::Lorebook;
use ccv3_lore::{BookInput, BookKind, LorebookCompiler, ScanOptions};
use serde::Serialize;

/// One node: an entry of the book.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphNode {
    /// The entry's index (as `ccv3 lore list` numbers it).
    pub entry: usize,
    /// Its `name`, else its `comment`.
    pub name: Option<String>,
    /// Constant.
    pub constant: bool,
    /// Enabled.
    pub enabled: bool,
}

/// One edge: `from`'s content contains `key`, a key of `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphEdge {
    /// The entry whose content is scanned.
    pub from: usize,
    /// The entry a recursion step can activate.
    pub to: usize,
    /// The first of `to`'s keys found.
    pub key: String,
}

/// The recursion graph: `{nodes, edges}` as `ccv3 lore graph --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Graph {
    /// Every entry, in book order.
    pub nodes: Vec<GraphNode>,
    /// Every edge, by `from` then `to`.
    pub edges: Vec<GraphEdge>,
    /// Present and true when the engine's limits ([`ccv3_lore::GraphLimits`]) cut the search:
    /// some edges may be missing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The recursion graph of `book`. Books that do not set `recursive_scanning` are taken as
/// recursing (SillyTavern's and RisuAI's default); a book that turns it off has no edges.
///
/// ```
/// let ccv3::Document::Lorebook(bf) = ccv3::read_bytes(br#"{"spec": "lorebook_v3", "data": {"entries": [
///     {"keys": ["castle"], "content": "The castle has a dragon.", "enabled": true, "insertion_order": 0},
///     {"keys": ["dragon"], "content": "The dragon guards the castle.", "enabled": true, "insertion_order": 1}]}}"#)? else { panic!() };
/// let graph = ccv3_analyze::lore_graph(&bf.book);
/// let edges: Vec<(usize, usize)> = graph.edges.iter().map(|e| (e.from, e.to)).collect();
/// assert_eq!(edges, [(0, 1), (1, 0)]); // a cycle
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn lore_graph(book: &Lorebook) -> Graph {
    let nodes = book
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| GraphNode {
            entry: i,
            name: e
                .name
                .clone()
                .filter(|s| !s.is_empty())
                .or_else(|| e.comment.clone().filter(|s| !s.is_empty())),
            constant: e.constant == Some(true),
            enabled: e.enabled,
        })
        .collect();
    let input = [BookInput {
        book,
        kind: BookKind::Character,
        name: String::new(),
        world_info: false,
    }];
    let (edges, truncated) = match LorebookCompiler::new()
        .for_single_scan(true)
        .try_compile(&input)
    {
        Ok(compiled) => {
            let opts = ScanOptions {
                recursive: true,
                ..ScanOptions::default()
            };
            let g = compiled.recursion_edges(&opts);
            let edges = g
                .edges
                .into_iter()
                .map(|e| GraphEdge {
                    from: e.from.index,
                    to: e.to.index,
                    key: e.key,
                })
                .collect();
            (edges, !g.complete)
        }
        // Over the engine's entry limit (`lore scan` refuses it too): no edges, said so.
        Err(_) => (Vec::new(), !book.entries.is_empty()),
    };
    Graph {
        nodes,
        edges,
        truncated,
    }
}

/// The most cycles [`Graph::cycles`] lists.
pub const MAX_CYCLES: usize = 100;

impl Graph {
    /// Elementary cycles, each as its entries in order (the smallest first), at most
    /// [`MAX_CYCLES`]; found among the strongly connected components, shortest first.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let n = self.nodes.len();
        let mut adj = vec![Vec::new(); n];
        for e in &self.edges {
            if e.from < n && e.to < n {
                adj[e.from].push(e.to);
            }
        }
        let mut out: Vec<Vec<usize>> = Vec::new();
        // Each cycle through its smallest node s: a shortest path back to s through nodes > s
        // (breadth first), one per (s, first step) — enough to list the loops a writer sees.
        let mut prev = vec![usize::MAX; n];
        let mut stamp = vec![usize::MAX; n];
        for s in 0..n {
            if out.len() >= MAX_CYCLES {
                break;
            }
            for &first in &adj[s] {
                if first < s || out.len() >= MAX_CYCLES {
                    continue;
                }
                if first == s {
                    continue;
                }
                let run = s * n.max(1) + first;
                let mut queue = std::collections::VecDeque::from([first]);
                stamp[first] = run;
                prev[first] = s;
                let mut found = None;
                while let Some(u) = queue.pop_front() {
                    if adj[u].contains(&s) {
                        found = Some(u);
                        break;
                    }
                    for &v in &adj[u] {
                        if v > s && stamp[v] != run {
                            stamp[v] = run;
                            prev[v] = u;
                            queue.push_back(v);
                        }
                    }
                }
                if let Some(mut u) = found {
                    let mut path = vec![u];
                    while u != first {
                        u = prev[u];
                        path.push(u);
                    }
                    path.push(s);
                    path.reverse();
                    if !out.contains(&path) {
                        out.push(path);
                    }
                }
            }
        }
        out
    }

    /// The graph in Graphviz's DOT language (constant entries as boxes, disabled ones dashed).
    pub fn to_dot(&self) -> String {
        let mut s = String::from("digraph lore {\n  rankdir=LR;\n");
        for n in &self.nodes {
            let label = label_of(n);
            let mut attrs = format!("label={}", dot_quote(&label));
            if n.constant {
                attrs.push_str(", shape=box");
            }
            if !n.enabled {
                attrs.push_str(", style=dashed");
            }
            s.push_str(&format!("  e{} [{attrs}];\n", n.entry));
        }
        for e in &self.edges {
            s.push_str(&format!(
                "  e{} -> e{} [label={}];\n",
                e.from,
                e.to,
                dot_quote(&e.key)
            ));
        }
        s.push_str("}\n");
        s
    }

    /// The graph as a Mermaid flowchart (constant entries as boxes, the others rounded).
    pub fn to_mermaid(&self) -> String {
        let mut s = String::from("flowchart LR\n");
        for n in &self.nodes {
            let label = mermaid_text(&label_of(n));
            if n.constant {
                s.push_str(&format!("  e{}[\"{label}\"]\n", n.entry));
            } else {
                s.push_str(&format!("  e{}(\"{label}\")\n", n.entry));
            }
        }
        for e in &self.edges {
            s.push_str(&format!(
                "  e{} -->|\"{}\"| e{}\n",
                e.from,
                mermaid_text(&e.key),
                e.to
            ));
        }
        s
    }
}

/// `#3 name` (or `#3`).
fn label_of(n: &GraphNode) -> String {
    match &n.name {
        Some(name) => format!("#{} {}", n.entry, short(name)),
        None => format!("#{}", n.entry),
    }
}

/// At most 40 characters of a name, on one line.
fn short(s: &str) -> String {
    let one: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one.chars().count() > 40 {
        let mut t: String = one.chars().take(39).collect();
        t.push('…');
        t
    } else {
        one
    }
}

/// A DOT string literal.
fn dot_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in short(s).chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text inside a quoted Mermaid label (quotes and markup characters as entity codes).
fn mermaid_text(s: &str) -> String {
    let mut out = String::new();
    for c in short(s).chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '|' => out.push_str("#124;"),
            '#' => out.push_str("#35;"),
            _ => out.push(c),
        }
    }
    out
}
