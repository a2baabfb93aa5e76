//! Engine tests, each named after the rule it checks (`spec_*`: SPEC_V3, `st_*`: SillyTavern).

use crate::chat::{Chat, Message, Role};
use crate::*;
use ccv3::Lorebook;
use serde_json::{json, Value};

/// Issue 14: SillyTavern's documented behaviours and every engine setting.
mod issue14;

fn book(entries: Vec<Value>) -> Lorebook {
    book_with(json!({}), entries)
}

fn book_with(mut fields: Value, entries: Vec<Value>) -> Lorebook {
    fields["entries"] = Value::Array(entries);
    let mut d = Vec::new();
    Lorebook::from_json(fields, "", false, &mut d).expect("book")
}

fn entry(keys: &[&str], content: &str) -> Value {
    json!({"keys": keys, "content": content, "extensions": {}, "enabled": true, "insertion_order": 100, "use_regex": false})
}

fn with(mut e: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

fn ext(e: Value, x: Value) -> Value {
    let mut e = e;
    for (k, v) in x.as_object().unwrap() {
        e["extensions"][k] = v.clone();
    }
    e
}

fn chat(msgs: &[(Role, &str)]) -> Chat {
    Chat {
        messages: msgs.iter().map(|(r, t)| Message::new(*r, t)).collect(),
        ..Default::default()
    }
}

fn user(t: &str) -> Chat {
    chat(&[(Role::User, t)])
}

/// Scans one global book; returns activated indices (prompt order), rejections and the state.
struct Out {
    act: Vec<usize>,
    reasons: Vec<String>,
    rej: Vec<(usize, String)>,
    state: ScanState,
    tokens: usize,
    positions: Vec<(String, Option<u64>, Option<&'static str>)>,
    contents: Vec<String>,
}

fn run(b: &Lorebook, c: &Chat, st: &ScanState, o: &ScanOptions) -> Out {
    let compiled = LorebookCompiler::new()
        .names("Aqua", "Kazuma")
        .compile(&[BookInput {
            book: b,
            kind: BookKind::Global,
            name: "b".into(),
            world_info: false,
        }]);
    let r = compiled.scan(c, st, o, &ccv3_tokens::Estimate);
    Out {
        act: r.activated.iter().map(|a| a.entry.index).collect(),
        reasons: r.activated.iter().map(|a| a.reason.to_string()).collect(),
        rej: r
            .rejected
            .iter()
            .map(|x| (x.entry.index, x.reason.to_string()))
            .collect(),
        positions: r
            .activated
            .iter()
            .map(|a| {
                (
                    a.position.as_str().to_string(),
                    a.depth,
                    a.role.map(|r| r.as_str()),
                )
            })
            .collect(),
        contents: r.activated.iter().map(|a| a.content.to_string()).collect(),
        state: r.state,
        tokens: r.tokens,
    }
}

fn scan(b: &Lorebook, c: &Chat) -> Out {
    run(b, c, &ScanState::default(), &all())
}

fn all() -> ScanOptions {
    ScanOptions {
        explain_all: true,
        ..Default::default()
    }
}

fn reason_of(o: &Out, i: usize) -> String {
    o.rej
        .iter()
        .find(|(x, _)| *x == i)
        .map(|(_, r)| r.clone())
        .unwrap_or_default()
}

/// The position, depth and role of activated entry `i`.
fn position_of(o: &Out, i: usize) -> (String, Option<u64>, Option<&'static str>) {
    let at = o.act.iter().position(|&x| x == i);
    o.positions[at.unwrap_or_else(|| panic!("entry {i} not activated: {:?}", o.rej))].clone()
}

// ---- fields ----

#[test]
fn spec_enabled_false_never_activates_even_constant() {
    let b = book(vec![
        with(
            entry(&["dragon"], "A"),
            json!({"enabled": false, "constant": true}),
        ),
        with(
            entry(&["dragon"], "@@activate\nB"),
            json!({"enabled": false}),
        ),
    ]);
    let o = scan(&b, &user("a dragon"));
    assert!(o.act.is_empty());
    assert_eq!(reason_of(&o, 0), "disabled");
    assert_eq!(reason_of(&o, 1), "disabled");
}

#[test]
fn spec_constant_is_a_match_without_keys() {
    let b = book(vec![with(entry(&[], "Always"), json!({"constant": true}))]);
    let o = scan(&b, &user("hello"));
    assert_eq!(o.act, [0]);
    assert_eq!(o.reasons[0], "constant");
}

#[test]
fn spec_entry_without_keys_activates_only_if_constant() {
    let b = book(vec![entry(&[], "Never")]);
    let o = scan(&b, &user("hello"));
    assert!(o.act.is_empty());
    assert_eq!(reason_of(&o, 0), "no keys");
}

#[test]
fn spec_keys_match_case_insensitively_unless_case_sensitive() {
    let b = book(vec![
        entry(&["Dragon"], "A"),
        with(entry(&["Dragon"], "B"), json!({"case_sensitive": true})),
        with(entry(&["dragon"], "C"), json!({"case_sensitive": true})),
    ]);
    let o = scan(&b, &user("The DRAGON and the Dragon"));
    assert_eq!(o.act, [0, 1]);
}

#[test]
fn st_match_whole_words_single_word_keys() {
    let b = book(vec![entry(&["king"], "K"), entry(&["long live"], "L")]);
    assert!(scan(&b, &user("it is not to my liking")).act.is_empty());
    assert_eq!(scan(&b, &user("long live the king!")).act, [0, 1]);
    let off = ScanOptions {
        match_whole_words: false,
        ..all()
    };
    assert_eq!(
        run(&b, &user("my liking"), &Default::default(), &off).act,
        [0]
    );
    // Per entry override.
    let b2 = book(vec![ext(
        entry(&["king"], "K"),
        json!({"match_whole_words": false}),
    )]);
    assert_eq!(scan(&b2, &user("liking")).act, [0]);
}

#[test]
fn whole_words_work_for_cjk_text_without_spaces() {
    let b = book(vec![entry(&["東京"], "T"), entry(&["엘라"], "E")]);
    assert_eq!(scan(&b, &user("私は東京に住んでいる")).act, [0]);
    assert_eq!(scan(&b, &user("엘라는 웃었다")).act, [1]);
}

#[test]
fn spec_key_macros_resolved_before_matching() {
    let b = book(vec![
        entry(&["{{char}}'s sword"], "S"),
        entry(&["<user>"], "U"),
    ]);
    let o = scan(&b, &user("Aqua's sword shines at kazuma"));
    assert_eq!(o.act, [0, 1]);
}

#[test]
fn st_include_names_lets_keys_match_the_speaker() {
    let mut c = user("hello");
    c.messages[0].name = Some("Megumin".into());
    let b = book(vec![entry(&["megumin"], "M")]);
    assert_eq!(scan(&b, &c).act, [0]);
    let o = run(
        &b,
        &c,
        &Default::default(),
        &ScanOptions {
            include_names: false,
            ..all()
        },
    );
    assert!(o.act.is_empty());
}

#[test]
fn spec_use_regex_keys_are_patterns() {
    let b = book(vec![
        with(entry(&["drag(on|oon)s?"], "R"), json!({"use_regex": true})),
        entry(&["/\\bfire\\w*/i"], "S"),
        with(entry(&["(unclosed"], "X"), json!({"use_regex": true})),
    ]);
    let o = scan(&b, &user("Two DRAGONS and Firestorm"));
    assert_eq!(o.act, [0, 1]);
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &b,
        kind: BookKind::Global,
        name: "b".into(),
        world_info: false,
    }]);
    assert!(compiled
        .diagnostics()
        .iter()
        .any(|d| d.code == "lore-regex-invalid"));
}

#[test]
fn st_regex_key_can_anchor_to_message_start_marker() {
    let b = book(vec![entry(&["/\\x01Kazuma:[^\\x01]*?hello/"], "H")]);
    let mut c = chat(&[(Role::User, "hello there"), (Role::Assistant, "hello")]);
    c.messages[0].name = Some("Kazuma".into());
    c.messages[1].name = Some("Aqua".into());
    let o = scan(&b, &c);
    assert_eq!(o.act, [0]);
    assert_eq!(
        o.reasons[0],
        "key \"/\\\\x01Kazuma:[^\\\\x01]*?hello/\" in message 0"
    );
}

