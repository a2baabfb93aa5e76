//! RisuAI's arrays and dictionaries, [`crate::Family::Collections`] (its `cbs.ts`, dialect
//! `risu`).
//!
//! Arrays and dictionaries are JSON text. An array argument that is not a JSON array is split
//! on `§` (RisuAI's older form; the empty text is one empty item). Arrays are written as JSON
//! with `::` inside strings written `\u003A\u003A`, so that an array passed on never splits the
//! arguments of the next macro (RisuAI's `makeArray`). An item that is not a string is given
//! as JSON text (RisuAI prints `undefined` for those).
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{makearray::A::B...}}` (`array`, `a`) | `["A","B",...]` |
//! | `{{makedict::K=V::...}}` (`dict`, `d`, `makeobject`, `object`, `o`) | `{"K":"V",...}`; arguments without `=` are skipped |
//! | `{{arraylength::ARRAY}}` | the number of items |
//! | `{{arrayelement::ARRAY::I}}` | item `I` (negative counts from the end), else `null` |
//! | `{{dictelement::DICT::K}}` (`objectelement`) | the value of `K`, else `null` |
//! | `{{element::JSON::K1::K2...}}` (`ele`) | the value down the path, else `null` |
//! | `{{objectassert::DICT::K::V}}` (`dictassert`, `object_assert`) | `DICT` with `K` set to `V` unless it has a truthy value |
//! | `{{arrayshift::ARRAY}}`, `{{arraypop::ARRAY}}` | without the first / last item |
//! | `{{arraypush::ARRAY::V}}` | with `V` appended |
//! | `{{arraysplice::ARRAY::START::N::V}}` | `N` items from `START` replaced by `V` |
//! | `{{arrayassert::ARRAY::I::V}}` | with `V` at `I` if `I` is past the end (the gap is `null`s) |
//! | `{{range::[N]}}`, `{{range::[START,END,STEP]}}` | the numbers from `START` (0) below `END` by `STEP` (1) |
//! | `{{filter::ARRAY::TYPE}}` | `all` (default): no empty items and no repeats; `nonempty`; `unique` |
//! | `{{all::...}}`, `{{any::...}}` | `1` if every / some item is `1` (an array, or several arguments) |
//! | `{{min::...}}`, `{{max::...}}`, `{{sum::...}}`, `{{average::...}}` | of the numbers (non-numbers count as 0) |
//!
//! Bounds: `range` spends a step per item and stops at the output bound; `arrayassert` and
//! `objectassert` refuse an index whose `null`s would pass it; the other results are at most a
//! few times their arguments.
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables};
//! let risu = |s: &str| Template::parse(s).expand_with(Registry::dialect_ref(Dialect::Risu),
//!     &Limits::default(), &Context::new(), &mut Variables::new(), Mode::Prompt).text;
//! assert_eq!(risu("{{makearray::a::b::c}}"), r#"["a","b","c"]"#);
//! assert_eq!(risu("{{makedict::name=John::age=25}}"), r#"{"name":"John","age":"25"}"#);
//! assert_eq!(risu(r#"{{arrayelement::["a","b","c"]::1}}"#), "b");
//! // `}}` inside the JSON would close the macro (in RisuAI too): keep a space between.
//! assert_eq!(risu(r#"{{element::{"user":{"name":"John"} }::user::name}}"#), "John");
//! assert_eq!(risu(r#"{{arraysplice::["a","b","c"]::1::1::x}}"#), r#"["a","x","c"]"#);
//! assert_eq!(risu("{{range::[2,8,2]}}"), r#"["2","4","6"]"#);
//! assert_eq!(risu(r#"{{filter::["a","","a"]::unique}}"#), r#"["a",""]"#);
//! assert_eq!(risu("{{sum::1::2::3}} {{average::2::4::6}} {{min::5::2::8}}"), "6 4 2");
//! assert_eq!(risu(r#"{{max::[5,2,8]}} {{all::1::1::1}} {{any::0::1::0}} {{arraylength::["a","b","c"]}}"#), "8 1 1 3");
//! assert_eq!(risu(r#"{{arrayshift::["a","b","c"]}} {{arraypop::["a","b","c"]}} {{arraypush::["a","b"]::c}}"#),
//!     r#"["b","c"] ["a","b"] ["a","b","c"]"#);
//! assert_eq!(risu(r#"{{arrayassert::["a"]::2::b}}"#), r#"["a",null,"b"]"#);
//! assert_eq!(risu(r#"{{dictelement::{"name":"John"}::name}} {{objectelement::{"a":1}::b}}"#), "John null");
//! assert_eq!(risu(r#"{{objectassert::{"a":1}::b::2}} {{dictassert::{"a":1}::a::2}}"#), r#"{"a":1,"b":"2"} {"a":1}"#);
//! assert_eq!(risu("{{array::x}}{{a::y}}{{dict::k=v}}{{d::k=v}}{{makeobject::k=v}}{{object::k=v}}{{o::k=v}}"),
//!     r#"["x"]["y"]{"k":"v"}{"k":"v"}{"k":"v"}{"k":"v"}{"k":"v"}"#);
//! assert_eq!(risu(r#"{{ele::["a","b"]::1}}"#), "b");
//! ```

