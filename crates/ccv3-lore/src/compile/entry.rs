//! One entry's compiled facts: its keys (ranges in the key table), decorators, the SillyTavern
//! knobs of its `extensions`, its position, depth, role, probability and the rarely set rest.

use super::input::{EntryRef, LorebookCompiler};
use super::keys::{Builder, DiagSlot, KeyRange};
use crate::position::Position;
use crate::selective_logic::SelectiveLogic;
use ccv3::decorator::{self, DecoratorRole, Decorators};
use ccv3::{Diagnostic, Entry};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

static NO_DECORATORS: LazyLock<Decorators> = LazyLock::new(Decorators::default);

/// An entry's decorators; `None` (most entries) stands for none at all, without an allocation.
/// Shared with the scan's activations ([`Dec::shared`]).
#[derive(Debug)]
pub(crate) struct Dec(Option<Arc<Decorators>>);

impl Dec {
    /// The decorators for an [`Activation`](crate::Activation) (`None`: none at all).
    pub(crate) fn shared(&self) -> Option<Arc<Decorators>> {
        self.0.clone()
    }
}

impl std::ops::Deref for Dec {
    type Target = Decorators;
    fn deref(&self) -> &Decorators {
        self.0.as_deref().unwrap_or(&NO_DECORATORS)
    }
}

/// Where an entry's depth comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum DepthSpec {
    None,
    Fixed(u64),
    /// `@@reverse_depth N`: total message count minus N.
    Reverse(i64),
}

#[derive(Debug)]
pub(crate) struct CEntry<'a> {
    pub at: EntryRef,
    pub entry: &'a Entry,
    pub body: &'a str,
    pub body_empty: bool,
    pub dec: Dec,
    pub enabled: bool,
    pub constant: bool,
    pub primary: KeyRange,
    pub secondary: KeyRange,
    pub exclude: KeyRange,
    pub selective: bool,
    pub logic: SelectiveLogic,
    pub whole_words: Option<bool>,
    pub scan_depth: Option<u64>,
    pub order: f64,
    pub priority: f64,
    pub position: Position,
    /// The entry has no `position` field (nor a decorator or SillyTavern number that places
    /// it): it goes `after_char` by default ([`position_of`]).
    pub position_default: bool,
    pub depth: DepthSpec,
    pub role: Option<DecoratorRole>,
    pub probability: Option<f64>,
    pub exclude_recursion: bool,
    pub prevent_recursion: bool,
    pub ignore_budget: bool,
    /// 0-3: the strategy's book-kind rank (chat, persona, then character/global first).
    pub kind_rank: u8,
    /// What few entries set; `None` for the defaults ([`CEntry::rare`]).
    pub rare: Option<Box<Rare>>,
}

/// The parts of an entry that few entries set (extra key groups, inclusion groups, timed
/// effects, recursion levels, triggers): boxed, so the rest carry a null pointer instead.
#[derive(Debug)]
pub(crate) struct Rare {
    /// `@@additional_keys` groups, each of which must match.
    pub additional: Vec<KeyRange>,
    pub groups: Vec<String>,
    pub group_override: bool,
    pub group_weight: f64,
    pub group_scoring: Option<bool>,
    pub sticky: u64,
    pub cooldown: u64,
    pub delay: u64,
    pub delay_until_recursion: Option<u64>,
    pub triggers: Vec<String>,
    /// SillyTavern's character filter (`characterFilter`).
    pub char_filter: Option<Box<CharFilter>>,
    /// The extra texts its keys are matched against (SillyTavern's `match_*` flags): a set of
    /// [`crate::source::Source`] bits.
    pub sources: u8,
}

/// SillyTavern's character filter of an entry (World Info doc, "Character Filter"): the entry
/// is activated only for the characters named or tagged here, or, with `exclude`, for all
/// others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CharFilter {
    pub exclude: bool,
    pub names: Vec<String>,
    pub tags: Vec<String>,
}

impl CharFilter {
    /// The filter of `v` (`{"isExclude", "names", "tags"}`, or `is_exclude`); `None` when it
    /// names no character and no tag (then it filters nothing).
    fn of(v: Option<&Value>) -> Option<Box<CharFilter>> {
        let o = v?.as_object()?;
        let f = CharFilter {
            exclude: val_bool(o.get("isExclude").or_else(|| o.get("is_exclude"))).unwrap_or(false),
            names: val_strings(o.get("names")),
            tags: val_strings(o.get("tags")),
        };
        (!f.names.is_empty() || !f.tags.is_empty()).then(|| Box::new(f))
    }
}

