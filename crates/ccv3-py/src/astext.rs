//! A card that stands as the model keeps it ([`ccv3_embed::AsIsCard`], issue 29), built as
//! Python objects straight from its JSON text in one pass: no model read, no walk, no tape.
//! The library decided the card is read as it stands and checked the whole text with the
//! reader's JSON parser, so this builder only has to make the objects that parser's values
//! stand for: `dict` (keys in the text's order, a key twice keeping its first place and its last
//! value, as `serde_json`'s ordered map and `dict` both do), `list`, `str`, `int` (what fits 64
//! bits, as `serde_json` reads it), `float` (any other number, correctly rounded), `bool`,
//! `None`. Keys are made once per card and shared, strings without escapes are made from their
//! slice of the text. Text it does not expect is an error, never a panic.

use crate::ser::GcPause;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use rustc_hash::FxHashMap;

/// Containers nested deeper than this are an error (the reader's parser stops at 128).
const MAX_DEPTH: usize = 256;

/// The card's objects: what `json.loads` of the card [`ccv3_embed::read_card_json`] writes
/// gives for the same file.
pub(crate) fn to_py<'py>(
    py: Python<'py>,
    card: &ccv3_embed::AsIsCard,
) -> PyResult<Bound<'py, PyAny>> {
    let _paused = GcPause::new(py)?;
    let mut b = Builder {
        py,
        text: &card.text,
        at: 0,
        keys: FxHashMap::default(),
        last_keys: Vec::new(),
        items: Vec::new(),
        entries: card.decorators.then_some(card.entries.start),
        scratch: String::new(),
    };
    b.ws();
    let v = b.value(0)?;
    b.ws();
    if b.at != b.text.len() {
        return Err(b.broken());
    }
    Ok(v)
}

/// The builder's state: where it is in the text.
struct Builder<'py, 't> {
    py: Python<'py>,
    text: &'t str,
    at: usize,
    /// Keys made so far, by their text.
    keys: FxHashMap<&'t str, Bound<'py, PyString>>,
    /// At each depth, the keys of the objects read there, by place, the latest of each.
    last_keys: Vec<Vec<(&'t str, Bound<'py, PyString>)>>,
    /// The items of the lists being built, innermost last.
    items: Vec<Bound<'py, PyAny>>,
    /// Where the entries array starts, when each entry gets `"decorators": []`.
    entries: Option<usize>,
    /// An escaped string, decoded.
    scratch: String,
}

impl<'py, 't> Builder<'py, 't> {
    fn broken(&self) -> PyErr {
        pyo3::exceptions::PyValueError::new_err(format!(
            "the card text is not as checked at byte {}",
            self.at
        ))
    }