use serde_json::{Map, Value};

use super::bool_str;
use super::js;
use super::strings::{opt, or_undefined};
use crate::expand::{fmt_num, Call};
use crate::registry::{Family, Registry};

fn array_arg(c: &Call<'_, '_>) -> Option<Vec<Value>> {
    opt(c, 0).map(js::parse_array)
}

/// The values of `all`/`any`/`min`/...: the arguments when there are several, else the array
/// in the first.
fn values(c: &Call<'_, '_>) -> Vec<Value> {
    if c.raw_args().len() > 1 {
        c.raw_args()
            .iter()
            .map(|s| Value::String(s.clone()))
            .collect()
    } else {
        js::parse_array(c.raw_arg(0))
    }
}

fn numbers(c: &Call<'_, '_>) -> Vec<f64> {
    values(c)
        .iter()
        .map(|v| {
            let n = js::value_number(v);
            if n.is_nan() {
                0.0
            } else {
                n
            }
        })
        .collect()
}

fn is_one(v: &Value) -> bool {
    matches!(v, Value::String(s) if s == "1")
}

/// Sets `items[index] = value`, filling the gap with `null`, unless the result would pass the
/// output bound (then `false`, with a warning).
fn assign(c: &mut Call<'_, '_>, items: &mut Vec<Value>, index: usize, value: Value) -> bool {
    if index >= items.len() {
        let gap = index - items.len();
        if c.too_big(gap.saturating_mul(5)) {
            return false;
        }
        items.resize(index, Value::Null);
        items.push(value);
    } else if let Some(slot) = items.get_mut(index) {
        *slot = value;
    }
    true
}

