//! `Compat::SillyTavern`: the scan as SillyTavern 1.15's `checkWorldInfo` runs it, including
//! where its code departs from its documentation (issue 14). The default scan follows the spec
//! and the documentation; every difference is listed in `docs/sillytavern-compat.md`.
//!
//! This is its own small loop over the compiled entries (in the same activation order): one
//! pass over every entry per scan step, SillyTavern's key matching (`/regex/flags` keys, an
//! invalid pattern falling back to plain text, ASCII `\W` word boundaries), its timed-effect
//! records (`start`, `end = start + N`, active while the chat length is below `end`), its
//! inclusion groups (groups split on commas, "already activated" compared with the whole group
//! text, a member of two groups removed twice), its budget walk (contents joined with a newline
//! each, counted with the recursion text, stopping at `>=`), and its prompt order (order lowest
//! first, equal orders in reverse activation order). Rolls (probability, group weights) come from
//! the seed, the entry and the chat length instead of `Math.random`.

use super::Activation;
use super::{ActivationReason, ExplainSink, RejectReason, Rejected, ScanOptions, ScanResult};
use crate::chat::{Chat, Role};
use crate::compile::{CEntry, CompiledBooks, DepthSpec};
use crate::jsregex;
use crate::position::Position;
use crate::st_regex::{StRegex, StRegexCache};
use crate::state::{key as state_key, ScanState, TimedRecord};
use ccv3::decorator::DecoratorRole;
use ccv3_tokens::Tokenizer;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Which engine's results a scan reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Compat {
    /// The spec and SillyTavern's documentation (the default).
    #[default]
    Spec,
    /// SillyTavern 1.15's code, where it departs from its documentation.
    SillyTavern,
}

impl Compat {
    /// Reads `sillytavern` (or `spec`/`default`/`none`); `None` for anything else.
    pub fn parse(s: &str) -> Option<Compat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sillytavern" | "st" => Some(Compat::SillyTavern),
            "spec" | "default" | "none" | "" => Some(Compat::Spec),
            _ => None,
        }
    }
}

/// The most scan steps (SillyTavern loops until nothing is left; the levels, recursion and min
/// activations all end, but a bound keeps any input finite).
const MAX_STEPS: usize = 1000;

/// SillyTavern's deepest scan depth.
const MAX_SCAN_DEPTH: usize = 1000;

/// `scan_state` of SillyTavern's loop.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Initial,
    Recursion,
    MinActivations,
}

/// One entry as SillyTavern sees it.
struct StEntry<'a> {
    rank: u32,
    id: u64,
    keys: Vec<String>,
    secondary: Vec<String>,
    selective: bool,
    logic: Option<i64>,
    constant: bool,
    disabled: bool,
    order: f64,
    use_probability: bool,
    probability: f64,
    group: String,
    group_override: bool,
    group_weight: f64,
    group_scoring: Option<bool>,
    scan_depth: Option<i64>,
    case_sensitive: Option<bool>,
    whole_words: Option<bool>,
    sticky: u64,
    cooldown: u64,
    delay: u64,
    delay_level: Option<u64>,
    exclude_recursion: bool,
    prevent_recursion: bool,
    activate: bool,
    dont_activate: bool,
    content: &'a str,
    /// Where it goes: SillyTavern's `position`, `depth` and `role` numbers (decorators such as
    /// `@@depth` are not SillyTavern's and do not move it).
    position: Position,
    depth: Option<u64>,
    role: Option<DecoratorRole>,
}

fn v_bool(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Null => None,
        Value::Number(n) => Some(n.as_f64().is_some_and(|f| f != 0.0)),
        Value::String(s) => Some(!s.is_empty()),
        _ => Some(true),
    }
}

