//! Issue 14, "Every engine setting reachable": `ccv3 lore scan` and `ccv3 prompt` take every
//! setting of the lorebook engine (SillyTavern's World Info "Activation Settings" and
//! "Triggers"), each flag changing what the scan activates.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::Path;

/// A lorebook entry with `keys`, `content` and SillyTavern `extensions`.
fn entry(keys: &[&str], content: &str, ext: Value) -> Value {
    json!({"keys": keys, "content": content, "extensions": ext, "enabled": true,
           "insertion_order": 100, "use_regex": false})
}

/// Writes `book` and `chat` into `dir`; returns their paths.
fn files(dir: &Path, entries: Vec<Value>, chat: Value) -> (std::path::PathBuf, std::path::PathBuf) {
    let b = dir.join("book.json");
    let c = dir.join("chat.json");
    let book = json!({"spec": "lorebook_v3", "data": {"entries": entries}});
    std::fs::write(&b, book.to_string()).unwrap();
    std::fs::write(&c, chat.to_string()).unwrap();
    (b, c)
}

/// `ccv3 lore scan --json` with `flags`: the indices of the activated entries.
fn scan(book: &Path, chat: &Path, flags: &[&str]) -> Vec<u64> {
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
        &"lore", &"scan", &"--book", &book, &"--chat", &chat, &"--json",
    ];
    for f in flags {
        args.push(f);
    }
    let o = ccv3(&args);
    assert!(o.status.success(), "{flags:?}: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut got: Vec<u64> = v["activated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["index"].as_u64().unwrap())
        .collect();
    got.sort_unstable();
    got
}

fn msgs(texts: &[(&str, &str)]) -> Value {
    Value::Array(
        texts
            .iter()
            .map(|(role, t)| json!({"role": role, "name": if *role == "user" {"Kazuma"} else {"Aqua"}, "content": t}))
            .collect(),
    )
}

#[test]
fn issue14_min_activations_and_its_depth_max() {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = files(
        dir.path(),
        vec![
            entry(&["castle"], "C", json!({})),
            entry(&["river"], "R", json!({})),
        ],
        msgs(&[
            ("user", "the river"),
            ("assistant", "the castle"),
            ("user", "a"),
            ("assistant", "b"),
        ]),
    );
    assert_eq!(scan(&b, &c, &[]), Vec::<u64>::new());
    assert_eq!(scan(&b, &c, &["--min-activations", "1"]), [0]);
    assert_eq!(scan(&b, &c, &["--min-activations", "2"]), [0, 1]);
    assert_eq!(
        scan(
            &b,
            &c,
            &["--min-activations", "2", "--min-activations-depth-max", "3"]
        ),
        [0]
    );
}

#[test]
fn issue14_max_recursion_steps() {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = files(
        dir.path(),
        vec![
            entry(&["castle"], "The castle stands by the river.", json!({})),
            entry(&["river"], "The river runs to the sea.", json!({})),
            entry(&["sea"], "The sea is grey.", json!({})),
        ],
        msgs(&[("user", "the castle")]),
    );
    assert_eq!(scan(&b, &c, &["--recursive"]), [0, 1, 2]);
    assert_eq!(
        scan(&b, &c, &["--recursive", "--max-recursion-steps", "2"]),
        [0, 1]
    );
    assert_eq!(
        scan(&b, &c, &["--recursive", "--max-recursion-steps", "1"]),
        [0]
    );
}

#[test]
fn issue14_budget_and_budget_cap() {
    let dir = tempfile::tempdir().unwrap();
    let long = "word ".repeat(40);
    let (b, c) = files(
        dir.path(),
        vec![
            entry(&["castle"], &long, json!({})),
            entry(&["castle"], &long, json!({})),
        ],
        msgs(&[("user", "the castle")]),
    );
    assert_eq!(scan(&b, &c, &[]), [0, 1]);
    assert_eq!(scan(&b, &c, &["--budget", "60"]).len(), 1);
    assert_eq!(scan(&b, &c, &["--budget-cap", "60"]).len(), 1);
    assert_eq!(
        scan(&b, &c, &["--budget", "1000", "--budget-cap", "60"]).len(),
        1
    );
    assert_eq!(scan(&b, &c, &["--budget", "1000"]), [0, 1]);
}

