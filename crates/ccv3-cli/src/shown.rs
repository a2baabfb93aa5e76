//! Card text shown to people on a terminal: control characters escaped, never sent as they are.
//!
//! A card is a stranger's file: its name or tags may hold ESC sequences (colours, cursor moves,
//! OSC 52 clipboard writes), BEL or line breaks that would forge output lines. Every control
//! character (C0, DEL, C1) is written as an escape instead: `\x1b`, `\x07`, `\n`, `\u{9b}`.
//! `--json` output is unaffected (JSON escapes control characters itself). Sizes of limits are
//! shown in bytes and binary units ([`shown_size`]).

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character escaped (see the module docs).
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A limit for people: `67108864 bytes (64 MiB)`.
pub fn shown_size(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{n} bytes ({} {unit})", n >> shift);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::shown;

    /// Issue 12 "Output for people": ESC, OSC 52 and BEL are shown escaped.
    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(shown("plain"), "plain");
        assert_eq!(
            shown("A\x1b]52;c;SGk=\x07B\u{9b}2J\nC"),
            "A\\x1b]52;c;SGk=\\x07B\\u{9b}2J\\nC"
        );
        assert_eq!(shown("tab\there\x7f"), "tab\\there\\x7f");
    }
}
