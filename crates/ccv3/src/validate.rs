//! Validation: every MUST and MUST NOT of the spec that concerns data, and the SHOULDs worth a
//! warning.
//!
//! The lenient reader already reports what it repaired (missing required fields, wrong types,
//! `null`s, an unknown `spec`, a missing `group_only_greetings`, a `character_book` that is not
//! an object): this module does not repeat those. It checks the model: values that have the
//! right type but break a rule.
//!
//! Every [`Diagnostic`] has a severity (an error for a violated MUST / MUST NOT, a warning for a
//! SHOULD or a value that is very likely wrong, info for a fact worth knowing), a stable code, a
//! JSON path into the card as a V3 object (`data.assets[2].ext`) and a lowercase message with the
//! bad value.
//!
//! # Codes
//!
//! Every code, its severity and the spec section it enforces are in [`crate::CODES`], and in
//! `docs/validation.md` (generated from it), with the severity policy: errors for the spec's
//! MUSTs, warnings for its SHOULDs and for likely mistakes, info for facts.
//!
//! # Choices
//!
//! - Timestamps above 1e11 are a warning, not an error: the value is clearly milliseconds and
//!   readers can divide it; RisuAI writes `creation_date` that way.
//! - A key is checked as a regex when the application that wrote the entry reads it as one: a
//!   key written `/pattern/flags` ([`slash_regex`]) always, compiled as `pattern` with `flags`
//!   (the spec's own example is `/hello/i`); any other key only when `use_regex` is true and the
//!   entry is not SillyTavern's ([`written_by_sillytavern`]: SillyTavern writes `use_regex: true`
//!   on every entry and reads only `/pattern/flags` keys as regexes). Regexes are ECMAScript
//!   ([`crate::check_regex_syntax`]: `regress`, or JavaScript's own `RegExp` in the npm
//!   package), as in the applications that run them.
//! - `ext` is not checked when `uri` is `ccdefault:` (the spec says to ignore it then).
//! - Decorator lines are read by [`crate::decorator`]'s line reader (the one reader of the line
//!   grammar); the checks here give each line its own codes, apart from the parser's rules.

use crate::{AssetUri, Card, Diagnostic, Lorebook, SpecVersion};
use serde_json::{Number, Value};
use std::collections::{HashMap, HashSet};

/// Where the card came from, for the checks that need its container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidateContext {
    /// Paths of the files in the CHARX the card came from (`assets/icon/images/a.png`);
    /// `None` when the card is not from a CHARX.
    pub embedded_paths: Option<Vec<String>>,
    /// Paths of the PNG's `chara-ext-asset_:PATH` chunks; `None` when the card is not from a PNG.
    pub png_asset_paths: Option<Vec<String>>,
}

impl ValidateContext {
    /// A context for a card read from a CHARX with these file paths.
    pub fn charx(paths: Vec<String>) -> Self {
        ValidateContext {
            embedded_paths: Some(paths),
            png_asset_paths: None,
        }
    }

    /// A context for a card read from a PNG with these `chara-ext-asset_:` paths.
    pub fn png(paths: Vec<String>) -> Self {
        ValidateContext {
            embedded_paths: None,
            png_asset_paths: Some(paths),
        }
    }
}

/// Asset types the spec defines.
const KNOWN_ASSET_TYPES: [&str; 4] = ["icon", "background", "user_icon", "emotion"];

/// ISO 639-1 two-letter language codes.
const ISO_639_1: &[&str] = &[
    "aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg", "bh",
    "bi", "bm", "bn", "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv", "cy", "da",
    "de", "dv", "dz", "ee", "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi", "fj", "fo", "fr",
    "fy", "ga", "gd", "gl", "gn", "gu", "gv", "ha", "he", "hi", "ho", "hr", "ht", "hu", "hy", "hz",
    "ia", "id", "ie", "ig", "ii", "ik", "io", "is", "it", "iu", "ja", "jv", "ka", "kg", "ki", "kj",
    "kk", "kl", "km", "kn", "ko", "kr", "ks", "ku", "kv", "kw", "ky", "la", "lb", "lg", "li", "ln",
    "lo", "lt", "lu", "lv", "mg", "mh", "mi", "mk", "ml", "mn", "mr", "ms", "mt", "my", "na", "nb",
    "nd", "ne", "ng", "nl", "nn", "no", "nr", "nv", "ny", "oc", "oj", "om", "or", "os", "pa", "pi",
    "pl", "ps", "pt", "qu", "rm", "rn", "ro", "ru", "rw", "sa", "sc", "sd", "se", "sg", "si", "sk",
    "sl", "sm", "sn", "so", "sq", "sr", "ss", "st", "su", "sv", "sw", "ta", "te", "tg", "th", "ti",
    "tk", "tl", "tn", "to", "tr", "ts", "tt", "tw", "ty", "ug", "uk", "ur", "uz", "ve", "vi", "vo",
    "wa", "wo", "xh", "yi", "yo", "za", "zh", "zu",
];

/// Longest regex key that is compiled (bytes).
const MAX_REGEX_LEN: usize = 8 * 1024;
/// Deepest group nesting of a regex key that is compiled.
const MAX_REGEX_NESTING: usize = 100;
/// Most alternatives (`|`) in a regex key that is compiled: the compiler recurses on each.
const MAX_REGEX_ALTERNATIVES: usize = 300;
/// Timestamps above this are taken for milliseconds.
const MILLIS_THRESHOLD: f64 = 1e11;

