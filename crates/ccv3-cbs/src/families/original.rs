//! V2's `{{original}}`, [`crate::Family::Original`].
//!
//! `{{original}}` is the application's original prompt text ([`crate::Context::original`]),
//! empty if none. As in SillyTavern it expands only once per expansion: later occurrences are
//! empty, so an override that quotes the original twice does not duplicate it.
//!
//! ```
//! use ccv3_cbs::{expand, Context};
//! let ctx = Context::new().with_original("Be helpful.");
//! assert_eq!(expand("{{original}} Stay in character. {{original}}", &ctx), "Be helpful. Stay in character. ");
//! assert_eq!(expand("[{{original}}]", &Context::new()), "[]");
//! ```

use crate::registry::{Family, Registry};

/// Adds `original`.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::original::register(&mut registry);
/// assert!(registry.contains("original"));
/// ```
pub fn register(r: &mut Registry) {
    r.register_all(Family::Original, &["original"], |c| {
        Some(if c.first_original() {
            c.context().original.clone()
        } else {
            String::new()
        })
    });
}
