//! Math and comparison, [`crate::Family::Math`]. Booleans are `1` and `0` (RisuAI).
//!
//! `{{calc::expr}}` and `{{? expr}}` evaluate an arithmetic expression:
//!
//! ```text
//! expr    = or
//! or      = and ( "||" and )*
//! and     = eq ( "&&" eq )*
//! eq      = cmp ( ( "==" | "=" | "!=" ) cmp )*
//! cmp     = add ( ( "<" | "<=" | ">" | ">=" ) add )*
//! add     = mul ( ( "+" | "-" ) mul )*
//! mul     = pow ( ( "*" | "/" | "%" ) pow )*
//! pow     = unary ( "^" pow )?            (right associative)
//! unary   = ( "-" | "+" | "!" ) unary | primary
//! primary = number | "(" expr ")"
//! ```
//!
//! Numbers are decimal (`12`, `3.5`, `.5`). Results print like JavaScript numbers (`3`,
//! `0.5`, `Infinity`); a malformed expression, or one nested deeper than 64 levels, gives
//! `NaN`. Nonzero is true for `&&`, `||` and `!`.
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{equal::a::b}}` | `1` if the texts are equal |
//! | `{{not_equal::a::b}}` | `1` if they differ |
//! | `{{greater::a::b}}`, `{{greater_equal::a::b}}`, `{{less::a::b}}`, `{{less_equal::a::b}}` | numeric comparison |
//! | `{{and::a::b...}}`, `{{or::a::b...}}` | all / any argument true (`1` or `true`) |
//! | `{{not::a}}` | `0` if `a` is true, else `1` |
//!
//! ```
//! use ccv3_cbs::{expand, Context};
//! let ctx = Context::new();
//! assert_eq!(expand("{{calc::1 + 2 * 3}}", &ctx), "7");
//! assert_eq!(expand("{{? (1+2)^2 % 5}}", &ctx), "4");
//! assert_eq!(expand("{{? 1/2}} {{? 1/0}} {{? 1+}}", &ctx), "0.5 Infinity NaN");
//! assert_eq!(expand("{{? 3 > 2 && 1 <= 1 || 0}}", &ctx), "1");
//! assert_eq!(expand("{{equal::a::a}}{{not_equal::a::a}}", &ctx), "10");
//! assert_eq!(expand("{{greater::10::9}}{{greater_equal::9::9}}{{less::1::2}}{{less_equal::3::2}}", &ctx), "1110");
//! assert_eq!(expand("{{and::1::1}}{{and::1::0}}{{or::0::1}}{{not::1}}{{not::0}}", &ctx), "10101");
//! ```

use crate::expand::{fmt_num, num, truthy};
use crate::registry::{Family, Registry};

use super::bool_str;

/// Evaluates an expression (grammar in the module docs); `NaN` when malformed.
///
/// ```
/// use ccv3_cbs::families::math::eval;
/// assert_eq!(eval("1 + 2 * 3"), 7.0);
/// assert!(eval("1 +").is_nan());
/// ```
pub fn eval(expr: &str) -> f64 {
    let mut p = Expr {
        s: expr.as_bytes(),
        i: 0,
        depth: 0,
        bad: false,
    };
    let v = p.or();
    p.ws();
    if p.bad || p.i != p.s.len() {
        return f64::NAN;
    }
    v
}

struct Expr<'s> {
    s: &'s [u8],
    i: usize,
    depth: u32,
    bad: bool,
}

fn b(x: bool) -> f64 {
    if x {
        1.0
    } else {
        0.0
    }
}

fn t(x: f64) -> bool {
    x != 0.0 && !x.is_nan()
}

