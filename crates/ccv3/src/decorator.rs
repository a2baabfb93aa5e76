//! Lorebook entry decorators: `@@name value` lines at the top of an entry's content
//! (SPEC_V3 "Decorators").
//!
//! [`split`] cuts content into its decorator header and its body (V2 backfill uses it);
//! [`parse`] reads the header into typed [`Decorators`], following `@@@` fallback chains, and
//! reports every line it did not take (unknown names, invalid values, repeats) with its line
//! number, for validation diagnostics.
//!
//! Grammar: the header is the run of lines at the top of the content (after blank lines) whose
//! first non-blank characters are `@@`. Each line is `@@name value` or `@@@name value` (a fallback
//! of the line before); the name runs to the first whitespace and the value is the rest, trimmed.
//! Values of multi-valued decorators are separated by commas.

/// An entry's content split into the decorator lines at its top and the text after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The decorator lines (each starting with `@@`), joined by `\n`, without surrounding newlines.
    pub header: &'a str,
    /// The content after the decorators, with the newlines before it removed.
    pub body: &'a str,
}

/// Splits `content` into decorator header and body.
///
/// Decorator lines are the consecutive lines at the top of the content (after blank lines) whose
/// first non-blank characters are `@@`. The body starts at the first other line; the newlines
/// between header and body are trimmed, as the spec asks.
///
/// ```
/// let s = ccv3::decorator::split("@@depth 4\n@@role system\n\nThe castle is old.");
/// assert_eq!(s.header, "@@depth 4\n@@role system");
/// assert_eq!(s.body, "The castle is old.");
/// assert_eq!(ccv3::decorator::split("No decorators").body, "No decorators");
/// ```
pub fn split(content: &str) -> Split<'_> {
    let mut pos = 0;
    let mut header_start = None;
    let mut header_end = 0;
    while pos < content.len() {
        // A line whose first non-blank characters are not `@@` ends the header: known without
        // looking for the line's end (issue 16: most contents have no decorators, and finding
        // and trimming their whole first line was most of `validate_lorebook`'s work).
        let lead = content[pos..].trim_start_matches(|c: char| c != '\n' && c.is_whitespace());
        if !(lead.starts_with("@@") || lead.starts_with('\n') || lead.is_empty()) {
            break;
        }
        let line_end = content[pos..].find('\n').map_or(content.len(), |i| pos + i);
        let line = content[pos..line_end].trim();
        if line.starts_with("@@") {
            header_start.get_or_insert(pos);
            header_end = line_end;
        } else if !(line.is_empty() && header_start.is_none()) {
            break;
        }
        pos = line_end + 1;
    }
    match header_start {
        None => Split {
            header: "",
            body: content,
        },
        Some(start) => {
            let header = content[start..header_end].trim_end_matches('\r');
            let body = content[header_end.min(content.len())..].trim_start_matches(['\n', '\r']);
            Split { header, body }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The full parser.
// ---------------------------------------------------------------------------------------------

/// The most `@@@` fallbacks considered after one decorator (the spec asks for at least 5).
pub const MAX_FALLBACKS: usize = 8;

/// The role a `@@role` decorator names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecoratorRole {
    /// `system`.
    System,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
}

impl DecoratorRole {
    /// `system`, `user` or `assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            DecoratorRole::System => "system",
            DecoratorRole::User => "user",
            DecoratorRole::Assistant => "assistant",
        }
    }
}

/// Every decorator of SPEC_V3 "Decorators", plus the common extras `probability`, `order`,
/// `priority` and `keep` (an alias of `keep_activate_after_match`), as accepted by [`parse`].
///
/// Single-valued decorators keep their first accepted occurrence; `additional_keys` and
/// `exclude_keys` may repeat (each `@@additional_keys` line is one more group of which at least
/// one key must match; every `@@exclude_keys` key is excluded).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decorators {
    /// `@@activate_only_after N`: no match before N assistant messages.
    pub activate_only_after: Option<u64>,
    /// `@@activate_only_every N` (N ≥ 1): no match unless the assistant message count is a multiple of N.
    pub activate_only_every: Option<u64>,
    /// `@@keep_activate_after_match` (or `@@keep`): always a match once matched before.
    pub keep_activate_after_match: bool,
    /// `@@dont_activate_after_match`: never a match once matched before.
    pub dont_activate_after_match: bool,
    /// `@@depth N`: insert N messages from the newest (less than 1: after the newest).
    pub depth: Option<i64>,
    /// `@@instruct_depth N`: like depth, counted in tokens (non-chat contexts).
    pub instruct_depth: Option<i64>,
    /// `@@reverse_depth N`: like depth, counted from the oldest message.
    pub reverse_depth: Option<i64>,
    /// `@@reverse_instruct_depth N`: like instruct_depth, counted from the oldest text.
    pub reverse_instruct_depth: Option<i64>,
    /// `@@role assistant|system|user`.
    pub role: Option<DecoratorRole>,
    /// `@@scan_depth N`: scan only the N newest messages for this entry.
    pub scan_depth: Option<u64>,
    /// `@@instruct_scan_depth N`: scan only the N newest tokens (non-chat contexts).
    pub instruct_scan_depth: Option<u64>,
    /// `@@is_greeting N`: a match only when greeting N is the active one (0 = `first_mes`).
    pub is_greeting: Option<u64>,
    /// `@@position P`: one of [`POSITIONS`] or `pt_<name>`.
    pub position: Option<String>,
    /// `@@ignore_on_max_context`: cut first when the maximum context is reached.
    pub ignore_on_max_context: bool,
    /// `@@additional_keys a,b` (repeatable): each group needs one matching key.
    pub additional_keys: Vec<Vec<String>>,
    /// `@@exclude_keys a,b` (repeatable): no match when any of these matches.
    pub exclude_keys: Vec<String>,
    /// `@@is_user_icon NAME`: a match only when the active user icon has this name.
    pub is_user_icon: Option<String>,
    /// `@@activate`: a match in any case.
    pub activate: bool,
    /// `@@dont_activate`: never a match, unless `@@activate` is present.
    pub dont_activate: bool,
    /// `@@disable_ui_prompt post_history_instructions|system_prompt`.
    pub disable_ui_prompt: Option<String>,
    /// `@@probability P` (0 to 100): the chance of insertion once matched.
    pub probability: Option<f64>,
    /// `@@order N`: overrides `insertion_order`.
    pub order: Option<f64>,
    /// `@@priority N`: overrides `priority`.
    pub priority: Option<f64>,
}