#[test]
fn catastrophic_regex_key_does_not_hang_a_scan() {
    let b = book(vec![
        entry(&["/(a+)+$/"], "A"),
        entry(&["/(a|aa)*\\1$/"], "B"),
    ]);
    let long = "a".repeat(50_000) + "!";
    let t = std::time::Instant::now();
    let o = scan(&b, &user(&long));
    // The second runs on the step-limited backtracking engine and matches, as in JavaScript
    // (`\1` of the last iteration, then the end of the capped text).
    assert_eq!(o.act, [1]);
    assert!(t.elapsed().as_secs() < 5);
}

#[test]
fn spec_scan_depth_limits_messages_and_explains() {
    let c = chat(&[
        (Role::User, "the dragon"),
        (Role::Assistant, "hm"),
        (Role::User, "ok"),
    ]);
    let b = book_with(
        json!({"scan_depth": 2}),
        vec![
            entry(&["dragon"], "D"),
            entry(&["@@scan_depth 3"], "x"),
            entry(&["dragon"], "@@scan_depth 3\nD3"),
        ],
    );
    let o = scan(&b, &c);
    assert_eq!(o.act, [2]);
    assert!(
        reason_of(&o, 0).starts_with("scan depth"),
        "{}",
        reason_of(&o, 0)
    );
    assert_eq!(o.contents, ["D3"]);
    let b0 = book_with(json!({"scan_depth": 0}), vec![entry(&["ok"], "D")]);
    assert!(scan(&b0, &c).act.is_empty());
}

fn sel(logic: i64, sec: &[&str]) -> Value {
    ext(
        with(
            entry(&["dragon"], "S"),
            json!({"selective": true, "secondary_keys": sec}),
        ),
        json!({"selectiveLogic": logic}),
    )
}

#[test]
fn st_selective_logic_and_any() {
    let b = book(vec![sel(0, &["red", "blue"])]);
    assert_eq!(scan(&b, &user("a red dragon")).act, [0]);
    let o = scan(&b, &user("a green dragon"));
    assert_eq!(reason_of(&o, 0), "secondary logic AND_ANY");
}

#[test]
fn st_selective_logic_not_all() {
    let b = book(vec![sel(1, &["red", "blue"])]);
    assert_eq!(scan(&b, &user("a red dragon")).act, [0]);
    assert!(scan(&b, &user("a red and blue dragon")).act.is_empty());
}

#[test]
fn st_selective_logic_not_any() {
    let b = book(vec![sel(2, &["red", "blue"])]);
    assert_eq!(scan(&b, &user("a green dragon")).act, [0]);
    assert!(scan(&b, &user("a blue dragon")).act.is_empty());
}

#[test]
fn st_selective_logic_and_all() {
    let b = book(vec![sel(3, &["red", "blue"])]);
    assert!(scan(&b, &user("a red dragon")).act.is_empty());
    assert_eq!(scan(&b, &user("a red and blue dragon")).act, [0]);
}

#[test]
fn spec_secondary_keys_need_selective_true() {
    let b = book(vec![with(
        entry(&["dragon"], "S"),
        json!({"selective": false, "secondary_keys": ["red"]}),
    )]);
    assert_eq!(scan(&b, &user("a dragon")).act, [0]);
}

#[test]
fn spec_secondary_keys_ignored_when_use_regex() {
    let b = book(vec![with(
        entry(&["dragon"], "S"),
        json!({"use_regex": true, "selective": true, "secondary_keys": ["red"]}),
    )]);
    assert_eq!(scan(&b, &user("a dragon")).act, [0]);
}

#[test]
fn spec_constant_ignored_when_use_regex() {
    let b = book(vec![with(
        entry(&["zzz"], "S"),
        json!({"use_regex": true, "constant": true}),
    )]);
    assert!(scan(&b, &user("a dragon")).act.is_empty());
}

#[test]
fn st_export_use_regex_true_is_ignored_for_sillytavern_entries() {
    let e = ext(
        with(
            entry(&["Mr. Smith"], "S"),
            json!({"use_regex": true, "constant": false}),
        ),
        json!({"selectiveLogic": 0}),
    );
    let b = book(vec![e]);
    assert_eq!(scan(&b, &user("I met Mr. Smith")).act, [0]);
    assert!(scan(&b, &user("I met Mrs Smith")).act.is_empty());
}

#[test]
fn spec_empty_content_is_never_inserted() {
    let b = book(vec![
        entry(&["dragon"], ""),
        entry(&["dragon"], "@@depth 2\n\n"),
    ]);
    let o = scan(&b, &user("dragon"));
    assert!(o.act.is_empty());
    assert_eq!(reason_of(&o, 0), "empty content");
    assert_eq!(reason_of(&o, 1), "empty content");
}

#[test]
fn spec_content_inserted_once_however_often_it_matches() {
    let b = book(vec![entry(&["dragon", "wyrm"], "D")]);
    let o = scan(&b, &user("dragon dragon wyrm"));
    assert_eq!(o.act, [0]);
}

#[test]
fn spec_insertion_order_lower_first_in_prompt() {
    let b = book(vec![
        with(
            entry(&["a"], "A"),
            json!({"insertion_order": 30, "position": "before_char"}),
        ),
        with(
            entry(&["a"], "B"),
            json!({"insertion_order": 10, "position": "before_char"}),
        ),
        with(
            entry(&["a"], "C"),
            json!({"insertion_order": 20, "position": "before_char"}),
        ),
    ]);
    assert_eq!(scan(&b, &user("a")).act, [1, 2, 0]);
}

#[test]
fn spec_position_before_and_after_char_and_st_positions() {
    let b = book(vec![
        with(entry(&["a"], "A"), json!({"position": "after_char"})),
        with(entry(&["a"], "B"), json!({"position": "before_char"})),
        ext(
            entry(&["a"], "C"),
            json!({"position": 4, "depth": 3, "role": 2}),
        ),
        ext(
            entry(&["a"], "D"),
            json!({"position": "7", "outlet_name": "x"}),
        ),
    ]);
    let o = scan(&b, &user("a"));
    assert_eq!(o.act, [1, 0, 2, 3]);
    assert_eq!(
        o.positions[2],
        ("at_depth".into(), Some(3), Some("assistant"))
    );
    assert_eq!(o.positions[3].0, "outlet");
}

#[test]
fn spec_token_budget_drops_lowest_priority_first() {
    // Each content is ~10 tokens with the estimate; budget fits two.
    let c = "x".repeat(33);
    let b = book_with(
        json!({"token_budget": 22}),
        vec![
            with(entry(&["a"], &c), json!({"priority": 1})),
            with(entry(&["a"], &c), json!({"priority": 5})),
            with(entry(&["a"], &c), json!({"priority": 3})),
        ],
    );
    let o = scan(&b, &user("a"));
    let mut act = o.act.clone();
    act.sort();
    assert_eq!(act, [1, 2]);
    assert!(reason_of(&o, 0).starts_with("budget"));
    assert_eq!(o.tokens, 20);
}

/// Issue 16 (`prompt --max-context` lists every cut entry): with `explain_cut`, candidates the
/// budget cut unchecked are checked: those that would have fired are `budget (N tokens)`, the
/// others keep their own reason, and none is left unchecked; without it they are only counted.
#[test]
fn explain_cut_checks_the_candidates_the_budget_cut() {
    let c = "x".repeat(33);
    let b = book_with(
        json!({"token_budget": 10}),
        vec![
            with(entry(&["a"], &c), json!({"insertion_order": 9})),
            with(entry(&["a"], &c), json!({"insertion_order": 5})),
            with(entry(&["a"], &c), json!({"insertion_order": 1})),
            with(entry(&["zz"], &c), json!({"insertion_order": 0})),
        ],
    );
    let plain = ScanOptions::default();
    let cut = ScanOptions {
        explain_cut: true,
        ..Default::default()
    };
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &b,
        kind: BookKind::Global,
        name: "b".into(),
        world_info: false,
    }]);
    let st = ScanState::default();
    let r = compiled.scan(&user("a"), &st, &plain, &ccv3_tokens::Estimate);
    assert_eq!(r.activated.len(), 1);
    assert!(r.unchecked > 0, "{:?}", r.rejected);
    let r = compiled.scan(&user("a"), &st, &cut, &ccv3_tokens::Estimate);
    assert_eq!(r.unchecked, 0);
    let rej: Vec<(usize, String)> = r
        .rejected
        .iter()
        .map(|x| (x.entry.index, x.reason.to_string()))
        .collect();
    assert!(rej.contains(&(1, "budget (10 tokens)".into())), "{rej:?}");
    assert!(rej.contains(&(2, "budget (10 tokens)".into())), "{rej:?}");
    assert!(
        !rej.iter().any(|(i, r)| *i == 3 && r.starts_with("budget")),
        "{rej:?}"
    );
}

