//! JavaScript value rules that RisuAI's functions rely on: `Number()`, `parseInt`,
//! `toFixed`, `Math.round`, `String(x)`, `JSON.stringify` and RisuAI's array and dictionary
//! text forms (`parseArray`, `parseDict`, `makeArray`). Written from the ECMAScript rules, so
//! results print as RisuAI prints them.

use serde_json::{Map, Value};

use crate::expand::{fmt_num, num};

/// `Number(s)`: [`num`] plus the `0x`, `0o`, `0b` prefixes.
pub(crate) fn number(s: &str) -> f64 {
    let t = s.trim();
    let radix = match t.get(..2) {
        Some("0x" | "0X") => 16,
        Some("0o" | "0O") => 8,
        Some("0b" | "0B") => 2,
        _ => return num(s),
    };
    let digits = t.get(2..).unwrap_or_default();
    if digits.is_empty() {
        return f64::NAN;
    }
    let mut v = 0f64;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => v = v * f64::from(radix) + f64::from(d),
            None => return f64::NAN,
        }
    }
    v
}

/// `Number(v)` of a JSON value (`null` is 0, `true` 1, arrays by their text).
pub(crate) fn value_number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => number(s),
        Value::Array(_) => number(&to_js_string(v)),
        Value::Object(_) => f64::NAN,
    }
}

/// `parseInt(s, radix)` (radix 10 or 16; `0x` is read for both when no radix is forced).
pub(crate) fn parse_int(s: &str, radix: u32) -> f64 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, t.get(1..).unwrap_or_default()),
        Some(b'+') => (false, t.get(1..).unwrap_or_default()),
        _ => (false, t),
    };
    let (radix, t) = match t.get(..2) {
        Some("0x" | "0X") if radix == 16 || radix == 10 => (16, t.get(2..).unwrap_or_default()),
        _ => (radix, t),
    };
    let len = t.find(|c: char| !c.is_digit(radix)).unwrap_or(t.len());
    let digits = t.get(..len).unwrap_or_default();
    if digits.is_empty() {
        return f64::NAN;
    }
    // Rounded once, as JavaScript does: decimal text by the float parser, up to 32 hex digits
    // exactly through u128.
    let v = match radix {
        10 => digits.parse::<f64>().unwrap_or(f64::NAN),
        _ if digits.len() <= 32 => {
            u128::from_str_radix(digits, radix).map_or(f64::NAN, |n| n as f64)
        }
        _ => digits.chars().fold(0f64, |v, c| {
            v * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
        }),
    };
    if neg {
        -v
    } else {
        v
    }
}

/// `Math.round`: to the nearest integer, halves toward +Infinity.
pub(crate) fn round(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let f = x.floor();
    if x - f >= 0.5 {
        f + 1.0
    } else {
        f
    }
}

/// `x.toFixed(digits)`; `None` when `digits` is outside 0..=100 (a RangeError in JavaScript).
pub(crate) fn to_fixed(x: f64, digits: f64) -> Option<String> {
    let d = if digits.is_nan() { 0.0 } else { digits.trunc() };
    if !(0.0..=100.0).contains(&d) {
        return None;
    }
    let d = d as usize;
    if !x.is_finite() || x.abs() >= 1e21 {
        return Some(fmt_num(x));
    }
    let neg = x < 0.0;
    let a = x.abs();
    // JavaScript picks the larger of two equally near results; Rust's formatter rounds half to
    // even. The exact decimal expansion of a double shows the tie.
    let exact = format!("{a:.prec$}", prec = d + 40);
    let (keep, rest) = exact.split_at(exact.len() - 40);
    let tie = rest.starts_with('5') && rest.bytes().skip(1).all(|b| b == b'0');
    let mut s = if tie {
        increment_decimal(keep.trim_end_matches('.'))
    } else {
        format!("{a:.d$}")
    };
    if d > 0 && !s.contains('.') {
        // `increment_decimal` of a text ending in '.' (d == 0 never reaches here).
        s.push('.');
    }
    let zero = s.bytes().all(|b| b == b'0' || b == b'.');
    Some(if neg && !zero { format!("-{s}") } else { s })
}

