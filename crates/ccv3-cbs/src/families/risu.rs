//! RisuAI's chat and application functions, [`crate::Family::RisuChat`], and the RisuAI
//! meanings of the names both applications use (`register_overrides`, in the `risu`
//! dialect only). Written from RisuAI's `cbs.ts`.
//!
//! Functions about one message of the chat (`chatindex`, `messagetime`, `role`,
//! `isfirstmsg`, ...) read the message RisuAI is rendering; prompts are built outside any
//! message, where RisuAI gives `-1`, `[Cannot get time]`, `null` and `0`, and so does this
//! crate.
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{chatindex}}` (`chat_index`) | `-1` (no message is being rendered) |
//! | `{{messagetime}}`, `{{messagedate}}` | `[Cannot get time]` |
//! | `{{messageidleduration}}` | `[No user message found]` |
//! | `{{role}}` | `null`; `{{isfirstmsg}}` (`isfirstmessage`): `0` |
//! | `{{messageunixtimearray}}` | the messages' send times in milliseconds (0 when unknown), a JSON array |
//! | `{{previouschatlog::N}}` (`previous_chat_log`) | message `N`'s text, else `Out of range` |
//! | `{{history}}` (`messages`), `{{history::role}}` | the messages as JSON objects `{"role","data"}`; with `role`, texts `role: text` |
//! | `{{userhistory}}` (`usermessages`), `{{charhistory}}` (`charmessages`) | the user's / character's messages as JSON objects |
//! | `{{mainprompt}}` (`systemprompt`) | the application's system prompt ([`crate::Context::original`]), expanded |
//! | `{{metadata::KEY}}` | `imateapot` is `🫖`; keys about the running application stay text; others give RisuAI's error text |
//!
//! In the `risu` dialect these names take RisuAI's meaning:
//! `getvar`/`getglobalvar` of an unset variable is `null`; `setvar` stores its second argument;
//! `addvar` adds numbers (`NaN` on an unset variable, whose value is `null`); `setdefaultvar`
//! sets only a variable whose value is empty (an unset one reads `null`, which RisuAI counts
//! as set); `and`/`or`/`not` test for exactly `1`; `equal`/`not_equal` compare untrimmed;
//! `random`/`pick` without arguments give a number in `[0, 1)`, and split one argument on `,`
//! and `:`; `roll` without arguments is `1` and `NaN` for bad dice; `dice::XdY` reads
//! `Number(X)` dice (`d6` is 0 dice); `time` is `H:M:S`, `date` `Y-M-D` (local, unpadded),
//! `isotime`/`isodate` the same in UTC, `{{date::FORMAT::MS}}` formats with RisuAI's tokens
//! (`YYYY YY MMMM MMM MM DDDD DD dddd ddd HH hh mm ss X x A`, replaced one after the other);
//! `idleduration` is `H:MM:SS` since the last message; `firstmsgindex` is `-1` for the
//! first message; `trim` without argument stays text.
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Message, Mode, Registry, Role, Template, Timestamp, Variables};
//! let ctx = Context::new()
//!     .with_now(Timestamp::utc(1_795_273_620))
//!     .with_message(Message::new(Role::User, "Bob", "hi").at(1_795_273_000));
//! let risu = |s: &str| Template::parse(s).expand_with(Registry::dialect_ref(Dialect::Risu),
//!     &Limits::default(), &ctx, &mut Variables::new(), Mode::Prompt).text;
//! assert_eq!(risu("{{time}} {{date}} {{isodate}}"), "15:7:0 2026-11-21 2026-11-21");
//! assert_eq!(risu("{{date::YYYY-MM-DD HH:mm}}"), "2026-11-21 15:07");
//! assert_eq!(risu("{{idleduration}} {{chatindex}} {{role}}"), "0:10:20 -1 null");
//! assert_eq!(risu("{{getvar::x}} {{addvar::x::1}}{{getvar::x}}"), "null NaN");
//! assert_eq!(risu("{{previouschatlog::0}} {{previouschatlog::5}}"), "hi Out of range");
//! assert_eq!(risu("{{messagetime}} {{messagedate}} {{isfirstmsg}} {{isfirstmessage}}"),
//!     "[Cannot get time] [Cannot get time] 0 0");
//! assert_eq!(risu("{{messageidleduration}}"), "[No user message found]");
//! assert_eq!(risu("{{messageunixtimearray}}"), r#"["1795273000000"]"#);
//! assert_eq!(risu("{{history}} {{messages::role}}"), r#"["{\"role\":\"user\",\"data\":\"hi\"}"] ["user: hi"]"#);
//! assert_eq!(risu("{{userhistory}} {{usermessages}} {{charhistory}} {{charmessages}}"),
//!     r#"["{\"role\":\"user\",\"data\":\"hi\"}"] ["{\"role\":\"user\",\"data\":\"hi\"}"] [] []"#);
//! assert_eq!(risu("{{metadata::imateapot}} {{metadata::nope}}"), "🫖 Error: nope is not a valid metadata key.");
//! let with_prompt = ctx.clone().with_original("Be {{user}}.").with_user_name("Bob");
//! let risu2 = |s: &str| Template::parse(s).expand_with(Registry::dialect_ref(Dialect::Risu),
//!     &Limits::default(), &with_prompt, &mut Variables::new(), Mode::Prompt).text;
//! assert_eq!(risu2("{{mainprompt}}|{{systemprompt}}"), "Be Bob.|Be Bob.");
//! ```

