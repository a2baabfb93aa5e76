//! SillyTavern's macro engine syntax (the `sillytavern` dialect only), as SillyTavern 1.19.0
//! defines it (`public/scripts/macros/engine/MacroCstWalker.js`, `MacroLexer.js`,
//! `MacroFlags.js`, `MacroEngine.js`, `definitions/core-macros.js`):
//!
//! - **Flags** before the name: `{{#name}}` keeps the whitespace of scoped content, `{{/name}}`
//!   closes a scope; `!` (immediate), `?` (delayed), `~` (re-evaluate) and `>` (filter) are read
//!   and have no effect, as in SillyTavern. Whitespace may separate them (`{{ ! > name }}`).
//! - **Scoped blocks**: `{{name args}}content{{/name}}` passes the content as the last argument
//!   when one more argument fits the macro; else both tags stay as written. The content is
//!   expanded, dedented and trimmed ([`trim_content`]) unless the `#` flag is set. The
//!   outermost pairs of one text are taken first; a closing tag that closes nothing stays text.
//!   `{{//}}...{{///}}` is a comment block (the closing tag may have more slashes). A comment's
//!   argument or block content is expanded (side effects happen, as in SillyTavern) and dropped.
//! - **`{{if}}`**: `{{if COND}}then{{else}}other{{/if}}` or `{{if::COND::then}}`; only the taken
//!   branch is expanded. `!` before the condition (as written) inverts it; the condition is
//!   expanded, then a `.name`/`$name` reads that variable, a macro name without arguments is
//!   expanded; false are empty, `false`, `off`, `0` (any case).
//! - **Variable shorthand**: `{{.name}}` (chat variable), `{{$name}}` (global) with the
//!   operators `=`, `+=`, `-=`, `++`, `--`, `||`, `??`, `||=`, `??=`, `==`, `!=`, `>`, `>=`, `<`,
//!   `<=` (values evaluated only when needed); malformed ones stay as written.
//! - `\{` and `\}` in the final text become `{` and `}`.
//! - RisuAI's `{{#pure}}` / `{{#puredisplay}}` blocks mean nothing to SillyTavern: `#` is its
//!   whitespace flag and `pure` a name it does not define, so the body is read as ordinary
//!   text whose macros expand, and both tags stay as written (as an unknown scoped macro's do).
//!
//! Every new construct runs inside the expansion's [`crate::Limits`]: scoped nesting deeper than
//! [`crate::Limits::max_depth`] stays text with a [`Warning::Depth`], each item and each
//! re-pairing of a scope's content spends steps, variable writes go through the variable limits.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use super::{fmt_num, num, warn, State, Warning};
use crate::catalog;
use crate::dialect::Dialect;
use crate::families::sillytavern::st_value;
use crate::families::variables::add;
use crate::parse::{inner_nodes, normalize_name, split_macro, write_macro_source, Macro, Node};
use crate::parse::{parse, write_source, Block, BlockKind, Style};
use crate::registry::Registry;
use crate::vars::Scope;

/// `true` when expansions with `registry` use SillyTavern's engine syntax.
pub(super) fn enabled(registry: &Registry) -> bool {
    registry.dialect_of() == Dialect::SillyTavern
}

/// SillyTavern's post-processing: `\{` and `\}` become `{` and `}`.
pub(super) fn unescape_braces(out: &mut String) {
    if !out.contains("\\{") && !out.contains("\\}") {
        return;
    }
    let mut s = String::with_capacity(out.len());
    let mut chars = out.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('{' | '}')) {
            continue;
        }
        s.push(c);
    }
    *out = s;
}

/// SillyTavern's scoped-content trim (`trimScopedContent`): the indentation of the first
/// non-blank line is removed from every line (lines indented less lose all of theirs), then the
/// whole is trimmed.
pub(crate) fn trim_content(content: &str) -> String {
    let base = content
        .split('\n')
        .find(|l| !l.trim().is_empty())
        .map_or(0, |l| l.len() - l.trim_start_matches([' ', '\t']).len());
    if base == 0 {
        return content.trim().to_owned();
    }
    let mut out = String::with_capacity(content.len());
    for (i, line) in content.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        if indent >= base {
            out.push_str(line.get(base..).unwrap_or_default());
        } else {
            out.push_str(line.trim_start());
        }
    }
    out.trim().to_owned()
}

