//! Prompt assembly rules, one test per rule.

use ccv3_prompt::*;

/// One token per character, so budgets in tests are easy to read.
struct Chars;
impl ccv3_tokens::Tokenizer for Chars {
    fn count(&self, text: &str) -> usize {
        text.chars().count()
    }
    fn name(&self) -> &str {
        "chars"
    }
}

fn counter() -> TokenCounter {
    TokenCounter::new(Chars)
}

fn card() -> ccv3::CardData {
    let mut c = ccv3::Card::new("Aqua").data;
    c.system_prompt = "SYS".into();
    c.description = "DESC".into();
    c.personality = "cheerful".into();
    c.scenario = "a tavern".into();
    c.mes_example = "<START>\n{{user}}: hi\n{{char}}: hello\n<start>\nEX2".into();
    c.post_history_instructions = "PHI".into();
    c.first_mes = "GREET".into();
    c
}

fn opts() -> PromptOptions {
    PromptOptions {
        user_name: "Kaz".into(),
        example_header: String::new(),
        ..Default::default()
    }
}

fn depth(d: u32, role: Role) -> InsertPosition {
    InsertPosition::Depth { depth: d, role }
}

fn run(
    card: &ccv3::CardData,
    chat: &[ChatMessage],
    lore: &[LoreInsert],
    o: &PromptOptions,
) -> Assembled {
    assemble(card, chat, lore, o, &mut SimpleExpander, &counter()).unwrap()
}

fn contents(a: &Assembled) -> Vec<&str> {
    a.parts.iter().map(|p| p.content.as_str()).collect()
}

fn slots(a: &Assembled) -> Vec<&'static str> {
    a.parts.iter().map(|p| p.slot.as_str()).collect()
}

#[test]
fn prompt_default_order_matches_docs() {
    let lore = [
        LoreInsert::new("pre", "PRE", InsertPosition::BeforeChar),
        LoreInsert::new("post", "POST", InsertPosition::AfterChar),
        LoreInsert::new("bd", "BD", InsertPosition::BeforeDesc),
        LoreInsert::new("ad", "AD", InsertPosition::AfterDesc),
        LoreInsert::new("pe", "PE", InsertPosition::Personality),
        LoreInsert::new("sc", "SC", InsertPosition::Scenario),
        LoreInsert::new("fill", "FILL", depth(0, Role::Assistant)),
    ];
    let chat = [ChatMessage::user("U1")];
    let a = run(&card(), &chat, &lore, &opts());
    assert_eq!(
        contents(&a),
        [
            "SYS",
            "PRE",
            "BD",
            "DESC",
            "AD",
            "Aqua's personality: cheerful",
            "PE",
            "Scenario: a tavern",
            "SC",
            "POST",
            "Kaz: hi\nAqua: hello",
            "EX2",
            "GREET",
            "U1",
            "PHI",
            "FILL",
        ]
    );
    assert_eq!(
        slots(&a),
        [
            "system",
            "lore_before_char",
            "description",
            "description",
            "description",
            "personality",
            "personality",
            "scenario",
            "scenario",
            "lore_after_char",
            "examples",
            "examples",
            "history",
            "history",
            "post_history",
            "prefill"
        ]
    );
}