/// Adds RisuAI's array and dictionary functions.
///
/// Longer than 150 lines on purpose: a table, one registration (name and handler) per macro.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::collections::register(&mut registry);
/// assert!(registry.contains("makearray"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Collections;
    r.register_all(f, &["makearray", "array", "a"], |c| {
        Some(js::make_string_array(c.raw_args()))
    });
    r.register_all(
        f,
        &["makedict", "dict", "d", "makeobject", "object", "o"],
        |c| {
            let mut out = Map::new();
            for a in c.raw_args() {
                if let Some((k, v)) = a.split_once('=') {
                    out.insert(k.to_owned(), Value::String(v.to_owned()));
                }
            }
            Some(js::stringify(&Value::Object(out)))
        },
    );
    r.register_all(f, &["arraylength"], |c| {
        Some(array_arg(c)?.len().to_string())
    });
    r.register_all(f, &["arrayelement"], |c| {
        let items = array_arg(c)?;
        let i = js::to_integer(js::number(or_undefined(c, 1)));
        let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
        let at = if i < 0 { len.saturating_add(i) } else { i };
        Some(
            usize::try_from(at)
                .ok()
                .and_then(|at| items.get(at))
                .map_or_else(|| "null".to_owned(), js::result_text),
        )
    });
    r.register_all(f, &["dictelement", "objectelement"], |c| {
        let dict = js::parse_dict(opt(c, 0)?);
        let key = or_undefined(c, 1);
        Some(property(&dict, key).map_or_else(|| "null".to_owned(), js::result_text))
    });
    r.register_all(f, &["element", "ele"], |c| {
        let mut current = Value::String(opt(c, 0)?.to_owned());
        for key in c.raw_args().iter().skip(1) {
            // A string is read as JSON; a value found on the way is walked into (as RisuAI
            // documents; its code parses it again and gives `null`).
            let parsed: Value = match current {
                Value::String(text) => match serde_json::from_str(&text) {
                    Ok(v) => v,
                    Err(_) => return Some("null".to_owned()),
                },
                other => other,
            };
            if !matches!(parsed, Value::Object(_) | Value::Array(_)) {
                return Some("null".to_owned());
            }
            match property(&parsed, key) {
                Some(v) if js::truthy(v) => current = v.clone(),
                _ => return Some("null".to_owned()),
            }
        }
        Some(js::result_text(&current))
    });
    r.register_all(f, &["objectassert", "dictassert"], |c| {
        let mut dict = js::parse_dict(opt(c, 0)?);
        let key = or_undefined(c, 1).to_owned();
        let value = Value::String(or_undefined(c, 2).to_owned());
        let set = !property(&dict, &key).is_some_and(js::truthy);
        match &mut dict {
            Value::Null => return None,
            Value::Object(map) if set => {
                map.insert(key, value);
            }
            Value::Array(items) if set => {
                if let Some(i) = js::array_index(&key) {
                    if !assign(c, items, i as usize, value) {
                        return None;
                    }
                }
            }
            _ => {}
        }
        Some(js::stringify(&dict))
    });
    r.register_all(f, &["arrayshift"], |c| {
        let mut items = array_arg(c)?;
        if !items.is_empty() {
            items.remove(0);
        }
        Some(js::make_array(&items))
    });
    r.register_all(f, &["arraypop"], |c| {
        let mut items = array_arg(c)?;
        items.pop();
        Some(js::make_array(&items))
    });
    r.register_all(f, &["arraypush"], |c| {
        let mut items = array_arg(c)?;
        items.push(opt(c, 1).map_or(Value::Null, |s| Value::String(s.to_owned())));
        Some(js::make_array(&items))
    });
    r.register_all(f, &["arraysplice"], |c| {
        let mut items = array_arg(c)?;
        let len = items.len();
        let start = js::relative_index(js::number(or_undefined(c, 1)), len);
        let count = js::to_integer(js::number(or_undefined(c, 2))).max(0);
        let count = usize::try_from(count)
            .unwrap_or(usize::MAX)
            .min(len - start);
        let insert = opt(c, 3).map_or(Value::Null, |s| Value::String(s.to_owned()));
        items.splice(start..start + count, [insert]);
        Some(js::make_array(&items))
    });
    r.register_all(f, &["arrayassert"], |c| {
        let mut items = array_arg(c)?;
        let index = js::number(or_undefined(c, 1));
        let value = opt(c, 2).map_or(Value::Null, |s| Value::String(s.to_owned()));
        // Only a true array index past the end adds an item; others set a property JSON
        // does not show.
        if index >= items.len() as f64
            && index.fract() == 0.0
            && index < f64::from(u32::MAX)
            && !assign(c, &mut items, index as usize, value)
        {
            return None;
        }
        Some(js::make_array(&items))
    });
    r.register_all(f, &["range"], range);
    r.register_all(f, &["filter"], |c| {
        let items = array_arg(c)?;
        let kind = match opt(c, 1) {
            Some("nonempty") => 1,
            Some("unique") => 2,
            _ => 0,
        };
        let first_index = |v: &Value, i: usize| -> bool {
            match v {
                Value::Array(_) | Value::Object(_) => true,
                _ => items.iter().position(|x| x == v) == Some(i),
            }
        };
        let empty = |v: &Value| matches!(v, Value::String(s) if s.is_empty());
        c.spend(items.len() as u64);
        let kept: Vec<Value> = items
            .iter()
            .enumerate()
            .filter(|(i, v)| match kind {
                0 => !empty(v) && first_index(v, *i),
                1 => !empty(v),
                _ => first_index(v, *i),
            })
            .map(|(_, v)| v.clone())
            .collect();
        Some(js::make_array(&kept))
    });
    r.register_all(f, &["all"], |c| {
        Some(bool_str(values(c).iter().all(is_one)))
    });
    r.register_all(f, &["any"], |c| {
        Some(bool_str(values(c).iter().any(is_one)))
    });
    r.register_all(f, &["min"], |c| {
        Some(fmt_num(
            numbers(c).into_iter().fold(f64::INFINITY, f64::min),
        ))
    });
    r.register_all(f, &["max"], |c| {
        Some(fmt_num(
            numbers(c).into_iter().fold(f64::NEG_INFINITY, f64::max),
        ))
    });
    r.register_all(f, &["sum"], |c| {
        Some(fmt_num(numbers(c).into_iter().sum::<f64>()))
    });
    r.register_all(f, &["average"], |c| {
        let n = numbers(c);
        Some(fmt_num(n.iter().sum::<f64>() / n.len() as f64))
    });
}

/// `value[key]` for a JSON object or array.
fn property<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => js::array_index(key).and_then(|i| items.get(i as usize)),
        _ => None,
    }
}

/// `{{range::[END]}}` / `{{range::[START,END,STEP]}}`: every item costs a step, and the list
/// stops at the output bound (RisuAI loops forever on a step of 0 or less).
fn range(c: &mut Call<'_, '_>) -> Option<String> {
    let spec = js::parse_array(opt(c, 0)?);
    let n = |i: usize| spec.get(i).map_or(f64::NAN, js::value_number);
    let (start, end) = if spec.len() > 1 {
        (n(0), n(1))
    } else {
        (0.0, n(0))
    };
    let step = if spec.len() > 2 { n(2) } else { 1.0 };
    let limit = c.limits().max_output;
    let mut out = String::from("[");
    let mut i = start;
    let mut count = 0u64;
    while i < end {
        count += 1;
        if count.is_multiple_of(1024) && !c.spend(1024) {
            return None;
        }
        if out.len() > 1 {
            out.push(',');
        }
        out.push('"');
        out.push_str(&fmt_num(i));
        out.push('"');
        if out.len() > limit {
            c.too_big(out.len());
            return None;
        }
        i += step;
    }
    out.push(']');
    Some(out)
}
