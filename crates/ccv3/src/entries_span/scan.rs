//! A hand-written pass over a card's JSON text that finds what the serde pass of
//! [`super::character_book_entries`] finds, for the usual card, in a fraction of its time (issue
//! 29: that pass was a quarter of the npm `readCard` + `JSON.stringify` of a big card). It checks
//! what the reader's JSON parser checks (syntax, strings, escapes, numbers, nesting) and notes the
//! same fields through the same rules ([`EntryAsIs`], [`CardAsIs`], [`AssetAsIs`]). Where it is
//! not sure to agree with that parser or with the serde pass (any syntax error, an escaped key
//! where keys are compared, an escaped `spec`, a `\u` surrogate, a number with an exponent or of
//! many digits, deep nesting, an entries array whose last string is escaped or that has none) it
//! gives up and the serde pass decides, so it never answers otherwise than that pass.
//!
//! The import circle with the parent module is this pass's shape: it returns the parent's
//! result types (`EntriesSpan`, `Class`, `PATH`), and the parent tries it before its serde pass.

use super::{Class, EntriesSpan, PATH};
use crate::model::book::{same_bytes, EntryAsIs, Shape};
use crate::model::card_as_is::{AssetAsIs, CardAsIs};

/// Containers open at once past which the pass gives up (the reader's parser allows 128).
const MAX_DEPTH: usize = 64;

/// Digits of a number past which the pass gives up (the parser reads longer ones as floats).
const MAX_DIGITS: usize = 18;

/// [`super::character_book_entries`]'s answer when this pass is sure of it, else `None`.
pub(super) fn entries_span(text: &str) -> Option<EntriesSpan> {
    let mut s = Scan {
        t: text,
        b: text.as_bytes(),
        i: 0,
        depth: 0,
        last: None,
        high: 0,
    };
    let mut card = CardAsIs::default();
    s.ws();
    let found = s.path(0, &mut card)?;
    s.ws();
    (s.i == s.b.len()).then_some(())?;
    let (range, items, ascii) = found?;
    Some(EntriesSpan {
        ascii,
        ..EntriesSpan::of_items(range, &items, &card)
    })
}

/// A string's place in the text (quotes excluded) and whether it has escapes.
struct Str {
    start: usize,
    end: usize,
    escaped: bool,
}

/// The entries array found: its range, each item's class, and whether its text is all ASCII.
type Found = (std::ops::Range<usize>, Vec<Class>, bool);

/// The pass's position in the text.
struct Scan<'t> {
    /// The text, and its bytes.
    t: &'t str,
    b: &'t [u8],
    i: usize,
    depth: usize,
    /// Whether the last string read (key or value) was escaped; `None` when none was read
    /// since the entries array opened (the serde pass finds the array's end from that string).
    last: Option<bool>,
    /// Nonzero once a string scanned held a byte past ASCII (or may have: the bytes of a
    /// string's last 16 are counted whole); the other bytes of a text the pass accepts are ASCII.
    high: u64,
}

