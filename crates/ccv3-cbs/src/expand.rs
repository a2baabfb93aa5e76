//! The expander: walks a parsed tree with a [`Context`], [`Variables`] and a [`Mode`].
//!
//! Bounds (see [`Limits`]): every node visited costs a step, every byte written into any
//! buffer (final output or a macro argument) costs work, the final text is capped, `#each`
//! loops are capped, and nested expansion of card fields is capped. When a bound is hit the
//! expander stops growing the text, records a [`Warning`] and returns what it has.

use std::collections::BTreeMap;
use std::fmt;

use crate::budget::{variable_bytes, Budget};
use crate::context::Context;
use crate::parse::{self, Block, BlockKind, Macro, Node, Style};
use crate::registry::Registry;
use crate::rng::{mix, SplitMix64, STREAM_SALT};
use crate::vars::{Scope, Variables};

mod st_engine;

/// Where the expanded text goes; decides what `{{comment}}` and `{{hidden_key}}` produce.
///
/// Macros with side effects (`setvar`, ...) run in every mode: when an expansion is only for
/// scanning or display, pass a copy of the [`Variables`] and drop it afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Text sent to the model: comments and hidden keys are removed.
    #[default]
    Prompt,
    /// Text shown to the user: `{{comment:A}}` is rendered with
    /// [`Context::comment_renderer`] (by default `<span class="cbs-comment">A</span>`).
    Display,
    /// Text scanned recursively by the lorebook engine: `{{hidden_key:A}}` yields `A`.
    LoreScan,
}

/// Bounds that keep hostile templates from hanging or exhausting memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum nesting of `{{` and blocks while parsing (deeper `{{` stay text). Default 64;
    /// values above [`Limits::DEPTH_CAP`] count as the cap, since expansion recurses once
    /// per level.
    pub max_depth: usize,
    /// Maximum length in bytes of the expanded text (and of any one argument). Default 1 MiB.
    pub max_output: usize,
    /// Maximum bytes written into all buffers together. Default 16 MiB.
    pub max_work: usize,
    /// Maximum nodes visited. Default 1,000,000.
    pub max_steps: u64,
    /// Maximum items one `#each` visits. Default 1,000.
    pub max_each_items: usize,
    /// Maximum nested expansion of card fields (`{{description}}` containing macros). Default
    /// 4; values above [`Limits::RECURSION_CAP`] count as the cap.
    pub max_recursion: u32,
    /// Maximum number of variables per scope. Default 10,000.
    pub max_variables: usize,
    /// Maximum length in bytes of one variable value. Default 64 KiB.
    pub max_variable_len: usize,
}

impl Limits {
    /// Hard cap on [`Limits::max_depth`] (keeps the expander's recursion within a small stack).
    pub const DEPTH_CAP: usize = 128;
    /// Hard cap on [`Limits::max_recursion`].
    pub const RECURSION_CAP: u32 = 8;

    pub(crate) fn depth(&self) -> usize {
        self.max_depth.clamp(1, Self::DEPTH_CAP)
    }

    pub(crate) fn recursion(&self) -> u32 {
        self.max_recursion.min(Self::RECURSION_CAP)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 64,
            max_output: 1 << 20,
            max_work: 16 << 20,
            max_steps: 1_000_000,
            max_each_items: 1_000,
            max_recursion: 4,
            max_variables: 10_000,
            max_variable_len: 64 << 10,
        }
    }
}

/// Something the parser or expander wants the caller to know; expansion still produced text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Warning {
    /// `{{` nested deeper than [`Limits::max_depth`]; the deeper ones stayed text.
    #[error("byte {offset}: nesting deeper than the limit, the rest stays text")]
    Depth {
        /// Byte offset of the first `{{` over the limit.
        offset: usize,
    },
    /// A block opened and never closed; it stayed text.
    #[error("byte {offset}: block is never closed, kept as text")]
    UnclosedBlock {
        /// Byte offset of the block header.
        offset: usize,
    },
    /// The output reached [`Limits::max_output`]; it was cut there.
    #[error("byte {offset}: output reached the limit of {limit} bytes, expansion stopped")]
    Output {
        /// Byte offset of the macro being expanded when the limit was hit.
        offset: usize,
        /// The limit.
        limit: usize,
    },
    /// The work budget [`Limits::max_work`] or step budget [`Limits::max_steps`] ran out.
    #[error("byte {offset}: work budget exhausted, expansion stopped")]
    Budget {
        /// Byte offset of the macro being expanded.
        offset: usize,
    },
    /// An `#each` list had more items than [`Limits::max_each_items`]; the rest were skipped.
    #[error("byte {offset}: #each list has {items} items, only the first {limit} used")]
    EachItems {
        /// Byte offset of the `#each`.
        offset: usize,
        /// Items in the list.
        items: usize,
        /// The limit.
        limit: usize,
    },
    /// Nested expansion of a card field went deeper than [`Limits::max_recursion`].
    #[error("byte {offset}: nested expansion deeper than {limit}, field inserted as text")]
    Recursion {
        /// Byte offset of the macro.
        offset: usize,
        /// The limit.
        limit: u32,
    },
    /// A variable write was refused or cut by [`Limits::max_variables`] or
    /// [`Limits::max_variable_len`].
    #[error("byte {offset}: variable {name:?} exceeds the variable limits")]
    Variable {
        /// Byte offset of the macro.
        offset: usize,
        /// The variable name.
        name: String,
    },
    /// The budget shared by the expansions of one prompt ([`Budget`]) is spent: expansion
    /// stopped here (a later expansion with the same budget produces nothing).
    #[error(
        "byte {offset}: the prompt's macro budget is spent ({what}: {limit}), expansion stopped"
    )]
    PromptBudget {
        /// Byte offset of the macro being expanded.
        offset: usize,
        /// What ran out: `output bytes`, `work bytes` or `steps`.
        what: &'static str,
        /// That bound of [`crate::BudgetLimits`].
        limit: u64,
    },
    /// More than [`MAX_WARNINGS`] warnings: the rest were dropped.
    #[error("more than {MAX_WARNINGS} warnings, the rest are left out")]
    TooMany,
    /// A macro got arguments it cannot use and stayed text.
    #[error("byte {offset}: {name}: {problem}")]
    Argument {
        /// Byte offset of the macro.
        offset: usize,
        /// The macro name.
        name: String,
        /// What is wrong.
        problem: String,
    },
}