#[test]
fn prompt_template_reorders_slots() {
    let o = PromptOptions {
        template: Template::from_json(r#"["history","description","system"]"#).unwrap(),
        ..opts()
    };
    let lore = [LoreInsert::new("pre", "PRE", InsertPosition::BeforeChar)];
    let a = run(&card(), &[ChatMessage::user("U1")], &lore, &o);
    assert_eq!(contents(&a), ["GREET", "U1", "DESC", "SYS"]);
    assert_eq!(a.cut.len(), 1);
    assert_eq!(a.cut[0].reason, CutReason::NotInTemplate);
}

#[test]
fn prompt_lore_within_a_position_by_ascending_insertion_order() {
    let lore = [
        LoreInsert::new("b", "B", InsertPosition::AfterChar).with_order(20.0),
        LoreInsert::new("a", "A", InsertPosition::AfterChar).with_order(10.0),
        LoreInsert::new("c", "C", InsertPosition::AfterChar).with_order(20.0),
    ];
    let mut c = card();
    c.mes_example.clear();
    let o = PromptOptions {
        template: Template::from_json(r#"["lore_after_char"]"#).unwrap(),
        ..opts()
    };
    assert_eq!(contents(&run(&c, &[], &lore, &o)), ["A", "B", "C"]);
}

fn history_opts() -> PromptOptions {
    PromptOptions {
        template: Template::from_json(r#"["history","prefill"]"#).unwrap(),
        insert_greeting: false,
        ..opts()
    }
}

fn chat3() -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("M0"),
        ChatMessage::assistant("M1"),
        ChatMessage::user("M2"),
    ]
}

#[test]
fn prompt_depth_zero_after_newest_message() {
    let lore = [LoreInsert::new("d0", "D0", depth(0, Role::System))];
    let a = run(&card(), &chat3(), &lore, &history_opts());
    assert_eq!(contents(&a), ["M0", "M1", "M2", "D0"]);
}

#[test]
fn prompt_depth_n_before_the_n_newest_messages() {
    let lore = [LoreInsert::new("d2", "D2", depth(2, Role::User))];
    let a = run(&card(), &chat3(), &lore, &history_opts());
    assert_eq!(contents(&a), ["M0", "D2", "M1", "M2"]);
    assert_eq!(a.parts[1].role, Role::User);
}

#[test]
fn prompt_depth_beyond_history_goes_before_oldest() {
    let lore = [LoreInsert::new("d9", "D9", depth(9, Role::System))];
    let a = run(&card(), &chat3(), &lore, &history_opts());
    assert_eq!(contents(&a), ["D9", "M0", "M1", "M2"]);
}

#[test]
fn prompt_same_depth_ordered_by_role_then_insertion_order() {
    let lore = [
        LoreInsert::new("u", "U", depth(1, Role::User)).with_order(1.0),
        LoreInsert::new("s2", "S2", depth(1, Role::System)).with_order(5.0),
        LoreInsert::new("s1", "S1", depth(1, Role::System)).with_order(3.0),
    ];
    let a = run(&card(), &chat3(), &lore, &history_opts());
    assert_eq!(contents(&a), ["M0", "M1", "S1", "S2", "U", "M2"]);
    // Same role at one place: one message, joined by a newline.
    let m: Vec<String> = a.messages().into_iter().map(|m| m.content).collect();
    assert_eq!(m, ["M0", "M1", "S1\nS2", "U", "M2"]);
}

#[test]
fn prompt_reverse_depth_counts_from_the_oldest() {
    let lore = [LoreInsert::new(
        "r",
        "R1",
        InsertPosition::ReverseDepth {
            depth: 1,
            role: Role::System,
        },
    )];
    let a = run(&card(), &chat3(), &lore, &history_opts());
    assert_eq!(contents(&a), ["M0", "R1", "M1", "M2"]);
}

#[test]
fn prompt_authors_note_block_at_its_depth() {
    let o = PromptOptions {
        authors_note: Some("NOTE".into()),
        authors_note_depth: 1,
        ..history_opts()
    };
    let lore = [
        LoreInsert::new("bot", "ANB", InsertPosition::AuthorsNoteBottom),
        LoreInsert::new("top", "ANT", InsertPosition::AuthorsNoteTop),
        LoreInsert::new("d1", "D1", depth(1, Role::System)),
    ];
    let a = run(&card(), &chat3(), &lore, &o);
    assert_eq!(contents(&a), ["M0", "M1", "ANT", "NOTE", "ANB", "D1", "M2"]);
}

#[test]
fn prompt_prefill_joins_depth0_assistant_entries() {
    let lore = [
        LoreInsert::new("p2", "P2", depth(0, Role::Assistant)).with_order(2.0),
        LoreInsert::new("p1", "P1", depth(0, Role::Assistant)).with_order(1.0),
    ];
    let a = run(&card(), &chat3(), &lore, &history_opts());
    assert_eq!(a.prefill().as_deref(), Some("P1\nP2"));
    let msgs = a.chat_messages();
    let last = msgs.last().unwrap();
    assert_eq!(
        (last.role, last.content.as_str()),
        (Role::Assistant, "P1\nP2")
    );
    assert_eq!(a.messages().len(), 3);
}

#[test]
fn prompt_prefill_off_places_depth0_assistant_in_history() {
    let o = PromptOptions {
        prefill: false,
        ..history_opts()
    };
    let lore = [LoreInsert::new("p", "P", depth(0, Role::Assistant))];
    let a = run(&card(), &chat3(), &lore, &o);
    assert_eq!(contents(&a), ["M0", "M1", "M2", "P"]);
    assert_eq!(a.prefill(), None);
}

#[test]
fn prompt_disable_ui_prompt_drops_system_prompt() {
    let lore =
        [LoreInsert::new("x", "X", InsertPosition::AfterChar).disabling(UiPrompt::SystemPrompt)];
    let a = run(&card(), &[], &lore, &opts());
    assert!(!contents(&a).contains(&"SYS"));
    assert!(contents(&a).contains(&"PHI"));
    assert_eq!(a.disabled, [UiPrompt::SystemPrompt]);
}

#[test]
fn prompt_disable_ui_prompt_drops_post_history_instructions() {
    let lore = [LoreInsert::new("x", "X", InsertPosition::AfterChar)
        .disabling(UiPrompt::PostHistoryInstructions)];
    let a = run(&card(), &[], &lore, &opts());
    assert!(contents(&a).contains(&"SYS"));
    assert!(!contents(&a).contains(&"PHI"));
}

#[test]
fn prompt_original_macro_is_application_prompt() {
    let mut c = card();
    c.system_prompt = "Card says: {{original}}!".into();
    c.post_history_instructions = "{{original}} and more".into();
    let o = PromptOptions {
        system_prompt: Some("APP SYS".into()),
        post_history_instructions: Some("APP PHI".into()),
        ..opts()
    };
    let a = run(&c, &[], &[], &o);
    assert_eq!(a.parts[0].content, "Card says: APP SYS!");
    let phi = a
        .parts
        .iter()
        .find(|p| p.slot == Slot::PostHistory)
        .unwrap();
    assert_eq!(phi.content, "APP PHI and more");
}

#[test]
fn prompt_empty_card_system_prompt_uses_application_prompt() {
    let mut c = card();
    c.system_prompt = "  ".into();
    c.post_history_instructions.clear();
    let o = PromptOptions {
        system_prompt: Some("Write {{char}}'s reply.".into()),
        post_history_instructions: Some("APP PHI".into()),
        ..opts()
    };
    let a = run(&c, &[], &[], &o);
    assert_eq!(a.parts[0].content, "Write Aqua's reply.");
    assert_eq!(a.parts.last().unwrap().content, "APP PHI");
}

#[test]
fn prompt_original_outside_ui_prompts_is_empty() {
    let mut c = card();
    c.description = "D{{original}}".into();
    let o = PromptOptions {
        system_prompt: Some("APP".into()),
        ..opts()
    };
    let a = run(&c, &[], &[], &o);
    assert!(contents(&a).contains(&"D"));
}

#[test]
fn prompt_greeting_added_when_chat_does_not_start_with_assistant() {
    let mut c = card();
    c.alternate_greetings = vec!["ALT1 {{user}}".into()];
    let o = PromptOptions {
        greeting: 1,
        ..history_opts()
    };
    let o = PromptOptions {
        insert_greeting: true,
        ..o
    };
    let a = run(&c, &[ChatMessage::user("U")], &[], &o);
    assert_eq!(contents(&a), ["ALT1 Kaz", "U"]);
    assert_eq!(a.parts[0].role, Role::Assistant);
    assert_eq!(a.parts[0].kind, PartKind::Greeting { index: 1 });
    // A chat that starts with an assistant message holds its greeting already.
    let a = run(
        &c,
        &[ChatMessage::assistant("G"), ChatMessage::user("U")],
        &[],
        &o,
    );
    assert_eq!(contents(&a), ["G", "U"]);
}

#[test]
fn prompt_group_only_greetings_only_in_group_chats() {
    let mut c = card();
    c.alternate_greetings = vec!["ALT".into()];
    c.group_only_greetings = vec!["GROUP".into()];
    let o = PromptOptions {
        greeting: 2,
        insert_greeting: true,
        ..history_opts()
    };
    let err = assemble(&c, &[], &[], &o, &mut SimpleExpander, &counter()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Greeting {
                index: 2,
                available: 2
            }
        ),
        "{err}"
    );
    let o = PromptOptions {
        group_chat: true,
        ..o
    };
    assert_eq!(contents(&run(&c, &[], &[], &o)), ["GROUP"]);
}