#[test]
fn spec_token_budget_falls_back_to_insertion_order() {
    let c = "x".repeat(33);
    let b = book_with(
        json!({"token_budget": 10}),
        vec![
            with(entry(&["a"], &c), json!({"insertion_order": 1})),
            with(entry(&["a"], &c), json!({"insertion_order": 9})),
        ],
    );
    assert_eq!(scan(&b, &user("a")).act, [1]);
}

#[test]
fn st_budget_constant_entries_first_and_ignore_budget() {
    let c = "x".repeat(33);
    let b = book_with(
        json!({"token_budget": 10}),
        vec![
            with(entry(&["a"], &c), json!({"priority": 100})),
            with(entry(&[], &c), json!({"constant": true, "priority": 0})),
            ext(entry(&["a"], &c), json!({"ignore_budget": true})),
        ],
    );
    let mut act = scan(&b, &user("a")).act;
    act.sort();
    assert_eq!(act, [1, 2]);
}

// ---- decorators ----

#[test]
fn spec_decorators_removed_from_content() {
    let b = book(vec![entry(&["a"], "@@depth 1\n@@role user\n\nBody")]);
    let o = scan(&b, &user("a"));
    assert_eq!(o.contents, ["Body"]);
    assert_eq!(o.positions[0], ("at_depth".into(), Some(1), Some("user")));
}

#[test]
fn spec_decorator_activate_in_any_case_and_dont_activate() {
    let b = book(vec![
        entry(&["zzz"], "@@activate\nA"),
        entry(&["a"], "@@dont_activate\nB"),
        entry(&["a"], "@@dont_activate\n@@activate\nC"),
    ]);
    let o = scan(&b, &user("a"));
    assert_eq!(o.act, [0, 2]);
    assert_eq!(reason_of(&o, 1), "decorator @@dont_activate");
}

#[test]
fn spec_decorator_activate_only_after_counts_assistant_messages() {
    let b = book(vec![entry(&["a"], "@@activate_only_after 2\nA")]);
    let c1 = chat(&[(Role::Assistant, "greeting"), (Role::User, "a")]);
    assert!(scan(&b, &c1).act.is_empty());
    let c2 = chat(&[
        (Role::Assistant, "greeting"),
        (Role::User, "x"),
        (Role::Assistant, "y"),
        (Role::User, "a"),
    ]);
    assert_eq!(scan(&b, &c2).act, [0]);
}

#[test]
fn spec_decorator_activate_only_every() {
    let b = book(vec![entry(&["a"], "@@activate_only_every 2\nA")]);
    let c1 = chat(&[(Role::Assistant, "g"), (Role::User, "a")]);
    assert!(scan(&b, &c1).act.is_empty());
    let c2 = chat(&[
        (Role::Assistant, "g"),
        (Role::Assistant, "h"),
        (Role::User, "a"),
    ]);
    assert_eq!(scan(&b, &c2).act, [0]);
}

#[test]
fn spec_decorator_is_greeting() {
    let b = book(vec![entry(&["a"], "@@is_greeting 1\nA")]);
    let o = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions {
            greeting: Some(0),
            ..all()
        },
    );
    assert_eq!(reason_of(&o, 0), "decorator @@is_greeting");
    let o = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions {
            greeting: Some(1),
            ..all()
        },
    );
    assert_eq!(o.act, [0]);
}

#[test]
fn spec_decorator_is_user_icon() {
    let b = book(vec![entry(&["a"], "@@is_user_icon cat\nA")]);
    let o = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions {
            user_icon: Some("dog".into()),
            ..all()
        },
    );
    assert!(o.act.is_empty());
    assert_eq!(scan(&b, &user("a")).act, [0]);
}

#[test]
fn spec_decorator_additional_keys_and_exclude_keys() {
    let b = book(vec![
        entry(
            &["dragon"],
            "@@additional_keys red, blue\n@@additional_keys big\nA",
        ),
        entry(&["dragon"], "@@exclude_keys baby\nB"),
    ]);
    assert_eq!(scan(&b, &user("a big red dragon")).act, [0, 1]);
    let o = scan(&b, &user("a red baby dragon"));
    assert!(o.act.is_empty());
    assert_eq!(reason_of(&o, 0), "decorator @@additional_keys");
    assert!(reason_of(&o, 1).starts_with("decorator @@exclude_keys"));
}

#[test]
fn spec_decorator_position_beats_depth_and_reverse_depth_counts_from_oldest() {
    let b = book(vec![
        entry(&["a"], "@@position after_desc\n@@depth 3\nA"),
        entry(&["a"], "@@reverse_depth 1\nB"),
    ]);
    let c = chat(&[(Role::User, "x"), (Role::Assistant, "y"), (Role::User, "a")]);
    let o = scan(&b, &c);
    assert_eq!(o.positions[0].0, "after_desc");
    assert_eq!(o.positions[1], ("at_depth".into(), Some(2), Some("system")));
}

#[test]
fn spec_decorator_probability_and_extras_order_priority() {
    let b = book(vec![
        entry(&["a"], "@@probability 0\nA"),
        with(
            entry(&["a"], "@@order 1\n@@position before_char\nB"),
            json!({"insertion_order": 50}),
        ),
        with(
            entry(&["a"], "@@position before_char\nC"),
            json!({"insertion_order": 5}),
        ),
    ]);
    let o = scan(&b, &user("a"));
    assert_eq!(o.act, [1, 2]);
    assert!(reason_of(&o, 0).starts_with("probability roll"));
}

#[test]
fn spec_decorator_ignore_on_max_context_cut_first() {
    let c = "x".repeat(33);
    let b = book(vec![
        with(
            entry(&["a"], &format!("@@ignore_on_max_context\n{c}")),
            json!({"priority": 100}),
        ),
        entry(&["a"], &c),
    ]);
    let o = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions {
            max_context: Some(100),
            context_tokens: 85,
            ..all()
        },
    );
    assert_eq!(o.act, [1]);
    assert!(reason_of(&o, 0).starts_with("budget"));
}

#[test]
fn spec_decorator_disable_ui_prompt_reported() {
    let b = book(vec![entry(&["a"], "@@disable_ui_prompt system_prompt\nA")]);
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &b,
        kind: BookKind::Global,
        name: "b".into(),
        world_info: false,
    }]);
    let r = compiled.scan(
        &user("a"),
        &Default::default(),
        &Default::default(),
        &ccv3_tokens::Estimate,
    );
    assert_eq!(r.disabled_ui_prompts, ["system_prompt"]);
}

#[test]
fn spec_decorator_instruct_depth_and_reverse_instruct_depth_ignored_in_chat_context() {
    // A chat context: `@@instruct_depth` and `@@reverse_instruct_depth` place nothing; the entry
    // goes where it would go without them (its V2 `position`, or `@@depth` when present).
    let b = book(vec![
        with(
            entry(&["a"], "@@instruct_depth 0\nA"),
            json!({"position": "before_char"}),
        ),
        entry(&["a"], "@@reverse_instruct_depth 1\nB"),
        entry(&["a"], "@@instruct_depth 3\n@@depth 1\nC"),
        entry(&["a"], "@@reverse_instruct_depth 2\n@@reverse_depth 1\nD"),
    ]);
    let c = chat(&[(Role::User, "x"), (Role::Assistant, "y"), (Role::User, "a")]);
    let o = scan(&b, &c);
    assert_eq!(o.act.len(), 4, "{:?}", o.rej);
    assert_eq!(position_of(&o, 0), ("before_char".into(), None, None));
    assert_eq!(position_of(&o, 1), ("after_char".into(), None, None));
    assert_eq!(
        position_of(&o, 2),
        ("at_depth".into(), Some(1), Some("system"))
    );
    assert_eq!(
        position_of(&o, 3),
        ("at_depth".into(), Some(2), Some("system"))
    );
}