use serde_json::json;

use super::js;
use super::numbers::{risu_dice, roll_with};
use super::strings::{opt, or_undefined};
use super::time::{civil, MONTHS, WEEKDAYS};
use crate::context::{Role, Timestamp};
use crate::expand::{fmt_num, Call};
use crate::registry::{Family, Registry};
use crate::vars::Scope;

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Char => "char",
        Role::System => "system",
    }
}

fn message_object(role: Role, content: &str) -> String {
    js::stringify(&json!({ "role": role_name(role), "data": content }))
}

/// Adds RisuAI's chat and application functions.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::risu::register(&mut registry);
/// assert!(registry.contains("chatindex"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::RisuChat;
    r.register_all(f, &["chatindex"], |_| Some("-1".to_owned()));
    r.register_all(f, &["messagetime", "messagedate"], |_| {
        Some("[Cannot get time]".to_owned())
    });
    r.register_all(f, &["messageidleduration"], |_| {
        Some("[No user message found]".to_owned())
    });
    r.register_all(f, &["role"], |_| Some("null".to_owned()));
    r.register_all(f, &["isfirstmsg", "isfirstmessage"], |_| {
        Some("0".to_owned())
    });
    r.register_all(f, &["messageunixtimearray"], |c| {
        let times: Vec<String> = c
            .context()
            .messages
            .iter()
            .map(|m| m.time.map_or(0, |t| t.saturating_mul(1000)).to_string())
            .collect();
        Some(js::make_string_array(&times))
    });
    r.register_all(f, &["previouschatlog"], |c| {
        let i = js::number(or_undefined(c, 0));
        let found = (i >= 0.0 && i.fract() == 0.0)
            .then(|| c.context().messages.get(i as usize))
            .flatten();
        Some(found.map_or_else(|| "Out of range".to_owned(), |m| m.content.clone()))
    });
    r.register_all(f, &["history", "messages"], |c| {
        let with_role = c.raw_args().iter().any(|a| a == "role");
        let bare = c.raw_args().is_empty();
        let items: Vec<String> = c
            .context()
            .messages
            .iter()
            .map(|m| {
                if bare {
                    message_object(m.role, &m.content)
                } else if with_role {
                    format!("{}: {}", role_name(m.role), m.content)
                } else {
                    m.content.clone()
                }
            })
            .collect();
        Some(js::make_string_array(&items))
    });
    for (names, role) in [
        (["userhistory", "usermessages"], Role::User),
        (["charhistory", "charmessages"], Role::Char),
    ] {
        r.register_all(f, &names, move |c| {
            let items: Vec<String> = c
                .context()
                .messages
                .iter()
                .filter(|m| m.role == role)
                .map(|m| message_object(m.role, &m.content))
                .collect();
            Some(js::make_string_array(&items))
        });
    }
    r.register_all(f, &["mainprompt", "systemprompt"], |c| {
        let text = c.context().original.clone();
        Some(c.expand_nested(&text))
    });
    r.register_all(f, &["metadata"], |c| {
        let key = opt(c, 0)?.to_lowercase();
        match key.as_str() {
            "imateapot" => Some("🫖".to_owned()),
            "mobile" | "local" | "node" | "version" | "majorversion" | "majorver" | "major"
            | "language" | "locale" | "lang" | "browserlanguage" | "browserlocale"
            | "browserlang" | "modelshortname" | "modelname" | "modelinternalid"
            | "modelformat" | "modelprovider" | "modeltokenizer" | "risutype" | "maxcontext" => {
                c.warn("this key is about the running RisuAI application");
                None
            }
            _ => Some(format!(
                "Error: {} is not a valid metadata key.",
                c.raw_arg(0)
            )),
        }
    });
}

