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
/// ```
/// use ccv3::decorator::{parse, DecoratorRole};
/// let p = parse("@@risu_only 4\n@@@depth 3\n@@role system\n\nThe castle is old.");
/// assert_eq!(p.decorators.depth, Some(3));
/// assert_eq!(p.decorators.role, Some(DecoratorRole::System));
/// assert_eq!(p.body, "The castle is old.");
/// assert_eq!(p.unknown[0].name, "risu_only");
/// ```
pub fn parse(content: &str) -> Parsed<'_> {
    let s = split(content);
    let mut out = Parsed {
        body: s.body,
        ..Default::default()
    };
    if s.header.is_empty() {
        return out;
    }
    let offset = (s.header.as_ptr() as usize).saturating_sub(content.as_ptr() as usize);
    let first_line =
        1 + memchr::memchr_iter(b'\n', &content.as_bytes()[..offset.min(content.len())]).count();
    // Chain state: whether a line of the current chain was accepted, and its length so far.
    let mut accepted = true;
    let mut chain_len = 0usize;
    for (i, raw) in s.header.split('\n').enumerate() {
        let line_no = first_line + i;
        let line = raw.trim();
        let fallback = line.starts_with("@@@");
        let rest = line.trim_start_matches('@');
        let (name, value) = match rest.find(char::is_whitespace) {
            Some(p) => (&rest[..p], rest[p..].trim()),
            None => (rest, ""),
        };
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
        match apply(&mut out.decorators, name, value) {
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

fn count(value: &str, min: u64) -> Result<u64, Reject> {
    let n = int(value)?;
    match u64::try_from(n) {
        Ok(n) if n >= min => Ok(n),
        _ => Err(Reject::Invalid(format!(
            "value {value:?} must be a whole number of at least {min}"
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

fn once_flag(slot: &mut bool, value: &str) -> Result<(), Reject> {
    flag(value)?;
    if *slot {
        return Err(Reject::Invalid("repeated; the first one wins".into()));
    }
    *slot = true;
    Ok(())
}

fn apply(d: &mut Decorators, name: &str, value: &str) -> Result<(), Reject> {
    match name {
        "activate_only_after" => once(&mut d.activate_only_after, count(value, 0)),
        "activate_only_every" => once(&mut d.activate_only_every, count(value, 1)),
        "keep_activate_after_match" | "keep" => once_flag(&mut d.keep_activate_after_match, value),
        "dont_activate_after_match" => once_flag(&mut d.dont_activate_after_match, value),
        "depth" => once(&mut d.depth, int(value)),
        "instruct_depth" => once(&mut d.instruct_depth, int(value)),
        "reverse_depth" => once(&mut d.reverse_depth, int(value)),
        "reverse_instruct_depth" => once(&mut d.reverse_instruct_depth, int(value)),
        "role" => {
            let r = match value.to_ascii_lowercase().as_str() {
                "system" => Ok(DecoratorRole::System),
                "user" => Ok(DecoratorRole::User),
                "assistant" => Ok(DecoratorRole::Assistant),
                _ => Err(Reject::Invalid(format!(
                    "value {value:?} is not assistant, system or user"
                ))),
            };
            once(&mut d.role, r)
        }
        "scan_depth" => once(&mut d.scan_depth, count(value, 0)),
        "instruct_scan_depth" => once(&mut d.instruct_scan_depth, count(value, 0)),
        "is_greeting" => once(&mut d.is_greeting, count(value, 0)),
        "position" => {
            let ok = POSITIONS.contains(&value) || (value.len() > 3 && value.starts_with("pt_"));
            let v = if ok {
                Ok(value.to_string())
            } else {
                Err(Reject::Invalid(format!(
                    "position {value:?} is not supported"
                )))
            };
            once(&mut d.position, v)
        }
        "ignore_on_max_context" => once_flag(&mut d.ignore_on_max_context, value),
        "additional_keys" => {
            d.additional_keys.push(keys(value)?);
            Ok(())
        }
        "exclude_keys" => {
            d.exclude_keys.extend(keys(value)?);
            Ok(())
        }
        "is_user_icon" => {
            let v = if value.is_empty() {
                Err(Reject::Invalid("needs an icon name".into()))
            } else {
                Ok(value.to_string())
            };
            once(&mut d.is_user_icon, v)
        }
        "activate" => once_flag(&mut d.activate, value),
        "dont_activate" => once_flag(&mut d.dont_activate, value),
        "disable_ui_prompt" => {
            let v = if UI_PROMPTS.contains(&value) {
                Ok(value.to_string())
            } else {
                Err(Reject::Invalid(format!(
                    "prompt type {value:?} is not supported"
                )))
            };
            once(&mut d.disable_ui_prompt, v)
        }
        "probability" => {
            let v = float(value).and_then(|p| {
                if (0.0..=100.0).contains(&p) {
                    Ok(p)
                } else {
                    Err(Reject::Invalid(format!(
                        "value {value:?} is not between 0 and 100"
                    )))
                }
            });
            once(&mut d.probability, v)
        }
        "order" => once(&mut d.order, float(value)),
        "priority" => once(&mut d.priority, float(value)),
        _ => Err(Reject::Unknown),
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
