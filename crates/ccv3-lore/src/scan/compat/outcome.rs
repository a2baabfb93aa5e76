//! The scan's outcome as a [`ScanResult`]: activations in SillyTavern's prompt order (order
//! lowest first, equal orders in reverse activation order), then the rejected entries.

use super::entry::StEntry;
use super::steps::Outcome;
use crate::compile::{CEntry, CompiledBooks};
use crate::scan::{
    Activation, ActivationReason, ExplainSink, RejectReason, Rejected, ScanOptions, ScanResult,
};
use crate::state::ScanState;
use ccv3_tokens::Tokenizer;

/// The [`ScanResult`] of the `activated` entries and the rest; `sink` hears of each.
pub(super) fn result<'a>(
    cb: &CompiledBooks<'a>,
    entries: &[StEntry<'a>],
    mut done: Outcome,
    state: ScanState,
    opts: &ScanOptions,
    tok: &dyn Tokenizer,
    sink: &mut dyn ExplainSink,
) -> ScanResult<'a> {
    let n = entries.len();
    // Prompt order: by position (ccv3's ranks), deeper first; in one place, order lowest first
    // and equal orders in reverse activation order (SillyTavern's sort, then unshift).
    let mut keyed: Vec<(u8, u64, u64, usize, usize)> = done
        .activated
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let e = &entries[i];
            (
                e.position.prompt_rank(),
                u64::MAX - e.depth.unwrap_or(0),
                crate::compile::total_key(e.order),
                usize::MAX - k,
                i,
            )
        })
        .collect();
    keyed.sort_unstable();
    let mut tokens = 0usize;
    let mut out: Vec<Activation<'a>> = Vec::with_capacity(keyed.len());
    for k in &keyed {
        let i = k.4;
        let e: &CEntry<'a> = &cb.entries[entries[i].rank as usize];
        let t = tok.count(entries[i].content);
        tokens += t;
        let se = &entries[i];
        let a = Activation {
            entry: e.at,
            name: e.display_name(),
            content: se.content,
            position: se.position.clone(),
            position_default: e.position_default,
            depth: se.depth,
            role: se.role,
            order: se.order,
            tokens: t,
            reason: done.why[i].clone().unwrap_or(ActivationReason::Constant),
            pass: done.pass_of[i],
            decorators: e.dec.shared(),
        };
        sink.on_activated(&a);
        out.push(a);
    }
    let mut rejected: Vec<Rejected<'a>> = Vec::new();
    let mut idx: Vec<usize> = (0..n).filter(|i| !done.is_active[*i]).collect();
    idx.sort_by_key(|&i| {
        let at = cb.entries[entries[i].rank as usize].at;
        (at.book, at.index)
    });
    for i in idx {
        let reason = done.reasons.remove(&i).unwrap_or(RejectReason::NoMatch);
        if !opts.explain_all
            && matches!(
                reason,
                RejectReason::NoMatch | RejectReason::NoKeys | RejectReason::Disabled
            )
        {
            continue;
        }
        Rejected::record(
            &cb.entries[entries[i].rank as usize],
            reason,
            sink,
            &mut rejected,
        );
    }
    ScanResult {
        activated: out,
        rejected,
        unchecked: 0,
        tokens,
        state,
        disabled_ui_prompts: Vec::new(),
        diagnostics: Vec::new(),
    }
}
