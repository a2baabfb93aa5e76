//! Static analysis (issue 27): lint, the recursion graph and portability, as `ccv3 lint --json`,
//! `ccv3 lore graph --json` and `ccv3 portability --json` print them. The findings are
//! [`ccv3_analyze`]'s; this module reads the input and the options.

use crate::cards::{
    book_file_from_value, card_from_text, card_from_value, read_book_and_card, read_document,
};
use crate::encoding::tokenizer;
use crate::opts::{self, get};
use crate::{EmbedError, Source};
use ccv3::{CardFile, Container, Document, Lorebook};
use ccv3_analyze::{App, LintOptions};
use serde_json::Value;

/// An application id option (`spec`, `sillytavern`, `risuai`, `agnai`, `v2`; also `st`, `risu`).
fn app(v: &Value, name: &str) -> Result<App, EmbedError> {
    let s = v
        .as_str()
        .ok_or_else(|| opts::wrong(name, "an application id", v))?;
    App::parse(s).ok_or_else(|| {
        EmbedError::bad_input(format!(
            "option {name}: unknown application {s:?} (spec, sillytavern, risuai, agnai or v2)"
        ))
    })
}

/// `app`, `budget`, `max_context` and `budget_cap` of `options`, as `ccv3 lint` reads its flags.
fn lint_options(options: Option<&Value>) -> Result<LintOptions, EmbedError> {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let defaults = LintOptions::default();
    Ok(LintOptions {
        app: get(options, "app").map(|v| app(v, "app")).transpose()?,
        budget: opts::count(options, "budget")?.map(size),
        max_context: opts::count(options, "max_context")?.map_or(defaults.max_context, size),
        budget_cap: opts::count(options, "budget_cap")?.map(size),
    })
}

/// Serialises findings or a graph.
fn to_value(v: &impl serde::Serialize) -> Result<Value, EmbedError> {
    serde_json::to_value(v).map_err(|e| EmbedError::write_failed(e.to_string()))
}

/// The document of a source; a JSON value is a lorebook when it looks like one, else a card.
fn document(input: Source<'_>) -> Result<Document, EmbedError> {
    match input {
        Source::Bytes(b) => read_document(b),
        Source::Json(v) if ccv3::lorebook::looks_like_lorebook(v) => {
            Ok(Document::Lorebook(book_file_from_value(v)?))
        }
        Source::Json(v) => {
            let (card, diagnostics) = card_from_value(v)?;
            Ok(Document::Card(CardFile {
                card,
                container: Container::Json,
                files: Vec::new(),
                image: None,
                diagnostics,
            }))
        }
    }
}

/// Lints a card (file bytes or a card object): its lorebook and the macros and decorators of
/// its text, as `ccv3 lint --json` (`[{severity, code, path, entry, message, budget?}]`).
///
/// `options` (all optional): `app` (the target application: `spec`, `sillytavern`, `risuai`,
/// `agnai`; default the card's own where it can be told, else `spec`), `tokenizer` (`o200k`,
/// the default, `cl100k` or `estimate`), `budget`, `max_context` (default 8192) and `budget_cap`
/// (tokens, as `ccv3 lint --budget`, `--max-context`, `--budget-cap`).
///
/// ```
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "description": "{{nosuchmacro}}"}});
/// let found = ccv3_embed::lint_card(ccv3_embed::Source::Json(&card),
///     &serde_json::json!({"tokenizer": "estimate"}))?;
/// assert_eq!(found[0]["code"], "cbs-unknown-macro");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
///
/// # Errors
/// `bad-input` for a value that is not a card or an option of the wrong type or value;
/// `read-failed` for bytes that are not a card (a lorebook included); `limit`;
/// `tokenizer-unavailable`.
pub fn lint_card(input: Source<'_>, options: &Value) -> Result<Value, EmbedError> {
    let options = opts::object(options, "the options")?;
    let lint = lint_options(options)?;
    let card = match input {
        Source::Bytes(b) => match read_document(b)? {
            Document::Card(cf) => cf.card,
            Document::Lorebook(_) => {
                return Err(EmbedError::read_failed(
                    "the file is a lorebook, not a character card (use lint_lorebook)",
                ))
            }
        },
        Source::Json(v) => card_from_value(v)?.0,
    };
    let tok = tokenizer(opts::string(options, "tokenizer")?)?;
    to_value(&ccv3_analyze::lint_card(&card, &lint, &*tok))
}

