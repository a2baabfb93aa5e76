//! A bounded YAML loader: YAML text to a JSON value, for the YAML files other applications write
//! (text-generation-webui characters, [`crate::textgen`]).
//!
//! YAML is hostile input like everything else: the events come from `saphyr-parser` (no
//! recursion, no aliases expanded), and this loader builds the value with an explicit stack, so
//! that
//! - the text is at most [`Limits::max_len`] bytes,
//! - nesting is at most [`Limits::max_depth`] deep,
//! - the value holds at most [`Limits::max_nodes`] nodes and [`Limits::max_bytes`] bytes of
//!   text, **counting every copy an alias makes** (and the copy kept of each anchored node): the
//!   "billion laughs" file, nine aliases of nine aliases, stops at the budget instead of
//!   expanding to 10⁹ strings, and so do many aliases of one long string,
//! - only the first document of a stream is read.
//!
//! Scalars follow the YAML 1.2 core schema (what text-generation-webui's `yaml.safe_load` reads
//! for the files it writes): plain `null`/`~`/empty is null, `true`/`false` a boolean, decimal,
//! octal `0o`, hex `0x` integers and decimal floats numbers; quoted and block scalars are
//! strings. Mapping keys that are scalars become strings; a sequence or mapping used as a key
//! is an error.

use crate::error::{Error, Result};
use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// The bounds of [`from_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest text read, in bytes (default 8 MiB; character files are a few KB).
    pub max_len: usize,
    /// The deepest nesting of sequences and mappings (default 64).
    pub max_depth: usize,
    /// The most nodes in the value, copies made by aliases included (default 200,000).
    pub max_nodes: usize,
    /// The most bytes of text (scalars and keys) in the value, copies made by aliases and kept
    /// for anchors included (default 64 MiB).
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_len: 8 << 20,
            max_depth: 64,
            max_nodes: 200_000,
            max_bytes: 64 << 20,
        }
    }
}

/// A sequence or mapping being built.
enum Open {
    Seq(Vec<Value>, usize),
    Map(Map<String, Value>, Option<String>, usize),
}

/// Reads the first YAML document of `text` as a JSON value (see the module docs).
///
/// ```
/// let v = ccv3::yaml::from_str("name: A\ngreeting: |-\n  Hi\n  there\nn: 3\n", &Default::default())?;
/// assert_eq!(v["greeting"], "Hi\nthere");
/// assert_eq!(v["n"], 3);
/// # Ok::<(), ccv3::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Format`] for text that is not YAML (with its line and column) or a non-scalar key;
/// [`Error::Limit`] when a bound of `limits` is passed.
pub fn from_str(text: &str, limits: &Limits) -> Result<Value> {
    if text.len() > limits.max_len {
        return Err(Error::Limit(format!(
            "YAML text of {} bytes is over the limit of {} bytes",
            text.len(),
            limits.max_len
        )));
    }
    let mut anchors: HashMap<usize, Value> = HashMap::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut nodes = 0usize;
    let mut bytes = 0usize;
    let mut root: Option<Value> = None;
    let too_many = || {
        Error::Limit(format!(
            "YAML document holds more than {} nodes or {} bytes of text (aliases counted as the \
             copies they make)",
            limits.max_nodes, limits.max_bytes
        ))
    };
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| {
            let place = format!(
                "line {}, column {}",
                e.marker().line(),
                e.marker().col() + 1
            );
            if e.info().contains("recursion limit") {
                // The parser's own bound on nesting.
                Error::Limit(format!("YAML nested too deep at {place}"))
            } else {
                Error::format(place, format!("not valid YAML: {}", e.info()))
            }
        })?;
        let (value, anchor) = match event {
            Event::DocumentEnd if root.is_some() => break,
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd => continue,
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= limits.max_depth {
                    return Err(Error::Limit(format!(
                        "YAML nesting deeper than {} levels (line {})",
                        limits.max_depth,
                        span.start.line()
                    )));
                }
                nodes += 1;
                if nodes > limits.max_nodes {
                    return Err(too_many());
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Open::Seq(Vec::new(), anchor)
                } else {
                    Open::Map(Map::new(), None, anchor)
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Seq(items, anchor)) => (Value::Array(items), anchor),
                Some(Open::Map(map, _, anchor)) => (Value::Object(map), anchor),
                None => continue,
            },
            Event::Scalar(text, style, anchor, tag) => {
                nodes += 1;
                bytes = bytes.saturating_add(text.len());
                if nodes > limits.max_nodes || bytes > limits.max_bytes {
                    return Err(too_many());
                }
                let plain = style == ScalarStyle::Plain && tag.is_none();
                (scalar(&text, plain), anchor)
            }
            Event::Alias(id) => {
                let Some(v) = anchors.get(&id) else {
                    return Err(Error::format(
                        format!("line {}", span.start.line()),
                        "YAML alias to an unknown anchor",
                    ));
                };
                let (n, b) = weigh(v, limits);
                nodes = nodes.saturating_add(n);
                bytes = bytes.saturating_add(b);
                if nodes > limits.max_nodes || bytes > limits.max_bytes {
                    return Err(too_many());
                }
                (v.clone(), 0)
            }
        };
        if anchor != 0 {
            // The copy kept for later aliases costs what it holds.
            let (n, b) = weigh(&value, limits);
            nodes = nodes.saturating_add(n);
            bytes = bytes.saturating_add(b);
            if nodes > limits.max_nodes || bytes > limits.max_bytes {
                return Err(too_many());
            }
            anchors.insert(anchor, value.clone());
        }
        match stack.last_mut() {
            None => root = Some(value),
            Some(Open::Seq(items, _)) => items.push(value),
            Some(Open::Map(map, key, _)) => match key.take() {
                None => {
                    *key =
                        Some(match value {
                            Value::String(s) => s,
                            Value::Null => String::new(),
                            Value::Bool(_) | Value::Number(_) => value.to_string(),
                            _ => return Err(Error::format(
                                format!("line {}", span.start.line()),
                                "a YAML sequence or mapping used as a key; keys must be scalars",
                            )),
                        })
                }
                Some(k) => {
                    map.insert(k, value);
                }
            },
        }
    }
    Ok(root.unwrap_or(Value::Null))
}

