//! Measures the lorebook engine: compiling books of 1,000 / 10,000 / 100,000 entries, and
//! scanning them (compiled once) against chats of 2, 10 and 100 messages with the scan depth set
//! to the whole chat; plus 50,000 entries x 100 messages, the case the issue compares with a
//! model of SillyTavern's scan loop (about 3.1 s per scan there); the same without a budget;
//! and the `ccv3 lore scan` case (budget, every entry explained) at 10,000 and 50,000 entries.
//!
//! Books are generated in code with a fixed seed, in the shape of the peers harness
//! (`shared/peers/gen.py`): 1-5 keys per entry (invented names, common words, two-word phrases),
//! 5% regex entries (`/pattern/flags` keys), 20% selective entries with 1-2 secondary keys and
//! SillyTavern's selective logics, 1% constant; a chat of ~60 words per message that mentions keys
//! of the first 1,000 entries. Run: `cargo bench -p ccv3-lore --bench scan -- --warm-up-time 1
//! --measurement-time 3`.
//!
//! The group `scan_compat` scans the same books and chats with `--compat sillytavern`.
//!
//! With `CCV3_SCAN_ONCE=MODE:ENTRIES:MESSAGES` set (MODE `spec` or `compat`), the binary instead
//! builds that one case, scans it once to warm up and once more inside `measured_scan`, and
//! exits: the driver for counting instructions with
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_scan*'`
//! (docs/benchmarks.md, "Lorebook engine").

use ccv3::Lorebook;
use ccv3_lore::chat::{Chat, Message, Role};
use ccv3_lore::{
    BookInput, BookKind, Compat, CompiledBooks, LorebookCompiler, ScanOptions, ScanResult,
};
use criterion::measurement::WallTime;
use criterion::{criterion_group, BenchmarkGroup, BenchmarkId, Criterion};
use serde_json::{json, Value};
use std::hint::black_box;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn f(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[(self.next() % v.len() as u64) as usize]
    }
}

const COMMON: &[&str] = &[
    "time",
    "year",
    "people",
    "way",
    "day",
    "man",
    "thing",
    "woman",
    "life",
    "child",
    "world",
    "school",
    "state",
    "family",
    "student",
    "group",
    "country",
    "problem",
    "hand",
    "part",
    "place",
    "case",
    "week",
    "company",
    "system",
    "program",
    "question",
    "work",
    "government",
    "number",
    "night",
    "point",
    "home",
    "water",
    "room",
    "mother",
    "area",
    "money",
    "story",
    "fact",
    "month",
    "lot",
    "right",
    "study",
    "book",
    "eye",
    "job",
    "word",
    "business",
    "issue",
    "side",
    "kind",
    "head",
    "house",
    "service",
    "friend",
    "father",
    "power",
    "hour",
    "game",
    "line",
    "end",
    "member",
    "law",
    "car",
    "city",
    "community",
    "name",
    "team",
    "minute",
    "idea",
    "body",
    "information",
    "back",
    "face",
    "level",
    "office",
    "door",
    "health",
    "person",
    "art",
    "war",
    "history",
    "party",
    "result",
    "change",
    "morning",
    "reason",
    "research",
    "moment",
    "air",
    "teacher",
    "force",
    "sword",
    "shield",
    "tower",
    "castle",
    "river",
    "forest",
    "mountain",
    "dragon",
    "knight",
    "queen",
    "king",
    "village",
    "tavern",
    "merchant",
    "guard",
    "temple",
    "spell",
    "magic",
    "potion",
    "scroll",
    "armor",
    "blade",
    "arrow",
    "bow",
    "horse",
    "wagon",
    "bridge",
    "harbor",
    "ship",
    "storm",
    "winter",
    "summer",
    "autumn",
    "spring",
    "shadow",
    "flame",
    "frost",
    "stone",
    "iron",
    "silver",
    "gold",
    "crystal",
    "crown",
    "throne",
];
const ADJ: &[&str] = &[
    "old",
    "new",
    "good",
    "great",
    "high",
    "small",
    "large",
    "long",
    "young",
    "important",
    "big",
    "different",
    "black",
    "white",
    "red",
    "blue",
    "green",
    "dark",
    "bright",
    "silent",
    "ancient",
    "hidden",
    "broken",
    "golden",
    "crimson",
    "frozen",
    "burning",
    "quiet",
    "wild",
    "lost",
    "sacred",
];
const VERBS: &[&str] = &[
    "said",
    "walked",
    "looked",
    "turned",
    "smiled",
    "whispered",
    "shouted",
    "ran",
    "stood",
    "watched",
    "waited",
    "laughed",
    "opened",
    "closed",
    "held",
    "took",
    "gave",
    "found",
    "left",
];
const FUNC: &[&str] = &[
    "the", "a", "an", "and", "but", "or", "of", "to", "in", "on", "at", "with", "from", "by",
    "for", "as", "into", "over", "under", "near", "she", "he", "they", "we", "it", "her", "his",
    "their",
];
const SA: &[&str] = &[
    "ka", "el", "mi", "ra", "tho", "va", "lin", "dor", "sa", "ri", "ae", "bel", "cor", "dra",
    "fen", "gal", "har", "is", "jor", "kel", "lor", "mor", "nym", "or", "pyr", "quel", "syl",
    "tor", "ul", "vel", "wyn", "xan", "yr", "zan", "ash", "bryn", "cael", "ely", "fae", "gwen",
];
const SB: &[&str] = &[
    "a", "e", "i", "o", "u", "ae", "ia", "io", "ar", "en", "or", "ys", "il", "an", "eth", "wyn",
];
const SC: &[&str] = &[
    "n", "r", "th", "s", "l", "ra", "dor", "mir", "las", "wen", "ric", "dil", "nor", "gar", "vin",
    "ssa", "lle", "x", "d", "k",
];

