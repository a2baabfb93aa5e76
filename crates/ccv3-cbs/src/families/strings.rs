//! RisuAI's string functions, [`crate::Family::Strings`] (its `cbs.ts`, dialect `risu`).
//!
//! Arguments are read as written, untrimmed (RisuAI does not trim them). Booleans are `1`/`0`.
//! A missing argument that RisuAI would read as JavaScript's `undefined` is the text
//! `undefined` where JavaScript converts it (`{{contains::abc}}` looks for `undefined`), and
//! the macro stays text where JavaScript would throw (a missing first argument).
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{startswith::A::B}}`, `{{endswith::A::B}}`, `{{contains::A::B}}` | `1` if `A` starts with / ends with / contains `B` |
//! | `{{replace::A::B::C}}` | `A` with every `B` replaced by `C` |
//! | `{{split::A::B}}` | `A` split on `B`, as a JSON array |
//! | `{{join::ARRAY::B}}`, `{{spread::ARRAY}}` | the items joined with `B` (default `,`) / with `::` |
//! | `{{trim::A}}` | `A` without surrounding whitespace |
//! | `{{length::A}}` | length in UTF-16 units, as JavaScript counts |
//! | `{{lower::A}}`, `{{upper::A}}`, `{{capitalize::A}}` | case changes (`capitalize`: first character) |
//! | `{{tonumber::A}}` | only the digits, `.` and whitespace of `A` |
//! | `{{iserror::A}}` | `1` if `A` starts with `error:` (any case) |
//! | `{{unicodeencode::A::I}}` (`unicode_encode`) | UTF-16 code of `A` at `I` (default 0) |
//! | `{{unicodedecode::N}}` (`unicode_decode`) | the character of UTF-16 code `N` |
//! | `{{u::HEX}}` (`unicodedecodefromhex`), `{{ue::HEX}}` (`unicodeencodefromhex`) | the character of hex code `HEX` |
//! | `{{fromhex::HEX}}`, `{{tohex::N}}` | hex to decimal, decimal to hex |
//! | `{{hash::A}}` | a 7-digit number from `A`, RisuAI's hash (same text, same number) |
//! | `{{xor::A}}` (`xorencrypt`, `xorencode`, `xore`), `{{xordecrypt::A}}` (`xordecode`, `xord`) | UTF-8 bytes xor 0xFF, as base64 / back |
//! | `{{crypt::A::N}}` (`crypto`, `caesar`, `encrypt`, `decrypt`) | every UTF-16 unit shifted by `N` (default 32768, its own inverse) |
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables};
//! let risu = |s: &str| Template::parse(s).expand_with(Registry::dialect_ref(Dialect::Risu),
//!     &Limits::default(), &Context::new(), &mut Variables::new(), Mode::Prompt).text;
//! assert_eq!(risu("{{replace::Hello World::o::0}}"), "Hell0 W0rld");
//! assert_eq!(risu("{{split::apple,banana,cherry::,}}"), r#"["apple","banana","cherry"]"#);
//! assert_eq!(risu(r#"{{join::["apple","banana"]::, }}"#), "apple, banana");
//! assert_eq!(risu("{{upper::Hello world}} {{capitalize::hello world}}"), "HELLO WORLD Hello world");
//! assert_eq!(risu("{{tonumber::abc123.45def}} {{length::Hello}}"), "123.45 5");
//! assert_eq!(risu("{{fromhex::FF}} {{tohex::255}} {{u::41}} {{unicodeencode::A}}"), "255 ff A 65");
//! assert_eq!(risu("{{xordecrypt::{{xor::hello}}}}"), "hello");
//! assert_eq!(risu("{{startswith::Hello World::Hello}}{{endswith::Hello World::World}}{{contains::Hello World::lo Wo}}"), "111");
//! assert_eq!(risu("{{lower::Hello WORLD}} {{iserror::Error: failed}}"), "hello world 1");
//! assert_eq!(risu(r#"{{spread::["a","b","c"]}}"#), "a::b::c");
//! assert_eq!(risu("{{unicodedecode::65}}{{unicodedecodefromhex::42}}{{ue::43}}{{unicodeencodefromhex::44}}"), "ABCD");
//! assert_eq!(risu("{{hash::hello}}"), "0121468");
//! assert_eq!(risu("{{xorencrypt::a}} {{xorencode::a}} {{xore::a}} {{xordecode::ng==}} {{xord::ng==}}"), "ng== ng== ng== a a");
//! assert_eq!(risu("{{crypt::{{crypto::abc}}}} {{caesar::a::1}} {{decrypt::{{encrypt::abc::5}}::-5}}"), "abc b abc");
//! ```

use base64_simd::STANDARD;