/// The `@@position` values this parser accepts besides `pt_<name>`.
pub const POSITIONS: [&str; 6] = [
    "after_desc",
    "before_desc",
    "personality",
    "scenario",
    "before_char",
    "after_char",
];

/// The `@@disable_ui_prompt` values the spec names.
pub const UI_PROMPTS: [&str; 2] = ["post_history_instructions", "system_prompt"];

/// A decorator line that was not taken: unknown name, invalid value, repeated, or past the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// 1-based line number in the content.
    pub line: usize,
    /// The name, without the `@`s.
    pub name: &'a str,
    /// The value after the name, trimmed (empty when none).
    pub value: &'a str,
    /// True for a `@@@` fallback line.
    pub fallback: bool,
}

/// Why a decorator line was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line number in the content.
    pub line: usize,
    /// The decorator name as written.
    pub name: String,
    /// A lowercase message (no trailing period).
    pub message: String,
}

/// The result of [`parse`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed<'a> {
    /// The accepted decorators.
    pub decorators: Decorators,
    /// The content without its decorator lines (the same as [`split`]`(content).body`).
    pub body: &'a str,
    /// Decorator lines whose name is not known here (kept in the content for export).
    pub unknown: Vec<Unknown<'a>>,
    /// Every line that was not taken (unknown, invalid value, repeated, past the fallback limit).
    pub problems: Vec<Problem>,
}

/// Parses the decorators at the top of `content`.
///
/// Grammar (SPEC_V3 "Decorators"): the decorator lines are those [`split`] finds. A line is
/// `@@name value` (a decorator) or `@@@name value` (a fallback of the line before). The name runs
/// to the first whitespace; the value is the rest, trimmed. A fallback is considered only when the
/// decorator before it in its chain was not accepted (unknown name, invalid value, or a repeat of a
/// single-valued decorator); once one line of a chain is accepted the rest of the chain is skipped.
/// At most [`MAX_FALLBACKS`] fallbacks follow one decorator. Single-valued decorators keep their
/// first accepted occurrence; `additional_keys` and `exclude_keys` accumulate.
///
/// The lines and their values are read by the same code as [`parse_list`]; this function adds
/// the rules (ranges, allowed values, repeats, fallback chains).
///
/// ```
/// use ccv3::decorator::{parse, DecoratorRole};
/// let p = parse("@@risu_only 4\n@@@depth 3\n@@role system\n\nThe castle is old.");
/// assert_eq!(p.decorators.depth, Some(3));
/// assert_eq!(p.decorators.role, Some(DecoratorRole::System));
/// assert_eq!(p.body, "The castle is old.");
/// assert_eq!(p.unknown[0].name, "risu_only");
/// ```
pub fn parse(content: &str) -> Parsed<'_> {
    let (lines, body) = header_lines(content);
    let mut out = Parsed {
        body,
        ..Default::default()
    };
    // Chain state: whether a line of the current chain was accepted, and its length so far.
    let mut accepted = true;
    let mut chain_len = 0usize;
    for l in lines {
        let Line {
            no: line_no,
            fallback,
            name,
            value,
        } = l;
        if fallback {
            chain_len += 1;
            if accepted {
                continue;
            }
            if chain_len > MAX_FALLBACKS {
                out.problems.push(Problem {
                    line: line_no,
                    name: name.to_string(),
                    message: format!(
                        "fallback chain longer than {MAX_FALLBACKS} lines; ignored this fallback"
                    ),
                });
                continue;
            }
        } else {
            chain_len = 0;
        }
        match Kind::read(name, value).and_then(|k| apply(&mut out.decorators, k, value)) {
            Ok(()) => accepted = true,
            Err(Reject::Unknown) => {
                accepted = false;
                out.unknown.push(Unknown {
                    line: line_no,
                    name,
                    value,
                    fallback,
                });
                out.problems.push(Problem {
                    line: line_no,
                    name: name.to_string(),
                    message: format!("unknown decorator @@{name}; kept it in the content"),
                });
            }
            Err(Reject::Invalid(why)) => {
                accepted = false;
                out.problems.push(Problem {
                    line: line_no,
                    name: name.to_string(),
                    message: format!("@@{name}: {why}; ignored it"),
                });
            }
        }
    }
    // SPEC_V3 `@@depth`: "If decorator `@@after` is present, the application SHOULD ignore this
    // decorator." The spec defines no `@@after` itself, so it stays an unknown line (kept), but
    // it still switches `@@depth` off.
    if out.decorators.depth.is_some() {
        if let Some(after) = out.unknown.iter().find(|u| u.name == "after") {
            out.decorators.depth = None;
            out.problems.push(Problem {
                line: after.line,
                name: "depth".to_string(),
                message: "@@after is present; ignored @@depth".to_string(),
            });
        }
    }
    out
}

/// One decorator line of a header: `@@name value` or, for a fallback, `@@@name value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// 1-based line number in the content.
    pub(crate) no: usize,
    /// True for a `@@@` line.
    pub(crate) fallback: bool,
    /// The name, without the `@`s.
    pub(crate) name: &'a str,
    /// The value after the name, trimmed (empty when none).
    pub(crate) value: &'a str,
}

/// The decorator lines at the top of `content` and the body after them: the one place that
/// reads the line grammar (module docs), for [`parse`], [`parse_list`] and the validator's
/// checks (`crate::validate`) alike.
pub(crate) fn header_lines(content: &str) -> (impl Iterator<Item = Line<'_>>, &str) {
    let s = split(content);
    let first_line = if s.header.is_empty() {
        1
    } else {
        let offset = (s.header.as_ptr() as usize).saturating_sub(content.as_ptr() as usize);
        1 + memchr::memchr_iter(b'\n', &content.as_bytes()[..offset.min(content.len())]).count()
    };
    let lines = s
        .header
        .split('\n')
        .filter(move |_| !s.header.is_empty())
        .enumerate()
        .map(move |(i, raw)| {
            let line = raw.trim();
            let fallback = line.starts_with("@@@");
            let rest = line.trim_start_matches('@');
            let (name, value) = match rest.find(char::is_whitespace) {
                Some(p) => (&rest[..p], rest[p..].trim()),
                None => (rest, ""),
            };
            Line {
                no: first_line + i,
                fallback,
                name,
                value,
            }
        });
    (lines, s.body)
}