fn name(r: &mut Rng) -> String {
    let mut s = format!("{}{}", r.pick(SA), r.pick(SB));
    if r.f() < 0.6 {
        s.push_str(r.pick(SC));
    }
    if r.f() < 0.25 {
        s.push_str(r.pick(SB));
        s.push_str(r.pick(SC));
    }
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn sentence(r: &mut Rng, n: usize, mentions: &[String], p: f64) -> String {
    let mut out: Vec<String> = Vec::with_capacity(n);
    for _ in 0..n {
        let x = r.f();
        out.push(if !mentions.is_empty() && x < p {
            mentions[(r.next() % mentions.len() as u64) as usize].clone()
        } else if x < 0.45 {
            r.pick(FUNC).into()
        } else if x < 0.75 {
            r.pick(COMMON).into()
        } else if x < 0.88 {
            r.pick(ADJ).into()
        } else {
            r.pick(VERBS).into()
        });
    }
    out.join(" ") + "."
}

fn regex_key(r: &mut Rng, base: &str) -> String {
    let b = base.to_lowercase();
    match r.next() % 4 {
        0 => format!("/\\b{}\\w*\\b/i", b.chars().take(4).collect::<String>()),
        1 => format!("/\\b({}|{})s?\\b/i", b, r.pick(COMMON)),
        2 => format!("/{}\\s+(of|the)\\s+\\w+/i", r.pick(COMMON)),
        _ => format!("/\\b{base}(?:'s)?\\b/"),
    }
}

fn make_entries(n: usize) -> Vec<Value> {
    let mut r = Rng(1234);
    (0..n)
        .map(|i| {
            let nkeys = r.range(1, 5);
            let is_regex = r.f() < 0.05;
            let main = name(&mut r);
            let mut keys = Vec::new();
            for k in 0..nkeys {
                let base = if k == 0 {
                    main.clone()
                } else {
                    let x = r.f();
                    if x < 0.6 {
                        name(&mut r)
                    } else if x < 0.75 {
                        r.pick(COMMON).into()
                    } else if x < 0.9 {
                        format!("{} {}", r.pick(ADJ), r.pick(COMMON))
                    } else {
                        format!("{main} {}", r.pick(&["Tower", "Keep", "Vale", "Clan", "Order", "Blade"]))
                    }
                };
                keys.push(if is_regex { regex_key(&mut r, &base) } else { base });
            }
            let selective = r.f() < 0.2;
            let secondary: Vec<String> = if selective {
                (0..r.range(1, 2)).map(|_| r.pick(COMMON).to_string()).collect()
            } else {
                Vec::new()
            };
            let logic = [0, 0, 0, 1, 2, 3][(r.next() % 6) as usize];
            let head = sentence(&mut r, 6, &[], 0.0);
            let len = r.range(25, 55);
            let content = format!("{main} is {head} {}", sentence(&mut r, len, &[], 0.0));
            json!({
                "keys": keys, "content": content,
                "extensions": {"position": 0, "depth": 4, "selectiveLogic": logic, "probability": 100, "useProbability": true},
                "enabled": true, "insertion_order": 100 + (i % 50), "case_sensitive": false, "use_regex": is_regex,
                "constant": r.f() < 0.01, "name": main, "priority": 10, "id": i,
                "selective": selective, "secondary_keys": secondary, "position": "before_char",
            })
        })
        .collect()
}

fn make_book(entries: &[Value], budget: bool) -> Lorebook {
    let mut v =
        json!({"name": "bench", "recursive_scanning": false, "extensions": {}, "entries": entries});
    if budget {
        v["token_budget"] = json!(2048);
    }
    Lorebook::from_json(v, "", false, &mut Vec::new()).expect("book")
}

fn make_chat(entries: &[Value], n: usize) -> Chat {
    let mut r = Rng(1235);
    let pool: Vec<String> = entries
        .iter()
        .take(1000)
        .flat_map(|e| e["keys"].as_array().cloned().unwrap_or_default())
        .filter_map(|k| k.as_str().map(String::from))
        .filter(|k| !k.starts_with('/'))
        .collect();
    let msgs: Vec<Message> = (0..100)
        .map(|i| {
            let words = r.range(50, 70);
            let mut text = String::new();
            while text.split(' ').count() < words {
                if !text.is_empty() {
                    text.push(' ');
                }
                let len = r.range(8, 16);
                text.push_str(&sentence(&mut r, len, &pool, 0.02));
            }
            Message {
                role: if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                name: Some(if i % 2 == 0 {
                    "User".into()
                } else {
                    "Seraphine Vael".into()
                }),
                content: text,
            }
        })
        .collect();
    Chat {
        messages: msgs[100 - n..].to_vec(),
        ..Default::default()
    }
}

fn bench(c: &mut Criterion) {
    let all = make_entries(100_000);
    let mut g = c.benchmark_group("compile");
    g.sample_size(10);
    for n in [1_000, 10_000, 50_000, 100_000] {
        let book = make_book(&all[..n], true);
        g.bench_with_input(BenchmarkId::from_parameter(n), &book, |b, book| {
            b.iter(|| {
                LorebookCompiler::new().compile(&[BookInput {
                    book,
                    kind: BookKind::Character,
                    name: "b".into(),
                    world_info: false,
                }])
            })
        });
    }
    g.finish();
    bench_scans(
        c,
        &all,
        &ScanGroup {
            name: "scan",
            sample_size: 20,
            cases: &[
                (1_000, &[2, 10, 100]),
                (10_000, &[2, 10, 100]),
                (50_000, &[100]),
                (100_000, &[2, 10, 100]),
            ],
            budget: true,
            compat: false,
            report: Some(|n, m, r| {
                format!(
                    "{n} entries x {m} messages: {} activated, {} looked at and rejected, {} tokens",
                    r.activated.len(),
                    r.rejected.len(),
                    r.tokens
                )
            }),
        },
    );
    // The same books and chats in SillyTavern compatibility mode (its own loop over the same
    // compiled books: every entry checked in every step, as SillyTavern does).
    bench_scans(
        c,
        &all,
        &ScanGroup {
            name: "scan_compat",
            sample_size: 10,
            cases: &[
                (1_000, &[2, 10, 100]),
                (10_000, &[2, 10, 100]),
                (100_000, &[2, 10, 100]),
            ],
            budget: true,
            compat: true,
            report: None,
        },
    );
    // The same without a token budget: every matched entry is checked and activated (tens of
    // thousands at 100 messages), which is the work a scan cannot skip.
    bench_scans(
        c,
        &all,
        &ScanGroup {
            name: "scan_no_budget",
            sample_size: 10,
            cases: &[
                (10_000, &[2, 100]),
                (50_000, &[2, 100]),
                (100_000, &[2, 100]),
            ],
            budget: false,
            compat: false,
            report: Some(|n, m, r| {
                format!(
                    "no budget: {n} entries x {m} messages: {} activated, {} rejected",
                    r.activated.len(),
                    r.rejected.len()
                )
            }),
        },
    );
    // What `ccv3 lore scan` does: the book's budget, and every entry explained (`explain_all`).
    let mut g = c.benchmark_group("scan_explain_all");
    g.sample_size(10);
    for n in [10_000, 50_000] {
        let book = make_book(&all[..n], true);
        let compiled = compile_for_scans(&book);
        let chat = make_chat(&all, 100);
        let opts = ScanOptions {
            scan_depth: 100,
            explain_all: true,
            ..Default::default()
        };
        let id = BenchmarkId::new(format!("{n}_entries"), "100_messages");
        bench_scan(&mut g, id, &compiled, &chat, &opts);
    }
    g.finish();
    // One call of `ccv3 lore scan` after loading: compile (for a single scan, as the CLI does,
    // or with every automaton built at compile time), then scan once explaining every entry.
    let mut g = c.benchmark_group("compile_and_scan_once");
    g.sample_size(10);
    for n in [10_000, 50_000] {
        let book = make_book(&all[..n], true);
        let chat = make_chat(&all, 100);
        let opts = ScanOptions {
            scan_depth: 100,
            explain_all: true,
            ..Default::default()
        };
        for single in [true, false] {
            g.bench_function(
                BenchmarkId::new(
                    format!("{n}_entries"),
                    if single { "single_scan" } else { "eager" },
                ),
                |b| {
                    b.iter(|| {
                        let compiled = LorebookCompiler::new()
                            .names("Seraphine Vael", "User")
                            .for_single_scan(single)
                            .compile(&[BookInput {
                                book: &book,
                                kind: BookKind::Character,
                                name: "b".into(),
                                world_info: false,
                            }]);
                        let r = compiled.scan(
                            &chat,
                            &Default::default(),
                            &opts,
                            &ccv3_tokens::Estimate,
                        );
                        black_box(r.activated.len())
                    })
                },
            );
        }
    }
    g.finish();
}

/// One group of repeated scans (`scan`, `scan_compat`, `scan_no_budget`): each book compiled
/// once, then scanned against each of its chats with `scan_opts`.
struct ScanGroup {
    /// The criterion group name (docs and scripts refer to it).
    name: &'static str,
    /// Criterion's sample size for the group.
    sample_size: usize,
    /// Book sizes, each with the chat lengths (messages) it is scanned against.
    cases: &'static [(usize, &'static [usize])],
    /// Whether the book carries its token budget (2,048).
    budget: bool,
    /// SillyTavern compatibility mode.
    compat: bool,
    /// A line printed to stderr about one scan of each case before it is measured.
    report: Option<fn(usize, usize, &ScanResult<'_>) -> String>,
}

