//! The rules that decide one entry (step 3 of the scan order): decorators, timed effects,
//! recursion, constant and sticky entries, then its keys in its scan window or in recursion
//! text; and the probability roll.

use super::context::{Hit, NewAct, Pass, Scan, NONE, ST_FAILED};
use super::memo::RegexMemo;
use super::search::get;
use super::sources::character_passes;
use super::RejectReason;
use crate::compile::{CEntry, KeyKind, KeyRange};
use crate::selective_logic::SelectiveLogic;
use crate::source::Source;
use crate::text;
use ccv3::Diagnostic;

/// Where a key was found: in a message of the window (newest-first index), in an entry's
/// content (recursion), only beyond the window, or nowhere; or a regex key whose search ran out
/// of steps (it does not match).
enum Found {
    Msg(u32),
    Rec(u32),
    /// In an extra text of the entry's `match_*` flags.
    Src(Source),
    Beyond,
    No,
    Budget,
}

/// A regex key's search ran out of steps (in a [`RegexMemo`] slot, beside message indices).
const BUDGET: u32 = NONE - 1;

/// An entry's outcome: activated (why, and its group score) or rejected.
pub(super) enum Verdict {
    Activate(Hit, u32),
    Reject(RejectReason),
}

impl<'s, 'a> Scan<'s, 'a> {
    /// How many of the newest messages an entry's keys are looked for in (`skew`: the extra
    /// messages of min-activations passes).
    pub(super) fn window(&self, e: &CEntry<'_>, skew: u64) -> u32 {
        let d = match e.scan_depth {
            Some(d) => d,
            None => self.cb.books[e.at.book]
                .scan_depth
                .unwrap_or(self.opts.scan_depth)
                .saturating_add(skew),
        };
        d.min(self.ends_o.len() as u64) as u32
    }

    /// The newest message within the newest `depth` where regex `rx` matches ([`NONE`]: none),
    /// run once per window.
    fn regex_window(&self, m: &mut RegexMemo, rx: u32, depth: u32) -> u32 {
        if depth == 0 {
            return NONE;
        }
        if let Some(&k) = m.chat.get(&(rx, depth)) {
            return k;
        }
        let r = &self.cb.regexes[rx as usize];
        let pre_ok = r.lits.is_empty()
            || r.lits
                .iter()
                .any(|&l| self.hits.get(l as usize).is_some_and(|h| get(h[0]) < depth));
        let mut k = NONE;
        if pre_ok {
            if let Ok(engine) = &r.engine {
                let end = self.ends_o[depth as usize - 1];
                let hay = &self.orig[..end];
                if engine.is_backtracking()
                    && hay.len() > crate::jsregex::BACKTRACK_HAYSTACK_CAP
                    && !m.capped_warned
                {
                    m.capped_warned = true;
                    m.diags.push(Diagnostic::warning(
                        "lore-regex-capped",
                        "",
                        format!(
                            "a backtracking regex key ran on the newest {} bytes of the scan text only",
                            crate::jsregex::BACKTRACK_HAYSTACK_CAP
                        ),
                    ));
                }
                match self.search(m, engine, hay) {
                    Ok(Some(pos)) => k = Self::msg_of(&self.ends_o, pos + 1).min(depth - 1),
                    Ok(None) => {}
                    Err(_) => k = BUDGET,
                }
            }
        }
        m.chat.insert((rx, depth), k);
        k
    }

    /// Runs one regex search with the steps a key may take ([`super::ScanOptions::regex_key_steps`],
    /// at most what the scan has left), taking them from the scan's.
    pub(super) fn search(
        &self,
        m: &mut RegexMemo,
        engine: &crate::jsregex::Engine,
        hay: &str,
    ) -> Result<Option<usize>, crate::jsregex::OutOfSteps> {
        let given = self.opts.regex_key_steps.min(m.steps);
        let mut left = given;
        let r = engine.find(hay, &mut left);
        m.steps -= given - left;
        if r.is_err() {
            m.out_of_steps += 1;
        }
        r
    }