#[test]
fn spec_decorator_instruct_scan_depth_ignored_in_chat_context() {
    // The key is in the older of two messages: one token (or one message) back does not reach it.
    let c = chat(&[(Role::User, "the dragon"), (Role::Assistant, "it sleeps")]);
    let b = book(vec![
        entry(&["dragon"], "@@instruct_scan_depth 1\nA"),
        entry(&["dragon"], "@@instruct_scan_depth 0\nB"),
        entry(&["dragon"], "@@scan_depth 1\nC"),
    ]);
    let o = scan(&b, &c);
    assert_eq!(o.act, [0, 1]);
    assert!(
        reason_of(&o, 2).starts_with("scan depth"),
        "{}",
        reason_of(&o, 2)
    );
}

#[test]
fn spec_decorator_is_greeting_ignored_without_known_greeting() {
    let b = book(vec![
        entry(&["a"], "@@is_greeting 1\nA"),
        entry(&["a"], "@@is_greeting 0\nB"),
    ]);
    // No active greeting known (`ScanOptions::greeting` is `None`): both are matches.
    let o = scan(&b, &user("a"));
    assert_eq!(o.act, [0, 1]);
    // The same entries with a known greeting that is neither.
    let o = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions {
            greeting: Some(2),
            ..all()
        },
    );
    assert!(o.act.is_empty());
    assert_eq!(reason_of(&o, 0), "decorator @@is_greeting");
}

#[test]
fn spec_decorator_position_unsupported_value_ignored_so_fallback_applies() {
    let b = book(vec![
        // Unsupported: `@@depth` applies.
        entry(&["a"], "@@position nowhere\n@@depth 2\nA"),
        // Unsupported: its `@@@` fallback applies.
        entry(
            &["a"],
            "@@position top_of_screen\n@@@position after_desc\nB",
        ),
        // Unsupported and nothing else: the V2 `position` field applies.
        with(
            entry(&["a"], "@@position 42\nC"),
            json!({"position": "before_char"}),
        ),
        // Unsupported and nothing else at all: the default position.
        entry(&["a"], "@@position footer\nD"),
    ]);
    let o = scan(&b, &user("a"));
    assert_eq!(o.act.len(), 4, "{:?}", o.rej);
    assert_eq!(
        position_of(&o, 0),
        ("at_depth".into(), Some(2), Some("system"))
    );
    assert_eq!(position_of(&o, 1), ("after_desc".into(), None, None));
    assert_eq!(position_of(&o, 2), ("before_char".into(), None, None));
    assert_eq!(position_of(&o, 3), ("after_char".into(), None, None));
}

#[test]
fn spec_decorator_ignore_on_max_context_ignored_without_max_context() {
    // A book budget with room for one entry: without a maximum context the decorator changes
    // nothing and the higher priority wins; with one, the decorated entry is cut first.
    let c = "x".repeat(33);
    let b = book_with(
        json!({"token_budget": 10}),
        vec![
            with(
                entry(&["a"], &format!("@@ignore_on_max_context\n{c}")),
                json!({"priority": 100}),
            ),
            with(entry(&["a"], &c), json!({"priority": 1})),
        ],
    );
    let o = scan(&b, &user("a"));
    assert_eq!(o.act, [0]);
    assert!(reason_of(&o, 1).starts_with("budget"));
    let o = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions {
            max_context: Some(1000),
            ..all()
        },
    );
    assert_eq!(o.act, [1]);
}

#[test]
fn spec_decorator_additional_keys_are_regexes_with_use_regex() {
    let b = book(vec![
        with(
            entry(&["drag(on|oon)"], "@@additional_keys re+d, bl[ue]{2}\nA"),
            json!({"use_regex": true}),
        ),
        // The same values without `use_regex` are plain text.
        entry(&["dragon"], "@@additional_keys re+d, bl[ue]{2}\nB"),
    ]);
    assert_eq!(scan(&b, &user("a reeed dragon")).act, [0]);
    assert_eq!(scan(&b, &user("a BLUE dragoon")).act, [0]);
    let o = scan(&b, &user("a green dragon"));
    assert!(o.act.is_empty());
    assert_eq!(reason_of(&o, 0), "decorator @@additional_keys");
    assert_eq!(scan(&b, &user("a re+d dragon")).act, [1]);
}

#[test]
fn spec_decorator_additional_keys_invalid_regex_is_no_match() {
    let b = book(vec![
        // An invalid pattern beside one that matches: the entry is still not a match.
        with(
            entry(&["dragon"], "@@additional_keys (red, blue\nA"),
            json!({"use_regex": true}),
        ),
        // Only the invalid pattern.
        with(
            entry(&["dragon"], "@@additional_keys [red\nB"),
            json!({"use_regex": true}),
        ),
        // A valid group beside a group with an invalid pattern.
        with(
            entry(
                &["dragon"],
                "@@additional_keys blue\n@@additional_keys red, (\nC",
            ),
            json!({"use_regex": true}),
        ),
        // Control: valid patterns only.
        with(
            entry(&["dragon"], "@@additional_keys red, blue\nD"),
            json!({"use_regex": true}),
        ),
    ]);
    let o = scan(&b, &user("a red and blue dragon"));
    assert_eq!(o.act, [3]);
    for i in 0..3 {
        assert_eq!(reason_of(&o, i), "decorator @@additional_keys", "entry {i}");
    }
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &b,
        kind: BookKind::Global,
        name: "b".into(),
        world_info: false,
    }]);
    assert!(compiled
        .diagnostics()
        .iter()
        .any(|d| d.code == "lore-regex-invalid"));
}

#[test]
fn spec_decorator_exclude_keys_ignored_with_use_regex() {
    let b = book(vec![
        with(
            entry(&["dragon"], "@@exclude_keys baby\nA"),
            json!({"use_regex": true}),
        ),
        entry(&["dragon"], "@@exclude_keys baby\nB"),
    ]);
    let o = scan(&b, &user("a baby dragon"));
    assert_eq!(o.act, [0]);
    assert!(reason_of(&o, 1).starts_with("decorator @@exclude_keys"));
}

#[test]
fn spec_decorator_disable_ui_prompt_unrecognised_value_ignored() {
    let scan_disabled = |content: &str| {
        let b = book(vec![entry(&["a"], content)]);
        let compiled = LorebookCompiler::new().compile(&[BookInput {
            book: &b,
            kind: BookKind::Global,
            name: "b".into(),
            world_info: false,
        }]);
        let r = compiled.scan(
            &user("a"),
            &Default::default(),
            &Default::default(),
            &ccv3_tokens::Estimate,
        );
        assert_eq!(r.activated.len(), 1, "{content:?}");
        assert_eq!(r.activated[0].content, "A");
        r.disabled_ui_prompts
    };
    assert!(scan_disabled("@@disable_ui_prompt authors_note\nA").is_empty());
    // Ignored, so its fallback applies.
    assert_eq!(
        scan_disabled("@@disable_ui_prompt authors_note\n@@@disable_ui_prompt system_prompt\nA"),
        ["system_prompt"]
    );
}

#[test]
fn spec_keep_activate_after_match_multi_turn() {
    let b = book(vec![
        entry(&["dragon"], "@@keep_activate_after_match\nK"),
        entry(&["dragon"], "@@keep\nK2"),
    ]);
    let mut st = ScanState::default();
    let o = run(&b, &chat(&[(Role::User, "hi")]), &st, &all());
    assert!(o.act.is_empty());
    st = o.state;
    let o = run(
        &b,
        &chat(&[(Role::User, "hi"), (Role::User, "dragon")]),
        &st,
        &all(),
    );
    assert_eq!(o.act, [0, 1]);
    st = o.state;
    let o = run(
        &b,
        &chat(&[
            (Role::User, "hi"),
            (Role::User, "dragon"),
            (Role::User, "no"),
            (Role::User, "nothing"),
        ]),
        &st,
        &all(),
    );
    assert_eq!(o.act, [0, 1]);
    assert_eq!(o.reasons[0], "decorator @@keep_activate_after_match");
}

