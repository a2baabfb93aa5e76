//! The parser: source text to a tree of [`Node`]s, in one left-to-right pass.
//!
//! The parser keeps an explicit stack of open frames (`{{` macros and blocks), so it never
//! recurses and runs in time linear in the input (times the nesting limit in the worst case of
//! unclosed frames). It never fails: whatever is not a well-formed macro stays text.

use memchr::memchr3;

use crate::expand::{warn, Warning};
use crate::Limits;

/// One piece of a parsed template.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// Literal text.
    Text(String),
    /// A macro `{{...}}` or a legacy marker `<user>`.
    Macro(Box<Macro>),
    /// A block `{{#if}}...{{/if}}`.
    Block(Box<Block>),
}

/// How the arguments of a macro were written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `{{name}}`: no arguments.
    Bare,
    /// `{{name::a::b}}`.
    DoubleColon,
    /// `{{name:a:b}}` (legacy; RisuAI splits on every `:`).
    Colon,
    /// `{{name a b}}`: everything after the first whitespace is one argument.
    Space,
}

/// A parsed macro.
#[derive(Clone, Debug)]
pub(crate) struct Macro {
    /// Byte offset of the opening `{{` (or `<`) in the source.
    pub offset: usize,
    /// Normalised name (lower case, `_` and `-` removed); `None` when the name is not literal.
    pub name: Option<String>,
    /// The source text before the separator (leading whitespace and the name as written).
    pub head: String,
    /// The separator as written (`::`, `:`, a whitespace run, or empty).
    pub sep: String,
    /// How arguments were written.
    pub style: Style,
    /// Arguments, split on the separator in literal text only.
    pub args: Vec<Vec<Node>>,
    /// `true` for `<user>`-style markers (verbatim form uses `<` and `>`).
    pub marker: bool,
}

/// Which block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    If,
    IfPure,
    When,
    Each,
    /// `#pure`: the body as written, trimmed.
    Pure,
    /// `#puredisplay`: the body as written, trimmed, braces escaped.
    PureDisplay,
}

/// A parsed block.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub kind: BlockKind,
    pub header: Macro,
    pub then: Vec<Node>,
    pub otherwise: Option<(Macro, Vec<Node>)>,
    pub close: Macro,
}

