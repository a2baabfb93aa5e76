//! Hostile inputs for every command, and the contract each command keeps on them (issue 12).
//!
//! The generator ([`gen`]) writes one folder per case: files an attacker who knows the code would
//! send (catastrophic regex keys, decompression bombs, per-prompt CBS blow-ups, huge chats and
//! books, control characters, path tricks, lying headers, ...). Each case then runs commands of
//! the real `ccv3` binary on them and checks the contract of issue 12:
//!
//! * it ends within the time limit (10 s at full scale on the 2-core CI machine) with exit code
//!   0, 1 or 2, never by a signal (no abort, no backtrace);
//! * its peak memory (`ru_maxrss`) stays under 1 GiB;
//! * on failure (exit 2) stderr is one line that names the file;
//! * it writes nothing outside its output path, and what a case checks besides (no raw control
//!   characters on a terminal, counted warnings, file modes, state file size).
//!
//! `cargo test` runs every case at a small scale (inputs of a few MB; debug builds are slow).
//! The sizes of the issue (8 MB keys, 200 MB chats, 1,000,000-entry books, 1.6 GB of inflated
//! chunks) run with `CCV3_HOSTILE=full cargo test --release -p ccv3-cli --test hostile`, as
//! `.ci/run` does. `CCV3_HOSTILE_ONLY=name,name` runs only those cases.

mod gen;
mod run;

use gen::{book, card, chat, constant, entry, write, write_json, Charx, Png};
use run::{listing, run, Outcome};
use serde_json::json;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How big the inputs are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scale {
    /// `cargo test`: every class, small enough for a debug build.
    Small,
    /// The sizes issue 12 reports (release build).
    Full,
}

impl Scale {
    fn pick(self, small: usize, full: usize) -> usize {
        match self {
            Scale::Small => small,
            Scale::Full => full,
        }
    }
}

const GIB: u64 = 1 << 30;
const MIB: usize = 1 << 20;

type Check = Box<dyn Fn(&Path, &Outcome) -> Result<(), String>>;

/// One command run on a case's files.
struct Run {
    args: Vec<OsString>,
    /// The file a failure message must name (its file name).
    names: String,
    /// Paths (relative to the case folder) the command may create or change.
    writes: Vec<PathBuf>,
    checks: Vec<Check>,
}

fn cmd(args: &[&str], names: &str) -> Run {
    Run {
        args: args.iter().map(OsString::from).collect(),
        names: names.to_string(),
        writes: Vec::new(),
        checks: Vec::new(),
    }
}

/// `ccv3 prompt --card CARD --chat CHAT EXTRA...`, whose failure must name `names`.
fn prompt_run(card: &str, chat: &str, extra: &[&str], names: &str) -> Run {
    let mut args = vec!["prompt", "--card", card, "--chat", chat];
    args.extend_from_slice(extra);
    cmd(&args, names)
}

/// `ccv3 lore scan --book BOOK --chat CHAT EXTRA...`, whose failure must name `names`.
fn scan_run(book: &str, chat: &str, extra: &[&str], names: &str) -> Run {
    let mut args = vec!["lore", "scan", "--book", book, "--chat", chat];
    args.extend_from_slice(extra);
    cmd(&args, names)
}

impl Run {
    fn writes(mut self, rel: &str) -> Self {
        self.writes.push(PathBuf::from(rel));
        self
    }
    fn check(mut self, c: impl Fn(&Path, &Outcome) -> Result<(), String> + 'static) -> Self {
        self.checks.push(Box::new(c));
        self
    }
}

/// A case: its name, the issue 12 class it belongs to, and its generator.
struct Case {
    name: &'static str,
    class: &'static str,
    build: fn(&Path, Scale) -> Vec<Run>,
}

/// Cases not fixed yet: their failures are printed but do not fail the test. Each stays listed in
/// the closing notes until it is fixed; the list must only shrink.
const OPEN: &[&str] = &[];

// ---------------------------------------------------------------------------------------------
// The cases.

const CASES: &[Case] = &[
    Case {
        name: "graph-dense",
        class: "plain keys",
        build: graph_dense,
    },
    Case {
        name: "regex-lookaround-chain",
        class: "regex keys",
        build: regex_lookaround,
    },
    Case {
        name: "regex-backreferences",
        class: "regex keys",
        build: regex_backrefs,
    },
    Case {
        name: "regex-bounded-gaps",
        class: "regex keys",
        build: regex_gaps,
    },
    Case {
        name: "key-huge",
        class: "plain keys",
        build: key_huge,
    },
    Case {
        name: "key-prefixes",
        class: "plain keys",
        build: key_prefixes,
    },
    Case {
        name: "key-nested-substrings",
        class: "plain keys",
        build: key_nested_substrings,
    },
    Case {
        name: "key-macros",
        class: "plain keys",
        build: key_macros,
    },
    Case {
        name: "charx-many-entries-1mib",
        class: "decompression",
        build: charx_many_big,
    },
    Case {
        name: "charx-bomb-card-json",
        class: "decompression",
        build: charx_bomb,
    },
    Case {
        name: "charx-200k-empty-entries",
        class: "decompression",
        build: charx_many_empty,
    },
    Case {
        name: "card-json-huge-string",
        class: "decompression",
        build: json_huge_string,
    },
    Case {
        name: "png-inflate-bomb",
        class: "decompression",
        build: png_inflate_bomb,
    },
    Case {
        name: "png-200k-asset-chunks",
        class: "decompression",
        build: png_many_assets,
    },
    Case {
        name: "pack-sparse-file",
        class: "decompression",
        build: pack_sparse,
    },
    Case {
        name: "cbs-output-per-prompt",
        class: "cbs",
        build: cbs_output,
    },
    Case {
        name: "cbs-variables-per-prompt",
        class: "cbs",
        build: cbs_variables,
    },
    Case {
        name: "cbs-deep-nesting",
        class: "cbs",
        build: cbs_nesting,
    },
    Case {
        name: "chat-huge",
        class: "size",
        build: chat_huge,
    },
    Case {
        name: "chat-and-book-at-limits",
        class: "size",
        build: chat_and_book_at_limits,
    },
    Case {
        name: "chat-many-messages",
        class: "size",
        build: chat_many,
    },
    Case {
        name: "book-million-entries",
        class: "size",
        build: book_million,
    },
    Case {
        name: "state-huge",
        class: "size",
        build: state_huge,
    },
    Case {
        name: "json-deep-nesting",
        class: "size",
        build: json_deep,
    },
    Case {
        name: "charx-path-tricks",
        class: "files",
        build: charx_paths,
    },
    Case {
        name: "extract-dangling-symlink",
        class: "files",
        build: extract_symlink,
    },
    Case {
        name: "write-over-setuid",
        class: "files",
        build: setuid,
    },
    Case {
        name: "inspect-control-characters",
        class: "output",
        build: control_chars,
    },
    Case {
        name: "decorator-flood",
        class: "output",
        build: decorator_flood,
    },
    Case {
        name: "png-bad-ccv3-chunk",
        class: "errors",
        build: bad_ccv3_chunk,
    },
    Case {
        name: "png-lying-lengths",
        class: "errors",
        build: png_lying,
    },
    Case {
        name: "lone-surrogates",
        class: "errors",
        build: surrogates,
    },
    Case {
        name: "png-bad-ccv3-variants",
        class: "errors",
        build: bad_ccv3_variants,
    },
    Case {
        name: "webp-jpeg-lies",
        class: "errors",
        build: webp_jpeg,
    },
    Case {
        name: "regex-huge-repetition",
        class: "regex keys",
        build: regex_repetition,
    },
    Case {
        name: "cbs-arithmetic-and-dice",
        class: "cbs",
        build: cbs_dice,
    },
    Case {
        name: "cbs-risu-functions",
        class: "cbs",
        build: cbs_risu,
    },
    Case {
        name: "validate-symlink-loop",
        class: "files",
        build: validate_loop,
    },
    Case {
        name: "state-symlink",
        class: "files",
        build: state_symlink,
    },
    Case {
        name: "extreme-numbers",
        class: "errors",
        build: extreme_numbers,
    },
    Case {
        name: "charx-assets-streamed",
        class: "decompression",
        build: charx_assets_streamed,
    },
];

