//! Fuzzes a whole turn: the input, cut on its first two NUL bytes, is a card file, a chat and a
//! lorebook file (any container); whatever reads is assembled into a prompt by
//! `ccv3_prompt::Session` with a small macro budget, rendered, and played again from the state
//! it returns. Nothing panics, the macro text stays within the budget and the variables within
//! their bound (issue 12).
#![no_main]

use ccv3::Document;
use ccv3_cbs::{BudgetLimits, Limits, Timestamp};
use ccv3_lore::chat::{parse_chat_with, Chat, ChatLimits};
use ccv3_lore::{BookKind, ScanState};
use ccv3_prompt::{InstructTemplate, Session, SessionOptions};
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |b| *b == 0);
    let card_bytes = parts.next().unwrap_or_default();
    let chat_bytes = parts.next().unwrap_or_default();
    let book_bytes = parts.next().unwrap_or_default();
    let card = match ccv3::read_bytes(card_bytes) {
        Ok(Document::Card(cf)) => cf.card.data,
        _ => {
            let mut c = ccv3::Card::new("A").data;
            c.description = String::from_utf8_lossy(card_bytes).into_owned();
            c
        }
    };
    let chat = std::str::from_utf8(chat_bytes)
        .ok()
        .and_then(|t| {
            let limits = ChatLimits {
                max_bytes: 1 << 20,
                max_messages: 256,
            };
            parse_chat_with(t, &limits).ok()
        })
        .unwrap_or_else(Chat::default);
    let book = match ccv3::read_bytes(book_bytes) {
        Ok(Document::Lorebook(bf)) => Some(bf.book),
        Ok(Document::Card(cf)) => cf.card.data.character_book,
        Err(_) => None,
    };
    let bounds = BudgetLimits {
        max_output: 256 << 10,
        max_work: 4 << 20,
        max_steps: 400_000,
        max_variable_bytes: 64 << 10,
    };
    let options = SessionOptions {
        now: Some(Timestamp::utc(1_000_000)),
        max_context: Some(usize::from(data.first().copied().unwrap_or(0)) * 64 + 64),
        cbs_limits: Limits {
            max_output: 64 << 10,
            max_work: 1 << 20,
            max_steps: 100_000,
            ..Limits::default()
        },
        cbs_budget: bounds.clone(),
        ..SessionOptions::default()
    };
    let mut session =
        Session::new(options, Arc::new(ccv3_tokens::Estimate)).with_card(&card, "card");
    if let Some(b) = &book {
        session = session.with_book(b, BookKind::Global, "book");
    }
    let Ok(turn) = session.prompt(&chat, &ScanState::default()) else {
        return;
    };
    let held = |s: &ScanState| -> usize {
        s.variables
            .local
            .iter()
            .chain(&s.variables.global)
            .map(|(k, v)| k.len() + v.len())
            .sum()
    };
    assert!(held(&turn.state) <= bounds.max_variable_bytes);
    let _ = serde_json::to_string(&turn.report()).expect("report serialises");
    let _ = ccv3_prompt::to_text(&turn.prompt);
    let _ = InstructTemplate::chatml().render(&turn.prompt);
    let state = ScanState::from_json(&turn.state.to_json()).expect("state reads back");
    assert_eq!(state, turn.state);
    if let Ok(next) = session.prompt(&chat, &state) {
        assert!(held(&next.state) <= bounds.max_variable_bytes);
    }
});