    /// The first entry whose content regex `rx` matches in the recursion text ([`NONE`]: none),
    /// each new piece of text searched once.
    fn regex_recursion(&self, m: &mut RegexMemo, rx: u32) -> u32 {
        let (mut checked, mut hit) = m.rec.get(&rx).copied().unwrap_or((0, NONE));
        if hit == NONE && checked < self.rec_chunks.len() {
            let r = &self.cb.regexes[rx as usize];
            let pre_ok = r.lits.is_empty()
                || r.lits
                    .iter()
                    .any(|&l| self.hits.get(l as usize).is_some_and(|h| h[2] != 0));
            if pre_ok {
                if let Ok(engine) = &r.engine {
                    for (src, text) in &self.rec_chunks[checked..] {
                        match self.search(m, engine, text) {
                            Ok(Some(_)) => {
                                hit = *src;
                                break;
                            }
                            Ok(None) => {}
                            Err(_) => {
                                // Out of steps: this key stays unmatched in recursion text.
                                hit = BUDGET;
                                break;
                            }
                        }
                    }
                }
            }
            checked = self.rec_chunks.len();
            m.rec.insert(rx, (checked, hit));
        }
        hit
    }

    /// Where `key` is found: in the newest `depth` messages, in the extra texts `srcs` of the
    /// entry's `match_*` flags, in recursion text (`rec_ok`), only further back, or nowhere.
    fn find_key(
        &self,
        m: &mut RegexMemo,
        key: KeyKind,
        whole: bool,
        depth: u32,
        rec_ok: bool,
        srcs: u8,
    ) -> Found {
        match key {
            KeyKind::Plain { pat, multiword } => {
                let Some(h) = self.hits.get(pat as usize) else {
                    return Found::No;
                };
                let w = whole && !multiword;
                let k = get(if w { h[1] } else { h[0] });
                if k < depth {
                    return Found::Msg(k);
                }
                if srcs != 0 {
                    if let Some(s) = self.plain_in_sources(pat, w, srcs) {
                        return Found::Src(s);
                    }
                }
                let r = get(if w { h[3] } else { h[2] });
                if rec_ok && r != NONE {
                    return Found::Rec(r);
                }
                if k != NONE {
                    Found::Beyond
                } else {
                    Found::No
                }
            }
            KeyKind::Regex(rx) => {
                let k = self.regex_window(m, rx, depth);
                if k != NONE && k != BUDGET {
                    return Found::Msg(k);
                }
                let mut out = k == BUDGET;
                if srcs != 0 {
                    match self.regex_in_sources(m, rx, srcs) {
                        Ok(Some(s)) => return Found::Src(s),
                        Ok(None) => {}
                        Err(()) => out = true,
                    }
                }
                if rec_ok && !self.rec_chunks.is_empty() {
                    let r = self.regex_recursion(m, rx);
                    if r == BUDGET {
                        out = true;
                    } else if r != NONE {
                        return Found::Rec(r);
                    }
                }
                if out {
                    Found::Budget
                } else {
                    Found::No
                }
            }
            KeyKind::Invalid => Found::No,
        }
    }

    /// The first of `keys` found (as [`Scan::find_key`] finds); a key whose search ran out of
    /// steps before is noted in `out` (its place, when `out` has none yet).
    fn any_found(
        &self,
        m: &mut RegexMemo,
        keys: &[KeyKind],
        (whole, depth, rec_ok, srcs): (bool, u32, bool, u8),
        out: &mut Option<usize>,
    ) -> Option<usize> {
        (0..keys.len()).find(
            |&i| match self.find_key(m, keys[i], whole, depth, rec_ok, srcs) {
                Found::Msg(_) | Found::Rec(_) | Found::Src(_) => true,
                Found::Budget => {
                    out.get_or_insert(i);
                    false
                }
                _ => false,
            },
        )
    }

