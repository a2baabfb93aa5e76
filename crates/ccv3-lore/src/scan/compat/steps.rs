//! SillyTavern's scan loop: steps (initial, recursion, min activations, delay levels), each a
//! check of every entry not active yet, then the inclusion groups, then the budget walk
//! (contents joined with a newline each, counted with the recursion text, stopping at `>=`).

use super::groups::groups;
use super::matching::{Buffer, Place, St};
use super::shared::{roll, State, MAX_STEPS};
use super::timed::Timed;
use crate::compile::CompiledBooks;
use crate::scan::{ActivationReason, RejectReason, ScanOptions};
use ccv3_tokens::Tokenizer;
use std::collections::HashMap;
use std::sync::Arc;

/// What the steps decided: the activated entries (in activation order) and every entry's
/// activation reason, step and rejection.
pub(super) struct Outcome {
    pub(super) activated: Vec<usize>,
    pub(super) is_active: Vec<bool>,
    pub(super) failed_prob: Vec<bool>,
    pub(super) why: Vec<Option<ActivationReason>>,
    pub(super) pass_of: Vec<usize>,
    pub(super) reasons: HashMap<usize, RejectReason>,
}

/// The loop's state between steps.
struct Walk {
    /// The next step's kind; `None`: the scan is over.
    scan_state: Option<State>,
    /// The budget has overflowed: nothing more is added.
    overflowed: bool,
    /// Steps run.
    count: usize,
    /// The recursion text so far, newest step first (counted with the budget).
    all_text: String,
    /// Delay levels not opened yet, lowest first, and the open one.
    levels: std::vec::IntoIter<u64>,
    level: u64,
    recursive: bool,
    budget: usize,
}

/// Runs the scan's steps (see the module docs).
pub(super) fn run(
    cb: &CompiledBooks<'_>,
    st: &mut St<'_, '_>,
    buf: &mut Buffer,
    timed: &Timed,
    opts: &ScanOptions,
    tok: &dyn Tokenizer,
    len: usize,
) -> Outcome {
    let n = st.entries.len();
    let mut levels: Vec<u64> = st.entries.iter().filter_map(|e| e.delay_level).collect();
    levels.sort_unstable();
    levels.dedup();
    let mut levels = levels.into_iter();
    let level = levels.next().unwrap_or(0);

    let recursive = (0..cb.books.len()).any(|b| cb.books[b].recursive.unwrap_or(opts.recursive));
    let budget = opts
        .token_budget
        .or(opts
            .max_context
            .map(|m| m.saturating_sub(opts.context_tokens)))
        .map_or(usize::MAX, |b| b.max(1));

    let mut w = Walk {
        scan_state: Some(State::Initial),
        overflowed: false,
        count: 0,
        all_text: String::new(),
        levels,
        level,
        recursive,
        budget,
    };
    let mut out = Outcome {
        activated: Vec::new(),
        is_active: vec![false; n],
        failed_prob: vec![false; n],
        why: vec![None; n],
        pass_of: vec![0usize; n],
        reasons: HashMap::new(),
    };

    while let Some(state_now) = w.scan_state {
        if (opts.max_recursion_steps > 0 && opts.max_recursion_steps <= w.count)
            || w.count >= MAX_STEPS
        {
            break;
        }
        w.count += 1;
        let mut now: Vec<usize> = Vec::new();
        let mut texts: HashMap<i64, Arc<str>> = HashMap::new();
        for i in 0..n {
            if out.failed_prob[i] || out.is_active[i] {
                continue;
            }
            match check(st, buf, &mut texts, timed, &w, i, state_now, len) {
                Ok(reason) => {
                    out.why[i] = Some(reason);
                    now.push(i);
                }
                Err(reason) => {
                    out.reasons.insert(i, reason);
                }
            }
        }

        // Sticky first, then activation order.
        now.sort_by_key(|&i| (!timed.sticky_on[i], i));
        // Without a budget nothing is counted: SillyTavern's walk recounts the step's growing
        // text at every entry, and with thousands of entries that is quadratic for nothing.
        let counted = w.budget != usize::MAX;
        let text_tokens = if counted { tok.count(&w.all_text) } else { 0 };
        groups(
            st,
            &mut now,
            &out.activated,
            buf,
            opts.scan_depth as usize,
            state_now,
            &timed.sticky_on,
            &timed.cooldown_on,
            &timed.delay_on,
            opts,
            len,
            &mut out.reasons,
            &mut texts,
        );
        texts.clear();

        let before = out.activated.len();
        add_in_budget(
            st,
            &now,
            timed,
            &mut w,
            &mut out,
            counted,
            text_tokens,
            tok,
            len,
        );
        place_keys(st, buf, &mut out, before, state_now, len);
        let for_recursion: Vec<usize> = now
            .iter()
            .copied()
            .filter(|&i| !out.failed_prob[i] && !st.entries[i].prevent_recursion)
            .collect();
        next_step(st, buf, &mut w, &out, state_now, &for_recursion, len);
    }
    out
}

