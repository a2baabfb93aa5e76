//! Issue 14, "Every engine setting reachable": `scan_lorebook` and `build_prompt` take every
//! setting of the lorebook engine in their request (snake_case or camelCase, as the npm and
//! Python packages pass them), one test per setting.

use ccv3_embed::{build_prompt, scan_lorebook, Source};
use serde_json::{json, Value};

fn entry(keys: &[&str], content: &str, ext: Value) -> Value {
    json!({"keys": keys, "content": content, "extensions": ext, "enabled": true,
           "insertion_order": 100, "use_regex": false})
}

fn book(entries: Vec<Value>) -> Value {
    json!({"entries": entries})
}

fn msgs(texts: &[&str]) -> Value {
    Value::Array(
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                json!({"role": role, "name": if i % 2 == 0 {"Kazuma"} else {"Aqua"}, "content": t})
            })
            .collect(),
    )
}

/// The indices of the entries `request` activates (sorted), with `chat` added.
fn act(b: &Value, chat: &[&str], request: Value) -> Vec<u64> {
    let mut req = request;
    req["chat"] = msgs(chat);
    let out = scan_lorebook(&[Source::Json(b)], &req).unwrap_or_else(|e| panic!("{req}: {e:?}"));
    let mut got: Vec<u64> = out["activated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["index"].as_u64().unwrap())
        .collect();
    got.sort_unstable();
    got
}

fn bad(b: &Value, request: Value) -> String {
    scan_lorebook(&[Source::Json(b)], &request)
        .unwrap_err()
        .code
        .to_string()
}

#[test]
fn issue14_min_activations() {
    let b = book(vec![entry(&["castle"], "C", json!({}))]);
    let chat = ["the castle", "a", "b"];
    assert!(act(&b, &chat, json!({})).is_empty());
    assert_eq!(act(&b, &chat, json!({"min_activations": 1})), [0]);
    assert_eq!(act(&b, &chat, json!({"minActivations": 1})), [0]);
    assert_eq!(bad(&b, json!({"min_activations": -1})), "bad-input");
}

#[test]
fn issue14_min_activations_depth_max() {
    let b = book(vec![entry(&["castle"], "C", json!({}))]);
    let chat = ["the castle", "a", "b", "c"];
    assert_eq!(act(&b, &chat, json!({"min_activations": 1})), [0]);
    let capped = json!({"minActivations": 1, "minActivationsDepthMax": 3});
    assert!(act(&b, &chat, capped).is_empty());
    let capped = json!({"min_activations": 1, "min_activations_depth_max": 4});
    assert_eq!(act(&b, &chat, capped), [0]);
}

#[test]
fn issue14_max_recursion_steps() {
    let b = book(vec![
        entry(&["castle"], "by the river", json!({})),
        entry(&["river"], "to the sea", json!({})),
    ]);
    let chat = ["the castle"];
    assert_eq!(act(&b, &chat, json!({"recursive": true})), [0, 1]);
    let one = json!({"recursive": true, "maxRecursionSteps": 1});
    assert_eq!(act(&b, &chat, one), [0]);
    let one = json!({"recursive": true, "max_recursion_steps": 1});
    assert_eq!(act(&b, &chat, one), [0]);
}

#[test]
fn issue14_budget() {
    let long = "word ".repeat(40);
    let b = book(vec![
        entry(&["castle"], &long, json!({})),
        entry(&["castle"], &long, json!({})),
    ]);
    let chat = ["the castle"];
    assert_eq!(act(&b, &chat, json!({})).len(), 2);
    assert_eq!(act(&b, &chat, json!({"budget": 60})).len(), 1);
    assert_eq!(bad(&b, json!({"budget": "60"})), "bad-input");
}

#[test]
fn issue14_budget_cap() {
    let long = "word ".repeat(40);
    let b = book(vec![
        entry(&["castle"], &long, json!({})),
        entry(&["castle"], &long, json!({})),
    ]);
    let chat = ["the castle"];
    assert_eq!(act(&b, &chat, json!({"budgetCap": 60})).len(), 1);
    assert_eq!(
        act(&b, &chat, json!({"budget": 1000, "budget_cap": 60})).len(),
        1
    );
}

#[test]
fn issue14_include_names() {
    let b = book(vec![entry(&["kazuma"], "K", json!({}))]);
    let chat = ["hello"];
    assert_eq!(act(&b, &chat, json!({})), [0]);
    assert!(act(&b, &chat, json!({"includeNames": false})).is_empty());
    assert!(act(&b, &chat, json!({"include_names": false})).is_empty());
    assert_eq!(bad(&b, json!({"include_names": "no"})), "bad-input");
}

#[test]
fn issue14_whole_words() {
    let b = book(vec![entry(&["cast"], "C", json!({}))]);
    let chat = ["the castle"];
    assert!(act(&b, &chat, json!({})).is_empty());
    assert_eq!(act(&b, &chat, json!({"wholeWords": false})), [0]);
    assert_eq!(act(&b, &chat, json!({"whole_words": false})), [0]);
}

#[test]
fn issue14_case_sensitive() {
    let b = book(vec![entry(&["Castle"], "C", json!({}))]);
    let chat = ["the castle"];
    assert_eq!(act(&b, &chat, json!({})), [0]);
    assert!(act(&b, &chat, json!({"caseSensitive": true})).is_empty());
    assert!(act(&b, &chat, json!({"case_sensitive": true})).is_empty());
}

#[test]
fn issue14_group_scoring() {
    let b = book(vec![
        entry(&["song", "sing", "ghosts"], "g1", json!({"group": "songs"})),
        entry(&["song", "sing", "cats"], "g2", json!({"group": "songs"})),
    ]);
    let chat = ["sing me a song about ghosts"];
    for seed in 0..8 {
        assert_eq!(
            act(&b, &chat, json!({"groupScoring": true, "seed": seed})),
            [0]
        );
        assert_eq!(
            act(&b, &chat, json!({"group_scoring": true, "seed": seed})),
            [0]
        );
    }
    let winners: std::collections::HashSet<Vec<u64>> = (0..16)
        .map(|seed| act(&b, &chat, json!({"seed": seed})))
        .collect();
    assert_eq!(winners.len(), 2);
}

#[test]
fn issue14_trigger() {
    let b = book(vec![
        entry(&["castle"], "C", json!({"triggers": ["continue"]})),
        entry(&["castle"], "A", json!({})),
    ]);
    let chat = ["the castle"];
    assert_eq!(act(&b, &chat, json!({})), [1]);
    assert_eq!(act(&b, &chat, json!({"trigger": "normal"})), [1]);
    assert_eq!(act(&b, &chat, json!({"trigger": "continue"})), [0, 1]);
    assert_eq!(bad(&b, json!({"trigger": "bogus"})), "bad-input");
    assert_eq!(bad(&b, json!({"trigger": 1})), "bad-input");
}

#[test]
fn issue14_build_prompt_takes_the_engine_settings() {
    let b = book(vec![entry(
        &["castle"],
        "CONTINUE-ONLY",
        json!({"triggers": ["continue"]}),
    )]);
    let card = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Aqua", "description": "", "personality": "", "scenario": "", "first_mes": "Hi",
        "mes_example": "", "creator_notes": "", "system_prompt": "",
        "post_history_instructions": "", "alternate_greetings": [], "tags": [], "creator": "",
        "character_version": "", "extensions": {}, "group_only_greetings": []}});
    let prompt = |req: Value| {
        let mut req = req;
        req["chat"] = msgs(&["the castle"]);
        build_prompt(Source::Json(&card), &[Source::Json(&b)], &req)
            .unwrap()
            .to_string()
    };
    assert!(!prompt(json!({})).contains("CONTINUE-ONLY"));
    assert!(prompt(json!({"trigger": "continue"})).contains("CONTINUE-ONLY"));
}

