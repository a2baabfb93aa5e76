//! The CCv3 spec set (`SPEC_V3.md`, "Curly Braced Syntaxes"), [`crate::Family::Spec`].
//!
//! | macro | result |
//! |---|---|
//! | `{{char}}`, `{{bot}}`, `<char>`, `<bot>` | the nickname, else the name |
//! | `{{user}}` | the user's name |
//! | `{{random:A,B,C}}`, `{{random::A::B}}` | one choice, from the per-expansion random stream |
//! | `{{pick:A,B,C}}`, `{{pick::A,B,C}}` | one choice, the same for the same seed and place |
//! | `{{roll:N}}`, `{{roll:dN}}`, `{{roll::XdY+Z}}` | a number in `1..=N` (dice sum for `XdY`) |
//! | `{{// A}}` | empty, in every mode; `A` is not even expanded (no side effects) |
//! | `{{hidden_key:A}}` | empty, but `A` in [`crate::Mode::LoreScan`] |
//! | `{{comment:A}}` | empty, but shown in [`crate::Mode::Display`] |
//! | `{{reverse:A}}` | `A` reversed (by Unicode scalar value) |
//!
//! Choices are split on commas, `\,` is a literal comma, and each choice is trimmed
//! (SillyTavern). `roll` accepts `N`, `dN`, `XdY`, `XdY+Z`, `XdY-Z` (`d` in any case,
//! `X <= 1000`); anything else stays text with a warning.
//!
//! ```
//! use ccv3_cbs::{expand, Context, Mode, Template, Variables};
//! let ctx = Context::new().with_char_name("Alice").with_nickname("Ali").with_user_name("Bob").with_seed(7);
//! assert_eq!(expand("{{char}} {{bot}} <bot> <char>", &ctx), "Ali Ali Ali Ali");
//! assert_eq!(expand("{{user}}", &ctx), "Bob");
//! assert!(["Hello", "Hi", "Hey"].contains(&expand("{{random:Hello,Hi,Hey}}", &ctx).as_str()));
//! assert_eq!(expand("{{pick::a,b,c}}", &ctx), expand("{{pick::a,b,c}}", &ctx));
//! let n: u32 = expand("{{roll:d6}}", &ctx).parse().unwrap();
//! assert!((1..=6).contains(&n));
//! assert_eq!(expand("a{{// note}}b", &ctx), "ab");
//! assert_eq!(expand("{{// {{setvar::x::1}}}}[{{getvar::x}}]", &ctx), "[]");
//! assert_eq!(expand("{{reverse:Hello}}", &ctx), "olleH");
//! let t = Template::parse("{{hidden_key:dragon}}{{comment:hi}}");
//! assert_eq!(t.expand(&ctx, &mut Variables::new(), Mode::Prompt).text, "");
//! assert_eq!(t.expand(&ctx, &mut Variables::new(), Mode::LoreScan).text, "dragon");
//! assert_eq!(
//!     t.expand(&ctx, &mut Variables::new(), Mode::Display).text,
//!     "<span class=\"cbs-comment\">hi</span>"
//! );
//! ```

use crate::expand::{fmt_num, Call, Mode};
use crate::registry::{Family, Registry};

use super::choices;

/// Adds the spec set.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::spec::register(&mut registry);
/// assert!(registry.contains("char"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Spec;
    r.register_all(f, &["char", "bot", "<char>", "<bot>"], |c| {
        Some(c.context().char_display_name().to_owned())
    });
    r.register_all(f, &["user"], |c| Some(c.context().user_name.clone()));
    r.register_all(f, &["random"], |c| {
        if c.args().is_empty() {
            return None;
        }
        let list = choices(c);
        let i = c.random_below(list.len() as u64) as usize;
        list.into_iter().nth(i)
    });
    r.register_all(f, &["pick"], |c| {
        if c.args().is_empty() {
            return None;
        }
        let list = choices(c);
        let mut rng = c.place_rng();
        let i = rng(list.len() as u64) as usize;
        list.into_iter().nth(i)
    });
    r.register_all(f, &["roll"], roll);
    r.register_all(f, &["//"], |_| Some(String::new()));
    r.register_all(f, &["hidden_key"], |c| {
        Some(if c.mode() == Mode::LoreScan {
            c.raw()
        } else {
            String::new()
        })
    });
    r.register_all(f, &["comment"], |c| {
        Some(if c.mode() == Mode::Display {
            (c.context().comment_renderer)(c.raw().trim())
        } else {
            String::new()
        })
    });
    r.register_all(f, &["reverse"], |c| Some(c.raw().chars().rev().collect()));
}

/// Dice parsed from `N`, `dN`, `XdY`, `XdY+Z`, `XdY-Z`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Dice {
    pub count: u64,
    pub sides: u64,
    pub modifier: i64,
}

fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses dice notation; `None` if malformed, no sides, or more than 1000 dice.
pub(crate) fn parse_dice(s: &str) -> Option<Dice> {
    let s = s.trim();
    let Some(d) = s.find(['d', 'D']) else {
        let sides = digits(s)?;
        return (sides > 0).then_some(Dice {
            count: 1,
            sides,
            modifier: 0,
        });
    };
    let count_s = s.get(..d)?.trim();
    let rest = s.get(d + 1..)?.trim();
    let count = if count_s.is_empty() {
        1
    } else {
        digits(count_s)?
    };
    let (sides_s, modifier) = match rest.find(['+', '-']) {
        Some(p) => {
            let m = digits(rest.get(p + 1..)?.trim())?;
            let m = i64::try_from(m).ok()?;
            let m = if rest.get(p..p + 1) == Some("-") {
                -m
            } else {
                m
            };
            (rest.get(..p)?.trim(), m)
        }
        None => (rest, 0),
    };
    let sides = digits(sides_s)?;
    if sides == 0 || count == 0 || count > 1000 {
        return None;
    }
    Some(Dice {
        count,
        sides,
        modifier,
    })
}

pub(crate) fn roll(c: &mut Call<'_, '_>) -> Option<String> {
    if c.args().is_empty() {
        return None;
    }
    let raw = c.raw();
    let Some(dice) = parse_dice(&raw) else {
        c.warn(format!("cannot read dice {:?}", raw.trim()));
        return None;
    };
    let mut total: i128 = i128::from(dice.modifier);
    for _ in 0..dice.count {
        total += i128::from(c.random_below(dice.sides)) + 1;
    }
    // i128 -> f64 keeps integers exact up to 2^53; larger sums print in float form.
    if let Ok(small) = i64::try_from(total) {
        return Some(small.to_string());
    }
    Some(fmt_num(total as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_cbs_roll_d_prefix_any_case_parses() {
        let six = Some(Dice {
            count: 1,
            sides: 6,
            modifier: 0,
        });
        assert_eq!(parse_dice("6"), six);
        assert_eq!(parse_dice("d6"), six);
        assert_eq!(parse_dice("D6"), six);
        assert_eq!(
            parse_dice("2d6+3"),
            Some(Dice {
                count: 2,
                sides: 6,
                modifier: 3
            })
        );
        assert_eq!(parse_dice("d0"), None);
        assert_eq!(parse_dice("1001d6"), None);
        assert_eq!(parse_dice("abc"), None);
        assert_eq!(parse_dice("99999999999999999999999"), None);
    }
}