    /// Decides entry `rank` in a pass, by the rules of step 3 in their order; a matched entry
    /// whose content is blank is rejected (`empty content`).
    pub(super) fn evaluate(
        &self,
        m: &mut RegexMemo,
        rank: u32,
        pass: Pass,
        level: Option<u64>,
        skew: u64,
    ) -> Verdict {
        let e = &self.cb.entries[rank as usize];
        let verdict = match self.gates(e, pass, level) {
            // Group scoring counts the keys of members activated without them (constant,
            // `@@activate`, ...) like any other member's (World Info doc, "Use Group Scoring").
            Some(Verdict::Activate(hit, 0)) if self.scores_group(e) => {
                Verdict::Activate(hit, self.key_score(m, e, pass, skew))
            }
            Some(v) => v,
            None => self.match_keys(m, e, pass, skew),
        };
        match verdict {
            Verdict::Activate(..) if e.body_empty => Verdict::Reject(RejectReason::EmptyContent),
            v => v,
        }
    }

    /// The rules before the keys: `enabled`, triggers, decorators, timed effects, recursion,
    /// constant and sticky entries. `None`: the keys decide.
    fn gates(&self, e: &CEntry<'_>, pass: Pass, level: Option<u64>) -> Option<Verdict> {
        use RejectReason as R;
        if !e.enabled {
            return Some(Verdict::Reject(R::Disabled));
        }
        if !e.rare().triggers.is_empty() {
            let t = self.opts.trigger.as_str();
            if !e.rare().triggers.iter().any(|x| x.eq_ignore_ascii_case(t)) {
                return Some(Verdict::Reject(R::Trigger));
            }
        }
        if !character_passes(e, self.opts) {
            return Some(Verdict::Reject(R::CharacterFilter));
        }
        let d = &e.dec;
        if d.activate {
            return Some(Verdict::Activate(Hit::Decorator("activate"), 0));
        }
        let before = !self.prev_matched.is_empty() && self.prev_matched.contains(&self.cb.id(e));
        if d.dont_activate_after_match && before {
            return Some(Verdict::Reject(R::Decorator("dont_activate_after_match")));
        }
        if d.keep_activate_after_match && before {
            return Some(Verdict::Activate(
                Hit::Decorator("keep_activate_after_match"),
                0,
            ));
        }
        if d.dont_activate {
            return Some(Verdict::Reject(R::Decorator("dont_activate")));
        }
        if let (Some(g), Some(a)) = (d.is_greeting, self.opts.greeting) {
            if g != a as u64 {
                return Some(Verdict::Reject(R::Decorator("is_greeting")));
            }
        }
        if let Some(n) = d.activate_only_after {
            if self.assistant < n {
                return Some(Verdict::Reject(R::Decorator("activate_only_after")));
            }
        }
        if let Some(n) = d.activate_only_every {
            if n > 0 && !self.assistant.is_multiple_of(n) {
                return Some(Verdict::Reject(R::Decorator("activate_only_every")));
            }
        }
        if let (Some(i), Some(u)) = (&d.is_user_icon, &self.opts.user_icon) {
            if i != u {
                return Some(Verdict::Reject(R::Decorator("is_user_icon")));
            }
        }
        if (self.len as u64) < e.rare().delay {
            return Some(Verdict::Reject(R::Delay));
        }
        let sticky = !self.sticky_ids.is_empty() && self.sticky_ids.contains(&self.cb.id(e));
        if !sticky && !self.cooldown_ids.is_empty() && self.cooldown_ids.contains(&self.cb.id(e)) {
            return Some(Verdict::Reject(R::Cooldown));
        }
        if let Some(lv) = e.rare().delay_until_recursion {
            let eligible = pass == Pass::Recursion && level.is_some_and(|c| lv <= c);
            if !(sticky || eligible) {
                return Some(Verdict::Reject(R::DelayUntilRecursion));
            }
        }
        if pass == Pass::Recursion && e.exclude_recursion && !sticky {
            return Some(Verdict::Reject(R::NonRecursable));
        }
        if e.constant {
            return Some(Verdict::Activate(Hit::Constant, 0));
        }
        if sticky {
            return Some(Verdict::Activate(Hit::Sticky, 0));
        }
        None
    }