use super::bool_str;
use super::js;
use crate::expand::{fmt_num, Call};
use crate::registry::{Family, Registry};

/// Argument `i` as JavaScript sees `args[i]`: `None` when missing.
pub(crate) fn opt<'c>(c: &Call<'c, '_>, i: usize) -> Option<&'c str> {
    c.raw_args().get(i).map(String::as_str)
}

/// Argument `i`, or the text `undefined` (what JavaScript makes of a missing argument).
pub(crate) fn or_undefined<'c>(c: &Call<'c, '_>, i: usize) -> &'c str {
    opt(c, i).unwrap_or("undefined")
}

fn two(c: &Call<'_, '_>, f: fn(&str, &str) -> bool) -> Option<String> {
    let a = opt(c, 0)?;
    Some(bool_str(f(a, or_undefined(c, 1))))
}

/// `String.fromCharCode(n)`: `n` modulo 2^16 as one UTF-16 unit.
pub(crate) fn from_char_code(n: f64) -> String {
    let unit = if n.is_finite() {
        n.trunc().rem_euclid(65536.0) as u16
    } else {
        0
    };
    js::from_utf16(&[unit])
}

/// RisuAI's `pickHashRand(cid, word)`: a djb2-style hash of the UTF-16 units seeds an sfc32
/// generator, advanced `cid % 1000` times; a number in `[0, 1)`.
pub(crate) fn pick_hash_rand(cid: u64, word: &str) -> f64 {
    let units = js::utf16(word);
    let mut h: f64 = 5515.0;
    let mut seeds = [0u32; 4];
    for seed in &mut seeds {
        for &u in &units {
            // `((h << 5) + h) + code`: the shift works on h as a 32-bit integer, the sums on
            // doubles.
            let shifted = to_int32(h).wrapping_shl(5);
            h = f64::from(shifted) + h + f64::from(u);
        }
        *seed = to_int32(h) as u32;
    }
    let [mut a, mut b, mut c, mut d] = seeds;
    let mut next = || {
        let t = a.wrapping_add(b).wrapping_add(d);
        d = d.wrapping_add(1);
        a = b ^ (b >> 9);
        b = c.wrapping_add(c << 3);
        c = c.rotate_left(21);
        c = c.wrapping_add(t);
        f64::from(t) / 4_294_967_296.0
    };
    for _ in 0..cid % 1000 {
        next();
    }
    next()
}

/// ECMAScript `ToInt32`.
pub(crate) fn to_int32(x: f64) -> i32 {
    if !x.is_finite() {
        return 0;
    }
    x.trunc().rem_euclid(4_294_967_296.0) as u32 as i32
}