impl<'t> Scan<'t> {
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Skips `byte` (after whitespace), or gives up.
    #[inline(always)]
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek() == Some(byte)).then(|| self.i += 1)
    }

    /// After `{` or `[`: whether the container is empty (its closing byte skipped).
    #[inline(always)]
    fn open(&mut self, close: u8) -> Option<bool> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())?;
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            self.depth -= 1;
            return Some(true);
        }
        Some(false)
    }

    /// After an item of a container: whether another follows (`,` skipped) or it closed.
    #[inline(always)]
    fn next(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                self.ws();
                Some(true)
            }
            b if b == close => {
                self.i += 1;
                self.depth -= 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// [`Self::open`], [`Self::next`] and [`Self::key`] as calls, for the card's top levels
    /// and its assets, read once per card: the entries' loops have them inlined (issue 29: a
    /// tenth of the pass's time), the rest keeps the npm core small.
    #[inline(never)]
    fn cold_open(&mut self, close: u8) -> Option<bool> {
        self.open(close)
    }

    /// [`Self::next`] as a call ([`Self::cold_open`]).
    #[inline(never)]
    fn cold_next(&mut self, close: u8) -> Option<bool> {
        self.next(close)
    }

    /// [`Self::key`] as a call ([`Self::cold_open`]).
    #[inline(never)]
    fn cold_key(&mut self) -> Option<&'t str> {
        self.key()
    }

    /// A string at the position (its opening quote), checked as the parser checks it.
    #[inline(always)]
    fn string(&mut self) -> Option<Str> {
        (self.peek() == Some(b'"')).then_some(())?;
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            self.i += to_special(self.b.get(self.i..)?, &mut self.high)?;
            match self.peek()? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return None, // a control character
            }
        }
        let end = self.i;
        self.i += 1;
        self.last = Some(escaped);
        Some(Str {
            start,
            end,
            escaped,
        })
    }

    /// An escape at the position (its backslash): a surrogate pair in `\u` escapes, a lone
    /// surrogate given up on.
    fn escape(&mut self) -> Option<()> {
        match self.b.get(self.i + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
            b'u' => {
                let unit = self.hex4(self.i + 2)?;
                self.i += 6;
                if (0xDC00..0xE000).contains(&unit) {
                    return None;
                }
                if (0xD800..0xDC00).contains(&unit) {
                    (self.b.get(self.i..self.i + 2)? == b"\\u").then_some(())?;
                    let low = self.hex4(self.i + 2)?;
                    (0xDC00..0xE000).contains(&low).then_some(())?;
                    self.i += 6;
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.b.get(at..at + 4)?;
        let mut v = 0;
        for &d in digits {
            v = v * 16 + char::from(d).to_digit(16)?;
        }
        Some(v)
    }

    /// A key without escapes (given up on otherwise), then its `:`.
    #[inline(always)]
    fn key(&mut self) -> Option<&'t str> {
        let s = self.string()?;
        (!s.escaped).then_some(())?;
        self.expect(b':')?;
        self.ws();
        // Between two quotes: on character boundaries, so no UTF-8 check is needed.
        let t: &'t str = self.t;
        t.get(s.start..s.end)
    }

    /// Any value, with its shape (`at_signs` looked for when `content`).
    fn value(&mut self, content: bool) -> Option<Shape> {
        match self.peek()? {
            b'"' => {
                let s = self.string()?;
                let at_signs = content && self.at_signs(&s);
                Some(Shape::Str { at_signs })
            }
            b'{' => {
                self.i += 1;
                if !self.open(b'}')? {
                    loop {
                        self.string()?;
                        self.expect(b':')?;
                        self.ws();
                        self.value(false)?;
                        if !self.next(b'}')? {
                            break;
                        }
                    }
                }
                Some(Shape::Object)
            }
            b'[' => {
                self.i += 1;
                let mut strings = true;
                if !self.open(b']')? {
                    loop {
                        strings &= matches!(self.value(false)?, Shape::Str { .. });
                        if !self.next(b']')? {
                            break;
                        }
                    }
                }
                Some(if strings {
                    Shape::Strings
                } else {
                    Shape::Other
                })
            }
            b't' => self.literal(b"true", Shape::Bool),
            b'f' => self.literal(b"false", Shape::Bool),
            b'n' => self.literal(b"null", Shape::Other),
            _ => self.number(),
        }
    }

    /// `true`, `false` or `null` at the position, compared as one word (a slice compare is a
    /// call to `memcmp` in WebAssembly).
    #[inline(always)]
    fn literal<const N: usize>(&mut self, word: &[u8; N], shape: Shape) -> Option<Shape> {
        let here: &[u8; N] = self.b.get(self.i..self.i + N)?.try_into().ok()?;
        (here == word).then_some(())?;
        self.i += N;
        Some(shape)
    }

    /// A number without an exponent and of at most [`MAX_DIGITS`] digits on each side of its
    /// point (given up on otherwise: the parser may refuse a big one as out of range).
    #[inline(always)]
    fn number(&mut self) -> Option<Shape> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int = self.digits();
        if !(1..=MAX_DIGITS).contains(&int) || (int > 1 && self.b.get(self.i - int) == Some(&b'0'))
        {
            return None;
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            (1..=MAX_DIGITS).contains(&self.digits()).then_some(())?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            return None;
        }
        Some(Shape::Number)
    }

    #[inline(always)]
    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    /// Whether a string holds `@@` once its escapes are read (`\u0040` is an `@`).
    fn at_signs(&self, s: &Str) -> bool {
        let raw = &self.b[s.start..s.end];
        if !s.escaped {
            // memchr rather than a `memmem` searcher: built per string, that cost more here.
            return memchr::memchr_iter(b'@', raw).any(|at| raw.get(at + 1) == Some(&b'@'));
        }
        let (mut i, mut previous) = (0, false);
        while let Some(&b) = raw.get(i) {
            let (at, len) = match b {
                b'\\' if raw.get(i + 1) == Some(&b'u') => {
                    (raw.get(i + 2..i + 6) == Some(b"0040"), 6)
                }
                b'\\' => (false, 2),
                _ => (b == b'@', 1),
            };
            if at && previous {
                return true;
            }
            previous = at;
            i += len;
        }
        false
    }

    /// The object at depth `depth` of [`PATH`] (0: the document), as the serde pass's `Path`.
    fn path(&mut self, depth: usize, card: &mut CardAsIs) -> Option<Option<Found>> {
        let want = *PATH.get(depth)?;
        (self.peek() == Some(b'{')).then_some(())?;
        self.i += 1;
        let mut found = None;
        let mut seen = false;
        if self.cold_open(b'}')? {
            return Some(None);
        }
        loop {
            let k = self.cold_key()?;
            if k == want {
                (!seen).then_some(())?;
                seen = true;
                found = if depth + 1 == PATH.len() {
                    self.entries()?
                } else {
                    if depth == 1 {
                        card.add_data(want, Shape::Object);
                    }
                    self.path(depth + 1, card)?
                };
            } else if PATH.iter().any(|p| k.eq_ignore_ascii_case(p)) {
                return None;
            } else {
                match depth {
                    0 if k == "spec" || k == "spec_version" => {
                        let text = if self.peek() == Some(b'"') {
                            let s = self.string()?;
                            (!s.escaped).then_some(())?;
                            Some(self.t.get(s.start..s.end)?)
                        } else {
                            self.value(false)?;
                            None
                        };
                        card.add_top(k, text);
                    }
                    0 => {
                        self.value(false)?;
                        card.add_top(k, None);
                    }
                    1 if k == "assets" => {
                        let shape = self.assets()?;
                        card.add_data(k, shape);
                    }
                    1 => {
                        let shape = self.value(false)?;
                        card.add_data(k, shape);
                    }
                    _ => {
                        let shape = self.value(false)?;
                        card.add_book(k, shape);
                    }
                }
            }
            if !self.cold_next(b'}')? {
                break;
            }
        }
        Some(found)
    }

    /// A card's `assets`: [`Shape::Object`] when it is an array of assets that stand as they are.
    fn assets(&mut self) -> Option<Shape> {
        if self.peek() != Some(b'[') {
            return match self.value(false)? {
                Shape::Object => Some(Shape::Other),
                shape => Some(shape),
            };
        }
        self.i += 1;
        let mut fits = true;
        if !self.cold_open(b']')? {
            loop {
                fits &= self.asset()?;
                if !self.cold_next(b']')? {
                    break;
                }
            }
        }
        Some(if fits { Shape::Object } else { Shape::Other })
    }

    /// An item of `assets`: whether it is an asset that stands as it is.
    fn asset(&mut self) -> Option<bool> {
        if self.peek() != Some(b'{') {
            self.value(false)?;
            return Some(false);
        }
        self.i += 1;
        let mut asset = AssetAsIs::default();
        if !self.cold_open(b'}')? {
            loop {
                let k = self.cold_key()?;
                let shape = self.value(false)?;
                asset.add(k, shape);
                if !self.cold_next(b'}')? {
                    break;
                }
            }
        }
        Some(asset.as_is())
    }

    /// The entries array: its range and each item's class; `None` (in `Some`) when its last
    /// string is escaped or it has none (the serde pass finds no end then).
    fn entries(&mut self) -> Option<Option<Found>> {
        (self.peek() == Some(b'[')).then_some(())?;
        let start = self.i;
        self.i += 1;
        self.last = None;
        self.high = 0;
        let mut items = Vec::new();
        if !self.open(b']')? {
            loop {
                items.push(self.item()?);
                if !self.next(b']')? {
                    break;
                }
            }
        }
        let ascii = self.high == 0;
        Some((self.last == Some(false)).then_some((start..self.i, items, ascii)))
    }

    /// An item of the entries array, classed by [`EntryAsIs`].
    fn item(&mut self) -> Option<Class> {
        if self.peek() != Some(b'{') {
            self.value(false)?;
            return Some(Class::NotObject);
        }
        self.i += 1;
        let mut entry = EntryAsIs::default();
        if !self.open(b'}')? {
            loop {
                let k = self.key()?;
                let shape = self.value(same_bytes(k.as_bytes(), b"content"))?;
                entry.add(k, shape);
                if !self.next(b'}')? {
                    break;
                }
            }
        }
        Some(match (entry.as_is(), entry.decorated) {
            (false, _) => Class::Changed,
            (true, true) => Class::Decorated,
            (true, false) => Class::AsIs,
        })
    }
}