/// Normalises a macro name: lower case, with `_` and `-` removed (so `hidden_key`, `hiddenKey`
/// and `hidden-key` are the same name).
///
/// ```
/// assert_eq!(ccv3_cbs::normalize_name("hidden_key"), "hiddenkey");
/// assert_eq!(ccv3_cbs::normalize_name("Hidden-Key"), "hiddenkey");
/// ```
pub fn normalize_name(name: &str) -> String {
    if name.is_ascii() {
        let mut out = String::with_capacity(name.len());
        for b in name.bytes() {
            if b != b'_' && b != b'-' {
                out.push(char::from(b.to_ascii_lowercase()));
            }
        }
        return out;
    }
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn block_kind(name: &str) -> Option<BlockKind> {
    match name {
        "#if" => Some(BlockKind::If),
        "#ifpure" => Some(BlockKind::IfPure),
        "#when" => Some(BlockKind::When),
        "#each" => Some(BlockKind::Each),
        "#pure" => Some(BlockKind::Pure),
        "#puredisplay" => Some(BlockKind::PureDisplay),
        _ => None,
    }
}

enum Frame {
    Macro { offset: usize, nodes: Vec<Node> },
    Block(Box<OpenBlock>),
}

struct OpenBlock {
    kind: BlockKind,
    header: Macro,
    then: Vec<Node>,
    otherwise: Option<(Macro, Vec<Node>)>,
}

pub(crate) struct Parsed {
    pub nodes: Vec<Node>,
    pub warnings: Vec<Warning>,
}

fn push_text(nodes: &mut Vec<Node>, s: &str) {
    if s.is_empty() {
        return;
    }
    if let Some(Node::Text(t)) = nodes.last_mut() {
        t.push_str(s);
    } else {
        nodes.push(Node::Text(s.to_owned()));
    }
}

fn push_node(nodes: &mut Vec<Node>, node: Node) {
    match node {
        Node::Text(s) => push_text(nodes, &s),
        other => nodes.push(other),
    }
}

fn append_nodes(nodes: &mut Vec<Node>, more: Vec<Node>) {
    for n in more {
        push_node(nodes, n);
    }
}

/// Turns a macro back into text nodes (its source form, nested macros kept as nodes).
pub(crate) fn macro_into_nodes(m: Macro) -> Vec<Node> {
    let (open, close) = if m.marker { ("<", ">") } else { ("{{", "}}") };
    let mut out = Vec::new();
    push_text(&mut out, open);
    push_text(&mut out, &m.head);
    push_text(&mut out, &m.sep);
    let mut first = true;
    for arg in m.args {
        if !first {
            push_text(&mut out, &m.sep);
        }
        first = false;
        append_nodes(&mut out, arg);
    }
    push_text(&mut out, close);
    out
}

/// The content of a macro between its braces, as nodes (text pieces merged, nested macros kept).
pub(crate) fn inner_nodes(m: &Macro) -> Vec<Node> {
    let mut out = Vec::new();
    push_text(&mut out, &m.head);
    push_text(&mut out, &m.sep);
    for (i, arg) in m.args.iter().enumerate() {
        if i > 0 {
            push_text(&mut out, &m.sep);
        }
        for n in arg {
            push_node(&mut out, n.clone());
        }
    }
    out
}

/// Writes a macro back as its source text (nested macros and blocks as written).
pub(crate) fn write_macro_source(m: &Macro, out: &mut String) {
    let (open, close) = if m.marker { ("<", ">") } else { ("{{", "}}") };
    out.push_str(open);
    out.push_str(&m.head);
    out.push_str(&m.sep);
    for (i, arg) in m.args.iter().enumerate() {
        if i > 0 {
            out.push_str(&m.sep);
        }
        write_source(arg, out);
    }
    out.push_str(close);
}

/// Writes nodes back as their source text: parsing is lossless, so this is the text parsed.
pub(crate) fn write_source(nodes: &[Node], out: &mut String) {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Macro(m) => write_macro_source(m, out),
            Node::Block(b) => {
                write_macro_source(&b.header, out);
                write_source(&b.then, out);
                if let Some((m, nodes)) = &b.otherwise {
                    write_macro_source(m, out);
                    write_source(nodes, out);
                }
                write_macro_source(&b.close, out);
            }
        }
    }
}

struct Parser<'s> {
    src: &'s str,
    root: Vec<Node>,
    frames: Vec<Frame>,
    max_depth: usize,
    warnings: Vec<Warning>,
    depth_warned: bool,
    /// A `#pure`/`#puredisplay` header just closed: its body is taken as written.
    pending_pure: Option<(BlockKind, Macro)>,
}

/// The end of a pure block's body starting at `from`: the `{{/...}}` that closes it (nested
/// `{{#...}}` blocks counted), as (body end, close end). Linear in the text.
fn pure_end(src: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = src.as_bytes();
    let mut depth = 0usize;
    let mut at = from;
    while let Some(rel) = memchr::memmem::find(bytes.get(at..)?, b"{{") {
        let q = at + rel;
        let after = bytes.get(q + 2..).unwrap_or_default();
        if after.first() == Some(&b'#') {
            depth += 1;
        } else if after.first() == Some(&b'/') && after.get(1) != Some(&b'/') {
            if depth == 0 {
                let end = memchr::memmem::find(after, b"}}")?;
                return Some((q, q + 2 + end + 2));
            }
            depth -= 1;
        }
        at = q + 2;
    }
    None
}