#[test]
fn spec_v3_position_decorator_ignored_without_its_section() {
    let mut c = card();
    c.personality.clear();
    let lore = [LoreInsert::new("pe", "PE", InsertPosition::Personality)];
    let a = run(&c, &[], &lore, &opts());
    let part = a
        .parts
        .iter()
        .find(|p| p.content == "PE")
        .expect("entry kept");
    assert_eq!(
        part.slot,
        Slot::LoreAfterChar,
        "placed like an entry without a position"
    );
    assert!(a.cut.is_empty());
}

#[test]
fn prompt_examples_split_on_start_with_header() {
    let o = PromptOptions {
        example_header: "[Example]".into(),
        template: Template::from_json(r#"["examples"]"#).unwrap(),
        ..opts()
    };
    let lore = [
        LoreInsert::new("t", "TOP", InsertPosition::ExamplesTop),
        LoreInsert::new("b", "BOTTOM", InsertPosition::ExamplesBottom),
    ];
    let a = run(&card(), &[], &lore, &o);
    assert_eq!(
        contents(&a),
        [
            "TOP",
            "[Example]\nKaz: hi\nAqua: hello",
            "[Example]\nEX2",
            "BOTTOM"
        ]
    );
}

#[test]
fn prompt_max_context_cuts_oldest_history_first() {
    let chat: Vec<ChatMessage> = (0..5)
        .map(|i| ChatMessage::user(format!("MSG{i}")))
        .collect();
    let lore = [LoreInsert::new("l", "LORE", InsertPosition::AfterChar)];
    let o = PromptOptions {
        template: Template::from_json(r#"["lore_after_char","history"]"#).unwrap(),
        insert_greeting: false,
        max_context: Some(4 + 4 * 2),
        ..opts()
    };
    let a = run(&card(), &chat, &lore, &o);
    assert_eq!(contents(&a), ["LORE", "MSG3", "MSG4"]);
    assert_eq!(a.tokens, 12);
    let cut: Vec<(&str, CutKind)> = a.cut.iter().map(|c| (c.label.as_str(), c.kind)).collect();
    assert_eq!(
        cut,
        [
            ("message 0", CutKind::History),
            ("message 1", CutKind::History),
            ("message 2", CutKind::History)
        ]
    );
    assert_eq!(a.overflow, None);
}

#[test]
fn prompt_max_context_keeps_newest_message_then_cuts_lore() {
    let chat: Vec<ChatMessage> = (0..3)
        .map(|i| ChatMessage::user(format!("MSG{i}")))
        .collect();
    let lore = [
        LoreInsert::new("hi", "HIGH", InsertPosition::AfterChar).with_priority(50.0),
        LoreInsert::new("lo", "LOW1", InsertPosition::AfterChar).with_priority(10.0),
    ];
    let o = PromptOptions {
        template: Template::from_json(r#"["lore_after_char","history"]"#).unwrap(),
        insert_greeting: false,
        max_context: Some(8),
        ..opts()
    };
    let a = run(&card(), &chat, &lore, &o);
    assert_eq!(contents(&a), ["HIGH", "MSG2"]);
    let cut: Vec<&str> = a.cut.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(cut, ["message 0", "message 1", "lo"]);
}

#[test]
fn prompt_ignore_on_max_context_cut_before_other_lore() {
    let lore = [
        LoreInsert::new("low", "AAAA", InsertPosition::AfterChar).with_priority(1.0),
        LoreInsert::new("ignored", "BBBB", InsertPosition::AfterChar)
            .with_priority(1000.0)
            .ignore_on_max_context(),
    ];
    let o = PromptOptions {
        template: Template::from_json(r#"["lore_after_char","history"]"#).unwrap(),
        insert_greeting: false,
        max_context: Some(4 + 2),
        ..opts()
    };
    let a = run(
        &card(),
        &[ChatMessage::user("M0"), ChatMessage::user("M1")],
        &lore,
        &o,
    );
    assert_eq!(contents(&a), ["AAAA", "M1"]);
    let cut: Vec<&str> = a.cut.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(cut, ["message 0", "ignored"]);
}

#[test]
fn prompt_depth_insertions_follow_the_kept_history() {
    let chat: Vec<ChatMessage> = (0..4).map(|i| ChatMessage::user(format!("M{i}"))).collect();
    let lore = [LoreInsert::new("d3", "D3", depth(3, Role::System))];
    let o = PromptOptions {
        max_context: Some(2 + 2 + 2),
        ..history_opts()
    };
    let a = run(&card(), &chat, &lore, &o);
    // Two messages kept; depth 3 is now beyond the history: before the oldest kept.
    assert_eq!(contents(&a), ["D3", "M2", "M3"]);
}

#[test]
fn prompt_overflow_reported_when_fixed_parts_exceed() {
    let o = PromptOptions {
        max_context: Some(2),
        template: Template::from_json(r#"["system","history"]"#).unwrap(),
        insert_greeting: false,
        ..opts()
    };
    let a = run(
        &card(),
        &[ChatMessage::user("M0"), ChatMessage::user("M1")],
        &[],
        &o,
    );
    assert_eq!(contents(&a), ["SYS", "M1"]);
    assert_eq!(a.overflow, Some(3));
    assert!(to_text(&a).contains("over the maximum context by 3 tokens"));
}

#[test]
fn prompt_messages_merge_adjacent_system_parts() {
    let lore = [
        LoreInsert::new("a", "LA", InsertPosition::AfterChar).with_order(1.0),
        LoreInsert::new("b", "LB", InsertPosition::AfterChar).with_order(2.0),
    ];
    let a = run(&card(), &[ChatMessage::user("U")], &lore, &opts());
    let m = a.messages();
    assert_eq!(m[0].role, Role::System);
    assert!(m[0].content.starts_with("SYS\n\nDESC\n\n"));
    assert!(m[0]
        .content
        .contains("Scenario: a tavern\n\nLA\nLB\n\nKaz: hi"));
    assert_eq!(
        (m[1].role, m[1].content.as_str()),
        (Role::Assistant, "GREET")
    );
    assert_eq!((m[2].role, m[2].content.as_str()), (Role::User, "U"));
    assert_eq!((m[3].role, m[3].content.as_str()), (Role::System, "PHI"));
    assert_eq!(m.len(), 4);
}

#[test]
fn prompt_history_messages_are_never_merged() {
    let chat = [ChatMessage::user("A"), ChatMessage::user("B")];
    let a = run(&card(), &chat, &[], &history_opts());
    assert_eq!(a.messages().len(), 2);
}

#[test]
fn prompt_cli_json_shape() {
    let lore = [LoreInsert::new("town", "TOWN", depth(1, Role::System))];
    let o = PromptOptions {
        max_context: Some(10),
        ..history_opts()
    };
    let chat: Vec<ChatMessage> = (0..4).map(|i| ChatMessage::user(format!("M{i}"))).collect();
    let a = run(&card(), &chat, &lore, &o);
    let v = serde_json::to_value(a.report()).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["messages", "tokens", "lore", "cut"]);
    assert_eq!(v["tokens"], 10);
    assert_eq!(
        v["messages"][0],
        serde_json::json!({"role":"user","content":"M1"})
    );
    assert_eq!(
        v["messages"][2],
        serde_json::json!({"role":"system","content":"TOWN"})
    );
    assert_eq!(v["lore"][0]["label"], "town");
    assert_eq!(v["lore"][0]["position"], "depth 1 system");
    assert_eq!(
        v["cut"][0],
        serde_json::json!({"kind":"history","label":"message 0","tokens":2,"reason":"max_context"})
    );
}

#[test]
fn prompt_text_has_slot_markers() {
    let lore = [LoreInsert::new("town", "TOWN", depth(0, Role::System))];
    let a = run(
        &card(),
        &[ChatMessage::user("U").named("Kaz")],
        &lore,
        &opts(),
    );
    let t = to_text(&a);
    for marker in [
        "── system ──",
        "── description ──",
        "── history ──",
        "── post_history ──",
    ] {
        assert!(t.contains(marker), "{marker} missing in\n{t}");
    }
    assert!(t.contains("[user Kaz] U\n"));
    assert!(t.contains("[lore town · system] TOWN\n"));
}

#[test]
fn prompt_instruct_render_of_assembled_prompt() {
    let lore = [LoreInsert::new("p", "Sure,", depth(0, Role::Assistant))];
    let o = PromptOptions {
        template: Template::from_json(r#"["system","history","prefill"]"#).unwrap(),
        ..opts()
    };
    let a = run(&card(), &[ChatMessage::user("Hi")], &lore, &o);
    assert_eq!(
        InstructTemplate::chatml().render(&a),
        "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>assistant\nGREET<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nSure,"
    );
}

#[test]
fn prompt_token_counts_are_cached_across_prompts() {
    let c = counter();
    let chat = chat3();
    assemble(&card(), &chat, &[], &opts(), &mut SimpleExpander, &c).unwrap();
    let n = c.cached();
    assemble(&card(), &chat, &[], &opts(), &mut SimpleExpander, &c).unwrap();
    assert_eq!(c.cached(), n);
    assert!(n > 0);
}

#[test]
fn prompt_part_overhead_counts_per_part() {
    let o = PromptOptions {
        part_overhead: 3,
        ..history_opts()
    };
    let a = run(&card(), &chat3(), &[], &o);
    assert_eq!(a.tokens, 3 * (2 + 3));
}

#[test]
fn prompt_parts_other_than_messages_are_trimmed() {
    let mut c = card();
    c.description = "  DESC \n".into();
    c.first_mes = "\nGREET  ".into();
    let lore = [LoreInsert::new("l", " \n ", InsertPosition::AfterChar)];
    let a = run(&c, &[ChatMessage::user(" keep me ")], &lore, &opts());
    let t = contents(&a);
    assert!(t.contains(&"DESC") && t.contains(&"GREET") && t.contains(&" keep me "));
    assert!(a.lore.is_empty());
}

/// Scans `card`'s own book with the lorebook engine and assembles the prompt from its activations,
/// as `ccv3 prompt` does (CBS expansion included).
fn scan_and_assemble(
    card: &ccv3::CardData,
    chat_json: &str,
    scan: ccv3_lore::ScanOptions,
    o: &PromptOptions,
) -> Assembled {
    use ccv3_lore::{BookInput, BookKind, LorebookCompiler};
    let lore_chat = parse_chat(chat_json).unwrap();
    let chat = &lore_chat.messages;
    let books: Vec<BookInput> = card
        .character_book
        .iter()
        .map(|b| BookInput {
            book: b,
            kind: BookKind::Character,
            name: "card".into(),
            world_info: false,
        })
        .collect();
    let compiled = LorebookCompiler::new()
        .names(card.char_name(), &o.user_name)
        .compile(&books);
    let result = compiled.scan(
        &lore_chat,
        &Default::default(),
        &scan,
        &ccv3_tokens::Estimate,
    );
    let inserts = adapters::inserts_from_activations(&result, &books);
    let mut expander = adapters::CbsExpander::new(card, chat, o);
    assemble(card, chat, &inserts, o, &mut expander, &counter()).unwrap()
}

/// A card read from JSON, as a file would be.
fn card_from_json(v: serde_json::Value) -> ccv3::CardData {
    let mut diags = Vec::new();
    ccv3::Card::from_json(v, &mut diags).expect("card").data
}

#[test]
fn spec_v3_asset_book_and_entry_names_ids_and_comments_never_reach_the_prompt() {
    // Every name, id and comment holds a marker; the entries' contents must arrive, the markers
    // must not (SPEC_V3: asset `name`, book `name` and `description`, entry `name`, `id` and
    // `comment` SHOULD NOT be used in prompts).
    let entry = |keys: &[&str], content: &str| {
        serde_json::json!({"keys": keys, "content": content, "extensions": {}, "enabled": true,
            "insertion_order": 100, "use_regex": false})
    };
    let with = |mut e: serde_json::Value, extra: serde_json::Value| {
        for (k, v) in extra.as_object().unwrap() {
            e[k] = v.clone();
        }
        e
    };
    let entries = [
        with(
            entry(&["dragon"], "A dragon sleeps."),
            serde_json::json!({"name": "XENTRYNAME0X", "id": "XENTRYID0X",
                "comment": "XENTRYCOMMENT0X"}),
        ),
        with(
            entry(&["castle"], "@@depth 1\nThe castle is old."),
            serde_json::json!({"id": 7_350_173, "comment": "XENTRYCOMMENT1X"}),
        ),
        with(
            entry(
                &[],
                "@@is_user_icon XASSETUSERX\n@@position after_desc\nIt rains.",
            ),
            serde_json::json!({"constant": true, "name": "XENTRYNAME2X", "id": 7_350_174,
                "comment": "XENTRYCOMMENT2X"}),
        ),
        with(
            entry(&["dragon"], "@@depth 0\n@@role assistant\nSure,"),
            serde_json::json!({"name": "XENTRYNAME3X", "id": "XENTRYID3X"}),
        ),
    ];
    let asset = |kind: &str, uri: &str, name: &str| {
        let mut a = serde_json::json!({"uri": uri, "name": name, "ext": "png"});
        a["type"] = kind.into();
        a
    };
    let card = card_from_json(serde_json::json!({
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "Aqua", "description": "DESC", "personality": "cheerful",
            "scenario": "a tavern", "first_mes": "GREET", "mes_example": "",
            "creator_notes": "", "system_prompt": "SYS", "post_history_instructions": "PHI",
            "alternate_greetings": [], "group_only_greetings": [], "tags": [], "creator": "",
            "character_version": "1", "extensions": {},
            "assets": [
                asset("icon", "ccdefault:", "main"),
                asset("icon", "embeded://a.png", "XASSETICONX"),
                asset("emotion", "embeded://b.png", "XASSETEMOTIONX"),
                asset("user_icon", "embeded://c.png", "XASSETUSERX"),
                asset("background", "ccdefault:", "XASSETBGX"),
            ],
            "character_book": {
                "name": "XBOOKNAMEX",
                "description": "XBOOKDESCX",
                "extensions": {},
                "entries": entries,
            }
        }
    }));
    assert_eq!(card.assets.as_ref().map(Vec::len), Some(5));
    let book = card.character_book.as_ref().expect("book");
    assert_eq!(book.name.as_deref(), Some("XBOOKNAMEX"));
    let scan = ccv3_lore::ScanOptions {
        user_icon: Some("XASSETUSERX".into()),
        greeting: Some(0),
        ..Default::default()
    };
    let a = scan_and_assemble(
        &card,
        r#"[{"role":"user","content":"I see a dragon near the castle."}]"#,
        scan,
        &opts(),
    );
    let messages = a.chat_messages();
    let all: String = messages
        .iter()
        .map(|m| format!("{} {:?} {}\n", m.role, m.name, m.content))
        .collect();
    for body in [
        "A dragon sleeps.",
        "The castle is old.",
        "It rains.",
        "Sure,",
    ] {
        assert!(all.contains(body), "{body:?} missing in\n{all}");
    }
    let rendered = InstructTemplate::chatml().render(&a);
    for marker in [
        "XASSETICONX",
        "XASSETEMOTIONX",
        "XASSETUSERX",
        "XASSETBGX",
        "XBOOKNAMEX",
        "XBOOKDESCX",
        "XENTRYNAME0X",
        "XENTRYID0X",
        "XENTRYCOMMENT0X",
        "7350173",
        "XENTRYCOMMENT1X",
        "XENTRYNAME2X",
        "7350174",
        "XENTRYCOMMENT2X",
        "XENTRYNAME3X",
        "XENTRYID3X",
    ] {
        assert!(!all.contains(marker), "{marker} in the messages:\n{all}");
        assert!(!rendered.contains(marker), "{marker} in:\n{rendered}");
    }
}

#[test]
fn spec_v3_ignore_on_max_context_ignored_without_max_context() {
    // Without a maximum context nothing is cut, the decorated entry included.
    let lore = [
        LoreInsert::new("low", "AAAA", InsertPosition::AfterChar).with_priority(1.0),
        LoreInsert::new("ignored", "BBBB", InsertPosition::AfterChar)
            .with_priority(1000.0)
            .ignore_on_max_context(),
    ];
    let o = PromptOptions {
        template: Template::from_json(r#"["lore_after_char","history"]"#).unwrap(),
        insert_greeting: false,
        max_context: None,
        ..opts()
    };
    let chat = [ChatMessage::user("M0"), ChatMessage::user("M1")];
    let a = run(&card(), &chat, &lore, &o);
    assert_eq!(contents(&a), ["AAAA", "BBBB", "M0", "M1"]);
    assert!(a.cut.is_empty());
    assert_eq!(a.overflow, None);
}

#[test]
fn spec_v3_disable_ui_prompt_unrecognised_value_ignored() {
    // An unknown UI prompt type disables nothing, through the engine and the adapters alike.
    assert_eq!(UiPrompt::parse("authors_note"), None);
    let facts = adapters::decorator_facts(
        "@@disable_ui_prompt authors_note\n@@disable_ui_prompt post_history_instructions\nX",
    );
    assert_eq!(facts.disable_ui_prompt, [UiPrompt::PostHistoryInstructions]);
    let mut c = card();
    let mut diags = Vec::new();
    let book = serde_json::json!({"entries": [
        {"keys": ["dragon"], "content": "@@disable_ui_prompt authors_note\nLORE",
         "extensions": {}, "enabled": true, "insertion_order": 100, "use_regex": false}
    ]});
    c.character_book = Some(ccv3::Lorebook::from_json(book, "", false, &mut diags).unwrap());
    let a = scan_and_assemble(
        &c,
        r#"[{"role":"user","content":"a dragon"}]"#,
        Default::default(),
        &opts(),
    );
    let t = contents(&a);
    assert!(t.contains(&"LORE"), "{t:?}");
    assert!(t.contains(&"SYS") && t.contains(&"PHI"), "{t:?}");
    assert!(a.disabled.is_empty());
}
