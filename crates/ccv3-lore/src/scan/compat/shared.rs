//! What the passes of `Compat::SillyTavern` share: the bounds of its loop, its `scan_state`,
//! and the seeded roll that stands in for `Math.random`.

/// The most scan steps (SillyTavern loops until nothing is left; the levels, recursion and min
/// activations all end, but a bound keeps any input finite).
pub(super) const MAX_STEPS: usize = 1000;

/// SillyTavern's deepest scan depth.
pub(super) const MAX_SCAN_DEPTH: usize = 1000;

/// `scan_state` of SillyTavern's loop.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Initial,
    Recursion,
    MinActivations,
}

/// A roll in `[0, 1)` from the seed, an entry and the chat length.
pub(super) fn roll(seed: u64, id: u64, len: usize, salt: u64) -> f64 {
    let mut x = seed ^ id.rotate_left(17) ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}