/// The step's new activations by a key say where the key was: which chat message, or which
/// activated entry's content (a recursion step). The step's matching only says that the
/// entry's whole scan text held it.
fn place_keys(
    st: &mut St<'_, '_>,
    buf: &Buffer,
    out: &mut Outcome,
    from: usize,
    state_now: State,
    len: usize,
) {
    let base = st.opts.scan_depth as usize;
    for &i in &out.activated[from..] {
        let Some(ActivationReason::Key { key, .. }) = &out.why[i] else {
            continue;
        };
        let key = Arc::clone(key);
        out.why[i] = Some(match buf.locate(st, i, key.trim(), base, state_now, len) {
            Some(Place::Message(message)) => ActivationReason::Key { key, message },
            Some(Place::Entry(k)) => ActivationReason::Recursion {
                key,
                from: st.entries[k].at,
            },
            None => continue,
        });
    }
}

/// One entry in one step: why it activates, or why not.
#[allow(clippy::too_many_arguments)]
fn check(
    st: &mut St<'_, '_>,
    buf: &Buffer,
    texts: &mut HashMap<i64, Arc<str>>,
    timed: &Timed,
    w: &Walk,
    i: usize,
    state_now: State,
    len: usize,
) -> Result<ActivationReason, RejectReason> {
    let opts = st.opts;
    let e = &st.entries[i];
    if e.disabled {
        return Err(RejectReason::Disabled);
    }
    if !e.triggered {
        return Err(RejectReason::Trigger);
    }
    let sticky = timed.sticky_on[i];
    if timed.delay_on[i] {
        return Err(RejectReason::Delay);
    }
    if timed.cooldown_on[i] && !sticky {
        return Err(RejectReason::Cooldown);
    }
    if let Some(lv) = e.delay_level {
        if !sticky && (state_now != State::Recursion || lv > w.level) {
            return Err(RejectReason::DelayUntilRecursion);
        }
    }
    if state_now == State::Recursion && w.recursive && e.exclude_recursion && !sticky {
        return Err(RejectReason::NonRecursable);
    }
    if e.activate {
        return Ok(ActivationReason::Decorator("activate"));
    }
    if e.dont_activate {
        return Err(RejectReason::Decorator("dont_activate"));
    }
    if e.constant {
        return Ok(ActivationReason::Constant);
    }
    if sticky {
        return Ok(ActivationReason::Sticky);
    }
    if e.keys.is_empty() {
        return Err(RejectReason::NoKeys);
    }
    let text = buf.text(texts, e, opts.scan_depth as usize, state_now);
    let keys = e.keys.clone();
    let primary = keys
        .iter()
        .find(|k| !k.is_empty() && st.matches(&text, k.trim(), i));
    let Some(primary) = primary else {
        return Err(RejectReason::NoMatch);
    };
    let e = &st.entries[i];
    let reason = ActivationReason::Key {
        key: Arc::from(primary.as_str()),
        message: len.saturating_sub(1),
    };
    if !e.selective || e.secondary.is_empty() {
        return Ok(reason);
    }
    let logic = e.logic.unwrap_or(0);
    let sec = e.secondary.clone();
    let (mut any, mut all) = (false, true);
    let mut ok = false;
    for k in &sec {
        let hit = !k.is_empty() && st.matches(&text, k.trim(), i);
        any |= hit;
        all &= hit;
        if (logic == 0 && hit) || (logic == 1 && !hit) {
            ok = true;
            break;
        }
    }
    ok = ok || (logic == 2 && !any) || (logic == 3 && all);
    if ok {
        Ok(reason)
    } else {
        Err(RejectReason::SecondaryLogic(
            crate::selective_logic::SelectiveLogic::AndAny,
        ))
    }
}

