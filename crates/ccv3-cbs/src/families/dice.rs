//! Dice, [`crate::Family::Dice`].
//!
//! `{{dice::XdY}}` is another name for the spec's `roll`, which already reads full dice
//! notation: `{{roll::2d6}}` is the sum of two six-sided dice, `{{roll::1d20+5}}` adds 5.
//!
//! ```
//! use ccv3_cbs::{expand, Context};
//! let ctx = Context::new().with_seed(1);
//! let n: u32 = expand("{{roll::2d6}}", &ctx).parse().unwrap();
//! assert!((2..=12).contains(&n));
//! let n: u32 = expand("{{dice::3D4+1}}", &ctx).parse().unwrap();
//! assert!((4..=13).contains(&n));
//! assert_eq!(expand("{{roll::2x6}}", &ctx), "{{roll::2x6}}");
//! ```

use crate::registry::{Family, Registry};

/// Adds `dice`.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::dice::register(&mut registry);
/// assert!(registry.contains("dice"));
/// ```
pub fn register(r: &mut Registry) {
    r.register_all(Family::Dice, &["dice"], super::spec::roll);
}