impl Warning {
    /// A short stable name of the warning's kind (`depth`, `unclosed-block`, ...), for counting
    /// repeated warnings.
    pub fn kind(&self) -> &'static str {
        match self {
            Warning::Depth { .. } => "depth",
            Warning::UnclosedBlock { .. } => "unclosed-block",
            Warning::Output { .. } => "output",
            Warning::Budget { .. } => "budget",
            Warning::EachItems { .. } => "each-items",
            Warning::Recursion { .. } => "recursion",
            Warning::Variable { .. } => "variable",
            Warning::Argument { .. } => "argument",
            Warning::PromptBudget { .. } => "prompt-budget",
            Warning::TooMany => "too-many",
        }
    }

    /// Byte offset in the template the warning is about (`None` for [`Warning::TooMany`]).
    pub fn offset(&self) -> Option<usize> {
        match self {
            Warning::Depth { offset }
            | Warning::UnclosedBlock { offset }
            | Warning::Output { offset, .. }
            | Warning::Budget { offset }
            | Warning::EachItems { offset, .. }
            | Warning::Recursion { offset, .. }
            | Warning::Variable { offset, .. }
            | Warning::Argument { offset, .. }
            | Warning::PromptBudget { offset, .. } => Some(*offset),
            Warning::TooMany => None,
        }
    }

    /// The warning with the source line it points at and a caret under the place, e.g.
    ///
    /// ```
    /// use ccv3_cbs::{Context, Mode, Template, Variables};
    /// let src = "hello\n{{#if 1}}never closed";
    /// let t = Template::parse(src);
    /// assert_eq!(
    ///     t.warnings()[0].render(src),
    ///     "line 2, column 1: byte 6: block is never closed, kept as text\n{{#if 1}}never closed\n^"
    /// );
    /// ```
    pub fn render(&self, src: &str) -> String {
        let Some(offset) = self.offset() else {
            return self.to_string();
        };
        let mut at = offset.min(src.len());
        while at > 0 && !src.is_char_boundary(at) {
            at -= 1;
        }
        let before = src.get(..at).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line_end = src
            .get(at..)
            .and_then(|r| r.find('\n'))
            .map_or(src.len(), |i| at + i);
        let line_no = before.matches('\n').count() + 1;
        let line = src.get(line_start..line_end).unwrap_or_default();
        let col = src.get(line_start..at).unwrap_or_default().chars().count();
        let shown: String = line.chars().take(200).collect();
        format!(
            "line {line_no}, column {}: {self}\n{shown}\n{}^",
            col + 1,
            " ".repeat(col.min(200))
        )
    }
}

/// At most this many warnings are kept per parse or expansion (then [`Warning::TooMany`]).
pub const MAX_WARNINGS: usize = 100;

/// Pushes a warning unless the list is full.
pub(crate) fn warn(list: &mut Vec<Warning>, w: Warning) {
    if list.len() < MAX_WARNINGS {
        list.push(w);
    } else if list.len() == MAX_WARNINGS {
        list.push(Warning::TooMany);
    }
}

/// The result of expanding a template.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    /// The expanded text.
    pub text: String,
    /// Parse and expansion warnings, in the order they happened.
    pub warnings: Vec<Warning>,
}

/// A template parsed once, to expand many times.
#[derive(Clone, Debug)]
pub struct Template {
    nodes: Vec<Node>,
    warnings: Vec<Warning>,
}

impl Template {
    /// Parses `src` with the default [`Limits`]. Never fails: anything that is not a
    /// well-formed macro stays text.
    ///
    /// ```
    /// use ccv3_cbs::{Context, Mode, Template, Variables};
    /// let t = Template::parse("Hi {{user}}, I am {{char}}. {{unknown}} {{");
    /// let ctx = Context::new().with_char_name("Alice").with_user_name("Bob");
    /// let out = t.expand(&ctx, &mut Variables::new(), Mode::Prompt);
    /// assert_eq!(out.text, "Hi Bob, I am Alice. {{unknown}} {{");
    /// ```
    pub fn parse(src: &str) -> Template {
        Self::parse_with(src, &Limits::default())
    }

    /// Parses `src` with explicit limits (only [`Limits::max_depth`] matters here).
    pub fn parse_with(src: &str, limits: &Limits) -> Template {
        let parsed = parse::parse(src, limits);
        Template {
            nodes: parsed.nodes,
            warnings: parsed.warnings,
        }
    }

    /// Every macro the template calls, in source order, nested ones included: the byte offset
    /// of its `{{` (or `<`) and its normalised name ([`crate::normalize_name`]; block headers
    /// keep their `#`, as `#when`). Macros whose name is not literal text are left out. For
    /// static analysis (issue 27: names a dialect does not know).
    pub fn macro_names(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut stack: Vec<&Node> = self.nodes.iter().rev().collect();
        while let Some(n) = stack.pop() {
            match n {
                Node::Text(_) => {}
                Node::Macro(m) => {
                    if let Some(name) = &m.name {
                        out.push((m.offset, name.clone()));
                    }
                    for arg in m.args.iter().rev() {
                        stack.extend(arg.iter().rev());
                    }
                }
                Node::Block(b) => {
                    if let Some(name) = &b.header.name {
                        out.push((b.header.offset, name.clone()));
                    }
                    let mut inner: Vec<&Node> = Vec::new();
                    for arg in &b.header.args {
                        inner.extend(arg.iter());
                    }
                    inner.extend(b.then.iter());
                    if let Some((_, other)) = &b.otherwise {
                        inner.extend(other.iter());
                    }
                    stack.extend(inner.into_iter().rev());
                }
            }
        }
        out.sort_by_key(|(o, _)| *o);
        out
    }