#[test]
fn issue14_include_names_whole_words_case_sensitive_group_scoring() {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = files(
        dir.path(),
        vec![
            entry(&["kazuma"], "name", json!({})),
            entry(&["cast"], "part of a word", json!({})),
            entry(&["Castle"], "case", json!({})),
            entry(&["song", "sing", "ghosts"], "g1", json!({"group": "songs"})),
            entry(&["song", "sing", "cats"], "g2", json!({"group": "songs"})),
        ],
        msgs(&[("user", "the castle, sing me a song about ghosts")]),
    );
    let with = |flags: &[&str]| scan(&b, &c, flags);
    assert!(with(&[]).contains(&0));
    assert!(!with(&["--include-names", "false"]).contains(&0));
    assert!(!with(&[]).contains(&1));
    assert!(with(&["--whole-words", "false"]).contains(&1));
    assert!(with(&[]).contains(&2));
    assert!(!with(&["--case-sensitive", "true"]).contains(&2));
    // Scoring: g1 finds 3 keys, g2 two; without scoring the group rolls.
    for seed in ["1", "2", "3", "4", "5"] {
        let got = with(&["--group-scoring", "true", "--seed", seed]);
        assert!(got.contains(&3) && !got.contains(&4), "{got:?}");
    }
    let rolled: std::collections::HashSet<bool> = (0..12)
        .map(|s| with(&["--seed", &s.to_string()]).contains(&3))
        .collect();
    assert_eq!(rolled.len(), 2, "without scoring both members can win");
}

#[test]
fn issue14_trigger_selects_generation_type() {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = files(
        dir.path(),
        vec![
            entry(
                &["castle"],
                "on continue",
                json!({"triggers": ["continue"]}),
            ),
            entry(&["castle"], "always", json!({})),
        ],
        msgs(&[("user", "the castle")]),
    );
    assert_eq!(scan(&b, &c, &[]), [1]);
    assert_eq!(scan(&b, &c, &["--trigger", "normal"]), [1]);
    assert_eq!(scan(&b, &c, &["--trigger", "continue"]), [0, 1]);
    assert_eq!(scan(&b, &c, &["--trigger", "quiet"]), [1]);
    let bad = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &b,
        &"--chat",
        &c,
        &"--trigger",
        &"bogus",
    ]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("continue"), "{}", stderr(&bad));
}

#[test]
fn issue14_prompt_takes_the_same_engine_settings() {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = files(
        dir.path(),
        vec![
            entry(
                &["castle"],
                "CONTINUE-ONLY",
                json!({"triggers": ["continue"]}),
            ),
            entry(&["river"], "DEEP-RIVER", json!({})),
        ],
        msgs(&[
            ("user", "the river"),
            ("assistant", "x"),
            ("user", "the castle"),
        ]),
    );
    let card = example("ember.png");
    let prompt = |flags: &[&str]| {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
            &"prompt", &"--card", &card, &"--book", &b, &"--chat", &c, &"--json", &"--now", &"0",
        ];
        for f in flags {
            args.push(f);
        }
        let o = ccv3(&args);
        assert!(o.status.success(), "{flags:?}: {}", stderr(&o));
        stdout(&o)
    };
    let plain = prompt(&[]);
    assert!(!plain.contains("CONTINUE-ONLY") && !plain.contains("DEEP-RIVER"));
    assert!(prompt(&["--trigger", "continue"]).contains("CONTINUE-ONLY"));
    assert!(prompt(&["--min-activations", "50"]).contains("DEEP-RIVER"));
    for flags in [
        &["--max-recursion-steps", "1"][..],
        &["--budget", "100"],
        &["--budget-cap", "100"],
        &["--include-names", "false"],
        &["--whole-words", "false"],
        &["--case-sensitive", "true"],
        &["--group-scoring", "true"],
        &["--min-activations-depth-max", "2"],
    ] {
        prompt(flags);
    }
}