impl Expr<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.ws();
        if self.s.get(self.i..self.i + tok.len()) == Some(tok.as_bytes()) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }

    /// Peeks `tok` not followed by `=` (so `<` does not take `<=`).
    fn eat_single(&mut self, tok: &str) -> bool {
        self.ws();
        let after = self.s.get(self.i + tok.len());
        if self.s.get(self.i..self.i + tok.len()) == Some(tok.as_bytes()) && after != Some(&b'=') {
            self.i += tok.len();
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> f64 {
        let mut v = self.and();
        while !self.bad && self.eat("||") {
            let r = self.and();
            v = b(t(v) || t(r));
        }
        v
    }

    fn and(&mut self) -> f64 {
        let mut v = self.eq();
        while !self.bad && self.eat("&&") {
            let r = self.eq();
            v = b(t(v) && t(r));
        }
        v
    }

    fn eq(&mut self) -> f64 {
        let mut v = self.cmp();
        loop {
            if self.bad {
                return v;
            }
            if self.eat("==") || self.eat_single("=") {
                let r = self.cmp();
                v = b(v == r);
            } else if self.eat("!=") {
                let r = self.cmp();
                v = b(v != r);
            } else {
                return v;
            }
        }
    }

    fn cmp(&mut self) -> f64 {
        let mut v = self.add();
        loop {
            if self.bad {
                return v;
            }
            if self.eat("<=") {
                let r = self.add();
                v = b(v <= r);
            } else if self.eat(">=") {
                let r = self.add();
                v = b(v >= r);
            } else if self.eat_single("<") {
                let r = self.add();
                v = b(v < r);
            } else if self.eat_single(">") {
                let r = self.add();
                v = b(v > r);
            } else {
                return v;
            }
        }
    }

    fn add(&mut self) -> f64 {
        let mut v = self.mul();
        loop {
            if self.bad {
                return v;
            }
            if self.eat("+") {
                v += self.mul();
            } else if self.eat("-") {
                v -= self.mul();
            } else {
                return v;
            }
        }
    }

    fn mul(&mut self) -> f64 {
        let mut v = self.pow();
        loop {
            if self.bad {
                return v;
            }
            if self.eat("*") {
                v *= self.pow();
            } else if self.eat("/") {
                v /= self.pow();
            } else if self.eat("%") {
                v %= self.pow();
            } else {
                return v;
            }
        }
    }

    fn pow(&mut self) -> f64 {
        let v = self.unary();
        if !self.bad && self.eat("^") {
            if !self.enter() {
                return f64::NAN;
            }
            let r = self.pow();
            self.depth -= 1;
            return v.powf(r);
        }
        v
    }

    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > 64 {
            self.bad = true;
            false
        } else {
            true
        }
    }

    fn unary(&mut self) -> f64 {
        self.ws();
        let op = match self.s.get(self.i) {
            Some(b'-') => Some(b'-'),
            Some(b'+') => Some(b'+'),
            Some(b'!') if self.s.get(self.i + 1) != Some(&b'=') => Some(b'!'),
            _ => None,
        };
        if let Some(op) = op {
            self.i += 1;
            if !self.enter() {
                return f64::NAN;
            }
            let v = self.unary();
            self.depth -= 1;
            return match op {
                b'-' => -v,
                b'+' => v,
                _ => b(!t(v)),
            };
        }
        self.primary()
    }

    fn primary(&mut self) -> f64 {
        self.ws();
        if self.eat("(") {
            if !self.enter() {
                return f64::NAN;
            }
            let v = self.or();
            self.depth -= 1;
            if !self.eat(")") {
                self.bad = true;
            }
            return v;
        }
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
        {
            self.i += 1;
        }
        let text = std::str::from_utf8(self.s.get(start..self.i).unwrap_or_default()).unwrap_or("");
        match text.parse::<f64>() {
            Ok(v) if !text.is_empty() => v,
            _ => {
                self.bad = true;
                f64::NAN
            }
        }
    }
}

/// Adds the math and comparison macros.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::math::register(&mut registry);
/// assert!(registry.contains("calc"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Math;
    r.register_all(f, &["calc", "?"], |c| Some(fmt_num(eval(&c.raw()))));
    r.register_all(f, &["equal"], |c| Some(bool_str(c.arg(0) == c.arg(1))));
    r.register_all(f, &["notequal"], |c| Some(bool_str(c.arg(0) != c.arg(1))));
    type Cmp = fn(f64, f64) -> bool;
    let cmp: [(&str, Cmp); 4] = [
        ("greater", |a, b| a > b),
        ("greaterequal", |a, b| a >= b),
        ("less", |a, b| a < b),
        ("lessequal", |a, b| a <= b),
    ];
    for (name, op) in cmp {
        r.register_all(f, &[name], move |c| {
            Some(bool_str(op(num(c.arg(0)), num(c.arg(1)))))
        });
    }
    r.register_all(f, &["and"], |c| {
        Some(bool_str(
            !c.args().is_empty() && c.args().iter().all(|a| truthy(a)),
        ))
    });
    r.register_all(f, &["or"], |c| {
        Some(bool_str(c.args().iter().any(|a| truthy(a))))
    });
    r.register_all(f, &["not"], |c| Some(bool_str(!truthy(&c.raw()))));
}

#[cfg(test)]
mod tests {
    use super::eval;

    #[test]
    fn calc_precedence_and_associativity() {
        assert_eq!(eval("2^3^2"), 512.0);
        assert_eq!(eval("-2^2"), 4.0);
        assert_eq!(eval("10 - 2 - 3"), 5.0);
        assert_eq!(eval("7 % 4"), 3.0);
        assert_eq!(eval("1 < 2 == 1"), 1.0);
        assert_eq!(eval("!0"), 1.0);
        assert_eq!(eval("2 != 3"), 1.0);
        assert_eq!(eval("3 = 3"), 1.0);
    }

    #[test]
    fn calc_malformed_is_nan_and_deep_nesting_is_bounded() {
        assert!(eval("").is_nan());
        assert!(eval("1 +").is_nan());
        assert!(eval("(1").is_nan());
        assert!(eval("abc").is_nan());
        assert!(eval("1..2").is_nan());
        let deep = "(".repeat(100_000) + "1" + &")".repeat(100_000);
        assert!(eval(&deep).is_nan());
        assert!(eval(&"-".repeat(100_000)).is_nan());
        assert!(eval(&"2^".repeat(100_000)).is_nan());
    }
}
