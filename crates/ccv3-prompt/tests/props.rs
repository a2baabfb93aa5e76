//! Property tests: assembly never panics, and a fitted prompt never exceeds the maximum context
//! unless the parts that are never cut alone do, which is reported as the overflow.

use ccv3_prompt::*;
use proptest::prelude::*;

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::System), Just(Role::User), Just(Role::Assistant)]
}

fn position() -> impl Strategy<Value = InsertPosition> {
    prop_oneof![
        Just(InsertPosition::BeforeChar),
        Just(InsertPosition::AfterChar),
        Just(InsertPosition::BeforeDesc),
        Just(InsertPosition::AfterDesc),
        Just(InsertPosition::Personality),
        Just(InsertPosition::Scenario),
        Just(InsertPosition::ExamplesTop),
        Just(InsertPosition::ExamplesBottom),
        Just(InsertPosition::AuthorsNoteTop),
        Just(InsertPosition::AuthorsNoteBottom),
        (0u32..12, role()).prop_map(|(depth, role)| InsertPosition::Depth { depth, role }),
        (any::<u32>(), role()).prop_map(|(depth, role)| InsertPosition::Depth { depth, role }),
        (0u32..12, role()).prop_map(|(depth, role)| InsertPosition::ReverseDepth { depth, role }),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z {}<>A-Z\n]{0,40}",
        "(\\{\\{(char|user|original|x)\\}\\}|<START>|<start>| |ab){0,8}",
        any::<String>(),
    ]
}

fn lore() -> impl Strategy<Value = LoreInsert> {
    (
        text(),
        position(),
        any::<f64>(),
        proptest::option::of(any::<f64>()),
        any::<bool>(),
        proptest::collection::vec(
            prop_oneof![
                Just(UiPrompt::SystemPrompt),
                Just(UiPrompt::PostHistoryInstructions)
            ],
            0..2,
        ),
    )
        .prop_map(
            |(content, position, order, priority, ignore, disable)| LoreInsert {
                content,
                position,
                order,
                priority,
                ignore_on_max_context: ignore,
                disable_ui_prompt: disable,
                position_default: false,
                label: "entry".into(),
            },
        )
}

fn template() -> impl Strategy<Value = Template> {
    proptest::sample::subsequence(Slot::ALL.to_vec(), 0..=10)
        .prop_shuffle()
        .prop_map(|s| Template::new(s).unwrap())
}

#[derive(Debug, Clone)]
struct Input {
    card: ccv3::CardData,
    chat: Vec<ChatMessage>,
    lore: Vec<LoreInsert>,
    opts: PromptOptions,
}

fn input() -> impl Strategy<Value = Input> {
    (
        proptest::collection::vec(text(), 9),
        proptest::collection::vec((role(), text()), 0..12),
        proptest::collection::vec(lore(), 0..12),
        (
            template(),
            proptest::option::of(0usize..200),
            0usize..4,
            0usize..3,
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(text()),
            0u32..6,
        ),
    )
        .prop_map(
            |(fields, chat, lore, (template, max, greeting, keep, group, prefill, note, nd))| {
                let mut card = ccv3::Card::new("C").data;
                card.system_prompt = fields[0].clone();
                card.description = fields[1].clone();
                card.personality = fields[2].clone();
                card.scenario = fields[3].clone();
                card.mes_example = fields[4].clone();
                card.post_history_instructions = fields[5].clone();
                card.first_mes = fields[6].clone();
                card.alternate_greetings = vec![fields[7].clone()];
                card.group_only_greetings = vec![fields[8].clone()];
                let chat = chat
                    .into_iter()
                    .map(|(role, content)| ChatMessage::new(role, content))
                    .collect();
                let opts = PromptOptions {
                    template,
                    max_context: max,
                    greeting,
                    keep_last_messages: keep,
                    group_chat: group,
                    prefill,
                    authors_note: note,
                    authors_note_depth: nd,
                    system_prompt: Some("APP".into()),
                    ..Default::default()
                };
                Input {
                    card,
                    chat,
                    lore,
                    opts,
                }
            },
        )
}

fn never_cut(p: &Part) -> bool {
    matches!(
        p.kind,
        PartKind::SystemPrompt
            | PartKind::Description
            | PartKind::Personality
            | PartKind::Scenario
            | PartKind::AuthorsNote
            | PartKind::PostHistory
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn prop_assembly_never_panics_and_renders(inp in input()) {
        let counter = TokenCounter::new(ccv3_tokens::Estimate);
        let res = assemble(&inp.card, &inp.chat, &inp.lore, &inp.opts, &mut SimpleExpander, &counter);
        if let Ok(a) = res {
            let _ = to_text(&a);
            let _ = serde_json::to_string(&a.report());
            let _ = InstructTemplate::llama3().render(&a);
            let sum: usize = a.parts.iter().map(|p| p.tokens).sum();
            prop_assert_eq!(sum, a.tokens);
        } else {
            // The only error is a greeting index past the greetings.
            let available = if inp.opts.group_chat { 3 } else { 2 };
            prop_assert!(inp.opts.greeting >= available);
        }
    }

    #[test]
    fn prop_fitted_prompt_never_exceeds_max_context_unless_reported(inp in input()) {
        let counter = TokenCounter::new(ccv3_tokens::Estimate);
        let Ok(a) = assemble(&inp.card, &inp.chat, &inp.lore, &inp.opts, &mut SimpleExpander, &counter) else {
            return Ok(());
        };
        let Some(max) = inp.opts.max_context else {
            prop_assert!(a.overflow.is_none());
            return Ok(());
        };
        match a.overflow {
            None => prop_assert!(a.tokens <= max),
            Some(over) => {
                prop_assert_eq!(a.tokens, max + over);
                // Only the parts that are never cut (and the protected newest messages) are left.
                let history: Vec<&Part> = a.parts.iter().filter(|p| p.kind.is_history()).collect();
                prop_assert!(history.len() <= inp.opts.keep_last_messages);
                prop_assert!(a.parts.iter().all(|p| never_cut(p) || p.kind.is_history()));
            }
        }
    }
}