/// A card file with `description` and a book of `entries`.
fn card_file(dir: &Path, entries: Vec<Value>) -> std::path::PathBuf {
    let p = dir.join("Aqua.json");
    let card = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Aqua", "description": "A goddess of water who lives in Axel.",
        "personality": "", "scenario": "", "first_mes": "Hi", "mes_example": "",
        "creator_notes": "", "system_prompt": "", "post_history_instructions": "",
        "alternate_greetings": [], "tags": ["goddess"], "creator": "", "character_version": "",
        "extensions": {}, "group_only_greetings": [],
        "character_book": {"entries": entries}}});
    std::fs::write(&p, card.to_string()).unwrap();
    p
}

#[test]
fn issue14_card_texts_and_persona_are_matching_sources_and_the_card_is_the_filtered_character() {
    // World Info doc, "Additional matching sources" and "Character Filter".
    let dir = tempfile::tempdir().unwrap();
    let card = card_file(
        dir.path(),
        vec![
            entry(
                &["axel"],
                "DESC",
                json!({"match_character_description": true}),
            ),
            entry(
                &["sword"],
                "PERSONA",
                json!({"match_persona_description": true}),
            ),
            entry(
                &["hello"],
                "NOT-AQUA",
                json!({"character_filter": {"isExclude": true, "names": ["Aqua"]}}),
            ),
            entry(
                &["hello"],
                "GODDESS",
                json!({"character_filter": {"tags": ["goddess"]}}),
            ),
        ],
    );
    let (_, c) = files(dir.path(), vec![], msgs(&[("user", "hello")]));
    assert_eq!(scan(&card, &c, &[]), [0, 3]);
    assert_eq!(
        scan(&card, &c, &["--persona", "Carries a sword."]),
        [0, 1, 3]
    );
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
        &"prompt", &"--card", &card, &"--chat", &c, &"--json", &"--now", &"0",
    ];
    args.extend([
        &"--persona" as &dyn AsRef<std::ffi::OsStr>,
        &"Carries a sword.",
    ]);
    let o = ccv3(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for (want, label) in [
        (true, "DESC"),
        (true, "PERSONA"),
        (false, "NOT-AQUA"),
        (true, "GODDESS"),
    ] {
        assert_eq!(text.contains(label), want, "{label}: {text}");
    }
}

