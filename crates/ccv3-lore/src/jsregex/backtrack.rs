//! The backtracking engine of regex keys that need one (lookaround, backreferences): an
//! ECMAScript backtracking matcher that counts its steps and stops when a budget is spent.
//!
//! Why our own: `regress` has no step limit, and `fancy-regex`'s `backtrack_limit` counts
//! backtracks only, not the searches it delegates to the `regex` crate, so a pattern such as
//! `/(?=.).*.*.*.*.*.*=/` ran 3.2 s on 32 KiB inside a limit of 100,000 (measured, issue 12).
//! Here every instruction, every character a backreference compares and every position a
//! lookbehind tries costs one step; the backtrack stack grows by at most one entry per step, so
//! a budget of `n` steps bounds both time and memory.
//!
//! The pattern is validated by `regress` first (exact ECMAScript syntax and errors); this module
//! parses it again into a small program. Character classes, escapes and case folding are built with
//! `regex-syntax` from the same translation the linear engine uses ([`super::syntax::escape`],
//! [`super::syntax::class`]). Semantics follow ECMAScript: leftmost match, ordered alternation,
//! greedy and lazy quantifiers, an iteration that matches the empty string ends its loop, captures
//! inside a quantified group are reset on each iteration, a backreference to a group that did not
//! take part matches the empty string, lookarounds are atomic, `\b` and `\w` are ASCII, `^`/`$` see
//! `\n`, `\r`, U+2028 and U+2029 as line ends under `m`. Lookbehinds try their start positions from
//! the farthest one (so their greedy quantifiers take the most, as when ECMAScript matches them
//! backwards).

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

/// The most instructions a program may have (bounded quantifiers are unrolled).
const MAX_INSNS: usize = 100_000;
/// The deepest nesting of groups a pattern may have (the parser and lookarounds recurse).
const MAX_DEPTH: usize = 64;

/// Why a search stopped without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutOfSteps;

#[derive(Debug, Clone, Copy)]
enum AssertKind {
    Start,
    End,
    LineStart,
    LineEnd,
    Word,
    NotWord,
}

#[derive(Debug, Clone)]
enum Insn {
    /// One character of a class (index into `classes`).
    Class(u32),
    /// One given character.
    Char(char),
    /// Try the first target, then the second.
    Split(u32, u32),
    Jmp(u32),
    Save(u16),
    Assert(AssertKind),
    BackRef {
        group: u16,
        icase: bool,
    },
    /// A lookaround whose body starts at the next instruction and ends with `LookEnd`; `next` is
    /// the instruction after it.
    Look {
        behind: bool,
        neg: bool,
        next: u32,
        /// The body's shortest and longest match in characters (lookbehind start positions).
        min: u32,
        max: Option<u32>,
        /// Whether the body sets captures (saved and restored around it).
        caps: bool,
    },
    LookEnd,
    /// Records the position in a loop register.
    Mark(u16),
    /// Fails when the position is the one the register holds (an empty iteration).
    Progress(u16),
    /// Unsets the capture slots `from..to`.
    Reset(u16, u16),
    Match,
}

/// An AST node of the parsed pattern.
#[derive(Debug, Clone)]
enum Node {
    Empty,
    Char(char),
    Class(u32),
    Cat(Vec<Node>),
    Alt(Vec<Node>),
    Group(Option<u16>, Box<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
    Assert(AssertKind),
    Look {
        behind: bool,
        neg: bool,
        node: Box<Node>,
    },
    BackRef(u16),
}

/// A compiled program.
#[derive(Debug)]
pub(crate) struct Program {
    insns: Vec<Insn>,
    classes: Vec<Box<[(char, char)]>>,
    /// Capture slots (two per group, group 0 included).
    slots: usize,
    regs: usize,
    /// The pattern can only match at the start of the text (`^` first, without `m`).
    anchored: bool,
}

struct Parser<'p> {
    cs: Vec<char>,
    i: usize,
    icase: bool,
    multiline: bool,
    dot_all: bool,
    unicode: bool,
    groups: u16,
    /// Named groups and their numbers (from the pre-pass).
    named: Vec<(String, u16)>,
    total_groups: usize,
    classes: &'p mut Vec<Box<[(char, char)]>>,
    class_ids: std::collections::HashMap<String, u32>,
}