/// The nodes of `v` and the bytes of its text (strings and keys), counting no further than
/// past the budgets of `limits`.
fn weigh(v: &Value, limits: &Limits) -> (usize, usize) {
    let (mut n, mut b) = (0usize, 0usize);
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        n += 1;
        if n > limits.max_nodes || b > limits.max_bytes {
            break;
        }
        match v {
            Value::Array(items) => todo.extend(items),
            Value::Object(map) => {
                b = b.saturating_add(map.keys().map(String::len).sum());
                todo.extend(map.values());
            }
            Value::String(s) => b = b.saturating_add(s.len()),
            _ => {}
        }
    }
    (n, b)
}

/// A scalar as the core schema reads it: plain scalars may be null, booleans or numbers.
fn scalar(text: &str, plain: bool) -> Value {
    if !plain {
        return Value::String(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let int = if let Some(hex) = text.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else if let Some(oct) = text.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()
    } else if text
        .trim_start_matches(['-', '+'])
        .bytes()
        .all(|b| b.is_ascii_digit())
    {
        text.parse::<i64>().ok()
    } else {
        None
    };
    if let Some(n) = int {
        return Value::Number(n.into());
    }
    let floaty = text
        .bytes()
        .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
        && text.bytes().any(|b| b.is_ascii_digit());
    if floaty {
        if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Value> {
        from_str(text, &Limits::default())
    }

    #[test]
    fn yaml_reads_textgen_shapes_and_core_schema_scalars() {
        // text-generation-webui writes `yaml.dump(..., sort_keys=False)`: block scalars for
        // multi-line text (characters/Example.yaml, modules/chat.py generate_character_yaml).
        let v = read(
            "name: Chiharu\ngreeting: |-\n  *Hi*\n  there\ncontext: \"A {{char}}: robot\"\n\
             n: 12\nf: 1.5\nb: true\nz: ~\nlist: [a, 'b', 0x10]\n",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"name": "Chiharu", "greeting": "*Hi*\nthere", "context": "A {{char}}: robot",
                   "n": 12, "f": 1.5, "b": true, "z": null, "list": ["a", "b", 16]})
        );
        assert_eq!(read("'007'").unwrap(), json!("007"));
        assert_eq!(read("").unwrap(), Value::Null);
        assert_eq!(read("a: 1\n---\nb: 2\n").unwrap(), json!({"a": 1}));
    }

    #[test]
    fn yaml_hostile_billion_laughs_stops_at_the_node_budget() {
        let mut text = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
            .iter()
            .zip(["b", "c", "d", "e", "f", "g", "h", "i", "j"])
        {
            let refs = vec![format!("*{prev}"); 9].join(",");
            text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        let err = read(&text).unwrap_err();
        assert!(matches!(err, Error::Limit(_)), "{err}");
        assert!(err.to_string().contains("aliases"), "{err}");
    }

    #[test]
    fn yaml_hostile_aliases_of_a_long_string_stop_at_the_byte_budget() {
        let long = "x".repeat(1 << 20);
        let refs = vec!["*s"; 100].join(", ");
        let text = format!("s: &s {long}\nlist: [{refs}]\n");
        let err = read(&text).unwrap_err();
        assert!(matches!(err, Error::Limit(_)), "{err}");
        // A few copies are fine.
        let text = format!("s: &s {long}\nlist: [*s, *s]\n");
        assert_eq!(
            read(&text).unwrap()["list"][1].as_str().map(str::len),
            Some(1 << 20)
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn yaml_random_text_never_panics(text in "[-a-z:&*\\[\\]{}, \n'\"!|>#~0-9]{0,200}") {
            let _ = read(&text);
        }
    }

    #[test]
    fn yaml_hostile_depth_size_and_broken_text_are_errors() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let err = read(&deep).unwrap_err();
        assert!(matches!(err, Error::Limit(_)), "{err}");
        // Unclosed: an error too, whichever comes first.
        assert!(read(&"[".repeat(100_000)).is_err());
        let limits = Limits {
            max_len: 10,
            ..Limits::default()
        };
        assert!(matches!(
            from_str("name: a long name", &limits),
            Err(Error::Limit(_))
        ));
        let err = read("a: [1, 2\nb: {").unwrap_err();
        assert!(err.to_string().contains("not valid YAML"), "{err}");
        assert!(read("? [a]\n: 1\n").is_err());
        assert!(read("a: *nowhere\n").is_err());
    }
}