#[test]
fn spec_dont_activate_after_match_multi_turn() {
    let b = book(vec![entry(&["dragon"], "@@dont_activate_after_match\nD")]);
    let o = run(
        &b,
        &chat(&[(Role::User, "dragon")]),
        &Default::default(),
        &all(),
    );
    assert_eq!(o.act, [0]);
    // Regenerating at the same chat length is not "matched before".
    let again = run(&b, &chat(&[(Role::User, "dragon")]), &o.state, &all());
    assert_eq!(again.act, [0]);
    let o2 = run(
        &b,
        &chat(&[(Role::User, "dragon"), (Role::User, "dragon")]),
        &o.state,
        &all(),
    );
    assert!(o2.act.is_empty());
    assert_eq!(reason_of(&o2, 0), "decorator @@dont_activate_after_match");
}

// ---- recursion ----

#[test]
fn st_recursion_activates_entries_mentioned_in_content() {
    let b = book_with(
        json!({"recursive_scanning": true}),
        vec![
            entry(&["bessie"], "Bessie is a cow and is friends with Rufus."),
            entry(&["rufus"], "Rufus is a dog."),
        ],
    );
    let o = scan(&b, &user("I met Bessie"));
    assert_eq!(o.act.len(), 2);
    assert!(
        o.reasons.iter().any(|r| r.contains("recursion")),
        "{:?}",
        o.reasons
    );
}

#[test]
fn spec_recursive_scanning_false_must_not_recurse() {
    let b = book_with(
        json!({"recursive_scanning": false}),
        vec![
            entry(&["bessie"], "Bessie knows Rufus."),
            entry(&["rufus"], "Rufus is a dog."),
        ],
    );
    let o = run(
        &b,
        &user("Bessie"),
        &Default::default(),
        &ScanOptions {
            recursive: true,
            ..all()
        },
    );
    assert_eq!(o.act, [0]);
}

#[test]
fn st_recursion_option_for_books_that_do_not_say() {
    let b = book(vec![
        entry(&["bessie"], "Bessie knows Rufus."),
        entry(&["rufus"], "Rufus."),
    ]);
    assert_eq!(scan(&b, &user("Bessie")).act, [0]);
    let o = run(
        &b,
        &user("Bessie"),
        &Default::default(),
        &ScanOptions {
            recursive: true,
            ..all()
        },
    );
    assert_eq!(o.act.len(), 2);
}

#[test]
fn st_prevent_recursion_and_exclude_recursion() {
    let b = book_with(
        json!({"recursive_scanning": true}),
        vec![
            ext(
                entry(&["bessie"], "Bessie knows Rufus."),
                json!({"prevent_recursion": true}),
            ),
            entry(&["rufus"], "Rufus."),
            entry(&["carl"], "Carl knows Dora."),
            ext(
                entry(&["dora"], "Dora."),
                json!({"exclude_recursion": true}),
            ),
        ],
    );
    let o = scan(&b, &user("Bessie and Carl"));
    let mut a = o.act.clone();
    a.sort();
    assert_eq!(a, [0, 2]);
}

#[test]
fn st_delay_until_recursion_with_levels() {
    let b = book_with(
        json!({"recursive_scanning": true}),
        vec![
            entry(&["bessie"], "Bessie knows Rufus and Xena."),
            ext(
                entry(&["rufus"], "Rufus."),
                json!({"delay_until_recursion": true}),
            ),
            ext(
                entry(&["xena"], "Xena."),
                json!({"delay_until_recursion": 2}),
            ),
            ext(
                entry(&["bessie"], "direct"),
                json!({"delay_until_recursion": true}),
            ),
        ],
    );
    let o = scan(&b, &user("Bessie"));
    let mut a = o.act.clone();
    a.sort();
    assert_eq!(a, [0, 1, 2, 3]);
    // Without anything to recurse from, a delayed entry still gets its recursion pass (ST).
    let b2 = book(vec![ext(
        entry(&["rufus"], "R"),
        json!({"delay_until_recursion": true}),
    )]);
    assert_eq!(scan(&b2, &user("rufus")).act, [0]);
}

#[test]
fn st_max_recursion_steps_limits_passes() {
    let b = book_with(
        json!({"recursive_scanning": true}),
        vec![
            entry(&["a1"], "a2"),
            entry(&["a2"], "a3"),
            entry(&["a3"], "end"),
        ],
    );
    let o = run(
        &b,
        &user("a1"),
        &Default::default(),
        &ScanOptions {
            max_recursion_steps: 2,
            ..all()
        },
    );
    let mut a = o.act.clone();
    a.sort();
    assert_eq!(a, [0, 1]);
}

#[test]
fn spec_hidden_key_counts_only_in_recursive_scans() {
    let b = book_with(
        json!({"recursive_scanning": true}),
        vec![
            entry(&["castle"], "The castle. {{hidden_key:secret door}}"),
            entry(&["secret door"], "S"),
        ],
    );
    let o = scan(&b, &user("castle"));
    assert_eq!(o.act.len(), 2);
    let o = scan(&b, &user("a {{hidden_key:secret door}} here"));
    assert!(o.act.is_empty());
}

#[test]
fn st_min_activations_scan_deeper() {
    let c = chat(&[
        (Role::User, "dragon"),
        (Role::User, "x"),
        (Role::User, "y"),
        (Role::User, "z"),
    ]);
    let b = book(vec![entry(&["dragon"], "D")]);
    assert!(scan(&b, &c).act.is_empty());
    let o = run(
        &b,
        &c,
        &Default::default(),
        &ScanOptions {
            min_activations: 1,
            ..all()
        },
    );
    assert_eq!(o.act, [0]);
    let o = run(
        &b,
        &c,
        &Default::default(),
        &ScanOptions {
            min_activations: 1,
            min_activations_depth_max: 3,
            ..all()
        },
    );
    assert!(o.act.is_empty());
}

// ---- probability and groups ----

#[test]
fn st_probability_seeded_and_reproducible() {
    let entries: Vec<Value> = (0..200)
        .map(|i| {
            ext(
                entry(&["a"], &format!("E{i}")),
                json!({"probability": 50, "useProbability": true}),
            )
        })
        .collect();
    let b = book(entries);
    let o1 = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions { seed: 7, ..all() },
    );
    let o2 = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions { seed: 7, ..all() },
    );
    let o3 = run(
        &b,
        &user("a"),
        &Default::default(),
        &ScanOptions { seed: 8, ..all() },
    );
    assert_eq!(o1.act, o2.act);
    assert_ne!(o1.act, o3.act);
    assert!(o1.act.len() > 60 && o1.act.len() < 140, "{}", o1.act.len());
    // useProbability false disables the roll.
    let b = book(vec![ext(
        entry(&["a"], "E"),
        json!({"probability": 0, "useProbability": false}),
    )]);
    assert_eq!(scan(&b, &user("a")).act, [0]);
}

#[test]
fn st_inclusion_group_one_winner() {
    let b = book(vec![
        ext(entry(&["a"], "A"), json!({"group": "g"})),
        ext(entry(&["a"], "B"), json!({"group": "g"})),
        ext(entry(&["a"], "C"), json!({"group": "g, h"})),
        entry(&["a"], "D"),
    ]);
    let o = scan(&b, &user("a"));
    assert_eq!(o.act.len(), 2);
    assert!(o.act.contains(&3));
    assert!(o.rej.iter().filter(|(_, r)| r.starts_with("group")).count() == 2);
}

#[test]
fn st_inclusion_group_prioritize_takes_highest_order() {
    let b = book(vec![
        with(
            ext(
                entry(&["a"], "A"),
                json!({"group": "g", "group_override": true}),
            ),
            json!({"insertion_order": 5}),
        ),
        with(
            ext(
                entry(&["a"], "B"),
                json!({"group": "g", "group_override": true}),
            ),
            json!({"insertion_order": 50}),
        ),
        with(
            ext(entry(&["a"], "C"), json!({"group": "g"})),
            json!({"insertion_order": 500}),
        ),
    ]);
    for seed in 0..10 {
        let o = run(
            &b,
            &user("a"),
            &Default::default(),
            &ScanOptions { seed, ..all() },
        );
        assert_eq!(o.act, [1]);
    }
}