#[test]
fn issue14_persona() {
    // World Info doc, "Additional matching sources": Persona Description.
    let b = book(vec![entry(
        &["sword"],
        "P",
        json!({"match_persona_description": true}),
    )]);
    let chat = ["hello"];
    assert!(act(&b, &chat, json!({})).is_empty());
    assert_eq!(act(&b, &chat, json!({"persona": "Carries a sword."})), [0]);
    assert_eq!(bad(&b, json!({"persona": 3})), "bad-input");
}

#[test]
fn issue14_a_card_book_brings_its_character() {
    // World Info doc, "Character Filter" and "Additional matching sources": a book read from a
    // card's bytes scans with that card's names, tags and texts.
    let card = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
    "name": "Aqua", "description": "A goddess of water who lives in Axel.",
    "personality": "", "scenario": "", "first_mes": "Hi", "mes_example": "",
    "creator_notes": "", "system_prompt": "", "post_history_instructions": "",
    "alternate_greetings": [], "tags": ["goddess"], "creator": "", "character_version": "",
    "extensions": {}, "group_only_greetings": [],
    "character_book": {"entries": [
        entry(&["axel"], "DESC", json!({"match_character_description": true})),
        entry(&["hello"], "NOT-AQUA", json!({"character_filter": {"isExclude": true, "names": ["Aqua"]}})),
        entry(&["hello"], "GODDESS", json!({"character_filter": {"tags": ["goddess"]}})),
    ]}}});
    let bytes = card.to_string().into_bytes();
    let out = scan_lorebook(&[Source::Bytes(&bytes)], &json!({"chat": msgs(&["hello"])})).unwrap();
    let mut got: Vec<u64> = out["activated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["index"].as_u64().unwrap())
        .collect();
    got.sort_unstable();
    assert_eq!(got, [0, 2]);
}