impl Rare {
    /// What an entry that sets none of these has.
    const NONE: Rare = Rare {
        additional: Vec::new(),
        groups: Vec::new(),
        group_override: false,
        group_weight: 100.0,
        group_scoring: None,
        sticky: 0,
        cooldown: 0,
        delay: 0,
        delay_until_recursion: None,
        triggers: Vec::new(),
        char_filter: None,
        sources: 0,
    };

    fn is_none(&self) -> bool {
        self.additional.is_empty()
            && self.groups.is_empty()
            && !self.group_override
            && self.group_weight == 100.0
            && self.group_scoring.is_none()
            && self.sticky == 0
            && self.cooldown == 0
            && self.delay == 0
            && self.delay_until_recursion.is_none()
            && self.triggers.is_empty()
            && self.char_filter.is_none()
            && self.sources == 0
    }
}

/// [`Rare::NONE`], for entries without a box.
static NO_RARE: Rare = Rare::NONE;

impl<'a> CEntry<'a> {
    /// Moves the entry's key ranges `by` keys (its keys were compiled into a table that another
    /// took in: [`Builder::absorb`]). Empty ranges point nowhere; the unset ones (0, 0) are left
    /// as they are.
    pub(super) fn shift_keys(&mut self, by: u32) {
        let shift = |r: &mut KeyRange| {
            if r.start > 0 || r.len > 0 {
                r.start += by;
            }
        };
        shift(&mut self.primary);
        shift(&mut self.secondary);
        shift(&mut self.exclude);
        if let Some(r) = &mut self.rare {
            r.additional.iter_mut().for_each(shift);
        }
    }

    /// The entry's rarely set parts (the defaults when it has none).
    pub(crate) fn rare(&self) -> &Rare {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }

    /// The entry's `name`, else its `comment` (empty ones skipped).
    pub(crate) fn display_name(&self) -> Option<&'a str> {
        self.entry.name.as_deref().filter(|s| !s.is_empty()).or(self
            .entry
            .comment
            .as_deref()
            .filter(|s| !s.is_empty()))
    }
}

// ---- lenient readers of SillyTavern knobs in `extensions` ----

