//! Legacy markers, [`crate::Family::Legacy`].
//!
//! `<USER>` (any case) is the user's name, as in SillyTavern's pre-processing; `<CHAR>` and
//! `<BOT>` belong to the spec set ([`crate::Family::Spec`]) and give the character's name;
//! `<GROUP>` and `<CHARIFNOTGROUP>` are SillyTavern's ([`crate::families::sillytavern`]).
//! Markers are recognised by the parser only in exactly these forms (`<user>`, no spaces).
//!
//! ```
//! use ccv3_cbs::{expand, Context};
//! let ctx = Context::new().with_char_name("Alice").with_user_name("Bob");
//! assert_eq!(expand("<USER> meets <BOT> and <CHAR>; <user >", &ctx), "Bob meets Alice and Alice; <user >");
//! ```

use crate::registry::{Family, Registry};

/// Adds `<user>`.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::legacy::register(&mut registry);
/// assert!(registry.contains("<user>"));
/// ```
pub fn register(r: &mut Registry) {
    r.register_all(Family::Legacy, &["<user>"], |c| {
        Some(c.context().user_name.clone())
    });
}