#[test]
fn issue26_greeting_defaults_to_0_for_is_greeting() {
    // SPEC_V3 "`@@is_greeting`": the active greeting's index, 0 being `first_mes`; with no
    // `greeting` the scan takes greeting 0, as `ccv3 lore scan` and `build_prompt` do (issue 26
    // section 1: the scan ignored the decorator when no greeting was given).
    let b = book(vec![
        entry(&["tea"], "@@is_greeting 0\nFIRST", json!({})),
        entry(&["tea"], "@@is_greeting 1\nSECOND", json!({})),
    ]);
    assert_eq!(act(&b, &["tea?"], json!({})), [0]);
    assert_eq!(act(&b, &["tea?"], json!({"greeting": 1})), [1]);
    let mut compiled = ccv3_embed::CompiledBooks::new(&[Source::Json(&b)], &json!({})).unwrap();
    let out = compiled.scan(&json!({"chat": msgs(&["tea?"])})).unwrap();
    assert_eq!(out["activated"][0]["index"], 0);
    assert_eq!(out["activated"].as_array().map(Vec::len), Some(1));
}

/// Issue 28: the SillyTavern extension's inputs, as the npm package passes them (camelCase):
/// World Info objects named by their world, `bookKinds`, `stTimed` (SillyTavern's
/// `timedWorldInfo` records, `world-info.js` of 1.19.0 lines 594 and 605-610) and `stActivated`
/// (its activated set, `world.uid`, line 5075).
#[test]
fn sillytavern_inputs_book_kinds_timed_effects_and_activated_set() {
    let world = |name: &str, order: u32, extra: Value| {
        let mut e = json!({"uid": 1, "key": ["apple"], "content": name, "order": order,
                           "position": 0});
        for (k, v) in extra.as_object().unwrap() {
            e[k] = v.clone();
        }
        json!({"name": name, "entries": {"1": e}})
    };
    let g = world("g", 100, json!({"useProbability": true, "probability": 50}));
    let c = world("c", 10, json!({"sticky": 2}));
    let scan = |request: Value| {
        let out = scan_lorebook(&[Source::Json(&g), Source::Json(&c)], &request).unwrap();
        out["activated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                format!(
                    "{}:{}",
                    a["book"].as_str().unwrap(),
                    a["position"].as_str().unwrap()
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    };
    let base = json!({"compat": "sillytavern", "chat": msgs(&["x", "y", "z"]),
                      "bookKinds": ["global", "chat"]});
    // No key matches: c is sticky by SillyTavern's record, g is not.
    let mut r = base.clone();
    r["stTimed"] = json!({"sticky": {"c.1": {"hash": 1, "start": 2, "end": 4, "protected": false}},
                          "cooldown": {}});
    assert_eq!(scan(r), ["c:before_char"]);
    // Both match; g's roll is SillyTavern's: activated or not.
    let mut r = base.clone();
    r["chat"] = msgs(&["apple"]);
    r["stActivated"] = json!(["g.1", "c.1"]);
    assert_eq!(scan(r.clone()), ["c:before_char", "g:before_char"]);
    r["stActivated"] = json!({"c": [1]});
    assert_eq!(scan(r.clone()), ["c:before_char"]);
    // A kind that is not one.
    r["bookKinds"] = json!(["lore"]);
    assert!(scan_lorebook(&[Source::Json(&g)], &r).is_err());
}
