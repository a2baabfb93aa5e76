//! SillyTavern's macros beyond the shared ones, [`crate::Family::SillyTavern`] (SillyTavern
//! 1.19.0, `public/scripts/macros/definitions/*.js`).
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{hasvar::name}}` (`varexists`), `{{hasglobalvar::name}}` (`globalvarexists`) | `true` if set, else `false` |
//! | `{{deletevar::name}}` (`flushvar`), `{{deleteglobalvar::name}}` (`flushglobalvar`) | deletes it; empty |
//! | `{{setvarkey::name::key::value}}` (`setvarindex`), `{{setglobalvarkey}}` | sets a key of a JSON object (a number: an index of a JSON array); empty |
//! | `{{getvarkey::name::key}}` (`getvarindex`), `{{getglobalvarkey}}` | that key's value (objects as JSON) |
//! | `{{group}}` (`charIfNotGroup`, `<GROUP>`, `<CHARIFNOTGROUP>`) | the group's member names joined with `, `, else the character's name |
//! | `{{groupNotMuted}}` | the same without muted members |
//! | `{{notChar}}` | the group's members but the character, else the user's name |
//! | `{{charPrompt}}`, `{{charInstruction}}`, `{{charDepthPrompt}}`, `{{charCreatorNotes}}` (`creatorNotes`), `{{charVersion}}` (`version`) | card fields |
//! | `{{charFirstMessage}}` (`greeting`), `{{greeting::N}}` | the first message; `N >= 1`: alternate greeting `N` |
//! | `{{allChatRange}}` | `0-LAST` (empty chat: empty) |
//! | `{{datetimeformat::FORMAT}}` | the clock in a moment.js format (tokens of moment.js's docs: `YYYY MM DD HH mm ss Do dddd LLLL` ...) |
//! | `{{timeDiff::LEFT::RIGHT}}` | `in 3 hours` / `3 hours ago`: from RIGHT to LEFT, `Invalid date` if one is not a date |
//! | `{{time_UTC+2}}`, `{{time_UTC-10}}` | `{{time::UTC+2}}`: the time at that offset in hours |
//!
//! In the `sillytavern` dialect a macro called with a number of arguments it does not take
//! stays as written, with a warning (`{{char::x}}`, `{{reverse}}`, `{{setvar::x}}`):
//! `{{name::a::b}}` has one argument per `::` piece, the legacy `{{name:text}}` and
//! `{{name text}}` one. `getvar` reads numbers as SillyTavern does (`007` is `7`), and `addvar` on
//! a JSON array appends to it.
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Timestamp, Variables};
//! let ctx = Context::new()
//!     .with_char_name("Alice")
//!     .with_user_name("Bob")
//!     .with_first_message("Hi!")
//!     .with_alternate_greetings(vec!["Yo!".into()])
//!     .with_now(Timestamp::utc(1_795_273_620));
//! let st = |text: &str| {
//!     let reg = Registry::dialect_ref(Dialect::SillyTavern);
//!     Template::parse(text)
//!         .expand_with(reg, &Limits::default(), &ctx, &mut Variables::new(), Mode::Prompt)
//!         .text
//! };
//! assert_eq!(st("{{setvar::a::1}}{{hasvar::a}} {{hasvar::b}}"), "true false");
//! assert_eq!(st("{{setvar::a::1}}{{deletevar::a}}[{{getvar::a}}] {{varexists::a}}"), "[] false");
//! assert_eq!(st("{{setvarkey::o::k::v}}{{getvar::o}} {{getvarkey::o::k}}"), r#"{"k":"v"} v"#);
//! assert_eq!(st("<GROUP> and {{notChar}}"), "Alice and Bob");
//! assert_eq!(st("{{greeting}} {{greeting::1}}"), "Hi! Yo!");
//! assert_eq!(st("{{time_UTC+2}} {{time::UTC-10}}"), "5:07 PM 5:07 AM");
//! assert_eq!(st("{{datetimeformat::dddd [the] Do}}"), "Saturday the 21st");
//! assert_eq!(st("{{timeDiff::2023-01-01 12:00:00::2023-01-01 15:00:00}}"), "3 hours ago");
//! assert_eq!(st("{{char::x}} {{reverse}}"), "{{char::x}} {{reverse}}");
//! assert_eq!(
//!     st("{{setglobalvar::g::1}}{{hasglobalvar::g}}{{flushglobalvar::g}} {{globalvarexists::g}}\
//!         {{setglobalvar::h::1}}{{deleteglobalvar::h}}{{flushvar::x}}"),
//!     "true false"
//! );
//! assert_eq!(
//!     st("{{setglobalvarkey::l::1::b}}{{setglobalvarindex::l::0::a}}{{getglobalvar::l}} \
//!         {{getglobalvarkey::l::1}}{{getglobalvarindex::l::0}} \
//!         {{setvarindex::m::0::z}}{{getvarindex::m::0}}"),
//!     r#"["a","b"] ba z"#
//! );
//! assert_eq!(st("{{allChatRange}}|{{charPrompt}}|{{version}}"), "||");
//!
//! let group = Context::new()
//!     .with_char_name("Alice")
//!     .with_user_name("Bob")
//!     .with_group(vec!["Alice".into(), "Carol".into(), "Dan".into()], vec!["Dan".into()])
//!     .with_system_prompt("Main")
//!     .with_post_history_instructions("Jailbreak")
//!     .with_depth_prompt("Depth")
//!     .with_creator_notes("Notes")
//!     .with_char_version("1.2")
//!     .with_first_message("Hi!")
//!     .with_message(ccv3_cbs::Message::new(ccv3_cbs::Role::Char, "Alice", "Hi!"));
//! let st = |text: &str| {
//!     let reg = Registry::dialect_ref(Dialect::SillyTavern);
//!     Template::parse(text)
//!         .expand_with(reg, &Limits::default(), &group, &mut Variables::new(), Mode::Prompt)
//!         .text
//! };
//! assert_eq!(st("{{group}} / {{groupNotMuted}} / {{notChar}}"), "Alice, Carol, Dan / Alice, Carol / Carol, Dan");
//! assert_eq!(st("<CHARIFNOTGROUP>|{{charIfNotGroup}}"), "Alice, Carol, Dan|Alice, Carol, Dan");
//! assert_eq!(
//!     st("{{charPrompt}}|{{charInstruction}}|{{charDepthPrompt}}|{{charCreatorNotes}}|{{creatorNotes}}|{{charVersion}}"),
//!     "Main|Jailbreak|Depth|Notes|Notes|1.2"
//! );
//! assert_eq!(st("{{charFirstMessage}} {{greeting::5}}[] {{allChatRange}}"), "Hi! [] 0-0");
//! ```