/// Validates a card against the spec's data rules; `ctx` says which container it came from.
///
/// The card's `character_book` is checked too (see [`validate_lorebook`]).
///
/// ```
/// use ccv3::validate::{validate_card, ValidateContext};
/// let mut card = ccv3::Card::new("Aqua");
/// card.data.assets = Some(vec![ccv3::Asset::new("icon", "ccdefault:", "main", ".PNG")]);
/// card.data.creation_date = Some(1_700_000_000_000u64.into());
/// let diags = validate_card(&card, &ValidateContext::default());
/// let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
/// assert_eq!(codes, ["date-in-milliseconds"]); // ext is ignored for ccdefault:
/// ```
pub fn validate_card(card: &Card, ctx: &ValidateContext) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if card.origin == Some(SpecVersion::V3) {
        check_spec_version(&card.spec_version, &mut out);
    }
    let d = &card.data;
    if let Some(assets) = &d.assets {
        check_assets(assets, ctx, &mut out);
    }
    if let Some(ml) = &d.creator_notes_multilingual {
        for (k, v) in ml {
            let p = format!("data.creator_notes_multilingual.{k}");
            check_language_key(k, &p, &mut out);
            if !v.is_string() {
                out.push(Diagnostic::error(
                    "multilingual-value-not-string",
                    p,
                    format!(
                        "creator notes for {k:?} must be a string, found {}",
                        kind(v)
                    ),
                ));
            }
        }
    }
    check_date(d.creation_date.as_ref(), "data.creation_date", &mut out);
    check_date(
        d.modification_date.as_ref(),
        "data.modification_date",
        &mut out,
    );
    if let Some(source) = &d.source {
        for (i, s) in source.iter().enumerate() {
            let p = format!("data.source[{i}]");
            if s.trim().is_empty() {
                out.push(Diagnostic::warning(
                    "source-item-empty",
                    p,
                    "source item is an empty string",
                ));
            } else if let Some((scheme, _)) = s.split_once("://") {
                let scheme = scheme.to_ascii_lowercase();
                if scheme != "http" && scheme != "https" && is_scheme(&scheme) {
                    out.push(Diagnostic::warning(
                        "source-item-not-http-url",
                        p,
                        format!("source must be an id or an http(s) url, found {s:?}"),
                    ));
                }
            }
        }
    }
    if let Some(book) = &d.character_book {
        out.extend(validate_lorebook(book, "data.character_book"));
    }
    out
}

fn kind(v: &Value) -> &'static str {
    crate::model::fields::type_name(v)
}

fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn check_spec_version(v: &str, out: &mut Vec<Diagnostic>) {
    match v.trim().parse::<f64>() {
        Ok(f) if f > 3.0 => out.push(Diagnostic::warning(
            "spec-version-newer",
            "spec_version",
            format!("spec_version {v:?} is newer than 3.0; newer features may be ignored"),
        )),
        Ok(f) if f < 3.0 => out.push(Diagnostic::warning(
            "spec-version-older",
            "spec_version",
            format!("spec_version {v:?} is older than 3.0 in a chara_card_v3 card"),
        )),
        Ok(_) => {}
        Err(_) => out.push(Diagnostic::warning(
            "spec-version-invalid",
            "spec_version",
            format!("spec_version {v:?} is not a number; expected \"3.0\""),
        )),
    }
}

fn check_assets(assets: &[crate::Asset], ctx: &ValidateContext, out: &mut Vec<Diagnostic>) {
    let embedded: Option<HashSet<&str>> = ctx
        .embedded_paths
        .as_ref()
        .map(|v| v.iter().map(String::as_str).collect());
    let chunks: Option<HashSet<&str>> = ctx
        .png_asset_paths
        .as_ref()
        .map(|v| v.iter().map(String::as_str).collect());
    let (mut icons, mut main_icons, mut main_backgrounds) = (0usize, Vec::new(), Vec::new());
    for (i, a) in assets.iter().enumerate() {
        let p = format!("data.assets[{i}]");
        if a.kind.is_empty() {
            out.push(Diagnostic::error(
                "asset-type-empty",
                format!("{p}.type"),
                "asset type is an empty string",
            ));
        } else if !KNOWN_ASSET_TYPES.contains(&a.kind.as_str()) && !a.kind.starts_with("x_") {
            out.push(Diagnostic::warning(
                "asset-type-not-x-prefixed",
                format!("{p}.type"),
                format!(
                    "asset type {:?} is not defined by the spec and should start with \"x_\"",
                    a.kind
                ),
            ));
        }
        match a.kind.as_str() {
            "icon" => {
                icons += 1;
                if a.name == "main" {
                    main_icons.push(i);
                }
            }
            "background" if a.name == "main" => main_backgrounds.push(i),
            _ => {}
        }
        check_asset_uri(a, &p, embedded.as_ref(), chunks.as_ref(), out);
    }
    if icons > 1 && main_icons.is_empty() {
        out.push(Diagnostic::error(
            "asset-icon-main-missing",
            "data.assets",
            format!("{icons} icon assets and none named \"main\"; exactly one must be"),
        ));
    }
    if main_icons.len() > 1 {
        out.push(Diagnostic::error(
            "asset-icon-main-duplicate",
            format!(
                "data.assets[{}].name",
                main_icons.last().copied().unwrap_or_default()
            ),
            format!(
                "{} icon assets named \"main\" (at {:?}); exactly one must be",
                main_icons.len(),
                main_icons
            ),
        ));
    }
    if main_backgrounds.len() > 1 {
        out.push(Diagnostic::error(
            "asset-background-main-duplicate",
            format!(
                "data.assets[{}].name",
                main_backgrounds.last().copied().unwrap_or_default()
            ),
            format!(
                "{} background assets named \"main\" (at {:?}); at most one may be",
                main_backgrounds.len(),
                main_backgrounds
            ),
        ));
    }
}