/// A number (or a numeric string, or a boolean as 0/1), when finite.
pub(crate) fn val_f64(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// A non-negative number, as an integer.
pub(crate) fn val_u64(v: Option<&Value>) -> Option<u64> {
    val_f64(v).filter(|f| *f >= 0.0).map(|f| f.min(1e15) as u64)
}

/// A boolean (or 0/1, or `"true"`/`"false"`).
pub(crate) fn val_bool(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|f| f != 0.0),
        Value::String(s) => match s.trim() {
            "true" | "1" => Some(true),
            "false" | "0" | "" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Strings: an array's, or a comma-separated string's, trimmed, empty ones left out.
fn val_strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// A SillyTavern knob of an entry's `extensions`.
#[derive(Debug, Clone, Copy)]
enum Knob {
    SelectiveLogic,
    DisplayIndex,
    UseProbability,
    ExcludeRecursion,
    CaseSensitive,
    ScanDepth,
    Role,
    Probability,
    DelayUntilRecursion,
    MatchWholeWords,
    Group,
    GroupOverride,
    GroupWeight,
    UseGroupScoring,
    Sticky,
    Cooldown,
    Delay,
    PreventRecursion,
    IgnoreBudget,
    Triggers,
    Position,
    Depth,
    OutletName,
    CharacterFilter,
    Stash,
    MatchPersonaDescription,
    MatchCharacterDescription,
    MatchCharacterPersonality,
    MatchCharacterDepthPrompt,
    MatchScenario,
    MatchCreatorNotes,
}

impl Knob {
    /// How many knobs there are.
    const COUNT: usize = 31;

    /// The knob an `extensions` key names.
    fn of(name: &str) -> Option<Knob> {
        Some(match name {
            "selectiveLogic" => Knob::SelectiveLogic,
            "display_index" => Knob::DisplayIndex,
            "useProbability" => Knob::UseProbability,
            "exclude_recursion" => Knob::ExcludeRecursion,
            "case_sensitive" => Knob::CaseSensitive,
            "scan_depth" => Knob::ScanDepth,
            "role" => Knob::Role,
            "probability" => Knob::Probability,
            "delay_until_recursion" => Knob::DelayUntilRecursion,
            "match_whole_words" => Knob::MatchWholeWords,
            "group" => Knob::Group,
            "group_override" => Knob::GroupOverride,
            "group_weight" => Knob::GroupWeight,
            "use_group_scoring" => Knob::UseGroupScoring,
            "sticky" => Knob::Sticky,
            "cooldown" => Knob::Cooldown,
            "delay" => Knob::Delay,
            "prevent_recursion" => Knob::PreventRecursion,
            "ignore_budget" => Knob::IgnoreBudget,
            "triggers" => Knob::Triggers,
            "position" => Knob::Position,
            "depth" => Knob::Depth,
            "outlet_name" => Knob::OutletName,
            "character_filter" | "characterFilter" => Knob::CharacterFilter,
            ccv3::lorebook::worldinfo::STASH_KEY => Knob::Stash,
            "match_persona_description" => Knob::MatchPersonaDescription,
            "match_character_description" => Knob::MatchCharacterDescription,
            "match_character_personality" => Knob::MatchCharacterPersonality,
            "match_character_depth_prompt" => Knob::MatchCharacterDepthPrompt,
            "match_scenario" => Knob::MatchScenario,
            "match_creator_notes" => Knob::MatchCreatorNotes,
            _ => return None,
        })
    }
}

/// The SillyTavern knobs of an entry's `extensions`, found in one pass over the object, read
/// straight from its text when it is still the text of the file.
struct Knobs<'o> {
    /// Whether the entry carries SillyTavern's World Info knobs (it came from SillyTavern, which
    /// writes `use_regex: true` on every exported entry and ignores it on import): one of
    /// [`ccv3::validate::SILLYTAVERN_MARKERS`] is present.
    st_marked: bool,
    /// Where each knob's value is in `found` ([`u8::MAX`]: the entry does not have it).
    slot: [u8; Knob::COUNT],
    /// The values found (a buffer that goes from entry to entry).
    found: Vec<Cow<'o, Value>>,
}

impl<'o> Knobs<'o> {
    /// Reads the knobs of `ext` into `found` (cleared first; hand it back with
    /// [`Knobs::into_buffer`]).
    fn read(ext: &'o ccv3::Extensions, mut found: Vec<Cow<'o, Value>>) -> Self {
        found.clear();
        let mut slot = [u8::MAX; Knob::COUNT];
        ext.visit(
            |name| Knob::of(name).is_some(),
            |name, v| {
                if let Some(k) = Knob::of(name) {
                    match slot[k as usize] {
                        u8::MAX if found.len() < usize::from(u8::MAX) => {
                            slot[k as usize] = found.len() as u8;
                            found.push(v);
                        }
                        u8::MAX => {}
                        // A name written twice: the last value counts, as in a map.
                        at => found[usize::from(at)] = v,
                    }
                }
            },
        );
        let mut k = Knobs {
            st_marked: false,
            slot,
            found,
        };
        // The validator's list, so both read `use_regex` alike.
        k.st_marked = ccv3::validate::SILLYTAVERN_MARKERS
            .iter()
            .filter_map(|name| Knob::of(name))
            .any(|n| k.get(n).is_some());
        k
    }

    /// The knob's value, when the entry has it.
    fn get(&self, k: Knob) -> Option<&Value> {
        self.found
            .get(usize::from(self.slot[k as usize]))
            .map(|v| &**v)
    }

    /// The buffer, for the next entry.
    fn into_buffer(self) -> Vec<Cow<'o, Value>> {
        self.found
    }
}

/// An entry's position in the prompt and where its depth comes from: `@@position`, else
/// `@@depth`, else `@@reverse_depth`, else SillyTavern's `position` number, else the spec's
/// `position`, else `after_char`, as SillyTavern's card import places an entry whose
/// `position` is not `before_char` (issue 14). The flag is true in that last case only: the
/// entry wrote no position at all, and the explanation says so.
fn position_of(e: &Entry, d: &Decorators, kn: &Knobs<'_>) -> (Position, DepthSpec, bool) {
    if let Some(p) = &d.position {
        let pos = match p.as_str() {
            "before_char" => Position::BeforeChar,
            "after_char" => Position::AfterChar,
            other => Position::Named(other.to_string()),
        };
        return (pos, DepthSpec::None, false);
    }
    if let Some(depth) = d.depth {
        return (
            Position::AtDepth,
            DepthSpec::Fixed(depth.max(0) as u64),
            false,
        );
    }
    if let Some(r) = d.reverse_depth {
        return (Position::AtDepth, DepthSpec::Reverse(r), false);
    }
    let st = val_f64(kn.get(Knob::Position)).or_else(|| match e.extra.get("position") {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    });
    if let Some(n) = st {
        let pos = match n as i64 {
            0 => Position::BeforeChar,
            1 => Position::AfterChar,
            2 => Position::AuthorsNoteTop,
            3 => Position::AuthorsNoteBottom,
            4 => {
                let depth = val_u64(kn.get(Knob::Depth)).unwrap_or(4);
                return (Position::AtDepth, DepthSpec::Fixed(depth), false);
            }
            5 => Position::ExamplesTop,
            6 => Position::ExamplesBottom,
            7 => Position::Outlet(
                kn.get(Knob::OutletName)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ),
            _ => Position::AfterChar,
        };
        return (pos, DepthSpec::None, false);
    }
    match e.position.as_deref() {
        Some("before_char") => (Position::BeforeChar, DepthSpec::None, false),
        Some(_) => (Position::AfterChar, DepthSpec::None, false),
        None => (Position::AfterChar, DepthSpec::None, true),
    }
}