/// [`lint_card`] of a card object given as its JSON text, with the findings as JSON text (what
/// the npm and Python packages send and get back for an object): the same findings as
/// `lint_card(Source::Json(&parsed), options)`, written compact. Faster when linting as the
/// user types: a well-formed card (as [`read_card`] returns it, `decorators` lists included) is
/// read from the text straight into the card model, and the findings are written straight to
/// text, with no `serde_json::Value` built, copied and freed on either side. Options as
/// [`lint_card`].
///
/// ```
/// let card = r#"{"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "description": "{{nosuchmacro}}"}}"#;
/// let options = serde_json::json!({"tokenizer": "estimate"});
/// let found = ccv3_embed::lint_card_json(card, &options)?;
/// assert!(found.starts_with(r#"[{"severity":"warning","code":"cbs-unknown-macro""#));
/// let parsed: serde_json::Value = serde_json::from_str(card).unwrap();
/// let value = ccv3_embed::lint_card(ccv3_embed::Source::Json(&parsed), &options)?;
/// assert_eq!(found, serde_json::to_string(&value).unwrap());
/// assert_eq!(ccv3_embed::lint_card_json("{", &options).unwrap_err().code, "bad-input");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
///
/// [`read_card`]: crate::read_card
///
/// # Errors
/// As [`lint_card`] for a value; `bad-input` for text that is not JSON.
pub fn lint_card_json(text: &str, options: &Value) -> Result<String, EmbedError> {
    let options = opts::object(options, "the options")?;
    let lint = lint_options(options)?;
    let card = card_from_text(text)?.0;
    let tok = tokenizer(opts::string(options, "tokenizer")?)?;
    serde_json::to_string(&ccv3_analyze::lint_card(&card, &lint, &*tok))
        .map_err(|e| EmbedError::write_failed(e.to_string()))
}

/// Lints a lorebook (file bytes or a lorebook object) as `ccv3 lint --json`; paths start at
/// `data`. A World Info, RisuAI or Agnai file targets its application unless `app` is given.
/// Options as [`lint_card`].
///
/// # Errors
/// As [`lint_card`]; `read-failed` for bytes that are a card (use [`lint_card`]).
///
/// ```
/// let book = serde_json::json!({"spec": "lorebook_v3", "data": {"entries": [
///     {"keys": [], "content": "Never seen.", "enabled": true, "insertion_order": 0}]}});
/// let found = ccv3_embed::lint_lorebook(ccv3_embed::Source::Json(&book),
///     &serde_json::json!({"tokenizer": "estimate"}))?;
/// assert!(found.as_array().unwrap().iter().any(|f| f["code"] == "lore-entry-no-keys"));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn lint_lorebook(input: Source<'_>, options: &Value) -> Result<Value, EmbedError> {
    let options = opts::object(options, "the options")?;
    let lint = lint_options(options)?;
    let doc = match input {
        Source::Bytes(b) => match read_document(b)? {
            Document::Card(_) => {
                return Err(EmbedError::read_failed(
                    "the file is a character card, not a lorebook (use lint_card)",
                ))
            }
            doc => doc,
        },
        Source::Json(v) => Document::Lorebook(book_file_from_value(v)?),
    };
    let tok = tokenizer(opts::string(options, "tokenizer")?)?;
    to_value(&ccv3_analyze::lint_document(&doc, &lint, &*tok))
}

/// The recursion graph of a lorebook or of a card's book (file bytes or an object), as
/// `ccv3 lore graph --json`: `{nodes: [{entry, name, constant, enabled}], edges: [{from, to,
/// key}], truncated?}`. `options` takes no keys yet (an object or nothing).
///
/// # Errors
/// `read-failed` for bytes that are neither, or a card without a `character_book`;
/// `bad-input` likewise for values; `limit`.
///
/// ```
/// let book = serde_json::json!({"spec": "lorebook_v3", "data": {"entries": [
///     {"keys": ["castle"], "content": "The castle has a dragon.", "enabled": true, "insertion_order": 0},
///     {"keys": ["dragon"], "content": "The dragon sleeps.", "enabled": true, "insertion_order": 1}]}});
/// let graph = ccv3_embed::lore_graph(ccv3_embed::Source::Json(&book), &serde_json::Value::Null)?;
/// assert_eq!(graph["edges"][0], serde_json::json!({"from": 0, "to": 1, "key": "dragon"}));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn lore_graph(input: Source<'_>, options: &Value) -> Result<Value, EmbedError> {
    opts::object(options, "the options")?;
    let book: Lorebook = match input {
        Source::Bytes(b) => read_book_and_card(b)?.0,
        Source::Json(v) => match document(Source::Json(v))? {
            Document::Lorebook(bf) => bf.book,
            Document::Card(cf) => cf
                .card
                .data
                .character_book
                .ok_or_else(|| EmbedError::bad_input("the card has no character_book"))?,
        },
    };
    to_value(&ccv3_analyze::lore_graph(&book))
}

