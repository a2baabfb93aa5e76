//! Diagnostics: what the lenient reader repaired and what the validator found.
//!
//! Every diagnostic has a [`Severity`], a stable `code` (kebab-case, documented in
//! `docs/spec-coverage.md` with the `SPEC_V3.md` section it enforces), a JSON `path` into the card
//! as a V3 object (`data.character_book.entries[3].keys`) and a human message.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A spec MUST / MUST NOT is violated.
    Error,
    /// A SHOULD is violated, or the reader repaired something.
    Warning,
    /// Worth knowing, nothing wrong.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// One finding about a card or lorebook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// A stable, kebab-case code such as `asset-ext-not-lowercase`.
    pub code: String,
    /// JSON path of the value concerned (`data.assets[2].ext`); empty for the whole file.
    pub path: String,
    /// A lowercase message naming the fact and the bad value.
    pub message: String,
}

impl Diagnostic {
    /// A new diagnostic.
    pub fn new(
        severity: Severity,
        code: impl Into<String>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity,
            code: code.into(),
            path: path.into(),
            message: message.into(),
        }
    }
    /// A new error-severity diagnostic.
    pub fn error(code: impl Into<String>, path: impl Into<String>, msg: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, path, msg)
    }
    /// A new warning-severity diagnostic.
    pub fn warning(
        code: impl Into<String>,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, path, msg)
    }
    /// A new info-severity diagnostic.
    pub fn info(code: impl Into<String>, path: impl Into<String>, msg: impl Into<String>) -> Self {
        Self::new(Severity::Info, code, path, msg)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} [{}]: {}", self.severity, self.code, self.message)
        } else {
            write!(
                f,
                "{} [{}] at {}: {}",
                self.severity, self.code, self.path, self.message
            )
        }
    }
}

/// A list of diagnostics with helpers.
pub type Diagnostics = Vec<Diagnostic>;

/// True when any diagnostic in `diags` has [`Severity::Error`].
///
/// ```
/// use ccv3::Diagnostic;
/// let warned = [Diagnostic::warning("date-in-milliseconds", "$.data.creation_date", "...")];
/// assert!(!ccv3::has_errors(&warned));
/// let failed = [Diagnostic::error("spec-version", "$.spec_version", "missing")];
/// assert!(ccv3::has_errors(&failed));
/// ```
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}

/// One diagnostic code of this crate: what the reader or the validator reports, with its
/// severity under the policy of `docs/validation.md` and the spec section it enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    /// The stable, kebab-case code.
    pub code: &'static str,
    /// The severities it can have (several only where the policy says why).
    pub severities: &'static [Severity],
    /// When it has which severity, in a few words (empty when it has one).
    pub rule: &'static str,
    /// The `SPEC_V3.md` section (or the application's format) it is about.
    pub section: &'static str,
    /// What it reports.
    pub what: &'static str,
}

use Severity::{Error as E, Info as I, Warning as W};

/// The severity of a required field that is missing or `null`: it follows the spec the file
/// claims.
const BY_CLAIM: &str =
    "error in a V3 card or `lorebook_v3`; warning in a V2 card, a bare book or another format";