    /// Warnings found while parsing.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// `true` if the template has no macro or block (expanding it returns the source).
    pub fn is_plain(&self) -> bool {
        self.nodes.iter().all(|n| matches!(n, Node::Text(_)))
    }

    /// Expands with [`Registry::standard`] and default [`Limits`].
    pub fn expand(&self, ctx: &Context, vars: &mut Variables, mode: Mode) -> Expansion {
        self.expand_with(
            Registry::standard_ref(),
            &Limits::default(),
            ctx,
            vars,
            mode,
        )
    }

    /// Expands with an explicit registry and limits (and a budget of its own: see
    /// [`Template::expand_in`] to share one between expansions).
    ///
    /// ```
    /// use ccv3_cbs::{Context, Limits, Mode, Registry, Template, Variables};
    /// let reg = Registry::spec_only();
    /// let t = Template::parse("{{reverse:abc}} {{setvar::x::1}}");
    /// let out = t.expand_with(&reg, &Limits::default(), &Context::new(), &mut Variables::new(), Mode::Prompt);
    /// assert_eq!(out.text, "cba {{setvar::x::1}}");
    /// ```
    pub fn expand_with(
        &self,
        registry: &Registry,
        limits: &Limits,
        ctx: &Context,
        vars: &mut Variables,
        mode: Mode,
    ) -> Expansion {
        self.expand_in(registry, limits, &mut Budget::default(), ctx, vars, mode)
    }

    /// Expands with an explicit registry and limits, spending `budget`: pass the same
    /// [`Budget`] to every expansion of one prompt so that together they stay within its
    /// [`crate::BudgetLimits`] (see [`crate::budget`]).
    pub fn expand_in(
        &self,
        registry: &Registry,
        limits: &Limits,
        budget: &mut Budget,
        ctx: &Context,
        vars: &mut Variables,
        mode: Mode,
    ) -> Expansion {
        if budget.output_left() == 0 && !self.nodes.is_empty() {
            // Nothing of this text could be kept: it is not expanded at all (its macros' side
            // effects included), which keeps a spent budget from costing time text after text.
            let mut warnings = self.warnings.clone();
            warn(
                &mut warnings,
                Warning::PromptBudget {
                    offset: 0,
                    what: "output bytes",
                    limit: budget.limits().max_output as u64,
                },
            );
            budget.charge(0, 0, 0, true);
            return Expansion {
                text: String::new(),
                warnings,
            };
        }
        let mut st = State::new(registry, limits, budget, ctx, vars, mode);
        st.warnings.extend(self.warnings.iter().cloned());
        let mut out = String::new();
        st.nodes(&self.nodes, &mut out);
        if st.st_engine {
            st_engine::unescape_braces(&mut out);
        }
        let left = st.budget.output_left();
        if out.len() > left {
            // The text is within this expansion's limits but past what the prompt has left.
            let mut cut = left;
            while cut > 0 && !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            st.budget_stopped = true;
            let limit = st.budget.limits().max_output as u64;
            warn(
                &mut st.warnings,
                Warning::PromptBudget {
                    offset: st.current_offset,
                    what: "output bytes",
                    limit,
                },
            );
        }
        st.budget
            .charge(out.len(), st.work, st.steps, st.budget_stopped);
        Expansion {
            text: out,
            warnings: st.warnings,
        }
    }
}

/// The bounds of one expansion: its [`Limits`], lowered to what is left of its [`Budget`] (the
/// output is cut to the budget at the end: arguments and blocks are bounded by `Limits` alone).
struct Caps {
    work: usize,
    work_from_budget: bool,
    steps: u64,
    steps_from_budget: bool,
}

pub(crate) struct State<'a> {
    registry: &'a Registry,
    limits: &'a Limits,
    budget: &'a mut Budget,
    caps: Caps,
    /// Bytes held by `vars` (kept up to date by [`Call::set_var`]).
    var_bytes: usize,
    /// Stopped by the budget rather than by `limits`.
    budget_stopped: bool,
    ctx: &'a Context,
    vars: &'a mut Variables,
    mode: Mode,
    warnings: Vec<Warning>,
    steps: u64,
    work: usize,
    stopped: bool,
    rng: SplitMix64,
    temp: BTreeMap<String, String>,
    slots: Vec<(String, String)>,
    recursion: u32,
    trim_pending: bool,
    original_used: bool,
    /// Mixed into `pick` seeds inside nested field expansions (0 at the top level).
    place_salt: u64,
    current_offset: usize,
    /// SillyTavern's macro engine syntax is on (the `sillytavern` dialect): see [`st_engine`].
    st_engine: bool,
    /// Nesting of SillyTavern scoped blocks being expanded.
    st_depth: usize,
}

