//! A small deterministic pseudo-random generator (SplitMix64).
//!
//! SplitMix64 (Steele, Lea and Flood, 2014): the state advances by the constant
//! `0x9E37_79B9_7F4A_7C15` and each output is the state passed through a 64-bit finaliser
//! (xor-shift 30, multiply, xor-shift 27, multiply, xor-shift 31). It uses only wrapping
//! integer arithmetic, so the same seed gives the same numbers on every platform.
//!
//! Seeds used by the macros:
//! - `{{pick}}`: `mix(context.seed, byte offset of the macro)`: independent of what else the
//!   text contains before it is run, so the same prompt gives the same choice.
//! - `{{random}}` and `{{roll}}`: one stream per expansion seeded with
//!   `mix(context.seed, context.nonce ^ STREAM_SALT)`; each call takes the next number, so
//!   the same context gives the same output and a new nonce gives new rolls.

/// Salt separating the `random`/`roll` stream from `pick` seeds.
pub(crate) const STREAM_SALT: u64 = 0x05EE_DCB5_C0DD_BA11_u64;

/// SplitMix64 generator.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting at `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        finalise(self.state)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift (bias below 2^-40 for n < 2^24).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

fn finalise(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Mixes two numbers into one seed.
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    finalise(a ^ finalise(b.wrapping_add(0x9E37_79B9_7F4A_7C15)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_reference_sequence() {
        // Reference values of SplitMix64 seeded with 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = SplitMix64::new(42);
        for n in 1..200u64 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.below(0), 0);
    }
}
