//! Variables, [`crate::Family::Variables`], kept in [`crate::Variables`] between expansions.
//!
//! | macro | result |
//! |---|---|
//! | `{{setvar::name::value}}` | sets a chat variable; empty |
//! | `{{getvar::name}}` | the value, or empty if unset |
//! | `{{addvar::name::value}}` | adds numbers, else appends text; empty |
//! | `{{incvar::name}}`, `{{decvar::name}}` | adds 1 / -1; the new value |
//! | `{{setdefaultvar::name::value}}` | sets only if unset or empty; empty |
//! | `{{setglobalvar}}`, `{{getglobalvar}}`, `{{addglobalvar}}`, `{{incglobalvar}}`, `{{decglobalvar}}`, `{{setdefaultglobalvar}}` | the same on global variables |
//! | `{{settempvar::name::value}}`, `{{tempvar::name}}` (`gettempvar`) | variables living for one expansion |
//!
//! The value is everything after the name, so it may contain `::`. With the single-colon
//! style, `{{setvar:name:value}}` works too. Adding follows SillyTavern: if both the current
//! value (unset counts as 0) and the increment read as numbers they are added, otherwise the
//! increment is appended as text. Writes are bounded by [`crate::Limits::max_variables`] and
//! [`crate::Limits::max_variable_len`].
//!
//! ```
//! use ccv3_cbs::{Context, Mode, Template, Variables};
//! let mut vars = Variables::new();
//! let t = Template::parse(
//!     "{{setvar::hp::10}}{{addvar::hp::5}}{{getvar::hp}} {{incvar::hp}} {{decvar::n}} \
//!      {{setvar::s::a::b}}{{addvar::s::c}}{{getvar::s}} [{{getvar::missing}}] \
//!      {{setdefaultvar::hp::0}}{{getvar::hp}} {{setglobalvar::g::x}}{{getglobalvar::g}} \
//!      {{incglobalvar::k}} {{settempvar::t::1}}{{tempvar::t}}",
//! );
//! let out = t.expand(&Context::new(), &mut vars, Mode::Prompt);
//! assert_eq!(out.text, "15 16 -1 a::bc [] 16 x 1 1");
//! assert_eq!(vars.local["hp"], "16");
//! assert_eq!(vars.global["g"], "x");
//! assert!(!vars.local.contains_key("t"));
//! let t = Template::parse(
//!     "{{setdefaultglobalvar::n::5}}{{addglobalvar::n::2}}{{decglobalvar::n}} \
//!      {{settempvar::k::v}}{{gettempvar::k}}",
//! );
//! assert_eq!(t.expand(&Context::new(), &mut vars, Mode::Prompt).text, "6 v");
//! ```

use super::sillytavern::st_value;
use crate::expand::{fmt_num, num, Call};
use crate::parse::Style;
use crate::registry::{Family, Registry};
use crate::vars::Scope;

/// Name and value of a setter: the first argument and the rest joined with the separator;
/// in the whitespace style, the first word and the rest.
fn name_value(c: &Call<'_, '_>) -> (String, String) {
    if c.style() == Style::Space {
        let raw = c.raw();
        let raw = raw.trim_start();
        return match raw.split_once(char::is_whitespace) {
            Some((n, v)) => (n.to_owned(), v.to_owned()),
            None => (raw.to_owned(), String::new()),
        };
    }
    let name = c.arg(0).trim().to_owned();
    let value = c
        .args()
        .get(1..)
        .unwrap_or_default()
        .join(if c.style() == Style::Colon { ":" } else { "::" });
    (name, value)
}

/// SillyTavern's add: a JSON array gets the value appended, numbers add, anything else
/// appends as text.
pub(crate) fn add(current: Option<&str>, inc: &str) -> String {
    add_to(current, inc, false)
}

/// [`add`]; `counter`: the increment is the number 1 or -1 (`incvar`, `decvar`), which a JSON
/// array gets as a number.
fn add_to(current: Option<&str>, inc: &str, counter: bool) -> String {
    if let Some(Ok(serde_json::Value::Array(mut items))) = current
        .filter(|c| c.trim_start().starts_with('['))
        .map(serde_json::from_str::<serde_json::Value>)
    {
        let item = if counter {
            let n = num(inc);
            if n.fract() == 0.0 && n.abs() < 9e15 {
                serde_json::json!(n as i64)
            } else {
                serde_json::json!(n)
            }
        } else {
            serde_json::Value::String(inc.to_owned())
        };
        items.push(item);
        return serde_json::Value::Array(items).to_string();
    }
    let cur = current.filter(|c| !c.is_empty()).unwrap_or("0");
    let (a, b) = (num(cur), num(inc));
    if a.is_nan() || b.is_nan() {
        format!("{cur}{inc}")
    } else {
        fmt_num(a + b)
    }
}

fn register_scope(r: &mut Registry, scope: Scope, infix: &str) {
    let f = Family::Variables;
    let n = |verb: &str| format!("{verb}{infix}var");
    r.register_all(f, &[&n("set")], move |c| {
        let (name, value) = name_value(c);
        c.set_var(scope, &name, &value);
        Some(String::new())
    });
    r.register_all(f, &[&n("get")], move |c| {
        let name = c.raw();
        Some(st_value(c.var(scope, name.trim()).unwrap_or_default()))
    });
    r.register_all(f, &[&n("add")], move |c| {
        let (name, value) = name_value(c);
        let new = add(c.var(scope, &name), &value);
        c.set_var(scope, &name, &new);
        Some(String::new())
    });
    for (verb, delta) in [("inc", "1"), ("dec", "-1")] {
        r.register_all(f, &[&n(verb)], move |c| {
            let name = c.raw().trim().to_owned();
            let new = add_to(c.var(scope, &name), delta, true);
            c.set_var(scope, &name, &new);
            Some(st_value(c.var(scope, &name).unwrap_or_default()))
        });
    }
    r.register_all(f, &[&n("setdefault")], move |c| {
        let (name, value) = name_value(c);
        if c.var(scope, &name).is_none_or(str::is_empty) {
            c.set_var(scope, &name, &value);
        }
        Some(String::new())
    });
}

/// Adds the variable macros.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::variables::register(&mut registry);
/// assert!(registry.contains("settempvar"));
/// ```
pub fn register(r: &mut Registry) {
    register_scope(r, Scope::Local, "");
    register_scope(r, Scope::Global, "global");
    let f = Family::Variables;
    r.register_all(f, &["settempvar"], |c| {
        let (name, value) = name_value(c);
        c.set_temp_var(&name, &value);
        Some(String::new())
    });
    r.register_all(f, &["tempvar", "gettempvar"], |c| {
        let name = c.raw();
        Some(c.temp_var(name.trim()).unwrap_or_default().to_owned())
    });
}

#[cfg(test)]
mod tests {
    use super::add;

    #[test]
    fn addvar_adds_numbers_else_appends() {
        assert_eq!(add(Some("1.5"), "2"), "3.5");
        assert_eq!(add(None, "2"), "2");
        assert_eq!(add(Some("abc"), "2"), "abc2");
        assert_eq!(add(Some("1"), "x"), "1x");
    }
}
