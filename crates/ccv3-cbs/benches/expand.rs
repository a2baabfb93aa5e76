//! Measures expanding a generated ~100 KB template containing 1,000 mixed macros
//! (names, pick/random/roll, variables, calc, reverse, comments, a block) with the standard
//! registry; also the parse time of the same text on its own, and the same text in the `risu`
//! dialect with ten of RisuAI's functions in place of half the macros (issue 17), and the same
//! text in the `sillytavern` dialect: as it is, with its key, time and existence macros in place
//! of three (classic macros), and with SillyTavern's engine syntax (`{{if}}` blocks, scoped
//! `{{setvar}}`, `{{.x}}` shorthand) in place of four macros (issue 17), and with `timeDiff`,
//! `mesExamples` and a pure block in place of three (issue 17's last SillyTavern gaps).

use std::fmt::Write;

use ccv3_cbs::{
    Context, Dialect, Expansion, Limits, Message, Mode, Registry, Role, Template, Timestamp,
    Variables,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const MACROS: [&str; 10] = [
    "{{char}}",
    "{{user}}",
    "{{pick::red,green,blue}}",
    "{{random:one,two,three}}",
    "{{roll::2d6}}",
    "{{setvar::x::{{calc::1+2*3}}}}",
    "{{getvar::x}}",
    "{{reverse:{{user}} said hi}}",
    "{{comment:hidden note}}",
    "{{#if {{equal::{{getvar::x}}::7}}}}seven{{:else}}other{{/if}}",
];

fn template_text() -> String {
    let filler = "The quick brown fox jumps over the lazy dog while the tavern sings. ";
    let mut s = String::with_capacity(110_000);
    for i in 0..1000 {
        // ~100 bytes of text between macros.
        let _ = write!(s, "{}{} ", filler, &filler[..(i % 30)]);
        s.push_str(MACROS[i % MACROS.len()]);
    }
    s
}

fn bench(c: &mut Criterion) {
    let text = template_text();
    let ctx = Context::new()
        .with_char_name("Seraphina")
        .with_user_name("Bob")
        .with_seed(42)
        .with_now(Timestamp::utc(1_795_273_620))
        .with_message(Message::new(Role::User, "Bob", "hello"));
    let mut g = c.benchmark_group("cbs");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("parse_100k_1000_macros", |b| {
        b.iter(|| Template::parse(std::hint::black_box(&text)))
    });
    let t = Template::parse(&text);
    g.bench_function("expand_100k_1000_macros", |b| {
        b.iter(|| {
            let mut vars = Variables::new();
            t.expand(&ctx, &mut vars, Mode::Prompt)
        })
    });
    g.bench_function("parse_and_expand_100k_1000_macros", |b| {
        b.iter(|| {
            let mut vars = Variables::new();
            Template::parse(std::hint::black_box(&text)).expand(&ctx, &mut vars, Mode::Prompt)
        })
    });
    let risu_text = template_text()
        .replace("{{roll::2d6}}", "{{arrayelement::{{split::a,b,c::,}}::1}}")
        .replace("{{getvar::x}}", "{{fixnum::{{pow::2::0.5}}::3}}")
        .replace(
            "{{reverse:{{user}} said hi}}",
            "{{upper::{{replace::{{user}} said hi::hi::yo}}}}",
        )
        .replace("{{comment:hidden note}}", "{{join::{{range::[3]}}::-}}");
    let risu = Registry::dialect_ref(Dialect::Risu);
    g.bench_function("parse_and_expand_100k_1000_macros_risu", |b| {
        b.iter(|| parse_and_expand(risu, &ctx, &risu_text))
    });
    let st = Registry::dialect_ref(Dialect::SillyTavern);
    let st_run = |text: &str| parse_and_expand(st, &ctx, text);
    g.bench_function("parse_and_expand_100k_1000_macros_sillytavern", |b| {
        b.iter(|| st_run(&text))
    });
    let st_text = template_text()
        .replace("{{getvar::x}}", "{{.x}}{{.n++}}")
        .replace(
            "{{comment:hidden note}}",
            "{{setvar::s}}\n  scoped {{user}}\n{{/setvar}}",
        )
        .replace(
            "{{#if {{equal::{{getvar::x}}::7}}}}seven{{:else}}other{{/if}}",
            "{{if .x}}seven{{else}}other{{/if}}",
        )
        .replace("{{roll::2d6}}", "{{.x == 7}}");
    g.bench_function(
        "parse_and_expand_100k_1000_macros_sillytavern_engine",
        |b| b.iter(|| st_run(&st_text)),
    );
    // The same text in the `sillytavern` dialect, whose macros check their argument count
    // (SillyTavern's rule), with its variable-key and time macros in place of a few.
    let classic_text = template_text()
        .replace("{{roll::2d6}}", "{{setvarkey::o::k::{{getvar::x}}}}")
        .replace("{{comment:hidden note}}", "{{datetimeformat::LLLL}}")
        .replace(
            "{{#if {{equal::{{getvar::x}}::7}}}}seven{{:else}}other{{/if}}",
            "{{hasvar::x}}",
        );
    g.bench_function(
        "parse_and_expand_100k_1000_macros_sillytavern_classic",
        |b| b.iter(|| st_run(&classic_text)),
    );
    // The `sillytavern` dialect with the last gaps of issue 17 in place of three macros:
    // `timeDiff` on a JavaScript-`Date` form, `mesExamples` blocks, a RisuAI pure block.
    let gaps_ctx = ctx
        .clone()
        .with_mes_examples("{{user}}: hi\n{{char}}: hello\n<START>\n{{user}}: bye");
    let gaps_text = template_text()
        .replace(
            "{{roll::2d6}}",
            "{{timeDiff::Jan 5 2023 3:07 PM::2023-01-01}}",
        )
        .replace("{{comment:hidden note}}", "{{mesExamples}}")
        .replace("{{reverse:{{user}} said hi}}", "{{#pure}}{{user}}{{/pure}}");
    g.bench_function("parse_and_expand_100k_1000_macros_sillytavern_gaps", |b| {
        b.iter(|| parse_and_expand(st, &gaps_ctx, &gaps_text))
    });
    g.finish();
}

/// Parses `text` and expands it with `registry` (fresh variables, default limits, prompt mode).
fn parse_and_expand(registry: &Registry, ctx: &Context, text: &str) -> Expansion {
    let mut vars = Variables::new();
    Template::parse(std::hint::black_box(text)).expand_with(
        registry,
        &Limits::default(),
        ctx,
        &mut vars,
        Mode::Prompt,
    )
}

criterion_group!(benches, bench);
criterion_main!(benches);