#[test]
fn st_inclusion_group_weights() {
    let b = book(vec![
        ext(entry(&["a"], "A"), json!({"group": "g", "group_weight": 1})),
        ext(
            entry(&["a"], "B"),
            json!({"group": "g", "group_weight": 1000}),
        ),
    ]);
    let mut wins_b = 0;
    for seed in 0..50 {
        let o = run(
            &b,
            &user("a"),
            &Default::default(),
            &ScanOptions { seed, ..all() },
        );
        assert_eq!(o.act.len(), 1);
        if o.act == [1] {
            wins_b += 1;
        }
    }
    assert!(wins_b >= 45, "{wins_b}");
}

#[test]
fn st_group_scoring_keeps_most_key_matches() {
    // The doc's example: "sing me a song about Ghosts" activates only entry 2.
    let b = book(vec![
        ext(
            entry(&["song", "sing", "Black Cat"], "1"),
            json!({"group": "songs"}),
        ),
        ext(
            entry(&["song", "sing", "Ghosts"], "2"),
            json!({"group": "songs"}),
        ),
    ]);
    let o = run(
        &b,
        &user("sing me a song about Ghosts"),
        &Default::default(),
        &ScanOptions {
            group_scoring: true,
            ..all()
        },
    );
    assert_eq!(o.act, [1]);
    let mut seen = std::collections::HashSet::new();
    for seed in 0..20 {
        let o = run(
            &b,
            &user("sing me a song"),
            &Default::default(),
            &ScanOptions {
                group_scoring: true,
                seed,
                ..all()
            },
        );
        assert_eq!(o.act.len(), 1);
        seen.insert(o.act[0]);
    }
    assert_eq!(seen.len(), 2);
}

// ---- timed effects ----

fn timeline_chat(n: usize) -> Chat {
    chat(&(0..n).map(|_| (Role::User, "dragon")).collect::<Vec<_>>())
}

#[test]
fn st_timed_effects_sticky_cooldown_timeline_matches_doc() {
    // Entry configuration: sticky = 3, cooldown = 2, delay = 2 (World Info doc). Every message
    // mentions the key; "Message N" is the scan of a chat whose newest message is message N.
    let b = book(vec![ext(
        entry(&["dragon"], "D"),
        json!({"sticky": 3, "cooldown": 2, "delay": 2}),
    )]);
    let want = [
        "delay",
        "activated",
        "sticky",
        "sticky",
        "sticky",
        "cooldown",
        "cooldown",
        "activated",
    ];
    let mut st = ScanState::default();
    for (n, w) in want.iter().enumerate() {
        let o = run(&b, &timeline_chat(n + 1), &st, &all());
        let got = if o.act.is_empty() {
            reason_of(&o, 0)
        } else if o.reasons[0] == "sticky" {
            "sticky".to_string()
        } else {
            "activated".to_string()
        };
        assert_eq!(&got, w, "message {n}");
        st = o.state;
    }
}

#[test]
fn st_timed_effects_cooldown_alone_and_no_refresh() {
    let b = book(vec![ext(entry(&["dragon"], "D"), json!({"cooldown": 2}))]);
    let mut st = ScanState::default();
    let mut got = Vec::new();
    for n in 1..=5 {
        let o = run(&b, &timeline_chat(n), &st, &all());
        got.push(!o.act.is_empty());
        st = o.state;
    }
    assert_eq!(got, [true, false, false, true, false]);
}

#[test]
fn st_timed_effects_removed_when_chat_does_not_advance() {
    let b = book(vec![ext(entry(&["dragon"], "D"), json!({"sticky": 3}))]);
    let o = run(&b, &timeline_chat(2), &Default::default(), &all());
    assert_eq!(o.state.sticky.len(), 1);
    // Swipe: same chat length, key gone: the sticky record is dropped, entry not active.
    let o2 = run(
        &b,
        &chat(&[(Role::User, "x"), (Role::User, "nothing")]),
        &o.state,
        &all(),
    );
    assert!(o2.act.is_empty());
    // Next message without the key: sticky keeps it.
    let o3 = run(
        &b,
        &chat(&[(Role::User, "x"), (Role::User, "y"), (Role::User, "z")]),
        &o.state,
        &all(),
    );
    assert_eq!(o3.reasons, ["sticky"]);
}

#[test]
fn st_sticky_skips_probability() {
    let b = book(vec![ext(
        entry(&["dragon"], "D"),
        json!({"sticky": 5, "probability": 0, "useProbability": true}),
    )]);
    let mut st = ScanState::default();
    st.sticky.insert(
        crate::state::key({
            let c = LorebookCompiler::new().compile(&[BookInput {
                book: &b,
                kind: BookKind::Global,
                name: "b".into(),
                world_info: false,
            }]);
            c.id(&c.entries[0])
        }),
        TimedRecord {
            start: 1,
            end: 6,
            protected: false,
            entry: String::new(),
        },
    );
    let o = run(&b, &timeline_chat(2), &st, &all());
    assert_eq!(o.reasons, ["sticky"]);
}

#[test]
fn state_round_trips_through_json() {
    let b = book(vec![ext(
        entry(&["dragon"], "D"),
        json!({"sticky": 3, "cooldown": 2}),
    )]);
    let o = run(&b, &timeline_chat(2), &Default::default(), &all());
    let text = o.state.to_json();
    assert_eq!(ScanState::from_json(&text).unwrap(), o.state);
    assert!(ScanState::from_json("[1]").is_err());
}

// ---- strategies ----

#[test]
fn st_strategies_merge_character_and_global_books() {
    let c = book_with(
        json!({"token_budget": 10}),
        vec![with(
            entry(&["a"], &"c".repeat(33)),
            json!({"insertion_order": 1}),
        )],
    );
    let g = book(vec![with(
        entry(&["a"], &"g".repeat(33)),
        json!({"insertion_order": 99}),
    )]);
    let run_s = |s: Strategy, budget: usize| {
        let compiled = LorebookCompiler::new().strategy(s).compile(&[
            BookInput {
                book: &c,
                kind: BookKind::Character,
                name: "c".into(),
                world_info: false,
            },
            BookInput {
                book: &g,
                kind: BookKind::Global,
                name: "g".into(),
                world_info: false,
            },
        ]);
        let r = compiled.scan(
            &user("a"),
            &Default::default(),
            &ScanOptions {
                token_budget: Some(budget),
                ..Default::default()
            },
            &ccv3_tokens::Estimate,
        );
        r.activated.iter().map(|a| a.entry.book).collect::<Vec<_>>()
    };
    // With room for one entry the strategy decides which book wins.
    assert_eq!(run_s(Strategy::CharacterFirst, 10), [0]);
    assert_eq!(run_s(Strategy::GlobalFirst, 10), [1]);
    assert_eq!(run_s(Strategy::Evenly, 10), [1]);
    assert_eq!(
        Strategy::parse("character_first"),
        Some(Strategy::CharacterFirst)
    );
}

#[test]
fn explaining_budget_cut_entries_on_two_threads_gives_the_one_thread_reasons() {
    // 3,000 entries that all match; a budget that fits a few; the rest are explained after the
    // scan, with reasons of every kind (secondary logic, decorators, regex keys, budget).
    let entries: Vec<Value> = (0..3000)
        .map(|i| {
            let e = entry(&["alpha", &format!("k{i}")], &format!("content {i} alpha"));
            match i % 5 {
                0 => with(e, json!({"selective": true, "secondary_keys": ["nope"]})),
                1 => with(e, json!({"content": format!("@@dont_activate\nc{i}")})),
                2 => with(
                    e,
                    json!({"keys": ["/alph[a-z]/i", format!("/zz{}/", i % 7)]}),
                ),
                3 => with(e, json!({"content": ""})),
                _ => e,
            }
        })
        .collect();
    let b = book_with(json!({"token_budget": 50}), entries);
    let o = ScanOptions {
        explain_all: true,
        ..Default::default()
    };
    let c = user("alpha and alphabet");
    // In two halves: on two threads with the `parallel` feature, one after the other without.
    crate::scan::EXPLAIN_SPLIT.with(|f| f.set(Some(true)));
    let two = run(&b, &c, &Default::default(), &o);
    crate::scan::EXPLAIN_SPLIT.with(|f| f.set(Some(false)));
    let one = run(&b, &c, &Default::default(), &o);
    crate::scan::EXPLAIN_SPLIT.with(|f| f.set(None));
    assert_eq!(two.act, one.act);
    assert_eq!(two.rej, one.rej);
    assert!(two.rej.len() > 2900);
    let kinds: std::collections::BTreeSet<&str> = two
        .rej
        .iter()
        .map(|(_, r)| r.split(' ').next().unwrap_or(""))
        .collect();
    assert!(kinds.len() >= 4, "{kinds:?}");
}