/// `card.json`: a card whose book has one entry, keyed `w`.
fn write_one_entry_card(dir: &Path) {
    write_json(
        &dir.join("card.json"),
        &card(&[], Some(vec![entry(0, vec!["w".into()], "c")])),
    );
}

/// A chat whose one message is `text`.
fn chat_of(dir: &Path, text: &str) {
    write_json(&dir.join("chat.json"), &chat(&[text]));
}

/// `lore scan` of `book.json` and `prompt` of `card.json` (the same entries), on `chat.json`.
fn scan_and_prompt(dir: &Path, entries: Vec<serde_json::Value>) -> Vec<Run> {
    write_json(&dir.join("book.json"), &book(entries.clone()));
    write_json(&dir.join("card.json"), &card(&[], Some(entries)));
    vec![
        scan_run("book.json", "chat.json", &["--json"], "book.json"),
        prompt_run("card.json", "chat.json", &["--json"], "card.json"),
        // Issue 27: lint and the recursion graph run the same keys (regex keys on contents).
        cmd(&["lint", "book.json", "--json"], "book.json"),
        cmd(&["lore", "graph", "book.json", "--json"], "book.json"),
    ]
}

fn regex_entry(id: usize, pattern: String) -> serde_json::Value {
    entry(id, vec![pattern], "regex entry")
}

fn regex_lookaround(dir: &Path, s: Scale) -> Vec<Run> {
    // Lookahead puts the pattern on the backtracking engine; six `.*` over a 32 KiB line that
    // holds no `=` cost O(n^6) per start. The `=` on the next line lets any literal prefilter pass.
    let n = s.pick(8, 400);
    let entries = (0..n)
        .map(|i| regex_entry(i, format!("/(?=.{{0,{i}}}).*.*.*.*.*.*=/")))
        .collect();
    chat_of(dir, &format!("{}\n=", "a".repeat(32 * 1024)));
    scan_and_prompt(dir, entries)
}

fn regex_backrefs(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(6, 300);
    let patterns = [
        |i: usize| format!("/(a*)\\1*b{{{i},}}/"),
        |i: usize| format!("/(.*)(.*)\\2\\1={{{i},}}/"),
        |i: usize| format!("/(a?){{{k}}}a{{{k}}}/", k = 30 + i),
        |i: usize| format!("/(?<=(a+)+){i}b/"),
        |i: usize| format!("/((a|aa)+)\\1{{{i}}}x/"),
    ];
    let entries = (0..n)
        .map(|i| regex_entry(i, patterns[i % patterns.len()](i)))
        .collect();
    chat_of(dir, &format!("{}\n=b x", "a".repeat(32 * 1024)));
    scan_and_prompt(dir, entries)
}

fn regex_gaps(dir: &Path, s: Scale) -> Vec<Run> {
    // Long bounded gaps blow up automata (the lazy DFA gives up, the NFA is huge).
    let n = s.pick(10, 150);
    let entries = (0..n)
        .map(|i| regex_entry(i, format!("/a[^]{{0,400}}b[^]{{0,400}}c[^]{{0,400}}d{i}/i")))
        .collect();
    let text: String = gen::noise(64 * 1024, 7)
        .into_iter()
        .map(char::from)
        .collect();
    chat_of(dir, &text);
    scan_and_prompt(dir, entries)
}

fn key_huge(dir: &Path, s: Scale) -> Vec<Run> {
    let len = s.pick(MIB, 8 * MIB);
    let mut key = "ab".repeat(len / 2);
    key.push('c');
    chat_of(dir, &"ab".repeat(s.pick(32 * 1024, 512 * 1024)));
    scan_and_prompt(dir, vec![entry(0, vec![key], "huge key")])
}

fn key_prefixes(dir: &Path, s: Scale) -> Vec<Run> {
    // x, xx, xxx, ...: every key matches everywhere in a run of x.
    let n = s.pick(250, 775);
    let entries = (1..=n)
        .map(|i| entry(i, vec!["x".repeat(i)], "prefix"))
        .collect();
    chat_of(dir, &"x".repeat(s.pick(64 * 1024, 1024 * 1024)));
    scan_and_prompt(dir, entries)
}