/// The checks of one asset's `uri` at `p` (`data.assets[i]`): a file it names is in the CHARX
/// (`embedded`) or the PNG's chunks (`chunks`), its scheme is one the spec defines; and of its
/// `ext` unless the uri is `ccdefault:`.
fn check_asset_uri(
    a: &crate::Asset,
    p: &str,
    embedded: Option<&HashSet<&str>>,
    chunks: Option<&HashSet<&str>>,
    out: &mut Vec<Diagnostic>,
) {
    let up = format!("{p}.uri");
    let uri = a.parsed_uri();
    match uri {
        _ if a.uri.is_empty() => out.push(Diagnostic::error(
            "asset-uri-empty",
            up,
            "asset uri is an empty string",
        )),
        AssetUri::Default => {}
        AssetUri::Embedded(path) => {
            if a.uri.starts_with("embedded://") {
                out.push(Diagnostic::warning(
                    "asset-uri-embedded-misspelled",
                    up.clone(),
                    format!(
                        "uri {:?} uses \"embedded://\"; the spec spells it \"embeded://\"",
                        a.uri
                    ),
                ));
            }
            if let Some(files) = embedded {
                if !files.contains(path) {
                    out.push(Diagnostic::error(
                        "asset-embedded-missing",
                        up,
                        format!("no file {path:?} in the charx"),
                    ));
                }
            }
        }
        AssetUri::PngChunk(path) => {
            if let Some(ch) = chunks {
                if !ch.contains(path) {
                    out.push(Diagnostic::error(
                        "asset-png-chunk-missing",
                        up,
                        format!("no chara-ext-asset_:{path} chunk in the png"),
                    ));
                }
            } else if let Some(files) = embedded {
                // SillyTavern resolves `__asset:` against the zip's files in a CHARX.
                if !files.contains(path) {
                    out.push(Diagnostic::error(
                        "asset-embedded-missing",
                        up,
                        format!("no file {path:?} in the charx"),
                    ));
                }
            }
        }
        AssetUri::Data { .. } => {}
        AssetUri::Remote(u) => {
            if u.starts_with("http://") {
                out.push(Diagnostic::info(
                    "asset-uri-http-insecure",
                    up,
                    format!("uri {u:?} is not https; applications may ignore it"),
                ));
            }
        }
        AssetUri::Other(u) => {
            if u.starts_with("data:") {
                out.push(Diagnostic::warning(
                    "asset-uri-data-not-base64",
                    up,
                    format!("data url {:?} is not base64", truncate(u, 48)),
                ));
            } else {
                out.push(Diagnostic::warning(
                    "asset-uri-scheme-unknown",
                    up,
                    format!(
                        "uri {:?} is not a kind the spec defines (ccdefault:, embeded://, __asset:, data:, http(s))",
                        truncate(u, 80)
                    ),
                ));
            }
        }
    }
    if uri != AssetUri::Default {
        check_ext(&a.ext, &format!("{p}.ext"), out);
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn check_ext(ext: &str, p: &str, out: &mut Vec<Diagnostic>) {
    if ext.is_empty() {
        out.push(Diagnostic::error(
            "asset-ext-empty",
            p,
            "asset ext is empty; use \"unknown\" for an unknown extension",
        ));
    } else if ext.contains('.') {
        out.push(Diagnostic::error(
            "asset-ext-has-dot",
            p,
            format!("asset ext {ext:?} must not contain a dot"),
        ));
    } else if ext.chars().any(|c| c.is_uppercase()) {
        out.push(Diagnostic::error(
            "asset-ext-not-lowercase",
            p,
            format!("asset ext {ext:?} must be lowercase"),
        ));
    } else if !ext
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    {
        out.push(Diagnostic::error(
            "asset-ext-invalid",
            p,
            format!("asset ext {ext:?} is not a file extension"),
        ));
    }
}

fn check_language_key(k: &str, p: &str, out: &mut Vec<Diagnostic>) {
    if ISO_639_1.contains(&k) {
        return;
    }
    let base = k.split(['-', '_']).next().unwrap_or_default();
    if k.len() > 2 && base.len() == 2 && ISO_639_1.contains(&base.to_ascii_lowercase().as_str()) {
        out.push(Diagnostic::error(
            "multilingual-key-has-region",
            p,
            format!(
                "language key {k:?} has a region code; use {:?}",
                base.to_ascii_lowercase()
            ),
        ));
    } else {
        out.push(Diagnostic::error(
            "multilingual-key-not-iso639-1",
            p,
            format!("language key {k:?} is not a lowercase iso 639-1 code"),
        ));
    }
}

fn check_date(n: Option<&Number>, p: &str, out: &mut Vec<Diagnostic>) {
    let Some(n) = n else { return };
    let Some(f) = n.as_f64() else { return };
    if f < 0.0 {
        out.push(Diagnostic::error(
            "date-negative",
            p,
            format!("timestamp {n} is negative"),
        ));
    } else if f.fract() != 0.0 {
        out.push(Diagnostic::error(
            "date-not-whole-seconds",
            p,
            format!("timestamp {n} must be whole seconds"),
        ));
    } else if f > MILLIS_THRESHOLD {
        out.push(Diagnostic::warning(
            "date-in-milliseconds",
            p,
            format!("timestamp {n} looks like milliseconds; the spec wants seconds"),
        ));
    }
}

/// Validates a lorebook; paths start with `path_prefix` (`data.character_book` for a card's
/// book, `data` for a standalone `lorebook_v3`, empty for a bare book).
///
/// ```
/// let mut e = ccv3::Entry::new(&["(unclosed"], "@@depth deep\nText");
/// e.use_regex = true;
/// let mut book = ccv3::Lorebook::default();
/// book.entries.push(e);
/// let diags = ccv3::validate_lorebook(&book, "data");
/// let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
/// assert_eq!(codes, ["entry-regex-invalid", "decorator-value-not-number"]);
/// assert_eq!(diags[0].path, "data.entries[0].keys[0]");
/// ```
pub fn validate_lorebook(book: &Lorebook, path_prefix: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let at = |k: &str| {
        if path_prefix.is_empty() {
            k.to_string()
        } else {
            format!("{path_prefix}.{k}")
        }
    };
    for (field, n, code) in [
        (
            "scan_depth",
            &book.scan_depth,
            "lorebook-scan-depth-negative",
        ),
        (
            "token_budget",
            &book.token_budget,
            "lorebook-token-budget-negative",
        ),
    ] {
        if let Some(n) = n {
            if n.as_f64().is_some_and(|f| f < 0.0) {
                out.push(Diagnostic::warning(
                    code,
                    at(field),
                    format!("{field} {n} is negative"),
                ));
            }
        }
    }
    let mut regex_cache = HashMap::new();
    for (i, e) in book.entries.iter().enumerate() {
        // Paths are built only for a finding: formatting three per entry was a tenth of
        // `ccv3 validate DIR` (issue 16).
        let ep = || at(&format!("entries[{i}]"));
        // What a key means to the application that wrote the entry: with `use_regex`, every
        // key is a regex, unless SillyTavern wrote the entry (it writes `use_regex: true` on
        // every entry and reads only `/pattern/flags` keys as regexes); a `/pattern/flags` key
        // is a regex everywhere.
        // (Looked up only when it matters: the extensions of a big book are not parsed.)
        let all_regex = e.use_regex
            && e.keys.iter().any(|k| slash_regex(k).is_none())
            && !written_by_sillytavern(&e.extensions);
        for (j, k) in e.keys.iter().enumerate() {
            let kp = || format!("{}.keys[{j}]", ep());
            if k.is_empty() {
                out.push(Diagnostic::warning(
                    "entry-key-empty",
                    kp(),
                    "key is an empty string",
                ));
            }
            if all_regex || slash_regex(k).is_some() {
                check_regex(k, &kp(), &mut regex_cache, &mut out);
            }
        }
        if let Some(pos) = &e.position {
            if pos != "before_char" && pos != "after_char" {
                out.push(Diagnostic::error(
                    "entry-position-invalid",
                    format!("{}.position", ep()),
                    format!("position must be \"before_char\" or \"after_char\", found {pos:?}"),
                ));
            }
        }
        check_decorators(&e.content, &|| format!("{}.content", ep()), &mut out);
    }
    out
}

/// Splits a key written `/pattern/flags` into pattern and flags as SillyTavern does (the
/// shortest pattern after which only flags `gimsuy` follow the closing `/`, with no unescaped
/// `/` inside); `None` when the key is not of that form. Every application that reads this form
/// (SillyTavern, RisuAI, the lore engine of `ccv3-lore`) treats such a key as a regex.
///
/// ```
/// use ccv3::validate::slash_regex;
/// assert_eq!(slash_regex("/dragons?/i"), Some(("dragons?", "i")));
/// assert_eq!(slash_regex("/a\\/b/"), Some(("a\\/b", "")));
/// assert_eq!(slash_regex("/a/b/"), None);
/// assert_eq!(slash_regex("*sigh*"), None);
/// ```
pub fn slash_regex(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix('/')?;
    // The shortest pattern such that the remainder is `/` and flags only.
    let mut from = 1;
    loop {
        let p = from + rest.get(from..)?.find('/')?;
        let flags = &rest[p + 1..];
        if flags.chars().all(|c| "gimsuy".contains(c)) {
            let pat = &rest[..p];
            return (!has_unescaped_slash(pat)).then_some((pat, flags));
        }
        from = p + 1;
    }
}

fn has_unescaped_slash(pat: &str) -> bool {
    let mut esc = false;
    for c in pat.chars() {
        if esc {
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else if c == '/' {
            return true;
        }
    }
    false
}

/// The `extensions` fields that mark an entry written by SillyTavern (World Info fields it
/// writes on every exported entry; the lore engine of `ccv3-lore` uses the same four). Such an
/// entry's `use_regex: true` means nothing: SillyTavern writes it on every entry and reads a key
/// as a regex only when it is written `/pattern/flags`.
pub const SILLYTAVERN_MARKERS: [&str; 4] = [
    "selectiveLogic",
    "display_index",
    "useProbability",
    "exclude_recursion",
];

/// True when an entry's extensions carry one of [`SILLYTAVERN_MARKERS`].
///
/// ```
/// assert!(!ccv3::validate::written_by_sillytavern(&ccv3::Extensions::new()));
/// let ext = ccv3::Extensions::from_json_text(r#"{"display_index": 3, "position": 1}"#).unwrap();
/// assert!(ccv3::validate::written_by_sillytavern(&ext));
/// ```
pub fn written_by_sillytavern(ext: &crate::Extensions) -> bool {
    let mut found = false;
    ext.visit(|k| SILLYTAVERN_MARKERS.contains(&k), |_, _| found = true);
    found
}

/// (deepest nesting of groups and classes, number of `|`) of a pattern, escapes skipped.
fn complexity(pattern: &str) -> (usize, usize) {
    let (mut depth, mut max, mut bars, mut escaped) = (0usize, 0usize, 0usize, false);
    for c in pattern.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '(' | '[' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' => depth = depth.saturating_sub(1),
            '|' => bars += 1,
            _ => {}
        }
    }
    (max, bars)
}

/// The finding for one regex key: `None` when it compiles. A key written `/pattern/flags` is
/// compiled as `pattern` with `flags`, any other as a whole.
fn regex_finding(key: &str) -> Option<(bool, String)> {
    let (pattern, flags) = slash_regex(key).unwrap_or((key, ""));
    let (depth, bars) = complexity(pattern);
    if pattern.len() > MAX_REGEX_LEN || depth > MAX_REGEX_NESTING || bars > MAX_REGEX_ALTERNATIVES {
        return Some((
            false,
            format!(
                "regex key of {} bytes, nesting {depth} and {bars} alternatives is too complex to check",
                key.len()
            ),
        ));
    }
    // Whether a pattern is valid does not depend on `i`, and compiling with it (Unicode case
    // folding of every class) is most of the cost of the check: leave one `i` out.
    let flags = match flags.match_indices('i').count() {
        1 => std::borrow::Cow::Owned(flags.replacen('i', "", 1)),
        _ => std::borrow::Cow::Borrowed(flags),
    };
    crate::check_regex_syntax(pattern, &flags).err().map(|e| {
        (
            true,
            format!(
                "key {:?} is not a valid regex ({}); it can never match",
                truncate(key, 80),
                e.to_lowercase()
            ),
        )
    })
}

/// Checks a `use_regex` key; `cache` remembers keys already compiled in this book.
fn check_regex<'a>(
    key: &'a str,
    p: &str,
    cache: &mut HashMap<&'a str, Option<(bool, String)>>,
    out: &mut Vec<Diagnostic>,
) {
    let finding = cache.entry(key).or_insert_with(|| regex_finding(key));
    match finding {
        None => {}
        Some((true, msg)) => out.push(Diagnostic::error("entry-regex-invalid", p, msg.clone())),
        Some((false, msg)) => out.push(Diagnostic::warning(
            "entry-regex-too-complex",
            p,
            msg.clone(),
        )),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    None,
    Number,
    Role,
    Text,
    List,
}

fn decorator_kind(name: &str) -> Option<ValueKind> {
    Some(match name {
        "activate_only_after"
        | "activate_only_every"
        | "depth"
        | "instruct_depth"
        | "reverse_depth"
        | "reverse_instruct_depth"
        | "scan_depth"
        | "instruct_scan_depth"
        | "is_greeting" => ValueKind::Number,
        "keep_activate_after_match"
        | "dont_activate_after_match"
        | "ignore_on_max_context"
        | "dont_activate"
        | "activate" => ValueKind::None,
        "role" => ValueKind::Role,
        "position" | "is_user_icon" | "disable_ui_prompt" => ValueKind::Text,
        "additional_keys" | "exclude_keys" => ValueKind::List,
        _ => return None,
    })
}

/// `p` gives the content's path, built only for a finding (most entries have none).
fn check_decorators(content: &str, p: &dyn Fn() -> String, out: &mut Vec<Diagnostic>) {
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, d) in crate::decorator::header_lines(content).0.enumerate() {
        let value = (!d.value.is_empty()).then_some(d.value);
        let at = if d.fallback { "@@@" } else { "@@" };
        if i == 0 && d.fallback {
            out.push(Diagnostic::warning(
                "decorator-fallback-orphan",
                p(),
                format!("fallback {at}{} has no decorator before it", d.name),
            ));
        }
        if d.name.is_empty() || !d.name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            out.push(Diagnostic::warning(
                "decorator-name-invalid",
                p(),
                format!(
                    "decorator name {:?} should be snake_case latin letters and underscores",
                    d.name
                ),
            ));
            continue;
        }
        let Some(kind) = decorator_kind(d.name) else {
            continue;
        };
        if !d.fallback && kind != ValueKind::List && !seen.insert(d.name) {
            out.push(Diagnostic::warning(
                "decorator-duplicate",
                p(),
                format!(
                    "{at}{} appears more than once; only the first counts",
                    d.name
                ),
            ));
        }
        match (kind, value) {
            (ValueKind::None, Some(v)) => out.push(Diagnostic::warning(
                "decorator-value-unexpected",
                p(),
                format!("{at}{} takes no value, found {v:?}", d.name),
            )),
            (ValueKind::None, None) => {}
            (_, None) => out.push(Diagnostic::error(
                "decorator-value-missing",
                p(),
                format!("{at}{} needs a value", d.name),
            )),
            (ValueKind::Number, Some(v)) => {
                if !v.parse::<f64>().is_ok_and(f64::is_finite) {
                    out.push(Diagnostic::error(
                        "decorator-value-not-number",
                        p(),
                        format!("{at}{} needs a number, found {v:?}", d.name),
                    ));
                }
            }
            (ValueKind::Role, Some(v)) => {
                if !matches!(v, "assistant" | "system" | "user") {
                    out.push(Diagnostic::error(
                        "decorator-role-invalid",
                        p(),
                        format!("{at}role must be assistant, system or user, found {v:?}"),
                    ));
                }
            }
            (ValueKind::Text | ValueKind::List, Some(_)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Asset, Entry, Severity};
    use serde_json::json;

    fn codes(d: &[Diagnostic]) -> Vec<&str> {
        d.iter().map(|d| d.code.as_str()).collect()
    }

    fn card_with_assets(assets: Vec<Asset>) -> Card {
        let mut c = Card::new("A");
        c.data.assets = Some(assets);
        c
    }

    fn check(card: &Card) -> Vec<Diagnostic> {
        validate_card(card, &ValidateContext::default())
    }

    fn book_of(e: Entry) -> Lorebook {
        Lorebook {
            entries: vec![e],
            ..Default::default()
        }
    }

    fn regex_entry(keys: &[&str]) -> Entry {
        let mut e = Entry::new(keys, "x");
        e.use_regex = true;
        e
    }

    fn content_codes(content: &str) -> Vec<String> {
        let d = validate_lorebook(&book_of(Entry::new(&["k"], content)), "data");
        d.into_iter().map(|d| d.code).collect()
    }

    #[test]
    fn spec_v3_valid_card_has_no_diagnostics() {
        let mut c = card_with_assets(vec![
            Asset::new("icon", "ccdefault:", "main", "png"),
            Asset::new("icon", "embeded://assets/icon/images/b.webp", "alt", "webp"),
            Asset::new("background", "https://x.invalid/bg.jpg", "main", "jpg"),
            Asset::new("x_risu_asset", "data:image/png;base64,AAAA", "a", "png"),
            Asset::new("emotion", "__asset:0", "happy", "png"),
        ]);
        c.data.creator_notes_multilingual = json!({"en": "hi", "ko": "안녕"}).as_object().cloned();
        c.data.creation_date = Some(1_700_000_000u64.into());
        c.data.modification_date = Some(0u64.into());
        c.data.source = Some(vec!["https://x.invalid/c/1".into(), "chub:42".into()]);
        let ctx = ValidateContext {
            embedded_paths: Some(vec!["assets/icon/images/b.webp".into()]),
            png_asset_paths: Some(vec!["0".into()]),
        };
        assert!(validate_card(&c, &ctx).is_empty());
    }

    #[test]
    fn spec_v3_spec_version_above_3_0_is_a_warning() {
        let mut c = Card::new("A");
        c.spec_version = "3.1".into();
        let d = check(&c);
        assert_eq!(codes(&d), ["spec-version-newer"]);
        assert_eq!(d[0].severity, Severity::Warning);
        assert_eq!(d[0].path, "spec_version");
        c.spec_version = "2.0".into();
        assert_eq!(codes(&check(&c)), ["spec-version-older"]);
        c.spec_version = "three".into();
        assert_eq!(codes(&check(&c)), ["spec-version-invalid"]);
        c.spec_version = "3.0".into();
        assert!(check(&c).is_empty());
    }

    #[test]
    fn spec_v3_asset_ext_must_be_lowercase_without_dot() {
        let c = card_with_assets(vec![
            Asset::new("icon", "https://x.invalid/a", "main", ".png"),
            Asset::new("x_a", "https://x.invalid/b", "b", "PNG"),
            Asset::new("x_a", "https://x.invalid/c", "c", ""),
            Asset::new("x_a", "https://x.invalid/d", "d", "p g"),
            Asset::new("x_a", "https://x.invalid/e", "e", "unknown"),
        ]);
        let d = check(&c);
        assert_eq!(
            codes(&d),
            [
                "asset-ext-has-dot",
                "asset-ext-not-lowercase",
                "asset-ext-empty",
                "asset-ext-invalid"
            ]
        );
        assert_eq!(d[0].path, "data.assets[0].ext");
        assert!(d[0].message.contains(".png"));
        assert!(d.iter().all(|d| d.severity == Severity::Error));
    }

    #[test]
    fn spec_v3_asset_ext_is_ignored_for_ccdefault() {
        let c = card_with_assets(vec![Asset::new("icon", "ccdefault:", "main", "")]);
        assert!(check(&c).is_empty());
    }

    #[test]
    fn spec_v3_several_icons_need_exactly_one_main() {
        let none = card_with_assets(vec![
            Asset::new("icon", "ccdefault:", "a", "png"),
            Asset::new("icon", "ccdefault:", "b", "png"),
        ]);
        assert_eq!(codes(&check(&none)), ["asset-icon-main-missing"]);
        let two = card_with_assets(vec![
            Asset::new("icon", "ccdefault:", "main", "png"),
            Asset::new("icon", "ccdefault:", "main", "png"),
        ]);
        let d = check(&two);
        assert_eq!(codes(&d), ["asset-icon-main-duplicate"]);
        assert_eq!(d[0].path, "data.assets[1].name");
        let one = card_with_assets(vec![Asset::new("icon", "ccdefault:", "face", "png")]);
        assert!(check(&one).is_empty());
    }

    #[test]
    fn spec_v3_at_most_one_main_background() {
        let c = card_with_assets(vec![
            Asset::new("background", "ccdefault:", "main", "png"),
            Asset::new("background", "ccdefault:", "main", "png"),
        ]);
        assert_eq!(codes(&check(&c)), ["asset-background-main-duplicate"]);
        let ok = card_with_assets(vec![
            Asset::new("background", "ccdefault:", "forest", "png"),
            Asset::new("background", "ccdefault:", "city", "png"),
        ]);
        assert!(check(&ok).is_empty());
    }

    #[test]
    fn spec_v3_custom_asset_types_should_start_with_x() {
        let c = card_with_assets(vec![
            Asset::new("portrait", "ccdefault:", "p", "png"),
            Asset::new("", "ccdefault:", "q", "png"),
        ]);
        let d = check(&c);
        assert_eq!(codes(&d), ["asset-type-not-x-prefixed", "asset-type-empty"]);
        assert_eq!(d[0].severity, Severity::Warning);
        assert_eq!(d[1].severity, Severity::Error);
    }

    #[test]
    fn spec_v3_asset_uri_scheme_must_be_known() {
        let c = card_with_assets(vec![
            Asset::new("x_a", "ftp://x.invalid/a.png", "a", "png"),
            Asset::new("x_a", "embedded://a.png", "b", "png"),
            Asset::new("x_a", "data:text/plain,hello", "c", "txt"),
            Asset::new("x_a", "http://x.invalid/a.png", "d", "png"),
            Asset::new("x_a", "", "e", "png"),
        ]);
        let d = check(&c);
        assert_eq!(
            codes(&d),
            [
                "asset-uri-scheme-unknown",
                "asset-uri-embedded-misspelled",
                "asset-uri-data-not-base64",
                "asset-uri-http-insecure",
                "asset-uri-empty"
            ]
        );
    }

    #[test]
    fn spec_v3_embeded_targets_must_exist_in_the_charx() {
        let c = card_with_assets(vec![
            Asset::new("icon", "embeded://assets/icon/images/a.png", "main", "png"),
            Asset::new("x_a", "embeded://assets/other/missing.bin", "m", "bin"),
            Asset::new("x_a", "__asset:assets/other/b.bin", "b", "bin"),
        ]);
        let ctx = ValidateContext::charx(vec![
            "assets/icon/images/a.png".into(),
            "assets/other/b.bin".into(),
        ]);
        let d = validate_card(&c, &ctx);
        assert_eq!(codes(&d), ["asset-embedded-missing"]);
        assert_eq!(d[0].path, "data.assets[1].uri");
        assert!(d[0].message.contains("assets/other/missing.bin"));
        // Without a CHARX there is nothing to check against.
        assert!(check(&c).is_empty());
    }

    #[test]
    fn spec_v3_asset_uris_must_exist_as_png_chunks() {
        let c = card_with_assets(vec![
            Asset::new("icon", "__asset:0", "main", "png"),
            Asset::new("x_a", "__asset:7", "b", "png"),
        ]);
        let d = validate_card(&c, &ValidateContext::png(vec!["0".into()]));
        assert_eq!(codes(&d), ["asset-png-chunk-missing"]);
        assert_eq!(d[0].path, "data.assets[1].uri");
    }

    #[test]
    fn spec_v3_creator_notes_multilingual_keys_are_iso_639_1_without_region() {
        let mut c = Card::new("A");
        c.data.creator_notes_multilingual =
            json!({"en": "a", "en-US": "b", "pt_BR": "c", "EN": "d", "xx": "e", "eng": "f",
                   "ja": 5})
            .as_object()
            .cloned();
        let d = check(&c);
        assert_eq!(
            codes(&d),
            [
                "multilingual-key-has-region",
                "multilingual-key-has-region",
                "multilingual-key-not-iso639-1",
                "multilingual-key-not-iso639-1",
                "multilingual-key-not-iso639-1",
                "multilingual-value-not-string"
            ]
        );
        assert_eq!(d[0].path, "data.creator_notes_multilingual.en-US");
    }

    #[test]
    fn spec_v3_dates_are_whole_seconds() {
        let mut c = Card::new("A");
        c.data.creation_date = Number::from_f64(1.5);
        c.data.modification_date = Some((-5i64).into());
        assert_eq!(
            codes(&check(&c)),
            ["date-not-whole-seconds", "date-negative"]
        );
        c.data.creation_date = Some(1_721_000_000_123u64.into());
        c.data.modification_date = Some(1_721_000_000u64.into());
        let d = check(&c);
        assert_eq!(codes(&d), ["date-in-milliseconds"]);
        assert_eq!(d[0].path, "data.creation_date");
    }

    #[test]
    fn spec_v3_dates_may_be_zero_for_unknown() {
        let mut read = Vec::new();
        let c = Card::from_json(
            json!({"spec": "chara_card_v3", "spec_version": "3.0",
                   "data": {"name": "A", "creation_date": 0, "modification_date": 0}}),
            &mut read,
        )
        .unwrap();
        assert!(
            read.iter().all(|d| !d.path.ends_with("_date")),
            "the reader accepts 0: {read:?}"
        );
        assert_eq!(
            c.data.creation_date.as_ref().and_then(Number::as_u64),
            Some(0)
        );
        assert_eq!(
            c.data.modification_date.as_ref().and_then(Number::as_u64),
            Some(0)
        );
        assert!(check(&c).is_empty(), "validation accepts 0");
        let out = c.to_v3_json();
        assert_eq!(
            (
                &out["data"]["creation_date"],
                &out["data"]["modification_date"]
            ),
            (&json!(0), &json!(0))
        );
    }

    #[test]
    fn spec_v3_source_items_are_ids_or_http_urls() {
        let mut c = Card::new("A");
        c.data.source = Some(vec![
            "".into(),
            "ftp://x.invalid/a".into(),
            "https://x.invalid".into(),
            "risu:abc".into(),
        ]);
        assert_eq!(
            codes(&check(&c)),
            ["source-item-empty", "source-item-not-http-url"]
        );
    }

    #[test]
    fn spec_v3_card_character_book_is_validated_with_its_path() {
        let mut c = Card::new("A");
        let mut e = Entry::new(&["a"], "x");
        e.position = Some("top".into());
        c.data.character_book = Some(book_of(e));
        let d = check(&c);
        assert_eq!(codes(&d), ["entry-position-invalid"]);
        assert_eq!(d[0].path, "data.character_book.entries[0].position");
    }

    #[test]
    fn spec_v3_use_regex_keys_must_compile() {
        let b = book_of(regex_entry(&[
            "/dragons?/i",
            "(unclosed",
            "/a(/g",
            "plain key",
            "/\\d+/",
        ]));
        let d = validate_lorebook(&b, "");
        assert_eq!(codes(&d), ["entry-regex-invalid", "entry-regex-invalid"]);
        assert_eq!(d[0].path, "entries[0].keys[1]");
        assert_eq!(d[1].path, "entries[0].keys[2]");
        // Not checked when use_regex is false (unless written /pattern/flags).
        let plain = book_of(Entry::new(&["(unclosed"], "x"));
        assert!(validate_lorebook(&plain, "").is_empty());
    }

    #[test]
    fn regex_keys_checked_without_i_get_the_verdict_of_a_compile_with_it() {
        for pattern in [
            "dragons?",
            "a(",
            "[z-a]",
            "\\p{Letter}",
            "\\p{NoSuchProperty}",
            "(?<name>x)\\k<name>",
            "(?<=Ä)ß",
            "[\\u{10400}-\\u{1044F}]",
            "x{2,1}",
        ] {
            for flags in ["i", "iu", "im", "si", "ii"] {
                let key = format!("/{pattern}/{flags}");
                let full = regress::Regex::with_flags(pattern, flags).is_ok();
                assert_eq!(regex_finding(&key).is_none(), full, "{key}");
            }
        }
    }

    #[test]
    fn spec_v3_use_regex_invalid_keys_are_reported_at_every_place() {
        let mut b = book_of(regex_entry(&["*sigh*", "ok"]));
        b.entries.push(regex_entry(&["*sigh*"]));
        let d = validate_lorebook(&b, "data");
        assert_eq!(codes(&d), ["entry-regex-invalid", "entry-regex-invalid"]);
        assert_eq!(d[1].path, "data.entries[1].keys[0]");
        assert!(d[0].message.contains("*sigh*"));
    }

    #[test]
    fn issue13_sillytavern_entries_have_regex_keys_only_in_slash_form() {
        // SillyTavern writes `use_regex: true` on every exported entry and reads a key as a
        // regex only when it is written /pattern/flags (world-info.js, parseRegexFromString).
        let mut e = regex_entry(&["*sigh*", "(smiles", "/(unclosed/i", "/ok+/"]);
        e.extensions.insert("display_index".into(), json!(0));
        let d = validate_lorebook(&book_of(e), "data");
        assert_eq!(codes(&d), ["entry-regex-invalid"]);
        assert_eq!(d[0].path, "data.entries[0].keys[2]");
        // Without SillyTavern's fields, use_regex means what the spec says: every key.
        let d = validate_lorebook(&book_of(regex_entry(&["*sigh*"])), "data");
        assert_eq!(codes(&d), ["entry-regex-invalid"]);
        // A /pattern/flags key is a regex even without use_regex.
        let plain = Entry::new(&["/a(/", "(plain"], "x");
        let d = validate_lorebook(&book_of(plain), "");
        assert_eq!(codes(&d), ["entry-regex-invalid"]);
        assert_eq!(d[0].path, "entries[0].keys[0]");
    }

    #[test]
    fn spec_v3_regex_keys_beyond_limits_are_not_compiled() {
        let deep = "(".repeat(5000) + &")".repeat(5000);
        let long = "a".repeat(MAX_REGEX_LEN + 1);
        let alternatives = "a|".repeat(5000);
        let b = book_of(regex_entry(&[&deep, &long, &alternatives]));
        assert_eq!(
            codes(&validate_lorebook(&b, "")),
            [
                "entry-regex-too-complex",
                "entry-regex-too-complex",
                "entry-regex-too-complex"
            ]
        );
        // At the limits, compiling needs little stack (checked on a 1 MiB thread).
        let edge = "(a|".repeat(100) + &")".repeat(100) + "|" + &"b|".repeat(190);
        let ok = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || validate_lorebook(&book_of(regex_entry(&[&edge])), "").len())
            .map(|h| h.join().ok());
        assert_eq!(ok.ok().flatten(), Some(0));
    }

    #[test]
    fn spec_v3_entry_position_is_before_or_after_char() {
        let mut e = Entry::new(&["a"], "x");
        e.position = Some("after_char".into());
        assert!(validate_lorebook(&book_of(e.clone()), "").is_empty());
        e.position = Some("4".into());
        let d = validate_lorebook(&book_of(e), "data");
        assert_eq!(codes(&d), ["entry-position-invalid"]);
        assert_eq!(d[0].severity, Severity::Error);
    }

    #[test]
    fn spec_v3_lorebook_scan_depth_and_token_budget_are_not_negative() {
        let b = Lorebook {
            scan_depth: Some((-1i64).into()),
            token_budget: Some((-2i64).into()),
            ..Default::default()
        };
        let d = validate_lorebook(&b, "data");
        assert_eq!(
            codes(&d),
            [
                "lorebook-scan-depth-negative",
                "lorebook-token-budget-negative"
            ]
        );
        assert_eq!(d[0].path, "data.scan_depth");
    }

    #[test]
    fn spec_v3_empty_keys_are_flagged() {
        let d = validate_lorebook(&book_of(Entry::new(&["a", ""], "x")), "");
        assert_eq!(codes(&d), ["entry-key-empty"]);
        assert_eq!(d[0].path, "entries[0].keys[1]");
    }

    #[test]
    fn spec_v3_decorator_names_are_snake_case_latin() {
        assert_eq!(content_codes("@@Depth 4\nx"), ["decorator-name-invalid"]);
        assert_eq!(content_codes("@@my-deco\nx"), ["decorator-name-invalid"]);
        assert_eq!(content_codes("@@\nx"), ["decorator-name-invalid"]);
        assert!(content_codes("@@risu_custom_thing 4\nx").is_empty());
    }

    #[test]
    fn spec_v3_number_decorators_need_numbers() {
        assert!(content_codes("@@depth 4\n@@scan_depth 0\n@@is_greeting 1\nx").is_empty());
        assert_eq!(
            content_codes("@@depth four\n@@activate_only_every 2,3\nx"),
            ["decorator-value-not-number", "decorator-value-not-number"]
        );
        assert_eq!(content_codes("@@depth\nx"), ["decorator-value-missing"]);
    }

    #[test]
    fn spec_v3_role_decorator_is_assistant_system_or_user() {
        assert!(content_codes("@@role assistant\nx").is_empty());
        assert_eq!(
            content_codes("@@role narrator\nx"),
            ["decorator-role-invalid"]
        );
    }

    #[test]
    fn spec_v3_valueless_decorators_take_no_value() {
        assert!(content_codes("@@activate\n@@dont_activate\nx").is_empty());
        assert_eq!(
            content_codes("@@activate now\nx"),
            ["decorator-value-unexpected"]
        );
    }

    #[test]
    fn spec_v3_single_use_decorators_count_once() {
        assert_eq!(
            content_codes("@@depth 1\n@@depth 2\nx"),
            ["decorator-duplicate"]
        );
        // additional_keys may repeat; fallbacks are not duplicates.
        assert!(content_codes(
            "@@additional_keys a,b\n@@additional_keys c\n@@risu_x 1\n@@@depth 2\n@@depth 3\nx"
        )
        .is_empty());
        assert_eq!(
            content_codes("@@exclude_keys\nx"),
            ["decorator-value-missing"]
        );
    }

    #[test]
    fn spec_v3_fallback_decorator_follows_a_decorator() {
        assert_eq!(
            content_codes("@@@depth 2\nx"),
            ["decorator-fallback-orphan"]
        );
    }

    #[test]
    fn spec_v3_decorators_only_count_at_the_top_of_content() {
        assert!(content_codes("Body first\n@@depth nope").is_empty());
        assert!(content_codes("\n\n@@depth 2\n\nBody").is_empty());
    }

    #[test]
    fn spec_v3_decorator_line_parser_reads_name_and_value() {
        use crate::decorator::{header_lines, Line};
        let v: Vec<_> = header_lines("@@depth 4\n@@@role  system \n@@activate\nx")
            .0
            .collect();
        let line = |no, fallback, name, value| Line {
            no,
            fallback,
            name,
            value,
        };
        assert_eq!(
            v,
            [
                line(1, false, "depth", "4"),
                line(2, true, "role", "system"),
                line(3, false, "activate", ""),
            ]
        );
    }

    #[test]
    fn spec_v3_corpus_lorebooks_validate_without_panic() {
        let dir = crate::test_corpus::dir().join("lorebook");
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for f in rd.flatten() {
            let bytes = std::fs::read(f.path()).unwrap_or_default();
            let mut d = Vec::new();
            if let Ok((book, _)) = crate::lorebook::read_lorebook_slice(&bytes, &mut d) {
                let diags = validate_lorebook(&book, "");
                assert!(diags
                    .iter()
                    .all(|d| !d.code.is_empty() && !d.message.is_empty()));
            }
        }
    }

    /// Finding paths are built only when there is a finding (issue 16), and name the entry,
    /// key and field as before (SPEC_V3 "Lorebook": `keys`, `content` decorators, `position`).
    #[test]
    fn entry_finding_paths_name_entry_key_and_field() {
        let mut e = Entry::new(&["ok", ""], "@@depth x\nText");
        e.position = Some("middle".into());
        let mut book = crate::Lorebook::default();
        book.entries.push(Entry::new(&["fine"], "no decorators"));
        book.entries.push(e);
        let d = validate_lorebook(&book, "data.character_book");
        let paths: Vec<(&str, &str)> = d
            .iter()
            .map(|d| (d.code.as_str(), d.path.as_str()))
            .collect();
        assert_eq!(
            paths,
            [
                ("entry-key-empty", "data.character_book.entries[1].keys[1]"),
                (
                    "entry-position-invalid",
                    "data.character_book.entries[1].position"
                ),
                (
                    "decorator-value-not-number",
                    "data.character_book.entries[1].content"
                ),
            ]
        );
        let bare = validate_lorebook(&book, "");
        assert_eq!(bare[0].path, "entries[1].keys[1]");
    }
}