/// How far into `rest` the first `"`, `\` or control character is; `None` when there is none.
/// Sets bits of `high` when a byte past ASCII is before it (or in the same 16 bytes).
#[inline(always)]
fn to_special(rest: &[u8], high: &mut u64) -> Option<usize> {
    let mut at = 0;
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{i64x2, u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128_or};
        let (quote, backslash, space) = (u8x16_splat(b'"'), u8x16_splat(b'\\'), u8x16_splat(0x20));
        for chunk in rest.chunks_exact(16) {
            let (lo, hi) = chunk.split_at(8);
            let lo = u64::from_le_bytes(lo.try_into().unwrap_or_default());
            let hi = u64::from_le_bytes(hi.try_into().unwrap_or_default());
            let v = i64x2(lo as i64, hi as i64);
            let hits = v128_or(
                v128_or(u8x16_eq(v, quote), u8x16_eq(v, backslash)),
                u8x16_lt(v, space),
            );
            let mask = u8x16_bitmask(hits);
            *high |= u64::from(u8x16_bitmask(v));
            if mask != 0 {
                return Some(at + mask.trailing_zeros() as usize);
            }
            at += 16;
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        const ONES: u64 = u64::MAX / 255;
        for chunk in rest.chunks_exact(8) {
            let x = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            let ctrl = x.wrapping_sub(ONES * 0x20) & !x;
            let q = x ^ (ONES * u64::from(b'"'));
            let quote = q.wrapping_sub(ONES) & !q;
            let s = x ^ (ONES * u64::from(b'\\'));
            let backslash = s.wrapping_sub(ONES) & !s;
            let hits = (ctrl | quote | backslash) & (ONES << 7);
            *high |= x & (ONES << 7);
            if hits != 0 {
                return Some(at + hits.trailing_zeros() as usize / 8);
            }
            at += 8;
        }
    }
    let tail = rest.get(at..)?;
    *high |= tail.iter().fold(0, |all, &b| all | u64::from(b & 0x80));
    tail.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| at + p)
}