fn key_nested_substrings(dir: &Path, s: Scale) -> Vec<Run> {
    // Issue 31: x, xx, xxx, ... with whole words off, over a run of x: every key occurs at
    // every place, and every entry activates (11-20 s before; one match per entry is needed).
    let n = s.pick(300, 3000);
    let entries = (1..=n)
        .map(|i| {
            let mut e = entry(i, vec!["x".repeat(i)], "nested");
            e["extensions"] = json!({"match_whole_words": false});
            e
        })
        .collect();
    chat_of(dir, &"x".repeat(s.pick(30_000, 300_000)));
    scan_and_prompt(dir, entries)
}

/// CBS that expands to about `kib` KiB (1,000 `#each` items of `kib` bytes each).
fn cbs_blowup(kib: usize) -> String {
    let items: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
    format!(
        "{{{{#each {} as a}}}}{}{{{{/each}}}}",
        serde_json::to_string(&items).unwrap(),
        "y".repeat(kib)
    )
}

fn key_macros(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(20, 1200);
    let entries = (0..n)
        .map(|i| entry(i, vec![format!("{}{i}", cbs_blowup(1024))], "macro key"))
        .collect();
    chat_of(dir, "nothing to see");
    scan_and_prompt(dir, entries)
}

fn charx_with_assets(path: &Path, names: &[String]) -> serde_json::Value {
    let assets: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| json!({"type": "x_data", "uri": format!("embeded://{n}"), "name": format!("a{i}"), "ext": "bin"}))
        .collect();
    let c = card(&[("assets", json!(assets))], None);
    let mut z = Charx::create(path);
    z.add("card.json", &serde_json::to_vec(&c).unwrap(), true);
    z.finish();
    c
}

/// The commands that read a card container whole: inspect, validate, extract, convert.
fn container_commands(file: &str, convert_to: &str) -> Vec<Run> {
    vec![
        cmd(&["inspect", file], file),
        cmd(&["validate", file], file),
        cmd(&["extract", file, "out"], file).writes("out"),
        cmd(&["convert", file, convert_to], file).writes(convert_to),
    ]
}

fn charx_many_big(dir: &Path, s: Scale) -> Vec<Run> {
    // Each entry 1 MiB, about 2:1 compressible (under any ratio check); all of them referenced.
    let n = s.pick(40, 1900);
    let names: Vec<String> = (0..n).map(|i| format!("assets/other/x{i}.bin")).collect();
    let template = dir.join("template.zip");
    let mut t = Charx::create(&template);
    t.add("x", &gen::noise(MIB, 1), true);
    t.finish();
    let c = charx_with_assets(&dir.join("unused.charx"), &names);
    let mut z = Charx::create(&dir.join("card.charx"));
    z.add("card.json", &serde_json::to_vec(&c).unwrap(), true);
    z.add_copies(&template, names.into_iter());
    z.finish();
    container_commands("card.charx", "out.png")
}

fn charx_assets_streamed(dir: &Path, s: Scale) -> Vec<Run> {
    // Assets of 1 MiB each, stored, up to just under the CHARX budget (256 MiB): `extract` and
    // `convert` read them one at a time from the input, so peak memory stays well under their
    // total (issue 12: "assets stream to disk on extract/convert instead of being held").
    let n = s.pick(64, 240);
    let names: Vec<String> = (0..n).map(|i| format!("assets/other/x{i}.png")).collect();
    let template = dir.join("template.zip");
    let mut t = Charx::create(&template);
    t.add("x", &gen::noise(MIB, 3), false);
    t.finish();
    let assets: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| json!({"type": "x_data", "uri": format!("embeded://{n}"), "name": format!("a{i}"), "ext": "png"}))
        .collect();
    let c = card(&[("assets", json!(assets))], None);
    let mut z = Charx::create(&dir.join("card.charx"));
    z.add("card.json", &serde_json::to_vec(&c).unwrap(), true);
    z.add_copies(&template, names.into_iter());
    z.finish();
    let total = (n * MIB) as u64;
    let streamed = move |_: &Path, o: &Outcome| {
        if o.peak_rss > total / 2 {
            return Err(format!(
                "peak memory {} MiB for {} MiB of assets: they are held, not streamed",
                o.peak_rss >> 20,
                total >> 20
            ));
        }
        Ok(())
    };
    vec![
        cmd(&["extract", "card.charx", "out"], "card.charx")
            .writes("out")
            .check(streamed)
            .check(move |dir, _| {
                let files = listing(&dir.join("out/assets"));
                let len = |p: &PathBuf| {
                    std::fs::symlink_metadata(dir.join("out/assets").join(p))
                        .ok()
                        .filter(|m| m.is_file())
                        .map_or(0, |m| m.len())
                };
                let bytes: u64 = files.iter().map(len).sum();
                if bytes != total {
                    return Err(format!("extracted {bytes} bytes of assets, not {total}"));
                }
                Ok(())
            }),
        cmd(&["convert", "card.charx", "out.charx"], "card.charx")
            .writes("out.charx")
            .check(streamed),
        cmd(&["convert", "card.charx", "out.png"], "card.charx")
            .writes("out.png")
            .check(streamed),
    ]
}

fn charx_bomb(dir: &Path, s: Scale) -> Vec<Run> {
    // card.json of spaces inside an object: tiny compressed, huge inflated.
    let n = s.pick(64 * MIB, 1 << 30) as u64;
    let mut z = Charx::create(&dir.join("card.charx"));
    z.add_repeat("card.json", b' ', n);
    z.finish();
    container_commands("card.charx", "out.json")
}

fn charx_many_empty(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(20_000, 200_000);
    let c = card(&[], None);
    let mut z = Charx::create(&dir.join("card.charx"));
    z.add("card.json", &serde_json::to_vec(&c).unwrap(), true);
    for i in 0..n {
        z.add(&format!("assets/other/e{i}"), b"", false);
    }
    z.finish();
    container_commands("card.charx", "out.json")
}

fn json_huge_string(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(16 * MIB, 480 * MIB);
    let c = card(&[("description", json!("d".repeat(n)))], None);
    write_json(&dir.join("card.json"), &c);
    vec![
        cmd(&["inspect", "card.json"], "card.json"),
        cmd(&["validate", "card.json"], "card.json"),
        cmd(&["convert", "card.json", "out.charx"], "card.json").writes("out.charx"),
    ]
}

