//! Measures prompt assembly: a card, 200 activated lorebook inserts (what a scan of a 10,000-entry
//! book typically lets through the budget, spread over every position), and a 500-message chat,
//! fitted to an 8,000-token context with the estimate tokenizer. `cold` builds a new token counter
//! per prompt (every text counted); `warm` reuses one (the next turn of the same chat);
//! `warm_cbs` expands with the full CBS engine instead of the simple expander; `warm_and_render`
//! adds the `--json` document and the ChatML text; the `*_only` runs time one renderer alone.

use ccv3_prompt::*;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn card() -> ccv3::CardData {
    let mut c = ccv3::Card::new("Aqua").data;
    c.system_prompt = "{{original}} You are {{char}}, talking with {{user}}.".into();
    c.description = "{{char}} is a water goddess. ".repeat(40);
    c.personality = "cheerful, proud, clumsy".into();
    c.scenario = "{{user}} and {{char}} adventure in Axel.".into();
    c.mes_example = (0..5)
        .map(|i| format!("<START>\n{{{{user}}}}: question {i}\n{{{{char}}}}: answer {i}\n"))
        .collect();
    c.post_history_instructions = "Stay in character.".into();
    c.first_mes = "Hello, {{user}}!".into();
    c
}

fn chat() -> Vec<ChatMessage> {
    (0..500)
        .map(|i| {
            let text = format!("Message number {i} talks about the town, the guild and the lake. ")
                .repeat(1 + i % 4);
            if i % 2 == 0 {
                ChatMessage::user(text).named("Kazuma")
            } else {
                ChatMessage::assistant(text).named("Aqua")
            }
        })
        .collect()
}

fn lore() -> Vec<LoreInsert> {
    let roles = [Role::System, Role::User, Role::Assistant];
    (0..200)
        .map(|i| {
            let position = match i % 8 {
                0 => InsertPosition::BeforeChar,
                1 => InsertPosition::AfterChar,
                2 => InsertPosition::BeforeDesc,
                3 => InsertPosition::AfterDesc,
                4 => InsertPosition::Personality,
                5 => InsertPosition::Scenario,
                _ => InsertPosition::Depth {
                    depth: (i % 13) as u32,
                    role: roles[i % 3],
                },
            };
            let mut l = LoreInsert::new(
                format!("book/entry {i}"),
                format!("Entry {i}: {{{{char}}}} knows fact {i} about the world. ").repeat(3),
                position,
            )
            .with_order((i * 7 % 100) as f64);
            l.ignore_on_max_context = i % 10 == 0;
            l
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let (card, chat, lore) = (card(), chat(), lore());
    let opts = PromptOptions {
        user_name: "Kazuma".into(),
        system_prompt: Some("Write the next reply.".into()),
        max_context: Some(8000),
        ..Default::default()
    };
    let mut g = c.benchmark_group("assemble_200_inserts_500_messages");
    g.bench_function("cold", |b| {
        b.iter(|| {
            let counter = TokenCounter::new(ccv3_tokens::Estimate);
            black_box(assemble(&card, &chat, &lore, &opts, &mut SimpleExpander, &counter).ok())
        })
    });
    let counter = TokenCounter::new(ccv3_tokens::Estimate);
    g.bench_function("warm", |b| {
        b.iter(|| {
            black_box(assemble(&card, &chat, &lore, &opts, &mut SimpleExpander, &counter).ok())
        })
    });
    g.bench_function("warm_cbs", |b| {
        b.iter(|| {
            let mut ex = adapters::CbsExpander::new(&card, &chat, &opts);
            black_box(assemble(&card, &chat, &lore, &opts, &mut ex, &counter).ok())
        })
    });
    let chatml = InstructTemplate::chatml();
    g.bench_function("warm_and_render", |b| {
        b.iter(|| {
            let a = assemble(&card, &chat, &lore, &opts, &mut SimpleExpander, &counter).ok();
            black_box(a.map(|a| (serde_json::to_string(&a.report()).ok(), chatml.render(&a))))
        })
    });
    let a = assemble(&card, &chat, &lore, &opts, &mut SimpleExpander, &counter).ok();
    g.bench_function("messages_only", |b| {
        b.iter(|| black_box(a.as_ref().map(|a| a.messages())))
    });
    g.bench_function("json_only", |b| {
        b.iter(|| black_box(a.as_ref().map(|a| serde_json::to_string(&a.report()).ok())))
    });
    g.bench_function("chatml_only", |b| {
        b.iter(|| black_box(a.as_ref().map(|a| chatml.render(a))))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
