//! Regex keys: SillyTavern's `/pattern/flags` detection, JavaScript (ECMAScript) semantics, and
//! the step budget that keeps every pattern bounded in time on any text.
//!
//! A key is a regex key when the entry has `use_regex` (the whole key is the pattern, unless it
//! has the `/pattern/flags` form), or when the whole key has the form `/pattern/flags` with flags
//! among `gimsuy` and no unescaped `/` in the pattern (SillyTavern's rule).
//!
//! Engines. Every pattern is first translated from ECMAScript syntax to the syntax of the `regex`
//! crate (`\d`, `\w`, `\b` made ASCII as in JavaScript, `.` without line terminators, literal
//! `{`/`}`, named groups): such patterns run on a lazy DFA, in time linear in the text; when the
//! DFA gives up (a pattern whose states thrash its cache, such as long bounded gaps
//! `[^]{0,400}`), a PikeVM takes over, whose whole cost (bytes times states) is charged to the
//! budget before it runs. Patterns the `regex` crate cannot express (lookaround,
//! backreferences) are checked by `ccv3::check_regex_syntax` (ECMAScript's syntax: `regress`, or
//! JavaScript's `RegExp` in the npm package) and run on this crate's
//! backtracking engine (`backtrack`), which counts every step; they run on at most
//! [`BACKTRACK_HAYSTACK_CAP`] bytes of the newest text (a diagnostic says when the cap cut text
//! off). Every search has a step budget ([`crate::ScanOptions::regex_key_steps`], and
//! [`crate::ScanOptions::regex_scan_steps`] for a whole scan): a key whose search runs out of
//! steps does not match, and its entry is explained `regex-budget` (issue 12).
//!
//! Prefilter. For each pattern a set of literals is extracted such that every match contains one
//! of them (`/\bkael\w*\b/i` → `kael`); the literals join the plain keys' automata, and the regex
//! runs only when one of its literals was found. Patterns without such literals always run.

mod backtrack;
mod syntax;

pub(crate) use backtrack::OutOfSteps;
use regex_automata::hybrid::dfa::DFA as LazyDfa;
use regex_automata::nfa::thompson::{self, pikevm::PikeVM, WhichCaptures};
use std::sync::OnceLock;
use syntax::{translate, Flags};

/// The most bytes of scan text a backtracking pattern runs on.
pub const BACKTRACK_HAYSTACK_CAP: usize = 32 * 1024;

/// The longest pattern the backtracking engine takes (longer ones are refused with a diagnostic).
const BACKTRACK_PATTERN_CAP: usize = 64 * 1024;

/// The most memory (bytes) the finite automaton of one linear pattern may take.
const NFA_SIZE_LIMIT: usize = 1 << 20;

/// Steps charged per byte the lazy DFA searches (it is about this many times cheaper than one
/// backtracking step).
const DFA_BYTES_PER_STEP: u64 = 8;

/// The compiled form of one regex key.
#[derive(Debug)]
pub(crate) enum Engine {
    /// Linear time (the `regex` crate's engines): the translated pattern is checked when the
    /// books are compiled ([`regex_parses`]), and parsed and built into a matcher on its first
    /// use, so books with thousands of regex keys compile fast and keep no parsed forms around.
    Linear {
        /// The pattern in `regex` syntax, as [`translate`] wrote it.
        syntax: Box<str>,
        built: OnceLock<Option<Box<LinearBuilt>>>,
    },
    /// Backtracking with a step budget ([`backtrack`]), on a capped haystack.
    Backtrack(Box<backtrack::Program>),
}

/// A linear pattern, built: a lazy DFA, and the PikeVM it falls back to when the DFA gives up
/// (its cache thrashes), whose cost is charged in full before it runs.
#[derive(Debug)]
pub(crate) struct LinearBuilt {
    dfa: Option<LazyDfa>,
    pike: PikeVM,
    /// The NFA's states: a PikeVM search costs up to this many steps per byte.
    states: usize,
}