/// An entry's character filter: the `character_filter` extension (or `characterFilter`), else
/// the entry's own `character_filter` field (where SillyTavern keeps it in a card's book), else
/// the `characterFilter` of a World Info file that the reader kept in the entry's stash.
fn char_filter_of(e: &Entry, kn: &Knobs<'_>) -> Option<Box<CharFilter>> {
    CharFilter::of(kn.get(Knob::CharacterFilter))
        .or_else(|| CharFilter::of(e.extra.get("character_filter")))
        .or_else(|| {
            CharFilter::of(
                kn.get(Knob::Stash)
                    .and_then(|s| s.get("fields"))
                    .and_then(|f| f.get("characterFilter")),
            )
        })
}

/// An entry's `match_*` flags as a set of [`crate::source::Source`] bits.
fn sources_of(kn: &Knobs<'_>) -> u8 {
    use crate::source::Source;
    [
        (Knob::MatchPersonaDescription, Source::PersonaDescription),
        (
            Knob::MatchCharacterDescription,
            Source::CharacterDescription,
        ),
        (
            Knob::MatchCharacterPersonality,
            Source::CharacterPersonality,
        ),
        (
            Knob::MatchCharacterDepthPrompt,
            Source::CharacterDepthPrompt,
        ),
        (Knob::MatchScenario, Source::Scenario),
        (Knob::MatchCreatorNotes, Source::CreatorNotes),
    ]
    .iter()
    .filter(|(k, _)| val_bool(kn.get(*k)).unwrap_or(false))
    .fold(0, |acc, (_, s)| acc | s.bit())
}