/// SillyTavern's `isFalseBoolean`: `off`, `false`, `0` after trimming, any case.
fn is_false_boolean(s: &str) -> bool {
    let t = s.trim();
    t == "0" || t.eq_ignore_ascii_case("false") || t.eq_ignore_ascii_case("off")
}

const FLAGS: &[char] = &['!', '?', '~', '#', '/', '>'];

/// One piece of a text as SillyTavern sees it: blocks the parser built for RisuAI's forms are
/// laid flat again (header, body, `{{:else}}`, body, closing tag).
#[derive(Clone, Copy)]
enum Item<'n> {
    Node(&'n Node),
    Head(&'n Macro),
}

impl<'n> Item<'n> {
    fn as_macro(self) -> Option<&'n Macro> {
        match self {
            Item::Head(m) => Some(m),
            Item::Node(Node::Macro(m)) => Some(m),
            Item::Node(_) => None,
        }
    }
}

/// `true` when RisuAI's parser took a `{{#pure}}` / `{{#puredisplay}}` body as text somewhere
/// in `nodes` (blocks nest at most [`crate::Limits::max_depth`] deep).
fn has_pure(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Block(b) => {
            matches!(b.kind, BlockKind::Pure | BlockKind::PureDisplay)
                || has_pure(&b.then)
                || b.otherwise.as_ref().is_some_and(|(_, body)| has_pure(body))
        }
        _ => false,
    })
}

/// Moves every source offset in `nodes` by `by` bytes (nodes parsed from a slice of the text).
fn shift_offsets(nodes: &mut [Node], by: usize) {
    fn shift_macro(m: &mut Macro, by: usize) {
        m.offset = m.offset.saturating_add(by);
        for a in &mut m.args {
            shift_offsets(a, by);
        }
    }
    for n in nodes {
        match n {
            Node::Text(_) => {}
            Node::Macro(m) => shift_macro(m, by),
            Node::Block(b) => {
                shift_macro(&mut b.header, by);
                shift_offsets(&mut b.then, by);
                if let Some((m, body)) = &mut b.otherwise {
                    shift_macro(m, by);
                    shift_offsets(body, by);
                }
                shift_macro(&mut b.close, by);
            }
        }
    }
}

fn flatten<'n>(nodes: &'n [Node], out: &mut Vec<Item<'n>>) {
    for n in nodes {
        match n {
            Node::Block(b) => {
                out.push(Item::Head(&b.header));
                flatten(&b.then, out);
                if let Some((m, body)) = &b.otherwise {
                    out.push(Item::Head(m));
                    flatten(body, out);
                }
                out.push(Item::Head(&b.close));
            }
            other => out.push(Item::Node(other)),
        }
    }
}

/// What SillyTavern reads from a macro: its name without flags, the flags, the argument count.
struct Tag<'n> {
    /// Normalised name without flags (`""` when there is none).
    name: Cow<'n, str>,
    closing: bool,
    /// The `#` flag.
    preserve: bool,
    argc: usize,
    /// `{{.name ...}}` / `{{$name ...}}`.
    shorthand: bool,
    /// The macro split again after its flags, when the flags hid the name (`{{! name}}`).
    resplit: Option<Box<Macro>>,
}