impl LinearBuilt {
    fn new(syntax: &str) -> Option<LinearBuilt> {
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(syntax)
            .ok()?;
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(Some(NFA_SIZE_LIMIT))
                    .which_captures(WhichCaptures::Implicit),
            )
            .build_from_hir(&hir)
            .ok()?;
        // What `regex` sets up for its lazy DFA (a few cache clears, then give up when the
        // cache is used poorly); the give-up is ours to handle.
        let dfa = LazyDfa::builder()
            .configure(
                LazyDfa::config()
                    .cache_capacity(2 << 20)
                    .minimum_cache_clear_count(Some(3))
                    .minimum_bytes_per_state(Some(10))
                    .skip_cache_capacity_check(true),
            )
            .build_from_nfa(nfa.clone())
            .ok();
        let states = nfa.states().len();
        let pike = PikeVM::new_from_nfa(nfa).ok()?;
        Some(LinearBuilt { dfa, pike, states })
    }

    /// The end of the earliest match in `hay`, within `*steps` (see [`Engine::find`]).
    fn find(&self, hay: &str, steps: &mut u64) -> Result<Option<usize>, OutOfSteps> {
        let input = regex_automata::Input::new(hay).earliest(true);
        if let Some(dfa) = &self.dfa {
            spend(steps, hay.len() as u64 / DFA_BYTES_PER_STEP + 1)?;
            let mut cache = dfa.create_cache();
            if let Ok(m) = dfa.try_search_fwd(&mut cache, &input) {
                return Ok(m.map(|m| m.offset()));
            }
        }
        // The DFA gave up: the PikeVM costs (bytes x states) at most, charged before it runs.
        spend(
            steps,
            (hay.len() as u64 + 1).saturating_mul(self.states as u64) / DFA_BYTES_PER_STEP,
        )?;
        let mut cache = self.pike.create_cache();
        Ok(self.pike.find(&mut cache, input).map(|m| m.end()))
    }
}

/// Takes `n` steps from `steps`, or fails (leaving none) when there are fewer.
fn spend(steps: &mut u64, n: u64) -> Result<(), OutOfSteps> {
    if *steps < n {
        *steps = 0;
        return Err(OutOfSteps);
    }
    *steps -= n;
    Ok(())
}

impl Engine {
    /// A position inside the first match in `hay`, if any, spending at most `*steps` steps
    /// (what is left stays in `*steps`; `Err` when they ran out before an answer): the linear
    /// engine reports the last character of its shortest match (no reverse search needed), the
    /// backtracking one the first character of its match. A linear pattern whose automaton
    /// exceeds its size limit runs out of steps at once.
    pub(crate) fn find(&self, hay: &str, steps: &mut u64) -> Result<Option<usize>, OutOfSteps> {
        match self {
            Engine::Linear { syntax, built } => {
                if *steps == 0 {
                    return Err(OutOfSteps);
                }
                // Building is charged on every search (one step per NFA state), built or not, so
                // a scan's result does not depend on what earlier scans built; a pattern whose
                // automaton exceeds its size limit cannot run at all.
                let b = built
                    .get_or_init(|| LinearBuilt::new(syntax).map(Box::new))
                    .as_ref()
                    .ok_or(OutOfSteps)?;
                spend(steps, b.states as u64)?;
                Ok(b.find(hay, steps)?.map(|end| end.saturating_sub(1)))
            }
            Engine::Backtrack(p) => {
                if hay.len() <= BACKTRACK_HAYSTACK_CAP {
                    p.find(hay, steps)
                } else {
                    // The newest text comes first in scan buffers: keep the start.
                    let mut cut = BACKTRACK_HAYSTACK_CAP;
                    while !hay.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    p.find(&hay[..cut], steps)
                }
            }
        }
    }

    /// True for the capped backtracking engine.
    pub(crate) fn is_backtracking(&self) -> bool {
        matches!(self, Engine::Backtrack(_))
    }
}

/// Splits a `/pattern/flags` key as SillyTavern does; `None` when the key is not of that form
/// (the validator's rule, [`ccv3::validate::slash_regex`], so both read a key alike).
///
/// ```
/// assert_eq!(ccv3_lore::jsregex::split_slash("/dragons?/i"), Some(("dragons?", "i")));
/// assert_eq!(ccv3_lore::jsregex::split_slash("dragon"), None);
/// ```
pub fn split_slash(key: &str) -> Option<(&str, &str)> {
    ccv3::validate::slash_regex(key)
}

/// A compiled regex key, or why it is not usable (the books' compiler uses [`literals`] and
/// [`engine`] at separate times).
#[cfg(test)]
#[allow(dead_code)]
pub(crate) struct Compiled {
    pub engine: Result<Engine, String>,
    /// Literals of which every match contains one (lowercased when `icase`); empty: no prefilter.
    pub literals: Vec<String>,
    /// Whether the literals are matched case-insensitively.
    pub icase: bool,
}

/// Compiles `pattern` with JavaScript `flags`.
#[cfg(test)]
pub(crate) fn compile(pattern: &str, flags: &str) -> Compiled {
    let (literals, icase) = literals(pattern, flags);
    Compiled {
        engine: engine(pattern, flags),
        literals,
        icase,
    }
}

