//! Reading option values from request objects, in `snake_case` or `camelCase`.

use crate::EmbedError;
use serde_json::Value;

/// `max_context` -> `maxContext`.
fn camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut up = false;
    for c in snake.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The option `snake` (or its camelCase spelling) of `obj`; `null` counts as absent.
pub(crate) fn get<'a>(obj: Option<&'a Value>, snake: &str) -> Option<&'a Value> {
    let o = obj?.as_object()?;
    o.get(snake)
        .or_else(|| o.get(&camel(snake)))
        .filter(|v| !v.is_null())
}

/// Checks that `request` is an object (or absent).
pub(crate) fn object<'a>(request: &'a Value, what: &str) -> Result<Option<&'a Value>, EmbedError> {
    match request {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(request)),
        other => Err(EmbedError::bad_input(format!(
            "{what} must be an object, found {}",
            type_name(other)
        ))),
    }
}

/// A string option.
pub(crate) fn string<'a>(
    obj: Option<&'a Value>,
    snake: &str,
) -> Result<Option<&'a str>, EmbedError> {
    match get(obj, snake) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(wrong(snake, "a string", other)),
    }
}

/// A boolean option.
pub(crate) fn boolean(obj: Option<&Value>, snake: &str) -> Result<Option<bool>, EmbedError> {
    match get(obj, snake) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(wrong(snake, "true or false", other)),
    }
}

/// A whole-number option of at least 0 (floats with no fraction are accepted).
pub(crate) fn count(obj: Option<&Value>, snake: &str) -> Result<Option<u64>, EmbedError> {
    match get(obj, snake) {
        None => Ok(None),
        Some(v) => whole(v)
            .and_then(|n| u64::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| wrong(snake, "a whole number of at least 0", v)),
    }
}

/// A whole number, from an integer or a float without fraction.
pub(crate) fn whole(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    n.as_i64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// A seed: any whole number from 0 to 2^64 - 1 (or a decimal string, for JavaScript).
pub(crate) fn seed(obj: Option<&Value>, snake: &str) -> Result<Option<u64>, EmbedError> {
    match get(obj, snake) {
        None => Ok(None),
        Some(v) => {
            let n = match v {
                Value::Number(n) => n.as_u64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
                        .map(|f| f as u64)
                }),
                Value::String(s) => s.trim().parse::<u64>().ok(),
                _ => None,
            };
            n.map(Some)
                .ok_or_else(|| wrong(snake, "a whole number from 0 to 2^64-1", v))
        }
    }
}

/// A macro dialect (`auto`, `risu`, `sillytavern`, `spec`; issue 17).
pub(crate) fn dialect(
    obj: Option<&Value>,
    snake: &str,
) -> Result<Option<ccv3_cbs::Dialect>, EmbedError> {
    match string(obj, snake)? {
        None => Ok(None),
        Some(s) => s
            .parse()
            .map(Some)
            .map_err(|e: String| EmbedError::bad_input(format!("option {snake}: {e}"))),
    }
}

/// The error for option `snake` of the wrong type.
pub(crate) fn wrong(snake: &str, want: &str, found: &Value) -> EmbedError {
    let shown = match found {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => format!(" {found}"),
        _ => String::new(),
    };
    EmbedError::bad_input(format!(
        "option {snake} must be {want}, found {}{shown}",
        type_name(found)
    ))
}

pub(crate) use ccv3::json::type_name;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snake_and_camel_keys_both_read() {
        let a = json!({"max_context": 10});
        let b = json!({"maxContext": 10, "scan_depth": null});
        assert_eq!(count(Some(&a), "max_context"), Ok(Some(10)));
        assert_eq!(count(Some(&b), "max_context"), Ok(Some(10)));
        assert_eq!(count(Some(&b), "scan_depth"), Ok(None));
        assert_eq!(count(Some(&json!({"n": 2.0})), "n"), Ok(Some(2)));
        assert_eq!(
            count(Some(&json!({"n": -1})), "n").unwrap_err().code,
            "bad-input"
        );
        assert_eq!(
            count(Some(&json!({"n": "2"})), "n").unwrap_err().code,
            "bad-input"
        );
    }

    #[test]
    fn seeds_take_big_numbers_and_strings() {
        let v = json!({"seed": 18446744073709551615u64, "s": "42", "neg": -1});
        assert_eq!(seed(Some(&v), "seed"), Ok(Some(u64::MAX)));
        assert_eq!(seed(Some(&v), "s"), Ok(Some(42)));
        assert!(seed(Some(&v), "neg").is_err());
    }
}
