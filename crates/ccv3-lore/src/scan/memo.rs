//! What the regex keys of one scan found, kept apart from the scan (see [`RegexMemo`]).

use crate::hash::FxMap;
use ccv3::Diagnostic;

/// Where regex keys matched (each is run once per window and once per new recursion text),
/// and the one diagnostic their runs can give. Kept apart from the scan so that entries can be
/// checked on two threads, each with its own memo.
#[derive(Default)]
pub(super) struct RegexMemo {
    /// A regex key's first match in a window: `(regex, depth)` to a message index.
    pub(super) chat: FxMap<(u32, u32), u32>,
    /// A regex key's search of the recursion text: how much of it was checked, and the hit.
    pub(super) rec: FxMap<u32, (usize, u32)>,
    pub(super) capped_warned: bool,
    pub(super) diags: Vec<Diagnostic>,
    /// Steps left for the rest of the scan ([`super::ScanOptions::regex_scan_steps`]).
    pub(super) steps: u64,
    /// How many searches ran out of steps.
    pub(super) out_of_steps: usize,
}

impl RegexMemo {
    /// A memo with `steps` for the whole scan.
    pub(super) fn with_steps(steps: u64) -> Self {
        RegexMemo {
            steps,
            ..Default::default()
        }
    }
}