/// The budget walk of one step: the entries found (`now`, after the groups) are added in order
/// until the budget overflows; a failed probability roll drops an entry for the whole scan.
/// `ignoreBudget` entries are added whatever the budget, and after an overflow the walk goes on
/// past the others while such entries are left (`world-info.js` of 1.16.0, lines 4811-4821 and
/// 4855); every entry the walk passes over or stops before is cut `budget`.
#[allow(clippy::too_many_arguments)]
fn add_in_budget(
    st: &St<'_, '_>,
    now: &[usize],
    timed: &Timed,
    w: &mut Walk,
    out: &mut Outcome,
    counted: bool,
    text_tokens: usize,
    tok: &dyn Tokenizer,
    len: usize,
) {
    let opts = st.opts;
    let mut new_content = String::new();
    let mut ignoring = now.iter().filter(|&&i| st.entries[i].ignore_budget).count();
    for (k, &i) in now.iter().enumerate() {
        let e = &st.entries[i];
        ignoring -= usize::from(e.ignore_budget);
        // SillyTavern 1.14 and 1.16: once the budget has overflowed, no later entry is
        // added, in this step or a later one (the 2024 code tried each later step again),
        // but `ignoreBudget` ones.
        if w.overflowed && !e.ignore_budget {
            out.reasons.insert(i, RejectReason::Budget { tokens: None });
            if ignoring > 0 {
                continue;
            }
            for &j in &now[k + 1..] {
                out.reasons.insert(j, RejectReason::Budget { tokens: None });
            }
            break;
        }
        if e.use_probability && e.probability != 100.0 && !timed.sticky_on[i] {
            // SillyTavern's own outcome when given: a roll past every probability if it did
            // not activate the entry, none if it did.
            let random = e.probability > 0.0 && e.probability < 100.0;
            let r = match e.st_won.filter(|_| random) {
                Some(true) => 0.0,
                Some(false) => 100.0,
                None => roll(opts.seed, e.id, len, 0x5052_4f42) * 100.0,
            };
            if r > e.probability {
                out.failed_prob[i] = true;
                out.reasons.insert(
                    i,
                    RejectReason::Probability {
                        roll: r,
                        probability: e.probability,
                    },
                );
                continue;
            }
        }
        new_content.push_str(e.content);
        new_content.push('\n');
        if !e.ignore_budget
            && counted
            && text_tokens.saturating_add(tok.count(&new_content)) >= w.budget
        {
            w.overflowed = true;
            out.reasons.insert(
                i,
                RejectReason::Budget {
                    tokens: Some(tok.count(e.content)),
                },
            );
            continue;
        }
        out.is_active[i] = true;
        out.reasons.remove(&i);
        out.activated.push(i);
        out.pass_of[i] = w.count - 1;
    }
}

/// Which step comes next (recursion, min activations, the next delay level, or none), and the
/// recursion text the step adds.
fn next_step(
    st: &St<'_, '_>,
    buf: &mut Buffer,
    w: &mut Walk,
    out: &Outcome,
    state_now: State,
    for_recursion: &[usize],
    len: usize,
) {
    let opts = st.opts;
    let (recursive, overflowed) = (w.recursive, w.overflowed);
    let mut next = None;
    if recursive && !overflowed && !for_recursion.is_empty() {
        next = Some(State::Recursion);
    }
    if recursive && !overflowed && state_now == State::MinActivations && !buf.recurse.is_empty() {
        next = Some(State::Recursion);
    }
    if next.is_none()
        && !overflowed
        && opts.min_activations > 0
        && out.activated.len() < opts.min_activations
    {
        let depth = opts.scan_depth as usize + buf.skew;
        let over = (opts.min_activations_depth_max > 0
            && depth as u64 > opts.min_activations_depth_max)
            || depth > len;
        if !over {
            next = Some(State::MinActivations);
            buf.skew += 1;
        }
    }
    if next.is_none() {
        if let Some(lv) = w.levels.next() {
            next = Some(State::Recursion);
            w.level = lv;
        }
    }
    w.scan_state = next;
    if w.scan_state.is_some() {
        let text = for_recursion
            .iter()
            .map(|&i| st.entries[i].content)
            .collect::<Vec<_>>()
            .join("\n");
        // SillyTavern 1.14 and 1.16 add nothing when the step left no recursion text (the
        // 2024 code added an empty part and a newline to the budget's text).
        if !text.is_empty() {
            w.all_text = format!("{text}\n{}", w.all_text);
            buf.recurse.push(text);
            buf.recurse_from.push(
                for_recursion
                    .iter()
                    .copied()
                    .filter(|&i| !st.entries[i].content.is_empty())
                    .collect(),
            );
        }
    }
}