use serde_json::Value;

use crate::expand::{fmt_num, num, Call};
use crate::parse::Style;
use crate::registry::{Family, Registry};
use crate::vars::Scope;

use super::time::humanize;
use super::{moment, moment_parse, st_examples};

/// The number of arguments SillyTavern's parser sees: `{{name}}` none, `{{name::a::b}}` one
/// per `::` piece, and the legacy `{{name:text}}` / `{{name text}}` one (`text` may hold
/// more colons). A bare macro counts the arguments it was given (none, unless the engine
/// passes a scoped block's content as one).
pub(crate) fn arg_count(c: &Call<'_, '_>) -> usize {
    match c.style() {
        Style::Bare => c.args().len(),
        Style::DoubleColon => c.args().len(),
        Style::Colon => 1,
        Style::Space => usize::from(!c.raw().is_empty()),
    }
}

/// An integer as SillyTavern's argument types accept it (`/^-?\d+$/` after trimming): no
/// `+`, no fraction.
pub(crate) fn integer(s: &str) -> Option<i64> {
    let t = s.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// The hours of `UTC+N` / `UTC-N` (SillyTavern's `/^UTC([+-]\d+)$/`), as minutes.
pub(crate) fn utc_offset(spec: &str) -> Option<i32> {
    let rest = spec.strip_prefix("UTC")?;
    let digits = rest.strip_prefix(['+', '-'])?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // moment reads |offset| < 16 as hours, larger values as minutes.
    let n: i64 = rest.parse().ok()?;
    let minutes = if n.abs() < 16 { n * 60 } else { n };
    i32::try_from(minutes).ok()
}

/// A variable's value as SillyTavern's `getvar` gives it: text that reads as a number is that
/// number (`007` is `7`, ` 5 ` is `5`); blank text is kept.
pub(crate) fn st_value(v: &str) -> String {
    if v.trim().is_empty() {
        return v.to_owned();
    }
    let n = num(v);
    if n.is_nan() {
        v.to_owned()
    } else {
        fmt_num(n)
    }
}

/// A JSON value as SillyTavern gives it out: strings as they are, others as JSON.
fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// SillyTavern's `setvarkey`: a key of a JSON object, or with a number an index of a JSON
/// array (created when the variable is unset). Indexes past the end fill with `null`, within
/// the output bound; a variable that is not JSON is left alone.
fn set_key(c: &mut Call<'_, '_>, scope: Scope) -> Option<String> {
    let (name, key, value) = (
        c.arg(0).to_owned(),
        c.arg(1).to_owned(),
        c.arg(2).to_owned(),
    );
    let current = c.var(scope, &name).unwrap_or("null").to_owned();
    let Ok(mut doc) = serde_json::from_str::<Value>(&current) else {
        return Some(String::new());
    };
    let index = num(&key);
    if index.is_nan() {
        if doc.is_null() {
            doc = Value::Object(serde_json::Map::new());
        }
        match &mut doc {
            Value::Object(map) => {
                map.insert(key, Value::String(value));
            }
            Value::Array(_) => {} // JavaScript sets a property a JSON array does not keep.
            _ => return Some(String::new()),
        }
    } else {
        if doc.is_null() {
            doc = Value::Array(Vec::new());
        }
        match &mut doc {
            Value::Array(items) => {
                if index < 0.0 || index.fract() != 0.0 {
                    return Some(String::new());
                }
                // Each filler `null` is 5 bytes of JSON: refuse what passes the bound.
                if c.too_big((index as usize).saturating_mul(5)) {
                    return None;
                }
                let i = index as usize;
                if i >= items.len() {
                    items.resize(i + 1, Value::Null);
                }
                if let Some(slot) = items.get_mut(i) {
                    *slot = Value::String(value);
                }
            }
            Value::Object(map) => {
                map.insert(fmt_num(index), Value::String(value));
            }
            _ => return Some(String::new()),
        }
    }
    c.set_var(scope, &name, &doc.to_string());
    Some(String::new())
}

/// SillyTavern's `getvarkey`: the key (or index) of the variable's JSON, objects as JSON;
/// numbers read as numbers.
fn get_key(c: &Call<'_, '_>, scope: Scope) -> String {
    let (name, key) = (c.arg(0), c.arg(1));
    let Some(current) = c.var(scope, name) else {
        return String::new();
    };
    let Ok(doc) = serde_json::from_str::<Value>(current) else {
        return st_value(current);
    };
    let index = num(key);
    let found = match (&doc, index.is_nan()) {
        (Value::Array(items), false) if index >= 0.0 && index.fract() == 0.0 => {
            items.get(index as usize)
        }
        (Value::Object(map), _) => map.get(key),
        _ => None,
    };
    found
        .map(json_text)
        .map(|s| st_value(&s))
        .unwrap_or_default()
}

fn register_scope(r: &mut Registry, scope: Scope, infix: &str) {
    let f = Family::SillyTavern;
    let n = |verb: &str| format!("{verb}{infix}var");
    let exists = format!("{infix}varexists");
    let flush = format!("flush{infix}var");
    r.register_all(f, &[&n("has"), &exists], move |c| {
        let name = c.raw();
        Some(c.var(scope, &name).is_some().to_string())
    });
    r.register_all(f, &[&n("delete"), &flush], move |c| {
        let name = c.raw();
        c.delete_var(scope, &name);
        Some(String::new())
    });
    let key = |verb: &str| {
        [
            format!("{verb}{infix}varkey"),
            format!("{verb}{infix}varindex"),
        ]
    };
    let [set, set_index] = key("set");
    r.register_all(f, &[&set, &set_index], move |c| set_key(c, scope));
    let [get, get_index] = key("get");
    r.register_all(f, &[&get, &get_index], move |c| Some(get_key(c, scope)));
}

/// The group's member names joined with `, ` (`muted`: with the muted ones; `other`: without
/// the character), or the solo chat's fallback.
fn group(c: &Call<'_, '_>, muted: bool, other: bool) -> String {
    let ctx = c.context();
    if ctx.group_members.is_empty() {
        return if other {
            ctx.user_name.clone()
        } else {
            ctx.char_display_name().to_owned()
        };
    }
    ctx.group_members
        .iter()
        .filter(|m| muted || !ctx.muted_members.contains(m))
        .filter(|m| !other || m.as_str() != ctx.char_display_name())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Adds SillyTavern's own macros.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::sillytavern::register(&mut registry);
/// assert!(registry.contains("charprompt"));
/// ```
pub fn register(r: &mut Registry) {
    register_scope(r, Scope::Local, "");
    register_scope(r, Scope::Global, "global");
    let f = Family::SillyTavern;
    r.register_all(
        f,
        &["group", "charifnotgroup", "<group>", "<charifnotgroup>"],
        |c| Some(group(c, true, false)),
    );
    r.register_all(f, &["groupnotmuted"], |c| Some(group(c, false, false)));
    r.register_all(f, &["notchar"], |c| Some(group(c, true, true)));
    r.register_all(f, &["charprompt"], |c| {
        Some(c.context().system_prompt.clone())
    });
    r.register_all(f, &["charinstruction"], |c| {
        Some(c.context().post_history_instructions.clone())
    });
    r.register_all(f, &["chardepthprompt"], |c| {
        Some(c.context().depth_prompt.clone())
    });
    r.register_all(f, &["charcreatornotes", "creatornotes"], |c| {
        Some(c.context().creator_notes.clone())
    });
    r.register_all(f, &["charversion", "version"], |c| {
        Some(c.context().char_version.clone())
    });
    r.register_all(f, &["charfirstmessage", "greeting"], |c| {
        let raw = c.raw();
        let i = if raw.is_empty() { 0 } else { integer(&raw)? };
        let ctx = c.context();
        Some(match i {
            0 => ctx.first_message.clone(),
            i => usize::try_from(i - 1)
                .ok()
                .and_then(|i| ctx.alternate_greetings.get(i))
                .cloned()
                .unwrap_or_default(),
        })
    });
    r.register_all(f, &["allchatrange"], |c| {
        Some(match c.context().messages.len() {
            0 => String::new(),
            n => format!("0-{}", n - 1),
        })
    });
    r.register_all(f, &["timeutc"], |c| {
        let spec = c.name().strip_prefix("timeutc").unwrap_or_default();
        let offset = utc_offset(&format!("UTC{spec}"))?;
        let now = c.context().now?;
        Some(moment::format("LT", now.with_offset(offset), 64))
    });
    r.register_all(f, &["datetimeformat"], |c| {
        let Some(now) = c.context().now else {
            return Some(String::new());
        };
        let fmt = c.raw();
        let cap = c.limits().max_output;
        let out = moment::format(&fmt, now, cap);
        if c.too_big(out.len()) {
            return None;
        }
        Some(out)
    });
    r.register_all(f, &["timediff"], |c| {
        let local = c.context().now.map_or(0, |t| t.utc_offset_minutes);
        let left = moment_parse::parse(c.arg(0), local);
        let right = moment_parse::parse(c.arg(1), local);
        Some(match (left, right) {
            (Some(l), Some(r)) => relative(l.saturating_sub(r)),
            _ => "Invalid date".to_owned(),
        })
    });
}

/// `true` for a formula SillyTavern's dice library (droll 0.2.1, `droll.parse`) accepts:
/// `XdY`, `dY`, `XdY+Z`, `XdY-Z`, counts and sides without a leading zero, `d` in any case.
fn droll_formula(s: &str) -> bool {
    fn number(s: &str, leading_zero: bool) -> bool {
        !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && (leading_zero || !s.starts_with('0'))
    }
    let Some((count, rest)) = s.split_once(['d', 'D']) else {
        return false;
    };
    let (sides, modifier) = match rest.find(['+', '-']) {
        Some(p) => (rest.get(..p).unwrap_or_default(), rest.get(p + 1..)),
        None => (rest, None),
    };
    (count.is_empty() || number(count, false))
        && number(sides, false)
        && modifier.is_none_or(|m| number(m, true))
}

/// SillyTavern's meanings of names shared with the spec set and the other families, for the
/// `sillytavern` dialect (`public/scripts/macros/definitions/core-macros.js`, 1.19.0):
///
/// - `{{random}}` without choices is empty (its handler returns `''` for an empty list);
/// - `{{roll::F}}` with a formula droll does not read is empty, with a warning (`N` alone is
///   `1dN`); more than 1000 dice are refused the same way (a hostile-input bound);
/// - `{{mesExamples}}` is formatted as [`super::st_examples`] says, `{{mesExamplesRaw}}` is
///   the trimmed field;
/// - `{{trim::A}}` outside a scoped block returns SillyTavern's `{{trim}}` marker, which its
///   post-processing removes with the newlines around it: `A` is dropped.
pub(crate) fn register_overrides(r: &mut Registry) {
    let s = Family::Spec;
    r.register_all(s, &["random"], |c| {
        if c.args().is_empty() {
            return Some(String::new());
        }
        let list = super::choices(c);
        let i = c.random_below(list.len() as u64) as usize;
        list.into_iter().nth(i)
    });
    r.register_all(s, &["roll"], |c| {
        let raw = c.raw();
        let formula = raw.trim();
        let formula = if !formula.is_empty() && formula.bytes().all(|b| b.is_ascii_digit()) {
            format!("1d{formula}")
        } else {
            formula.to_owned()
        };
        if !droll_formula(&formula) {
            c.warn(format!("invalid roll formula {formula:?}"));
            return Some(String::new());
        }
        Some(super::spec::roll(c).unwrap_or_default())
    });
    let ch = Family::Character;
    r.register_all(ch, &["mesexamplesraw"], |c| {
        let raw = c.context().mes_examples.trim().to_owned();
        Some(c.expand_nested(&raw))
    });
    r.register_all(ch, &["mesexamples"], |c| {
        let ctx = c.context();
        let raw = ctx.mes_examples.trim().to_owned();
        let (format, user) = (ctx.example_format.clone(), ctx.user_name.clone());
        let char = ctx.char_display_name().to_owned();
        let raw = c.expand_nested(&raw);
        let out = st_examples::format(&raw, &format, &user, &char, |s| c.expand_nested(s));
        if c.too_big(out.len()) {
            return None;
        }
        Some(out)
    });
    r.register_all(Family::Text, &["trim"], |c| {
        if c.is_scoped() {
            return Some(c.raw());
        }
        c.trim_surrounding_newlines();
        Some(String::new())
    });
}

/// moment's `duration.humanize(true)`: `in 3 hours` for a positive difference in milliseconds,
/// `3 hours ago` otherwise.
fn relative(ms: i64) -> String {
    let seconds = (ms as f64 / 1000.0).round() as i64;
    let words = humanize(seconds);
    if ms > 0 {
        format!("in {words}")
    } else {
        format!("{words} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{is_time_utc, time_utc_name};

    #[test]
    fn legacy_time_names_keep_their_sign() {
        assert_eq!(time_utc_name("time_UTC-10").as_deref(), Some("timeutc-10"));
        assert_eq!(time_utc_name("TIME_utc+2").as_deref(), Some("timeutc+2"));
        assert_eq!(time_utc_name("time_UTC10"), None);
        assert_eq!(time_utc_name("time_UTC+"), None);
        assert_eq!(time_utc_name("time"), None);
        assert!(is_time_utc("timeutc-10") && is_time_utc("timeutc+2"));
        assert!(!is_time_utc("timeutc") && !is_time_utc("timeutc+x"));
        assert_eq!(utc_offset("UTC+2"), Some(120));
        assert_eq!(utc_offset("UTC-99999999999999999999"), None);
        assert_eq!(utc_offset("UTC-9999999999"), None);
        assert_eq!(utc_offset("UTC+600"), Some(600));
        assert_eq!(utc_offset("utc+2"), None);
    }

    #[test]
    fn getvar_reads_numbers_like_javascript() {
        assert_eq!(st_value("007"), "7");
        assert_eq!(st_value(" 5 "), "5");
        assert_eq!(st_value("  "), "  ");
        assert_eq!(st_value("abc"), "abc");
        assert_eq!(st_value("1e3"), "1000");
    }
}