fn tag_of(m: &Macro) -> Option<Tag<'_>> {
    let n = m.name.as_deref()?;
    fn plain<'a>(name: Cow<'a, str>, flags: &str, argc: usize) -> Tag<'a> {
        Tag {
            shorthand: name.starts_with(['.', '$']),
            name,
            closing: flags.contains('/'),
            preserve: flags.contains('#'),
            argc,
            resplit: None,
        }
    }
    if m.marker {
        return Some(plain(Cow::Borrowed(n), "", 0));
    }
    if n == "//" {
        // `{{//}}` opens a comment block, `{{///}}` (more slashes allowed) closes it.
        let mut arg = String::new();
        for a in &m.args {
            write_source(a, &mut arg);
        }
        let arg = arg.trim();
        let closing = !arg.is_empty() && arg.bytes().all(|b| b == b'/');
        let argc = usize::from(!arg.is_empty() && !closing);
        let mut t = plain(Cow::Borrowed("//"), if closing { "/" } else { "" }, argc);
        t.shorthand = false;
        return Some(t);
    }
    let flag_len = n.len() - n.trim_start_matches(FLAGS).len();
    if flag_len == 0 {
        return Some(plain(Cow::Borrowed(n), "", m.args.len()));
    }
    let (flags, rest) = n.split_at(flag_len);
    if !rest.is_empty() {
        return Some(plain(Cow::Borrowed(rest), flags, m.args.len()));
    }
    // The flags stand alone (`{{/ name}}`, `{{ ! ? name }}`): split the content again.
    let mut nodes = inner_nodes(m);
    let mut flags = String::new();
    if let Some(Node::Text(t)) = nodes.first_mut() {
        let body = t.trim_start_matches(|c: char| {
            if FLAGS.contains(&c) {
                flags.push(c);
                true
            } else {
                c.is_whitespace()
            }
        });
        *t = body.to_owned();
    }
    if matches!(nodes.first(), Some(Node::Text(t)) if t.is_empty()) {
        nodes.remove(0);
    }
    let again = split_macro(m.offset, nodes);
    let name = again.name.clone().unwrap_or_default();
    let mut t = plain(Cow::Owned(name.clone()), &flags, again.args.len());
    if !name.is_empty() {
        t.resplit = Some(Box::new(again));
    }
    Some(t)
}

/// Argument counts a macro accepts in SillyTavern (min, max); `None` for a name the registry
/// does not know (SillyTavern lets unknown macros take scoped content).
fn arity(registry: &Registry, name: &str) -> Option<(usize, usize)> {
    match name {
        "if" => return Some((2, 2)),
        "else" => return Some((0, 0)),
        "trim" | "//" => return Some((0, 1)),
        _ => {}
    }
    registry.get(name)?;
    let Some(row) = catalog::lookup(Dialect::SillyTavern, name) else {
        return Some((0, usize::MAX));
    };
    let n = row.args.matches("::").count();
    Some(if row.args.trim().is_empty() {
        (0, 0)
    } else if n == 0 {
        (1, 1)
    } else {
        (n, n)
    })
}

fn accepts_scoped(registry: &Registry, tag: &Tag<'_>) -> bool {
    if tag.shorthand || tag.name.is_empty() {
        return false;
    }
    arity(registry, &tag.name).is_none_or(|(min, max)| (min..=max).contains(&(tag.argc + 1)))
}

/// How the items of one text pair up at its level.
struct Pairs {
    /// For a scope's opening tag: the index of its closing tag.
    scope_end: Vec<Option<usize>>,
    /// Tags kept as written: pairs whose macro takes no more arguments.
    raw: Vec<bool>,
}