/// Every code the `ccv3` crate reports (reading and validation), in the order of
/// `docs/validation.md`, which is generated from this list (a test keeps the two equal, and a
/// test finds every code the crate's source writes in it).
pub const CODES: &[Code] = &[
    // ---- the reader: the card's JSON ----
    Code { code: "wrong-type", severities: &[E, W], rule: "error where the spec fixes the type (every version, every level); warning for a shape variant of another application's format that is read as meant (World Info entries as an array, say)", section: "CharacterCard Object, Lorebook", what: "a value of another type than the spec's; repaired (numbers as text, `\"true\"`, a lone string as a list) or kept as is" },
    Code { code: "missing-required-field", severities: &[E, W], rule: BY_CLAIM, section: "CharacterCard Object, Lorebook", what: "a required field is absent; the empty value is used. Not reported for V1 cards, nor for V3-only fields of V2 cards (`group_only_greetings`, an entry's `use_regex`)" },
    Code { code: "null-value", severities: &[E, W], rule: BY_CLAIM, section: "CharacterCard Object, Lorebook", what: "`null` where the spec wants a value (a required field, an item of a list): read as absent" },
    Code { code: "unknown-spec", severities: &[W], rule: "", section: "`spec`", what: "a `spec` the reader does not know beside `data` (read as V3), or a lorebook `spec` other than `lorebook_v3`" },
    Code { code: "missing-spec", severities: &[W], rule: "", section: "`spec`", what: "`data` without `spec`: read as V2" },
    Code { code: "unknown-field", severities: &[W, I], rule: "info when kept; warning when it clashes with a book field and is dropped", section: "Lorebook", what: "a top-level field beside a `lorebook_v3` file's `data`" },
    Code { code: "entry-position-number", severities: &[W], rule: "", section: "Lorebook entry `position`", what: "`position` written as a number (SillyTavern's numbering): written as `before_char` (0) or `after_char` (others), the number kept in `extensions.position`" },
    Code { code: "json-lone-surrogate", severities: &[W], rule: "", section: "JSON", what: "a `\\u` escape of half a UTF-16 pair, replaced by U+FFFD" },
    Code { code: "backfill-warning-trimmed", severities: &[I], rule: "", section: "PNG/APNG", what: "the V3 backfill warning line removed from a V2 card's `creator_notes`" },
    Code { code: "v2-stash-restored", severities: &[I], rule: "", section: "PNG/APNG (backfill)", what: "a V2 card's `extensions.ccv3` (written by a V3 -> V2 backfill) brought back the V3 fields V2 cannot hold" },
    Code { code: "v2-stash-overridden", severities: &[I], rule: "", section: "PNG/APNG (backfill)", what: "the V2 card has its own value of a stashed field: the V2 value is kept" },
    Code { code: "v2-stash-unreadable", severities: &[W], rule: "", section: "PNG/APNG (backfill)", what: "a stashed field without the V3 type: left in the stash" },
    Code { code: "hybrid-card-field", severities: &[W], rule: "", section: "CharacterCard Object", what: "a \"hybrid\" card: a field missing from `data` was taken from the top level, as SillyTavern reads it" },
    Code { code: "bare-card-data", severities: &[W], rule: "", section: "CharacterCard Object", what: "a card's `data` object without its `spec` wrapper: read as V2 (or V3) data by its version-only fields" },
    Code { code: "textgen-character", severities: &[I], rule: "", section: "(other applications)", what: "a text-generation-webui character (YAML or JSON), read as the application loads it" },
    Code { code: "yaml-document", severities: &[I], rule: "", section: "(other applications)", what: "a YAML file read as the JSON it holds" },
    Code { code: "risum-read", severities: &[I], rule: "", section: "(other applications)", what: "a RisuAI `.risum` module, read as its lorebook (the rest kept in `extensions.risuai`)" },
    Code { code: "png-exif-card", severities: &[I], rule: "", section: "(other applications)", what: "a PNG without card text chunks whose card is in its eXIf chunk (EXIF UserComment)" },
    Code { code: "faraday-png", severities: &[I], rule: "", section: "(other applications)", what: "a Backyard AI (Faraday) PNG export, read as its character maps to a card" },
    Code { code: "wrapped-card", severities: &[I, W], rule: "warning when a key beside the card clashes with the card's own and is left out", section: "(other applications)", what: "a card inside a `character` key (Pygmalion.chat's export), read as the card inside" },
    Code { code: "agnai-character", severities: &[I], rule: "", section: "(other applications)", what: "an Agnai character export, read as Agnai's own V2 export maps it" },
    Code { code: "byaf-read", severities: &[I], rule: "", section: "(other applications)", what: "a Backyard AI `.byaf` archive, read as SillyTavern imports it" },
    Code { code: "byaf-more-characters", severities: &[W], rule: "", section: "(other applications)", what: "a `.byaf` archive with more than one character: the first is read" },
    Code { code: "byaf-scenario-unreadable", severities: &[W], rule: "", section: "(other applications)", what: "a `.byaf` scenario file that does not read: the card is read without it" },
    Code { code: "voxta-read", severities: &[I], rule: "", section: "(other applications)", what: "a Voxta `.voxpkg` package, its character read as a card" },
    Code { code: "voxta-more-characters", severities: &[W], rule: "", section: "(other applications)", what: "a Voxta package with more than one character: the entry character (else the first) is read" },
    Code { code: "voxta-book-unreadable", severities: &[W], rule: "", section: "(other applications)", what: "a Voxta memory book that is missing or does not read: the card is read without it" },
    Code { code: "voxta-scenario-unreadable", severities: &[W], rule: "", section: "(other applications)", what: "a Voxta scenario file that does not read: the card is read without it" },
    Code { code: "byaf-image-missing", severities: &[W], rule: "", section: "(other applications)", what: "a `.byaf` character's image is not in the archive" },
    // ---- the reader: containers ----
    Code { code: "portrait-not-carried", severities: &[W], rule: "", section: "PNG/APNG", what: "a conversion: the card's portrait (a WebP/JPEG icon) cannot be the PNG's own picture" },
    Code { code: "portrait-plain", severities: &[W], rule: "", section: "PNG/APNG", what: "a conversion to PNG without a portrait: a plain placeholder picture is written" },
    Code { code: "files-not-carried", severities: &[W], rule: "", section: "CHARX", what: "a conversion: files no asset points at cannot go into this container" },
    Code { code: "png-ccv3-chunk-broken", severities: &[W], rule: "", section: "PNG/APNG", what: "the `ccv3` chunk holds no readable card; the `chara` chunk was read" },
    Code { code: "png-base64-lenient", severities: &[W], rule: "", section: "PNG/APNG", what: "a card chunk's base64 needed lenient decoding (whitespace, no padding, URL alphabet)" },
    Code { code: "png-text-not-base64", severities: &[W], rule: "", section: "PNG/APNG", what: "a card chunk holds raw JSON instead of base64" },
    Code { code: "png-truncated", severities: &[W], rule: "", section: "PNG/APNG", what: "the file ends inside a chunk after the card was read" },
    Code { code: "png-data-after-iend", severities: &[W], rule: "", section: "PNG/APNG", what: "bytes after the `IEND` chunk" },
    Code { code: "png-duplicate-chunk", severities: &[W], rule: "", section: "PNG/APNG", what: "a second `ccv3`/`chara`/asset chunk of the same name, ignored" },
    Code { code: "png-bad-crc", severities: &[W], rule: "", section: "PNG/APNG", what: "a chunk whose CRC does not match" },
    Code { code: "png-compressed-text", severities: &[I], rule: "", section: "PNG/APNG", what: "the card is in a `zTXt`/`iTXt` chunk, not `tEXt` as the spec says" },
    Code { code: "png-keyword-case", severities: &[I], rule: "", section: "PNG/APNG", what: "a card chunk keyword in other letter case (`Chara`)" },
    Code { code: "png-text-chunk-malformed", severities: &[E, W], rule: "warning when it is a card chunk and the other card chunk reads", section: "PNG/APNG", what: "a text chunk that cannot be read (no keyword separator, bad compression)" },
    Code { code: "png-card-chunk-undecodable", severities: &[E, W], rule: "warning when the other card chunk reads", section: "PNG/APNG", what: "a card chunk that does not decode to text" },
    Code { code: "png-asset-undecodable", severities: &[W], rule: "", section: "PNG/APNG", what: "a `chara-ext-asset_:` chunk that does not decode; the asset is missing" },
    Code { code: "charx-non-ascii-path", severities: &[W], rule: "", section: "CHARX", what: "a file name that is not ASCII (the spec says SHOULD be)" },
    Code { code: "charx-duplicate-path", severities: &[W], rule: "", section: "CHARX", what: "two zip entries with the same path; the first is used" },
    Code { code: "charx-symlink-as-file", severities: &[W], rule: "", section: "CHARX", what: "a symbolic link entry, read as a plain file" },
    Code { code: "charx-prefix", severities: &[I], rule: "", section: "CHARX", what: "the zip sits behind other bytes (a JPEG, a self-extracting stub)" },
    // ---- the validator ----
    Code { code: "spec-version-newer", severities: &[W], rule: "", section: "`spec_version`", what: "parses as a float above 3.0: a newer spec; the card still loads" },
    Code { code: "spec-version-older", severities: &[W], rule: "", section: "`spec_version`", what: "parses as a float below 3.0 in a `chara_card_v3` card" },
    Code { code: "spec-version-invalid", severities: &[W], rule: "", section: "`spec_version`", what: "does not parse as a float" },
    Code { code: "asset-type-empty", severities: &[E], rule: "", section: "`assets`", what: "`type` is an empty string" },
    Code { code: "asset-type-not-x-prefixed", severities: &[W], rule: "", section: "`assets`", what: "a type the spec does not define that does not start with `x_`" },
    Code { code: "asset-uri-empty", severities: &[E], rule: "", section: "`assets`", what: "`uri` is an empty string" },
    Code { code: "asset-uri-embedded-misspelled", severities: &[W], rule: "", section: "CHARX", what: "`embedded://` instead of the spec's `embeded://`" },
    Code { code: "asset-uri-data-not-base64", severities: &[W], rule: "", section: "`assets`", what: "a `data:` URL that is not base64" },
    Code { code: "asset-uri-scheme-unknown", severities: &[W], rule: "", section: "`assets`", what: "not `ccdefault:`, `embeded://`, `__asset:`, `data:` or http(s)" },
    Code { code: "asset-uri-http-insecure", severities: &[I], rule: "", section: "`assets`", what: "an `http://` URL (applications may ignore it)" },
    Code { code: "asset-ext-empty", severities: &[E], rule: "", section: "`assets`", what: "`ext` is empty (`unknown` is the spec's value for unknown)" },
    Code { code: "asset-ext-has-dot", severities: &[E], rule: "", section: "`assets`", what: "`ext` contains a dot (`.png`)" },
    Code { code: "asset-ext-not-lowercase", severities: &[E], rule: "", section: "`assets`", what: "`ext` has uppercase letters" },
    Code { code: "asset-ext-invalid", severities: &[E], rule: "", section: "`assets`", what: "`ext` has characters other than `a-z`, `0-9`" },
    Code { code: "asset-icon-main-missing", severities: &[E], rule: "", section: "`assets`", what: "several `icon` assets and none named `main`" },
    Code { code: "asset-icon-main-duplicate", severities: &[E], rule: "", section: "`assets`", what: "more than one `icon` asset named `main`" },
    Code { code: "asset-background-main-duplicate", severities: &[E], rule: "", section: "`assets`", what: "more than one `background` asset named `main`" },
    Code { code: "asset-embedded-missing", severities: &[E], rule: "", section: "CHARX", what: "an `embeded://` (or, in a CHARX, `__asset:`) path that is not a file of the CHARX" },
    Code { code: "asset-png-chunk-missing", severities: &[E], rule: "", section: "PNG/APNG", what: "an `__asset:` path with no `chara-ext-asset_:` chunk in the PNG" },
    Code { code: "multilingual-key-has-region", severities: &[E], rule: "", section: "`creator_notes_multilingual`", what: "a key with a region code (`en-US`, `pt_BR`)" },
    Code { code: "multilingual-key-not-iso639-1", severities: &[E], rule: "", section: "`creator_notes_multilingual`", what: "a key that is not a lowercase ISO 639-1 code" },
    Code { code: "multilingual-value-not-string", severities: &[E], rule: "", section: "`creator_notes_multilingual`", what: "a value that is not a string" },
    Code { code: "date-negative", severities: &[E], rule: "", section: "`creation_date`, `modification_date`", what: "a negative timestamp" },
    Code { code: "date-not-whole-seconds", severities: &[E], rule: "", section: "`creation_date`, `modification_date`", what: "a fractional timestamp" },
    Code { code: "date-in-milliseconds", severities: &[W], rule: "", section: "`creation_date`, `modification_date`", what: "above 1e11: milliseconds, not seconds (RisuAI writes these)" },
    Code { code: "source-item-empty", severities: &[W], rule: "", section: "`source`", what: "an empty string" },
    Code { code: "source-item-not-http-url", severities: &[W], rule: "", section: "`source`", what: "a URI whose scheme is not http or https" },
    Code { code: "lorebook-scan-depth-negative", severities: &[W], rule: "", section: "Lorebook `scan_depth`", what: "a negative scan depth" },
    Code { code: "lorebook-token-budget-negative", severities: &[W], rule: "", section: "Lorebook `token_budget`", what: "a negative token budget" },
    Code { code: "entry-key-empty", severities: &[W], rule: "", section: "`keys`", what: "an empty string among the keys" },
    Code { code: "entry-position-invalid", severities: &[E], rule: "", section: "Lorebook entry `position`", what: "a string other than `before_char` or `after_char`" },
    Code { code: "entry-regex-invalid", severities: &[E], rule: "", section: "`use_regex`", what: "a key that is a regex to the application that wrote it and does not compile (ECMAScript): it can never match. A key is a regex when written `/pattern/flags`, or when `use_regex` is true and the entry is not SillyTavern's (SillyTavern writes `use_regex: true` on every entry and reads only `/pattern/flags` keys as regexes)" },
    Code { code: "entry-regex-too-complex", severities: &[W], rule: "", section: "`use_regex`", what: "a regex key over 8 KiB, nested over 100 deep or with over 300 alternatives: not compiled" },
    Code { code: "decorator-name-invalid", severities: &[W], rule: "", section: "Decorators", what: "a name that is not snake_case latin letters and underscores" },
    Code { code: "decorator-fallback-orphan", severities: &[W], rule: "", section: "Decorators", what: "an `@@@` fallback with no decorator before it" },
    Code { code: "decorator-value-missing", severities: &[E], rule: "", section: "Decorators", what: "a decorator that needs a value has none" },
    Code { code: "decorator-value-not-number", severities: &[E], rule: "", section: "Decorators", what: "`@@depth`, `@@scan_depth`, ... need a number" },
    Code { code: "decorator-role-invalid", severities: &[E], rule: "", section: "`@@role`", what: "not `assistant`, `system` or `user`" },
    Code { code: "decorator-value-unexpected", severities: &[W], rule: "", section: "Decorators", what: "a value given to a decorator that takes none" },
    Code { code: "decorator-duplicate", severities: &[W], rule: "", section: "Decorators", what: "a single-use decorator repeated (only the first counts)" },
];

