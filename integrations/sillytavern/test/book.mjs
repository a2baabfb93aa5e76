// The five-turn test: a World Info book exercising keys, secondary logic, recursion, inclusion
// groups, sticky/cooldown and the budget, the chat, and the fates expected after each turn.
//
// It avoids the three known departures of compat mode (issue 28, "Compat mode: three
// departures"): every entry has a `position`, none has `ignoreBudget` or `triggers`. No entry
// draws random numbers (probability 100; the group's members set `groupOverride`, so the
// highest `order` wins), so SillyTavern and ccv3 must agree on every entry.

// SillyTavern 1.19.0's entry fields (newWorldInfoEntryDefinition), with its defaults.
function entry(uid, fields) {
    return {
        uid, key: [], keysecondary: [], comment: '', content: '', constant: false, vectorized: false,
        selective: true, selectiveLogic: 0, addMemo: true, order: 100, position: 0, disable: false,
        ignoreBudget: false, excludeRecursion: false, preventRecursion: false,
        matchPersonaDescription: false, matchCharacterDescription: false, matchCharacterPersonality: false,
        matchCharacterDepthPrompt: false, matchScenario: false, matchCreatorNotes: false,
        delayUntilRecursion: 0, probability: 100, useProbability: true, depth: 4, outletName: '',
        group: '', groupOverride: false, groupWeight: 100, scanDepth: null, caseSensitive: null,
        matchWholeWords: null, useGroupScoring: null, automationId: '', role: 0, sticky: null,
        cooldown: null, delay: null, displayIndex: uid, triggers: [],
        ...fields,
    };
}

export const BOOK_NAME = 'ccv3-test-book';

const hog = 'The great library of Axel keeps ledgers of every caravan, toll and quarrel since the founding. '.repeat(8);

export const BOOK = {
    entries: Object.fromEntries([
        entry(0, { comment: 'Dragon', key: ['dragon'], content: 'Dragons nest above Axel.', order: 90 }),
        entry(1, { comment: 'Castle at night', key: ['castle'], keysecondary: ['night'], content: 'The castle gates close at night.', order: 80 }),
        entry(2, { comment: 'Axel', key: ['Axel'], content: 'Axel is a mountain town.', order: 70 }),
        entry(3, { comment: 'Rain', key: ['weather'], content: 'It rains most days.', group: 'weather', groupOverride: true, order: 60 }),
        entry(4, { comment: 'Snow', key: ['weather'], content: 'Snow falls in winter.', group: 'weather', groupOverride: true, order: 50 }),
        entry(5, { comment: 'Lantern', key: ['lantern'], content: 'The lantern never goes out.', sticky: 3, cooldown: 3, order: 40 }),
        entry(6, { comment: 'Library', key: ['library'], content: hog, order: 10 }),
        entry(7, { comment: 'Disabled', key: ['dragon'], content: 'Never shown.', disable: true }),
        entry(8, { comment: 'Always', constant: true, content: 'The air is thin.', order: 100 }),
    ].map((e) => [String(e.uid), e])),
};

/** World Info settings for the run (settings.json's world_info_settings). */
export const WI_SETTINGS = {
    world_info: { globalSelect: [] },
    world_info_depth: 2,
    world_info_budget: 25,
    world_info_budget_cap: 60,
    world_info_include_names: true,
    world_info_recursive: true,
    world_info_overflow_alert: false,
    world_info_case_sensitive: false,
    world_info_match_whole_words: true,
    world_info_character_strategy: 1,
    world_info_use_group_scoring: false,
    world_info_max_recursion_steps: 0,
    world_info_min_activations: 0,
    world_info_min_activations_depth_max: 0,
};

// Each turn: the user's message, the expected fate of each uid (a list: any of them) and the
// scan step of some activated ones.
export const TURNS = [
    {
        say: 'Tell me about the dragon and the lantern.',
        fates: { 0: ['activated'], 1: ['no-key-matched'], 2: ['activated'], 3: ['no-key-matched'], 4: ['no-key-matched'], 5: ['activated'], 6: ['no-key-matched'], 7: ['disabled'], 8: ['activated'] },
        // "Axel" is in no message, only in the dragon's content: the recursion step.
        steps: { 0: 1, 2: 2, 8: 1 },
    },
    {
        say: 'Is the castle scary?',
        fates: { 0: ['no-key-matched'], 1: ['secondary-logic'], 2: ['no-key-matched'], 5: ['activated'], 7: ['disabled'], 8: ['activated'] },
    },
    {
        say: 'What is the weather at night near the castle?',
        fates: { 1: ['activated'], 3: ['activated'], 4: ['group'], 5: ['cooldown'], 8: ['activated'] },
    },
    {
        say: 'The library has a lantern too.',
        fates: { 5: ['cooldown'], 6: ['budget'], 8: ['activated'] },
    },
    {
        say: 'Back to the dragon.',
        fates: { 0: ['activated'], 2: ['activated'], 7: ['disabled'], 8: ['activated'] },
    },
];