#[cfg(test)]
mod tests {
    use super::super::serde_pass;
    use super::entries_span;

    /// A V3 card as the model keeps it, with entries of every kind the pass notes.
    fn card() -> String {
        let entries = [
            r#"{"keys":["a","b"],"content":"plain","extensions":{"depth":4,"x":[1,-2.5,null,true]},"enabled":true,"insertion_order":0,"use_regex":false}"#,
            r#"{"keys":["\u00e9\ud83d\ude00"],"content":"say \"hi\"\n\t\\ \/","extensions":{},"enabled":false,"insertion_order":-3,"use_regex":false,"id":7,"comment":"c"}"#,
            r#"{"keys":[],"content":"@@depth 2\nx","extensions":{},"enabled":true,"insertion_order":1,"use_regex":false}"#,
            r#"{"keys":["k"],"content":"\u0040@ escaped","extensions":{},"enabled":true,"insertion_order":1,"use_regex":false}"#,
            r#"{"keys":["k"],"content":"@\u0041@","extensions":{},"enabled":true,"insertion_order":1,"use_regex":false}"#,
            r#"{"keys":["k"],"content":"x","extensions":{},"enabled":true,"insertion_order":1,"use_regex":false,"decorators":[]}"#,
            r#"{"keys":"k","content":"x"}"#,
            r#"{"keys":["k"],"content":"x","extensions":{},"enabled":true,"insertion_order":1.5,"use_regex":false,"priority":10,"k2":1,"k2":2}"#,
            r#"{ "keys" : [ "k" ] , "content" : "x" , "extensions" : { } , "enabled" : true , "insertion_order" : 0 , "use_regex" : false , "name" : "n" }"#,
        ];
        format!(
            r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"A","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","alternate_greetings":[],"tags":["t"],"creator":"","character_version":"","extensions":{{"talkativeness":"0.5"}},"group_only_greetings":[],"assets":[{{"type":"icon","uri":"ccdefault:","name":"main","ext":"png"}}],"character_book":{{"name":"B","extensions":{{}},"entries":[{}],"scan_depth":2}},"creation_date":0}}}}"#,
            entries.join(",")
        )
    }

    /// Whenever the hand-written pass answers, the serde pass answers the same.
    fn agrees(text: &str) -> bool {
        match entries_span(text) {
            Some(span) => {
                // The serde pass does not know whether the entries are ASCII; when this pass says
                // so, they are.
                let ascii = span.ascii;
                assert!(!ascii || text[span.range.clone()].is_ascii(), "{text}");
                let serde = serde_pass(text).map(|s| super::super::EntriesSpan { ascii, ..s });
                assert_eq!(Some(span), serde, "{text}");
                true
            }
            None => false,
        }
    }

    /// The entries' text is known to be ASCII exactly when it is, whatever the card around it
    /// holds (the npm binding decodes such text as Latin-1, issue 29).
    #[test]
    fn ascii_entries_are_told_from_the_others() {
        let ascii = |text: &str| entries_span(text).map(|s| s.ascii);
        let card = card();
        // The test card's second entry holds `\u00e9` as an escape: ASCII text.
        assert_eq!(ascii(&card), Some(true));
        for (from, to) in [
            (r#""content":"plain""#, "\"content\":\"pla\u{e9}n\""),
            (r#""comment":"c""#, "\"comment\":\"\u{1f600}\""),
            // Past 16 bytes into a long string, and in a string's last bytes.
            (
                r#""content":"plain""#,
                "\"content\":\"0123456789abcdefghij\u{e9}\"",
            ),
            (r#""name" : "n""#, "\"name\" : \"n\u{e9}\""),
        ] {
            assert!(card.contains(from));
            let changed = card.replacen(from, to, 1);
            assert_eq!(ascii(&changed), Some(false), "{changed}");
        }
        // Past ASCII before and after the entries only.
        let around = card
            .replace(r#""name":"A""#, "\"name\":\"\u{e9}\"")
            .replace(r#""scan_depth":2}"#, "\"scan_depth\":2,\"x\":\"\u{e9}\"}");
        assert_eq!(ascii(&around), Some(true), "{around}");
    }

    /// `@@` in a content is found at every place (across the 16-byte blocks of the string scan
    /// too), past ASCII or not, and never from two `@` apart.
    #[test]
    fn content_at_signs_are_found_wherever_they_stand() {
        let text = card();
        let decorated = |content: &str| {
            let changed = text.replacen(r#""content":"plain""#, content, 1);
            assert!(agrees(&changed), "{changed}");
            entries_span(&changed).unwrap().decorated.contains(&0)
        };
        for at in 0..40 {
            let (x, y) = ("x".repeat(at), "y".repeat(40 - at));
            assert!(decorated(&format!(r#""content":"{x}@@{y}""#)), "{at}");
            assert!(decorated(&format!(r#""content":"{x}@@""#)), "{at}");
            assert!(
                decorated(&format!("\"content\":\"{x}\u{e9}@@{y}\"")),
                "{at}"
            );
            assert!(!decorated(&format!(r#""content":"{x}@z@{y}""#)), "{at}");
            assert!(!decorated(&format!(r#""content":"{x}@""#)), "{at}");
            assert!(!decorated(&format!(r#""content":"@z{x}@{y}z@""#)), "{at}");
            // Escaped strings are read by escapes: `\u0040` is an `@`, `\n` stands between.
            assert!(
                decorated(&format!(r#""content":"{x}@\u0040{y}\n""#)),
                "{at}"
            );
            assert!(!decorated(&format!(r#""content":"{x}@\n@{y}""#)), "{at}");
        }
    }

    #[test]
    fn the_usual_card_is_answered_as_the_serde_pass_answers() {
        let text = card();
        assert!(agrees(&text));
        let span = entries_span(&text).unwrap();
        assert!(span.card_as_is);
        assert_eq!(span.changed, Some(vec![6, 7]));
        assert_eq!(span.decorated, vec![2, 3, 5]);
        // A V2-style card, a top-level field filling a missing one, assets that are not as is.
        for (from, to) in [
            ("chara_card_v3", "chara_card_v2"),
            (r#""creation_date":0"#, r#""creation_date":"0""#),
            (r#""ext":"png""#, r#""ext":1"#),
            (r#""scan_depth":2"#, r#""scan_depth":"2""#),
            (
                r#""spec":"chara_card_v3","#,
                r#""spec":"chara_card_v3","name":"x","#,
            ),
            (r#""entries":[{"#, r#""entries":["x",{"#),
        ] {
            let changed = text.replacen(from, to, 1);
            assert_ne!(changed, text);
            assert!(agrees(&changed), "{from} -> {to}");
        }
    }

    #[test]
    fn what_the_parser_refuses_or_the_pass_is_unsure_of_is_left_to_the_serde_pass() {
        let text = card();
        for (from, to) in [
            ("\"plain\"", "\"pl\u{1}ain\""),
            ("\"plain\"", r#""p\xlain""#),
            ("\"plain\"", r#""\ud83d""#),
            ("\"plain\"", r#""\ude00""#),
            ("\"plain\"", r#""\ud83dx""#),
            (r#""depth":4"#, r#""depth":04"#),
            (r#""depth":4"#, r#""depth":4e400"#),
            (r#""depth":4"#, r#""depth":-"#),
            (r#""depth":4"#, r#""depth":4."#),
            (r#""depth":4"#, r#""depth":12345678901234567890123"#),
            (r#""depth":4"#, r#""depth":tru"#),
            (r#""name":"A""#, r#""n\u0061me":"A""#),
            (r#""spec":"chara_card_v3""#, r#""spec":"chara_card_\u0076""#),
            (r#""data":{"#, r#""Data":1,"data":{"#),
            ("\"scan_depth\":2}", "\"scan_depth\":2,\"entries\":[]}"),
            ("\"scan_depth\":2}", "\"scan_depth\":2,}"),
        ] {
            let changed = text.replacen(from, to, 1);
            assert_ne!(changed, text);
            assert!(!agrees(&changed), "{from} -> {to}");
        }
        let deep = text.replacen(
            "\"plain\"",
            &format!("{}1{}", "[".repeat(100), "]".repeat(100)),
            1,
        );
        assert!(!agrees(&deep));
        assert!(!agrees(&format!("{text} x")));
        // The array's last string escaped: the serde pass finds no end (and no span).
        let last_escaped = text.replacen(r#""name" : "n" }"#, r#""name" : "\u006e" }"#, 1);
        assert_ne!(last_escaped, text);
        assert!(!agrees(&last_escaped));
        assert_eq!(serde_pass(&last_escaped), None);
    }

    /// Every text made by changing, putting in or taking out a byte or two of the card: the
    /// hand-written pass never answers otherwise than the serde pass.
    #[test]
    fn changed_texts_are_answered_as_the_serde_pass_answers() {
        let text = card();
        let bytes = text.as_bytes();
        let pieces: &[&[u8]] = &[
            b"\"", b"\\", b"{", b"}", b"[", b"]", b",", b":", b"0", b"-", b".", b"e", b"u", b"@",
            b" ", b"\n", b"\x01", b"x", b"\\u0040", b"\\ud800", b"null", b"1", b"\"\"", b"[]",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut answered = 0;
        for _ in 0..20_000 {
            let mut t = bytes.to_vec();
            for _ in 0..1 + next(2) {
                let at = next(t.len());
                match next(3) {
                    0 => {
                        t.remove(at);
                    }
                    1 => {
                        let p = pieces[next(pieces.len())];
                        t.splice(at..at, p.iter().copied());
                    }
                    _ => {
                        let p = pieces[next(pieces.len())];
                        let end = (at + p.len()).min(t.len());
                        t.splice(at..end, p.iter().copied());
                    }
                }
            }
            if let Ok(t) = std::str::from_utf8(&t) {
                answered += usize::from(agrees(t));
            }
        }
        assert!(answered > 1_000, "{answered}");
    }
}