/// The entry of [`CODES`] for `code`.
///
/// ```
/// let c = ccv3::code_info("entry-regex-invalid").unwrap();
/// assert_eq!(c.severities, [ccv3::Severity::Error]);
/// ```
pub fn code_info(code: &str) -> Option<&'static Code> {
    CODES.iter().find(|c| c.code == code)
}

/// The table of [`CODES`] as `docs/validation.md` shows it.
#[cfg(test)]
pub(crate) fn codes_table() -> String {
    let mut t = String::from(
        "| code | severity | when | SPEC_V3 section | what |\n|---|---|---|---|---|\n",
    );
    for c in CODES {
        let sev: Vec<String> = c.severities.iter().map(ToString::to_string).collect();
        t.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            c.code,
            sev.join(", "),
            c.rule,
            c.section,
            c.what
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const BEGIN: &str = "<!-- codes: generated from ccv3::CODES (crates/ccv3/src/diag.rs) -->\n";
    const END: &str = "<!-- end of codes -->";

    #[test]
    fn issue13_docs_validation_lists_every_code_as_the_registry_says() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validation.md");
        let doc = std::fs::read_to_string(&path).expect("docs/validation.md");
        let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
            panic!("docs/validation.md has no generated codes section");
        };
        let table = codes_table();
        let have = &doc[b + BEGIN.len()..e];
        if have != table {
            if std::env::var_os("CCV3_BLESS").is_some() {
                let new = format!("{}{BEGIN}{table}{}", &doc[..b], &doc[e..]);
                std::fs::write(&path, new).expect("write docs/validation.md");
            } else {
                panic!("docs/validation.md is out of date (CCV3_BLESS=1 cargo test -p ccv3 --lib issue13_docs rewrites it):\n{table}");
            }
        }
    }

    #[test]
    fn issue13_registry_codes_are_unique_and_each_has_a_severity() {
        for (i, c) in CODES.iter().enumerate() {
            assert!(!c.severities.is_empty(), "{}", c.code);
            assert!(
                c.severities.len() == 1 || !c.rule.is_empty(),
                "{}: say when",
                c.code
            );
            assert!(
                CODES[..i].iter().all(|d| d.code != c.code),
                "{} twice",
                c.code
            );
        }
    }

    /// Kebab-case string literals of the crate's source that are not diagnostic codes.
    const NOT_CODES: &[&str] = &[
        "utf-8",
        "crc-32",
        "x-risu-asset",
        "hand-made",
        "ccv3-entries",
        "b-1",
        "bd90161f-4ff6-44a0-8522-0f25ad26aae3",
    ];

    fn literals(dir: &Path, out: &mut Vec<(String, String)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for f in rd.flatten() {
            let p = f.path();
            if p.is_dir() {
                literals(&p, out);
                continue;
            }
            if p.extension().and_then(|e| e.to_str()) != Some("rs") || p.ends_with("diag.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            for piece in text.split('"').skip(1).step_by(2) {
                let kebab = piece.contains('-')
                    && !piece.starts_with('-')
                    && !piece.ends_with('-')
                    && !piece.contains("--")
                    && piece
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
                if kebab {
                    out.push((piece.to_string(), p.display().to_string()));
                }
            }
        }
    }

    #[test]
    fn issue13_every_code_in_the_source_is_in_the_registry_and_back() {
        let mut found = Vec::new();
        literals(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut found,
        );
        let unknown: Vec<String> = found
            .iter()
            .filter(|(c, _)| code_info(c).is_none() && !NOT_CODES.contains(&c.as_str()))
            .map(|(c, f)| format!("{c} ({f})"))
            .collect();
        assert!(
            unknown.is_empty(),
            "codes missing from ccv3::CODES (crates/ccv3/src/diag.rs): {unknown:?}"
        );
        for c in CODES {
            assert!(
                found.iter().any(|(f, _)| f == c.code),
                "{} is in CODES but nothing writes it",
                c.code
            );
        }
    }
}