// ---- properties ----

mod props {
    use super::*;
    use proptest::prelude::{prop_assert_eq, proptest, ProptestConfig};
    use proptest::strategy::Strategy as _;

    fn words() -> impl proptest::strategy::Strategy<Value = Vec<String>> {
        proptest::collection::vec(
            proptest::sample::select(vec!["alpha", "beta", "gamma", "delta", "omega", "zeta"])
                .prop_map(String::from),
            1..4,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        #[test]
        fn result_independent_of_order_of_unrelated_entries(
            keys in proptest::collection::vec(words(), 1..12),
            probs in proptest::collection::vec(0u8..=100, 12),
            text in "(alpha|beta|gamma|delta|x| ){0,30}",
            seed in 0u64..1000,
            perm_seed in 0u64..1000,
        ) {
            let entries: Vec<Value> = keys.iter().enumerate().map(|(i, k)| {
                let ks: Vec<&str> = k.iter().map(String::as_str).collect();
                ext(entry(&ks, &format!("content {i}")), json!({"probability": probs[i % probs.len()]}))
            }).collect();
            let mut shuffled: Vec<(usize, Value)> = entries.iter().cloned().enumerate().collect();
            // A deterministic permutation.
            shuffled.sort_by_key(|(i, _)| crate::text::mix(perm_seed ^ *i as u64));
            let b1 = book(entries.clone());
            let b2 = book(shuffled.iter().map(|(_, e)| e.clone()).collect());
            let o = ScanOptions { seed, ..Default::default() };
            let r1 = run(&b1, &user(&text), &Default::default(), &o);
            let r2 = run(&b2, &user(&text), &Default::default(), &o);
            let mut c1 = r1.contents.clone();
            let mut c2 = r2.contents.clone();
            c1.sort();
            c2.sort();
            prop_assert_eq!(c1, c2);
        }

        #[test]
        fn single_scan_compile_gives_the_same_result(
            keys in proptest::collection::vec(words(), 1..12),
            cased in proptest::collection::vec(proptest::bool::ANY, 12),
            text in "(Alpha|beta|gamma|delta|omegazeta|x| |\\n){0,30}",
            recursive in proptest::bool::ANY,
        ) {
            // Plain keys of every length (short ones too), case-sensitive ones, regex keys with
            // and without literals, and entries whose content triggers others by recursion.
            let mut entries: Vec<Value> = keys.iter().enumerate().map(|(i, k)| {
                let ks: Vec<&str> = k.iter().map(String::as_str).collect();
                let e = entry(&ks, &format!("content {i} {}", k[0]));
                if cased[i % cased.len()] { with(e, json!({"case_sensitive": true})) } else { e }
            }).collect();
            entries.push(entry(&["/gam+a|zz/i", "/\\d+/", "a", "ze"], "regex"));
            // Keys that never match: an invalid regex, a refused one, one without literals.
            entries.push(entry(&["/(alpha/", "/(a+)+$/", "/[0-9]{3}/"], "bad regex"));
            let b = book(entries);
            let o = ScanOptions { recursive, explain_all: true, ..Default::default() };
            let c = user(&text);
            let input = [BookInput { book: &b, kind: BookKind::Global, name: "b".into(), world_info: false  }];
            let eager = LorebookCompiler::new().compile(&input);
            let single = LorebookCompiler::new().for_single_scan(true).compile(&input);
            let r1 = eager.scan(&c, &Default::default(), &o, &ccv3_tokens::Estimate);
            let r2 = single.scan(&c, &Default::default(), &o, &ccv3_tokens::Estimate);
            prop_assert_eq!(format!("{:?}", r1), format!("{:?}", r2));
        }

        #[test]
        fn same_seed_same_result(seed in 0u64..u64::MAX, text in "(alpha|beta|gamma| ){0,20}") {
            let entries: Vec<Value> = ["alpha", "beta", "gamma"].iter().map(|k| ext(entry(&[k], k), json!({"probability": 50, "group": "g"}))).collect();
            let b = book(entries);
            let o = ScanOptions { seed, ..all() };
            let r1 = run(&b, &user(&text), &Default::default(), &o);
            let r2 = run(&b, &user(&text), &Default::default(), &o);
            prop_assert_eq!(r1.act, r2.act);
            prop_assert_eq!(r1.rej, r2.rej);
            prop_assert_eq!(r1.state, r2.state);
        }
    }
}

/// Entry `extensions` read from a file stay text until looked into; the engine reads the
/// SillyTavern knobs from that text and must see exactly what it sees in a map.
#[test]
fn st_knobs_read_from_extensions_text_are_the_knobs_of_the_map() {
    let knobs = [
        json!({"position": 4, "depth": 2, "role": 1, "selectiveLogic": 3}),
        json!({"probability": 0, "useProbability": true, "group": "g, h", "group_weight": 5}),
        json!({"probability": 0, "useProbability": false, "sticky": 2, "match_whole_words": true}),
        json!({"position": 7, "outlet_name": "o", "case_sensitive": true, "triggers": ["normal"]}),
        json!({"exclude_recursion": "1", "prevent_recursion": 1, "delay_until_recursion": 2}),
        json!({"display_index": 3, "scan_depth": "1", "cooldown": 1, "delay": 0, "x": {"y": [1]}}),
        json!({"depth": 9, "depth": 3, "position": 4}),
    ];
    let entries: Vec<Value> = knobs
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let e = with(
                entry(&["dragon", "Wyrm"], &format!("entry {i}")),
                json!({"secondary_keys": ["cave"], "selective": true, "use_regex": true}),
            );
            ext(e, k.clone())
        })
        .collect();
    let text = json!({"spec": "lorebook_v3", "data": {"entries": entries}}).to_string();
    let from_text = match ccv3::read_bytes(text.as_bytes()).expect("book") {
        ccv3::Document::Lorebook(b) => b.book,
        ccv3::Document::Card(_) => panic!("read as a card"),
    };
    assert!(from_text
        .entries
        .iter()
        .all(|e| e.extensions.is_unparsed_text()));
    let from_map = book(entries);
    assert!(from_map
        .entries
        .iter()
        .all(|e| !e.extensions.is_unparsed_text()));
    let c = chat(&[
        (Role::User, "A dragon sleeps in the cave."),
        (Role::Assistant, "The Wyrm wakes."),
    ]);
    let (a, b) = (scan(&from_text, &c), scan(&from_map, &c));
    assert!(
        !a.act.is_empty() && !a.rej.is_empty(),
        "{:?} {:?}",
        a.act,
        a.rej
    );
    assert_eq!(a.act, b.act);
    assert_eq!(a.reasons, b.reasons);
    assert_eq!(a.rej, b.rej);
    assert_eq!(a.positions, b.positions);
    assert_eq!(a.state, b.state);
    // Scanning looked into no extensions map.
    assert!(from_text
        .entries
        .iter()
        .all(|e| e.extensions.is_unparsed_text()));
}

// ---- issue 12: hostile keys cost bounded time and memory ----

fn opts_steps(key: u64, scan: u64) -> ScanOptions {
    ScanOptions {
        regex_key_steps: key,
        regex_scan_steps: scan,
        ..all()
    }
}