impl<'s> Parser<'s> {
    /// After a `#pure`/`#puredisplay` header: takes the body as text up to its close.
    fn take_pure(&mut self, at: usize) -> Option<usize> {
        let (kind, header) = self.pending_pure.take()?;
        let Some((body_end, close_end)) = pure_end(self.src, at) else {
            warn(
                &mut self.warnings,
                Warning::UnclosedBlock {
                    offset: header.offset,
                },
            );
            append_nodes(self.top(), macro_into_nodes(header));
            return None;
        };
        let body = self.src.get(at..body_end).unwrap_or_default().to_owned();
        let close_text = self
            .src
            .get(body_end + 2..close_end - 2)
            .unwrap_or_default()
            .to_owned();
        let close = Macro {
            offset: body_end,
            name: Some(normalize_name(close_text.trim())),
            head: close_text,
            sep: String::new(),
            style: Style::Bare,
            args: Vec::new(),
            marker: false,
        };
        let block = Block {
            kind,
            header,
            then: vec![Node::Text(body)],
            otherwise: None,
            close,
        };
        self.top().push(Node::Block(Box::new(block)));
        Some(close_end)
    }

    fn top(&mut self) -> &mut Vec<Node> {
        match self.frames.last_mut() {
            None => &mut self.root,
            Some(Frame::Macro { nodes, .. }) => nodes,
            Some(Frame::Block(b)) => match &mut b.otherwise {
                Some((_, nodes)) => nodes,
                None => &mut b.then,
            },
        }
    }

    fn text(&mut self, start: usize, end: usize) {
        if start < end {
            if let Some(s) = self.src.get(start..end) {
                let s: &'s str = s;
                push_text(self.top(), s);
            }
        }
    }

    fn run(mut self) -> Parsed {
        let bytes = self.src.as_bytes();
        let mut i = 0usize;
        let mut text_start = 0usize;
        while i < bytes.len() {
            let Some(rel) = memchr3(b'{', b'}', b'<', bytes.get(i..).unwrap_or_default()) else {
                break;
            };
            let p = i + rel;
            match bytes.get(p) {
                Some(b'{') => {
                    if bytes.get(p + 1) != Some(&b'{') {
                        i = p + 1;
                        continue;
                    }
                    // In a run of braces the macro opens at the last two.
                    let mut q = p;
                    while bytes.get(q + 2) == Some(&b'{') {
                        q += 1;
                    }
                    if self.frames.len() >= self.max_depth {
                        if !self.depth_warned {
                            self.depth_warned = true;
                            warn(&mut self.warnings, Warning::Depth { offset: q });
                        }
                        i = q + 2;
                        continue;
                    }
                    self.text(text_start, q);
                    self.frames.push(Frame::Macro {
                        offset: q,
                        nodes: Vec::new(),
                    });
                    i = q + 2;
                    text_start = i;
                }
                Some(b'}') => {
                    if bytes.get(p + 1) == Some(&b'}')
                        && matches!(self.frames.last(), Some(Frame::Macro { .. }))
                    {
                        self.text(text_start, p);
                        self.close_macro();
                        i = p + 2;
                        if let Some(end) = self.take_pure(i) {
                            i = end;
                        }
                        text_start = i;
                    } else {
                        i = p + 1;
                    }
                }
                _ => {
                    // '<': legacy markers <user>, <char>, <bot>, <group>, <charifnotgroup>
                    // (any case).
                    let rest = bytes.get(p + 1..).unwrap_or_default();
                    let mut found = None;
                    for word in ["user", "char", "bot", "group", "charifnotgroup"] {
                        let w = word.len();
                        if rest.len() > w
                            && rest
                                .get(..w)
                                .is_some_and(|r| r.eq_ignore_ascii_case(word.as_bytes()))
                            && rest.get(w) == Some(&b'>')
                        {
                            found = Some((word, w));
                            break;
                        }
                    }
                    if let Some((word, w)) = found {
                        self.text(text_start, p);
                        let written = self.src.get(p + 1..p + 1 + w).unwrap_or(word).to_owned();
                        let node = Node::Macro(Box::new(Macro {
                            offset: p,
                            name: Some(format!("<{word}>")),
                            head: written,
                            sep: String::new(),
                            style: Style::Bare,
                            args: Vec::new(),
                            marker: true,
                        }));
                        self.top().push(node);
                        i = p + w + 2;
                        text_start = i;
                    } else {
                        i = p + 1;
                    }
                }
            }
        }
        self.text(text_start, bytes.len());
        self.finish()
    }