/// The local time of the clock, or of `ms` milliseconds since the epoch in the clock's offset.
fn moment(c: &Call<'_, '_>, ms: Option<f64>) -> Option<(Timestamp, f64)> {
    let now = c.context().now?;
    Some(match ms {
        Some(ms) => (
            Timestamp {
                unix: (ms / 1000.0).floor() as i64,
                utc_offset_minutes: now.utc_offset_minutes,
            },
            ms,
        ),
        None => (now, now.unix as f64 * 1000.0),
    })
}

/// RisuAI's `dateTimeFormat`: each token replaced everywhere, one token after the other.
fn date_time_format(format: &str, ts: Timestamp, ms: f64) -> String {
    let format = format.strip_prefix(':').unwrap_or(format);
    if format.len() > 300 {
        return String::new();
    }
    let t = civil(ts);
    let month = MONTHS
        .get(t.month as usize - 1)
        .copied()
        .unwrap_or_default();
    let weekday = WEEKDAYS.get(t.weekday).copied().unwrap_or_default();
    let day_of_year = super::time::day_of_year(t.year, t.month, t.day);
    let hour12 = if t.hour.is_multiple_of(12) {
        12
    } else {
        t.hour % 12
    };
    let year = t.year.to_string();
    let steps: [(&str, String); 17] = [
        ("YYYY", year.clone()),
        ("YY", year.get(2..).unwrap_or_default().to_owned()),
        ("MMMM", month.to_owned()),
        ("MMM", month.get(..3).unwrap_or_default().to_owned()),
        ("MM", format!("{:02}", t.month)),
        ("DDDD", day_of_year.to_string()),
        ("DD", format!("{:02}", t.day)),
        ("dddd", weekday.to_owned()),
        ("ddd", weekday.get(..3).unwrap_or_default().to_owned()),
        ("HH", format!("{:02}", t.hour)),
        ("hh", format!("{hour12:02}")),
        ("mm", format!("{:02}", t.minute)),
        ("ss", format!("{:02}", t.second)),
        ("X", (ms / 1000.0).floor().to_string()),
        ("x", fmt_num(ms.floor())),
        ("A", if t.hour >= 12 { "PM" } else { "AM" }.to_owned()),
        ("", String::new()),
    ];
    let mut out = format.to_owned();
    for (token, value) in steps.iter().filter(|(t, _)| !t.is_empty()) {
        if out.contains(token) {
            out = out.replace(token, value);
        }
    }
    out
}

fn h_mm_ss(ms: f64) -> String {
    let seconds = (ms / 1000.0).floor();
    let minutes = (seconds / 60.0).floor();
    let hours = (minutes / 60.0).floor();
    format!(
        "{}:{:0>2}:{:0>2}",
        fmt_num(hours),
        fmt_num(minutes % 60.0),
        fmt_num(seconds % 60.0)
    )
}