/// Runs one `ScanGroup`; bench ids are `{n}_entries/{m}_messages`.
fn bench_scans(c: &mut Criterion, all: &[Value], group: &ScanGroup) {
    let mut g = c.benchmark_group(group.name);
    g.sample_size(group.sample_size);
    for &(n, messages) in group.cases {
        let book = make_book(&all[..n], group.budget);
        let compiled = compile_for_scans(&book);
        for &m in messages {
            let chat = make_chat(all, m);
            let opts = scan_opts(m, group.compat);
            if let Some(report) = group.report {
                let r = compiled.scan(&chat, &Default::default(), &opts, &ccv3_tokens::Estimate);
                eprintln!("{}", report(n, m, &r));
            }
            let id = BenchmarkId::new(format!("{n}_entries"), format!("{m}_messages"));
            bench_scan(&mut g, id, &compiled, &chat, &opts);
        }
    }
    g.finish();
}

/// Registers in `g` one bench, `id`, that scans `chat` with `opts`.
fn bench_scan(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    compiled: &CompiledBooks<'_>,
    chat: &Chat,
    opts: &ScanOptions,
) {
    g.bench_function(id, |b| {
        b.iter(|| black_box(compiled.scan(chat, &Default::default(), opts, &ccv3_tokens::Estimate)))
    });
}

