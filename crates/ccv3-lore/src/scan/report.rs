//! The result (step 6 of the scan order): the next state, activations in prompt order, the
//! rejections with their reasons.

use super::context::{Act, Hit, Scan};
use super::{Activation, ActivationReason, ExplainSink, ScanResult};
use crate::compile::{total_key, CEntry, DepthSpec};
use crate::position::Position;
use ccv3::decorator::DecoratorRole;
use std::sync::Arc;

impl<'s, 'a> Scan<'s, 'a> {
    /// Ends the scan: records the next state, puts the activations in prompt order and gives
    /// them, then the rejections, to `sink`.
    pub(super) fn finish(
        mut self,
        activated: Vec<Act>,
        tokens: usize,
        tok: &dyn ccv3_tokens::Tokenizer,
        sink: &mut dyn ExplainSink,
    ) -> ScanResult<'a> {
        // State first.
        self.record_state(&activated);
        let disabled = self.disabled_ui_prompts(&activated);
        let activated = self.in_prompt_order(&activated);
        for a in &activated {
            sink.on_activated(a);
        }
        let (rejected, unchecked) = self.rejections(tok, sink);
        if self.memo.out_of_steps > 0 {
            self.memo.diags.push(ccv3::Diagnostic::warning(
                "lore-regex-budget",
                "",
                format!(
                    "{} regex key searches ran out of steps (at most {} each, {} per scan) and did not match",
                    self.memo.out_of_steps, self.opts.regex_key_steps, self.opts.regex_scan_steps
                ),
            ));
        }
        ScanResult {
            activated,
            rejected,
            unchecked,
            tokens,
            state: self.state,
            disabled_ui_prompts: disabled,
            diagnostics: self.memo.diags,
        }
    }

    /// The `@@disable_ui_prompt` values of the activated entries, each once, in activation
    /// order.
    fn disabled_ui_prompts(&self, activated: &[Act]) -> Vec<String> {
        let mut disabled: Vec<String> = Vec::new();
        for &(rank, ..) in activated {
            if let Some(p) = &self.cb.entries[rank as usize].dec.disable_ui_prompt {
                if !disabled.contains(p) {
                    disabled.push(p.clone());
                }
            }
        }
        disabled
    }

    /// An entry's depth in the chat, when it goes at a depth.
    fn depth_of(&self, e: &CEntry<'a>) -> Option<u64> {
        match e.depth {
            DepthSpec::None => None,
            DepthSpec::Fixed(d) => Some(d),
            DepthSpec::Reverse(r) => Some((self.len as i64).saturating_sub(r).max(0) as u64),
        }
    }

    /// The activations in prompt order: by position, deeper first, then `insertion_order`
    /// lowest first, then rank.
    fn in_prompt_order(&self, activated: &[Act]) -> Vec<Activation<'a>> {
        let cb = self.cb;
        let depth_of = |e: &CEntry<'a>| self.depth_of(e);
        // Prompt order: sort small keys, then build each activation once, in place.
        let mut keys: Vec<(u8, u64, u64, u32, usize)> = activated
            .iter()
            .enumerate()
            .map(|(i, &(rank, ..))| {
                let e = &cb.entries[rank as usize];
                (
                    e.position.prompt_rank(),
                    u64::MAX - depth_of(e).unwrap_or(0),
                    total_key(e.order),
                    rank,
                    i,
                )
            })
            .collect();
        keys.sort_unstable();
        let mut result: Vec<Activation<'a>> = Vec::with_capacity(keys.len());
        for k in &keys {
            let Some(&(rank, hit, tok, pass)) = activated.get(k.4) else {
                continue;
            };
            let e: &CEntry<'a> = &cb.entries[rank as usize];
            let key_text = |ki: u32| {
                if ki < e.primary.len {
                    cb.key_arc(e.primary, ki as usize)
                } else {
                    Arc::from("")
                }
            };
            let reason = match hit {
                Hit::Key { ki, msg } => ActivationReason::Key {
                    key: key_text(ki),
                    message: self.chat_idx.get(msg as usize).copied().unwrap_or(0),
                },
                Hit::Rec { ki, src } => ActivationReason::Recursion {
                    key: key_text(ki),
                    from: cb.entries[src as usize].at,
                },
                Hit::Src { ki, src } => ActivationReason::Source {
                    key: key_text(ki),
                    source: src,
                },
                Hit::Constant => ActivationReason::Constant,
                Hit::Sticky => ActivationReason::Sticky,
                Hit::Decorator(d) => ActivationReason::Decorator(d),
            };
            let role = match e.position {
                Position::AtDepth => Some(e.role.unwrap_or(DecoratorRole::System)),
                _ => e.dec.role,
            };
            result.push(Activation {
                entry: e.at,
                name: e.display_name(),
                content: e.body,
                position: e.position.clone(),
                position_default: e.position_default,
                depth: depth_of(e),
                role,
                order: e.order,
                tokens: tok,
                reason,
                pass,
                decorators: e.dec.shared(),
            });
        }
        result
    }
}