fn risu_choices(c: &Call<'_, '_>) -> Vec<String> {
    if c.raw_args().len() == 1 {
        return c
            .raw_arg(0)
            .replace("\\,", "\u{0}X")
            .split([':', ','])
            .map(|s| s.replace("\u{0}X", ","))
            .collect();
    }
    c.raw_args().to_vec()
}

fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Re-registers the names both applications use with RisuAI's meanings (the `risu` dialect).
pub(crate) fn register_overrides(r: &mut Registry) {
    let v = Family::Variables;
    for (name, scope) in [("getvar", Scope::Local), ("getglobalvar", Scope::Global)] {
        r.register_all(v, &[name], move |c| {
            let name = c.raw_arg(0).to_owned();
            Some(c.var(scope, &name).unwrap_or("null").to_owned())
        });
    }
    r.register_all(v, &["setvar"], |c| {
        let (name, value) = (c.raw_arg(0).to_owned(), or_undefined(c, 1).to_owned());
        c.set_var(Scope::Local, &name, &value);
        Some(String::new())
    });
    r.register_all(v, &["addvar"], |c| {
        let name = c.raw_arg(0).to_owned();
        let current = js::number(c.var(Scope::Local, &name).unwrap_or("null"));
        let value = fmt_num(current + js::number(or_undefined(c, 1)));
        c.set_var(Scope::Local, &name, &value);
        Some(String::new())
    });
    r.register_all(v, &["setdefaultvar"], |c| {
        let name = c.raw_arg(0).to_owned();
        if c.var(Scope::Local, &name) == Some("") {
            let value = or_undefined(c, 1).to_owned();
            c.set_var(Scope::Local, &name, &value);
        }
        Some(String::new())
    });
    r.register_all(v, &["tempvar", "gettempvar"], |c| {
        Some(c.temp_var(c.raw_arg(0)).unwrap_or_default().to_owned())
    });
    r.register_all(v, &["settempvar"], |c| {
        let (name, value) = (c.raw_arg(0).to_owned(), or_undefined(c, 1).to_owned());
        c.set_temp_var(&name, &value);
        Some(String::new())
    });

    let m = Family::Math;
    let one = |c: &Call<'_, '_>, i: usize| c.raw_arg(i) == "1" && c.raw_args().len() > i;
    r.register_all(m, &["and"], move |c| {
        Some(super::bool_str(one(c, 0) && one(c, 1)))
    });
    r.register_all(m, &["or"], move |c| {
        Some(super::bool_str(one(c, 0) || one(c, 1)))
    });
    r.register_all(m, &["not"], move |c| Some(super::bool_str(!one(c, 0))));
    r.register_all(m, &["equal"], |c| {
        Some(super::bool_str(or_undefined(c, 0) == or_undefined(c, 1)))
    });
    r.register_all(m, &["notequal"], |c| {
        Some(super::bool_str(or_undefined(c, 0) != or_undefined(c, 1)))
    });

    let s = Family::Spec;
    r.register_all(s, &["random"], |c| {
        if c.raw_args().is_empty() {
            return Some(fmt_num(unit(c.random_u64())));
        }
        let list = risu_choices(c);
        let i = c.random_below(list.len() as u64) as usize;
        list.into_iter().nth(i)
    });
    r.register_all(s, &["pick"], |c| {
        let mut rng = c.place_rng();
        if c.raw_args().is_empty() {
            return Some(fmt_num(rng(1 << 53) as f64 / (1u64 << 53) as f64));
        }
        let list = risu_choices(c);
        let i = rng(list.len() as u64) as usize;
        list.into_iter().nth(i)
    });
    r.register_all(s, &["roll"], |c| {
        if c.raw_args().is_empty() {
            return Some("1".to_owned());
        }
        let Some((count, sides)) = risu_dice(c.raw_arg(0)) else {
            return Some("NaN".to_owned());
        };
        roll_with(c, count, sides, |c, n| c.random_below(n))
    });
    r.register_all(Family::Dice, &["dice"], |c| {
        let notation = or_undefined(c, 0).to_owned();
        let mut parts = notation.split('d');
        let count = js::number(parts.next().unwrap_or_default());
        let sides = parts.next().map_or(f64::NAN, js::number);
        if count.is_nan() || sides.is_nan() {
            return Some("NaN".to_owned());
        }
        if count <= 0.0 {
            return Some("0".to_owned());
        }
        let sides = sides.max(0.0);
        roll_with(c, count, sides, |c, n| c.random_below(n))
    });

    let t = Family::Time;
    r.register_all(t, &["time"], |c| {
        if c.raw_args().is_empty() {
            let (ts, _) = moment(c, None)?;
            let t = civil(ts);
            return Some(format!("{}:{}:{}", t.hour, t.minute, t.second));
        }
        format_call(c)
    });
    r.register_all(t, &["date", "datetimeformat"], |c| {
        if c.raw_args().is_empty() {
            let (ts, _) = moment(c, None)?;
            let t = civil(ts);
            return Some(format!("{}-{}-{}", t.year, t.month, t.day));
        }
        format_call(c)
    });
    r.register_all(t, &["isotime"], |c| {
        let (ts, _) = moment(c, None)?;
        let t = civil(Timestamp::utc(ts.unix));
        Some(format!("{}:{}:{}", t.hour, t.minute, t.second))
    });
    r.register_all(t, &["isodate"], |c| {
        let (ts, _) = moment(c, None)?;
        let t = civil(Timestamp::utc(ts.unix));
        Some(format!("{}-{}-{}", t.year, t.month, t.day))
    });
    r.register_all(t, &["idleduration"], |c| {
        let now = c.context().now?;
        let Some(last) = c.context().messages.last() else {
            return Some("00:00:00".to_owned());
        };
        let Some(time) = last.time else {
            return Some("[Cannot get time, message was sent in older version]".to_owned());
        };
        Some(h_mm_ss(now.unix.saturating_sub(time) as f64 * 1000.0))
    });

    r.register_all(Family::Chat, &["firstmsgindex", "firstmessageindex"], |c| {
        let i = c.context().greeting_index.unwrap_or(0);
        Some(if i == 0 {
            "-1".to_owned()
        } else {
            (i - 1).to_string()
        })
    });
    r.register_all(Family::Text, &["trim"], |c| {
        opt(c, 0).map(|a| a.trim().to_owned())
    });
}

