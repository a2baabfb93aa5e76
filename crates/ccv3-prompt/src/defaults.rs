//! The defaults of a turn, written once: [`crate::SessionOptions::default`] uses them, and
//! the CLI's flags and the bindings' requests fall back to them (issue 26: `ccv3 lore scan`,
//! `ccv3 prompt`, `scanLorebook`/`scan_lorebook` and `buildPrompt`/`build_prompt` decide
//! nothing of their own).
//!
//! The names of the flag and request values are given as text, as the CLI and the bindings
//! read them; the tests below check that each parses to the library's `Default`.

/// `{{user}}` and the name of unnamed user messages.
pub const USER_NAME: &str = "User";

/// `{{char}}` when neither the caller nor a card names the character.
pub const CHAR_NAME: &str = "Character";

/// The active greeting: 0, `first_mes`. A chat with a card always shows one greeting, the
/// first unless the user picked another, so `@@is_greeting 0` entries match a chat that did
/// not say (SPEC_V3 "`@@is_greeting`": the index starts from 0, 0 being `first_mes`; the
/// decorator is ignored only when the active greeting cannot be known, which callers ask
/// for with [`crate::SessionOptions::greeting`] `None`).
pub const GREETING: usize = 0;

/// The tokenizer of budgets and token counts (`o200k`, `cl100k` or `estimate`).
pub const TOKENIZER: &str = "o200k";

/// How character and global books are merged ([`ccv3_lore::Strategy::default`]).
pub const STRATEGY: &str = "character-first";

/// Whose macros the texts are written in ([`ccv3_cbs::Dialect::Auto`]: the card's
/// application).
pub const DIALECT: &str = "auto";

/// The generation type ([`ccv3_lore::Trigger::default`]).
pub const TRIGGER: &str = "normal";

#[cfg(test)]
mod tests {
    use super::*;

    /// The text defaults the CLI and the bindings read are the library's `Default`s.
    #[test]
    fn text_defaults_parse_to_the_library_defaults() {
        assert_eq!(
            ccv3_lore::Strategy::parse(STRATEGY),
            Some(ccv3_lore::Strategy::default())
        );
        assert_eq!(
            ccv3_lore::Trigger::parse(TRIGGER),
            Some(ccv3_lore::Trigger::default())
        );
        assert_eq!(
            DIALECT.parse::<ccv3_cbs::Dialect>(),
            Ok(ccv3_cbs::Dialect::Auto)
        );
        assert!(TOKENIZER.parse::<ccv3_tokens::TokenizerKind>().is_ok());
        let o = crate::SessionOptions::default();
        assert_eq!(o.user_name, USER_NAME);
        assert_eq!(o.greeting, Some(GREETING));
        assert_eq!(o.dialect, ccv3_cbs::Dialect::Auto);
    }
}