/// Adds one unit in the last place of a decimal text (`1.29` -> `1.30`, `9.9` -> `10.0`).
fn increment_decimal(s: &str) -> String {
    let mut bytes = s.as_bytes().to_vec();
    let mut i = bytes.len();
    loop {
        if i == 0 {
            bytes.insert(0, b'1');
            break;
        }
        i -= 1;
        match bytes.get(i).copied() {
            Some(b'.') => continue,
            Some(b'9') => {
                if let Some(b) = bytes.get_mut(i) {
                    *b = b'0';
                }
            }
            Some(b) => {
                if let Some(slot) = bytes.get_mut(i) {
                    *slot = b + 1;
                }
                break;
            }
            None => break,
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}

/// `n.toString(16)` of an integer-valued number (`parseInt` results are integers).
pub(crate) fn to_hex(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return fmt_num(n);
    }
    let sign = if n < 0.0 { "-" } else { "" };
    let a = n.abs().trunc();
    if a < 2f64.powi(120) {
        return format!("{sign}{:x}", a as u128);
    }
    // Big doubles are mantissa * 2^exp with exp >= 68 here: hex digits then zeros.
    let bits = a.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    let shift = u32::try_from(exp.rem_euclid(4)).unwrap_or(0);
    let zeros = usize::try_from(exp.div_euclid(4)).unwrap_or(0);
    format!("{sign}{:x}{}", mantissa << shift, "0".repeat(zeros))
}

/// The UTF-16 code units of `s` (JavaScript string indexing).
pub(crate) fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// Text from UTF-16 code units; a lone surrogate (which a Rust string cannot hold) becomes
/// U+FFFD.
pub(crate) fn from_utf16(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// `String(v)` of a JSON value, as `Array.prototype.join` and template strings print it:
/// strings as they are, numbers like JavaScript, `null` empty inside arrays, arrays joined
/// with `,`, objects `[object Object]`.
pub(crate) fn to_js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => fmt_num(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Null => String::new(),
                other => to_js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// A function result from a JSON value: strings as they are, other values as JSON text.
/// (RisuAI hands non-string values to its text builder, which prints `undefined`; this crate
/// prints the value.)
pub(crate) fn result_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => stringify(other),
    }
}

/// `JSON.stringify(v)`: no spaces, numbers like JavaScript, object keys that are array
/// indices first in ascending order, then the others in insertion order.
pub(crate) fn stringify(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.is_finite() {
                out.push_str(&fmt_num(f));
            } else {
                out.push_str("null");
            }
        }
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            for (k, v) in ordered_entries(map) {
                if !first {
                    out.push(',');
                }
                first = false;
                write_string(k, out);
                out.push(':');
                write_json(v, out);
            }
            out.push('}');
        }
    }
}

/// JavaScript's property order: array-index keys ascending, then the rest as inserted.
fn ordered_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut index: Vec<(u32, &String, &Value)> = Vec::new();
    let mut rest = Vec::new();
    for (k, v) in map {
        match array_index(k) {
            Some(i) => index.push((i, k, v)),
            None => rest.push((k, v)),
        }
    }
    index.sort_by_key(|e| e.0);
    index
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(rest)
        .collect()
}

/// A canonical array index (`0`, `17`, not `01` or `4294967295`).
pub(crate) fn array_index(k: &str) -> Option<u32> {
    if k.is_empty() || (k.len() > 1 && k.starts_with('0')) || !k.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    k.parse::<u32>().ok().filter(|i| *i < u32::MAX)
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// RisuAI's `parseArray`: a JSON array, else the text split on `§`.
pub(crate) fn parse_array(text: &str) -> Vec<Value> {
    if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) {
        return items;
    }
    text.split('§')
        .map(|s| Value::String(s.to_owned()))
        .collect()
}

/// RisuAI's `parseDict`: any JSON value, else `{}`.
pub(crate) fn parse_dict(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::Object(Map::new()))
}