/// `{{date::FORMAT::MS}}` / `{{time::FORMAT::MS}}`.
fn format_call(c: &Call<'_, '_>) -> Option<String> {
    let format = c.raw_arg(0);
    if format.is_empty() {
        return Some(String::new());
    }
    let ms = match opt(c, 1) {
        Some(s) if !s.is_empty() => {
            let n = js::number(s);
            (!n.is_nan() && n != 0.0).then_some(n)
        }
        _ => None,
    };
    let (ts, ms) = moment(c, ms)?;
    Some(date_time_format(format, ts, ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_format_replaces_tokens_in_order() {
        // 2026-11-21T15:07:00Z, a Saturday, day 325.
        let ts = Timestamp::utc(1_795_273_620);
        let ms = 1_795_273_620_000.0;
        assert_eq!(
            date_time_format("YYYY-MM-DD HH:mm:ss", ts, ms),
            "2026-11-21 15:07:00"
        );
        assert_eq!(
            date_time_format("dddd DDDD hh A", ts, ms),
            "Saturday 325 03 PM"
        );
        assert_eq!(date_time_format("X", ts, ms), "1795273620");
        assert_eq!(date_time_format(&"Y".repeat(301), ts, ms), "");
        assert_eq!(h_mm_ss(3_723_000.0), "1:02:03");
    }
}