fn is_line_end(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The number of capturing groups and their names, in order (a pre-pass, so backreferences can
/// be told from octal escapes).
fn count_groups(cs: &[char]) -> (usize, Vec<(String, u16)>) {
    let (mut n, mut names) = (0usize, Vec::new());
    let mut i = 0;
    let mut in_class = false;
    while i < cs.len() {
        match cs[i] {
            '\\' => i += 1,
            '[' => in_class = true,
            ']' => in_class = false,
            '(' if !in_class => {
                if cs.get(i + 1) != Some(&'?') {
                    n += 1;
                } else if cs.get(i + 2) == Some(&'<')
                    && !matches!(cs.get(i + 3), Some('=') | Some('!'))
                {
                    n += 1;
                    let name: String = cs[i + 3..].iter().take_while(|&&c| c != '>').collect();
                    names.push((name, n.min(u16::MAX as usize) as u16));
                }
            }
            _ => {}
        }
        i += 1;
    }
    (n, names)
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.cs.get(self.i).copied()
    }

    /// The class of `text` (regex crate syntax, as [`super::translate`] writes it), interned.
    fn class_of(&mut self, text: &str) -> Option<u32> {
        if let Some(&id) = self.class_ids.get(text) {
            return Some(id);
        }
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(self.icase)
            .build()
            .parse(text)
            .ok()?;
        let ranges: Box<[(char, char)]> = match hir.kind() {
            HirKind::Class(Class::Unicode(c)) => {
                c.ranges().iter().map(|r| (r.start(), r.end())).collect()
            }
            HirKind::Literal(l) => {
                let c = std::str::from_utf8(&l.0).ok()?.chars().next()?;
                Box::new([(c, c)])
            }
            _ => return None,
        };
        let id = self.classes.len() as u32;
        self.classes.push(ranges);
        self.class_ids.insert(text.to_string(), id);
        Some(id)
    }

    /// The class of no character.
    fn empty_class(&mut self) -> u32 {
        let id = self.classes.len() as u32;
        self.classes.push(Box::new([]));
        id
    }

    fn literal(&mut self, c: char) -> Option<Node> {
        if !self.icase {
            return Some(Node::Char(c));
        }
        let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
        class.case_fold_simple();
        let ranges: Box<[(char, char)]> = class
            .ranges()
            .iter()
            .map(|r| (r.start(), r.end()))
            .collect();
        if ranges.len() == 1 && ranges[0].0 == ranges[0].1 {
            return Some(Node::Char(c));
        }
        let key = format!("\u{0}lit{c}");
        if let Some(&id) = self.class_ids.get(&key) {
            return Some(Node::Class(id));
        }
        let id = self.classes.len() as u32;
        self.classes.push(ranges);
        self.class_ids.insert(key, id);
        Some(Node::Class(id))
    }

    fn alternation(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut alts = vec![self.sequence(depth)?];
        while self.peek() == Some('|') {
            self.i += 1;
            alts.push(self.sequence(depth)?);
        }
        Some(if alts.len() == 1 {
            alts.pop()?
        } else {
            Node::Alt(alts)
        })
    }

    fn sequence(&mut self, depth: usize) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            let atom = self.quantifier(atom)?;
            items.push(atom);
        }
        Some(match items.len() {
            0 => Node::Empty,
            1 => items.pop()?,
            _ => Node::Cat(items),
        })
    }

    /// A `{n}`, `{n,}` or `{n,m}` quantifier at the current position, if there is one.
    fn braces(&self) -> Option<(u32, Option<u32>, usize)> {
        let mut j = self.i + 1;
        let num = |j: &mut usize| -> Option<u32> {
            let s = *j;
            while self.cs.get(*j).is_some_and(|c| c.is_ascii_digit()) {
                *j += 1;
            }
            if *j == s {
                return None;
            }
            let text: String = self.cs[s..*j].iter().collect();
            // Larger counts than any program can unroll: saturate (the size check refuses them).
            Some(text.parse::<u32>().unwrap_or(u32::MAX))
        };
        let min = num(&mut j)?;
        let max = match self.cs.get(j) {
            Some('}') => Some(min),
            Some(',') => {
                j += 1;
                if self.cs.get(j) == Some(&'}') {
                    None
                } else {
                    let m = num(&mut j)?;
                    if self.cs.get(j) != Some(&'}') {
                        return None;
                    }
                    Some(m)
                }
            }
            _ => return None,
        };
        Some((min, max, j + 1))
    }

    fn quantifier(&mut self, atom: Node) -> Option<Node> {
        let (min, max, next) = match self.peek() {
            Some('*') => (0, None, self.i + 1),
            Some('+') => (1, None, self.i + 1),
            Some('?') => (0, Some(1), self.i + 1),
            Some('{') => match self.braces() {
                Some(q) => q,
                None => return Some(atom),
            },
            _ => return Some(atom),
        };
        if max.is_some_and(|m| m < min) {
            return None;
        }
        self.i = next;
        let greedy = if self.peek() == Some('?') {
            self.i += 1;
            false
        } else {
            true
        };
        Some(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    fn atom(&mut self, depth: usize) -> Option<Node> {
        let c = self.peek()?;
        self.i += 1;
        Some(match c {
            '^' => Node::Assert(if self.multiline {
                AssertKind::LineStart
            } else {
                AssertKind::Start
            }),
            '$' => Node::Assert(if self.multiline {
                AssertKind::LineEnd
            } else {
                AssertKind::End
            }),
            '.' => {
                let t = if self.dot_all {
                    "(?s:.)"
                } else {
                    "[^\\n\\r\\x{2028}\\x{2029}]"
                };
                Node::Class(self.class_of(t)?)
            }
            '(' => self.group(depth)?,
            '[' if self.peek() == Some(']') => {
                // `[]` matches nothing.
                self.i += 1;
                Node::Class(self.empty_class())
            }
            '[' => {
                let (text, next) = super::syntax::class(&self.cs, self.i, self.unicode)?;
                self.i = next;
                Node::Class(self.class_of(&text)?)
            }
            '\\' => self.escape()?,
            '*' | '+' | '?' | ')' => return None,
            '{' if self.unicode => return None,
            other => self.literal(other)?,
        })
    }

    fn group(&mut self, depth: usize) -> Option<Node> {
        let mut kind = 0u8; // 0 capture, 1 non-capture, 2 look
        let (mut behind, mut neg) = (false, false);
        if self.peek() == Some('?') {
            match (self.cs.get(self.i + 1), self.cs.get(self.i + 2)) {
                (Some(':'), _) => {
                    kind = 1;
                    self.i += 2;
                }
                (Some('='), _) | (Some('!'), _) => {
                    kind = 2;
                    neg = self.cs[self.i + 1] == '!';
                    self.i += 2;
                }
                (Some('<'), Some('=')) | (Some('<'), Some('!')) => {
                    kind = 2;
                    behind = true;
                    neg = self.cs[self.i + 2] == '!';
                    self.i += 3;
                }
                (Some('<'), _) => {
                    let end = self.cs[self.i..].iter().position(|&c| c == '>')? + self.i;
                    let name: String = self.cs[self.i + 2..end].iter().collect();
                    self.i = end + 1;
                    let _ = name;
                    self.groups += 1;
                    let g = self.groups;
                    let body = self.alternation(depth + 1)?;
                    return self.close(Node::Group(Some(g), Box::new(body)));
                }
                _ => return None,
            }
        }
        match kind {
            0 => {
                self.groups += 1;
                let g = self.groups;
                let body = self.alternation(depth + 1)?;
                self.close(Node::Group(Some(g), Box::new(body)))
            }
            1 => {
                let body = self.alternation(depth + 1)?;
                self.close(Node::Group(None, Box::new(body)))
            }
            _ => {
                let body = self.alternation(depth + 1)?;
                self.close(Node::Look {
                    behind,
                    neg,
                    node: Box::new(body),
                })
            }
        }
    }

    fn close(&mut self, node: Node) -> Option<Node> {
        (self.peek() == Some(')')).then(|| {
            self.i += 1;
            node
        })
    }

    /// A `\uXXXX` surrogate at `cs[i]` (the `u`), as its value.
    fn surrogate_at(&self, i: usize) -> Option<u32> {
        if self.cs.get(i) != Some(&'u') {
            return None;
        }
        let v = super::syntax::hex(&self.cs, i + 1, 4)?;
        (0xD800..0xE000).contains(&v).then_some(v)
    }

    fn escape(&mut self) -> Option<Node> {
        let c = self.peek()?;
        match c {
            'b' => {
                self.i += 1;
                return Some(Node::Assert(AssertKind::Word));
            }
            'B' => {
                self.i += 1;
                return Some(Node::Assert(AssertKind::NotWord));
            }
            '1'..='9' => {
                let start = self.i;
                while self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    self.i += 1;
                }
                let text: String = self.cs[start..self.i].iter().collect();
                let n = text.parse::<usize>().unwrap_or(usize::MAX);
                if n <= self.total_groups {
                    return Some(Node::BackRef(n as u16));
                }
                if self.unicode {
                    return None;
                }
                // Annex B: an octal escape (up to three octal digits, at most 0o377), else the
                // digit itself.
                self.i = start;
                let mut v = 0u32;
                let mut k = 0;
                while k < 3 && self.peek().is_some_and(|d| ('0'..='7').contains(&d)) {
                    let nv = v * 8 + self.peek()?.to_digit(8)?;
                    if nv > 0o377 {
                        break;
                    }
                    v = nv;
                    self.i += 1;
                    k += 1;
                }
                if k == 0 {
                    self.i += 1;
                    return self.literal(c);
                }
                return self.literal(char::from_u32(v)?);
            }
            'k' if self.cs.get(self.i + 1) == Some(&'<') && !self.names_empty() => {
                let end = self.cs[self.i..].iter().position(|&c| c == '>')? + self.i;
                let name: String = self.cs[self.i + 2..end].iter().collect();
                self.i = end + 1;
                let idx = self.name_index(&name)?;
                return Some(Node::BackRef(idx));
            }
            'k' if !self.unicode => {
                self.i += 1;
                return self.literal('k');
            }
            '0' if self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) && !self.unicode => {
                // Annex B legacy octal: \0 followed by octal digits.
                self.i += 1;
                let mut v = 0u32;
                let mut k = 0;
                while k < 2 && self.peek().is_some_and(|d| ('0'..='7').contains(&d)) {
                    v = v * 8 + self.peek()?.to_digit(8)?;
                    self.i += 1;
                    k += 1;
                }
                return self.literal(char::from_u32(v)?);
            }
            'u' => {
                if let Some(hi) = self.surrogate_at(self.i) {
                    // A surrogate pair written as two escapes is one character; a lone
                    // surrogate never occurs in UTF-8 text, so it matches nothing.
                    let lo = (self.cs.get(self.i + 5) == Some(&'\\'))
                        .then(|| self.surrogate_at(self.i + 6))
                        .flatten()
                        .filter(|lo| (0xDC00..0xE000).contains(lo) && hi < 0xDC00);
                    return Some(match lo {
                        Some(lo) => {
                            self.i += 11;
                            let v = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            self.literal(char::from_u32(v)?)?
                        }
                        None => {
                            self.i += 5;
                            Node::Class(self.empty_class())
                        }
                    });
                }
            }
            _ => {}
        }
        let (text, next) = super::syntax::escape(&self.cs, self.i, self.unicode, false)?;
        let start = self.i;
        self.i = next;
        // A literal character: no class needed.
        if next == start + 1 && !c.is_ascii_alphanumeric() {
            return self.literal(c);
        }
        Some(Node::Class(self.class_of(&text)?))
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.cs.get(self.i + k).copied()
    }

    fn names_empty(&self) -> bool {
        self.named.is_empty()
    }

    fn name_index(&self, name: &str) -> Option<u16> {
        // Names are known from the pre-pass: a reference may come before its group.
        self.named.iter().find(|(n, _)| n == name).map(|&(_, g)| g)
    }
}