/// Issue 14: "An entry with no `position` field is placed where the documentation says, and
/// the explanation says so": `after_char` (SillyTavern's card import, research/other-systems.md
/// "Card mapping"), with `"position_default": true` in `--json` and a starred position in the
/// table; an entry that writes its position keeps today's output.
#[test]
fn issue14_entry_without_position_explained() {
    let dir = tempfile::tempdir().unwrap();
    let mut placed = entry(&["castle"], "PLACED", json!({}));
    placed["position"] = json!("after_char");
    let (b, c) = files(
        dir.path(),
        vec![entry(&["castle"], "UNPLACED", json!({})), placed],
        msgs(&[("user", "the castle")]),
    );
    let o = ccv3(&[&"lore", &"scan", &"--book", &b, &"--chat", &c, &"--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let item = |i: u64| {
        v["activated"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["index"] == i)
            .unwrap()
            .clone()
    };
    assert_eq!(item(0)["position"], "after_char");
    assert_eq!(item(0)["position_default"], true);
    assert_eq!(item(1)["position"], "after_char");
    assert!(item(1).get("position_default").is_none(), "{}", item(1));
    let t = ccv3(&[&"lore", &"scan", &"--book", &b, &"--chat", &c]);
    let table = String::from_utf8(t.stdout).unwrap();
    assert!(table.contains(" after_char* "), "{table}");
    assert!(table.contains(" after_char  "), "{table}");
    assert!(
        table.contains("* no position written: after_char"),
        "{table}"
    );
    // `ccv3 prompt --json`'s lore items carry the same flag.
    let card = example("ember.png");
    let p = ccv3(&[
        &"prompt", &"--card", &card, &"--book", &b, &"--chat", &c, &"--json", &"--now", &"0",
    ]);
    assert!(p.status.success(), "{}", stderr(&p));
    let v: Value = serde_json::from_slice(&p.stdout).unwrap();
    let lore = |label: &str| {
        v["lore"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["label"].as_str().unwrap().ends_with(label))
            .unwrap_or_else(|| panic!("{label}: {v}"))
            .clone()
    };
    assert_eq!(lore("#0")["position_default"], true);
    assert!(lore("#1").get("position_default").is_none());
}

/// Issue 28: `--st-timed`, `--st-activated` and `--book-kind` take SillyTavern's own inputs (its
/// `timedWorldInfo` records and activated set, `world-info.js` of 1.19.0 lines 594, 605-610
/// and 5075; its lore kinds, lines 4608-4625), and a World Info entry without a position is
/// activated and placed nowhere (lines 5212-5262).
#[test]
fn issue28_sillytavern_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("w.json");
    std::fs::write(
        &world,
        json!({"name": "w", "entries": {
            "1": {"uid": 1, "key": ["apple"], "content": "P", "order": 100, "position": 0,
                  "useProbability": true, "probability": 50},
            "2": {"uid": 2, "key": ["zzz"], "content": "S", "order": 90, "position": 0,
                  "sticky": 3},
            "3": {"uid": 3, "key": ["apple"], "content": "N", "order": 80}}})
        .to_string(),
    )
    .unwrap();
    let chat = dir.path().join("chat.json");
    std::fs::write(
        &chat,
        msgs(&[("user", "x"), ("assistant", "y"), ("user", "apple")]).to_string(),
    )
    .unwrap();
    let timed = dir.path().join("timed.json");
    std::fs::write(
        &timed,
        json!({"timedWorldInfo": {"sticky": {"w.2": {"hash": 7, "start": 2, "end": 5,
            "protected": false}}, "cooldown": {}}})
        .to_string(),
    )
    .unwrap();
    let on = dir.path().join("on.json");
    std::fs::write(&on, json!(["w.1"]).to_string()).unwrap();
    let off = dir.path().join("off.json");
    std::fs::write(&off, json!({"w": []}).to_string()).unwrap();
    let base = [
        "--compat",
        "sillytavern",
        "--book-kind",
        "chat",
        "--st-timed",
    ];
    let with = |set: &Path| {
        let mut f: Vec<&str> = base.to_vec();
        f.push(timed.to_str().unwrap());
        f.extend(["--st-activated", set.to_str().unwrap()]);
        scan(&world, &chat, &f)
    };
    assert_eq!(with(&on), [0, 1, 2]);
    assert_eq!(with(&off), [1, 2]);
    // The table says where the unplaced entry went.
    let o = ccv3(&[
        &"lore" as &dyn AsRef<std::ffi::OsStr>,
        &"scan",
        &"--book",
        &world,
        &"--chat",
        &chat,
        &"--compat",
        &"sillytavern",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("nowhere: a World Info entry without a position"),
        "{table}"
    );
    // A kind that is not one.
    let o = ccv3(&[
        &"lore" as &dyn AsRef<std::ffi::OsStr>,
        &"scan",
        &"--book",
        &world,
        &"--chat",
        &chat,
        &"--book-kind",
        &"lore",
    ]);
    assert!(!o.status.success());
}