    /// The text from `at` on, as bytes.
    fn rest(&self) -> &'t [u8] {
        let text: &'t str = self.text;
        text.as_bytes().get(self.at..).unwrap_or_default()
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips whitespace.
    fn ws(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// Steps past `byte`, which must come next.
    fn expect(&mut self, byte: u8) -> PyResult<()> {
        if self.peek() != Some(byte) {
            return Err(self.broken());
        }
        self.at += 1;
        Ok(())
    }

    fn value(&mut self, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        match self.peek() {
            Some(b'{') => Ok(self.object(depth)?.into_any()),
            Some(b'[') => self.array(depth),
            Some(b'"') => match self.string()? {
                Text::Slice(s) => Ok(PyString::new(py, s).into_any()),
                Text::Scratch => Ok(PyString::new(py, &self.scratch).into_any()),
            },
            Some(b't') => self.word("true", PyBool::new(py, true).to_owned().into_any()),
            Some(b'f') => self.word("false", PyBool::new(py, false).to_owned().into_any()),
            Some(b'n') => self.word("null", py.None().into_bound(py)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.broken()),
        }
    }

    fn word(&mut self, word: &str, v: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if !self.rest().starts_with(word.as_bytes()) {
            return Err(self.broken());
        }
        self.at += word.len();
        Ok(v)
    }

    fn object(&mut self, depth: usize) -> PyResult<Bound<'py, PyDict>> {
        if depth >= MAX_DEPTH {
            return Err(self.broken());
        }
        self.expect(b'{')?;
        let dict = PyDict::new(self.py);
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(dict);
        }
        let mut n = 0;
        loop {
            self.ws();
            let key = self.key(depth, n)?;
            n += 1;
            self.ws();
            self.expect(b':')?;
            self.ws();
            let v = self.value(depth + 1)?;
            dict.set_item(key, v)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(dict);
                }
                _ => return Err(self.broken()),
            }
        }
    }

    fn array(&mut self, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        if depth >= MAX_DEPTH {
            return Err(self.broken());
        }
        let entries = self.entries == Some(self.at);
        self.expect(b'[')?;
        let base = self.items.len();
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(PyList::empty(self.py).into_any());
        }
        loop {
            self.ws();
            let v = if entries {
                // An entry: its decorators (none) after its own fields.
                let entry = self.object(depth + 1)?;
                let key = self.known_key("decorators");
                entry.set_item(key, PyList::empty(self.py))?;
                entry.into_any()
            } else {
                self.value(depth + 1)?
            };
            self.items.push(v);
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.broken()),
            }
        }
        let py = self.py;
        let list = PyList::new(py, self.items.drain(base..))?;
        Ok(list.into_any())
    }

    /// A key the text does not hold.
    fn known_key(&mut self, key: &'static str) -> Bound<'py, PyString> {
        let py = self.py;
        self.keys
            .entry(key)
            .or_insert_with(|| PyString::intern(py, key))
            .clone()
    }

    /// The `n`th key of an object at `depth`: most often the same text as the `n`th key of the
    /// last object there (an entry's fields come in the same order entry after entry), which is
    /// compared first; else looked up by its text.
    fn key(&mut self, depth: usize, n: usize) -> PyResult<Bound<'py, PyString>> {
        let py = self.py;
        let s = match self.string()? {
            Text::Slice(s) => s,
            Text::Scratch => return Ok(PyString::intern(py, &self.scratch)),
        };
        let last = self.last_keys.get(depth).and_then(|keys| keys.get(n));
        if let Some((text, key)) = last {
            if *text == s {
                return Ok(key.clone());
            }
        }
        let key = self
            .keys
            .entry(s)
            .or_insert_with(|| PyString::intern(py, s))
            .clone();
        if self.last_keys.len() <= depth {
            self.last_keys.resize_with(depth + 1, Vec::new);
        }
        if let Some(keys) = self.last_keys.get_mut(depth) {
            if let Some(slot) = keys.get_mut(n) {
                *slot = (s, key.clone());
            } else if keys.len() == n {
                keys.push((s, key.clone()));
            }
        }
        Ok(key)
    }

    /// A string at `at`: its slice of the text when it has no escape, else decoded into
    /// `scratch`.
    fn string(&mut self) -> PyResult<Text<'t>> {
        self.expect(b'"')?;
        let text: &'t str = self.text;
        let bytes = text.as_bytes();
        let start = self.at;
        let Some(rest) = bytes.get(start..) else {
            return Err(self.broken());
        };
        match memchr::memchr2(b'"', b'\\', rest) {
            Some(n) if rest.get(n) == Some(&b'"') => {
                self.at = start + n + 1;
                // Both ends stand next to a `"`, so they are character boundaries.
                text.get(start..start + n)
                    .map(Text::Slice)
                    .ok_or_else(|| self.broken())
            }
            Some(n) => {
                self.scratch.clear();
                let piece = text.get(start..start + n).ok_or_else(|| self.broken())?;
                self.scratch.push_str(piece);
                self.at = start + n;
                self.escaped()?;
                Ok(Text::Scratch)
            }
            None => Err(self.broken()),
        }
    }

    /// The rest of a string with escapes, from the first `\` at `at` to its closing quote,
    /// decoded onto `scratch`.
    fn escaped(&mut self) -> PyResult<()> {
        let text = self.text;
        let bytes = text.as_bytes();
        loop {
            match bytes.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    let c = match bytes.get(self.at + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.at += 2;
                            let c = self.unicode_escape()?;
                            self.scratch.push(c);
                            continue;
                        }
                        _ => return Err(self.broken()),
                    };
                    self.scratch.push(c);
                    self.at += 2;
                }
                Some(_) => {
                    let rest = self.rest();
                    let n = memchr::memchr2(b'"', b'\\', rest).ok_or_else(|| self.broken())?;
                    let piece = text
                        .get(self.at..self.at + n)
                        .ok_or_else(|| self.broken())?;
                    self.scratch.push_str(piece);
                    self.at += n;
                }
                None => return Err(self.broken()),
            }
        }
    }

    /// Four hex digits at `at`.
    fn hex4(&mut self) -> PyResult<u32> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.broken())?;
        let n = u32::from_str_radix(digits, 16).map_err(|_| self.broken())?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.broken());
        }
        self.at += 4;
        Ok(n)
    }

    /// The character of a `\u` escape whose digits start at `at` (a surrogate pair taking the
    /// next escape too).
    fn unicode_escape(&mut self) -> PyResult<char> {
        let high = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&high) {
            if !self.rest().starts_with(b"\\u") {
                return Err(self.broken());
            }
            self.at += 2;
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(self.broken());
            }
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| self.broken())
    }

    /// A number, as `serde_json` reads it: an integer that fits `u64` (or, negative and not
    /// zero, `i64`) is an `int`, any other number a `float`.
    fn number(&mut self) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut end = start;
        let mut integer = true;
        while let Some(&b) = bytes.get(end) {
            match b {
                b'0'..=b'9' | b'-' => {}
                b'.' | b'e' | b'E' | b'+' => integer = false,
                _ => break,
            }
            end += 1;
        }
        let token = self.text.get(start..end).ok_or_else(|| self.broken())?;
        self.at = end;
        if integer {
            let (negative, digits) = match token.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, token),
            };
            if let Ok(n) = digits.parse::<u64>() {
                if !negative {
                    return Ok(PyInt::new(py, n).into_any());
                }
                // `-0` and what does not fit `i64` are floats to serde_json.
                if n != 0 && n <= 1 << 63 {
                    let v = (n as i64).wrapping_neg();
                    return Ok(PyInt::new(py, v).into_any());
                }
                return Ok(PyFloat::new(py, -(n as f64)).into_any());
            }
        }
        match token.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(PyFloat::new(py, f).into_any()),
            _ => Err(self.broken()),
        }
    }
}

/// Where [`Builder::string`] left a string.
enum Text<'t> {
    /// A slice of the text (no escapes).
    Slice(&'t str),
    /// Decoded into the builder's scratch buffer.
    Scratch,
}