/// JavaScript whitespace (what `Number(" ")` reads as 0).
fn js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// Adds RisuAI's string functions.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::strings::register(&mut registry);
/// assert!(registry.contains("startswith"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Strings;
    r.register_all(f, &["startswith"], |c| two(c, |a, b| a.starts_with(b)));
    r.register_all(f, &["endswith"], |c| two(c, |a, b| a.ends_with(b)));
    r.register_all(f, &["contains"], |c| two(c, |a, b| a.contains(b)));
    r.register_all(f, &["replace"], |c| {
        let a = opt(c, 0)?;
        let (from, to) = (or_undefined(c, 1), or_undefined(c, 2));
        let count = if from.is_empty() {
            a.chars().count() + 1
        } else {
            a.matches(from).count()
        };
        let size = a.len().saturating_add(count.saturating_mul(to.len()));
        if c.too_big(size) {
            return None;
        }
        Some(a.replace(from, to))
    });
    r.register_all(f, &["split"], |c| {
        let a = opt(c, 0)?;
        let parts: Vec<&str> = match opt(c, 1) {
            None => vec![a],
            Some("") => a
                .char_indices()
                .map(|(i, ch)| a.get(i..i + ch.len_utf8()).unwrap_or_default())
                .collect(),
            Some(sep) => a.split(sep).collect(),
        };
        // Each part costs its quotes and comma at most six times its length when escaped.
        if c.too_big(a.len().saturating_mul(6).saturating_add(parts.len() * 3)) {
            return None;
        }
        Some(js::make_string_array(&parts))
    });
    r.register_all(f, &["join"], |c| {
        let items = js::parse_array(opt(c, 0)?);
        let sep = opt(c, 1).unwrap_or(",").to_owned();
        join(c, &items, &sep)
    });
    r.register_all(f, &["spread"], |c| {
        let items = js::parse_array(opt(c, 0)?);
        join(c, &items, "::")
    });
    r.register_all(f, &["length"], |c| {
        Some(opt(c, 0)?.encode_utf16().count().to_string())
    });
    r.register_all(f, &["lower"], |c| Some(opt(c, 0)?.to_lowercase()));
    r.register_all(f, &["upper"], |c| Some(opt(c, 0)?.to_uppercase()));
    r.register_all(f, &["capitalize"], |c| {
        let a = opt(c, 0)?;
        let mut chars = a.chars();
        Some(match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => String::new(),
        })
    });
    r.register_all(f, &["tonumber"], |c| {
        Some(
            opt(c, 0)?
                .chars()
                .filter(|ch| ch.is_ascii_digit() || *ch == '.' || js_space(*ch))
                .collect(),
        )
    });
    r.register_all(f, &["iserror"], |c| {
        Some(bool_str(opt(c, 0)?.to_lowercase().starts_with("error:")))
    });
    r.register_all(f, &["unicodeencode"], |c| {
        let a = opt(c, 0)?;
        let i = match opt(c, 1) {
            Some(s) if !s.is_empty() => js::number(s),
            _ => 0.0,
        };
        let i = if i.is_nan() { 0.0 } else { i.trunc() };
        if i < 0.0 {
            return Some("NaN".to_owned());
        }
        Some(match a.encode_utf16().nth(i as usize) {
            Some(u) => u.to_string(),
            None => "NaN".to_owned(),
        })
    });
    r.register_all(f, &["unicodedecode"], |c| {
        Some(from_char_code(js::number(or_undefined(c, 0))))
    });
    r.register_all(
        f,
        &["u", "unicodedecodefromhex", "ue", "unicodeencodefromhex"],
        |c| Some(from_char_code(js::parse_int(or_undefined(c, 0), 16))),
    );
    r.register_all(f, &["fromhex"], |c| {
        Some(fmt_num(js::parse_int(or_undefined(c, 0), 16)))
    });
    r.register_all(f, &["tohex"], |c| {
        Some(js::to_hex(js::parse_int(or_undefined(c, 0), 10)))
    });
    r.register_all(f, &["hash"], |c| {
        let a = opt(c, 0)?;
        let n = pick_hash_rand(0, a) * 10_000_000.0 + 1.0;
        let s = js::to_fixed(n, 0.0)?;
        Some(format!("{s:0>7}"))
    });
    r.register_all(f, &["xor", "xorencrypt", "xorencode", "xore"], |c| {
        let bytes: Vec<u8> = opt(c, 0)?.bytes().map(|b| b ^ 0xFF).collect();
        Some(STANDARD.encode_to_string(&bytes))
    });
    r.register_all(f, &["xordecrypt", "xordecode", "xord"], |c| {
        let text: String = opt(c, 0)?
            .chars()
            .filter(|ch| !ch.is_whitespace())
            .collect();
        let mut bytes = base64_simd::forgiving_decode_to_vec(text.as_bytes()).unwrap_or_default();
        for b in &mut bytes {
            *b ^= 0xFF;
        }
        Some(String::from_utf8_lossy(&bytes).into_owned())
    });
    r.register_all(
        f,
        &["crypt", "crypto", "caesar", "encrypt", "decrypt"],
        |c| {
            let a = opt(c, 0)?;
            let shift = match opt(c, 1) {
                Some(s) if !s.is_empty() => js::number(s),
                _ => 32768.0,
            };
            let shift = if shift.is_nan() { 32768.0 } else { shift };
            let units: Vec<u16> = a
                .encode_utf16()
                .map(|u| {
                    let v = f64::from(u) + shift;
                    if v.is_finite() {
                        v.trunc().rem_euclid(65536.0) as u16
                    } else {
                        0
                    }
                })
                .collect();
            Some(js::from_utf16(&units))
        },
    );
}

/// `Array.prototype.join`, refused past the output bound.
fn join(c: &mut Call<'_, '_>, items: &[serde_json::Value], sep: &str) -> Option<String> {
    let parts: Vec<String> = items
        .iter()
        .map(|v| match v {
            serde_json::Value::Null => String::new(),
            other => js::to_js_string(other),
        })
        .collect();
    let size = parts
        .iter()
        .map(String::len)
        .sum::<usize>()
        .saturating_add(sep.len().saturating_mul(parts.len()));
    if c.too_big(size) {
        return None;
    }
    Some(parts.join(sep))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int32_and_hash_follow_javascript() {
        assert_eq!(to_int32(4_294_967_296.0 + 5.0), 5);
        assert_eq!(to_int32(2_147_483_648.0), i32::MIN);
        let a = pick_hash_rand(0, "hello");
        assert!((0.0..1.0).contains(&a));
        assert_eq!(a, pick_hash_rand(0, "hello"));
        assert_ne!(a, pick_hash_rand(0, "hellp"));
    }
}
