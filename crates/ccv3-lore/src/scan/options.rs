//! The options of a scan ([`ScanOptions`]): depths, budgets, names, the texts beside the chat
//! ([`MatchSources`]), the generation type ([`Trigger`]) and whose results to reproduce
//! ([`Compat`]).

use crate::source::Source;

/// The most passes a scan runs, whatever the options say.
pub const MAX_PASSES: usize = 64;

/// Options of one scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Scan depth for books and entries that do not set one (SillyTavern's default: 2).
    pub scan_depth: u64,
    /// Recursion for books whose `recursive_scanning` is unset.
    pub recursive: bool,
    /// The most passes (0: no limit but [`MAX_PASSES`]). 1 disables recursion.
    pub max_recursion_steps: usize,
    /// Scan deeper until this many entries are active (0: off).
    pub min_activations: usize,
    /// The deepest min activations may scan (0: the whole chat).
    pub min_activations_depth_max: u64,
    /// Prefix each message with `name: ` in the scan text (SillyTavern's default: on).
    pub include_names: bool,
    /// Whole-word matching for entries that do not say (SillyTavern's default: on).
    pub match_whole_words: bool,
    /// Group scoring for entries that do not say.
    pub group_scoring: bool,
    /// A budget over all books (each book's `token_budget` applies too).
    pub token_budget: Option<usize>,
    /// The model's maximum context; with it `@@ignore_on_max_context` entries are cut first.
    pub max_context: Option<usize>,
    /// Tokens the rest of the prompt already takes (counted against `max_context`).
    pub context_tokens: usize,
    /// The active greeting (0 = `first_mes`); `None` ignores `@@is_greeting`.
    pub greeting: Option<usize>,
    /// The active user icon's name; `None` ignores `@@is_user_icon`.
    pub user_icon: Option<String>,
    /// The generation type: entries whose `triggers` list does not name it are not activated
    /// (SillyTavern's World Info doc, "Triggers"; default [`Trigger::Normal`]).
    pub trigger: Trigger,
    /// A ceiling on the budget of all books, whatever sets it ([`ScanOptions::token_budget`],
    /// the room [`ScanOptions::max_context`] leaves); alone, it is the budget of all books
    /// (SillyTavern's "Budget Cap").
    pub budget_cap: Option<usize>,
    /// The character's name, for messages without a name.
    pub char_name: String,
    /// The user's name, for messages without a name.
    pub user_name: String,
    /// The character's other names (the card's name, its file name without extension), for
    /// entries' character filters; [`ScanOptions::char_name`] counts too.
    pub character_names: Vec<String>,
    /// The character's tags, for entries' character filters.
    pub character_tags: Vec<String>,
    /// The texts beside the chat that entries' `match_*` flags add to their scan text.
    pub sources: MatchSources,
    /// The seed of every roll (probability, group weights).
    pub seed: u64,
    /// Explain every entry, not only those that had a chance (costs time proportional to the books).
    pub explain_all: bool,
    /// Check the candidates the budget cut without checking them (not every entry, as
    /// `explain_all` does): those that would have been activated are rejected as
    /// `budget (N tokens)`, with their token count, the others with their own reason; none is
    /// left [`ScanResult::unchecked`](super::ScanResult::unchecked). What a prompt needs to list every lorebook entry it cut.
    pub explain_cut: bool,
    /// The most steps one regex search may take (one key on one scan window or one piece of
    /// recursion text; see [`crate::jsregex`]): a search that needs more does not match, and its
    /// entry is explained `regex-budget`. The default, [`REGEX_KEY_STEPS`], is far above what
    /// real keys take and is spent in a few tens of milliseconds.
    pub regex_key_steps: u64,
    /// The most steps all regex searches of one scan may take together; once spent, the
    /// remaining regex keys do not match (each entry explained `regex-budget`). The default,
    /// [`REGEX_SCAN_STEPS`], bounds a scan's regex work to well under a second.
    pub regex_scan_steps: u64,
    /// Whose results to reproduce: the spec and SillyTavern's documentation (the default), or
    /// SillyTavern 1.15's code ([`Compat::SillyTavern`]; see `docs/sillytavern-compat.md`).
    pub compat: Compat,
    /// Whether the scan may explain many budget-cut entries on a second thread (default
    /// `false`: everything on the calling thread). Threads start only with the `parallel`
    /// feature.
    pub threads: bool,
    /// In [`Compat::SillyTavern`]: the entries SillyTavern itself activated on the same
    /// generation, as `world.uid` (its `allActivatedEntries` keys, `world-info.js` of 1.19.0,
    /// line 5075, and the entries of its `WORLD_INFO_ACTIVATED` event), so its random draws are
    /// replayed instead of rolled: a probability roll passes when the entry is in the set, and
    /// an inclusion group's weighted draw is won by its first member in the set (no member:
    /// every member loses). Which entries match keys is still
    /// decided by the scan. A book's `world` is its name or its own `name`. `None` (the
    /// default): seeded rolls; [`crate::st_activated_set`] reads the set from JSON.
    pub st_activated: Option<std::sync::Arc<std::collections::HashSet<String>>>,
}