/// The first repeated flag, if any (such flags make the pattern invalid).
fn repeated_flag(flags: &str) -> Option<char> {
    let mut seen = String::new();
    for c in flags.chars() {
        if seen.contains(c) {
            return Some(c);
        }
        seen.push(c);
    }
    None
}

/// The prefilter literals of [`compile`] (none when the flags are invalid), and whether they are
/// matched case-insensitively. Cheap: no parse.
pub(crate) fn literals(pattern: &str, flags: &str) -> (Vec<String>, bool) {
    let f = Flags::from(flags);
    if repeated_flag(flags).is_some() {
        return (Vec::new(), f.icase);
    }
    (required_literals(pattern, f.icase, f.unicode), f.icase)
}

/// The engine of [`compile`], or why the pattern is not usable.
pub(crate) fn engine(pattern: &str, flags: &str) -> Result<Engine, String> {
    let f = Flags::from(flags);
    if let Some(c) = repeated_flag(flags) {
        return Err(format!("flag {c:?} is repeated"));
    }
    match translate(pattern, &f).filter(|t| regex_parses(t)) {
        Some(t) => Ok(Engine::Linear {
            syntax: t.into(),
            built: OnceLock::new(),
        }),
        None => backtrack(pattern, flags, f),
    }
}

/// Whether the parser `regex` uses (default settings) takes `t`, a [`translate`] output, at a
/// fraction of the cost of parsing it: parsing is a syntax tree, then its translation into the
/// matcher's input, and for what [`translate`] writes the translation can only fail on a
/// `\p{..}` name it does not know (it writes no other Unicode-less or byte-level syntax, and
/// this crate has every Unicode table); with such a name anywhere, `t` is parsed in full.
pub(crate) fn regex_parses(t: &str) -> bool {
    if t.contains("\\p") || t.contains("\\P") {
        return regex_syntax::ParserBuilder::new().build().parse(t).is_ok();
    }
    regex_syntax::ast::parse::ParserBuilder::new()
        .build()
        .parse(t)
        .is_ok()
}

fn backtrack(pattern: &str, flags: &str, f: Flags) -> Result<Engine, String> {
    if pattern.len() > BACKTRACK_PATTERN_CAP {
        return Err(format!(
            "regex of {} bytes needs backtracking and is longer than {BACKTRACK_PATTERN_CAP} bytes; refused it",
            pattern.len()
        ));
    }
    // ECMAScript's syntax check (`regress`, or JavaScript's own in the npm package); the
    // step-limited engine runs it.
    ccv3::check_regex_syntax(pattern, flags)
        .map_err(|e| format!("invalid regex /{pattern}/: {e}"))?;
    match backtrack::Program::new(pattern, &f) {
        Ok(p) => Ok(Engine::Backtrack(Box::new(p))),
        Err(why) => Err(format!(
            "regex /{pattern}/ needs backtracking and {why}; refused it so a scan stays bounded"
        )),
    }
}

/// The number of characters of the escape whose letter is at `cs[i]` (after the backslash).
fn escape_len(cs: &[char], i: usize) -> usize {
    let until = |close: char| {
        cs.get(i..)
            .and_then(|rest| rest.iter().position(|&d| d == close))
            .map_or(1, |p| p + 1)
    };
    match cs.get(i) {
        Some('x') => 3,
        Some('u') if cs.get(i + 1) == Some(&'{') => until('}'),
        Some('u') => 5,
        Some('c') => 2,
        Some('p') | Some('P') if cs.get(i + 1) == Some(&'{') => until('}'),
        Some('k') if cs.get(i + 1) == Some(&'<') => until('>'),
        _ => 1,
    }
}

