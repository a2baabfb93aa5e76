//! The built-in macro families. Each module documents its macros (with an example that is
//! run as a doc-test) and has a `register` function that adds them to a [`crate::Registry`].

pub mod blocks;
pub mod character;
pub mod chat;
pub mod collections;
pub mod dice;
mod js;
pub mod legacy;
pub mod markup;
pub mod math;
mod moment;
mod moment_parse;
pub mod numbers;
pub mod original;
pub mod risu;
pub mod sillytavern;
pub mod spec;
pub mod st_examples;
pub mod st_syntax;
pub mod strings;
pub mod text;
pub mod time;
pub mod variables;

use crate::expand::Call;
use crate::parse::Style;

/// The choices of `random`/`pick`: several `::` arguments are the choices; one argument is
/// split on `::` if it holds one (`{{random:a::b}}`, SillyTavern's `readSingleArgsRandomList`),
/// else on commas not preceded by a backslash (`\,` is a literal comma). Choices are trimmed.
pub(crate) fn choices(call: &Call<'_, '_>) -> Vec<String> {
    if call.style() == Style::DoubleColon && call.args().len() > 1 {
        return call
            .args()
            .iter()
            .map(|a| a.replace("\\,", ",").trim().to_owned())
            .collect();
    }
    let raw = call.raw();
    if raw.contains("::") {
        return raw.split("::").map(|a| a.trim().to_owned()).collect();
    }
    split_commas(&raw)
}

/// Splits on `,` except `\,`, which becomes `,`; trims each piece.
pub(crate) fn split_commas(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => {
                cur.push(',');
                chars.next();
            }
            ',' => out.push(std::mem::take(&mut cur).trim().to_owned()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_owned());
    out
}

/// `"1"` or `"0"`.
pub(crate) fn bool_str(b: bool) -> String {
    if b { "1" } else { "0" }.to_owned()
}

#[cfg(test)]
mod tests {
    use super::split_commas;

    #[test]
    fn spec_cbs_escaped_comma_splits_only_unescaped() {
        assert_eq!(split_commas(r"a\,b,c"), vec!["a,b", "c"]);
        assert_eq!(split_commas(r"a\b"), vec![r"a\b"]);
        assert_eq!(split_commas(""), vec![""]);
    }
}