/// The generation type a scan is for (SillyTavern's World Info doc, "Triggers"): an entry whose
/// `triggers` extension lists generation types is activated only for those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trigger {
    /// A regular message generation request.
    #[default]
    Normal,
    /// The Continue button.
    Continue,
    /// The Impersonate button.
    Impersonate,
    /// A generation triggered by swiping.
    Swipe,
    /// The Regenerate button.
    Regenerate,
    /// A background generation (extensions, scripts).
    Quiet,
}

impl Trigger {
    /// Every generation type, in the documentation's order.
    pub const ALL: [Trigger; 6] = [
        Trigger::Normal,
        Trigger::Continue,
        Trigger::Impersonate,
        Trigger::Swipe,
        Trigger::Regenerate,
        Trigger::Quiet,
    ];

    /// The name SillyTavern writes in `triggers`: `normal`, `continue`, `impersonate`, `swipe`,
    /// `regenerate`, `quiet`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Normal => "normal",
            Trigger::Continue => "continue",
            Trigger::Impersonate => "impersonate",
            Trigger::Swipe => "swipe",
            Trigger::Regenerate => "regenerate",
            Trigger::Quiet => "quiet",
        }
    }

    /// The generation type named `s` (as [`Trigger::as_str`] writes it, any case).
    pub fn parse(s: &str) -> Option<Trigger> {
        Trigger::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// The default of [`ScanOptions::regex_key_steps`].
pub const REGEX_KEY_STEPS: u64 = 2_000_000;

/// The default of [`ScanOptions::regex_scan_steps`].
pub const REGEX_SCAN_STEPS: u64 = 40_000_000;

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            scan_depth: 2,
            recursive: false,
            max_recursion_steps: 0,
            min_activations: 0,
            min_activations_depth_max: 0,
            include_names: true,
            match_whole_words: true,
            group_scoring: false,
            token_budget: None,
            max_context: None,
            context_tokens: 0,
            greeting: None,
            user_icon: None,
            trigger: Trigger::Normal,
            budget_cap: None,
            char_name: String::new(),
            user_name: "User".into(),
            character_names: Vec::new(),
            character_tags: Vec::new(),
            sources: MatchSources::default(),
            seed: 0,
            explain_all: false,
            explain_cut: false,
            regex_key_steps: REGEX_KEY_STEPS,
            regex_scan_steps: REGEX_SCAN_STEPS,
            compat: Compat::Spec,
            threads: false,
            st_activated: None,
        }
    }
}

/// The texts entries' `match_*` flags may add to their scan text (empty: none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchSources {
    /// The user's persona description.
    pub persona_description: String,
    /// The character's description.
    pub character_description: String,
    /// The character's personality.
    pub character_personality: String,
    /// The character's depth prompt (SillyTavern's `extensions.depth_prompt.prompt`).
    pub character_depth_prompt: String,
    /// The character's scenario.
    pub scenario: String,
    /// The card's creator notes.
    pub creator_notes: String,
}

impl MatchSources {
    /// The text of `s`.
    pub fn get(&self, s: Source) -> &str {
        match s {
            Source::PersonaDescription => &self.persona_description,
            Source::CharacterDescription => &self.character_description,
            Source::CharacterPersonality => &self.character_personality,
            Source::CharacterDepthPrompt => &self.character_depth_prompt,
            Source::Scenario => &self.scenario,
            Source::CreatorNotes => &self.creator_notes,
        }
    }

    /// True when no source has text.
    pub fn is_empty(&self) -> bool {
        Source::ALL.iter().all(|&s| self.get(s).trim().is_empty())
    }
}

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