/// Literals of which every match of `pat` contains at least one; empty when none can be found.
///
/// Only top-level runs of ASCII letters, digits and spaces count, and top-level groups that are a
/// plain alternation of such runs. Lowercased when `icase`.
pub(crate) fn required_literals(pat: &str, icase: bool, unicode: bool) -> Vec<String> {
    let cs: Vec<char> = pat.chars().collect();
    let mut best: Vec<String> = Vec::new();
    let mut best_score = 0usize;
    let mut run = String::new();
    let consider = |set: Vec<String>, best: &mut Vec<String>, best_score: &mut usize| {
        let min = set.iter().map(String::len).min().unwrap_or(0);
        if min >= 3 && min > *best_score && set.len() <= 16 {
            *best_score = min;
            *best = set;
        }
    };
    let optional_next = |j: usize| -> bool {
        matches!(cs.get(j), Some('?') | Some('*'))
            || (cs.get(j) == Some(&'{') && cs.get(j + 1) == Some(&'0'))
    };
    let repeat_next = |j: usize| -> bool { matches!(cs.get(j), Some('+') | Some('{')) };
    let mut i = 0;
    let mut depth = 0usize;
    while i < cs.len() {
        let c = cs[i];
        if depth == 0 && (c.is_ascii_alphanumeric() || c == ' ') {
            if optional_next(i + 1) {
                consider(vec![std::mem::take(&mut run)], &mut best, &mut best_score);
            } else if repeat_next(i + 1) {
                run.push(c);
                consider(vec![std::mem::take(&mut run)], &mut best, &mut best_score);
            } else {
                run.push(c);
            }
            i += 1;
            continue;
        }
        consider(vec![std::mem::take(&mut run)], &mut best, &mut best_score);
        match c {
            '|' if depth == 0 => return Vec::new(),
            '\\' => i += escape_len(&cs, i + 1),
            '[' => {
                i += 1;
                while i < cs.len() && cs[i] != ']' {
                    if cs[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '(' => {
                if depth == 0 {
                    // A top-level group: is it a plain alternation of literals?
                    let mut j = i + 1;
                    if cs.get(j) == Some(&'?') {
                        if cs.get(j + 1) == Some(&':') {
                            j += 2;
                        } else {
                            j = usize::MAX;
                        }
                    }
                    if j != usize::MAX {
                        let mut alts = vec![String::new()];
                        let mut ok = true;
                        while j < cs.len() && cs[j] != ')' {
                            let d = cs[j];
                            if d == '|' {
                                alts.push(String::new());
                            } else if d.is_ascii_alphanumeric() || d == ' ' {
                                if let Some(a) = alts.last_mut() {
                                    a.push(d);
                                }
                            } else {
                                ok = false;
                                break;
                            }
                            j += 1;
                        }
                        if ok && j < cs.len() && !optional_next(j + 1) {
                            consider(alts, &mut best, &mut best_score);
                        }
                    }
                }
                depth += 1;
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    consider(vec![run], &mut best, &mut best_score);
    if icase {
        for s in &mut best {
            *s = s.to_ascii_lowercase();
        }
        // Under /iu, `ſ` matches `s` and the Kelvin sign `k`; lowercasing the text misses `ſ`.
        if unicode && best.iter().any(|s| s.contains('s')) {
            return Vec::new();
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(pat: &str, flags: &str, hay: &str) -> Option<usize> {
        compile(pat, flags)
            .engine
            .ok()?
            .find(hay, &mut 10_000_000)
            .ok()
            .flatten()
    }

    #[test]
    fn st_regex_key_detection_slash_flags() {
        assert_eq!(split_slash("/dragon/i"), Some(("dragon", "i")));
        assert_eq!(split_slash("/a\\/b/"), Some(("a\\/b", "")));
        assert_eq!(split_slash("/a/b/"), None);
        assert_eq!(split_slash("/x/q"), None);
        assert_eq!(split_slash("dragon"), None);
        assert_eq!(split_slash("//"), None);
    }

    #[test]
    fn js_regex_lookbehind_named_groups_flags() {
        assert!(find("(?<=sir )Knight", "", "the sir Knight").is_some());
        assert!(find("(?<who>cat)s?", "i", "CATS").is_some());
        assert!(find("a.b", "s", "a\nb").is_some());
        assert!(find("a.b", "", "a\nb").is_none());
        assert!(find("^b", "m", "a\nb").is_some());
        assert!(find("x", "g", "x").is_some());
        assert!(find("(a)\\1", "", "xaa").is_some());
    }

    #[test]
    fn js_word_and_boundary_are_ascii() {
        // JavaScript's \w and \b are ASCII: é is not a word character.
        assert!(find("\\bcaf\\b", "", "café").is_some());
        assert!(find("\\w+", "", "é1").is_some());
    }

    #[test]
    fn js_literal_braces_and_brackets() {
        assert!(find("a{b", "", "xa{b").is_some());
        assert!(find("a{2}", "", "aa").is_some());
        assert!(find("[a-c&]", "", "&").is_some());
        assert!(find("[^]", "", "\n").is_some());
    }

    #[test]
    fn invalid_regex_is_an_error() {
        assert!(compile("(a", "").engine.is_err());
        assert!(compile("a", "ii").engine.is_err());
    }

    #[test]
    fn catastrophic_patterns_run_linear_or_within_a_budget() {
        // Translatable: runs on the linear engine, fast on a long input.
        let hay = "a".repeat(100_000) + "b";
        let mut steps = u64::MAX;
        assert_eq!(
            compile("(a+)+$", "").engine.unwrap().find(&hay, &mut steps),
            Ok(None)
        );
        // Needs backtracking (a backreference) and nests quantifiers: runs, within its budget.
        let e = compile("(a+)+\\1$", "").engine.unwrap();
        assert!(e.is_backtracking());
        let mut steps = 100_000;
        assert_eq!(e.find(&"a".repeat(40), &mut steps), Ok(Some(0)));
        let mut steps = 100_000;
        assert_eq!(e.find(&("a".repeat(40) + "b"), &mut steps), Err(OutOfSteps));
        assert_eq!(steps, 0);
    }

    #[test]
    fn lazy_dfa_give_up_falls_back_to_a_charged_pikevm() {
        // Issue 12: `1[01]{20}2` over random bits makes the lazy DFA track every 1 of the last
        // 21 bits (2^20 states): it gives up, and the PikeVM's whole cost is charged first.
        let e = compile("1[01]{20}2", "").engine.unwrap();
        assert!(!e.is_backtracking());
        let mut seed = 3u64;
        let bits: String = (0..150_000)
            .map(|_| {
                seed = crate::text::mix(seed);
                if seed & 1 == 0 {
                    '0'
                } else {
                    '1'
                }
            })
            .collect();
        let mut steps = 100_000;
        assert_eq!(e.find(&bits, &mut steps), Err(OutOfSteps));
        // With enough steps the answer is exact; the fallback's cost (bytes x states / 8) was
        // charged, far above the DFA's (bytes / 8).
        let with = format!("{bits}1{}2", "0".repeat(20));
        let mut steps = u64::MAX;
        assert!(e.find(&with, &mut steps).unwrap().is_some());
        assert!(u64::MAX - steps > 100_000, "{}", u64::MAX - steps);
    }

    #[test]
    fn prefilter_literals() {
        assert_eq!(required_literals("\\bKael\\w*\\b", true, false), ["kael"]);
        assert_eq!(
            required_literals("\\b(kaelor|time)s?\\b", true, false),
            ["kaelor", "time"]
        );
        assert_eq!(
            required_literals("time\\s+(of|the)\\s+\\w+", true, false),
            ["time"]
        );
        assert_eq!(
            required_literals("\\bKaelor(?:'s)?\\b", false, false),
            ["Kaelor"]
        );
        assert!(required_literals("a|b", false, false).is_empty());
        assert_eq!(required_literals("colou?r", false, false), ["colo"]);
        assert!(required_literals("x(abc)?", false, false).is_empty());
        assert_eq!(
            required_literals("\\x01Kazuma:[^\\x01]*?hello", false, false),
            ["Kazuma"]
        );
        assert_eq!(required_literals("\\u0041bcd", false, false), ["bcd"]);
    }

    proptest::proptest! {
        #[test]
        fn any_pattern_compiles_or_errors_without_panic(
            pat in "[\\\\a-c(){}\\[\\]^$|*+?.,:<>=!0-9xupkPdwsbB/-]{0,24}",
            flags in "[gimsuyv]{0,3}",
        ) {
            let c = compile(&pat, &flags);
            if let Ok(e) = c.engine {
                let _ = e.find("abc aab {1} x\u{1}", &mut 100_000);
            }
            let _ = required_literals(&pat, true, true);
        }

        /// The compile-time check accepts exactly what the full parse (done on first use) does.
        #[test]
        fn regex_parses_is_the_full_parse(
            pat in "[\\\\a-cpP(){}\\[\\]^$|*+?.,:<>=!0-9xuk&~#dwsbBDWS/-]{0,24}",
            flags in "[imsu]{0,3}",
        ) {
            if let Some(t) = translate(&pat, &Flags::from(flags.as_str())) {
                let full = regex_syntax::ParserBuilder::new().build().parse(&t).is_ok();
                proptest::prop_assert_eq!(regex_parses(&t), full, "{}", t);
            }
        }
    }

    #[test]
    fn regex_parses_checks_unicode_names_in_full() {
        let f = Flags::from("u");
        let ok = translate("\\p{Letter}+", &f).unwrap();
        let unknown = translate("\\p{NoSuchProperty}", &f).unwrap();
        assert!(regex_parses(&ok));
        assert!(!regex_parses(&unknown));
        assert!(regex_syntax::ast::parse::Parser::new()
            .parse(&unknown)
            .is_ok());
        assert!(matches!(
            engine("\\p{Letter}+", "u"),
            Ok(Engine::Linear { .. })
        ));
    }
}