/// SillyTavern's `processScopedMacros`: opening and closing tags of the same name pair like
/// brackets (only macros that can take one more argument count as openers); the outermost
/// pairs become scopes; a pair whose opener cannot take the content keeps both tags as text.
fn pair(registry: &Registry, tags: &[Option<Tag<'_>>]) -> Option<Pairs> {
    if !tags.iter().flatten().any(|t| t.closing) {
        return None;
    }
    let mut capable: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut other: HashMap<&str, VecDeque<usize>> = HashMap::new();
    let mut scope_pairs = Vec::new();
    let mut raw_pairs = Vec::new();
    for (i, t) in tags.iter().enumerate() {
        let Some(t) = t else { continue };
        if t.shorthand || t.name.is_empty() {
            continue;
        }
        if t.closing {
            if let Some(o) = capable.get_mut(t.name.as_ref()).and_then(Vec::pop) {
                scope_pairs.push((o, i));
            } else if let Some(o) = other.get_mut(t.name.as_ref()).and_then(VecDeque::pop_front) {
                raw_pairs.push((o, i));
            }
        } else if accepts_scoped(registry, t) {
            capable.entry(t.name.as_ref()).or_default().push(i);
        } else {
            other.entry(t.name.as_ref()).or_default().push_back(i);
        }
    }
    scope_pairs.sort_unstable();
    let mut p = Pairs {
        scope_end: vec![None; tags.len()],
        raw: vec![false; tags.len()],
    };
    let mut chosen: Vec<(usize, usize)> = Vec::new();
    for (o, c) in scope_pairs {
        if chosen.last().is_some_and(|&(_, e)| o < e) {
            continue;
        }
        chosen.push((o, c));
        if let Some(slot) = p.scope_end.get_mut(o) {
            *slot = Some(c);
        }
    }
    // The chosen scopes are disjoint and sorted: the one that could hold `i` starts last
    // before it.
    let inside = |i: usize| {
        let k = chosen.partition_point(|&(o, _)| o < i);
        k > 0 && chosen.get(k - 1).is_some_and(|&(_, c)| i < c)
    };
    for (o, c) in raw_pairs {
        if !inside(o) && !inside(c) {
            if let Some(r) = p.raw.get_mut(o) {
                *r = true;
            }
        }
    }
    Some(p)
}

/// Where `{{else}}` splits an `{{if}}` body: the first one outside nested scoped `{{if}}`s.
fn else_split(tags: &[Option<Tag<'_>>]) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tags.iter().enumerate() {
        let Some(t) = t else { continue };
        match t.name.as_ref() {
            "if" if t.closing => depth = depth.saturating_sub(1),
            "if" if t.argc == 1 => depth += 1,
            "else" if depth == 0 && !t.closing => return Some(i),
            _ => {}
        }
    }
    None
}

/// A variable shorthand operator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum VarOp {
    Get,
    Inc,
    Dec,
    Set,
    Add,
    Sub,
    Or,
    Nullish,
    OrAssign,
    NullishAssign,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// Operators in the order SillyTavern's lexer tries them (`MacroLexer.js`).
const VAR_OPS: &[(&str, VarOp)] = &[
    ("++", VarOp::Inc),
    ("--", VarOp::Dec),
    ("??=", VarOp::NullishAssign),
    ("??", VarOp::Nullish),
    ("||=", VarOp::OrAssign),
    ("||", VarOp::Or),
    ("-=", VarOp::Sub),
    ("==", VarOp::Eq),
    ("!=", VarOp::Ne),
    (">=", VarOp::Ge),
    (">", VarOp::Gt),
    ("<=", VarOp::Le),
    ("<", VarOp::Lt),
    ("+=", VarOp::Add),
    ("=", VarOp::Set),
];

/// The length of a shorthand variable name at the start of `s`: a letter, then letters,
/// digits, `_` or `-`, not ending with `-` (`MACRO_VARIABLE_SHORTHAND_PATTERN`).
fn var_name_len(s: &str) -> usize {
    let b = s.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return 0;
    }
    let mut end = 1 + b
        .iter()
        .skip(1)
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'-')
        .count();
    while end > 1 && b.get(end - 1) == Some(&b'-') {
        end -= 1;
    }
    end
}

/// A parsed `{{.name op value}}`.
struct VarExpr {
    scope: Scope,
    name: String,
    op: VarOp,
    /// The value's nodes (text after the operator, nested macros).
    value: Vec<Node>,
}

fn parse_var_expr(m: &Macro) -> Option<VarExpr> {
    let mut nodes = inner_nodes(m);
    let Some(Node::Text(first)) = nodes.first() else {
        return None;
    };
    let s = first.trim_start_matches(|c: char| c.is_whitespace() || FLAGS.contains(&c));
    let scope = match s.as_bytes().first() {
        Some(b'.') => Scope::Local,
        Some(b'$') => Scope::Global,
        _ => return None,
    };
    let s = s.get(1..)?.trim_start();
    let len = var_name_len(s);
    if len == 0 {
        return None;
    }
    let name = s.get(..len)?.to_owned();
    let rest = s.get(len..)?.trim_start();
    let Some(&(sym, op)) = VAR_OPS.iter().find(|(sym, _)| rest.starts_with(sym)) else {
        // No operator: only whitespace may follow.
        return (rest.trim().is_empty() && nodes.len() == 1).then_some(VarExpr {
            scope,
            name,
            op: VarOp::Get,
            value: Vec::new(),
        });
    };
    let after = rest.get(sym.len()..)?.to_owned();
    if matches!(op, VarOp::Inc | VarOp::Dec) {
        return (after.trim().is_empty() && nodes.len() == 1).then_some(VarExpr {
            scope,
            name,
            op,
            value: Vec::new(),
        });
    }
    if let Some(Node::Text(t)) = nodes.first_mut() {
        *t = after;
    }
    Some(VarExpr {
        scope,
        name,
        op,
        value: nodes,
    })
}

