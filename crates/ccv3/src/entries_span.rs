//! Where a card's book entries stand in its JSON text, found without building them, and which
//! of them the model reads as they stand: a reader that wants a big book's entries only later
//! (the bindings' `read_card_parts`) reads the card with an empty array there and the entries
//! from the same text when they are asked for, the entries read as they stand by its own JSON
//! parser and only the others through the model. The same pass notes whether the card around
//! the entries stands as the model keeps it ([`EntriesSpan::card_as_is`]): then the text with an
//! empty array there is the card without its entries, and the model need not read it at all.
//!
//! ```
//! let text = r#"{"spec":"chara_card_v3","data":{"name":"A","character_book":{"entries":[{"content":"x"}]}}}"#;
//! let span = ccv3::entries_span::character_book_entries(text).unwrap();
//! assert_eq!(&text[span.range], r#"[{"content":"x"}]"#);
//! // Its required fields are missing: the model repairs the entry.
//! assert_eq!(span.changed, Some(vec![0]));
//! // A key of the path twice: not found (the caller reads the card whole).
//! let twice = r#"{"data":{"character_book":{"entries":["a"],"entries":["b"]}}}"#;
//! assert_eq!(ccv3::entries_span::character_book_entries(twice), None);
//! ```

use crate::model::book::{EntryAsIs, Shape};
use crate::model::card_as_is::{AssetAsIs, CardAsIs};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// Where a card's `data.character_book.entries` stands in its text, and which entries the model
/// reads into something else than their JSON value ([`character_book_entries`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntriesSpan {
    /// The array, a byte range of the text, brackets included.
    pub range: Range<usize>,
    /// The places of the entries the model does not read as they stand (a field of another
    /// type than the spec's, one missing, a key twice: what the reader repairs), ascending;
    /// `None` when an item is not an object (the reader drops those, so places move).
    pub changed: Option<Vec<usize>>,
    /// The places of the other entries that splitting decorators off may change (`@@` in the
    /// content, or a `decorators` field), ascending.
    pub decorated: Vec<usize>,
    /// The card around the entries is a V3 card that the model reads and writes back as the
    /// same JSON value (every field of the spec's type, each key once, the required ones there,
    /// nothing repaired or moved; issue 29): the text with an empty array at `range` is the
    /// card without its entries, no model read needed.
    pub card_as_is: bool,
    /// Every byte of the array's text at `range` is ASCII (known from the hand-written pass,
    /// which sees each byte of its strings; `false` when not known): a binding may decode it as
    /// Latin-1, which is cheaper than UTF-8 (issue 29).
    pub ascii: bool,
}

/// Where `data.character_book.entries` (an array) stands in the card JSON `text`, when the whole
/// text passes the reader's JSON parser's checks (syntax, strings, numbers, nesting limit) and
/// each key of that path occurs once, spelled exactly; with the entries the model would change.
///
/// One pass: the array's start follows its key, and its end is found from the last string in
/// it (the parser hands out strings without escapes as slices of the text): past that string
/// there are only numbers, literals and punctuation, so counting brackets from there finds the
/// array's `]`. Arrays without such a string (no strings, or the last one escaped) are `None`.
/// For the usual card a hand-written pass gives the same answer about 2.5x faster (strings
/// scanned 16 bytes at a time on WebAssembly with SIMD; issue 29); anything it is unsure of (an
/// escaped key, a surrogate escape, an exponent, deep nesting, any error) goes through
/// serde_json's parser as before.
///
/// ```
/// let text = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","character_book":{"entries":[{"keys":["a"],"content":"x"}]}}}"#;
/// let span = ccv3::entries_span::character_book_entries(text).expect("a plain entries array");
/// assert_eq!(&text[span.range.clone()], r#"[{"keys":["a"],"content":"x"}]"#);
/// ```
pub fn character_book_entries(text: &str) -> Option<EntriesSpan> {
    // The hand-written pass answers for the usual card; where it is unsure, this one decides.
    scan::entries_span(text).or_else(|| serde_pass(text))
}

mod scan;

/// [`character_book_entries`] through serde_json's parser, whatever the text.
fn serde_pass(text: &str) -> Option<EntriesSpan> {
    // From `str`: the text is UTF-8 already, so the parser does not check it again.
    let mut de = serde_json::Deserializer::from_str(text);
    let mut card = CardAsIs::default();
    let found = Path {
        depth: 0,
        card: &mut card,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    let Found {
        key_end,
        last,
        items,
    } = found?;
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
                    break;
                }
            }
            b'"' => return None,
            _ => {}
        }
    }
    Some(EntriesSpan::of_items(start..i + 1, &items, &card))
}

