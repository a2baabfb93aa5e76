//! Text macros, [`crate::Family::Text`].
//!
//! | macro | result |
//! |---|---|
//! | `{{newline}}`, `{{br}}` | a newline |
//! | `{{newline::N}}` | `N` newlines (SillyTavern), within [`crate::Limits::max_output`] |
//! | `{{space}}`, `{{space::N}}` | one space, or `N` spaces (SillyTavern), within [`crate::Limits::max_output`] |
//! | `{{trim}}` | removes the newlines just before and just after it (SillyTavern) |
//! | `{{trim::A}}` | `A` without leading and trailing whitespace (RisuAI); in the `sillytavern` dialect `A` is dropped and the newlines around are removed, as for `{{trim}}` |
//! | `{{noop}}`, `{{blank}}`, `{{none}}` | empty |
//!
//! ```
//! use ccv3_cbs::{expand, Context};
//! let ctx = Context::new();
//! assert_eq!(expand("a{{newline}}b{{br}}c", &ctx), "a\nb\nc");
//! assert_eq!(expand("a{{space::3}}b{{space}}c", &ctx), "a   b c");
//! // Past the output bound (1 MiB by default) it stays as written, with a warning.
//! assert_eq!(expand("{{space::2000000}}", &ctx), "{{space::2000000}}");
//! assert_eq!(expand("a\n\n{{trim}}\n\nb", &ctx), "ab");
//! assert_eq!(expand("[{{trim::  x  }}]", &ctx), "[x]");
//! assert_eq!(expand("a{{noop}}{{blank}}{{none}}b", &ctx), "ab");
//! ```

use crate::parse::Style;
use crate::registry::{Family, Registry};

/// Adds the text macros.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::text::register(&mut registry);
/// assert!(registry.contains("br"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Text;
    r.register_all(f, &["br"], |_| Some("\n".to_owned()));
    r.register_all(f, &["newline"], |c| {
        if c.args().is_empty() {
            return Some("\n".to_owned());
        }
        let n = usize::try_from(super::sillytavern::integer(&c.raw())?).ok()?;
        if c.too_big(n) {
            return None;
        }
        Some("\n".repeat(n))
    });
    r.register_all(f, &["space"], |c| {
        if c.args().is_empty() {
            return Some(" ".to_owned());
        }
        let n = usize::try_from(super::sillytavern::integer(&c.raw())?).ok()?;
        if c.too_big(n) {
            return None;
        }
        Some(" ".repeat(n))
    });
    r.register_all(f, &["trim"], |c| {
        if c.style() == Style::Bare {
            c.trim_surrounding_newlines();
            return Some(String::new());
        }
        Some(c.raw().trim().to_owned())
    });
    r.register_all(f, &["noop", "blank", "none"], |_| Some(String::new()));
}