/// The options of the `scan` groups: the whole chat scanned, no whole-word matching, and
/// SillyTavern compatibility mode when `compat`.
fn scan_opts(m: usize, compat: bool) -> ScanOptions {
    ScanOptions {
        scan_depth: m as u64,
        match_whole_words: false,
        compat: if compat {
            Compat::SillyTavern
        } else {
            Compat::Spec
        },
        ..Default::default()
    }
}

/// The book compiled once for many scans, as the `scan` groups use it.
fn compile_for_scans(book: &Lorebook) -> CompiledBooks<'_> {
    LorebookCompiler::new()
        .names("Seraphine Vael", "User")
        .compile(&[BookInput {
            book,
            kind: BookKind::Character,
            name: "b".into(),
            world_info: false,
        }])
}

/// One scan, kept out of line so that callgrind can count it alone
/// (`--toggle-collect='*measured_scan*'`).
#[inline(never)]
fn measured_scan(compiled: &CompiledBooks<'_>, chat: &Chat, opts: &ScanOptions) -> usize {
    let r = compiled.scan(chat, &Default::default(), opts, &ccv3_tokens::Estimate);
    r.activated.len() + r.rejected.len()
}

/// `CCV3_SCAN_ONCE=MODE:ENTRIES:MESSAGES`: the case of the `scan` (MODE `spec`) or
/// `scan_compat` (MODE `compat`) group, scanned once to warm up and once in `measured_scan`.
fn scan_once(spec: &str) {
    let parts: Vec<&str> = spec.split(':').collect();
    let (mode, n, m) = match parts.as_slice() {
        [mode, n, m] => (*mode, n.parse().unwrap_or(0), m.parse().unwrap_or(0)),
        _ => ("", 0, 0),
    };
    if !matches!(mode, "spec" | "compat") || !(1..=100_000).contains(&n) || !(1..=100).contains(&m)
    {
        eprintln!(
            "CCV3_SCAN_ONCE: expected spec|compat:ENTRIES(1-100000):MESSAGES(1-100), got {spec:?}"
        );
        std::process::exit(2);
    }
    let all = make_entries(n);
    let book = make_book(&all, true);
    let compiled = compile_for_scans(&book);
    let chat = make_chat(&all, m);
    let opts = scan_opts(m, mode == "compat");
    let warm = warm_up_scan(&compiled, &chat, &opts);
    let counted = measured_scan(&compiled, &chat, &opts);
    println!("{mode} {n} entries x {m} messages: {counted} entries activated or rejected (warm-up {warm})");
}

/// The warm-up scan (outside callgrind's count): what a first scan builds on demand.
#[inline(never)]
fn warm_up_scan(compiled: &CompiledBooks<'_>, chat: &Chat, opts: &ScanOptions) -> usize {
    let r = black_box(compiled.scan(chat, &Default::default(), opts, &ccv3_tokens::Estimate));
    r.activated.len() + r.rejected.len()
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(spec) = std::env::var("CCV3_SCAN_ONCE") {
        scan_once(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