    fn close_macro(&mut self) {
        let Some(Frame::Macro { offset, nodes }) = self.frames.pop() else {
            return;
        };
        let m = split_macro(offset, nodes);
        let name = m.name.clone().unwrap_or_default();
        if let Some(kind) = block_kind(&name) {
            if matches!(kind, BlockKind::Pure | BlockKind::PureDisplay) {
                self.pending_pure = Some((kind, m));
                return;
            }
            self.frames.push(Frame::Block(Box::new(OpenBlock {
                kind,
                header: m,
                then: Vec::new(),
                otherwise: None,
            })));
            return;
        }
        if name == ":else" {
            if let Some(Frame::Block(b)) = self.frames.last_mut() {
                if b.otherwise.is_none() && b.kind != BlockKind::Each {
                    b.otherwise = Some((m, Vec::new()));
                    return;
                }
            }
        }
        if name.starts_with('/') && matches!(self.frames.last(), Some(Frame::Block(_))) {
            if let Some(Frame::Block(b)) = self.frames.pop() {
                let OpenBlock {
                    kind,
                    header,
                    then,
                    otherwise,
                } = *b;
                let block = Block {
                    kind,
                    header,
                    then,
                    otherwise,
                    close: m,
                };
                self.top().push(Node::Block(Box::new(block)));
            }
            return;
        }
        self.top().push(Node::Macro(Box::new(m)));
    }

    fn finish(mut self) -> Parsed {
        while let Some(frame) = self.frames.pop() {
            match frame {
                Frame::Macro { nodes, .. } => {
                    let top = self.top();
                    push_text(top, "{{");
                    append_nodes(top, nodes);
                }
                Frame::Block(b) => {
                    let OpenBlock {
                        header,
                        then,
                        otherwise,
                        ..
                    } = *b;
                    warn(
                        &mut self.warnings,
                        Warning::UnclosedBlock {
                            offset: header.offset,
                        },
                    );
                    let top = self.top();
                    append_nodes(top, macro_into_nodes(header));
                    append_nodes(top, then);
                    if let Some((els, nodes)) = otherwise {
                        append_nodes(top, macro_into_nodes(els));
                        append_nodes(top, nodes);
                    }
                }
            }
        }
        Parsed {
            nodes: self.root,
            warnings: self.warnings,
        }
    }
}

