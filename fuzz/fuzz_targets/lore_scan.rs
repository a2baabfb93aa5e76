//! Fuzz target: book bytes + chat bytes -> compile -> scan (issue 12). The input is
//! `flags byte, book, 0x00, chat`: a book that is not lorebook JSON becomes one entry per line,
//! the line its key (so `/pattern/flags` lines exercise both regex engines and their budgets);
//! a chat that does not parse becomes one user message of its text. Small step budgets keep
//! every run short; nothing may panic, and every entry is reported once.
//!
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run lore_scan -- -max_total_time=3600 -max_len=65536`.
#![no_main]

use ccv3_lore::chat::{parse_chat, Chat, Message, Role};
use ccv3_lore::{BookInput, BookKind, Compat, LorebookCompiler, ScanOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let (book_bytes, chat_bytes) = match rest.iter().position(|&b| b == 0) {
        Some(p) => (&rest[..p], &rest[p + 1..]),
        None => (rest, &[][..]),
    };
    let book_text = String::from_utf8_lossy(book_bytes);
    let chat_text = String::from_utf8_lossy(chat_bytes);
    let book = serde_json::from_str::<serde_json::Value>(&book_text)
        .ok()
        .and_then(|v| ccv3::lorebook::read_lorebook_value(v, &mut Vec::new()).ok())
        .map(|(b, _)| b)
        .unwrap_or_else(|| {
            let mut b = ccv3::Lorebook::default();
            for (i, line) in book_text.lines().enumerate().take(256) {
                let mut e = ccv3::Entry::new(&[line], &format!("entry {i}"));
                e.use_regex = flags & 8 != 0;
                b.entries.push(e);
            }
            b
        });
    let chat = parse_chat(&chat_text).unwrap_or_else(|_| Chat {
        messages: vec![Message::new(Role::User, chat_text.as_ref())],
        ..Default::default()
    });
    let compiled = LorebookCompiler::new()
        .names("Char", "User")
        .for_single_scan(flags & 1 != 0)
        .max_entries(10_000)
        .compile(&[BookInput {
            book: &book,
            kind: BookKind::Global,
            name: "fuzz".into(),
        }]);
    let opts = ScanOptions {
        explain_all: flags & 2 != 0,
        recursive: flags & 4 != 0,
        scan_depth: u64::from(flags >> 4),
        regex_key_steps: 20_000,
        regex_scan_steps: 200_000,
        ..Default::default()
    };
    let r = compiled.scan(&chat, &Default::default(), &opts, &ccv3_tokens::Estimate);
    assert!(r.activated.len() + r.rejected.len() + r.unchecked <= compiled.len());
    let _ = serde_json::to_string(&ccv3_lore::ScanReport::new(&r, &["fuzz".to_string()]));
    // The SillyTavern compatibility mode (issue 14) on the same input.
    let st = ScanOptions {
        compat: Compat::SillyTavern,
        ..opts
    };
    let r = compiled.scan(&chat, &Default::default(), &st, &ccv3_tokens::Estimate);
    assert!(r.activated.len() + r.rejected.len() <= compiled.len());
});