fn png_inflate_bomb(dir: &Path, s: Scale) -> Vec<Run> {
    // Asset chunks of base64 'A's (each decodes to zero bytes) that inflate to 16 MiB each.
    let n = s.pick(6, 100);
    let bomb = gen::zlib_repeat(b'A', 16 * MIB);
    let mut p = Png::new();
    p.card(&card(&[], None));
    for i in 0..n {
        if i % 2 == 0 {
            p.ztxt_raw(&format!("chara-ext-asset_:a{i}.bin"), &bomb);
        } else {
            p.itxt_raw(&format!("chara-ext-asset_:a{i}.bin"), &bomb);
        }
    }
    write(&dir.join("card.png"), &p.finish());
    container_commands("card.png", "out.charx")
}

fn png_many_assets(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(20_000, 200_000);
    let mut p = Png::new();
    p.card(&card(&[], None));
    for i in 0..n {
        p.text(
            &format!("chara-ext-asset_:a{i}.bin"),
            gen::base64(&(i as u32).to_le_bytes()).as_bytes(),
        );
    }
    write(&dir.join("card.png"), &p.finish());
    container_commands("card.png", "out.charx")
}

fn pack_sparse(dir: &Path, _s: Scale) -> Vec<Run> {
    let folder = dir.join("folder");
    std::fs::create_dir_all(folder.join("assets/other")).unwrap();
    let c = card(
        &[(
            "assets",
            json!([{"type": "x_data", "uri": "embeded://assets/other/big.bin", "name": "big", "ext": "bin"}]),
        )],
        None,
    );
    write_json(&folder.join("card.json"), &c);
    let f = std::fs::File::create(folder.join("assets/other/big.bin")).unwrap();
    f.set_len(3 * GIB).unwrap();
    vec![cmd(&["pack", "folder", "out.charx"], "big.bin").writes("out.charx")]
}

fn cbs_output(dir: &Path, s: Scale) -> Vec<Run> {
    // Seven card fields and many always-on entries, each just under the per-expansion limit.
    let blow = cbs_blowup(1000);
    let fields: Vec<(&str, serde_json::Value)> = [
        "description",
        "personality",
        "scenario",
        "first_mes",
        "mes_example",
        "system_prompt",
        "post_history_instructions",
    ]
    .iter()
    .map(|f| (*f, json!(blow.clone())))
    .collect();
    let n = s.pick(30, 800);
    let entries: Vec<_> = (0..n).map(|i| constant(i, &blow)).collect();
    write_json(&dir.join("card.json"), &card(&fields, Some(entries)));
    chat_of(dir, "hi");
    vec![
        prompt_run("card.json", "chat.json", &["--json"], "card.json"),
        cmd(
            &[
                "cbs",
                "--card",
                "card.json",
                "{{description}}{{personality}}{{scenario}}",
            ],
            "card.json",
        ),
    ]
}

fn cbs_variables(dir: &Path, s: Scale) -> Vec<Run> {
    // Entries that each set many variables of the largest allowed value (built by CBS itself).
    let (entries_n, vars) = (s.pick(10, 300), s.pick(20, 100));
    let value = {
        let items: Vec<String> = (0..64).map(|i| i.to_string()).collect();
        format!(
            "{{{{#each {} as a}}}}{}{{{{/each}}}}",
            serde_json::to_string(&items).unwrap(),
            "v".repeat(1023)
        )
    };
    let entries: Vec<_> = (0..entries_n)
        .map(|e| {
            let body: String = (0..vars)
                .map(|v| format!("{{{{setvar::v{e}_{v}::{value}}}}}"))
                .collect();
            constant(e, &body)
        })
        .collect();
    write_json(&dir.join("card.json"), &card(&[], Some(entries)));
    chat_of(dir, "hi");
    vec![prompt_run(
        "card.json",
        "chat.json",
        &["--state", "state.json", "--json"],
        "card.json",
    )
    .writes("state.json")
    .check(|dir, _| {
        let len = std::fs::metadata(dir.join("state.json"))
            .map(|m| m.len())
            .unwrap_or(0);
        if len > 64 << 20 {
            return Err(format!("state file is {len} bytes"));
        }
        Ok(())
    })]
}

fn cbs_nesting(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(20_000, 200_000);
    let text = format!("{}x{}", "{{#if 1}}".repeat(n), "{{/if}}".repeat(n));
    write(&dir.join("text.txt"), text.as_bytes());
    let braces = "{{".repeat(n * 4);
    write_json(
        &dir.join("card.json"),
        &card(
            &[("description", json!(text)), ("personality", json!(braces))],
            None,
        ),
    );
    chat_of(dir, "hi");
    vec![
        cmd(
            &[
                "cbs",
                "--card",
                "card.json",
                "{{description}}{{personality}}",
            ],
            "card.json",
        ),
        prompt_run("card.json", "chat.json", &["--json"], "card.json"),
    ]
}

fn chat_huge(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(66 * MIB, 200 * MIB);
    let per = 64 * 1024;
    let msg = "w ".repeat(per / 2);
    let msgs: Vec<&str> = (0..n / per).map(|_| msg.as_str()).collect();
    write_json(&dir.join("chat.json"), &chat(&msgs));
    write_one_entry_card(dir);
    vec![
        prompt_run("card.json", "chat.json", &["--json"], "chat.json"),
        scan_run("card.json", "chat.json", &["--json"], "chat.json"),
        cmd(
            &["cbs", "--chat", "chat.json", "{{lastmessage}}"],
            "chat.json",
        ),
    ]
}

fn chat_and_book_at_limits(dir: &Path, s: Scale) -> Vec<Run> {
    // At the default limits, so both are read: a chat of 1,000,000 distinct short messages (the
    // limit; 66 MB) and a book of 120 MB (the limit is 128 MiB). Each message is read straight
    // into its message, with no JSON tree (a tree per message took 1.32 GB here).
    let msgs: Vec<String> = (0..s.pick(50_000, 1_000_000))
        .map(|i| format!("message {i:07} key{:03}", i % 1000))
        .collect();
    let refs: Vec<&str> = msgs.iter().map(String::as_str).collect();
    write_json(&dir.join("chat.json"), &chat(&refs));
    let entries = s.pick(4_000, 80_000);
    let body = "lore text ".repeat(s.pick(100, 140));
    let book_entries: Vec<_> = (0..entries)
        .map(|i| entry(i, vec![format!("key{i}"), format!("alt{i}")], &body))
        .collect();
    write_json(&dir.join("book.json"), &book(book_entries));
    write_json(&dir.join("card.json"), &card(&[], None));
    vec![
        scan_run("book.json", "chat.json", &["--json"], "book.json"),
        cmd(
            &[
                "prompt",
                "--card",
                "card.json",
                "--book",
                "book.json",
                "--chat",
                "chat.json",
                "--json",
            ],
            "book.json",
        ),
    ]
}