#[test]
fn issue12_backtracking_key_over_its_budget_does_not_match_and_the_scan_goes_on() {
    let b = book(vec![
        entry(&["/(a*)\\1*b/"], "A"),
        entry(&["/(?=.).*.*.*.*.*.*=/"], "B"),
        entry(&["/(.*)(.*)\\2\\1=/"], "C"),
        entry(&["tail"], "D"),
    ]);
    let c = user(&("a".repeat(4096) + " tail"));
    let t = std::time::Instant::now();
    let o = run(
        &b,
        &c,
        &ScanState::default(),
        &opts_steps(20_000, 1_000_000),
    );
    assert!(t.elapsed().as_secs() < 10);
    assert_eq!(o.act, [3]);
    for i in 0..3 {
        assert_eq!(reason_of(&o, i), "regex-budget");
    }
}

#[test]
fn issue12_the_scan_budget_stops_the_remaining_regex_keys() {
    let entries: Vec<Value> = (0..20)
        // A top-level alternation: no prefilter literal, so every key runs.
        .map(|i| entry(&[&format!("/(a*)\\1*b|q{{{}}}r/", i + 2)], "x"))
        .collect();
    let b = book(entries);
    let c = user(&"a".repeat(2048));
    let t = std::time::Instant::now();
    let o = run(&b, &c, &ScanState::default(), &opts_steps(30_000, 100_000));
    assert!(t.elapsed().as_secs() < 10);
    assert!(o.act.is_empty());
    assert_eq!(o.rej.len(), 20);
    assert!(
        o.rej.iter().all(|(_, r)| r == "regex-budget"),
        "{:?}",
        o.rej
    );
}

#[test]
fn issue12_a_budgeted_regex_that_matches_in_time_still_activates() {
    let b = book(vec![entry(&["/(?<=sir )Knight\\b(?!s)/"], "K")]);
    let o = run(
        &b,
        &user(&("word ".repeat(500) + "sir Knight")),
        &ScanState::default(),
        &opts_steps(200_000, 1_000_000),
    );
    assert_eq!(o.act, [0]);
}

#[test]
fn issue12_long_bounded_gaps_are_bounded_when_the_lazy_dfa_gives_up() {
    // `[^]{0,400}` gaps make the lazy DFA thrash; its PikeVM fallback is charged up front.
    let b = book(vec![entry(&["/x[^]{0,400}y[^]{0,400}z[^]{0,400}0/"], "G")]);
    let mut seed = 7u64;
    let text: String = (0..20_000)
        .map(|_| {
            seed = crate::text::mix(seed);
            ['x', 'y', 'z', 'a', ' '][(seed % 5) as usize]
        })
        .collect();
    let t = std::time::Instant::now();
    let o = run(
        &b,
        &user(&text),
        &ScanState::default(),
        &opts_steps(50_000, 1_000_000),
    );
    assert!(t.elapsed().as_secs() < 2);
    assert!(o.act.is_empty());
    assert!(["regex-budget", "no key matched"].contains(&reason_of(&o, 0).as_str()));
}

#[test]
fn issue12_prefix_keys_over_a_long_run_cost_linear_time() {
    // `x`, `xx`, ... occur at every place of a run of x: activation needs one match each.
    let keys: Vec<String> = (1..=300).map(|n| "x".repeat(n)).collect();
    let b = book(keys.iter().map(|k| entry(&[k.as_str()], "c")).collect());
    let text = "x".repeat(150) + " and then " + &"x".repeat(30_000);
    let t = std::time::Instant::now();
    let o = scan(&b, &user(&text));
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
    // Whole words: only the key of exactly 150 x stands alone.
    assert_eq!(o.act, [149]);
    assert_eq!(reason_of(&o, 10), "no key matched");
}

#[test]
fn issue12_a_huge_key_is_linear_and_cannot_match_a_shorter_text() {
    let big = "k".repeat(1 << 20);
    let b = book(vec![entry(&[big.as_str()], "H"), entry(&["hello"], "E")]);
    let compiled = LorebookCompiler::new()
        .for_single_scan(true)
        .compile(&[BookInput {
            book: &b,
            kind: BookKind::Global,
            name: "b".into(),
            world_info: false,
        }]);
    let t = std::time::Instant::now();
    let c = user(&("k".repeat(1000) + " hello"));
    let r = compiled.scan(&c, &ScanState::default(), &all(), &ccv3_tokens::Estimate);
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
    assert_eq!(r.activated.len(), 1);
    assert_eq!(r.activated[0].entry.index, 1);
}

#[test]
fn issue12_key_macros_expand_to_at_most_twice_the_key() {
    let key = format!(
        "{{{{setvar::v::{}}}}}{}",
        "m".repeat(10_000),
        "{{getvar::v}}".repeat(200)
    );
    let out = crate::resolve_key_macros(&key, "Aqua", "Kazuma");
    assert!(out.len() <= 2 * key.len() + 256 + 4 * 10, "{}", out.len());
    // Short keys expand in full.
    assert_eq!(
        crate::resolve_key_macros("{{char}} and {{user}}", "Aqua", "Kazuma"),
        "Aqua and Kazuma"
    );
}

#[test]
fn issue12_books_over_the_entries_limit_are_refused_before_compiling() {
    let b = book(vec![
        entry(&["a"], "A"),
        entry(&["b"], "B"),
        entry(&["c"], "C"),
    ]);
    let input = [BookInput {
        book: &b,
        kind: BookKind::Global,
        name: "b".into(),
        world_info: false,
    }];
    let compiler = LorebookCompiler::new().max_entries(2);
    let err = compiler.try_compile(&input).unwrap_err().to_string();
    assert!(err.contains("3 entries"), "{err}");
    assert!(err.contains("limit of 2"), "{err}");
    assert!(err.contains("LorebookCompiler::max_entries"), "{err}");
    // The infallible compile keeps no entry and says why.
    let compiled = compiler.compile(&input);
    assert!(compiled.is_empty());
    assert_eq!(compiled.diagnostics()[0].code, "lore-entries-limit");
    let r = compiled.scan(
        &user("a b c"),
        &ScanState::default(),
        &all(),
        &ccv3_tokens::Estimate,
    );
    assert!(r.activated.is_empty());
    // Within the limit: compiled as before.
    assert_eq!(
        LorebookCompiler::new()
            .max_entries(3)
            .try_compile(&input)
            .unwrap()
            .len(),
        3
    );
    const { assert!(crate::MAX_ENTRIES >= 50_000) };
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Issue 12 (what `fuzz/fuzz_targets/lore_scan.rs` does): any keys, plain or regex, on any
    /// chat, scan within small budgets without a panic, and every entry is reported once.
    #[test]
    fn issue12_any_keys_on_any_chat_scan_within_budgets(
        keys in proptest::collection::vec("/?[a-c()|*+?\\\\1=<!.^$\\[\\]{},0-9 ]{1,14}/?[gimsuy]{0,2}", 1..12),
        text in "[a-c =\n.x]{0,300}",
        flags in 0u8..=255,
    ) {
        let b = book(keys.iter().map(|k| entry(&[k.as_str()], "c")).collect());
        let compiled = LorebookCompiler::new()
            .for_single_scan(flags & 1 != 0)
            .compile(&[BookInput { book: &b, kind: BookKind::Global, name: "b".into(), world_info: false  }]);
        let opts = ScanOptions {
            explain_all: flags & 2 != 0,
            recursive: flags & 4 != 0,
            regex_key_steps: 5_000,
            regex_scan_steps: 30_000,
            ..Default::default()
        };
        let r = compiled.scan(&user(&text), &ScanState::default(), &opts, &ccv3_tokens::Estimate);
        let mut seen: Vec<usize> = r.activated.iter().map(|a| a.entry.index)
            .chain(r.rejected.iter().map(|x| x.entry.index)).collect();
        let n = seen.len();
        seen.sort_unstable();
        seen.dedup();
        proptest::prop_assert_eq!(seen.len(), n);
        if opts.explain_all {
            proptest::prop_assert_eq!(n, keys.len());
        }
    }
}

#[test]
fn issue12_long_keys_stay_out_of_the_compiled_automata_and_still_match() {
    // Keys over 64 KiB are searched only in texts long enough to hold them.
    let long = "lorem ".repeat(20_000);
    let long = long.trim();
    let b = book(vec![entry(&[long], "L"), entry(&["hello"], "H")]);
    let t = std::time::Instant::now();
    let short = scan(&b, &user("hello there"));
    assert_eq!(short.act, [1]);
    let hit = scan(&b, &user(&format!("{long} hello")));
    assert_eq!(hit.act, [0, 1]);
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
}