impl State<'_> {
    /// Spends `n` steps (scans inside the engine); `false` once the step bound is reached.
    fn spend(&mut self, n: u64) -> bool {
        if self.stopped {
            return false;
        }
        self.steps = self.steps.saturating_sub(1);
        self.steps = self.steps.saturating_add(n);
        self.step()
    }

    /// [`State::nodes`] for the `sillytavern` dialect.
    pub(super) fn st_nodes(&mut self, nodes: &[Node], out: &mut String) {
        if let [Node::Text(t)] = nodes {
            // Plain text (most arguments): nothing to pair.
            if self.step() {
                self.push(out, t);
            }
            return;
        }
        if has_pure(nodes) {
            let Some(opened) = self.open_pure(nodes, 0) else {
                return;
            };
            self.st_nodes(&opened, out);
            return;
        }
        let mut items = Vec::with_capacity(nodes.len());
        flatten(nodes, &mut items);
        let tags: Vec<Option<Tag<'_>>> = items
            .iter()
            .map(|i| i.as_macro().and_then(tag_of))
            .collect();
        self.st_items(&items, &tags, out);
    }

    /// `nodes` with every pure block opened for SillyTavern: its header, its body parsed as
    /// macros, its closing tag (see the module docs). Parsing counts as work, like nested text;
    /// `None` when the budget is spent. Pure blocks nested deeper than
    /// [`crate::Limits::max_depth`] keep their body as text, with a [`Warning::Depth`] (each
    /// level parses its body again).
    fn open_pure(&mut self, nodes: &[Node], depth: usize) -> Option<Vec<Node>> {
        let mut out = Vec::with_capacity(nodes.len());
        for n in nodes {
            let Node::Block(b) = n else {
                out.push(n.clone());
                continue;
            };
            if !matches!(b.kind, BlockKind::Pure | BlockKind::PureDisplay) {
                let then = self.open_pure(&b.then, depth)?;
                let otherwise = match &b.otherwise {
                    Some((m, body)) => Some((m.clone(), self.open_pure(body, depth)?)),
                    None => None,
                };
                out.push(Node::Block(Box::new(Block {
                    kind: b.kind,
                    header: b.header.clone(),
                    then,
                    otherwise,
                    close: b.close.clone(),
                })));
                continue;
            }
            if depth >= self.limits.depth() {
                warn(
                    &mut self.warnings,
                    Warning::Depth {
                        offset: b.header.offset,
                    },
                );
                // Laid flat with the body as text, so it is not opened again.
                out.push(Node::Macro(Box::new(b.header.clone())));
                out.extend(b.then.iter().cloned());
                out.push(Node::Macro(Box::new(b.close.clone())));
                continue;
            }
            let body = match b.then.as_slice() {
                [Node::Text(t)] => t.as_str(),
                _ => "",
            };
            if self.stopped || !self.add_work(body.len()) {
                return None;
            }
            let mut parsed = parse(body, self.limits).nodes;
            shift_offsets(&mut parsed, b.close.offset.saturating_sub(body.len()));
            out.push(Node::Macro(Box::new(b.header.clone())));
            if has_pure(&parsed) {
                out.extend(self.open_pure(&parsed, depth + 1)?);
            } else {
                out.extend(parsed);
            }
            out.push(Node::Macro(Box::new(b.close.clone())));
        }
        Some(out)
    }

    fn st_items(&mut self, items: &[Item<'_>], tags: &[Option<Tag<'_>>], out: &mut String) {
        let pairs = pair(self.registry, tags);
        if pairs.is_some() && !self.spend(items.len() as u64) {
            return;
        }
        let mut i = 0;
        while let Some(item) = items.get(i).copied() {
            if !self.step() {
                return;
            }
            let Some(m) = item.as_macro() else {
                if let Item::Node(node) = item {
                    match node {
                        Node::Text(t) => self.push(out, t),
                        Node::Block(b) => self.block(b, out),
                        Node::Macro(m) => self.macro_(m, out),
                    }
                }
                i += 1;
                continue;
            };
            let Some(tag) = tags.get(i).and_then(Option::as_ref) else {
                self.macro_(m, out);
                i += 1;
                continue;
            };
            let raw = pairs
                .as_ref()
                .is_some_and(|p| p.raw.get(i).copied().unwrap_or(false));
            if raw || tag.closing {
                // Closing tags that close nothing here and pairs that cannot take content stay
                // as written.
                let mut s = String::new();
                write_macro_source(m, &mut s);
                self.push(out, &s);
                i += 1;
                continue;
            }
            let end = pairs
                .as_ref()
                .and_then(|p| p.scope_end.get(i).copied().flatten());
            if let Some(j) = end {
                let body = (
                    items.get(i + 1..j).unwrap_or_default(),
                    tags.get(i + 1..j).unwrap_or_default(),
                );
                let close = items.get(j).and_then(|c| c.as_macro());
                self.st_macro(m, tag, Some(body), close, out);
                i = j + 1;
            } else {
                self.st_macro(m, tag, None, None, out);
                i += 1;
            }
        }
    }

    /// Expands a scope's content (or an `{{if}}` branch) within the nesting bound.
    fn st_body(&mut self, items: &[Item<'_>], tags: &[Option<Tag<'_>>], offset: usize) -> String {
        let mut s = String::new();
        if self.st_depth >= self.limits.depth() {
            warn(&mut self.warnings, Warning::Depth { offset });
            for item in items {
                match item {
                    Item::Head(m) => write_macro_source(m, &mut s),
                    Item::Node(n) => write_source(std::slice::from_ref(*n), &mut s),
                }
            }
            return s;
        }
        self.st_depth += 1;
        self.st_items(items, tags, &mut s);
        self.st_depth -= 1;
        s
    }

    fn st_macro(
        &mut self,
        m: &Macro,
        tag: &Tag<'_>,
        body: Option<(&[Item<'_>], &[Option<Tag<'_>>])>,
        close: Option<&Macro>,
        out: &mut String,
    ) {
        if tag.shorthand {
            self.st_var(m, out);
            return;
        }
        let eff = tag.resplit.as_deref().unwrap_or(m);
        if tag.name == "//" {
            // A comment gives nothing. Its argument, or a comment block's content, is still
            // expanded (side effects happen, as in SillyTavern, whose `//` macro has no delayed
            // arguments), then dropped.
            if let Some((items, tags)) = body {
                self.st_body(items, tags, m.offset);
            } else {
                self.expand_args(m);
            }
            return;
        }
        if tag.name == "if" && self.registry.contains("if") {
            self.st_if(m, eff, tag, body, out);
            return;
        }
        if body.is_none() && tag.resplit.is_none() && tag.name == eff.name.as_deref().unwrap_or("")
        {
            self.macro_(m, out);
            return;
        }
        let content = body.map(|(items, tags)| {
            let s = self.st_body(items, tags, m.offset);
            if tag.preserve {
                s
            } else {
                trim_content(&s)
            }
        });
        self.st_call(m, eff, &tag.name, content, tag.preserve, close, out);
    }

    /// Calls macro `name` with `eff`'s arguments and the scoped content as the last one.
    #[allow(clippy::too_many_arguments)]
    fn st_call(
        &mut self,
        written: &Macro,
        eff: &Macro,
        name: &str,
        content: Option<String>,
        preserve: bool,
        close: Option<&Macro>,
        out: &mut String,
    ) {
        let mut args = self.expand_args(eff);
        if self.stopped {
            return;
        }
        self.current_offset = written.offset;
        let registry = self.registry;
        let handler = registry.get(name);
        let scoped = content.is_some();
        let (style, sep) = if scoped {
            if eff.style == Style::Bare {
                args.clear();
            }
            (Style::DoubleColon, "::")
        } else {
            (eff.style, eff.sep.as_str())
        };
        let written_args = args.len();
        if let Some(c) = content {
            args.push(c);
        }
        let result = match handler {
            None => None,
            Some(handler) => {
                let last = args.len().saturating_sub(1);
                let trimmed: Vec<&str> = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        if scoped && preserve && i == last {
                            a.as_str()
                        } else {
                            a.trim()
                        }
                    })
                    .collect();
                let mut call = super::Call {
                    st: self,
                    name,
                    args: &trimmed,
                    raw_args: &args,
                    sep,
                    style,
                    offset: written.offset,
                    keep_whitespace: scoped && preserve,
                    scoped,
                    out,
                };
                handler(&mut call)
            }
        };
        match result {
            Some(s) => self.push(out, &s),
            None => {
                let shown = args.get(..written_args).unwrap_or_default().to_vec();
                self.verbatim(written, &shown, out);
                if scoped {
                    if let Some(c) = args.last() {
                        let c = c.clone();
                        self.push(out, &c);
                    }
                    if let Some(close) = close {
                        let mut s = String::new();
                        write_macro_source(close, &mut s);
                        self.push(out, &s);
                    }
                }
            }
        }
    }

    /// `{{if}}`: the condition, then only the taken branch.
    fn st_if(
        &mut self,
        written: &Macro,
        eff: &Macro,
        tag: &Tag<'_>,
        body: Option<(&[Item<'_>], &[Option<Tag<'_>>])>,
        out: &mut String,
    ) {
        let inline_ok = body.is_none() && eff.style == Style::DoubleColon && eff.args.len() == 2;
        if !(body.is_some() && eff.args.len() == 1 || inline_ok) {
            // Wrong number of arguments: SillyTavern leaves the macro as written.
            let mut s = String::new();
            write_macro_source(written, &mut s);
            self.push(out, &s);
            return;
        }
        self.current_offset = written.offset;
        let cond_nodes = eff.args.first().map(Vec::as_slice).unwrap_or_default();
        let truthy = self.st_condition(cond_nodes, written.offset);
        if self.stopped {
            return;
        }
        let inline_items;
        let inline_tags: Vec<Option<Tag<'_>>>;
        let (items, tags) = match body {
            Some(b) => b,
            None => {
                let mut v = Vec::new();
                flatten(
                    eff.args.get(1).map(Vec::as_slice).unwrap_or_default(),
                    &mut v,
                );
                inline_tags = v.iter().map(|i| i.as_macro().and_then(tag_of)).collect();
                inline_items = v;
                (inline_items.as_slice(), inline_tags.as_slice())
            }
        };
        let split = else_split(tags);
        let branch = match (truthy, split) {
            (true, Some(k)) => Some((items.get(..k), tags.get(..k))),
            (true, None) => Some((Some(items), Some(tags))),
            (false, Some(k)) => Some((items.get(k + 1..), tags.get(k + 1..))),
            (false, None) => None,
        };
        let Some((Some(items), Some(tags))) = branch else {
            return;
        };
        let s = self.st_body(items, tags, written.offset);
        let s = if tag.preserve { s } else { trim_content(&s) };
        self.push(out, &s);
    }

    /// The truth of an `{{if}}` condition, SillyTavern's way.
    fn st_condition(&mut self, nodes: &[Node], offset: usize) -> bool {
        let mut inverted = false;
        let mut cond = String::new();
        match nodes.split_first() {
            Some((Node::Text(t), rest)) if t.trim_start().starts_with('!') => {
                inverted = true;
                let after = t.trim_start().get(1..).unwrap_or_default().trim_start();
                self.push(&mut cond, after);
                self.nodes(rest, &mut cond);
            }
            _ => self.nodes(nodes, &mut cond),
        }
        let mut cond = cond.trim().to_owned();
        let var = cond
            .strip_prefix('.')
            .map(|n| (Scope::Local, n))
            .or_else(|| cond.strip_prefix('$').map(|n| (Scope::Global, n)));
        if let Some((scope, name)) =
            var.filter(|(_, n)| !n.is_empty() && var_name_len(n) == n.len())
        {
            cond = self.vars.get(scope, name).unwrap_or_default().to_owned();
        } else if var_name_len(&cond) > 0
            && cond
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            let name = normalize_name(&cond);
            let takes_none = arity(self.registry, &name).is_some_and(|(min, _)| min == 0);
            if takes_none && name != "if" && name != "else" {
                let call = Macro {
                    offset,
                    name: Some(name),
                    head: cond.clone(),
                    sep: String::new(),
                    style: Style::Bare,
                    args: Vec::new(),
                    marker: false,
                };
                let mut s = String::new();
                self.macro_(&call, &mut s);
                cond = s;
            }
        }
        let falsy = cond.is_empty() || is_false_boolean(&cond);
        falsy == inverted
    }

    /// `{{.name op value}}` / `{{$name op value}}`.
    fn st_var(&mut self, m: &Macro, out: &mut String) {
        let Some(expr) = parse_var_expr(m) else {
            let mut s = String::new();
            self.nodes(&inner_nodes(m), &mut s);
            let s = format!("{{{{{s}}}}}");
            self.push(out, &s);
            return;
        };
        self.current_offset = m.offset;
        let VarExpr {
            scope,
            name,
            op,
            value,
        } = expr;
        let mut cached: Option<String> = None;
        let mut value_of = |st: &mut Self| -> String {
            if let Some(v) = &cached {
                return v.clone();
            }
            let mut s = String::new();
            st.nodes(&value, &mut s);
            let v = s.trim().to_owned();
            cached = Some(v.clone());
            v
        };
        // variables.js `getLocalVariable` gives numbers back as numbers (`007` reads `7`).
        let current = |st: &Self| st.vars.get(scope, &name).map(st_value);
        let falsy = |v: &Option<String>| {
            v.as_deref()
                .is_none_or(|v| v.is_empty() || is_false_boolean(v))
        };
        let b = |x: bool| if x { "true" } else { "false" }.to_owned();
        let result = match op {
            VarOp::Get => current(self).unwrap_or_default(),
            VarOp::Inc | VarOp::Dec => {
                let delta = if op == VarOp::Inc { "1" } else { "-1" };
                let new = add(current(self).as_deref(), delta);
                self.set_var(scope, &name, &new, m.offset);
                current(self).unwrap_or_default()
            }
            VarOp::Set => {
                let v = value_of(self);
                self.set_var(scope, &name, &v, m.offset);
                String::new()
            }
            VarOp::Add => {
                let v = value_of(self);
                let new = add(current(self).as_deref(), &v);
                self.set_var(scope, &name, &new, m.offset);
                String::new()
            }
            VarOp::Sub => {
                let n = num(&value_of(self));
                if !n.is_nan() {
                    let new = add(current(self).as_deref(), &fmt_num(-n));
                    self.set_var(scope, &name, &new, m.offset);
                }
                String::new()
            }
            VarOp::Or => {
                let cur = current(self);
                if falsy(&cur) {
                    value_of(self)
                } else {
                    cur.unwrap_or_default()
                }
            }
            VarOp::Nullish => match current(self) {
                Some(v) => v,
                None => value_of(self),
            },
            VarOp::OrAssign => {
                let cur = current(self);
                if falsy(&cur) {
                    let v = value_of(self);
                    self.set_var(scope, &name, &v, m.offset);
                    v
                } else {
                    cur.unwrap_or_default()
                }
            }
            VarOp::NullishAssign => match current(self) {
                Some(v) => v,
                None => {
                    let v = value_of(self);
                    self.set_var(scope, &name, &v, m.offset);
                    v
                }
            },
            VarOp::Eq | VarOp::Ne => {
                let cur = current(self).unwrap_or_default();
                let v = value_of(self);
                b((cur == v) == (op == VarOp::Eq))
            }
            VarOp::Gt | VarOp::Ge | VarOp::Lt | VarOp::Le => {
                // An unset variable reads as empty, and `Number('')` is 0 (variables.js).
                let left = num(&current(self).unwrap_or_default());
                let right = num(&value_of(self));
                b(match op {
                    VarOp::Gt => left > right,
                    VarOp::Ge => left >= right,
                    VarOp::Lt => left < right,
                    _ => left <= right,
                })
            }
        };
        self.push(out, &result);
    }
}

#[cfg(test)]
mod tests {
    use super::{trim_content, unescape_braces, var_name_len};

    #[test]
    fn trim_content_dedents_by_first_line_like_sillytavern_1_19() {
        assert_eq!(trim_content("\n  a\n    b\n  c\n"), "a\n  b\nc");
        assert_eq!(trim_content("  x  "), "x");
        assert_eq!(trim_content("\n    a\n  b"), "a\nb");
        assert_eq!(trim_content(""), "");
    }

    #[test]
    fn var_names_end_with_a_word_character() {
        assert_eq!(var_name_len("counter--"), 7);
        assert_eq!(var_name_len("my-var"), 6);
        assert_eq!(var_name_len("myvar--5"), 8);
        assert_eq!(var_name_len("1x"), 0);
    }

    #[test]
    fn braces_unescape() {
        let mut s = String::from(r"\{\{x\}\} \a");
        unescape_braces(&mut s);
        assert_eq!(s, r"{{x}} \a");
    }
}