/// Splits the content of a closed `{{...}}` into name, separator and arguments.
pub(crate) fn split_macro(offset: usize, nodes: Vec<Node>) -> Macro {
    let unknown = |nodes: Vec<Node>| Macro {
        offset,
        name: None,
        head: String::new(),
        sep: String::new(),
        style: Style::Space,
        args: vec![nodes],
        marker: false,
    };
    let mut iter = nodes.into_iter();
    let first = match iter.next() {
        None => return unknown(Vec::new()),
        Some(Node::Text(t)) => t,
        Some(other) => {
            let mut all = vec![other];
            all.extend(iter);
            return unknown(all);
        }
    };
    let rest_nodes: Vec<Node> = iter.collect();
    let trimmed = first.trim_start();
    let lead = first.len() - trimmed.len();
    // Name end: special prefixes `//` and `?` end the name at once.
    let name_len = if trimmed.starts_with("//") {
        2
    } else if trimmed.starts_with('?') {
        1
    } else {
        let skip = usize::from(trimmed.starts_with(':'));
        let body = trimmed.get(skip..).unwrap_or_default();
        skip + body
            .find(|c: char| c == ':' || c.is_whitespace())
            .unwrap_or(body.len())
    };
    let name_end = lead + name_len;
    let head = first.get(..name_end).unwrap_or_default().to_owned();
    let raw_name = first.get(lead..name_end).unwrap_or_default();
    if raw_name.is_empty() {
        let mut all = vec![Node::Text(first)];
        all.extend(rest_nodes);
        return unknown(all);
    }
    let name = time_utc_name(raw_name).unwrap_or_else(|| normalize_name(raw_name));
    let after = first.get(name_end..).unwrap_or_default();
    let special = name == "//" || name == "?";
    let make = |sep: String, style: Style, args: Vec<Vec<Node>>| Macro {
        offset,
        name: Some(name.clone()),
        head: head.clone(),
        sep,
        style,
        args,
        marker: false,
    };
    if special {
        // Everything after the name is one argument, as written.
        let mut arg = Vec::new();
        push_text(&mut arg, after);
        append_nodes(&mut arg, rest_nodes);
        return make(String::new(), Style::Space, vec![arg]);
    }
    if after.is_empty() {
        if rest_nodes.is_empty() {
            return make(String::new(), Style::Bare, Vec::new());
        }
        let mut all = vec![Node::Text(first)];
        all.extend(rest_nodes);
        return unknown(all);
    }
    // Whitespace before a separator is ignored (`{{ setvar :: x :: 1 }}`, SillyTavern).
    let after_ws = after.trim_start();
    let ws_len = after.len() - after_ws.len();
    let with_ws = |mut m: Macro| {
        m.head.push_str(after.get(..ws_len).unwrap_or_default());
        m
    };
    if let Some(tail) = after_ws.strip_prefix("::") {
        let args = split_nodes(tail, rest_nodes, "::");
        return with_ws(make("::".to_owned(), Style::DoubleColon, args));
    }
    if let Some(tail) = after_ws.strip_prefix(':') {
        let args = split_nodes(tail, rest_nodes, ":");
        return with_ws(make(":".to_owned(), Style::Colon, args));
    }
    // Whitespace.
    let arg_text = after.trim_start();
    let ws = after
        .get(..after.len() - arg_text.len())
        .unwrap_or_default();
    if arg_text.is_empty() && rest_nodes.is_empty() {
        // Trailing whitespace only: `{{ char }}`.
        let head = format!("{head}{ws}");
        let mut m = make(String::new(), Style::Bare, Vec::new());
        m.head = head;
        return m;
    }
    let mut arg = Vec::new();
    push_text(&mut arg, arg_text);
    append_nodes(&mut arg, rest_nodes);
    make(ws.to_owned(), Style::Space, vec![arg])
}

/// Splits `first_text` followed by `nodes` on `sep`, looking only inside literal text.
fn split_nodes(first_text: &str, nodes: Vec<Node>, sep: &str) -> Vec<Vec<Node>> {
    let mut args: Vec<Vec<Node>> = vec![Vec::new()];
    let text_piece = |args: &mut Vec<Vec<Node>>, text: &str| {
        let mut parts = text.split(sep);
        if let Some(p) = parts.next() {
            if let Some(cur) = args.last_mut() {
                push_text(cur, p);
            }
        }
        for p in parts {
            let mut v = Vec::new();
            push_text(&mut v, p);
            args.push(v);
        }
    };
    text_piece(&mut args, first_text);
    for n in nodes {
        match n {
            Node::Text(t) => text_piece(&mut args, &t),
            other => {
                if let Some(cur) = args.last_mut() {
                    cur.push(other);
                }
            }
        }
    }
    args
}

/// Parses `src` with the given limits.
pub(crate) fn parse(src: &str, limits: &Limits) -> Parsed {
    Parser {
        src,
        root: Vec::new(),
        frames: Vec::new(),
        max_depth: limits.depth(),
        warnings: Vec::new(),
        depth_warned: false,
        pending_pure: None,
    }
    .run()
}
/// The name of SillyTavern's legacy `{{time_UTC+2}}` / `{{time_UTC-10}}` as written: the
/// normalised name keeping its sign (`timeutc-10`), since `-` is otherwise dropped from names.
pub(crate) fn time_utc_name(raw: &str) -> Option<String> {
    let prefix = raw.get(..8)?;
    if !prefix.eq_ignore_ascii_case("time_utc") {
        return None;
    }
    let rest = raw.get(8..)?;
    let digits = rest.strip_prefix(['+', '-'])?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(format!("timeutc{rest}"))
}

/// `true` for a normalised `timeutc+N` / `timeutc-N` name.
pub(crate) fn is_time_utc(normalized: &str) -> bool {
    normalized
        .strip_prefix("timeutc")
        .and_then(|r| r.strip_prefix(['+', '-']))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}
