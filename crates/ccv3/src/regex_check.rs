//! ECMAScript's syntax check of regular expressions (lorebook regex keys): whether a pattern
//! with its flags is a valid JavaScript regex, as SillyTavern and RisuAI (which run keys with
//! `new RegExp`) decide it. Used by [`crate::validate`] and by `ccv3-lore`'s regex keys.
//!
//! Natively the check is the `regress` crate (ECMAScript's exact rules and messages). WebAssembly
//! builds leave `regress` out: its Unicode tables are a tenth of the npm package's core (issue 11,
//! core under 2.5 MB), and the JavaScript engine that runs the core has the reference
//! implementation. There the embedder registers a check with [`set_regex_syntax_check`] (the npm
//! package registers `new RegExp(pattern, flags)`); without one every pattern passes this check,
//! and `ccv3-lore`'s own parser of the patterns it runs by backtracking still refuses what it
//! does not know.

/// A syntax check: `Err` with the reason when `pattern` with `flags` is not a valid ECMAScript
/// regular expression.
pub type SyntaxCheck = fn(pattern: &str, flags: &str) -> Result<(), String>;

/// The check [`set_regex_syntax_check`] registered (WebAssembly builds).
#[cfg(target_arch = "wasm32")]
static REGISTERED: std::sync::OnceLock<SyntaxCheck> = std::sync::OnceLock::new();

/// Registers the syntax check of WebAssembly builds (see the module docs); the first one
/// registered stays. Other builds check with `regress` and ignore this.
///
/// ```
/// // A WebAssembly host registers its own engine's check (JavaScript's `RegExp` in the npm
/// // package); native builds check with `regress` and ignore it.
/// fn host_check(pattern: &str, _flags: &str) -> Result<(), String> {
///     if pattern.contains('(') && !pattern.contains(')') { Err("unterminated group".into()) } else { Ok(()) }
/// }
/// ccv3::set_regex_syntax_check(host_check);
/// assert!(ccv3::check_regex_syntax("(a", "").is_err());
/// ```
pub fn set_regex_syntax_check(check: SyntaxCheck) {
    #[cfg(target_arch = "wasm32")]
    let _ = REGISTERED.set(check);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = check;
}

/// Checks `pattern` with `flags` (`"iu"`, ...) as ECMAScript does: `Err` with the reason when it
/// is not a valid regex.
///
/// ```
/// assert!(ccv3::check_regex_syntax("dragons?", "i").is_ok());
/// let err = ccv3::check_regex_syntax("(unclosed", "").unwrap_err();
/// assert!(!err.is_empty()); // the regex engine's reason
/// ```
pub fn check_regex_syntax(pattern: &str, flags: &str) -> Result<(), String> {
    #[cfg(not(target_arch = "wasm32"))]
    return regress::Regex::with_flags(pattern, flags)
        .map(drop)
        .map_err(|e| e.to_string());
    #[cfg(target_arch = "wasm32")]
    return REGISTERED
        .get()
        .map_or(Ok(()), |check| check(pattern, flags));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ECMAScript (ECMA-262 §22.2.1, patterns): valid patterns pass, syntax errors are reasons.
    #[test]
    fn ecmascript_syntax_is_checked_natively() {
        assert_eq!(check_regex_syntax("(?<=fire )dragon", "i"), Ok(()));
        assert_eq!(check_regex_syntax("(\\w+) and \\1", ""), Ok(()));
        assert!(check_regex_syntax("(?<=fire dragon", "").is_err());
        assert!(check_regex_syntax("(?<=a)\\k<missing>", "u").is_err());
        assert!(check_regex_syntax("x{2,1}", "").is_err());
        // Registering changes nothing outside WebAssembly.
        set_regex_syntax_check(|_, _| Err("never".into()));
        assert_eq!(check_regex_syntax("a", ""), Ok(()));
    }
}