impl EntriesSpan {
    /// The span of the entries array at `range` whose items `items` classed, in a card that
    /// `card` saw (the end of both passes).
    fn of_items(range: Range<usize>, items: &[Class], card: &CardAsIs) -> EntriesSpan {
        let (mut changed, mut decorated) = (Some(Vec::new()), Vec::new());
        for (n, class) in items.iter().enumerate() {
            match (class, changed.as_mut()) {
                (Class::NotObject, _) => changed = None,
                (Class::Changed, Some(list)) => list.push(n),
                (Class::Decorated, _) => decorated.push(n),
                _ => {}
            }
        }
        EntriesSpan {
            range,
            changed,
            decorated,
            card_as_is: card.as_is(),
            ascii: false,
        }
    }
}

/// An item of the entries array, as [`EntryAsIs`] sees it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    AsIs,
    Decorated,
    Changed,
    NotObject,
}

/// What [`Path`] found: the address just past the `entries` key's text, and the address just
/// past the last string of the array with the number of containers open around it (the array
/// included), `None` when it has no string or its last one was escaped; each item's class.
struct Found {
    key_end: usize,
    last: Option<(usize, usize)>,
    items: Vec<Class>,
}

/// What a value inside the `entries` value is: the array itself (each item classed into the
/// list), an item of it, an entry's `content` (looked into for `@@`), or any other value.
enum Role<'s> {
    Entries(&'s mut Vec<Class>),
    Item(&'s mut Class),
    Content,
    Value,
}

/// Every value inside the `entries` value, checked as `serde_json::Value` would be parsed,
/// noting its last string and what [`Role`] asks; gives the value's [`Shape`].
struct Track<'s> {
    last: &'s mut Option<(usize, usize)>,
    depth: usize,
    role: Role<'s>,
}

impl<'de> DeserializeSeed<'de> for Track<'_> {
    type Value = Shape;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        d.deserialize_any(self)
    }
}

impl Track<'_> {
    /// A string's shape (the text looked into for `@@` when it is an entry's content).
    fn string(&self, s: &str) -> Shape {
        Shape::Str {
            at_signs: matches!(self.role, Role::Content)
                && memchr::memmem::find(s.as_bytes(), b"@@").is_some(),
        }
    }
}

impl<'de> Visitor<'de> for Track<'_> {
    type Value = Shape;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Bool)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Number)
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Shape, E> {
        *self.last = Some((s.as_ptr() as usize + s.len(), self.depth));
        Ok(self.string(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Shape, E> {
        // Escaped: not a slice of the text, so where it ends is not known.
        *self.last = None;
        Ok(self.string(s))
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_none<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let depth = self.depth + 1;
        let last = self.last;
        if let Role::Entries(items) = self.role {
            loop {
                let mut class = Class::NotObject;
                let seed = Track {
                    last: &mut *last,
                    depth,
                    role: Role::Item(&mut class),
                };
                if seq.next_element_seed(seed)?.is_none() {
                    return Ok(Shape::Other);
                }
                items.push(class);
            }
        }
        let mut strings = true;
        while let Some(shape) = seq.next_element_seed(Track {
            last: &mut *last,
            depth,
            role: Role::Value,
        })? {
            strings &= matches!(shape, Shape::Str { .. });
        }
        Ok(if strings {
            Shape::Strings
        } else {
            Shape::Other
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let depth = self.depth + 1;
        let last = self.last;
        let Role::Item(class) = self.role else {
            while map
                .next_key_seed(Track {
                    last: &mut *last,
                    depth,
                    role: Role::Value,
                })?
                .is_some()
            {
                map.next_value_seed(Track {
                    last: &mut *last,
                    depth,
                    role: Role::Value,
                })?;
            }
            return Ok(Shape::Object);
        };
        // An entry: each field noted by the model's rule.
        let mut entry = EntryAsIs::default();
        while let Some(key) = map.next_key_seed(TrackedKey {
            last: &mut *last,
            depth,
        })? {
            let role = if key == "content" {
                Role::Content
            } else {
                Role::Value
            };
            let shape = map.next_value_seed(Track {
                last: &mut *last,
                depth,
                role,
            })?;
            entry.add(&key, shape);
        }
        *class = match (entry.as_is(), entry.decorated) {
            (false, _) => Class::Changed,
            (true, true) => Class::Decorated,
            (true, false) => Class::AsIs,
        };
        Ok(Shape::Object)
    }
}

/// An entry's key, noted as [`Track`] notes strings.
struct TrackedKey<'s> {
    last: &'s mut Option<(usize, usize)>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for TrackedKey<'_> {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TrackedKey<'_> {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        *self.last = Some((s.as_ptr() as usize + s.len(), self.depth));
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        *self.last = None;
        Ok(Cow::Owned(s.to_owned()))
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

/// The object at depth `depth` of [`PATH`] (0: the document): every value checked as [`Walk`]
/// checks it, and where the `entries` array is; the fields around it noted in `card`.
struct Path<'c> {
    depth: usize,
    card: &'c mut CardAsIs,
}

impl<'de> DeserializeSeed<'de> for Path<'_> {
    type Value = Option<Found>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Path<'_> {
    type Value = Option<Found>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(&want) = PATH.get(self.depth) else {
            return Err(A::Error::custom("too deep"));
        };
        let card = self.card;
        let mut found = None;
        let mut seen = false;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            if k == want {
                if seen {
                    return Err(A::Error::custom("a key of the path occurs twice"));
                }
                seen = true;
                found = if self.depth + 1 == PATH.len() {
                    let (mut last, mut items) = (None, Vec::new());
                    map.next_value_seed(Track {
                        last: &mut last,
                        depth: 0,
                        role: Role::Entries(&mut items),
                    })?;
                    match k {
                        Cow::Borrowed(key) => Some(Found {
                            key_end: key.as_ptr() as usize + key.len(),
                            last,
                            items,
                        }),
                        // An escaped key: where it ends is not known.
                        Cow::Owned(_) => None,
                    }
                } else {
                    if self.depth == 1 {
                        card.add_data(want, Shape::Object);
                    }
                    map.next_value_seed(Path {
                        depth: self.depth + 1,
                        card: &mut *card,
                    })?
                };
            } else if PATH.iter().any(|p| k.eq_ignore_ascii_case(p)) {
                return Err(A::Error::custom("a key spelled like one of the path"));
            } else {
                let top = self.depth == 0 && (k == "spec" || k == "spec_version");
                let assets = self.depth == 1 && k == "assets";
                let role = match (top, assets) {
                    (true, _) => PeekRole::Keep,
                    (_, true) => PeekRole::Assets,
                    _ => PeekRole::Plain,
                };
                let peeked = map.next_value_seed(Peek(role))?;
                match self.depth {
                    0 => card.add_top(&k, peeked.text.as_deref()),
                    1 => card.add_data(&k, peeked.shape),
                    _ => card.add_book(&k, peeked.shape),
                }
            }
        }
        Ok(found)
    }
}

/// What [`Peek`] saw of a value: its shape, and its text when asked for and a string.
struct Peeked<'de> {
    shape: Shape,
    text: Option<Cow<'de, str>>,
}