/// The shortest and longest match of a node, in characters (`None`: unbounded or unknown).
fn lengths(n: &Node) -> (u32, Option<u32>) {
    match n {
        Node::Empty | Node::Assert(_) | Node::Look { .. } => (0, Some(0)),
        Node::Char(_) | Node::Class(_) => (1, Some(1)),
        Node::BackRef(_) => (0, None),
        Node::Group(_, b) => lengths(b),
        Node::Cat(items) => items.iter().fold((0, Some(0)), |(lo, hi), x| {
            let (a, b) = lengths(x);
            (
                lo.saturating_add(a),
                hi.zip(b).and_then(|(p, q)| p.checked_add(q)),
            )
        }),
        Node::Alt(alts) => {
            let mut lo = u32::MAX;
            let mut hi = Some(0u32);
            for a in alts {
                let (x, y) = lengths(a);
                lo = lo.min(x);
                hi = hi.zip(y).map(|(p, q)| p.max(q));
            }
            (if alts.is_empty() { 0 } else { lo }, hi)
        }
        Node::Repeat { node, min, max, .. } => {
            let (a, b) = lengths(node);
            (
                a.saturating_mul(*min),
                match (b, max) {
                    (Some(0), _) => Some(0),
                    (Some(b), Some(m)) => b.checked_mul(*m),
                    _ => None,
                },
            )
        }
    }
}