    /// The extra texts `e`'s `match_*` flags add to its scan text, as [`Source`] bits (none
    /// when the scan has no such text).
    fn sources_of(&self, e: &CEntry<'_>) -> u8 {
        match &self.sources {
            Some(_) => e.rare().sources,
            None => 0,
        }
    }

    /// Whether `e` is in an inclusion group that scores its members by their keys.
    pub(super) fn scores_group(&self, e: &CEntry<'_>) -> bool {
        !e.rare().groups.is_empty() && e.rare().group_scoring.unwrap_or(self.opts.group_scoring)
    }

    /// The group score of an entry that rules other than its keys activated: its primary keys
    /// found in its window (or recursion text), plus its secondary keys as
    /// [`Scan::match_keys`] counts them (AND ANY: each found; AND ALL: all, when all are found).
    fn key_score(&self, m: &mut RegexMemo, e: &CEntry<'_>, pass: Pass, skew: u64) -> u32 {
        let cb = self.cb;
        let whole = e.whole_words.unwrap_or(self.opts.match_whole_words);
        let depth = self.window(e, skew);
        let rec_ok = pass == Pass::Recursion && self.book_recursive(e.at.book);
        let srcs = self.sources_of(e);
        let found = |m: &mut RegexMemo, keys: &[KeyKind]| {
            keys.iter()
                .filter(|k| {
                    matches!(
                        self.find_key(m, **k, whole, depth, rec_ok, srcs),
                        Found::Msg(_) | Found::Rec(_) | Found::Src(_)
                    )
                })
                .count() as u32
        };
        let mut score = found(m, cb.keys_of(e.primary));
        if e.selective && !e.secondary.is_empty() {
            let secondary = cb.keys_of(e.secondary);
            let hit = found(m, secondary);
            match e.logic {
                SelectiveLogic::AndAny => score += hit,
                SelectiveLogic::AndAll if hit as usize == secondary.len() => score += hit,
                _ => {}
            }
        }
        score
    }

