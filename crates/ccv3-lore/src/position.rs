//! Where an activated entry's content goes in the prompt.

/// Where an activated entry's content goes in the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Position {
    /// Before the character definitions (spec `before_char`; SillyTavern 0).
    BeforeChar,
    /// After the character definitions (spec `after_char`; SillyTavern 1).
    AfterChar,
    /// Top of the Author's Note (SillyTavern 2).
    AuthorsNoteTop,
    /// Bottom of the Author's Note (SillyTavern 3).
    AuthorsNoteBottom,
    /// In the chat at a depth (SillyTavern 4, `@@depth`, `@@reverse_depth`).
    AtDepth,
    /// Before the example messages (SillyTavern 5).
    ExamplesTop,
    /// After the example messages (SillyTavern 6).
    ExamplesBottom,
    /// A named outlet (SillyTavern 7), consumed by `{{outlet::name}}`.
    Outlet(String),
    /// A `@@position` value: `after_desc`, `before_desc`, `personality`, `scenario`, `pt_<name>`.
    Named(String),
    /// No prompt slot: an entry of a SillyTavern World Info file without a `position` (or with
    /// one SillyTavern's placement `switch` has no case for) in `Compat::SillyTavern`, activated
    /// but put nowhere, as SillyTavern does.
    Nowhere,
}

impl Position {
    /// The name used in output: `before_char`, `after_char`, `an_top`, `an_bottom`, `at_depth`,
    /// `examples_top`, `examples_bottom`, `outlet`, `nowhere`, or the `@@position` value.
    pub fn as_str(&self) -> &str {
        match self {
            Position::BeforeChar => "before_char",
            Position::AfterChar => "after_char",
            Position::AuthorsNoteTop => "an_top",
            Position::AuthorsNoteBottom => "an_bottom",
            Position::AtDepth => "at_depth",
            Position::ExamplesTop => "examples_top",
            Position::ExamplesBottom => "examples_bottom",
            Position::Outlet(_) => "outlet",
            Position::Named(s) => s,
            Position::Nowhere => "nowhere",
        }
    }

    /// The rank of the position in prompt order (lower is earlier in the prompt).
    pub(crate) fn prompt_rank(&self) -> u8 {
        match self {
            Position::Named(s) if s == "before_desc" => 0,
            Position::BeforeChar => 1,
            Position::Named(s) if s == "after_desc" => 2,
            Position::Named(s) if s == "personality" => 3,
            Position::Named(s) if s == "scenario" => 4,
            Position::AfterChar => 5,
            Position::ExamplesTop => 6,
            Position::ExamplesBottom => 7,
            Position::Named(_) => 8,
            Position::AuthorsNoteTop => 9,
            Position::AuthorsNoteBottom => 10,
            Position::AtDepth => 11,
            Position::Outlet(_) => 12,
            Position::Nowhere => 13,
        }
    }
}