/// The number of instructions a node compiles to (saturating).
fn size(n: &Node) -> usize {
    match n {
        Node::Empty => 0,
        Node::Char(_) | Node::Class(_) | Node::Assert(_) | Node::BackRef(_) => 1,
        Node::Group(_, b) => size(b).saturating_add(2),
        Node::Look { node, .. } => size(node).saturating_add(2),
        Node::Cat(items) => items.iter().fold(0usize, |s, x| s.saturating_add(size(x))),
        Node::Alt(alts) => alts
            .iter()
            .fold(0usize, |s, x| s.saturating_add(size(x)).saturating_add(2)),
        Node::Repeat { node, min, max, .. } => {
            let copies = match max {
                Some(m) => *m as usize,
                None => (*min as usize).saturating_add(1),
            };
            copies.saturating_mul(size(node).saturating_add(5))
        }
    }
}

/// The lowest and highest group number inside a node, if any.
fn groups_in(n: &Node) -> Option<(u16, u16)> {
    let join = |a: Option<(u16, u16)>, b: Option<(u16, u16)>| match (a, b) {
        (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
        (x, None) => x,
        (None, y) => y,
    };
    match n {
        Node::Group(g, b) => join(g.map(|g| (g, g)), groups_in(b)),
        Node::Look { node, .. } | Node::Repeat { node, .. } => groups_in(node),
        Node::Cat(v) | Node::Alt(v) => v.iter().fold(None, |acc, x| join(acc, groups_in(x))),
        _ => None,
    }
}

struct Emitter {
    insns: Vec<Insn>,
    regs: usize,
    icase: bool,
}

impl Emitter {
    fn pc(&self) -> u32 {
        self.insns.len() as u32
    }

    fn push(&mut self, i: Insn) -> Option<u32> {
        if self.insns.len() >= MAX_INSNS {
            return None;
        }
        self.insns.push(i);
        Some(self.pc() - 1)
    }

    fn patch_exit(&mut self, at: u32, to: u32) {
        match &mut self.insns[at as usize] {
            Insn::Split(a, b) => {
                if *a == u32::MAX {
                    *a = to;
                } else {
                    *b = to;
                }
            }
            Insn::Jmp(a) => *a = to,
            Insn::Look { next, .. } => *next = to,
            _ => {}
        }
    }

    fn emit(&mut self, n: &Node) -> Option<()> {
        match n {
            Node::Empty => {}
            Node::Char(c) => {
                self.push(Insn::Char(*c))?;
            }
            Node::Class(id) => {
                self.push(Insn::Class(*id))?;
            }
            Node::Assert(k) => {
                self.push(Insn::Assert(*k))?;
            }
            Node::BackRef(g) => {
                self.push(Insn::BackRef {
                    group: *g,
                    icase: self.icase,
                })?;
            }
            Node::Cat(items) => {
                for x in items {
                    self.emit(x)?;
                }
            }
            Node::Alt(alts) => {
                let mut ends = Vec::new();
                for (k, a) in alts.iter().enumerate() {
                    if k + 1 < alts.len() {
                        let split = self.push(Insn::Split(self.pc() + 1, 0))?;
                        self.emit(a)?;
                        ends.push(self.push(Insn::Jmp(0))?);
                        let here = self.pc();
                        if let Insn::Split(_, b) = &mut self.insns[split as usize] {
                            *b = here;
                        }
                    } else {
                        self.emit(a)?;
                    }
                }
                let end = self.pc();
                for j in ends {
                    self.patch_exit(j, end);
                }
            }
            Node::Group(g, body) => {
                if let Some(g) = g {
                    self.push(Insn::Save(g.checked_mul(2)?))?;
                    self.emit(body)?;
                    self.push(Insn::Save(g.checked_mul(2)?.checked_add(1)?))?;
                } else {
                    self.emit(body)?;
                }
            }
            Node::Look { behind, neg, node } => {
                let (min, max) = lengths(node);
                let at = self.push(Insn::Look {
                    behind: *behind,
                    neg: *neg,
                    next: 0,
                    min,
                    max,
                    caps: groups_in(node).is_some(),
                })?;
                self.emit(node)?;
                self.push(Insn::LookEnd)?;
                let next = self.pc();
                self.patch_exit(at, next);
            }
            Node::Repeat {
                node,
                min,
                max,
                greedy,
            } => {
                let reset = groups_in(node)
                    .map(|(lo, hi)| (lo.saturating_mul(2), hi.saturating_mul(2).saturating_add(2)));
                let nullable = lengths(node).0 == 0;
                for _ in 0..*min {
                    if let Some((a, b)) = reset {
                        self.push(Insn::Reset(a, b))?;
                    }
                    self.emit(node)?;
                }
                // One optional iteration: a split (exit patched later), then the body.
                let optional = |e: &mut Emitter, exits: &mut Vec<u32>| -> Option<()> {
                    let split = if *greedy {
                        e.push(Insn::Split(e.pc() + 1, 0))?
                    } else {
                        e.push(Insn::Split(u32::MAX, e.pc() + 1))?
                    };
                    exits.push(split);
                    let reg = nullable.then(|| {
                        e.regs += 1;
                        (e.regs - 1) as u16
                    });
                    if let Some(r) = reg {
                        e.push(Insn::Mark(r))?;
                    }
                    if let Some((a, b)) = reset {
                        e.push(Insn::Reset(a, b))?;
                    }
                    e.emit(node)?;
                    if let Some(r) = reg {
                        e.push(Insn::Progress(r))?;
                    }
                    Some(())
                };
                let mut exits = Vec::new();
                match max {
                    Some(m) => {
                        for _ in *min..*m {
                            optional(self, &mut exits)?;
                        }
                    }
                    None => {
                        let top = self.pc();
                        optional(self, &mut exits)?;
                        self.push(Insn::Jmp(top))?;
                    }
                }
                let end = self.pc();
                for x in exits {
                    self.patch_exit(x, end);
                }
            }
        }
        Some(())
    }
}

impl Program {
    /// Compiles an ECMAScript pattern that `regress` accepted with these flags; `Err` says why it
    /// cannot run on this engine (too large, too deeply nested, the `v` flag).
    pub(crate) fn new(pattern: &str, f: &super::syntax::Flags) -> Result<Program, String> {
        if f.unicode_sets {
            return Err("the v flag is not supported".into());
        }
        let cs: Vec<char> = pattern.chars().collect();
        let (total_groups, named) = count_groups(&cs);
        if total_groups >= usize::from(u16::MAX / 2) {
            return Err("too many groups".into());
        }
        let mut classes = Vec::new();
        let mut p = Parser {
            cs,
            i: 0,
            icase: f.icase,
            multiline: f.multiline,
            dot_all: f.dot_all,
            unicode: f.unicode,
            groups: 0,
            named,
            total_groups,
            classes: &mut classes,
            class_ids: Default::default(),
        };
        let node = p.alternation(0);
        let node = match node {
            // The pre-pass and the parser agree on the groups (the slots are sized by the first).
            Some(n) if p.i == p.cs.len() && usize::from(p.groups) == total_groups => n,
            _ => {
                return Err(
                    "a construct this engine does not know, or nesting deeper than 64".into(),
                )
            }
        };
        if size(&node) >= MAX_INSNS {
            return Err(format!(
                "it is too large to run with a step budget (over {MAX_INSNS} instructions once its quantifiers are unrolled)"
            ));
        }
        let anchored = match &node {
            Node::Assert(AssertKind::Start) => true,
            Node::Cat(v) => matches!(v.first(), Some(Node::Assert(AssertKind::Start))),
            _ => false,
        };
        let mut e = Emitter {
            insns: Vec::new(),
            regs: 0,
            icase: f.icase,
        };
        let slots = (total_groups + 1) * 2;
        e.emit(&Node::Group(Some(0), Box::new(node)))
            .and_then(|_| e.push(Insn::Match))
            .ok_or("it is too large to run with a step budget")?;
        Ok(Program {
            insns: e.insns,
            classes,
            slots,
            regs: e.regs,
            anchored,
        })
    }

    /// The start of the leftmost match in `hay`, spending at most `*steps` steps (what is left
    /// stays in `*steps`); `Err` when they ran out first.
    pub(crate) fn find(&self, hay: &str, steps: &mut u64) -> Result<Option<usize>, OutOfSteps> {
        let mut vm = Vm {
            p: self,
            hay,
            caps: vec![usize::MAX; self.slots],
            regs: vec![usize::MAX; self.regs],
            stack: Vec::new(),
            steps: *steps,
        };
        let r = vm.search();
        *steps = vm.steps;
        r
    }
}

enum Frame {
    Alt(u32, usize),
    Cap(u16, usize),
    Reg(u16, usize),
    Caps(Box<[usize]>),
}

struct Vm<'p, 'h> {
    p: &'p Program,
    hay: &'h str,
    caps: Vec<usize>,
    regs: Vec<usize>,
    stack: Vec<Frame>,
    steps: u64,
}

fn in_class(ranges: &[(char, char)], c: char) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

fn same_char(a: char, b: char, icase: bool) -> bool {
    a == b
        || (icase
            && (a.to_lowercase().eq(b.to_lowercase()) || a.to_uppercase().eq(b.to_uppercase())))
}

impl Vm<'_, '_> {
    fn spend(&mut self, n: u64) -> Result<(), OutOfSteps> {
        if self.steps < n {
            self.steps = 0;
            return Err(OutOfSteps);
        }
        self.steps -= n;
        Ok(())
    }

    fn search(&mut self) -> Result<Option<usize>, OutOfSteps> {
        let mut start = 0;
        loop {
            self.spend(1)?;
            if let Some(_end) = self.run(0, start, None)? {
                return Ok(Some(start));
            }
            if self.p.anchored {
                return Ok(None);
            }
            match self.hay[start..].chars().next() {
                Some(c) => start += c.len_utf8(),
                None => return Ok(None),
            }
        }
    }

    fn prev(&self, pos: usize) -> Option<char> {
        self.hay[..pos].chars().next_back()
    }

    fn next(&self, pos: usize) -> Option<char> {
        self.hay[pos..].chars().next()
    }

    fn assert(&self, k: AssertKind, pos: usize) -> bool {
        match k {
            AssertKind::Start => pos == 0,
            AssertKind::End => pos == self.hay.len(),
            AssertKind::LineStart => self.prev(pos).is_none_or(is_line_end),
            AssertKind::LineEnd => self.next(pos).is_none_or(is_line_end),
            AssertKind::Word | AssertKind::NotWord => {
                let a = self.prev(pos).is_some_and(is_word);
                let b = self.next(pos).is_some_and(is_word);
                (a != b) == matches!(k, AssertKind::Word)
            }
        }
    }

    /// Runs the program from `pc` at `pos` until `Match` (or `LookEnd`, at `target` when given):
    /// the end position, or `None` when every path failed. Frames it pushed are gone on return.
    ///
    /// Longer than 150 lines on purpose: it is the machine's dispatch loop, one `match` arm per
    /// instruction sharing the position, the program counter and the backtrack stack.
    fn run(
        &mut self,
        mut pc: u32,
        mut pos: usize,
        target: Option<usize>,
    ) -> Result<Option<usize>, OutOfSteps> {
        let base = self.stack.len();
        let p = self.p;
        loop {
            self.spend(1)?;
            let ok = match &p.insns[pc as usize] {
                Insn::Char(c) => match self.next(pos) {
                    Some(d) if d == *c => {
                        pos += d.len_utf8();
                        true
                    }
                    _ => false,
                },
                Insn::Class(id) => match self.next(pos) {
                    Some(d) if in_class(&p.classes[*id as usize], d) => {
                        pos += d.len_utf8();
                        true
                    }
                    _ => false,
                },
                Insn::Split(a, b) => {
                    self.stack.push(Frame::Alt(*b, pos));
                    pc = *a;
                    continue;
                }
                Insn::Jmp(a) => {
                    pc = *a;
                    continue;
                }
                Insn::Save(s) => {
                    let s = *s;
                    self.stack.push(Frame::Cap(s, self.caps[s as usize]));
                    self.caps[s as usize] = pos;
                    true
                }
                Insn::Assert(k) => self.assert(*k, pos),
                Insn::BackRef { group, icase } => {
                    let s = self.caps[*group as usize * 2];
                    let e = self.caps[*group as usize * 2 + 1];
                    if s == usize::MAX || e == usize::MAX || e < s {
                        true
                    } else {
                        let want = &self.hay[s..e];
                        self.spend(want.len() as u64)?;
                        let mut at = pos;
                        let mut ok = true;
                        for c in want.chars() {
                            match self.next(at) {
                                Some(d) if same_char(c, d, *icase) => at += d.len_utf8(),
                                _ => {
                                    ok = false;
                                    break;
                                }
                            }
                        }
                        if ok {
                            pos = at;
                        }
                        ok
                    }
                }
                Insn::Look {
                    behind,
                    neg,
                    next,
                    min,
                    max,
                    caps,
                } => {
                    let snapshot: Option<Box<[usize]>> = caps.then(|| self.caps.clone().into());
                    if let Some(s) = &snapshot {
                        self.spend(s.len() as u64)?;
                    }
                    let matched = if !*behind {
                        self.run(pc + 1, pos, None)?.is_some()
                    } else {
                        // Start positions from the farthest (`max` characters back, or the text
                        // start) to the nearest (`min` back).
                        let mut starts = Vec::new();
                        let mut at = pos;
                        let mut back = 0u32;
                        loop {
                            if back >= *min {
                                starts.push(at);
                            }
                            if max.is_some_and(|m| back >= m) {
                                break;
                            }
                            match self.prev(at) {
                                Some(c) => {
                                    self.spend(1)?;
                                    at -= c.len_utf8();
                                    back += 1;
                                }
                                None => break,
                            }
                        }
                        let mut found = false;
                        for &j in starts.iter().rev() {
                            if self.run(pc + 1, j, Some(pos))?.is_some() {
                                found = true;
                                break;
                            }
                        }
                        found
                    };
                    if matched != *neg {
                        if !*neg {
                            // Captures set inside stay; backtracking past here restores them.
                            if let Some(s) = snapshot {
                                self.stack.push(Frame::Caps(s));
                            }
                        }
                        pc = *next;
                        continue;
                    }
                    if matched {
                        // A negative lookaround whose body matched: its captures are undone.
                        if let Some(s) = snapshot {
                            self.caps = s.into_vec();
                        }
                    }
                    false
                }
                Insn::LookEnd => {
                    if target.is_none_or(|t| t == pos) {
                        self.stack.truncate(base);
                        return Ok(Some(pos));
                    }
                    false
                }
                Insn::Mark(r) => {
                    let r = *r;
                    self.stack.push(Frame::Reg(r, self.regs[r as usize]));
                    self.regs[r as usize] = pos;
                    true
                }
                Insn::Progress(r) => self.regs[*r as usize] != pos,
                Insn::Reset(a, b) => {
                    let (a, b) = (*a as usize, (*b as usize).min(self.caps.len()));
                    self.spend(b.saturating_sub(a) as u64)?;
                    for s in a..b {
                        if self.caps[s] != usize::MAX {
                            self.stack.push(Frame::Cap(s as u16, self.caps[s]));
                            self.caps[s] = usize::MAX;
                        }
                    }
                    true
                }
                Insn::Match => {
                    self.stack.truncate(base);
                    return Ok(Some(pos));
                }
            };
            if ok {
                pc += 1;
                continue;
            }
            // Backtrack.
            loop {
                if self.stack.len() <= base {
                    return Ok(None);
                }
                self.spend(1)?;
                match self.stack.pop() {
                    Some(Frame::Alt(a, at)) => {
                        pc = a;
                        pos = at;
                        break;
                    }
                    Some(Frame::Cap(s, old)) => self.caps[s as usize] = old,
                    Some(Frame::Reg(r, old)) => self.regs[r as usize] = old,
                    Some(Frame::Caps(snap)) => self.caps = snap.into_vec(),
                    None => return Ok(None),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(pat: &str, flags: &str, hay: &str) -> Option<usize> {
        let p = Program::new(pat, &super::super::Flags::from(flags)).expect(pat);
        p.find(hay, &mut 1_000_000).unwrap()
    }

    #[test]
    fn ecmascript_semantics() {
        assert_eq!(find("(?<=sir )Knight", "", "the sir Knight"), Some(8));
        assert_eq!(find("(?<!sir )Knight", "", "sir Knight Knight"), Some(11));
        assert_eq!(find("(a)\\1", "", "xaa"), Some(1));
        assert_eq!(find("(?<n>a)\\k<n>", "", "xaa"), Some(1));
        assert_eq!(find("\\1(a)", "", "xa"), Some(1)); // a forward reference matches empty
        assert_eq!(find("(?=(a+))a*b\\1", "", "baaabac"), Some(3));
        assert_eq!(find("(a*)*b", "", "aaab"), Some(0));
        assert_eq!(find("(?:a|())*?b\\1", "", "ab"), Some(0));
        assert_eq!(find("(A)\\1", "i", "aA"), Some(0));
        assert_eq!(find("^b", "m", "a\nb"), Some(2));
        assert_eq!(find("^b", "", "a\nb"), None);
        assert_eq!(find("a.b(?=c)", "s", "a\nbc"), Some(0));
        assert_eq!(find("\\bcaf\\b(?!x)", "", "café"), Some(0));
        assert_eq!(find("\\ud83d\\ude00(?=!)", "", "x😀!"), Some(1));
        assert_eq!(find("\\ud83d(?=!)", "", "x😀!"), None);
        assert_eq!(find("[\\D](?=1)", "", "a1"), Some(0));
        assert_eq!(find("(?<=\\1(a))b", "", "aab"), Some(2));
    }

    #[test]
    fn steps_bound_the_work() {
        // Issue 12's patterns, on the 32 KiB cap: each stops within its budget.
        let hay = "a".repeat(32 * 1024);
        for pat in [
            "(?=.).*.*.*.*.*.*=",
            "(a*)\\1*b",
            "(.*)(.*)\\2\\1=",
            "(?=a)(a?){20}a{20}b",
        ] {
            let p = Program::new(pat, &super::super::Flags::default()).unwrap();
            let mut steps = 200_000;
            assert_eq!(p.find(&hay, &mut steps), Err(OutOfSteps), "{pat}");
            assert_eq!(steps, 0);
        }
    }

    #[test]
    fn too_large_or_deep_is_refused() {
        let f = super::super::Flags::default();
        assert!(Program::new("(?=a)(a{1000}){1000}", &f).is_err());
        let deep = "(".repeat(100) + &")".repeat(100) + "\\1";
        assert!(Program::new(&deep, &f).is_err());
    }

    proptest::proptest! {
        /// Differential: where both accept a pattern, this engine finds the same leftmost match
        /// start as `regress` (given enough steps).
        #[test]
        fn same_leftmost_start_as_regress(
            pat in "([ab.]|\\((\\?(:|=|!|<=|<!))?|\\)|\\||\\\\[1bwB]|[*+?]|\\{1,2\\}|\\[a\\]|\\^|\\$){1,10}",
            hay in "[ab\n ]{0,8}",
            flags in "[ims]{0,2}",
        ) {
            let f = super::super::Flags::from(flags.as_str());
            if let (Ok(r), Ok(p)) = (regress::Regex::with_flags(&pat, flags.as_str()), Program::new(&pat, &f)) {
                let mut steps = 10_000_000;
                if let Ok(mine) = p.find(&hay, &mut steps) {
                    proptest::prop_assert_eq!(mine, r.find(&hay).map(|m| m.start()), "/{}/{} on {:?}", pat, flags, hay);
                }
            }
        }
    }
}