    /// The keys (entries that no earlier rule decided, so not sticky): one primary key in the
    /// entry's window (or recursion text), every `@@additional_keys` group, no `@@exclude_keys`
    /// key, the secondary keys by the selective logic.
    fn match_keys(&self, m: &mut RegexMemo, e: &CEntry<'_>, pass: Pass, skew: u64) -> Verdict {
        use RejectReason as R;
        let cb = self.cb;
        if e.primary.is_empty() {
            return Verdict::Reject(R::NoKeys);
        }
        let primary = cb.keys_of(e.primary);
        let whole = e.whole_words.unwrap_or(self.opts.match_whole_words);
        let depth = self.window(e, skew);
        let rec_ok = pass == Pass::Recursion && self.book_recursive(e.at.book);
        let srcs = self.sources_of(e);
        let scoring = self.scores_group(e);
        let mut first: Option<(usize, Found)> = None;
        let mut beyond = None;
        let mut score = 0u32;
        // The first key whose search ran out of steps: it did not match, and when the keys
        // reject the entry, this is why (issue 12).
        let mut out: Option<(KeyRange, usize)> = None;
        let budget = |out: Option<(KeyRange, usize)>, r: RejectReason| match out {
            Some((range, i)) => R::RegexBudget {
                key: cb.key_arc(range, i),
            },
            None => r,
        };
        for (i, key) in primary.iter().enumerate() {
            match self.find_key(m, *key, whole, depth, rec_ok, srcs) {
                f @ (Found::Msg(_) | Found::Rec(_) | Found::Src(_)) => {
                    score += 1;
                    if first.is_none() {
                        first = Some((i, f));
                    }
                    if !scoring {
                        break;
                    }
                }
                Found::Beyond => {
                    beyond.get_or_insert(i);
                }
                Found::Budget => {
                    out.get_or_insert((e.primary, i));
                }
                Found::No => {}
            }
        }
        let Some((ki, found)) = first else {
            return Verdict::Reject(budget(
                out,
                match beyond {
                    Some(i) => R::ScanDepth {
                        key: cb.key_arc(e.primary, i),
                    },
                    None => R::NoMatch,
                },
            ));
        };
        let ctx = (whole, depth, rec_ok, srcs);
        // SPEC_V3 `@@additional_keys`: a value with an invalid regex pattern makes the entry not
        // a match, whatever its other patterns find.
        for &g in &e.rare().additional {
            let group = cb.keys_of(g);
            if group.iter().any(|k| matches!(k, KeyKind::Invalid)) {
                return Verdict::Reject(R::AdditionalKeys);
            }
            let mut o = None;
            if self.any_found(m, group, ctx, &mut o).is_none() {
                if let Some(i) = o {
                    out.get_or_insert((g, i));
                }
                return Verdict::Reject(budget(out, R::AdditionalKeys));
            }
        }
        let exclude = cb.keys_of(e.exclude);
        if let Some(i) = self.any_found(m, exclude, ctx, &mut None) {
            return Verdict::Reject(R::ExcludedKey {
                key: cb.key_arc(e.exclude, i),
            });
        }
        if e.selective && !e.secondary.is_empty() {
            let secondary = cb.keys_of(e.secondary);
            let total = secondary.len();
            let mut hit = 0usize;
            for (i, key) in secondary.iter().enumerate() {
                match self.find_key(m, *key, whole, depth, rec_ok, srcs) {
                    Found::Msg(_) | Found::Rec(_) | Found::Src(_) => hit += 1,
                    Found::Budget => {
                        out.get_or_insert((e.secondary, i));
                    }
                    _ => {}
                }
            }
            let ok = match e.logic {
                SelectiveLogic::AndAny => hit > 0,
                SelectiveLogic::NotAll => hit < total,
                SelectiveLogic::NotAny => hit == 0,
                SelectiveLogic::AndAll => hit == total,
            };
            if !ok {
                return Verdict::Reject(budget(out, R::SecondaryLogic(e.logic)));
            }
            match e.logic {
                SelectiveLogic::AndAny => score += hit as u32,
                SelectiveLogic::AndAll => score += total as u32,
                _ => {}
            }
        }
        let ki = ki as u32;
        let reason = match found {
            Found::Msg(msg) => Hit::Key { ki, msg },
            Found::Rec(src) => Hit::Rec { ki, src },
            Found::Src(src) => Hit::Src { ki, src },
            Found::Beyond | Found::No | Found::Budget => return Verdict::Reject(R::NoMatch),
        };
        Verdict::Activate(reason, score)
    }

    /// Checks one entry; a match becomes a [`NewAct`], a rejection is recorded.
    pub(super) fn check(
        &mut self,
        rank: u32,
        pass: Pass,
        level: Option<u64>,
        skew: u64,
    ) -> Option<NewAct> {
        let mut m = std::mem::take(&mut self.memo);
        let verdict = self.evaluate(&mut m, rank, pass, level, skew);
        self.memo = m;
        match verdict {
            Verdict::Activate(hit, score) => {
                let sticky = !self.sticky_ids.is_empty()
                    && self
                        .sticky_ids
                        .contains(&self.cb.id(&self.cb.entries[rank as usize]));
                Some(NewAct {
                    rank,
                    new_index: 0,
                    hit,
                    score,
                    sticky,
                    alive: true,
                })
            }
            Verdict::Reject(r) => {
                if !(r == RejectReason::NonRecursable && self.reasons.contains_key(&rank)) {
                    self.reasons.insert(rank, r);
                }
                None
            }
        }
    }

    /// The probability roll; a failure is final for this scan.
    pub(super) fn roll_passes(&mut self, rank: u32) -> bool {
        let e = &self.cb.entries[rank as usize];
        match e.probability {
            Some(p) if p < 100.0 => {
                let r = text::roll(self.opts.seed, self.cb.id(e), self.len, 1);
                if r >= p {
                    self.status[rank as usize] = ST_FAILED;
                    self.reasons.insert(
                        rank,
                        RejectReason::Probability {
                            roll: r,
                            probability: p,
                        },
                    );
                    false
                } else {
                    true
                }
            }
            _ => true,
        }
    }
}