impl<'a> State<'a> {
    fn new(
        registry: &'a Registry,
        limits: &'a Limits,
        budget: &'a mut Budget,
        ctx: &'a Context,
        vars: &'a mut Variables,
        mode: Mode,
    ) -> Self {
        let (work_left, steps_left) = (budget.work_left(), budget.steps_left());
        let caps = Caps {
            work: limits.max_work.min(work_left),
            work_from_budget: work_left < limits.max_work,
            steps: limits.max_steps.min(steps_left),
            steps_from_budget: steps_left < limits.max_steps,
        };
        let var_bytes = variable_bytes(vars);
        State {
            registry,
            limits,
            budget,
            caps,
            var_bytes,
            budget_stopped: false,
            ctx,
            vars,
            mode,
            warnings: Vec::new(),
            steps: 0,
            work: 0,
            stopped: false,
            rng: SplitMix64::new(mix(ctx.seed, ctx.nonce ^ STREAM_SALT)),
            temp: BTreeMap::new(),
            slots: Vec::new(),
            recursion: 0,
            trim_pending: false,
            original_used: false,
            place_salt: 0,
            current_offset: 0,
            st_engine: st_engine::enabled(registry),
            st_depth: 0,
        }
    }

    /// Stops on the work or step bound; `shared` when that bound came from the [`Budget`]
    /// (`what` names it).
    fn stop_budget(&mut self, shared: Option<(&'static str, u64)>) {
        if !self.stopped {
            self.stopped = true;
            let offset = self.current_offset;
            let w = match shared {
                Some((what, limit)) => {
                    self.budget_stopped = true;
                    Warning::PromptBudget {
                        offset,
                        what,
                        limit,
                    }
                }
                None => Warning::Budget { offset },
            };
            warn(&mut self.warnings, w);
        }
    }

    /// Counts `n` bytes of work (text written or parsed); `false` (and stopped) past the cap.
    fn add_work(&mut self, n: usize) -> bool {
        self.work = self.work.saturating_add(n);
        if self.work > self.caps.work {
            let shared = self
                .caps
                .work_from_budget
                .then(|| ("work bytes", self.budget.limits().max_work as u64));
            self.stop_budget(shared);
            return false;
        }
        true
    }

    /// Appends `s` to `out` within the output and work bounds.
    fn push(&mut self, out: &mut String, s: &str) {
        if self.stopped || s.is_empty() {
            return;
        }
        let mut s = s;
        if self.trim_pending {
            s = s.trim_start_matches(['\n', '\r']);
            if s.is_empty() {
                return;
            }
            self.trim_pending = false;
        }
        if !self.add_work(s.len()) {
            return;
        }
        let room = self.limits.max_output.saturating_sub(out.len());
        if s.len() <= room {
            out.push_str(s);
            return;
        }
        let mut cut = room;
        while cut > 0 && !s.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(s.get(..cut).unwrap_or_default());
        self.stopped = true;
        warn(
            &mut self.warnings,
            Warning::Output {
                offset: self.current_offset,
                limit: self.limits.max_output,
            },
        );
    }

    fn step(&mut self) -> bool {
        if self.stopped {
            return false;
        }
        self.steps += 1;
        if self.steps > self.caps.steps {
            let shared = self
                .caps
                .steps_from_budget
                .then(|| ("steps", self.budget.limits().max_steps));
            self.stop_budget(shared);
            return false;
        }
        true
    }

    pub(crate) fn nodes(&mut self, nodes: &[Node], out: &mut String) {
        if self.st_engine {
            self.st_nodes(nodes, out);
            return;
        }
        for node in nodes {
            if !self.step() {
                return;
            }
            match node {
                Node::Text(t) => self.push(out, t),
                Node::Macro(m) => self.macro_(m, out),
                Node::Block(b) => self.block(b, out),
            }
        }
    }

    fn expand_args(&mut self, m: &Macro) -> Vec<String> {
        let mut args = Vec::with_capacity(m.args.len());
        for a in &m.args {
            let mut s = String::new();
            self.nodes(a, &mut s);
            args.push(s);
        }
        args
    }

    fn verbatim(&mut self, m: &Macro, args: &[String], out: &mut String) {
        let (open, close) = if m.marker { ("<", ">") } else { ("{{", "}}") };
        self.push(out, open);
        self.push(out, &m.head);
        self.push(out, &m.sep);
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.push(out, &m.sep);
            }
            self.push(out, a);
        }
        self.push(out, close);
    }

    fn macro_(&mut self, m: &Macro, out: &mut String) {
        // `{{// ...}}` is a comment: its content is never expanded (no side effects, no cost).
        if m.name.as_deref() == Some("//") && self.registry.get("//").is_some() {
            return;
        }
        let args = self.expand_args(m);
        if self.stopped {
            return;
        }
        self.current_offset = m.offset;
        let registry = self.registry;
        let handler = m.name.as_deref().and_then(|n| registry.get(n));
        let Some(handler) = handler else {
            self.verbatim(m, &args, out);
            return;
        };
        let name = m.name.as_deref().unwrap_or_default();
        let trimmed: Vec<&str> = args.iter().map(|a| a.trim()).collect();
        let result = {
            let mut call = Call {
                st: self,
                name,
                args: &trimmed,
                raw_args: &args,
                sep: &m.sep,
                style: m.style,
                offset: m.offset,
                keep_whitespace: false,
                scoped: false,
                out,
            };
            handler(&mut call)
        };
        match result {
            Some(s) => self.push(out, &s),
            None => self.verbatim(m, &args, out),
        }
    }

    /// Sets a variable within the variable limits (see [`Call::set_var`]); warnings point at
    /// `offset`.
    fn set_var(&mut self, scope: Scope, name: &str, value: &str, offset: usize) {
        let limits = self.limits;
        let map = self.vars.map_mut(scope);
        let old = map.get(name).map(|v| name.len() + v.len());
        if old.is_none() && map.len() >= limits.max_variables {
            self.warn_var(name, offset);
            return;
        }
        let mut v = value;
        if v.len() > limits.max_variable_len {
            let mut cut = limits.max_variable_len;
            while cut > 0 && !v.is_char_boundary(cut) {
                cut -= 1;
            }
            v = v.get(..cut).unwrap_or_default();
            self.warn_var(name, offset);
        }
        let bytes = self
            .var_bytes
            .saturating_sub(old.unwrap_or(0))
            .saturating_add(name.len() + v.len());
        if bytes > self.budget.limits().max_variable_bytes && bytes > self.var_bytes {
            self.warn_var(name, offset);
            return;
        }
        self.var_bytes = bytes;
        self.vars
            .map_mut(scope)
            .insert(name.to_owned(), v.to_owned());
    }

    fn warn_var(&mut self, name: &str, offset: usize) {
        warn(
            &mut self.warnings,
            Warning::Variable {
                offset,
                name: name.to_owned(),
            },
        );
    }

    fn block(&mut self, b: &Block, out: &mut String) {
        let key = match b.kind {
            BlockKind::If => "#if",
            BlockKind::IfPure => "#ifpure",
            BlockKind::When => "#when",
            BlockKind::Each => "#each",
            BlockKind::Pure => "#pure",
            BlockKind::PureDisplay => "#puredisplay",
        };
        if !self.registry.contains(key) {
            // Blocks left out of the registry: the block stays text (inner macros expand).
            let header = self.expand_args(&b.header);
            self.verbatim(&b.header, &header, out);
            self.nodes(&b.then, out);
            if let Some((els, nodes)) = &b.otherwise {
                let a = self.expand_args(els);
                self.verbatim(els, &a, out);
                self.nodes(nodes, out);
            }
            let a = self.expand_args(&b.close);
            self.verbatim(&b.close, &a, out);
            return;
        }
        let args = self.expand_args(&b.header);
        if self.stopped {
            return;
        }
        self.current_offset = b.header.offset;
        match b.kind {
            BlockKind::If | BlockKind::IfPure => {
                let cond = first_word(&join(&args, &b.header.sep));
                let branch = if truthy(&cond) {
                    Some(&b.then)
                } else {
                    b.otherwise.as_ref().map(|(_, n)| n)
                };
                if let Some(nodes) = branch {
                    let trim = if b.kind == BlockKind::If {
                        Trim::Lines
                    } else {
                        Trim::Keep
                    };
                    self.branch(nodes, trim, out);
                }
            }
            BlockKind::When => {
                let (mode, cond) = self.when_condition(&args, b.header.style);
                let branch = if cond {
                    Some(&b.then)
                } else if mode == WhenMode::Legacy {
                    None
                } else {
                    b.otherwise.as_ref().map(|(_, n)| n)
                };
                if let Some(nodes) = branch {
                    let trim = match mode {
                        WhenMode::Normal => Trim::BlankLines,
                        WhenMode::Keep => Trim::Keep,
                        WhenMode::Legacy => Trim::Lines,
                    };
                    self.branch(nodes, trim, out);
                }
            }
            BlockKind::Each => self.each(b, &args, out),
            BlockKind::Pure | BlockKind::PureDisplay => {
                let body = b.then.iter().find_map(|n| match n {
                    Node::Text(t) => Some(t.trim()),
                    _ => None,
                });
                let body = body.unwrap_or_default();
                if b.kind == BlockKind::Pure {
                    self.push(out, body);
                } else {
                    let escaped = body.replace("{{", "\\{\\{").replace("}}", "\\}\\}");
                    self.push(out, &escaped);
                }
            }
        }
    }

    fn branch(&mut self, nodes: &[Node], trim: Trim, out: &mut String) {
        if trim == Trim::Keep {
            self.nodes(nodes, out);
            return;
        }
        let mut buf = String::new();
        self.nodes(nodes, &mut buf);
        let trimmed = match trim {
            Trim::Lines => trim_lines(&buf),
            Trim::BlankLines => trim_blank_lines(&buf).to_owned(),
            Trim::Keep => buf,
        };
        self.push(out, &trimmed);
    }

    /// Evaluates a `#when` header the way RisuAI does: a single value is tested for truth;
    /// with `::` arguments, the last two entries (operator, operand) are replaced by their
    /// result until one value is left (so operators apply right to left).
    fn when_condition(&mut self, args: &[String], style: Style) -> (WhenMode, bool) {
        if style != Style::DoubleColon {
            return (WhenMode::Normal, truthy(&first_word(&join(args, " "))));
        }
        let mut st: Vec<String> = args.iter().map(|a| a.trim().to_owned()).collect();
        if st.len() == 1 {
            return (
                WhenMode::Normal,
                truthy(st.first().map_or("", String::as_str)),
            );
        }
        let mut mode = WhenMode::Normal;
        let b = |x: bool| if x { "1" } else { "0" }.to_owned();
        while st.len() > 1 {
            let cond = st.pop().unwrap_or_default();
            let op = st.pop().unwrap_or_default();
            let local = |st: &Self, name: &str| {
                st.vars
                    .get(Scope::Local, name)
                    .unwrap_or_default()
                    .to_owned()
            };
            let toggle = |st: &Self, name: &str| {
                let key = format!("toggle_{name}");
                st.vars
                    .get(Scope::Global, &key)
                    .unwrap_or_default()
                    .to_owned()
            };
            let result = match op.as_str() {
                "not" => b(!truthy(&cond)),
                "keep" => {
                    mode = WhenMode::Keep;
                    cond
                }
                "legacy" => {
                    mode = WhenMode::Legacy;
                    cond
                }
                "and" => {
                    let left = st.pop().unwrap_or_default();
                    b(truthy(&cond) && truthy(&left))
                }
                "or" => {
                    let left = st.pop().unwrap_or_default();
                    b(truthy(&cond) || truthy(&left))
                }
                "is" => b(st.pop().unwrap_or_default() == cond),
                "isnot" => b(st.pop().unwrap_or_default() != cond),
                "var" => b(truthy(&local(self, &cond))),
                "toggle" => b(truthy(&toggle(self, &cond))),
                "vis" => {
                    let name = st.pop().unwrap_or_default();
                    b(local(self, &name) == cond)
                }
                "visnot" => {
                    let name = st.pop().unwrap_or_default();
                    b(local(self, &name) != cond)
                }
                "tis" => {
                    let name = st.pop().unwrap_or_default();
                    b(toggle(self, &name) == cond)
                }
                "tisnot" => {
                    let name = st.pop().unwrap_or_default();
                    b(toggle(self, &name) != cond)
                }
                ">" | "<" | ">=" | "<=" => {
                    let left = parse_float(&st.pop().unwrap_or_default());
                    let right = parse_float(&cond);
                    b(match op.as_str() {
                        ">" => left > right,
                        "<" => left < right,
                        ">=" => left >= right,
                        _ => left <= right,
                    })
                }
                _ => b(truthy(&cond)),
            };
            st.push(result);
        }
        (mode, truthy(st.first().map_or("", String::as_str)))
    }

    fn each(&mut self, b: &Block, args: &[String], out: &mut String) {
        let raw = join(args, &b.header.sep);
        let mut header = raw.trim();
        let mut keep = false;
        if b.header.style == Style::DoubleColon {
            if let Some(rest) = header.strip_prefix("keep ") {
                keep = true;
                header = rest.trim_start();
            }
        }
        let header = header.strip_prefix("as ").unwrap_or(header);
        let (list, name) = if let Some((l, n)) = rfind_as(header) {
            (l.to_owned(), n.trim().to_owned())
        } else if b.header.style == Style::DoubleColon && args.len() >= 2 {
            // `{{#each::LIST::name}}` / `{{#each::LIST::as::name}}`.
            let list = args.first().cloned().unwrap_or_default();
            let name = args.last().map(|s| s.trim().to_owned()).unwrap_or_default();
            (list, name)
        } else if let Some((l, n)) = header.rsplit_once(' ') {
            // RisuAI's compatibility form `{{#each LIST name}}`.
            (l.to_owned(), n.trim().to_owned())
        } else {
            (header.to_owned(), String::new())
        };
        let items = parse_list(list.trim(), self.limits.max_each_items);
        if items.1 > self.limits.max_each_items {
            warn(
                &mut self.warnings,
                Warning::EachItems {
                    offset: b.header.offset,
                    items: items.1,
                    limit: self.limits.max_each_items,
                },
            );
        }
        let mut all = String::new();
        for item in items.0 {
            if self.stopped {
                break;
            }
            self.slots.push((name.clone(), item));
            if keep {
                self.nodes(&b.then, &mut all);
            } else {
                let mut one = String::new();
                self.nodes(&b.then, &mut one);
                let t = trim_lines(&one);
                self.push(&mut all, &t);
            }
            self.slots.pop();
        }
        self.push(out, if keep { &all } else { all.trim() });
    }
}