/// RisuAI's `makeArray`: JSON text of the array, with `::` in strings written as the text
/// `\u003A\u003A` (so an array never splits the arguments of the macro it is passed to).
pub(crate) fn make_array(items: &[Value]) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match item {
            Value::String(s) if s.contains("::") => {
                write_string(&s.replace("::", "\\u003A\\u003A"), &mut out);
            }
            other => write_json(other, &mut out),
        }
    }
    out.push(']');
    out
}

/// [`make_array`] of strings.
pub(crate) fn make_string_array<S: AsRef<str>>(items: &[S]) -> String {
    let values: Vec<Value> = items
        .iter()
        .map(|s| Value::String(s.as_ref().to_owned()))
        .collect();
    make_array(&values)
}

/// JavaScript truthiness of a JSON value.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `ToIntegerOrInfinity(Number(s))` clamped into `i64`.
pub(crate) fn to_integer(x: f64) -> i64 {
    if x.is_nan() {
        0
    } else {
        x.trunc().clamp(i64::MIN as f64, i64::MAX as f64) as i64
    }
}

/// A relative index as `Array.prototype.at` / `splice` read it: negative counts from the end;
/// the result is clamped into `0..=len`.
pub(crate) fn relative_index(x: f64, len: usize) -> usize {
    let i = to_integer(x);
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let r = if i < 0 {
        (len_i + i).max(0)
    } else {
        i.min(len_i)
    };
    usize::try_from(r).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn to_fixed_rounds_ties_up_like_javascript() {
        assert_eq!(to_fixed(2.5, 0.0).as_deref(), Some("3"));
        assert_eq!(to_fixed(1.005, 2.0).as_deref(), Some("1.00"));
        assert_eq!(to_fixed(1.23456, 2.0).as_deref(), Some("1.23"));
        assert_eq!(to_fixed(-1.5, 0.0).as_deref(), Some("-2"));
        assert_eq!(to_fixed(0.125, 2.0).as_deref(), Some("0.13"));
        assert_eq!(to_fixed(9.95, 1.0).as_deref(), Some("9.9"));
        assert_eq!(to_fixed(99.5, 0.0).as_deref(), Some("100"));
        assert_eq!(to_fixed(-0.0001, 2.0).as_deref(), Some("0.00"));
        assert_eq!(to_fixed(1e21, 2.0).as_deref(), Some("1e+21"));
        assert_eq!(to_fixed(f64::NAN, 2.0).as_deref(), Some("NaN"));
        assert_eq!(to_fixed(1.0, 101.0), None);
        assert_eq!(to_fixed(1.0, -1.0), None);
    }

    #[test]
    fn numbers_read_and_print_like_javascript() {
        assert_eq!(number("0x1F"), 31.0);
        assert!(number("-0x1F").is_nan());
        assert_eq!(parse_int("ff", 16), 255.0);
        assert_eq!(parse_int("  12px", 10), 12.0);
        assert_eq!(parse_int("0x10", 10), 16.0);
        assert!(parse_int("zz", 16).is_nan());
        assert_eq!(round(2.5), 3.0);
        assert_eq!(round(-2.5), -2.0);
        assert_eq!(to_hex(255.0), "ff");
        assert_eq!(to_hex(-255.0), "-ff");
        assert_eq!(to_hex(2f64.powi(200)), format!("1{}", "0".repeat(50)));
    }

    #[test]
    fn json_text_follows_json_stringify() {
        let v = json!({"b": 1.0, "2": [1.5, null, "x\u{1}"], "1": true});
        assert_eq!(
            stringify(&v),
            r#"{"1":true,"2":[1.5,null,"x\u0001"],"b":1}"#
        );
        assert_eq!(
            make_string_array(&["a::b", "c"]),
            r#"["a\\u003A\\u003Ab","c"]"#
        );
        assert_eq!(parse_array("a§b").len(), 2);
        assert_eq!(parse_array("").len(), 1);
        assert_eq!(to_js_string(&json!([1, null, [2, 3]])), "1,,2,3");
    }
}
