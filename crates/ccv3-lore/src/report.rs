//! A scan's result as data that serialises to the `ccv3 lore scan --json` document.
//!
//! ```text
//! {"activated":[{"book":B,"index":I,"name":N,"content":C,"position":P,"depth":D,"role":R,"reason":S}],
//!  "rejected":[{"book":B,"index":I,"name":N,"reason":S}],
//!  "tokens":T}
//! ```
//! `activated` is in prompt order; an item whose entry wrote no position (it went `after_char`
//! by default, as SillyTavern's card import places it) also has `"position_default":true` after
//! `position`; `B` is the book's display name, `I` the entry's place in its
//! book's entries as read; `content` has its decorators removed; `depth` and `role` are `null`
//! unless the entry goes in the chat at a depth (or has `@@role`); `reason` is the explanation
//! in words (`key "dragon" in message 3`, `constant`, `sticky`, `decorator @@activate`, ...).
//! `rejected` lists the other entries (every entry when the scan explained all of them), in book
//! order, with the rule that stopped it (`disabled`, `no keys`, `no key matched`,
//! `secondary logic AND_ANY`, `scan depth (...)`, `decorator @@is_greeting`,
//! `probability roll ...`, `group ...`, `cooldown`, `delay`, `budget (...)`, `empty content`,
//! `regex-budget` (a regex key ran out of steps), ...).
//!
//! The items borrow from the scan result and the book names: building a report copies no text,
//! and `serde_json::to_writer` streams it.

use crate::position::Position;
use crate::scan::{ActivationReason, RejectReason, ScanResult};
use ccv3::decorator::DecoratorRole;
use serde::{Serialize, Serializer};
use std::fmt::Display;

/// The `ccv3 lore scan --json` document of one scan (see the module docs).
///
/// ```
/// use ccv3_lore::{ScanReport, ScanResult};
/// let result = ScanResult {
///     activated: vec![], rejected: vec![], unchecked: 0, tokens: 0,
///     state: Default::default(), disabled_ui_prompts: vec![], diagnostics: vec![],
/// };
/// let report = ScanReport::new(&result, &[]);
/// assert_eq!(serde_json::to_string(&report)?, r#"{"activated":[],"rejected":[],"tokens":0}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanReport<'r> {
    /// The activated entries, in prompt order.
    pub activated: Vec<ActivatedItem<'r>>,
    /// The entries that were not activated, in book order, with the rule that stopped them.
    pub rejected: Vec<RejectedItem<'r>>,
    /// Tokens of all activated contents.
    pub tokens: usize,
}

/// One activated entry of a [`ScanReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActivatedItem<'r> {
    /// The book's display name.
    pub book: &'r str,
    /// The entry's place in its book's entries as read.
    pub index: usize,
    /// The entry's `name`, else its `comment`.
    pub name: Option<&'r str>,
    /// The content without decorators.
    pub content: &'r str,
    /// Where it goes (`before_char`, `after_char`, `at_depth`, an `@@position` value, ...).
    #[serde(serialize_with = "position_str")]
    pub position: &'r Position,
    /// `true` when the entry wrote no position and went `after_char` by default
    /// ([`crate::Activation::position_default`]); left out of the JSON when false.
    #[serde(skip_serializing_if = "is_false")]
    pub position_default: bool,
    /// The depth of an entry that goes in the chat.
    pub depth: Option<u64>,
    /// Its role (`system`, `user`, `assistant`), for entries in the chat or with `@@role`.
    #[serde(serialize_with = "role_str")]
    pub role: Option<DecoratorRole>,
    /// Why it was activated, in words.
    #[serde(serialize_with = "words")]
    pub reason: &'r ActivationReason,
    /// The scan step (pass) that activated it, 0 the first, recursion steps after: in the
    /// report only when asked for ([`ScanReport::with_steps`], the bindings' scan result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
}

/// One entry of a [`ScanReport`] that was not activated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RejectedItem<'r> {
    /// The book's display name.
    pub book: &'r str,
    /// The entry's place in its book's entries as read.
    pub index: usize,
    /// The entry's `name`, else its `comment`.
    pub name: Option<&'r str>,
    /// The rule that stopped it, in words.
    #[serde(serialize_with = "words")]
    pub reason: &'r RejectReason,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn position_str<S: Serializer>(p: &&Position, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.as_str())
}

fn role_str<S: Serializer>(r: &Option<DecoratorRole>, s: S) -> Result<S::Ok, S::Error> {
    match r {
        Some(r) => s.serialize_str(r.as_str()),
        None => s.serialize_none(),
    }
}