/// FNV-1a 64-bit hash (salts `pick` inside nested fields by the field's text).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `#when` modifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WhenMode {
    Normal,
    /// `keep`: whitespace kept.
    Keep,
    /// `legacy`: `#if` trimming and no `{{:else}}`.
    Legacy,
}

/// The first whitespace-separated word (RisuAI reads one word after `#if` / `#when `).
fn first_word(s: &str) -> String {
    s.split_whitespace().next().unwrap_or_default().to_owned()
}

/// JavaScript's `parseFloat`: the longest numeric prefix after leading whitespace, else NaN.
pub(crate) fn parse_float(s: &str) -> f64 {
    let t = s.trim_start();
    let bytes = t.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if t.get(i..).is_some_and(|r| r.starts_with("Infinity")) {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let digits_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut mantissa_digits = i - digits_start;
    if bytes.get(i) == Some(&b'.') {
        let mut j = i + 1;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        mantissa_digits += j - i - 1;
        if mantissa_digits > 0 {
            i = j;
        }
    }
    if mantissa_digits == 0 {
        return f64::NAN;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_start = j;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    t.get(..i).and_then(|p| p.parse().ok()).unwrap_or(f64::NAN)
}

/// How a block's chosen text is trimmed (RisuAI's rules).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trim {
    /// Unchanged (`#if_pure`, `keep`).
    Keep,
    /// Leading whitespace of every line removed, then the whole trimmed (`#if`, `#each`).
    Lines,
    /// Leading and trailing whitespace-only lines removed (`#when`).
    BlankLines,
}

fn trim_lines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, line) in s.trim().split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.trim_start());
    }
    out
}