fn v_f64(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// SillyTavern's decorator header: `(activate, dont_activate, content without the header)`.
/// Only content starting with `@@` has one; `@@@` lines are fallbacks for an unknown decorator
/// just before.
fn st_decorators(content: &str) -> (bool, bool, &str) {
    if !content.starts_with("@@") {
        return (false, false, content);
    }
    let known = |l: &str| {
        let l = l
            .strip_prefix('@')
            .filter(|r| r.starts_with("@@"))
            .unwrap_or(l);
        l.starts_with("@@activate") || l.starts_with("@@dont_activate")
    };
    let (mut act, mut dont, mut fallbacked) = (false, false, false);
    let mut at = 0;
    for line in content.split('\n') {
        if !line.starts_with("@@") {
            return (act, dont, &content[at..]);
        }
        at += line.len() + 1;
        if line.starts_with("@@@") && !fallbacked {
            continue;
        }
        if known(line) {
            let d = line
                .strip_prefix('@')
                .filter(|r| r.starts_with("@@"))
                .unwrap_or(line);
            act |= d == "@@activate";
            dont |= d == "@@dont_activate";
            fallbacked = false;
        } else {
            fallbacked = true;
        }
    }
    (act, dont, content)
}

impl<'a> StEntry<'a> {
    fn new(cb: &CompiledBooks<'a>, rank: u32, opts: &ScanOptions, len: usize) -> StEntry<'a> {
        let e: &CEntry<'a> = &cb.entries[rank as usize];
        let ext = e.entry.extensions.to_value();
        let get = |k: &str| ext.get(k);
        let resolve = |k: &String| crate::resolve_key_macros(k, &opts.char_name, &opts.user_name);
        let (activate, dont_activate, content) = st_decorators(&e.entry.content);
        let delay_level = match get("delay_until_recursion") {
            Some(Value::Bool(true)) => Some(1),
            v => v_f64(v).filter(|f| *f > 0.0).map(|f| f as u64),
        };
        let st_position = match v_f64(get("position")).map(|f| f as i64) {
            Some(0) => Some(Position::BeforeChar),
            Some(1) => Some(Position::AfterChar),
            Some(2) => Some(Position::AuthorsNoteTop),
            Some(3) => Some(Position::AuthorsNoteBottom),
            Some(4) => Some(Position::AtDepth),
            Some(5) => Some(Position::ExamplesTop),
            Some(6) => Some(Position::ExamplesBottom),
            _ => None,
        };
        let (position, depth, role) = match st_position {
            Some(Position::AtDepth) => (
                Position::AtDepth,
                Some(v_f64(get("depth")).map_or(4, |f| f.max(0.0) as u64)),
                Some(match v_f64(get("role")).map(|f| f as i64) {
                    Some(1) => DecoratorRole::User,
                    Some(2) => DecoratorRole::Assistant,
                    _ => DecoratorRole::System,
                }),
            ),
            Some(p) => (p, None, None),
            None => {
                let depth = match e.depth {
                    DepthSpec::None => None,
                    DepthSpec::Fixed(d) => Some(d),
                    DepthSpec::Reverse(r) => Some((len as i64).saturating_sub(r).max(0) as u64),
                };
                let role = match e.position {
                    Position::AtDepth => Some(e.role.unwrap_or(DecoratorRole::System)),
                    _ => e.dec.role,
                };
                (e.position.clone(), depth, role)
            }
        };
        StEntry {
            position,
            depth,
            role,
            rank,
            id: cb.id(e),
            keys: e.entry.keys.iter().map(resolve).collect(),
            secondary: e
                .entry
                .secondary_keys
                .as_deref()
                .unwrap_or(&[])
                .iter()
                .map(resolve)
                .collect(),
            selective: e.entry.selective.unwrap_or(false),
            logic: v_f64(get("selectiveLogic")).map(|f| f as i64),
            constant: e.entry.constant.unwrap_or(false),
            disabled: !e.enabled,
            order: e.entry.insertion_order_f64(),
            use_probability: v_bool(get("useProbability")).unwrap_or(false),
            probability: v_f64(get("probability")).unwrap_or(100.0),
            group: match get("group") {
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            },
            group_override: v_bool(get("group_override")).unwrap_or(false),
            group_weight: v_f64(get("group_weight")).unwrap_or(100.0),
            group_scoring: v_bool(get("use_group_scoring")),
            scan_depth: v_f64(get("scan_depth")).map(|f| f as i64),
            case_sensitive: e
                .entry
                .case_sensitive
                .or_else(|| v_bool(get("case_sensitive"))),
            whole_words: v_bool(get("match_whole_words")),
            sticky: v_f64(get("sticky")).map_or(0, |f| f.max(0.0) as u64),
            cooldown: v_f64(get("cooldown")).map_or(0, |f| f.max(0.0) as u64),
            delay: v_f64(get("delay")).map_or(0, |f| f.max(0.0) as u64),
            delay_level,
            exclude_recursion: v_bool(get("exclude_recursion")).unwrap_or(false),
            prevent_recursion: v_bool(get("prevent_recursion")).unwrap_or(false),
            activate,
            dont_activate,
            content,
        }
    }

    fn groups(&self) -> Vec<&str> {
        split_groups(&self.group)
    }
}

/// A group text split as SillyTavern does (`/,\s*/`, empty parts dropped).
fn split_groups(g: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = g;
    loop {
        match rest.find(',') {
            Some(i) => {
                if i > 0 {
                    out.push(&rest[..i]);
                }
                rest = rest[i + 1..].trim_start();
            }
            None => {
                if !rest.is_empty() {
                    out.push(rest);
                }
                return out;
            }
        }
    }
}

/// A word character of JavaScript's `\w` (ASCII only).
fn js_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `needle` occurs in `hay` with a non-word character or the text edge on both sides.
fn whole_word(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while from <= hay.len() {
        let Some(p) = hay[from..].find(needle).map(|p| p + from) else {
            return false;
        };
        let before = hay[..p].chars().next_back();
        let after = hay[p + needle.len()..].chars().next();
        if before.is_none_or(|c| !js_word(c)) && after.is_none_or(|c| !js_word(c)) {
            return true;
        }
        from = p + hay[p..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The scan buffer of SillyTavern (`WorldInfoBuffer`).
struct Buffer {
    /// Messages, newest first, trimmed.
    depth: Vec<String>,
    recurse: Vec<String>,
    skew: usize,
}

impl Buffer {
    /// The text an entry scans in this step, made once per scan depth and step (`cache` is
    /// emptied when a step ends).
    fn text(
        &self,
        cache: &mut HashMap<i64, Arc<str>>,
        e: &StEntry<'_>,
        base: usize,
        state: State,
    ) -> Arc<str> {
        let depth = match e.scan_depth {
            Some(d) => d,
            None => (base + self.skew) as i64,
        };
        cache
            .entry(depth)
            .or_insert_with(|| Arc::from(self.make_text(depth, state)))
            .clone()
    }

    /// SillyTavern's `WorldInfoBuffer.get` for a scan depth.
    fn make_text(&self, depth: i64, state: State) -> String {
        if depth <= 0 {
            return String::new();
        }
        let depth = (depth as usize).min(MAX_SCAN_DEPTH).min(self.depth.len());
        let mut s = String::from("\x01");
        s.push_str(&self.depth[..depth].join("\n\x01"));
        if !self.recurse.is_empty() && state != State::MinActivations {
            s.push_str("\n\x01");
            s.push_str(&self.recurse.join("\n\x01"));
        }
        s
    }
}

/// The scan's working state.
struct St<'s, 'a> {
    opts: &'s ScanOptions,
    regex: &'s StRegexCache,
    entries: Vec<StEntry<'a>>,
    global_case: bool,
    /// The last haystack lower-cased, and its lower-cased form (keys are checked against the
    /// same text many times in a row).
    lower: (String, String),
    /// Regex steps left for the whole scan ([`ScanOptions::regex_scan_steps`]).
    regex_left: u64,
}

impl St<'_, '_> {
    /// SillyTavern's `matchKeys`.
    fn matches(&mut self, hay: &str, needle: &str, i: usize) -> bool {
        if let Some((pat, flags)) = jsregex::split_slash(needle) {
            let steps_max = self.opts.regex_key_steps;
            let build = || {
                let pat = pat.replacen("\\/", "/", 1);
                let engine = jsregex::engine(&pat, flags).ok()?;
                let (lits, icase) = jsregex::literals(&pat, flags);
                Some(Arc::new(StRegex {
                    engine,
                    lits,
                    icase,
                }))
            };
            let re = match self.regex.lock() {
                Ok(mut cache) => cache
                    .entry(needle.to_string())
                    .or_insert_with(build)
                    .clone(),
                Err(_) => build(),
            };
            if let Some(re) = re {
                // Every match holds one of the literals: without them, no need to run it.
                if !re.lits.is_empty() {
                    let text: &str = if re.icase {
                        if self.lower.0 != hay {
                            self.lower = (hay.to_string(), hay.to_lowercase());
                        }
                        &self.lower.1
                    } else {
                        hay
                    };
                    if !re.lits.iter().any(|l| text.contains(l.as_str())) {
                        return false;
                    }
                }
                let given = steps_max.min(self.regex_left);
                let mut steps = given;
                let found = matches!(re.engine.find(hay, &mut steps), Ok(Some(_)));
                self.regex_left = self.regex_left.saturating_sub(given.saturating_sub(steps));
                return found;
            }
        }
        let e = &self.entries[i];
        let case = e.case_sensitive.unwrap_or(self.global_case);
        let needle_l;
        let (hay, needle): (&str, &str) = if case {
            (hay, needle)
        } else {
            if self.lower.0 != hay {
                self.lower = (hay.to_string(), hay.to_lowercase());
            }
            needle_l = needle.to_lowercase();
            (&self.lower.1, &needle_l)
        };
        if e.whole_words.unwrap_or(self.opts.match_whole_words) {
            if needle.split_whitespace().count() > 1 {
                hay.contains(needle)
            } else {
                whole_word(hay, needle)
            }
        } else {
            hay.contains(needle)
        }
    }

    /// SillyTavern's `getScore`.
    fn score(&mut self, hay: &str, i: usize) -> u32 {
        let keys = self.entries[i].keys.clone();
        let sec = self.entries[i].secondary.clone();
        let p = keys.iter().filter(|k| self.matches(hay, k, i)).count() as u32;
        let s = sec.iter().filter(|k| self.matches(hay, k, i)).count() as u32;
        if keys.is_empty() {
            return 0;
        }
        if !sec.is_empty() {
            match self.entries[i].logic {
                Some(0) => return p + s,
                Some(3) => return if s as usize == sec.len() { p + s } else { p },
                _ => {}
            }
        }
        p
    }
}

/// A roll in `[0, 1)` from the seed, an entry and the chat length.
fn roll(seed: u64, id: u64, len: usize, salt: u64) -> f64 {
    let mut x = seed ^ id.rotate_left(17) ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Runs SillyTavern's `checkWorldInfo` on compiled books (see the module docs).
pub(super) fn scan<'a>(
    cb: &CompiledBooks<'a>,
    chat: &Chat,
    prev: &ScanState,
    opts: &ScanOptions,
    tok: &dyn Tokenizer,
    sink: &mut dyn ExplainSink,
) -> ScanResult<'a> {
    let len = chat.messages.len();
    let n = cb.entries.len();
    let entries: Vec<StEntry<'a>> = (0..n as u32)
        .map(|r| StEntry::new(cb, r, opts, len))
        .collect();
    let mut st = St {
        opts,
        regex: &cb.st_regex,
        entries,
        global_case: cb.case_sensitive,
        lower: (String::new(), String::new()),
        regex_left: opts.regex_scan_steps,
    };
    // Messages, newest first, as SillyTavern's caller formats them.
    let depth_buf: Vec<String> = chat
        .messages
        .iter()
        .rev()
        .take(MAX_SCAN_DEPTH)
        .map(|m| {
            let text = if opts.include_names {
                let name = match (&m.name, m.role) {
                    (Some(n), _) => n.as_str(),
                    (None, Role::User) => opts.user_name.as_str(),
                    (None, Role::Assistant) => opts.char_name.as_str(),
                    (None, Role::System) => "",
                };
                format!("{name}: {}", m.content)
            } else {
                m.content.clone()
            };
            text.trim().to_string()
        })
        .collect();
    let mut buf = Buffer {
        depth: depth_buf,
        recurse: Vec::new(),
        skew: 0,
    };

    // Timed effects (WorldInfoTimedEffects.checkTimedEffects).
    let by_id: HashMap<u64, usize> = st
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id, i))
        .collect();
    let mut state = ScanState {
        matched: prev.matched.clone(),
        variables: prev.variables.clone(),
        ..Default::default()
    };
    let mut sticky_on = vec![false; n];
    let mut cooldown_on = vec![false; n];
    let l = len as u64;
    for (k, rec) in &prev.sticky {
        let idx = u64::from_str_radix(k, 16)
            .ok()
            .and_then(|id| by_id.get(&id).copied());
        if l <= rec.start && !rec.protected {
            continue;
        }
        let Some(i) = idx else {
            if l < rec.end {
                state.sticky.insert(k.clone(), rec.clone());
            }
            continue;
        };
        let e = &st.entries[i];
        if e.sticky == 0 {
            continue;
        }
        if l >= rec.end {
            if e.cooldown > 0 {
                let r = TimedRecord {
                    start: l,
                    end: l + e.cooldown,
                    protected: true,
                    entry: rec.entry.clone(),
                };
                state.cooldown.insert(k.clone(), r);
                cooldown_on[i] = true;
            }
            continue;
        }
        sticky_on[i] = true;
        state.sticky.insert(k.clone(), rec.clone());
    }
    for (k, rec) in &prev.cooldown {
        if state.cooldown.contains_key(k) {
            continue;
        }
        let idx = u64::from_str_radix(k, 16)
            .ok()
            .and_then(|id| by_id.get(&id).copied());
        if l <= rec.start && !rec.protected {
            continue;
        }
        let Some(i) = idx else {
            if l < rec.end {
                state.cooldown.insert(k.clone(), rec.clone());
            }
            continue;
        };
        if st.entries[i].cooldown == 0 || l >= rec.end {
            continue;
        }
        cooldown_on[i] = true;
        state.cooldown.insert(k.clone(), rec.clone());
    }
    let delay_on: Vec<bool> = st
        .entries
        .iter()
        .map(|e| e.delay > 0 && l < e.delay)
        .collect();

    let mut levels: Vec<u64> = st.entries.iter().filter_map(|e| e.delay_level).collect();
    levels.sort_unstable();
    levels.dedup();
    let mut levels = levels.into_iter();
    let mut level = levels.next().unwrap_or(0);

    let recursive = (0..cb.books.len()).any(|b| cb.books[b].recursive.unwrap_or(opts.recursive));
    let budget = opts
        .token_budget
        .or(opts
            .max_context
            .map(|m| m.saturating_sub(opts.context_tokens)))
        .map_or(usize::MAX, |b| b.max(1));

    let mut scan_state = Some(State::Initial);
    let mut overflowed = false;
    let mut count = 0usize;
    let mut activated: Vec<usize> = Vec::new();
    let mut is_active = vec![false; n];
    let mut failed_prob = vec![false; n];
    let mut all_text = String::new();
    let mut why: Vec<Option<ActivationReason>> = vec![None; n];
    let mut pass_of = vec![0usize; n];
    let mut reasons: HashMap<usize, RejectReason> = HashMap::new();

    while let Some(state_now) = scan_state {
        if (opts.max_recursion_steps > 0 && opts.max_recursion_steps <= count) || count >= MAX_STEPS
        {
            break;
        }
        count += 1;
        let mut now: Vec<usize> = Vec::new();
        let mut texts: HashMap<i64, Arc<str>> = HashMap::new();
        for i in 0..n {
            if failed_prob[i] || is_active[i] {
                continue;
            }
            let e = &st.entries[i];
            if e.disabled {
                reasons.insert(i, RejectReason::Disabled);
                continue;
            }
            let sticky = sticky_on[i];
            if delay_on[i] {
                reasons.insert(i, RejectReason::Delay);
                continue;
            }
            if cooldown_on[i] && !sticky {
                reasons.insert(i, RejectReason::Cooldown);
                continue;
            }
            if let Some(lv) = e.delay_level {
                if !sticky && (state_now != State::Recursion || lv > level) {
                    reasons.insert(i, RejectReason::DelayUntilRecursion);
                    continue;
                }
            }
            if state_now == State::Recursion && recursive && e.exclude_recursion && !sticky {
                reasons.insert(i, RejectReason::NonRecursable);
                continue;
            }
            if e.activate {
                why[i] = Some(ActivationReason::Decorator("activate"));
                now.push(i);
                continue;
            }
            if e.dont_activate {
                reasons.insert(i, RejectReason::Decorator("dont_activate"));
                continue;
            }
            if e.constant {
                why[i] = Some(ActivationReason::Constant);
                now.push(i);
                continue;
            }
            if sticky {
                why[i] = Some(ActivationReason::Sticky);
                now.push(i);
                continue;
            }
            if e.keys.is_empty() {
                reasons.insert(i, RejectReason::NoKeys);
                continue;
            }
            let text = buf.text(&mut texts, e, opts.scan_depth as usize, state_now);
            let keys = e.keys.clone();
            let primary = keys
                .iter()
                .find(|k| !k.is_empty() && st.matches(&text, k.trim(), i));
            let Some(primary) = primary else {
                reasons.insert(i, RejectReason::NoMatch);
                continue;
            };
            let e = &st.entries[i];
            let reason = ActivationReason::Key {
                key: Arc::from(primary.as_str()),
                message: len.saturating_sub(1),
            };
            if !e.selective || e.secondary.is_empty() {
                why[i] = Some(reason);
                now.push(i);
                continue;
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
                why[i] = Some(reason);
                now.push(i);
            } else {
                reasons.insert(
                    i,
                    RejectReason::SecondaryLogic(crate::selective_logic::SelectiveLogic::AndAny),
                );
            }
        }

        // Sticky first, then activation order.
        now.sort_by_key(|&i| (!sticky_on[i], i));
        // Without a budget nothing is counted: SillyTavern's walk recounts the step's growing
        // text at every entry, and with thousands of entries that is quadratic for nothing.
        let counted = budget != usize::MAX;
        let text_tokens = if counted { tok.count(&all_text) } else { 0 };
        groups(
            &mut st,
            &mut now,
            &activated,
            &buf,
            opts.scan_depth as usize,
            state_now,
            &sticky_on,
            &cooldown_on,
            &delay_on,
            opts,
            len,
            &mut reasons,
            &mut texts,
        );
        texts.clear();

        let mut new_content = String::new();
        for &i in &now {
            // SillyTavern 1.14 and 1.16: once the budget has overflowed, no later entry is
            // added, in this step or a later one (the 2024 code tried each later step again).
            if overflowed {
                reasons.insert(i, RejectReason::Budget { tokens: None });
                break;
            }
            let e = &st.entries[i];
            if e.use_probability && e.probability != 100.0 && !sticky_on[i] {
                let r = roll(opts.seed, e.id, len, 0x5052_4f42) * 100.0;
                if r > e.probability {
                    failed_prob[i] = true;
                    reasons.insert(
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
            if counted && text_tokens.saturating_add(tok.count(&new_content)) >= budget {
                overflowed = true;
                reasons.insert(
                    i,
                    RejectReason::Budget {
                        tokens: Some(tok.count(e.content)),
                    },
                );
                break;
            }
            is_active[i] = true;
            reasons.remove(&i);
            activated.push(i);
            pass_of[i] = count - 1;
        }
        let for_recursion: Vec<usize> = now
            .iter()
            .copied()
            .filter(|&i| !failed_prob[i] && !st.entries[i].prevent_recursion)
            .collect();

        let mut next = None;
        if recursive && !overflowed && !for_recursion.is_empty() {
            next = Some(State::Recursion);
        }
        if recursive && !overflowed && state_now == State::MinActivations && !buf.recurse.is_empty()
        {
            next = Some(State::Recursion);
        }
        if next.is_none()
            && !overflowed
            && opts.min_activations > 0
            && activated.len() < opts.min_activations
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
            if let Some(lv) = levels.next() {
                next = Some(State::Recursion);
                level = lv;
            }
        }
        scan_state = next;
        if scan_state.is_some() {
            let text = for_recursion
                .iter()
                .map(|&i| st.entries[i].content)
                .collect::<Vec<_>>()
                .join("\n");
            // SillyTavern 1.14 and 1.16 add nothing when the step left no recursion text (the
            // 2024 code added an empty part and a newline to the budget's text).
            if !text.is_empty() {
                all_text = format!("{text}\n{all_text}");
                buf.recurse.push(text);
            }
        }
    }

    // Next state (setTimedEffects): new records for activated entries without one.
    for &i in &activated {
        let e = &st.entries[i];
        let k = state_key(e.id);
        let at = cb.entries[e.rank as usize].at;
        let label = format!("{}#{}", cb.books[at.book].name, at.index);
        if e.sticky > 0 && !state.sticky.contains_key(&k) {
            state.sticky.insert(
                k.clone(),
                TimedRecord {
                    start: l,
                    end: l + e.sticky,
                    protected: false,
                    entry: label.clone(),
                },
            );
        }
        if e.cooldown > 0 && !state.cooldown.contains_key(&k) {
            state.cooldown.insert(
                k,
                TimedRecord {
                    start: l,
                    end: l + e.cooldown,
                    protected: false,
                    entry: label,
                },
            );
        }
    }

    // Prompt order: by position (ccv3's ranks), deeper first; in one place, order lowest first
    // and equal orders in reverse activation order (SillyTavern's sort, then unshift).
    let mut keyed: Vec<(u8, u64, u64, usize, usize)> = activated
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let e = &st.entries[i];
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
        let e: &CEntry<'a> = &cb.entries[st.entries[i].rank as usize];
        let t = tok.count(st.entries[i].content);
        tokens += t;
        let se = &st.entries[i];
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
            reason: why[i].clone().unwrap_or(ActivationReason::Constant),
            pass: pass_of[i],
        };
        sink.on_activated(&a);
        out.push(a);
    }
    let mut rejected: Vec<Rejected<'a>> = Vec::new();
    let mut idx: Vec<usize> = (0..n).filter(|i| !is_active[*i]).collect();
    idx.sort_by_key(|&i| {
        let at = cb.entries[st.entries[i].rank as usize].at;
        (at.book, at.index)
    });
    for i in idx {
        let reason = reasons.remove(&i).unwrap_or(RejectReason::NoMatch);
        if !opts.explain_all
            && matches!(
                reason,
                RejectReason::NoMatch | RejectReason::NoKeys | RejectReason::Disabled
            )
        {
            continue;
        }
        let e = &cb.entries[st.entries[i].rank as usize];
        let r = Rejected {
            entry: e.at,
            name: e.display_name(),
            reason,
        };
        if matches!(r.reason, RejectReason::Budget { .. }) {
            sink.on_cut(&r);
        } else {
            sink.on_suppressed(&r);
        }
        rejected.push(r);
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

/// SillyTavern's `filterByInclusionGroups` on the entries found in one step (`now`, in order).
#[allow(clippy::too_many_arguments)]
fn groups(
    st: &mut St<'_, '_>,
    now: &mut Vec<usize>,
    activated: &[usize],
    buf: &Buffer,
    base: usize,
    state: State,
    sticky_on: &[bool],
    cooldown_on: &[bool],
    delay_on: &[bool],
    opts: &ScanOptions,
    len: usize,
    reasons: &mut HashMap<usize, RejectReason>,
    texts: &mut HashMap<i64, Arc<str>>,
) {
    // Groups in first-seen order, members in `now` order.
    let mut names: Vec<String> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for &i in now.iter() {
        for g in st.entries[i].groups() {
            match names.iter().position(|n| n == g) {
                Some(p) => members[p].push(i),
                None => {
                    names.push(g.to_string());
                    members.push(vec![i]);
                }
            }
        }
    }
    if names.is_empty() {
        return;
    }
    // `newEntries.splice(newEntries.indexOf(entry), 1)`: an entry already gone removes the last.
    let remove =
        |now: &mut Vec<usize>, i: usize, g: &str, reasons: &mut HashMap<usize, RejectReason>| {
            let victim = match now.iter().position(|&x| x == i) {
                Some(p) => now.remove(p),
                None => match now.pop() {
                    Some(v) => v,
                    None => return,
                },
            };
            reasons.insert(
                victim,
                RejectReason::Group {
                    group: g.to_string(),
                    winner: None,
                },
            );
        };
    // Timed effects.
    let mut has_sticky = vec![false; names.len()];
    for (gi, g) in names.iter().enumerate() {
        let group = members[gi].clone();
        if group.iter().any(|&i| sticky_on[i]) {
            for &i in &group {
                if !sticky_on[i] {
                    remove(now, i, g, reasons);
                }
            }
            has_sticky[gi] = true;
        }
        for &i in &group {
            if cooldown_on[i] {
                remove(now, i, g, reasons);
            }
        }
        for &i in &group {
            if delay_on[i] {
                remove(now, i, g, reasons);
            }
        }
    }
    // Scoring.
    for gi in 0..names.len() {
        let scored_any = opts.group_scoring
            || members[gi]
                .iter()
                .any(|&i| st.entries[i].group_scoring == Some(true));
        if !scored_any || has_sticky[gi] {
            continue;
        }
        let group = members[gi].clone();
        let scores: Vec<u32> = group
            .iter()
            .map(|&i| {
                let text = buf.text(texts, &st.entries[i], base, state);
                st.score(&text, i)
            })
            .collect();
        let max = scores.iter().copied().max().unwrap_or(0);
        let mut kept = Vec::new();
        for (k, &i) in group.iter().enumerate() {
            let scored = st.entries[i].group_scoring.unwrap_or(opts.group_scoring);
            if scored && scores[k] < max {
                remove(now, i, &names[gi], reasons);
            } else {
                kept.push(i);
            }
        }
        members[gi] = kept;
    }
    // Winners.
    for gi in 0..names.len() {
        let g = names[gi].clone();
        let group = members[gi].clone();
        if has_sticky[gi] {
            continue;
        }
        if activated.iter().any(|&i| st.entries[i].group == g) {
            for &i in &group {
                remove(now, i, &g, reasons);
            }
            continue;
        }
        if group.len() <= 1 {
            continue;
        }
        let mut prios: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&i| st.entries[i].group_override)
            .collect();
        prios.sort_by(|&a, &b| st.entries[b].order.total_cmp(&st.entries[a].order));
        let winner = if let Some(&w) = prios.first() {
            Some(w)
        } else {
            let total: f64 = group.iter().map(|&i| st.entries[i].group_weight).sum();
            let first = &st.entries[group[0]];
            let r = roll(opts.seed, first.id, len, g.len() as u64 ^ 0x4752_4f55) * total;
            let mut cur = 0.0;
            let mut w = None;
            for &i in &group {
                cur += st.entries[i].group_weight;
                if r <= cur {
                    w = Some(i);
                    break;
                }
            }
            w
        };
        let Some(w) = winner else { continue };
        for &i in &group {
            if i != w {
                remove(now, i, &g, reasons);
            }
        }
    }
}