fn words<S: Serializer, T: Display>(r: &&T, s: S) -> Result<S::Ok, S::Error> {
    use std::fmt::Write;
    // Written into a buffer on the stack, then escaped as one string: a reason is made of
    // several pieces, and escaping each piece on its own is slower (50,000 reasons in a big
    // scan). A reason too long for the buffer (a long key) is escaped piece by piece.
    let mut buf = StackText::default();
    match write!(buf, "{r}") {
        Ok(()) => s.serialize_str(buf.as_str()),
        Err(_) => s.collect_str(*r),
    }
}

/// A short text written on the stack (no allocation, no state kept between calls).
struct StackText {
    bytes: [u8; 256],
    len: usize,
}

impl Default for StackText {
    fn default() -> Self {
        StackText {
            bytes: [0; 256],
            len: 0,
        }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `str`s are ever copied in, so the bytes are UTF-8.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl<'r> ScanReport<'r> {
    /// The report of `result`; `books` are the display names of the books in the order they
    /// were compiled (an entry of a book without a name gets `""`).
    pub fn new(result: &'r ScanResult<'_>, books: &'r [String]) -> ScanReport<'r> {
        let book = |b: usize| books.get(b).map_or("", String::as_str);
        ScanReport {
            activated: result
                .activated
                .iter()
                .map(|a| ActivatedItem {
                    book: book(a.entry.book),
                    index: a.entry.index,
                    name: a.name,
                    content: a.content,
                    position: &a.position,
                    position_default: a.position_default,
                    depth: a.depth,
                    role: a.role,
                    reason: &a.reason,
                    step: None,
                })
                .collect(),
            rejected: result
                .rejected
                .iter()
                .map(|r| RejectedItem {
                    book: book(r.entry.book),
                    index: r.entry.index,
                    name: r.name,
                    reason: &r.reason,
                })
                .collect(),
            tokens: result.tokens,
        }
    }

    /// The report with each activated item's scan step (`"step"` after `reason`), from the
    /// same `result` it was made of.
    pub fn with_steps(mut self, result: &ScanResult<'_>) -> ScanReport<'r> {
        for (item, a) in self.activated.iter_mut().zip(&result.activated) {
            item.step = Some(a.pass);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Chat, Message};
    use crate::{BookInput, BookKind, LorebookCompiler, ScanOptions};
    use serde_json::{json, Value};

    fn book(entries: Value) -> ccv3::Lorebook {
        let mut d = Vec::new();
        ccv3::Lorebook::from_json(json!({ "entries": entries }), "", false, &mut d).expect("book")
    }

    fn entry(keys: &[&str], content: &str) -> Value {
        json!({"keys": keys, "content": content, "extensions": {}, "enabled": true, "insertion_order": 100, "use_regex": false})
    }

    /// The `ccv3 lore scan --json` shape (README, `ccv3 lore scan`).
    #[test]
    fn report_serialises_to_the_lore_scan_json_shape() {
        let mut named = entry(&["a"], "@@depth 2\nSay \"hi\"\t\u{1}é");
        named["name"] = json!("Ünï \"q\"");
        let mut off = entry(&["b"], "off");
        off["enabled"] = json!(false);
        let b = book(json!([named, entry(&["a"], ""), entry(&["zz"], "Z"), off]));
        let books = [BookInput {
            book: &b,
            kind: BookKind::Character,
            name: "card \"1\".json".into(),
            world_info: false,
        }];
        let compiled = LorebookCompiler::new()
            .names("Aqua", "Kazuma")
            .for_single_scan(true)
            .compile(&books);
        let opts = ScanOptions {
            seed: 1,
            explain_all: true,
            ..Default::default()
        };
        let chat = Chat::from(vec![Message::user("a b")]);
        let result = compiled.scan(&chat, &Default::default(), &opts, &ccv3_tokens::Estimate);
        let names = vec!["card \"1\".json".to_string()];
        let report = ScanReport::new(&result, &names);
        let text = serde_json::to_string(&report).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let a = &v["activated"][0];
        let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["book", "index", "name", "content", "position", "depth", "role", "reason"]
        );
        assert_eq!(a["book"], "card \"1\".json");
        assert_eq!(a["name"], "Ünï \"q\"");
        assert_eq!(a["content"], "Say \"hi\"\t\u{1}é");
        assert_eq!(a["position"], "at_depth");
        assert_eq!(a["depth"], 2);
        assert_eq!(a["role"], "system");
        assert_eq!(a["reason"], "key \"a\" in message 0");
        let reasons: Vec<&str> = v["rejected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["reason"].as_str().unwrap())
            .collect();
        assert_eq!(reasons, ["empty content", "no key matched", "disabled"]);
        let r = v["rejected"][0].as_object().unwrap();
        let keys: Vec<&str> = r.keys().map(String::as_str).collect();
        assert_eq!(keys, ["book", "index", "name", "reason"]);
        assert_eq!(v["rejected"][0]["name"], Value::Null);
        assert_eq!(v["tokens"], result.tokens);
        // The text is the tree's compact form (one encoder of the contract).
        assert_eq!(text, v.to_string());
    }
}