impl Peeked<'_> {
    fn of(shape: Shape) -> Self {
        Peeked { shape, text: None }
    }
}

/// What [`Peek`] looks for in a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PeekRole {
    /// Only its shape.
    Plain,
    /// Its shape and, for a string, its text.
    Keep,
    /// A card's `assets`: [`Shape::Object`] when it is an array of assets that stand as they
    /// are ([`AssetAsIs`]), else [`Shape::Other`].
    Assets,
    /// An item of `assets`: [`Shape::Object`] when it stands as it is.
    Asset,
}

/// A value outside the entries, checked as `serde_json::Value` would be parsed, with the shape
/// [`CardAsIs`] needs.
struct Peek(PeekRole);

impl<'de> DeserializeSeed<'de> for Peek {
    type Value = Peeked<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Peek {
    type Value = Peeked<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Peeked::of(Shape::Bool))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Peeked::of(Shape::Number))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Peeked::of(Shape::Number))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Peeked::of(Shape::Number))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        let text = (self.0 == PeekRole::Keep).then_some(Cow::Borrowed(s));
        Ok(Peeked {
            shape: Shape::Str { at_signs: false },
            text,
        })
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        let text = (self.0 == PeekRole::Keep).then(|| Cow::Owned(s.to_string()));
        Ok(Peeked {
            shape: Shape::Str { at_signs: false },
            text,
        })
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Peeked::of(Shape::Other))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Peeked::of(Shape::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (item, mut fits) = if self.0 == PeekRole::Assets {
            (PeekRole::Asset, true)
        } else {
            (PeekRole::Plain, true)
        };
        while let Some(p) = seq.next_element_seed(Peek(item))? {
            fits &= match item {
                PeekRole::Asset => p.shape == Shape::Object,
                _ => matches!(p.shape, Shape::Str { .. }),
            };
        }
        Ok(Peeked::of(match (self.0, fits) {
            (PeekRole::Assets, true) => Shape::Object,
            (PeekRole::Assets, false) => Shape::Other,
            (_, true) => Shape::Strings,
            _ => Shape::Other,
        }))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut asset = AssetAsIs::default();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let p = map.next_value_seed(Peek(PeekRole::Plain))?;
            if self.0 == PeekRole::Asset {
                asset.add(&k, p.shape);
            }
        }
        Ok(Peeked::of(match self.0 {
            PeekRole::Assets => Shape::Other,
            PeekRole::Asset if !asset.as_is() => Shape::Other,
            _ => Shape::Object,
        }))
    }
}
