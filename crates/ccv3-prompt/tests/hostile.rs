//! Issue 12 (hostile input, part 2), CBS per prompt: the limits of one expansion hold for the
//! whole prompt, through [`SessionOptions::cbs_budget`]. The hostile cards here are the issue's
//! classes made small, with the budget set low through the options.

use ccv3_cbs::{BudgetLimits, Variables, Warning};
use ccv3_lore::ScanState;
use ccv3_prompt::{Chat, ChatMessage, Session, SessionOptions};
use serde_json::json;
use std::sync::Arc;

/// A template that sets the temporary variable `a` to `16 << doublings` bytes with a few dozen
/// bytes of text (each line doubles it).
fn doubling(doublings: usize) -> String {
    let mut s = String::from("{{settempvar::a::xxxxxxxxxxxxxxxx}}");
    for _ in 0..doublings {
        s.push_str("{{settempvar::a::{{tempvar::a}}{{tempvar::a}}}}");
    }
    s
}

fn book(entries: Vec<serde_json::Value>) -> ccv3::Lorebook {
    ccv3::Lorebook::from_json(json!({ "entries": entries }), "", false, &mut Vec::new())
        .expect("book")
}

fn constant(i: usize, content: &str) -> serde_json::Value {
    json!({"keys": ["zzz"], "content": content, "extensions": {}, "enabled": true,
        "insertion_order": i, "use_regex": false, "constant": true})
}

fn session<'a>(card: &'a ccv3::CardData, budget: BudgetLimits) -> Session<'a> {
    let options = SessionOptions {
        cbs_budget: budget,
        // The hostile texts use RisuAI's macros (`settempvar`, `#each`): issue 17's dialects.
        dialect: ccv3_cbs::Dialect::Risu,
        ..SessionOptions::default()
    };
    Session::new(options, Arc::new(ccv3_tokens::Estimate)).with_card(card, "evil.json")
}

fn chat() -> Chat {
    Chat::from(vec![ChatMessage::user("hello")])
}

fn budget_warnings(w: &[Warning]) -> usize {
    w.iter().filter(|w| w.kind() == "prompt-budget").count()
}

/// Issue 12, CBS: "7 card fields and 800 entries each just under the limit pass 3 GiB". Here 7
/// fields and 40 entries expand to 16 KiB each (672 KiB in all) and the prompt's output budget is
/// 100 KiB: the prompt holds at most that, and the cut is reported.
#[test]
fn issue12_fields_and_entries_share_one_output_budget() {
    let big = format!("{}{}", doubling(10), "{{tempvar::a}}");
    let mut card = ccv3::Card::new("Evil").data;
    for f in [
        &mut card.description,
        &mut card.personality,
        &mut card.scenario,
        &mut card.system_prompt,
        &mut card.post_history_instructions,
        &mut card.mes_example,
        &mut card.first_mes,
    ] {
        f.clone_from(&big);
    }
    card.character_book = Some(book((0..40).map(|i| constant(i, &big)).collect()));
    let limit = 100 << 10;
    let s = session(
        &card,
        BudgetLimits {
            max_output: limit,
            ..BudgetLimits::default()
        },
    );
    let turn = s.prompt(&chat(), &ScanState::default()).unwrap();
    // Every part but the chat's one message ("hello") is expanded card text.
    let total: usize = turn
        .prompt
        .parts
        .iter()
        .map(|p| p.content.len())
        .sum::<usize>()
        - 5;
    assert!(total <= limit, "{total} bytes");
    assert!(
        total >= limit - (16 << 10),
        "{total} bytes: the budget was used"
    );
    assert!(budget_warnings(&turn.warnings) > 0, "{:?}", turn.warnings);
    assert!(turn.warnings.iter().any(|w| w
        .to_string()
        .contains("the prompt's macro budget is spent (output bytes: 102400)")));
    // The default budget lets the same card through whole.
    let whole = session(&card, BudgetLimits::default())
        .prompt(&chat(), &ScanState::default())
        .unwrap();
    let total: usize = whole.prompt.parts.iter().map(|p| p.content.len()).sum();
    assert_eq!(budget_warnings(&whole.warnings), 0);
    assert!(total >= 47 * (16 << 10), "{total}");
}

/// Issue 12, CBS: "300 entries x 100 variables of 64 KiB take 2.4 GiB and write a 655 MB
/// `--state`". Here 30 entries set 20 variables of 4 KiB each (2.4 MiB) and the variables may
/// hold 64 KiB: the next state stays under that, with warnings.
#[test]
fn issue12_variables_are_bounded_across_entries_and_the_state() {
    let entries = (0..30)
        .map(|i| {
            let mut c = doubling(8);
            for j in 0..20 {
                c.push_str(&format!("{{{{setvar::v{i}_{j}::{{{{tempvar::a}}}}}}}}"));
            }
            constant(i, &c)
        })
        .collect();
    let mut card = ccv3::Card::new("Evil").data;
    card.character_book = Some(book(entries));
    let limit = 64 << 10;
    let s = session(
        &card,
        BudgetLimits {
            max_variable_bytes: limit,
            ..BudgetLimits::default()
        },
    );
    let turn = s.prompt(&chat(), &ScanState::default()).unwrap();
    let vars = &turn.state.variables;
    let bytes: usize = vars.local.iter().map(|(k, v)| k.len() + v.len()).sum();
    assert!(bytes <= limit, "{bytes}");
    assert!(vars.local.len() >= 10, "{} variables", vars.local.len());
    assert!(turn
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::Variable { .. })));
    assert!(turn.state.to_json().len() < 2 * limit);
    // A second turn from that state cannot grow it either.
    let next = s.prompt(&chat(), &turn.state).unwrap();
    let bytes: usize = next
        .state
        .variables
        .local
        .iter()
        .map(|(k, v)| k.len() + v.len())
        .sum();
    assert!(bytes <= limit, "{bytes}");
}

/// Issue 12, CBS: steps and work are shared too: 50 entries each just under a step budget of
/// their own stop together at the prompt's step budget.
#[test]
fn issue12_steps_are_shared_by_the_prompt() {
    let busy = "{{#each [1,2,3,4,5,6,7,8,9,10] as i}}{{slot::i}}{{/each}}".repeat(20);
    let mut card = ccv3::Card::new("Evil").data;
    card.character_book = Some(book((0..50).map(|i| constant(i, &busy)).collect()));
    let s = session(
        &card,
        BudgetLimits {
            max_steps: 5_000,
            ..BudgetLimits::default()
        },
    );
    let turn = s.prompt(&chat(), &ScanState::default()).unwrap();
    assert!(turn
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::PromptBudget { what: "steps", .. })));
    let lore_parts = turn.prompt.lore.len();
    assert!(lore_parts < 50, "{lore_parts} entries kept");
}

/// Issue 12: `Session::expand_macros` (what `ccv3 cbs` prints) spends the session's budget too.
#[test]
fn issue12_expand_macros_uses_the_session_budget() {
    let card = ccv3::Card::new("Evil").data;
    let s = session(
        &card,
        BudgetLimits {
            max_output: 1000,
            ..BudgetLimits::default()
        },
    );
    let text = format!("{}{}", doubling(8), "{{tempvar::a}}");
    let out = s.expand_macros(
        &text,
        &chat(),
        &mut Variables::new(),
        ccv3_cbs::Mode::Prompt,
    );
    assert_eq!(out.text.len(), 1000);
    assert_eq!(budget_warnings(&out.warnings), 1);
}
