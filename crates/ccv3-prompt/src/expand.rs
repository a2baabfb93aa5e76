//! Macro expansion seen from prompt assembly: a small trait, so any macro engine can plug in.
//!
//! The assembler calls [`Expander::expand`] once per card text it places, in prompt order (so
//! variables set by an earlier text are visible to later ones), with an [`ExpandContext`] that names
//! the slot and, for `system_prompt` and `post_history_instructions`, the text `{{original}}`
//! stands for. Chat history messages are not expanded: applications expand a message when it is
//! sent, so the chat file holds the final text.
//!
//! [`SimpleExpander`] replaces only `{{char}}`, `{{user}}` and `{{original}}` (ASCII
//! case-insensitive). The `adapters` module plugs in the full CBS engine.

use crate::template::Slot;

/// What the expander knows about the text being expanded.
#[derive(Debug, Clone, Copy)]
pub struct ExpandContext<'a> {
    /// `{{char}}`: the card's nickname, else its name (or the name given in the options).
    pub char_name: &'a str,
    /// `{{user}}`.
    pub user_name: &'a str,
    /// `{{original}}`: the application's own prompt this card text replaces; `None` outside
    /// `system_prompt` and `post_history_instructions` (then `{{original}}` expands to nothing).
    pub original: Option<&'a str>,
    /// The slot the text goes into.
    pub slot: Slot,
}

/// Expands macros in one text.
pub trait Expander {
    /// Returns `text` with its macros expanded. Must not panic on any input.
    fn expand(&mut self, text: &str, ctx: &ExpandContext<'_>) -> String;
}

/// Replaces `{{char}}`, `{{user}}` and `{{original}}` (ASCII case-insensitive); leaves every other
/// `{{...}}` as it is.
///
/// ```
/// use ccv3_prompt::{ExpandContext, Expander, SimpleExpander, Slot};
/// let ctx = ExpandContext { char_name: "Aqua", user_name: "Kazuma", original: Some("Be kind."), slot: Slot::System };
/// let out = SimpleExpander.expand("{{original}} {{Char}} meets {{user}}. {{other}}", &ctx);
/// assert_eq!(out, "Be kind. Aqua meets Kazuma. {{other}}");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleExpander;

impl Expander for SimpleExpander {
    fn expand(&mut self, text: &str, ctx: &ExpandContext<'_>) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else {
                out.push_str(&rest[start..]);
                return out;
            };
            let name = &after[..end];
            let value = if name.eq_ignore_ascii_case("char") {
                Some(ctx.char_name)
            } else if name.eq_ignore_ascii_case("user") {
                Some(ctx.user_name)
            } else if name.eq_ignore_ascii_case("original") {
                Some(ctx.original.unwrap_or(""))
            } else {
                None
            };
            match value {
                Some(v) => {
                    out.push_str(v);
                    rest = &after[end + 2..];
                }
                None => {
                    out.push_str("{{");
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(original: Option<&str>) -> ExpandContext<'_> {
        ExpandContext {
            char_name: "C",
            user_name: "U",
            original,
            slot: Slot::System,
        }
    }

    #[test]
    fn simple_expander_replaces_char_user_original_case_insensitively() {
        let out = SimpleExpander.expand("{{CHAR}}/{{User}}/{{original}}", &ctx(Some("O")));
        assert_eq!(out, "C/U/O");
    }

    #[test]
    fn simple_expander_original_outside_ui_prompts_is_empty() {
        assert_eq!(SimpleExpander.expand("a{{original}}b", &ctx(None)), "ab");
    }

    #[test]
    fn simple_expander_unknown_and_unclosed_stay_text() {
        let out = SimpleExpander.expand("{{x}} {{{{char}} {{", &ctx(None));
        assert_eq!(out, "{{x}} {{C {{");
    }
}
