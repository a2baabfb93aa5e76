//! An entry as SillyTavern's `checkWorldInfo` reads it: its fields and `extensions` knobs in
//! SillyTavern's types, its decorator header, its position.

use super::super::ScanOptions;
use crate::compile::{CEntry, CompiledBooks, DepthSpec, EntryRef};
use crate::position::Position;
use ccv3::decorator::DecoratorRole;
use serde_json::Value;
use std::borrow::Cow;

/// The `extensions` fields [`StEntry::new`] reads (every name its `get` is asked for).
const EXT_FIELDS: [&str; 22] = [
    ccv3::lorebook::worldinfo::STASH_KEY,
    "case_sensitive",
    "cooldown",
    "delay",
    "delay_until_recursion",
    "depth",
    "exclude_recursion",
    "group",
    "group_override",
    "group_weight",
    "ignore_budget",
    "match_whole_words",
    "position",
    "prevent_recursion",
    "probability",
    "role",
    "scan_depth",
    "selectiveLogic",
    "sticky",
    "triggers",
    "useProbability",
    "use_group_scoring",
];

/// One entry as SillyTavern sees it.
pub(super) struct StEntry<'a> {
    pub(super) rank: u32,
    /// Where it stands in the compiler's input (book, index).
    pub(super) at: EntryRef,
    pub(super) id: u64,
    pub(super) keys: Vec<String>,
    pub(super) secondary: Vec<String>,
    pub(super) selective: bool,
    pub(super) logic: Option<i64>,
    pub(super) constant: bool,
    pub(super) disabled: bool,
    /// False when its `triggers` (a non-empty array) leave out the scan's generation type.
    pub(super) triggered: bool,
    pub(super) order: f64,
    pub(super) use_probability: bool,
    pub(super) probability: f64,
    pub(super) group: String,
    pub(super) group_override: bool,
    pub(super) group_weight: f64,
    pub(super) group_scoring: Option<bool>,
    pub(super) scan_depth: Option<i64>,
    pub(super) case_sensitive: Option<bool>,
    pub(super) whole_words: Option<bool>,
    pub(super) sticky: u64,
    pub(super) cooldown: u64,
    pub(super) delay: u64,
    pub(super) delay_level: Option<u64>,
    pub(super) exclude_recursion: bool,
    pub(super) prevent_recursion: bool,
    /// `ignoreBudget` (`extensions.ignore_budget`): added even when the budget is spent.
    pub(super) ignore_budget: bool,
    /// SillyTavern activated it ([`ScanOptions::st_activated`]); `None` without that set.
    pub(super) st_won: Option<bool>,
    pub(super) activate: bool,
    pub(super) dont_activate: bool,
    pub(super) content: &'a str,
    /// Where it goes: SillyTavern's `position`, `depth` and `role` numbers (decorators such as
    /// `@@depth` are not SillyTavern's and do not move it).
    pub(super) position: Position,
    pub(super) depth: Option<u64>,
    pub(super) role: Option<DecoratorRole>,
}

pub(super) fn v_bool(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Null => None,
        Value::Number(n) => Some(n.as_f64().is_some_and(|f| f != 0.0)),
        Value::String(s) => Some(!s.is_empty()),
        _ => Some(true),
    }
}

pub(super) fn v_f64(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// SillyTavern's decorator header: `(activate, dont_activate, content without the header)`.
/// Only content starting with `@@` has one; `@@@` lines are fallbacks for an unknown decorator
/// just before.
pub(super) fn st_decorators(content: &str) -> (bool, bool, &str) {
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
    pub(super) fn new(
        cb: &CompiledBooks<'a>,
        rank: u32,
        opts: &ScanOptions,
        len: usize,
    ) -> StEntry<'a> {
        let e: &CEntry<'a> = &cb.entries[rank as usize];
        // The fields read below, borrowed from the extensions (no copy of the whole map for
        // every entry at every scan); a name written twice keeps its last value, as a map does.
        let mut picked: Vec<(&str, Cow<'_, Value>)> = Vec::new();
        e.entry.extensions.visit(
            |k| EXT_FIELDS.contains(&k),
            |k, v| match picked.iter_mut().find(|(n, _)| *n == k) {
                Some(slot) => slot.1 = v,
                None => {
                    if let Some(name) = EXT_FIELDS.iter().find(|n| **n == k) {
                        picked.push((name, v));
                    }
                }
            },
        );
        let get = |k: &str| {
            debug_assert!(EXT_FIELDS.contains(&k), "{k} is not in EXT_FIELDS");
            picked
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.as_ref())
        };
        let resolve = |k: &String| crate::resolve_key_macros(k, &opts.char_name, &opts.user_name);
        let (activate, dont_activate, content) = st_decorators(&e.entry.content);
        let delay_level = match get("delay_until_recursion") {
            Some(Value::Bool(true)) => Some(1),
            v => v_f64(v).filter(|f| *f > 0.0).map(|f| f as u64),
        };
        // A World Info file as stored: SillyTavern's placement `switch` compares the field
        // with `===`, so only a number 0-7 places the entry (7 with an outlet name).
        let world_info = cb.books[e.at.book].world_info;
        // The file's own `extensions.position` fills `position` when the file had none: the
        // reader's stash lists it `absent` then.
        let absent = get(ccv3::lorebook::worldinfo::STASH_KEY)
            .and_then(|s| s.get("absent"))
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|f| f == "position"));
        let st_number = match get("position") {
            _ if world_info && absent => None,
            Some(Value::Number(n)) if world_info => n.as_f64(),
            _ if world_info => None,
            v => v_f64(v),
        };
        let unplaced = world_info
            && match st_number {
                Some(f) if f.fract() == 0.0 && (0.0..=6.0).contains(&f) => false,
                Some(7.0) => !matches!(&e.position, Position::Outlet(n) if !n.is_empty()),
                _ => true,
            };
        let st_position = match st_number.map(|f| f as i64) {
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
            _ if unplaced => (Position::Nowhere, None, None),
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
            at: e.at,
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
            triggered: triggered(get("triggers"), opts.trigger.as_str()),
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
            ignore_budget: v_bool(get("ignore_budget")).unwrap_or(false),
            st_won: opts.st_activated.as_ref().map(|set| {
                let uid = match &e.entry.id {
                    Some(Value::Number(n)) => n.to_string(),
                    Some(Value::String(s)) => s.clone(),
                    _ => return false,
                };
                cb.st_worlds(e.at.book)
                    .any(|world| set.contains(&format!("{world}.{uid}")))
            }),
            activate,
            dont_activate,
            content,
        }
    }

    pub(super) fn groups(&self) -> Vec<&str> {
        split_groups(&self.group)
    }
}

/// A group text split as SillyTavern does (`/,\s*/`, empty parts dropped).
pub(super) fn split_groups(g: &str) -> Vec<&str> {
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

/// SillyTavern's generation type filter (`world-info.js` of 1.16.0, lines 4607-4614): an entry
/// whose `triggers` is a non-empty array runs only for a generation type in it, compared
/// exactly; any other `triggers` value filters nothing.
fn triggered(triggers: Option<&Value>, trigger: &str) -> bool {
    match triggers {
        Some(Value::Array(a)) if !a.is_empty() => a.iter().any(|t| t.as_str() == Some(trigger)),
        _ => true,
    }
}