impl LorebookCompiler {
    /// Compiles one entry (`ei` of book `bi`, named `bn`) with the builder `b`, raising
    /// `max_depth` to the entry's own scan depth.
    pub(super) fn compile_entry<'a>(
        &self,
        b: &mut Builder<'a>,
        (bi, ei, bn): (usize, usize, &str),
        e: &'a Entry,
        names: (&str, &str, ccv3_cbs::Dialect),
        max_depth: &mut u64,
    ) -> CEntry<'a> {
        let parsed = decorator::parse(&e.content);
        for p in &parsed.problems {
            b.diags.push(DiagSlot::Ready(Diagnostic::info(
                "lore-decorator",
                format!("{bn}: entries[{ei}].content"),
                format!("line {}: {}", p.line, p.message),
            )));
        }
        // No decorator header: the body is the whole content and the decorators are none.
        let has_dec = parsed.body.len() != e.content.len();
        let dec = Dec(if has_dec {
            Some(Arc::new(parsed.decorators))
        } else {
            None
        });
        let kn = Knobs::read(&e.extensions, std::mem::take(&mut b.knobs));
        let regex_mode = e.use_regex && !kn.st_marked;
        let case_sensitive = e
            .case_sensitive
            .or_else(|| val_bool(kn.get(Knob::CaseSensitive)))
            .unwrap_or(self.case_sensitive);
        let primary = b.keys(&e.keys, regex_mode, case_sensitive, names, (bn, ei, "keys"));
        let sec_raw: &'a [String] = e.secondary_keys.as_deref().unwrap_or(&[]);
        let secondary = if regex_mode {
            KeyRange::default()
        } else {
            b.keys(
                sec_raw,
                false,
                case_sensitive,
                names,
                (bn, ei, "secondary_keys"),
            )
        };
        let additional = match &dec.0 {
            Some(d) if !d.additional_keys.is_empty() => d
                .additional_keys
                .iter()
                .map(|g| {
                    b.keys_owned(
                        g,
                        regex_mode,
                        case_sensitive,
                        names,
                        (bn, ei, "@@additional_keys"),
                    )
                })
                .collect(),
            _ => Vec::new(),
        };
        let exclude = match &dec.0 {
            Some(d) if !regex_mode && !d.exclude_keys.is_empty() => b.keys_owned(
                &d.exclude_keys,
                false,
                case_sensitive,
                names,
                (bn, ei, "@@exclude_keys"),
            ),
            _ => KeyRange::default(),
        };
        let logic = match val_f64(kn.get(Knob::SelectiveLogic)).map(|f| f as i64) {
            Some(1) => SelectiveLogic::NotAll,
            Some(2) => SelectiveLogic::NotAny,
            Some(3) => SelectiveLogic::AndAll,
            _ => SelectiveLogic::AndAny,
        };
        let entry_depth = dec.scan_depth.or_else(|| val_u64(kn.get(Knob::ScanDepth)));
        *max_depth = (*max_depth).max(entry_depth.unwrap_or(0));
        let order = dec.order.unwrap_or_else(|| e.insertion_order_f64());
        let priority = dec.priority.or_else(|| e.priority_f64()).unwrap_or(order);
        let (position, depth, position_default) = position_of(e, &dec, &kn);
        let role = dec
            .role
            .or(match val_f64(kn.get(Knob::Role)).map(|f| f as i64) {
                Some(0) => Some(DecoratorRole::System),
                Some(1) => Some(DecoratorRole::User),
                Some(2) => Some(DecoratorRole::Assistant),
                _ => None,
            });
        let probability = dec.probability.or_else(|| {
            if val_bool(kn.get(Knob::UseProbability)).unwrap_or(true) {
                val_f64(kn.get(Knob::Probability)).map(|p| p.clamp(0.0, 100.0))
            } else {
                None
            }
        });
        let delay_until_recursion = match kn.get(Knob::DelayUntilRecursion) {
            Some(Value::Bool(true)) => Some(1),
            Some(v) if !v.is_boolean() => {
                val_u64(kn.get(Knob::DelayUntilRecursion)).filter(|n| *n > 0)
            }
            _ => None,
        };
        let rare = Rare {
            additional,
            groups: val_strings(kn.get(Knob::Group)),
            group_override: val_bool(kn.get(Knob::GroupOverride)).unwrap_or(false),
            group_weight: val_f64(kn.get(Knob::GroupWeight)).unwrap_or(100.0).max(0.0),
            group_scoring: val_bool(kn.get(Knob::UseGroupScoring)),
            sticky: val_u64(kn.get(Knob::Sticky)).unwrap_or(0),
            cooldown: val_u64(kn.get(Knob::Cooldown)).unwrap_or(0),
            delay: val_u64(kn.get(Knob::Delay)).unwrap_or(0),
            delay_until_recursion,
            triggers: val_strings(kn.get(Knob::Triggers)),
            char_filter: char_filter_of(e, &kn),
            sources: sources_of(&kn),
        };
        let compiled = CEntry {
            at: EntryRef {
                book: bi,
                index: ei,
            },
            entry: e,
            body: parsed.body,
            body_empty: parsed.body.trim().is_empty(),
            enabled: e.enabled,
            constant: e.constant.unwrap_or(false) && !regex_mode,
            primary,
            secondary,
            exclude,
            selective: e.selective.unwrap_or(false),
            logic,
            whole_words: val_bool(kn.get(Knob::MatchWholeWords)),
            scan_depth: entry_depth,
            order,
            priority,
            position,
            position_default,
            depth,
            role,
            probability,
            exclude_recursion: val_bool(kn.get(Knob::ExcludeRecursion)).unwrap_or(false),
            prevent_recursion: val_bool(kn.get(Knob::PreventRecursion)).unwrap_or(false),
            ignore_budget: val_bool(kn.get(Knob::IgnoreBudget)).unwrap_or(false),
            kind_rank: 0,
            rare: (!rare.is_none()).then(|| Box::new(rare)),
            dec,
        };
        b.knobs = kn.into_buffer();
        compiled
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn issue13_every_sillytavern_marker_is_a_knob() {
        // The engine and the validator decide alike whether SillyTavern wrote an entry.
        for name in ccv3::validate::SILLYTAVERN_MARKERS {
            assert!(super::Knob::of(name).is_some(), "{name}");
        }
    }
}