/// What SillyTavern, RisuAI, Agnai and any V2 reader do with a card or lorebook (file bytes or
/// an object), as `ccv3 portability --json`: `[{app, severity, code, path, entry, message}]`.
/// `options.apps`: the application ids to report on (default all four).
///
/// # Errors
/// `read-failed` for bytes that are neither a card nor a lorebook; `bad-input` for such a value
/// or an unknown application; `limit`.
///
/// ```
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "nickname": "Em"}});
/// let found = ccv3_embed::portability(ccv3_embed::Source::Json(&card),
///     &serde_json::json!({"apps": ["v2"]}))?;
/// // A V2 reader has no `nickname`.
/// assert!(found.as_array().unwrap().iter().all(|f| f["app"] == "v2"));
/// assert!(found.as_array().unwrap().iter().any(|f| f["code"] == "v3-field-dropped"
///     && f["path"] == "data.nickname"));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn portability(input: Source<'_>, options: &Value) -> Result<Value, EmbedError> {
    let options = opts::object(options, "the options")?;
    let apps = match get(options, "apps") {
        None => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, v)| app(v, &format!("apps[{i}]")))
            .collect::<Result<_, _>>()?,
        Some(v @ Value::String(_)) => vec![app(v, "apps")?],
        Some(other) => return Err(opts::wrong("apps", "a list of application ids", other)),
    };
    let doc = document(input)?;
    to_value(&ccv3_analyze::portability(&doc, &apps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A card whose book has a one-letter key and an entry only a recursion step reaches.
    fn card() -> Value {
        json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
            "name": "Ember", "description": "{{char}} {{nosuchmacro}}",
            "character_book": {"entries": [
                {"keys": ["fire"], "content": "Ember likes the forge.", "enabled": true,
                 "insertion_order": 0},
                {"keys": ["forge"], "content": "The forge is hot.", "enabled": true,
                 "insertion_order": 1},
                {"keys": ["x"], "content": "X.", "enabled": true, "insertion_order": 2}]}}})
    }

    fn est() -> Value {
        json!({"tokenizer": "estimate"})
    }

    /// Issue 27 (lint as the user types): the object's text in, the findings' text out, the same
    /// findings as `lint_card` of the object, for the example cards as `read_card` returns them
    /// (with and without `decorators` lists) and for every target application.
    #[test]
    fn lint_card_json_gives_lint_card_findings() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
        for file in ["ember.json", "ember.png", "ember.charx"] {
            let bytes = std::fs::read(format!("{dir}{file}")).unwrap();
            for parse_decorators in [true, false] {
                let read = crate::ReadOptions { parse_decorators };
                let v = crate::read_card(&bytes, &read).unwrap();
                let text = serde_json::to_string(&v).unwrap();
                for app in ["spec", "sillytavern", "risuai", "agnai"] {
                    let o = json!({"tokenizer": "estimate", "app": app});
                    let want = lint_card(Source::Json(&v), &o).unwrap();
                    assert!(!want.as_array().unwrap().is_empty());
                    let got = lint_card_json(&text, &o).unwrap();
                    assert_eq!(got, serde_json::to_string(&want).unwrap(), "{file} {app}");
                }
            }
        }
        let o = json!({"tokenizer": "nope"});
        assert_eq!(lint_card_json("{}", &o).unwrap_err().code, "bad-input");
        assert_eq!(lint_card_json("[]", &est()).unwrap_err().code, "bad-input");
    }

    #[test]
    fn lint_card_gives_the_cli_findings() {
        // The same call as `ccv3 lint` (crates/ccv3-cli/src/cmd/lint.rs): lint_document.
        let v = card();
        let found = lint_card(Source::Json(&v), &est()).unwrap();
        let (c, _) = card_from_value(&v).unwrap();
        let want = ccv3_analyze::lint_card(&c, &LintOptions::default(), &ccv3_tokens::Estimate);
        assert_eq!(found, serde_json::to_value(&want).unwrap());
        let codes: Vec<&str> = found
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&"cbs-unknown-macro"), "{codes:?}");
        assert!(codes.contains(&"lore-key-too-broad"), "{codes:?}");
        let plan = found
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "lore-budget-plan")
            .unwrap();
        assert_eq!(plan["budget"]["limit"], 8192 / 4);
    }

    #[test]
    fn budget_options_reach_the_plan() {
        let v = card();
        let o = json!({"tokenizer": "estimate", "maxContext": 4000, "budget_cap": 100});
        let found = lint_card(Source::Json(&v), &o).unwrap();
        let plan = found
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "lore-budget-plan")
            .unwrap();
        assert_eq!(plan["budget"]["limit"], 100);
        let o = json!({"tokenizer": "estimate", "budget": 50});
        let found = lint_card(Source::Json(&v), &o).unwrap();
        let plan = found
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "lore-budget-plan")
            .unwrap();
        assert_eq!(plan["budget"]["limit"], 50);
    }

    #[test]
    fn bytes_and_values_agree() {
        let v = card();
        let bytes = serde_json::to_vec(&v).unwrap();
        assert_eq!(
            lint_card(Source::Bytes(&bytes), &est()).unwrap(),
            lint_card(Source::Json(&v), &est()).unwrap()
        );
        assert_eq!(
            lore_graph(Source::Bytes(&bytes), &Value::Null).unwrap(),
            lore_graph(Source::Json(&v), &Value::Null).unwrap()
        );
        assert_eq!(
            portability(Source::Bytes(&bytes), &Value::Null).unwrap(),
            portability(Source::Json(&v), &Value::Null).unwrap()
        );
    }

    #[test]
    fn lint_lorebook_reads_books_and_refuses_cards() {
        let v = card();
        let book = v["data"]["character_book"].clone();
        let found = lint_lorebook(Source::Json(&book), &est()).unwrap();
        assert!(found
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["path"].as_str().unwrap().starts_with("data")));
        let bytes = serde_json::to_vec(&v).unwrap();
        assert_eq!(
            lint_lorebook(Source::Bytes(&bytes), &est())
                .unwrap_err()
                .code,
            "read-failed"
        );
        let wi = serde_json::to_vec(&json!({"entries": {"0": {"uid": 0, "key": ["a"],
            "content": "A."}}}))
        .unwrap();
        assert_eq!(
            lint_card(Source::Bytes(&wi), &est()).unwrap_err().code,
            "read-failed"
        );
    }

    #[test]
    fn graph_has_the_recursion_edge() {
        // Entry 0's content holds "forge", a key of entry 1 (issue 27: lore graph).
        let g = lore_graph(Source::Json(&card()), &json!({})).unwrap();
        assert_eq!(g["nodes"].as_array().unwrap().len(), 3);
        assert_eq!(g["edges"], json!([{"from": 0, "to": 1, "key": "forge"}]));
        let bare = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "A"}});
        assert_eq!(
            lore_graph(Source::Json(&bare), &Value::Null)
                .unwrap_err()
                .code,
            "bad-input"
        );
    }

    #[test]
    fn portability_filters_apps() {
        let v = card();
        let all = portability(Source::Json(&v), &Value::Null).unwrap();
        let st = portability(Source::Json(&v), &json!({"apps": ["st"]})).unwrap();
        assert!(st
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["app"] == "sillytavern"));
        assert!(all.as_array().unwrap().len() >= st.as_array().unwrap().len());
    }

    #[test]
    fn bad_options_are_bad_input() {
        let v = card();
        for o in [
            json!({"app": "nope"}),
            json!({"app": 3}),
            json!({"budget": -1}),
            json!({"maxContext": "big"}),
            json!({"tokenizer": "nope"}),
            json!([1]),
        ] {
            assert_eq!(
                lint_card(Source::Json(&v), &o).unwrap_err().code,
                "bad-input",
                "{o}"
            );
        }
        assert_eq!(
            portability(Source::Json(&v), &json!({"apps": ["nope"]}))
                .unwrap_err()
                .code,
            "bad-input"
        );
        assert_eq!(
            portability(Source::Bytes(b"not a card"), &Value::Null)
                .unwrap_err()
                .code,
            "read-failed"
        );
    }
}
