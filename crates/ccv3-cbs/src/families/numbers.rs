//! RisuAI's number functions, [`crate::Family::Numbers`] (its `cbs.ts`, dialect `risu`).
//!
//! Arguments are read with JavaScript's `Number()` (empty is 0, junk is `NaN`, `0x1F` is 31)
//! and results print as JavaScript prints numbers (`3`, `0.5`, `NaN`, `Infinity`, `1e+21`).
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{round::N}}`, `{{floor::N}}`, `{{ceil::N}}`, `{{abs::N}}` | `Math.round` (halves up) / `floor` / `ceil` / `abs` |
//! | `{{remaind::A::B}}` | `A % B` (the sign of `A`) |
//! | `{{pow::A::B}}` | `A` to the power `B` |
//! | `{{fixnum::N::D}}` (`fixnumber`) | `N` with `D` decimals (`toFixed`: halves away from zero); `D` outside 0..=100 stays text |
//! | `{{randint::MIN::MAX}}` | a whole number in `MIN..=MAX` from the random stream; `NaN` if either is not a number |
//! | `{{rollp::XdY}}` (`rollpick`) | dice like `roll`, but the same for the same chat and seed (RisuAI seeds it by chat) |
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables};
//! let risu = |s: &str| Template::parse(s).expand_with(Registry::dialect_ref(Dialect::Risu),
//!     &Limits::default(), &Context::new(), &mut Variables::new(), Mode::Prompt).text;
//! assert_eq!(risu("{{round::3.7}} {{floor::3.9}} {{ceil::3.1}} {{abs::-5}}"), "4 3 4 5");
//! assert_eq!(risu("{{remaind::10::3}} {{pow::2::3}} {{fixnum::3.14159::2}}"), "1 8 3.14");
//! assert_eq!(risu("{{randint::a::3}} {{pow::2::0.5}}"), "NaN 1.4142135623730951");
//! assert_eq!(risu("{{fixnumber::2.5::0}}"), "3");
//! let n: u32 = risu("{{rollp::2d6}}").parse().unwrap();
//! assert!((2..=12).contains(&n));
//! assert_eq!(risu("{{rollpick::1d1}}"), "1");
//! ```

use super::js;
use super::strings::or_undefined;
use crate::expand::{fmt_num, Call};
use crate::registry::{Family, Registry};

fn unary(c: &Call<'_, '_>, f: fn(f64) -> f64) -> Option<String> {
    Some(fmt_num(f(js::number(or_undefined(c, 0)))))
}

fn binary(c: &Call<'_, '_>, f: fn(f64, f64) -> f64) -> Option<String> {
    let a = js::number(or_undefined(c, 0));
    let b = js::number(or_undefined(c, 1));
    Some(fmt_num(f(a, b)))
}

/// RisuAI's dice: `XdY` (`X` default 1, `Y` default 6) or `Y`; `NaN` when not numbers or
/// below 1. Returns (count, sides).
pub(crate) fn risu_dice(notation: &str) -> Option<(f64, f64)> {
    let parts: Vec<&str> = notation.split('d').collect();
    let (count, sides) = match parts.as_slice() {
        [count, sides] => (
            if count.is_empty() {
                1.0
            } else {
                js::number(count)
            },
            if sides.is_empty() {
                6.0
            } else {
                js::number(sides)
            },
        ),
        [sides] => (1.0, js::number(sides)),
        _ => (1.0, 6.0),
    };
    if count.is_nan() || sides.is_nan() || count < 1.0 || sides < 1.0 {
        return None;
    }
    Some((count, sides))
}

/// Rolls `count` dice of `sides` with `draw(n)` giving `0..n`; at most 10,000 dice are rolled
/// (beyond that the macro stays text with a warning: RisuAI would loop for each).
pub(crate) fn roll_with(
    c: &mut Call<'_, '_>,
    count: f64,
    sides: f64,
    mut draw: impl FnMut(&mut Call<'_, '_>, u64) -> u64,
) -> Option<String> {
    if count > 10_000.0 {
        c.warn(format!("{count} dice are more than 10000"));
        return None;
    }
    if !c.spend(count as u64) {
        return None;
    }
    // Fractional sides: JavaScript floors `random * sides`, so a die shows 1..=ceil(sides).
    let faces = sides.ceil().min(u64::MAX as f64) as u64;
    let mut total = 0f64;
    for _ in 0..count.ceil() as u64 {
        total += draw(c, faces) as f64 + 1.0;
    }
    Some(fmt_num(total))
}

/// Adds RisuAI's number functions.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::numbers::register(&mut registry);
/// assert!(registry.contains("round"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Numbers;
    r.register_all(f, &["round"], |c| unary(c, js::round));
    r.register_all(f, &["floor"], |c| unary(c, f64::floor));
    r.register_all(f, &["ceil"], |c| unary(c, f64::ceil));
    r.register_all(f, &["abs"], |c| unary(c, f64::abs));
    r.register_all(f, &["remaind"], |c| binary(c, |a, b| a % b));
    r.register_all(f, &["pow"], |c| binary(c, f64::powf));
    r.register_all(f, &["fixnum", "fixnumber"], |c| {
        let n = js::number(or_undefined(c, 0));
        js::to_fixed(n, js::number(or_undefined(c, 1)))
    });
    r.register_all(f, &["randint"], |c| {
        let min = js::number(or_undefined(c, 0));
        let max = js::number(or_undefined(c, 1));
        if min.is_nan() || max.is_nan() {
            return Some("NaN".to_owned());
        }
        // floor(random * (max - min + 1)) + min, with random from the expansion's stream.
        let unit = (c.random_u64() >> 11) as f64 / (1u64 << 53) as f64;
        Some(fmt_num((unit * (max - min + 1.0)).floor() + min))
    });
    r.register_all(f, &["rollp", "rollpick"], |c| {
        if c.raw_args().is_empty() {
            return Some("1".to_owned());
        }
        let Some((count, sides)) = risu_dice(c.raw_arg(0)) else {
            return Some("NaN".to_owned());
        };
        let mut rng = c.place_rng();
        roll_with(c, count, sides, move |_, n| rng(n))
    });
}