enum Reject {
    Unknown,
    Invalid(String),
}

fn int(value: &str) -> Result<i64, Reject> {
    if let Ok(n) = value.parse::<i64>() {
        return Ok(n);
    }
    match value.parse::<f64>() {
        Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
        _ => Err(Reject::Invalid(format!(
            "value {value:?} is not a whole number"
        ))),
    }
}

fn float(value: &str) -> Result<f64, Reject> {
    match value.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(f),
        _ => Err(Reject::Invalid(format!("value {value:?} is not a number"))),
    }
}

fn flag(value: &str) -> Result<bool, Reject> {
    if value.is_empty() || value.eq_ignore_ascii_case("true") {
        Ok(true)
    } else {
        Err(Reject::Invalid(format!("takes no value, found {value:?}")))
    }
}

fn keys(value: &str) -> Result<Vec<String>, Reject> {
    let v: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect();
    if v.is_empty() {
        Err(Reject::Invalid("needs at least one key".into()))
    } else {
        Ok(v)
    }
}

/// Sets a single-valued decorator unless already set (a repeat is rejected, so a fallback applies).
fn once<T>(slot: &mut Option<T>, v: Result<T, Reject>) -> Result<(), Reject> {
    let v = v?;
    if slot.is_some() {
        return Err(Reject::Invalid("repeated; the first one wins".into()));
    }
    *slot = Some(v);
    Ok(())
}

fn once_flag(slot: &mut bool) -> Result<(), Reject> {
    if *slot {
        return Err(Reject::Invalid("repeated; the first one wins".into()));
    }
    *slot = true;
    Ok(())
}

fn at_least(n: i64, min: u64, value: &str) -> Result<u64, Reject> {
    match u64::try_from(n) {
        Ok(n) if n >= min => Ok(n),
        _ => Err(Reject::Invalid(format!(
            "value {value:?} must be a whole number of at least {min}"
        ))),
    }
}

/// Applies the rules of one decorator (typed by [`Kind::read`] from the raw `value`) to `d`.
fn apply(d: &mut Decorators, kind: Kind, value: &str) -> Result<(), Reject> {
    match kind {
        Kind::ActivateOnlyAfter(n) => once(&mut d.activate_only_after, at_least(n, 0, value)),
        Kind::ActivateOnlyEvery(n) => once(&mut d.activate_only_every, at_least(n, 1, value)),
        Kind::KeepActivateAfterMatch | Kind::Keep => once_flag(&mut d.keep_activate_after_match),
        Kind::DontActivateAfterMatch => once_flag(&mut d.dont_activate_after_match),
        Kind::Depth(n) => once(&mut d.depth, Ok(n)),
        Kind::InstructDepth(n) => once(&mut d.instruct_depth, Ok(n)),
        Kind::ReverseDepth(n) => once(&mut d.reverse_depth, Ok(n)),
        Kind::ReverseInstructDepth(n) => once(&mut d.reverse_instruct_depth, Ok(n)),
        Kind::Role(r) => {
            let r = match r.to_ascii_lowercase().as_str() {
                "system" => Ok(DecoratorRole::System),
                "user" => Ok(DecoratorRole::User),
                "assistant" => Ok(DecoratorRole::Assistant),
                _ => Err(Reject::Invalid(format!(
                    "value {value:?} is not assistant, system or user"
                ))),
            };
            once(&mut d.role, r)
        }
        Kind::ScanDepth(n) => once(&mut d.scan_depth, at_least(n, 0, value)),
        Kind::InstructScanDepth(n) => once(&mut d.instruct_scan_depth, at_least(n, 0, value)),
        Kind::IsGreeting(n) => once(&mut d.is_greeting, at_least(n, 0, value)),
        Kind::Position(p) => {
            let ok = POSITIONS.contains(&p.as_str()) || (p.len() > 3 && p.starts_with("pt_"));
            let v = if ok {
                Ok(p)
            } else {
                Err(Reject::Invalid(format!(
                    "position {value:?} is not supported"
                )))
            };
            once(&mut d.position, v)
        }
        Kind::IgnoreOnMaxContext => once_flag(&mut d.ignore_on_max_context),
        Kind::AdditionalKeys(k) => {
            d.additional_keys.push(k);
            Ok(())
        }
        Kind::ExcludeKeys(k) => {
            d.exclude_keys.extend(k);
            Ok(())
        }
        Kind::IsUserIcon(icon) => {
            let v = if icon.is_empty() {
                Err(Reject::Invalid("needs an icon name".into()))
            } else {
                Ok(icon)
            };
            once(&mut d.is_user_icon, v)
        }
        Kind::Activate => once_flag(&mut d.activate),
        Kind::DontActivate => once_flag(&mut d.dont_activate),
        Kind::DisableUiPrompt(p) => {
            let v = if UI_PROMPTS.contains(&p.as_str()) {
                Ok(p)
            } else {
                Err(Reject::Invalid(format!(
                    "prompt type {value:?} is not supported"
                )))
            };
            once(&mut d.disable_ui_prompt, v)
        }
        Kind::Probability(p) => {
            let v = if (0.0..=100.0).contains(&p) {
                Ok(p)
            } else {
                Err(Reject::Invalid(format!(
                    "value {value:?} is not between 0 and 100"
                )))
            };
            once(&mut d.probability, v)
        }
        Kind::Order(n) => once(&mut d.order, Ok(n)),
        Kind::Priority(n) => once(&mut d.priority, Ok(n)),
        Kind::Unknown { .. } => Err(Reject::Unknown),
    }
}

// ---------------------------------------------------------------------------------------------
// The list form.
// ---------------------------------------------------------------------------------------------

/// How a decorator's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Flag,
    Int,
    Number,
    Text,
    Keys,
}

/// A decorator's value, before it is matched to its name.
enum Val {
    None,
    Int(i64),
    Number(f64),
    Text(String),
    Keys(Vec<String>),
}