fn trim_blank_lines(s: &str) -> &str {
    if !s.contains('\n') {
        return s;
    }
    let mut start = 0;
    for line in s.split_inclusive('\n') {
        if line.trim().is_empty() && line.ends_with('\n') {
            start += line.len();
        } else {
            break;
        }
    }
    let rest = s.get(start..).unwrap_or_default();
    let mut end = rest.len();
    while let Some(nl) = rest.get(..end).and_then(|r| r.rfind('\n')) {
        let tail = rest.get(nl + 1..end).unwrap_or_default();
        if tail.trim().is_empty() {
            end = nl;
        } else {
            break;
        }
    }
    rest.get(..end).unwrap_or_default()
}

fn rfind_as(raw: &str) -> Option<(&str, &str)> {
    let idx = raw.rfind(" as ")?;
    Some((raw.get(..idx)?, raw.get(idx + 4..)?))
}

/// Items of an `#each` list: a JSON array (strings as they are, other values as JSON), else
/// the text split on `§` (RisuAI's legacy array form). Returns at most `cap` items and the
/// total count.
fn parse_list(text: &str, cap: usize) -> (Vec<String>, usize) {
    if text.is_empty() {
        return (Vec::new(), 0);
    }
    if text.starts_with('[') {
        if let Ok(serde_json::Value::Array(items)) = serde_json::from_str(text) {
            let total = items.len();
            let v = items
                .into_iter()
                .take(cap)
                .map(|v| match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect();
            return (v, total);
        }
    }
    let total = text.split('§').count();
    (
        text.split('§').take(cap).map(str::to_owned).collect(),
        total,
    )
}

fn join(args: &[String], sep: &str) -> String {
    args.join(sep)
}

/// The truth of a condition: `1` or `true` (any case) after trimming. RisuAI's rule.
pub(crate) fn truthy(s: &str) -> bool {
    let s = s.trim();
    s == "1" || s.eq_ignore_ascii_case("true")
}

/// A number the way JavaScript's `Number()` reads one (empty is 0, junk is NaN).
pub(crate) fn num(s: &str) -> f64 {
    let t = s.trim();
    if t.is_empty() {
        return 0.0;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    if t.bytes()
        .any(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E')))
    {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// Formats a number like JavaScript's `String(n)` for the common cases: integers without a
/// fraction, `NaN`, `Infinity`.
pub(crate) fn fmt_num(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if n == n.trunc() && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    let a = n.abs();
    if !(1e-6..1e21).contains(&a) {
        // JavaScript switches to exponent form here: `1e+21`, `1e-7`.
        let e = format!("{n:e}");
        return match e.split_once('e') {
            Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
            _ => e,
        };
    }
    format!("{n}")
}

/// What a macro handler sees: its arguments, the context, the variables and helpers.
pub struct Call<'c, 'a> {
    st: &'c mut State<'a>,
    name: &'c str,
    args: &'c [&'c str],
    raw_args: &'c [String],
    sep: &'c str,
    style: Style,
    offset: usize,
    /// SillyTavern's `#` flag: [`Call::raw`] keeps surrounding whitespace.
    keep_whitespace: bool,
    /// SillyTavern's engine passed a scoped block's content as the last argument.
    scoped: bool,
    out: &'c mut String,
}

impl fmt::Debug for Call<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("name", &self.name)
            .field("args", &self.args)
            .field("offset", &self.offset)
            .finish()
    }
}

impl<'c, 'a> Call<'c, 'a> {
    /// The normalised macro name (lower case, no `_` or `-`).
    pub fn name(&self) -> &str {
        self.name
    }

    /// The expanded arguments, split on the separator as written, each trimmed of
    /// surrounding whitespace (whitespace around separators is ignored, as in SillyTavern).
    pub fn args(&self) -> &[&'c str] {
        self.args
    }

    /// Argument `i` (trimmed), or `""`.
    pub fn arg(&self, i: usize) -> &str {
        self.args.get(i).copied().unwrap_or_default()
    }

    /// All arguments joined back with the separator as written, then trimmed: the whole text
    /// after `name:` / `name::` / `name `. Single-text macros (`reverse`, `comment`, ...) use
    /// this, so `{{comment: a: b }}` reads `a: b`.
    /// With SillyTavern's `#` flag (`{{#reverse}} a {{/reverse}}`), nothing is trimmed.
    pub fn raw(&self) -> String {
        let joined = self.raw_args.join(self.sep);
        if self.keep_whitespace {
            return joined;
        }
        let t = joined.trim();
        if t.len() == joined.len() {
            joined
        } else {
            t.to_owned()
        }
    }

    /// The expanded arguments exactly as written, untrimmed (RisuAI's functions see them so:
    /// `{{join::["a","b"]::, }}` joins with `", "`).
    pub fn raw_args(&self) -> &'c [String] {
        self.raw_args
    }

    /// Untrimmed argument `i`, or `""`.
    pub fn raw_arg(&self, i: usize) -> &'c str {
        self.raw_args.get(i).map_or("", String::as_str)
    }

    /// Spends `n` steps of the expansion's step bound (loops inside a macro: `range`, ...).
    /// Returns `false` once the bound is reached: the expansion then stops, with its warning.
    pub fn spend(&mut self, n: u64) -> bool {
        if self.st.stopped {
            return false;
        }
        self.st.steps = self.st.steps.saturating_add(n);
        if self.st.steps > self.st.caps.steps {
            let shared = self
                .st
                .caps
                .steps_from_budget
                .then(|| ("steps", self.st.budget.limits().max_steps));
            self.st.stop_budget(shared);
            return false;
        }
        true
    }

    /// `true` (with a [`Warning::Output`]) when a result of `bytes` bytes would pass the
    /// output bound ([`Limits::max_output`]): handlers check before building big results
    /// (string repetition, `replace`, `arrayassert` with a far index) and refuse them.
    pub fn too_big(&mut self, bytes: usize) -> bool {
        let limit = self.st.limits.max_output;
        if bytes <= limit {
            return false;
        }
        warn(
            &mut self.st.warnings,
            Warning::Output {
                offset: self.offset,
                limit,
            },
        );
        true
    }

    /// `true` when SillyTavern's engine (the `sillytavern` dialect) called the macro for a
    /// scoped block, `{{name}}content{{/name}}`, the content being the last argument.
    pub fn is_scoped(&self) -> bool {
        self.scoped
    }

    /// How the arguments were written.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Byte offset of the macro in its template.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The context.
    pub fn context(&self) -> &Context {
        self.st.ctx
    }

    /// The expansion mode.
    pub fn mode(&self) -> Mode {
        self.st.mode
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        self.st.limits
    }

    /// A variable, if set.
    pub fn var(&self, scope: Scope, name: &str) -> Option<&str> {
        self.st.vars.get(scope, name)
    }

    /// Sets a variable within [`Limits::max_variables`], [`Limits::max_variable_len`] and
    /// [`crate::BudgetLimits::max_variable_bytes`] (too long values are cut; new names over the
    /// count limit and writes past the bytes bound are refused; all warn).
    pub fn set_var(&mut self, scope: Scope, name: &str, value: &str) {
        self.st.set_var(scope, name, value, self.offset);
    }

    /// Deletes a variable; returns whether it was set (SillyTavern's `{{deletevar}}`).
    pub fn delete_var(&mut self, scope: Scope, name: &str) -> bool {
        match self.st.vars.map_mut(scope).remove(name) {
            Some(v) => {
                self.st.var_bytes = self.st.var_bytes.saturating_sub(name.len() + v.len());
                true
            }
            None => false,
        }
    }

    fn warn_var(&mut self, name: &str) {
        self.st.warn_var(name, self.offset);
    }

    /// A temporary variable (lives for one expansion).
    pub fn temp_var(&self, name: &str) -> Option<&str> {
        self.st.temp.get(name).map(String::as_str)
    }

    /// Sets a temporary variable (same limits as [`Call::set_var`]).
    pub fn set_temp_var(&mut self, name: &str, value: &str) {
        let limits = self.st.limits;
        if (!self.st.temp.contains_key(name) && self.st.temp.len() >= limits.max_variables)
            || value.len() > limits.max_variable_len
        {
            self.warn_var(name);
            return;
        }
        self.st.temp.insert(name.to_owned(), value.to_owned());
    }

    /// The value of the innermost `#each` slot called `name` (`""` matches an unnamed loop).
    pub fn slot(&self, name: &str) -> Option<&str> {
        self.st
            .slots
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The next number of the per-expansion random stream (`random`, `roll`).
    pub fn random_u64(&mut self) -> u64 {
        self.st.rng.next_u64()
    }

    /// A uniform number in `0..n` from the random stream (`n = 0` gives 0).
    pub fn random_below(&mut self, n: u64) -> u64 {
        self.st.rng.below(n)
    }

    /// A generator seeded by the chat seed and this macro's place: the same template and seed
    /// always give the same numbers here (`pick`).
    pub fn place_rng(&self) -> impl FnMut(u64) -> u64 {
        let place = mix(self.st.place_salt, self.offset as u64);
        let mut r = SplitMix64::new(mix(self.st.ctx.seed, place));
        move |n| r.below(n)
    }

    /// Records a warning that this macro's arguments are unusable.
    pub fn warn(&mut self, problem: impl Into<String>) {
        warn(
            &mut self.st.warnings,
            Warning::Argument {
                offset: self.offset,
                name: self.name.to_owned(),
                problem: problem.into(),
            },
        );
    }

    /// Removes the newlines just before this macro and makes the expander drop newlines just
    /// after it (SillyTavern's `{{trim}}`).
    pub fn trim_surrounding_newlines(&mut self) {
        let keep = self.out.trim_end_matches(['\n', '\r']).len();
        self.out.truncate(keep);
        self.st.trim_pending = true;
    }

    /// `true` the first time it is called in one expansion (`{{original}}` expands once).
    pub fn first_original(&mut self) -> bool {
        !std::mem::replace(&mut self.st.original_used, true)
    }

    /// Parses and expands `text` as a nested template (card fields that contain macros),
    /// within [`Limits::max_recursion`]; past the limit `text` is returned as it is.
    pub fn expand_nested(&mut self, text: &str) -> String {
        if !text.contains("{{") && !text.contains('<') {
            return text.to_owned();
        }
        if self.st.recursion >= self.st.limits.recursion() {
            warn(
                &mut self.st.warnings,
                Warning::Recursion {
                    offset: self.offset,
                    limit: self.st.limits.recursion(),
                },
            );
            return text.to_owned();
        }
        // Parsing costs work too, so repeated nested fields exhaust the budget.
        self.st.work = self.st.work.saturating_add(text.len());
        let parsed = parse::parse(text, self.st.limits);
        self.st.recursion += 1;
        let saved_salt = self.st.place_salt;
        self.st.place_salt = mix(saved_salt, fnv1a(text));
        let saved = self.st.current_offset;
        let mut out = String::new();
        self.st.nodes(&parsed.nodes, &mut out);
        self.st.current_offset = saved;
        self.st.recursion -= 1;
        self.st.place_salt = saved_salt;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_float_reads_numeric_prefix_like_javascript() {
        assert_eq!(parse_float("12px"), 12.0);
        assert_eq!(parse_float("  -3.5e2x"), -350.0);
        assert_eq!(parse_float(".5"), 0.5);
        assert_eq!(parse_float("5."), 5.0);
        assert_eq!(parse_float("1e"), 1.0);
        assert_eq!(parse_float("-Infinity"), f64::NEG_INFINITY);
        assert!(parse_float("").is_nan());
        assert!(parse_float(".").is_nan());
        assert!(parse_float("abc").is_nan());
    }

    #[test]
    fn num_reads_like_javascript_number() {
        assert_eq!(num(""), 0.0);
        assert_eq!(num(" 42 "), 42.0);
        assert!(num("12px").is_nan());
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(-0.5), "-0.5");
        assert_eq!(fmt_num(f64::NAN), "NaN");
        assert_eq!(fmt_num(1e300), "1e+300");
        assert_eq!(fmt_num(1.5e-7), "1.5e-7");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(1e16), "10000000000000000");
    }

    #[test]
    fn trim_helpers_follow_risu_rules() {
        assert_eq!(trim_lines("\n  a\n    b  \n"), "a\nb");
        assert_eq!(trim_blank_lines(" \n  a \n\n "), "  a ");
        assert_eq!(trim_blank_lines(" a "), " a ");
        assert_eq!(trim_blank_lines("\n\n"), "");
    }
}