fn chat_many(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(1_100_000, 1_500_000);
    let msgs = vec![""; n];
    write_json(&dir.join("chat.json"), &chat(&msgs));
    write_one_entry_card(dir);
    vec![
        prompt_run("card.json", "chat.json", &["--json"], "chat.json"),
        scan_run("card.json", "chat.json", &["--json"], "chat.json"),
    ]
}

fn book_million(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(100_000, 1_000_000);
    let entries: Vec<_> = (0..n)
        .map(|i| entry(i, vec![format!("k{i}")], "c"))
        .collect();
    write_json(&dir.join("book.json"), &book(entries));
    write_json(&dir.join("card.json"), &card(&[], None));
    chat_of(dir, "k1 k2 k3 k99999");
    vec![
        scan_run("book.json", "chat.json", &["--json"], "book.json"),
        cmd(
            &[
                "prompt",
                "--card",
                "card.json",
                "--book",
                "book.json",
                "--chat",
                "chat.json",
                "--json",
            ],
            "book.json",
        ),
        cmd(&["lint", "book.json", "--json"], "book.json"),
        cmd(&["lore", "graph", "book.json", "--json"], "book.json"),
    ]
}

/// Issue 27: every entry keyed `w` with content `w w`, half of them delayed until recursion:
/// entries squared edges, which the graph's limits cut (lint then says nothing unreachable).
fn graph_dense(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(3_000, 100_000);
    let entries: Vec<_> = (0..n)
        .map(|i| {
            let mut e = entry(i, vec!["w".into()], "w w");
            if i % 2 == 1 {
                e["extensions"]["delay_until_recursion"] = json!(true);
            }
            e
        })
        .collect();
    write_json(&dir.join("book.json"), &book(entries));
    vec![
        cmd(&["lint", "book.json", "--json"], "book.json"),
        cmd(&["lore", "graph", "book.json"], "book.json"),
        cmd(
            &["lore", "graph", "book.json", "--format", "mermaid"],
            "book.json",
        ),
    ]
}

fn state_huge(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(70 * MIB, 300 * MIB);
    let state = json!({"variables": {"a": "s".repeat(n)}, "junk": [1, 2, 3]});
    write_json(&dir.join("state.json"), &state);
    write_one_entry_card(dir);
    chat_of(dir, "w");
    vec![
        prompt_run(
            "card.json",
            "chat.json",
            &["--state", "state.json"],
            "state.json",
        )
        .writes("state.json"),
        scan_run(
            "card.json",
            "chat.json",
            &["--state", "state.json"],
            "state.json",
        )
        .writes("state.json"),
    ]
}

fn json_deep(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(100_000, 10_000_000);
    let deep = "[".repeat(n);
    for f in ["card.json", "chat.json", "book.json"] {
        write(&dir.join(f), deep.as_bytes());
    }
    write_json(&dir.join("ok.json"), &card(&[], None));
    write_json(&dir.join("okchat.json"), &chat(&["hi"]));
    vec![
        cmd(&["inspect", "card.json"], "card.json"),
        cmd(&["validate", "card.json"], "card.json"),
        scan_run("book.json", "okchat.json", &[], "book.json"),
        prompt_run("ok.json", "chat.json", &[], "chat.json"),
    ]
}

fn charx_paths(dir: &Path, _s: Scale) -> Vec<Run> {
    let names = [
        "../evil1.txt",
        "/tmp/ccv3-hostile-evil2.txt",
        "assets/../../evil3.txt",
        "assets\\..\\..\\evil4.txt",
        "assets/./../../../evil5.txt",
        "C:/evil6.txt",
        "assets/other/ok.txt",
    ];
    let c = card(
        &[("assets", json!(names.iter().map(|n| json!({"type": "x", "uri": format!("embeded://{n}"), "name": "n", "ext": "txt"})).collect::<Vec<_>>()))],
        None,
    );
    let mut z = Charx::create(&dir.join("card.charx"));
    z.add("card.json", &serde_json::to_vec(&c).unwrap(), true);
    for n in names {
        z.add(n, b"evil", false);
    }
    z.finish();
    vec![
        cmd(&["extract", "card.charx", "out"], "card.charx").writes("out"),
        cmd(&["convert", "card.charx", "out.png"], "card.charx").writes("out.png"),
    ]
}

fn extract_symlink(dir: &Path, _s: Scale) -> Vec<Run> {
    write_json(&dir.join("card.json"), &card(&[], None));
    std::os::unix::fs::symlink(dir.join("gone"), dir.join("out")).unwrap();
    std::os::unix::fs::symlink(dir.join("gone.png"), dir.join("link.png")).unwrap();
    vec![
        cmd(&["extract", "card.json", "out"], "out"),
        cmd(&["convert", "card.json", "link.png"], "link.png")
            .writes("link.png")
            .check(|dir, _| {
                if dir.join("gone.png").exists() {
                    return Err("wrote through the symlink link.png".into());
                }
                Ok(())
            }),
    ]
}

fn setuid(dir: &Path, _s: Scale) -> Vec<Run> {
    use std::os::unix::fs::PermissionsExt;
    write_json(&dir.join("card.json"), &card(&[], None));
    write(&dir.join("out.json"), b"old");
    std::fs::set_permissions(
        dir.join("out.json"),
        std::fs::Permissions::from_mode(0o6755),
    )
    .unwrap();
    vec![cmd(&["convert", "card.json", "out.json"], "card.json")
        .writes("out.json")
        .check(|dir, _| {
            let mode = std::fs::metadata(dir.join("out.json"))
                .map_err(|e| e.to_string())?
                .permissions()
                .mode();
            if mode & 0o7000 != 0 {
                return Err(format!("out.json kept mode {mode:o}"));
            }
            if mode & 0o777 != 0o755 {
                return Err(format!("out.json lost its other permission bits: {mode:o}"));
            }
            Ok(())
        })]
}

