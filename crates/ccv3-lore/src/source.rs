//! The texts beside the chat that an entry's `match_*` flags add to its scan text.

/// A text beside the chat that an entry's `match_*` flag adds to its scan text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The user's persona description (`match_persona_description`).
    PersonaDescription,
    /// The character's description (`match_character_description`).
    CharacterDescription,
    /// The character's personality (`match_character_personality`).
    CharacterPersonality,
    /// The character's depth prompt, SillyTavern's "Character's Note"
    /// (`match_character_depth_prompt`).
    CharacterDepthPrompt,
    /// The character's scenario (`match_scenario`).
    Scenario,
    /// The card's creator notes (`match_creator_notes`).
    CreatorNotes,
}

impl Source {
    /// Every source, in the order SillyTavern appends them to the scan text.
    pub const ALL: [Source; 6] = [
        Source::PersonaDescription,
        Source::CharacterDescription,
        Source::CharacterPersonality,
        Source::CharacterDepthPrompt,
        Source::Scenario,
        Source::CreatorNotes,
    ];

    /// The source's bit in a set of sources.
    pub(crate) fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The source in words (`persona description`, `character description`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::PersonaDescription => "persona description",
            Source::CharacterDescription => "character description",
            Source::CharacterPersonality => "character personality",
            Source::CharacterDepthPrompt => "character depth prompt",
            Source::Scenario => "scenario",
            Source::CreatorNotes => "creator notes",
        }
    }
}