/// A decorator's value, borrowed.
enum ValRef<'a> {
    None,
    Int(i64),
    Number(f64),
    Text(&'a str),
    Keys(&'a [String]),
}

macro_rules! kinds {
    (
        flag { $( $(#[$fm:meta])* $fv:ident = $fname:literal, )* }
        int { $( $(#[$im:meta])* $iv:ident = $iname:literal, )* }
        number { $( $(#[$nm:meta])* $nv:ident = $nname:literal, )* }
        text { $( $(#[$tm:meta])* $tv:ident = $tname:literal, )* }
        keys { $( $(#[$km:meta])* $kv:ident = $kname:literal, )* }
    ) => {
        /// One decorator line with its value, as written (see [`Decorator`]).
        ///
        /// The value has the decorator's type (a whole number, a number, a text, a list of keys
        /// or nothing for a flag) but is not checked against its rules (ranges, allowed roles and
        /// positions): [`parse`] does that. A line whose name is not known, or whose value does
        /// not have the type its name asks for, is [`Kind::Unknown`].
        #[derive(Debug, Clone, PartialEq)]
        pub enum Kind {
            $( $(#[$fm])* $fv, )*
            $( $(#[$im])* $iv(i64), )*
            $( $(#[$nm])* $nv(f64), )*
            $( $(#[$tm])* $tv(String), )*
            $( $(#[$km])* $kv(Vec<String>), )*
            /// A decorator this parser does not know, or a known name whose value does not have
            /// its type, kept as written. A `@@@` line with no decorator before it is kept as
            /// an unknown decorator whose name starts with `@`.
            Unknown {
                /// The name, without the leading `@@`.
                name: String,
                /// The text after the name, trimmed (`None` when there is none).
                value: Option<String>,
            },
        }

        impl Kind {
            /// The decorator's name as written after `@@` (`depth`, `role`, ...).
            pub fn name(&self) -> &str {
                match self {
                    $( Kind::$fv => $fname, )*
                    $( Kind::$iv(_) => $iname, )*
                    $( Kind::$nv(_) => $nname, )*
                    $( Kind::$tv(_) => $tname, )*
                    $( Kind::$kv(_) => $kname, )*
                    Kind::Unknown { name, .. } => name,
                }
            }

            /// The shape of the value of a known decorator name.
            fn shape(name: &str) -> Option<Shape> {
                match name {
                    $( $fname => Some(Shape::Flag), )*
                    $( $iname => Some(Shape::Int), )*
                    $( $nname => Some(Shape::Number), )*
                    $( $tname => Some(Shape::Text), )*
                    $( $kname => Some(Shape::Keys), )*
                    _ => None,
                }
            }

            /// The known decorator `name` with `value`, if the value has the name's shape.
            fn from_parts(name: &str, value: Val) -> Option<Kind> {
                match (name, value) {
                    $( ($fname, Val::None) => Some(Kind::$fv), )*
                    $( ($iname, Val::Int(n)) => Some(Kind::$iv(n)), )*
                    $( ($nname, Val::Number(n)) => Some(Kind::$nv(n)), )*
                    $( ($tname, Val::Text(t)) => Some(Kind::$tv(t)), )*
                    $( ($kname, Val::Keys(k)) => Some(Kind::$kv(k)), )*
                    _ => None,
                }
            }

            /// The value, borrowed (unknown decorators excepted).
            fn value(&self) -> ValRef<'_> {
                match self {
                    $( Kind::$fv => ValRef::None, )*
                    $( Kind::$iv(n) => ValRef::Int(*n), )*
                    $( Kind::$nv(n) => ValRef::Number(*n), )*
                    $( Kind::$tv(t) => ValRef::Text(t), )*
                    $( Kind::$kv(k) => ValRef::Keys(k), )*
                    Kind::Unknown { value, .. } => {
                        value.as_deref().map_or(ValRef::None, ValRef::Text)
                    }
                }
            }
        }
    };
}

kinds! {
    flag {
        /// `@@keep_activate_after_match`.
        KeepActivateAfterMatch = "keep_activate_after_match",
        /// `@@keep`, an alias of `@@keep_activate_after_match`.
        Keep = "keep",
        /// `@@dont_activate_after_match`.
        DontActivateAfterMatch = "dont_activate_after_match",
        /// `@@ignore_on_max_context`.
        IgnoreOnMaxContext = "ignore_on_max_context",
        /// `@@activate`.
        Activate = "activate",
        /// `@@dont_activate`.
        DontActivate = "dont_activate",
    }
    int {
        /// `@@activate_only_after N`.
        ActivateOnlyAfter = "activate_only_after",
        /// `@@activate_only_every N`.
        ActivateOnlyEvery = "activate_only_every",
        /// `@@depth N`.
        Depth = "depth",
        /// `@@instruct_depth N`.
        InstructDepth = "instruct_depth",
        /// `@@reverse_depth N`.
        ReverseDepth = "reverse_depth",
        /// `@@reverse_instruct_depth N`.
        ReverseInstructDepth = "reverse_instruct_depth",
        /// `@@scan_depth N`.
        ScanDepth = "scan_depth",
        /// `@@instruct_scan_depth N`.
        InstructScanDepth = "instruct_scan_depth",
        /// `@@is_greeting N`.
        IsGreeting = "is_greeting",
    }
    number {
        /// `@@probability P`.
        Probability = "probability",
        /// `@@order N`.
        Order = "order",
        /// `@@priority N`.
        Priority = "priority",
    }
    text {
        /// `@@role R` (as written; [`parse`] accepts `assistant`, `system` and `user`).
        Role = "role",
        /// `@@position P` (as written; [`parse`] accepts [`POSITIONS`] and `pt_<name>`).
        Position = "position",
        /// `@@is_user_icon NAME`.
        IsUserIcon = "is_user_icon",
        /// `@@disable_ui_prompt P` (as written; [`parse`] accepts [`UI_PROMPTS`]).
        DisableUiPrompt = "disable_ui_prompt",
    }
    keys {
        /// `@@additional_keys a,b`.
        AdditionalKeys = "additional_keys",
        /// `@@exclude_keys a,b`.
        ExcludeKeys = "exclude_keys",
    }
}

impl Kind {
    /// Types the decorator `name` with the raw (trimmed) `value` of its line.
    ///
    /// # Errors
    /// `Reject::Unknown` for a name this parser does not know, `Reject::Invalid` when the
    /// value does not have the type the name asks for.
    fn read(name: &str, value: &str) -> Result<Kind, Reject> {
        let v = match Kind::shape(name).ok_or(Reject::Unknown)? {
            Shape::Flag => flag(value).map(|_| Val::None)?,
            Shape::Int => Val::Int(int(value)?),
            Shape::Number => Val::Number(float(value)?),
            Shape::Text => Val::Text(value.to_string()),
            Shape::Keys => Val::Keys(keys(value)?),
        };
        Kind::from_parts(name, v).ok_or(Reject::Unknown)
    }

    /// Types the decorator `name` with the raw `value` of its line; a name that is not known or
    /// a value without the name's type gives [`Kind::Unknown`].
    ///
    /// ```
    /// use ccv3::decorator::Kind;
    /// assert_eq!(Kind::from_line("depth", "4"), Kind::Depth(4));
    /// assert_eq!(
    ///     Kind::from_line("depth", "deep"),
    ///     Kind::Unknown { name: "depth".into(), value: Some("deep".into()) }
    /// );
    /// ```
    pub fn from_line(name: &str, value: &str) -> Kind {
        let value = value.trim();
        Kind::read(name, value).unwrap_or_else(|_| Kind::Unknown {
            name: name.to_string(),
            value: (!value.is_empty()).then(|| value.to_string()),
        })
    }

    /// The value as written after the name (empty for a flag or an unknown decorator without one).
    pub fn value_text(&self) -> String {
        match self.value() {
            ValRef::None => String::new(),
            ValRef::Int(n) => n.to_string(),
            ValRef::Number(n) => n.to_string(),
            ValRef::Text(t) => t.to_string(),
            ValRef::Keys(k) => k.join(", "),
        }
    }
}

/// One decorator of an entry's content in list form, with the `@@@` fallbacks that follow it.
///
/// This is the lossless form the npm and Python packages expose: [`parse_list`] reads it and
/// [`serialize`] writes it back, and `parse_list(&serialize(&d, c)) == (d, c)` for the decorators
/// [`parse_list`] returns (and a body that does not start with a line break, or with a `@@`
/// line when there are no decorators).
///
/// As JSON (`serde`): `{"type": name, "value": v}` where `v` is a number for numeric decorators,
/// a string for `role`, `position`, `is_user_icon` and `disable_ui_prompt`, an array of strings
/// for `additional_keys` and `exclude_keys`, and absent for flags; an unknown decorator is
/// `{"type": "unknown", "name": name, "value": text}` (`value` absent when the line has none);
/// `"fallbacks": [...]` follows when the decorator has fallbacks.
#[derive(Debug, Clone, PartialEq)]
pub struct Decorator {
    /// The decorator and its value.
    pub kind: Kind,
    /// The `@@@` lines that follow this decorator, in order (fallbacks have none of their own).
    pub fallbacks: Vec<Decorator>,
}

impl Decorator {
    /// A decorator without fallbacks.
    pub fn new(kind: Kind) -> Decorator {
        Decorator {
            kind,
            fallbacks: Vec::new(),
        }
    }
}

/// Reads the decorators at the top of `content` in list form, and the body after them.
///
/// Reads the same lines as [`parse`] (see [`split`]) but keeps every line: unknown names,
/// values against the rules, repeats and fallbacks are all in the list, in order, so that
/// [`serialize`] can write them back.
///
/// ```
/// use ccv3::decorator::{parse_list, Kind};
/// let (list, body) = parse_list("@@risu_only 4\n@@@depth 3\n@@role system\nThe castle.");
/// assert_eq!(list[0].kind, Kind::Unknown { name: "risu_only".into(), value: Some("4".into()) });
/// assert_eq!(list[0].fallbacks[0].kind, Kind::Depth(3));
/// assert_eq!(list[1].kind, Kind::Role("system".into()));
/// assert_eq!(body, "The castle.");
/// ```
pub fn parse_list(content: &str) -> (Vec<Decorator>, &str) {
    let (lines, body) = header_lines(content);
    let mut list: Vec<Decorator> = Vec::new();
    for l in lines {
        let kind = Kind::from_line(l.name, l.value);
        match list.last_mut() {
            Some(prev) if l.fallback => prev.fallbacks.push(Decorator::new(kind)),
            _ if l.fallback => list.push(Decorator::new(Kind::Unknown {
                name: format!("@{}", l.name),
                value: (!l.value.is_empty()).then(|| l.value.to_string()),
            })),
            _ => list.push(Decorator::new(kind)),
        }
    }
    (list, body)
}

/// Writes `decorators` as `@@` lines (fallbacks as `@@@` lines after their decorator) above
/// `body`; with no decorators the result is `body` unchanged.
///
/// Values are written as [`Kind::value_text`]: keys joined by `", "`, numbers in their shortest
/// form. A fallback's own fallbacks are written as further `@@@` lines. A blank line separates
/// the decorators from a body whose first line starts with `@@`.
///
/// ```
/// use ccv3::decorator::{serialize, Decorator, Kind};
/// let mut d = Decorator::new(Kind::Unknown { name: "risu_only".into(), value: None });
/// d.fallbacks.push(Decorator::new(Kind::Depth(3)));
/// let text = serialize(&[d, Decorator::new(Kind::Activate)], "Body");
/// assert_eq!(text, "@@risu_only\n@@@depth 3\n@@activate\nBody");
/// ```
pub fn serialize(decorators: &[Decorator], body: &str) -> String {
    fn line(out: &mut String, prefix: &str, d: &Decorator) {
        out.push_str(prefix);
        out.push_str(d.kind.name());
        let v = d.kind.value_text();
        if !v.is_empty() {
            out.push(' ');
            out.push_str(&v);
        }
        out.push('\n');
        for f in &d.fallbacks {
            line(out, "@@@", f);
        }
    }
    if decorators.is_empty() {
        return body.to_string();
    }
    let mut out = String::with_capacity(body.len() + 32 * decorators.len());
    for d in decorators {
        line(&mut out, "@@", d);
    }
    if body.is_empty() {
        out.pop();
    } else {
        // A body whose first line looks like a decorator is kept apart by a blank line, which
        // ends the decorator lines (see [`split`]).
        let first = body.split('\n').next().unwrap_or("");
        if first.trim().starts_with("@@") {
            out.push('\n');
        }
        out.push_str(body);
    }
    out
}

impl serde::Serialize for Decorator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let unknown = matches!(self.kind, Kind::Unknown { .. });
        let value = self.kind.value();
        let len = 1
            + usize::from(unknown)
            + usize::from(!matches!(value, ValRef::None))
            + usize::from(!self.fallbacks.is_empty());
        let mut m = s.serialize_map(Some(len))?;
        if unknown {
            m.serialize_entry("type", "unknown")?;
            m.serialize_entry("name", self.kind.name())?;
        } else {
            m.serialize_entry("type", self.kind.name())?;
        }
        match value {
            ValRef::None => {}
            ValRef::Int(n) => m.serialize_entry("value", &n)?,
            ValRef::Number(n) => m.serialize_entry("value", &n)?,
            ValRef::Text(t) => m.serialize_entry("value", t)?,
            ValRef::Keys(k) => m.serialize_entry("value", k)?,
        }
        if !self.fallbacks.is_empty() {
            m.serialize_entry("fallbacks", &self.fallbacks)?;
        }
        m.end()
    }
}

/// The JSON form of a [`Decorator`], before its value is checked against its type.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WireDecorator {
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    value: Option<serde_json::Value>,
    #[serde(default)]
    fallbacks: Vec<Decorator>,
}

impl TryFrom<WireDecorator> for Decorator {
    type Error = String;

    fn try_from(w: WireDecorator) -> Result<Decorator, String> {
        use serde_json::Value as J;
        let value = w.value.filter(|v| !v.is_null());
        let kind = if w.ty == "unknown" {
            let name = w
                .name
                .ok_or_else(|| "an unknown decorator needs a \"name\"".to_string())?;
            let value = match value {
                None => None,
                Some(J::String(s)) => Some(s),
                Some(J::Number(n)) => Some(n.to_string()),
                Some(other) => {
                    return Err(format!(
                        "decorator @@{name}: \"value\" must be a string, found {other}"
                    ))
                }
            };
            Kind::Unknown { name, value }
        } else {
            let name = w.ty;
            let shape =
                Kind::shape(&name).ok_or_else(|| format!("unknown decorator type {name:?}"))?;
            let bad = |want: &str| format!("decorator @@{name}: \"value\" must be {want}");
            let v = match (shape, value) {
                (Shape::Flag, None) => Val::None,
                (Shape::Flag, Some(_)) => return Err(bad("absent (it is a flag)")),
                (Shape::Int, Some(J::Number(n))) => match n.as_i64() {
                    Some(i) => Val::Int(i),
                    None => match n.as_f64() {
                        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Val::Int(f as i64),
                        _ => return Err(bad("a whole number")),
                    },
                },
                (Shape::Int, _) => return Err(bad("a whole number")),
                (Shape::Number, Some(J::Number(n))) => match n.as_f64() {
                    Some(f) if f.is_finite() => Val::Number(f),
                    _ => return Err(bad("a finite number")),
                },
                (Shape::Number, _) => return Err(bad("a number")),
                (Shape::Text, Some(J::String(s))) => Val::Text(s),
                (Shape::Text, _) => return Err(bad("a string")),
                (Shape::Keys, Some(J::Array(a))) => Val::Keys(
                    a.into_iter()
                        .map(|k| match k {
                            J::String(s) => Ok(s),
                            _ => Err(bad("an array of strings")),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                (Shape::Keys, _) => return Err(bad("an array of strings")),
            };
            if w.name.is_some() {
                return Err(format!(
                    "decorator @@{name}: \"name\" is only for type \"unknown\""
                ));
            }
            Kind::from_parts(&name, v).ok_or_else(|| bad("of its type"))?
        };
        Ok(Decorator {
            kind,
            fallbacks: w.fallbacks,
        })
    }
}

impl<'de> serde::Deserialize<'de> for Decorator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Decorator, D::Error> {
        let w = WireDecorator::deserialize(d)?;
        Decorator::try_from(w).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spec_decorators_trimmed_from_content_with_newlines() {
        let p = parse("\n@@depth 4\n@@activate\n\n\nBody\ntext\n");
        assert_eq!(p.body, "Body\ntext\n");
        assert_eq!(p.decorators.depth, Some(4));
        assert!(p.decorators.activate);
        assert!(p.problems.is_empty());
    }

    #[test]
    fn spec_fallback_used_only_when_previous_unknown() {
        let p = parse("@@depth 5\n@@@depth 9\n@@x 1\n@@@y 2\n@@@scan_depth 3\n@@@scan_depth 7\nB");
        assert_eq!(p.decorators.depth, Some(5));
        assert_eq!(p.decorators.scan_depth, Some(3));
        let names: Vec<_> = p.unknown.iter().map(|u| u.name).collect();
        assert_eq!(names, ["x", "y"]);
        assert!(p.unknown[1].fallback);
    }

    #[test]
    fn spec_fallback_chain_at_least_five_deep() {
        let p = parse("@@a 1\n@@@b 1\n@@@c 1\n@@@d 1\n@@@e 1\n@@@f 1\n@@@depth 2\nB");
        assert_eq!(p.decorators.depth, Some(2));
    }

    #[test]
    fn spec_fallback_after_invalid_value() {
        let p = parse("@@role narrator\n@@@role user\nB");
        assert_eq!(p.decorators.role, Some(DecoratorRole::User));
        assert_eq!(p.problems.len(), 1);
    }

    #[test]
    fn spec_first_decorator_of_a_name_wins() {
        let p = parse("@@depth 1\n@@depth 2\nB");
        assert_eq!(p.decorators.depth, Some(1));
        assert_eq!(p.problems.len(), 1);
    }

    #[test]
    fn spec_additional_keys_repeatable_exclude_keys_accumulate() {
        let p = parse(
            "@@additional_keys a, b\n@@additional_keys c\n@@exclude_keys x\n@@exclude_keys y,z\nB",
        );
        assert_eq!(
            p.decorators.additional_keys,
            vec![vec!["a".to_string(), "b".into()], vec!["c".into()]]
        );
        assert_eq!(p.decorators.exclude_keys, ["x", "y", "z"]);
    }

    #[test]
    fn spec_every_decorator_parses() {
        let p = parse(
            "@@activate_only_after 2\n@@activate_only_every 3\n@@keep\n@@dont_activate_after_match\n\
             @@depth 0\n@@instruct_depth 5\n@@reverse_depth 1\n@@reverse_instruct_depth 2\n@@role assistant\n\
             @@scan_depth 4\n@@instruct_scan_depth 100\n@@is_greeting 1\n@@position after_desc\n\
             @@ignore_on_max_context\n@@additional_keys k\n@@exclude_keys e\n@@is_user_icon me\n@@activate\n\
             @@dont_activate\n@@disable_ui_prompt system_prompt\n@@probability 50\n@@order 3\n@@priority -2\nX",
        );
        let d = &p.decorators;
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(d.activate_only_after, Some(2));
        assert_eq!(d.activate_only_every, Some(3));
        assert!(d.keep_activate_after_match && d.dont_activate_after_match);
        assert_eq!(
            (
                d.depth,
                d.instruct_depth,
                d.reverse_depth,
                d.reverse_instruct_depth
            ),
            (Some(0), Some(5), Some(1), Some(2))
        );
        assert_eq!(d.role, Some(DecoratorRole::Assistant));
        assert_eq!(
            (d.scan_depth, d.instruct_scan_depth, d.is_greeting),
            (Some(4), Some(100), Some(1))
        );
        assert_eq!(d.position.as_deref(), Some("after_desc"));
        assert!(d.ignore_on_max_context && d.activate && d.dont_activate);
        assert_eq!(d.is_user_icon.as_deref(), Some("me"));
        assert_eq!(d.disable_ui_prompt.as_deref(), Some("system_prompt"));
        assert_eq!(
            (d.probability, d.order, d.priority),
            (Some(50.0), Some(3.0), Some(-2.0))
        );
        assert_eq!(p.body, "X");
    }

    #[test]
    fn spec_activate_only_every_zero_is_invalid() {
        let p = parse("@@activate_only_every 0\nX");
        assert_eq!(p.decorators.activate_only_every, None);
        assert_eq!(p.problems[0].line, 1);
    }

    #[test]
    fn spec_depth_ignored_when_after_present() {
        let p = parse("@@depth 3\n@@after\nbody");
        assert_eq!(p.decorators.depth, None);
        assert_eq!(p.body, "body");
        assert!(p
            .problems
            .iter()
            .any(|x| x.message.contains("ignored @@depth")));
        // Without @@after, and for the other depth decorators, nothing changes.
        assert_eq!(parse("@@depth 3\nbody").decorators.depth, Some(3));
        let p = parse("@@after\n@@reverse_depth 2\nbody");
        assert_eq!(p.decorators.reverse_depth, Some(2));
    }

    #[test]
    fn unknown_decorator_reports_its_line() {
        let p = parse("\n\n@@depth 1\n@@mystery yes\nX");
        assert_eq!(p.unknown[0].line, 4);
        assert_eq!(p.unknown[0].value, "yes");
    }

    #[test]
    fn list_form_keeps_every_line_in_order() {
        let text = "@@depth 3\n@@@depth 9\n@@mystery a b\n@@@role System\n@@@scan_depth x\n\
                    @@activate\n@@additional_keys a, b,,c\n@@probability 12.5\n@@after\nBody";
        let (list, body) = parse_list(text);
        assert_eq!(body, "Body");
        let kinds: Vec<&Kind> = list.iter().map(|d| &d.kind).collect();
        assert_eq!(
            kinds,
            [
                &Kind::Depth(3),
                &Kind::Unknown {
                    name: "mystery".into(),
                    value: Some("a b".into())
                },
                &Kind::Activate,
                &Kind::AdditionalKeys(vec!["a".into(), "b".into(), "c".into()]),
                &Kind::Probability(12.5),
                &Kind::Unknown {
                    name: "after".into(),
                    value: None
                },
            ]
        );
        assert_eq!(list[0].fallbacks, [Decorator::new(Kind::Depth(9))]);
        assert_eq!(
            list[1].fallbacks,
            [
                Decorator::new(Kind::Role("System".into())),
                Decorator::new(Kind::Unknown {
                    name: "scan_depth".into(),
                    value: Some("x".into())
                })
            ]
        );
    }

    #[test]
    fn list_form_orphan_fallback_written_back_as_fallback() {
        let (list, body) = parse_list("@@@depth 2\n@@role user\nB");
        assert_eq!(
            list[0].kind,
            Kind::Unknown {
                name: "@depth".into(),
                value: Some("2".into())
            }
        );
        assert_eq!(serialize(&list, body), "@@@depth 2\n@@role user\nB");
        // The typed parser ignores it, as before.
        assert_eq!(parse("@@@depth 2\n@@role user\nB").decorators.depth, None);
    }

    #[test]
    fn list_form_serde_shape() {
        let (list, _) = parse_list(
            "@@depth 4\n@@role system\n@@exclude_keys a,b\n@@activate\n@@probability 50\n\
             @@x_y 1\n@@@depth 2\n@@z\nB",
        );
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(
            json,
            r#"[{"type":"depth","value":4},{"type":"role","value":"system"},{"type":"exclude_keys","value":["a","b"]},{"type":"activate"},{"type":"probability","value":50.0},{"type":"unknown","name":"x_y","value":"1","fallbacks":[{"type":"depth","value":2}]},{"type":"unknown","name":"z"}]"#
        );
        let back: Vec<Decorator> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, list);
        // JavaScript and Python write whole numbers and floats either way.
        let d: Decorator = serde_json::from_str(r#"{"type":"depth","value":4.0}"#).unwrap();
        assert_eq!(d.kind, Kind::Depth(4));
        let d: Decorator = serde_json::from_str(r#"{"type":"order","value":3}"#).unwrap();
        assert_eq!(d.kind, Kind::Order(3.0));
        let d: Decorator = serde_json::from_str(r#"{"type":"activate","value":null}"#).unwrap();
        assert_eq!(d.kind, Kind::Activate);
    }

    #[test]
    fn list_form_serde_rejects_wrong_shapes() {
        for bad in [
            r#"{"type":"depth","value":"4"}"#,
            r#"{"type":"depth","value":4.5}"#,
            r#"{"type":"depth"}"#,
            r#"{"type":"activate","value":1}"#,
            r#"{"type":"role","value":1}"#,
            r#"{"type":"additional_keys","value":[1]}"#,
            r#"{"type":"additional_keys","value":"a"}"#,
            r#"{"type":"nonsense"}"#,
            r#"{"type":"unknown"}"#,
            r#"{"type":"unknown","name":"x","value":[1]}"#,
            r#"{"type":"depth","value":1,"name":"x"}"#,
            r#"{"type":"depth","value":1,"extra":true}"#,
            r#"{"value":1}"#,
            r#"[]"#,
        ] {
            assert!(serde_json::from_str::<Decorator>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn serialize_without_decorators_is_the_body() {
        assert_eq!(serialize(&[], "Just text"), "Just text");
        assert_eq!(
            serialize(&[Decorator::new(Kind::Depth(0))], ""),
            "@@depth 0"
        );
        assert_eq!(
            parse_list("@@depth 0"),
            (vec![Decorator::new(Kind::Depth(0))], "")
        );
    }

    #[test]
    fn typed_parse_agrees_with_list_form_values() {
        // The one value reader: a value the list form cannot type is an unknown there and an
        // invalid value for the typed parser, with the raw text in the message.
        let p = parse("@@depth deep\nB");
        assert_eq!(
            p.problems[0].message,
            "@@depth: value \"deep\" is not a whole number; ignored it"
        );
        assert!(p.unknown.is_empty());
        let p = parse("@@scan_depth -1.0\nB");
        assert_eq!(
            p.problems[0].message,
            "@@scan_depth: value \"-1.0\" must be a whole number of at least 0; ignored it"
        );
    }

    fn kind_strategy() -> impl Strategy<Value = Kind> {
        let word = "[a-z][a-z0-9_ ]{0,6}[a-z0-9]|[a-z]";
        let key = "[a-zA-Z0-9][a-zA-Z0-9 _.-]{0,5}[a-zA-Z0-9_.-]|[a-z]";
        prop_oneof![
            Just(Kind::Activate),
            Just(Kind::Keep),
            Just(Kind::DontActivate),
            Just(Kind::IgnoreOnMaxContext),
            any::<i64>().prop_map(Kind::Depth),
            (0i64..1000).prop_map(Kind::ScanDepth),
            any::<i64>().prop_map(Kind::IsGreeting),
            (-1.0e9f64..1.0e9).prop_map(Kind::Probability),
            any::<i32>().prop_map(|n| Kind::Order(f64::from(n) / 8.0)),
            word.prop_map(Kind::Role),
            "".prop_map(Kind::Position),
            word.prop_map(Kind::IsUserIcon),
            proptest::collection::vec(key, 1..4).prop_map(Kind::AdditionalKeys),
            proptest::collection::vec(key, 1..4).prop_map(Kind::ExcludeKeys),
            (
                "x_[a-z_]{0,6}|[a-z]{1,3}_only|after",
                proptest::option::of(word)
            )
                .prop_map(|(name, value)| Kind::Unknown { name, value }),
            // Known names whose values do not have their type stay unknown.
            Just(Kind::Unknown {
                name: "depth".into(),
                value: Some("deep".into())
            }),
            Just(Kind::Unknown {
                name: "activate".into(),
                value: Some("no".into())
            }),
            Just(Kind::Unknown {
                name: "exclude_keys".into(),
                value: None
            }),
        ]
    }

    fn decorator_strategy() -> impl Strategy<Value = Decorator> {
        (
            kind_strategy(),
            proptest::collection::vec(kind_strategy(), 0..3),
        )
            .prop_map(|(k, f)| Decorator {
                kind: k,
                fallbacks: f.into_iter().map(Decorator::new).collect(),
            })
    }

    /// [`split`] as it was before its shortcut for lines that cannot be decorators.
    fn split_line_by_line(content: &str) -> Split<'_> {
        let mut pos = 0;
        let mut header_start = None;
        let mut header_end = 0;
        while pos < content.len() {
            let line_end = content[pos..].find('\n').map_or(content.len(), |i| pos + i);
            let line = content[pos..line_end].trim();
            if line.starts_with("@@") {
                header_start.get_or_insert(pos);
                header_end = line_end;
            } else if !(line.is_empty() && header_start.is_none()) {
                break;
            }
            pos = line_end + 1;
        }
        match header_start {
            None => Split {
                header: "",
                body: content,
            },
            Some(start) => Split {
                header: content[start..header_end].trim_end_matches('\r'),
                body: content[header_end.min(content.len())..].trim_start_matches(['\n', '\r']),
            },
        }
    }

    proptest! {
        /// Issue 16: the header ends at the first line whose first non-blank characters are not
        /// `@@` (SPEC_V3.md, "Decorators") without that line being scanned; the same split as
        /// reading every line whole, for text made of the characters that decide it (blanks of
        /// every kind, `@`, line breaks).
        #[test]
        fn split_stops_at_the_first_other_line_as_reading_whole_lines_does(
            content in "[@@@ \t\r\n\u{a0}\u{85}\u{3000}\u{2028}xé]{0,40}",
        ) {
            prop_assert_eq!(split(&content), split_line_by_line(&content));
        }

        #[test]
        fn parse_list_of_serialize_round_trips(
            d in proptest::collection::vec(decorator_strategy(), 0..6),
            body in "([^\\s][^\r]{0,20})?",
        ) {
            prop_assume!(!(d.is_empty() && body.starts_with("@@")));
            let text = serialize(&d, &body);
            let (back, back_body) = parse_list(&text);
            prop_assert_eq!(&back, &d, "{:?}", text);
            prop_assert_eq!(back_body, body.as_str());
            let json = serde_json::to_string(&d).unwrap();
            let from_json: Vec<Decorator> = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(from_json, d);
        }

        #[test]
        fn serialize_of_parse_list_keeps_the_typed_meaning(s in "(@@@?[a-z_]{0,8}( [ -~]{0,6})?\n|[ -~\n\u{e9}\u{4e00}]{0,12}){0,12}") {
            let (list, body) = parse_list(&s);
            let again = serialize(&list, body);
            prop_assert_eq!(parse_list(&again), (list, body));
            let (a, b) = (parse(&s), parse(&again));
            prop_assert_eq!(a.decorators, b.decorators);
            prop_assert_eq!(a.body, b.body);
        }
    }

    proptest! {
        #[test]
        fn parse_body_equals_split_body_and_never_panics(s in "(@@@?[a-z_]{0,8}( [ -~]{0,6})?\n|[ -~\n\u{e9}\u{4e00}]{0,12}){0,12}") {
            let p = parse(&s);
            prop_assert_eq!(p.body, split(&s).body);
            for pr in &p.problems {
                prop_assert!(pr.line >= 1 && pr.line <= s.lines().count().max(1));
            }
        }
    }
}