fn control_chars(dir: &Path, _s: Scale) -> Vec<Run> {
    let evil = "\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{9b}31m\u{7}";
    let c = card(
        &[
            ("name", json!(evil)),
            ("description", json!(evil)),
            ("creator_notes", json!(evil)),
            ("tags", json!([evil])),
        ],
        Some(vec![entry(0, vec![evil.into()], evil)]),
    );
    write_json(&dir.join("card.json"), &c);
    chat_of(dir, evil);
    let clean = |_: &Path, o: &Outcome| {
        let raw = o.stdout.iter().any(|&b| b == 0x1b || b == 0x07)
            || o.stdout.windows(2).any(|w| w == [0xc2, 0x9b])
            || o.stderr.contains(['\u{1b}', '\u{7}', '\u{9b}']);
        if raw {
            return Err("raw control characters reached the terminal".into());
        }
        Ok(())
    };
    vec![
        cmd(&["inspect", "card.json"], "card.json").check(clean),
        cmd(&["validate", "card.json"], "card.json").check(clean),
        scan_run("card.json", "chat.json", &[], "card.json").check(clean),
        cmd(&["lore", "list", "card.json"], "card.json").check(clean),
        cmd(&["tokens", "card.json"], "card.json").check(clean),
        cmd(&["lore", "list", "card.json", "--json"], "card.json"),
        cmd(&["lint", "card.json"], "card.json").check(clean),
        cmd(&["lore", "graph", "card.json"], "card.json").check(clean),
        cmd(&["portability", "card.json"], "card.json").check(clean),
        cmd(&["diff", "card.json", "card.json"], "card.json").check(clean),
        cmd(
            &["set", "card.json", "name", "x", "-o", "out.json"],
            "card.json",
        )
        .writes("out.json")
        .check(clean),
    ]
}

fn decorator_flood(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(20_000, 200_000);
    let content: String = (0..n)
        .map(|i| format!("@@depth x{i}\n@@nonsense{i}\n"))
        .collect();
    let c = card(
        &[],
        Some(vec![entry(0, vec!["w".into()], &(content + "text"))]),
    );
    write_json(&dir.join("card.json"), &c);
    chat_of(dir, "w");
    let few_lines = |_: &Path, o: &Outcome| {
        let lines = o.stderr.lines().count() + o.stdout.iter().filter(|&&b| b == b'\n').count();
        if lines > 2_000 || o.stdout_len > 4 << 20 {
            return Err(format!("{lines} lines, {} bytes of stdout", o.stdout_len));
        }
        Ok(())
    };
    vec![
        cmd(&["inspect", "card.json"], "card.json").check(few_lines),
        cmd(&["validate", "card.json"], "card.json").check(few_lines),
        scan_run("card.json", "chat.json", &[], "card.json").check(few_lines),
        cmd(&["lint", "card.json", "--app", "sillytavern"], "card.json").check(few_lines),
        cmd(&["portability", "card.json"], "card.json").check(few_lines),
    ]
}

fn bad_ccv3_chunk(dir: &Path, _s: Scale) -> Vec<Run> {
    let mut p = Png::new();
    let at = p.offset();
    p.text("ccv3", b"!!!! not base64 at all !!!!");
    write(&dir.join("card.png"), &p.finish());
    let at = at.to_string();
    vec![
        cmd(&["inspect", "card.png"], "card.png").check(move |_, o| {
            if !o.stderr.contains(&at) {
                return Err(format!(
                    "the error does not name byte {at}: {}",
                    o.stderr.trim()
                ));
            }
            Ok(())
        }),
    ]
}

fn png_lying(dir: &Path, _s: Scale) -> Vec<Run> {
    let mut p = Png::new();
    p.card(&card(&[], None));
    p.raw(&0x7fff_fff0u32.to_be_bytes())
        .raw(b"tEXt")
        .raw(b"ccv3\0");
    write(&dir.join("long.png"), &p.finish());
    let mut q = Png::new();
    q.raw(&u32::MAX.to_be_bytes()).raw(b"zTXt");
    write(&dir.join("max.png"), &q.finish());
    vec![
        cmd(&["inspect", "long.png"], "long.png"),
        cmd(&["extract", "long.png", "out"], "long.png").writes("out"),
        cmd(&["inspect", "max.png"], "max.png"),
    ]
}

fn surrogates(dir: &Path, _s: Scale) -> Vec<Run> {
    let c = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"S\ud800","description":"rev \udc00\ud800 end","personality":"","scenario":"","first_mes":"hi","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","alternate_greetings":[],"tags":[],"creator":"","character_version":"","extensions":{"k\udfff":1},"group_only_greetings":[],"character_book":{"entries":[{"keys":["w\ud83d"],"content":"c","extensions":{},"enabled":true,"insertion_order":0,"use_regex":false}],"extensions":{}}}}"#;
    write(&dir.join("card.json"), c);
    write(
        &dir.join("chat.json"),
        br#"[{"role":"user","name":"U","content":"w\ud83d and \ude00"}]"#,
    );
    let ok = |_: &Path, o: &Outcome| match o.code {
        Some(0) => Ok(()),
        _ => Err(format!(
            "lone surrogates rejected the file: {}",
            o.stderr.trim()
        )),
    };
    vec![
        cmd(&["inspect", "card.json"], "card.json").check(ok),
        scan_run("card.json", "chat.json", &[], "card.json").check(ok),
        prompt_run("card.json", "chat.json", &[], "card.json").check(ok),
    ]
}

fn extreme_numbers(dir: &Path, _s: Scale) -> Vec<Run> {
    let mut e = entry(0, vec!["w".into()], "@@depth 99999999999999999999999999\n@@scan_depth 18446744073709551615\n@@activate_only_every 0\n@@activate_only_after 18446744073709551615\n@@position 999\n@@role 1e308\ncontent");
    e["insertion_order"] = json!(i64::MAX);
    e["priority"] = json!(-1e308);
    e["extensions"] = json!({"depth": 1e300, "probability": -5, "scan_depth": u64::MAX, "sticky": u64::MAX, "cooldown": -1, "delay": 1e20});
    let mut b = card(&[], Some(vec![e.clone(), constant(1, "x")]));
    b["data"]["character_book"]["scan_depth"] = json!(u64::MAX);
    b["data"]["character_book"]["token_budget"] = json!(1e300);
    b["data"]["character_book"]["recursive_scanning"] = json!(true);
    write_json(&dir.join("card.json"), &b);
    chat_of(dir, "w");
    vec![
        scan_run("card.json", "chat.json", &["--json"], "card.json"),
        prompt_run(
            "card.json",
            "chat.json",
            &["--max-context", "18446744073709551615"],
            "card.json",
        ),
        cmd(&["validate", "card.json"], "card.json"),
    ]
}

