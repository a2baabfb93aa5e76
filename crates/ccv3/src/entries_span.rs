//! Where a card's book entries stand in its JSON text, found without building them: a reader
//! that wants a big book's entries only later (the bindings' `read_card_parts`) reads the card
//! with an empty array there and the entries from the same text when they are asked for.
//!
//! ```
//! let text = r#"{"spec":"chara_card_v3","data":{"name":"A","character_book":{"entries":[{"content":"x"}]}}}"#;
//! let range = ccv3::entries_span::character_book_entries(text).unwrap();
//! assert_eq!(&text[range], r#"[{"content":"x"}]"#);
//! // A key of the path twice: not found (the caller reads the card whole).
//! let twice = r#"{"data":{"character_book":{"entries":["a"],"entries":["b"]}}}"#;
//! assert_eq!(ccv3::entries_span::character_book_entries(twice), None);
//! ```

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// Where `data.character_book.entries` (an array) stands in the card JSON `text` (a byte
/// range, brackets included), when the whole text passes
/// the reader's JSON parser's checks (syntax, strings, numbers, nesting limit) and each key of
/// that path occurs once, spelled exactly.
///
/// One pass: the array's start follows its key, and its end is found from the last string in
/// it (the parser hands out strings without escapes as slices of the text): past that string
/// there are only numbers, literals and punctuation, so counting brackets from there finds the
/// array's `]`. Arrays without such a string (no strings, or the last one escaped) are `None`.
pub fn character_book_entries(text: &str) -> Option<Range<usize>> {
    // From `str`: the text is UTF-8 already, so the parser does not check it again.
    let mut de = serde_json::Deserializer::from_str(text);
    let found = Path(0).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let Found { key_end, last } = found?;
    let bytes = text.as_bytes();
    let base = text.as_ptr() as usize;
    // `"entries"`, then `:` between optional whitespace, then the array.
    let mut at = key_end.checked_sub(base)?;
    (bytes.get(at) == Some(&b'"')).then_some(())?;
    at += 1;
    let skip_ws = |mut i: usize| {
        while bytes.get(i).is_some_and(|b| b" \t\r\n".contains(b)) {
            i += 1;
        }
        i
    };
    at = skip_ws(at);
    (bytes.get(at) == Some(&b':')).then_some(())?;
    let start = skip_ws(at + 1);
    (bytes.get(start) == Some(&b'[')).then_some(())?;
    let (last_end, mut depth) = last?;
    let mut i = last_end.checked_sub(base)?;
    (i > start && bytes.get(i) == Some(&b'"')).then_some(())?;
    loop {
        i += 1;
        match bytes.get(i)? {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(start..i + 1);
                }
            }
            b'"' => return None,
            _ => {}
        }
    }
}

/// What [`Path`] found: the address just past the `entries` key's text, and the address just
/// past the last string of the array with the number of containers open around it (the array
/// included), `None` when it has no string or its last one was escaped.
struct Found {
    key_end: usize,
    last: Option<(usize, usize)>,
}

/// Every value inside the `entries` array, checked as [`Walk`] checks it, noting its last string.
struct Track<'s> {
    last: &'s mut Option<(usize, usize)>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Track<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Track<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        *self.last = Some((s.as_ptr() as usize + s.len(), self.depth));
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        // Escaped: not a slice of the text, so where it ends is not known.
        *self.last = None;
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let depth = self.depth + 1;
        while seq
            .next_element_seed(Track {
                last: &mut *self.last,
                depth,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let depth = self.depth + 1;
        while map
            .next_key_seed(Track {
                last: &mut *self.last,
                depth,
            })?
            .is_some()
        {
            map.next_value_seed(Track {
                last: &mut *self.last,
                depth,
            })?;
        }
        Ok(())
    }
}

/// Every value, checked as `serde_json::Value` would be parsed, nothing kept.
struct Walk;

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Walk)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Walk)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Walk)?.is_some() {
            map.next_value_seed(Walk)?;
        }
        Ok(())
    }
}

/// A key, borrowed when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The keys of the path, outermost first.
const PATH: [&str; 3] = ["data", "character_book", "entries"];

/// The object at depth `.0` of [`PATH`] (0: the document): every value checked as [`Walk`]
/// checks it, and where the `entries` array is.
struct Path(usize);

impl<'de> DeserializeSeed<'de> for Path {
    type Value = Option<Found>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Path {
    type Value = Option<Found>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(&want) = PATH.get(self.0) else {
            return Err(A::Error::custom("too deep"));
        };
        let mut found = None;
        let mut seen = false;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            if k == want {
                if seen {
                    return Err(A::Error::custom("a key of the path occurs twice"));
                }
                seen = true;
                found = if self.0 + 1 == PATH.len() {
                    let mut last = None;
                    map.next_value_seed(Track {
                        last: &mut last,
                        depth: 0,
                    })?;
                    match k {
                        Cow::Borrowed(key) => Some(Found {
                            key_end: key.as_ptr() as usize + key.len(),
                            last,
                        }),
                        // An escaped key: where it ends is not known.
                        Cow::Owned(_) => None,
                    }
                } else {
                    map.next_value_seed(Path(self.0 + 1))?
                };
            } else if PATH.iter().any(|p| k.eq_ignore_ascii_case(p)) {
                return Err(A::Error::custom("a key spelled like one of the path"));
            } else {
                map.next_value_seed(Walk)?;
            }
        }
        Ok(found)
    }
}