fn bad_ccv3_variants(dir: &Path, _s: Scale) -> Vec<Run> {
    // Good base64 of bad JSON, of JSON of the wrong shape, and a card whose chunk is cut short.
    let mut runs = Vec::new();
    let bodies: [&[u8]; 3] = [
        b"{\"spec\": \"chara_card_v3\", \"data\": {\"name\": ",
        b"[1, 2, 3]",
        b"{\"spec\":\"chara_card_v3\",\"data\":{\"name\":5}}",
    ];
    for (i, body) in bodies.iter().enumerate() {
        let mut p = Png::new();
        let at = p.offset();
        p.text("ccv3", gen::base64(body).as_bytes());
        let name = format!("bad{i}.png");
        write(&dir.join(&name), &p.finish());
        let at = at.to_string();
        runs.push(cmd(&["inspect", &name], &name).check(move |_, o| {
            if o.code == Some(2) && !o.stderr.contains(&at) && !o.stderr.contains("data") {
                return Err(format!(
                    "the error names neither byte {at} nor a JSON path: {}",
                    o.stderr.trim()
                ));
            }
            Ok(())
        }));
    }
    runs
}

fn webp_jpeg(dir: &Path, _s: Scale) -> Vec<Run> {
    // A RIFF whose sizes lie, an EXIF chunk that claims 4 GiB, IFDs that point at themselves, and a
    // JPEG of 20,000 APP1 segments.
    let mut webp = b"RIFF\xff\xff\xff\xffWEBPEXIF\xf0\xff\xff\xffExif\0\0II*\0\x08\0\0\0".to_vec();
    webp.extend_from_slice(&[
        1, 0, 0x86, 0x92, 7, 0, 0xff, 0xff, 0xff, 0x7f, 8, 0, 0, 0, 8, 0, 0, 0,
    ]);
    write(&dir.join("card.webp"), &webp);
    let mut jpeg = vec![0xff, 0xd8];
    for _ in 0..20_000 {
        let mut seg = b"Exif\0\0MM\0*\0\0\0\x08\0\x01\x87\x69\0\x04\0\0\0\x01\0\0\0\x08".to_vec();
        seg.extend_from_slice(&[0; 8]);
        jpeg.extend_from_slice(&[0xff, 0xe1]);
        jpeg.extend_from_slice(&((seg.len() + 2) as u16).to_be_bytes());
        jpeg.extend_from_slice(&seg);
    }
    jpeg.extend_from_slice(&[0xff, 0xd9]);
    write(&dir.join("card.jpg"), &jpeg);
    vec![
        cmd(&["inspect", "card.webp"], "card.webp"),
        cmd(&["inspect", "card.jpg"], "card.jpg"),
        cmd(&["convert", "card.jpg", "out.png"], "card.jpg").writes("out.png"),
    ]
}

fn regex_repetition(dir: &Path, s: Scale) -> Vec<Run> {
    let n = s.pick(10, 200);
    let pats = [
        |i: usize| format!("/a{{{}}}/", 100_000 + i),
        |i: usize| format!("/(?:a{{1000}}){{1000}}{i}/"),
        |i: usize| format!("/[\\s\\S]{{0,65535}}z{i}/"),
        |i: usize| format!("/(?:\\w+\\s?){{1,999}}q{i}/u"),
    ];
    let entries = (0..n)
        .map(|i| regex_entry(i, pats[i % pats.len()](i)))
        .collect();
    chat_of(dir, &"a ".repeat(16 * 1024));
    scan_and_prompt(dir, entries)
}

fn cbs_dice(dir: &Path, _s: Scale) -> Vec<Run> {
    let text = "{{roll:999999999d999999999}}{{dice:1000000000d6}}{{calc::9^9^9^9^9}}{{calc::((((((((((((((((((((1))))))))))))))))))))}}{{random::a,b}}{{pick::x,y}}";
    let many_args = format!(
        "{{{{random::{}}}}}{{{{pick::{}}}}}",
        "a,".repeat(500_000),
        "b::".repeat(300_000)
    );
    write_json(
        &dir.join("card.json"),
        &card(&[("description", json!(many_args))], None),
    );
    vec![
        cmd(&["cbs", text], "text"),
        cmd(
            &["cbs", "--card", "card.json", "{{description}}"],
            "card.json",
        ),
    ]
}

/// Issue 17: RisuAI's functions that loop or grow (`range` with a step of 0 loops forever in
/// RisuAI, `arrayassert` with a far index writes that many nulls, `cbr`/`replace`/`join`
/// multiply their text, `pow` overflows, `rollp` rolls a billion dice), in every field of a
/// RisuAI card and in its always-on entries, in the `risu` dialect.
fn cbs_risu(dir: &Path, s: Scale) -> Vec<Run> {
    let a = "a".repeat(s.pick(8_000, 60_000));
    let small = "{{range::[0,1,0]}}{{range::[1e15]}}{{arrayassert::[]::4294967294::x}}\
                 {{cbr::1e15}}{{rollp::1000000000d6}}{{pow::9::9e300}}";
    let text = [
        "{{range::[0,1,0]}}".to_string(),
        "{{range::[1e15]}}".to_string(),
        "{{range::[0,1e300,1e-300]}}".to_string(),
        "{{arrayassert::[]::4294967294::x}}".to_string(),
        "{{objectassert::[]::4294967294::x}}".to_string(),
        "{{cbr::1e15}}".to_string(),
        "{{pow::9::9e300}}{{fixnum::1e300::100}}{{tohex::1e308}}".to_string(),
        "{{rollp::1000000000d6}}{{dice::1000000000d6}}{{roll::1000000000d6}}".to_string(),
        format!("{{{{replace::{a}::a::{a}}}}}"),
        format!("{{{{join::{{{{split::{a}::}}}}::{a}}}}}"),
        format!("{{{{split::{a}::}}}}"),
        format!("{{{{crypt::{a}}}}}{{{{xor::{a}}}}}"),
    ]
    .concat();
    let fields: Vec<(&str, serde_json::Value)> = ["description", "personality", "scenario"]
        .iter()
        .map(|f| (*f, json!(text.clone())))
        .collect();
    let n = s.pick(3, 200);
    let entries: Vec<_> = (0..n).map(|i| constant(i, &text)).collect();
    // `card` writes RisuAI cards, so `auto` is the `risu` dialect.
    write_json(&dir.join("card.json"), &card(&fields, Some(entries)));
    chat_of(dir, "hi");
    vec![
        prompt_run("card.json", "chat.json", &["--json"], "card.json"),
        cmd(&["cbs", "--dialect", "risu", small], "text"),
        cmd(
            &[
                "cbs",
                "--card",
                "card.json",
                "{{description}}{{personality}}",
            ],
            "card.json",
        ),
    ]
}

fn validate_loop(dir: &Path, _s: Scale) -> Vec<Run> {
    std::fs::create_dir_all(dir.join("cards/sub")).unwrap();
    write_json(&dir.join("cards/sub/card.json"), &card(&[], None));
    std::os::unix::fs::symlink("..", dir.join("cards/sub/up")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("cards/self")).unwrap();
    vec![
        cmd(&["validate", "cards"], "cards"),
        cmd(&["validate", "cards", "--jsonl"], "cards"),
        // Issue 16: the folder commands walk the same folder.
        cmd(
            &["convert", "cards", "--out", "out", "--format", "json"],
            "cards",
        )
        .writes("out"),
        cmd(&["index", "cards", "--db", "cards.sqlite"], "cards").writes("cards.sqlite"),
        cmd(
            &["search", "--db", "cards.sqlite", "\"unclosed"],
            "cards.sqlite",
        ),
        cmd(&["export", "--db", "cards.sqlite"], "cards.sqlite"),
    ]
}

fn state_symlink(dir: &Path, _s: Scale) -> Vec<Run> {
    write_json(
        &dir.join("card.json"),
        &card(&[], Some(vec![constant(0, "{{setvar::a::1}}")])),
    );
    chat_of(dir, "hi");
    write(&dir.join("victim.txt"), b"precious");
    std::os::unix::fs::symlink(dir.join("victim.txt"), dir.join("state.json")).unwrap();
    vec![prompt_run(
        "card.json",
        "chat.json",
        &["--state", "state.json"],
        "state.json",
    )
    .check(|dir, _| {
        if std::fs::read(dir.join("victim.txt")).unwrap_or_default() != b"precious" {
            return Err("wrote through the state symlink".into());
        }
        Ok(())
    })]
}

// ---------------------------------------------------------------------------------------------
// The runner.

fn scale() -> Scale {
    match std::env::var("CCV3_HOSTILE").as_deref() {
        Ok("full") => Scale::Full,
        _ => Scale::Small,
    }
}

/// Checks the contract on one outcome; returns the broken rules.
fn contract(
    run: &Run,
    dir: &Path,
    before: &[PathBuf],
    o: &Outcome,
    limit: Duration,
) -> Vec<String> {
    let mut broken = Vec::new();
    if o.timed_out {
        broken.push(format!("still running after {limit:?}"));
    } else if let Some(sig) = o.signal {
        broken.push(format!("killed by signal {sig}"));
    }
    if let Some(code) = o.code {
        if code > 2 {
            broken.push(format!("exit code {code}"));
        }
        if code == 2 {
            let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            if lines.len() != 1 {
                broken.push(format!("{} stderr lines on failure", lines.len()));
            }
            if !o.stderr.contains(&run.names) {
                broken.push(format!("the error does not name {}", run.names));
            }
        }
    }
    if o.stderr.contains("panicked") || o.stderr.contains("stack backtrace") {
        broken.push("panicked".into());
    }
    if o.peak_rss >= GIB {
        broken.push(format!("peak memory {} MiB", o.peak_rss >> 20));
    }
    let after = listing(dir);
    for p in after.iter().filter(|p| !before.contains(p)) {
        if !run.writes.iter().any(|w| p.starts_with(w)) {
            broken.push(format!("wrote {}", p.display()));
        }
    }
    for c in &run.checks {
        if let Err(e) = c(dir, o) {
            broken.push(e);
        }
    }
    broken
}

#[test]
fn every_command_keeps_the_contract_on_hostile_input() {
    let scale = scale();
    let limit = match scale {
        Scale::Full => Duration::from_secs(10),
        // At small scale the limit only guards against hangs: a debug build runs 15-20x slower
        // than release (`cbs-output-per-prompt`'s prompt: 20.6 s of CPU in debug, 1.35 s in
        // release), so a loaded machine pushed it past 30 s. The 10 s contract itself is
        // checked at full scale on the release build (`.ci/run`).
        Scale::Small if cfg!(debug_assertions) => Duration::from_secs(90),
        Scale::Small => Duration::from_secs(30),
    };
    let only: Option<Vec<String>> = std::env::var("CCV3_HOSTILE_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ccv3"));
    let root = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut still_open = Vec::new();
    for case in CASES {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|n| n == case.name))
        {
            continue;
        }
        let dir = root.path().join(case.name);
        std::fs::create_dir_all(&dir).unwrap();
        let runs = (case.build)(&dir, scale);
        for r in &runs {
            let before = listing(&dir);
            let o = run(&bin, &r.args, &dir, limit);
            let broken = contract(r, &dir, &before, &o, limit);
            let line = format!(
                "{:<28} {:<12} ccv3 {:<60} exit {:>4} {:>7.2} s {:>5} MiB",
                case.name,
                case.class,
                r.args
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" "),
                o.code.map_or("sig".into(), |c| c.to_string()),
                o.elapsed.as_secs_f64(),
                o.peak_rss >> 20,
            );
            eprintln!("{line}");
            if !broken.is_empty() {
                let msg = format!(
                    "{line}\n    broke: {}\n    stderr: {}",
                    broken.join("; "),
                    first_line(&o.stderr)
                );
                eprintln!("    broke: {}", broken.join("; "));
                if OPEN.contains(&case.name) {
                    still_open.push(msg);
                } else {
                    failures.push(msg);
                }
            }
            // Outputs of one run must not be the inputs of the next.
            for w in r.writes.iter().filter(|w| !before.contains(w)) {
                let p = dir.join(w);
                let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    if !still_open.is_empty() {
        eprintln!(
            "\nstill open ({}):\n{}",
            still_open.len(),
            still_open.join("\n")
        );
    }
    assert!(
        failures.is_empty(),
        "{} runs broke the contract:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(300).collect()
}
