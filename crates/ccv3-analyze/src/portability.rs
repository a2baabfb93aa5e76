//! `ccv3 portability`: what SillyTavern (1.19), RisuAI, Agnai and any V2 reader do with a card.
//!
//! Every finding comes from a rule of [`RULES`], each with the source of its fact (the
//! application's code or documentation, the spec, or `research/other-systems.md`, which names
//! the files it read); `docs/portability.md` lists them. Codes:
//!
//! - `v3-field-dropped`: a field of Character Card V3 the application has no place for.
//! - `lore-field-dropped`: a lorebook setting or entry field the application has no place for.
//! - `decorator-ignored`: a decorator the application does not act on.
//! - `macro-not-expanded`: a macro the application does not know (it reaches the model as written).
//! - `container-unsupported`: a file kind the application cannot import.
//! - `asset-ignored`: an asset the application does not import.
//! - `lore-behaves-differently`: a setting the application reads with other results.

use crate::app::App;
use crate::lint::{app_honours, spec_decorator};
use ccv3::{Card, Container, Document, Lorebook, Severity};
use ccv3_cbs::{Dialect, Registry, Template};
use serde::Serialize;

/// One finding: `{app, severity, code, path, entry, message}` (`ccv3 portability --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortabilityFinding {
    /// The file it is about (set by the caller; left out when `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The application.
    pub app: App,
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// The stable code (see the [module docs](self)).
    pub code: String,
    /// The JSON path of the value, as `ccv3 validate` writes it.
    pub path: String,
    /// The entry's index in its book; `None` for card-level findings.
    pub entry: Option<usize>,
    /// What happens, and the rule's source.
    pub message: String,
}

/// One rule: which application, which code, what it says and where the fact comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// A short stable id of the rule (`st-decorators`).
    pub id: &'static str,
    /// The application.
    pub app: App,
    /// The finding code it gives.
    pub code: &'static str,
    /// The fact.
    pub fact: &'static str,
    /// Where the fact comes from.
    pub source: &'static str,
}

/// Every rule, in the order `docs/portability.md` lists them.
pub const RULES: &[Rule] = &[
    Rule { id: "v2-v3-fields", app: App::V2, code: "v3-field-dropped", fact: "a V2 reader has no place for the fields V3 adds: assets, nickname, creator_notes_multilingual, source, group_only_greetings, creation_date, modification_date", source: "SPEC_V3.md, \"CharacterCard Object\" (the fields not present in TavernCardV2)" },
    Rule { id: "v2-use-regex", app: App::V2, code: "lore-field-dropped", fact: "V2 entries have no `use_regex`: regex entries become plain-key entries", source: "SPEC_V3.md, \"use_regex\" (new in V3); Character Card V2 spec, character_book entries" },
    Rule { id: "v2-decorators", app: App::V2, code: "decorator-ignored", fact: "decorators are V3: a V2 reader sends decorator lines to the model as text (backfills should remove them)", source: "SPEC_V3.md, \"Decorators\" (\"On backfilling V2, the application SHOULD remove all decorators\")" },
    Rule { id: "v2-containers", app: App::V2, code: "container-unsupported", fact: "V2 cards are PNG (`chara` chunk) or JSON; CHARX is V3", source: "SPEC_V3.md, \"Embedding Methods\"; Character Card V2 spec" },
    Rule { id: "st-decorators", app: App::SillyTavern, code: "decorator-ignored", fact: "SillyTavern honours only @@activate and @@dont_activate (other leading @@ lines are stripped and ignored; a @@@ fallback naming one of the two is used)", source: "SillyTavern 1.19.0 public/scripts/world-info.js, KNOWN_DECORATORS (line 100) and parseDecorators; other-systems.md 1 (Decorators, @@@ rows)" },
    Rule { id: "st-macros", app: App::SillyTavern, code: "macro-not-expanded", fact: "macros outside SillyTavern's macro set stay as written", source: "SillyTavern public/scripts/macros/definitions/*.js (MacroRegistry); ccv3-cbs catalog, dialect sillytavern" },
    Rule { id: "st-book-settings", app: App::SillyTavern, code: "lore-field-dropped", fact: "a character book's scan_depth, token_budget and recursive_scanning are dropped when SillyTavern rebuilds the book from its World Info (its global settings apply)", source: "SillyTavern 1.19.0 src/endpoints/characters.js convertWorldInfoToCharacterBook (its result is {entries, name}); other-systems.md 1 (Lossless unknown fields)" },
    Rule { id: "st-containers", app: App::SillyTavern, code: "container-unsupported", fact: "SillyTavern reads no JPEG or WebP card metadata, and does not import a standalone lorebook_v3 file (its World Info import needs top-level `entries`)", source: "SillyTavern 1.19.0 src/character-card-parser.js (PNG text chunks only); other-systems.md 1 (JPEG/WebP metadata; Standalone lorebook_v3 import: src/endpoints/worldinfo.js /import)" },
    Rule { id: "st-assets", app: App::SillyTavern, code: "asset-ignored", fact: "from a CHARX SillyTavern imports image assets only (CHARX_IMAGE_EXTENSIONS) and skips icon and user_icon assets beside the main icon", source: "SillyTavern 1.19.0 src/charx.js CharXParser (lines 203, 247-251); other-systems.md 2.1" },
    Rule { id: "risu-decorators", app: App::Risu, code: "decorator-ignored", fact: "RisuAI's lorebook code handles its own decorator list; instruct_depth, reverse_instruct_depth, instruct_scan_depth and is_user_icon always fall through to their fallback, disable_ui_prompt has no effect", source: "RisuAI src/ts/process/lorebook.svelte.ts loadLoreBookV3Prompt; other-systems.md 3.2" },
    Rule { id: "risu-macros", app: App::Risu, code: "macro-not-expanded", fact: "macros outside RisuAI's CBS stay as written", source: "RisuAI src/ts/cbs.ts (registry); other-systems.md 4; ccv3-cbs catalog, dialect risu" },
    Rule { id: "risu-groups", app: App::Risu, code: "lore-field-dropped", fact: "RisuAI has no inclusion groups, no timed effects (sticky, cooldown) and no min activations", source: "other-systems.md 1 (Inclusion groups, Timed effects rows): RisuAI lorebook.svelte.ts" },
    Rule { id: "risu-case", app: App::Risu, code: "lore-behaves-differently", fact: "RisuAI always matches keys case-insensitively (the case_sensitive setting is stored, unused)", source: "other-systems.md 3.2 (Scan buffer / matching)" },
    Rule { id: "risu-book-settings", app: App::Risu, code: "lore-field-dropped", fact: "RisuAI takes a character book's settings only when scan_depth, token_budget and recursive_scanning are all present", source: "RisuAI src/ts/characterCards.ts convertCharbook; other-systems.md 2.2" },
    Rule { id: "risu-regex", app: App::Risu, code: "lore-behaves-differently", fact: "RisuAI's regex keys are broken at HEAD: the leading / stays in the pattern and keys without flags are never tested", source: "RisuAI issue #1530 (PR #1532); other-systems.md 3.2" },
    Rule { id: "risu-containers", app: App::Risu, code: "container-unsupported", fact: "RisuAI reads no WebP card and no JPEG metadata (only JPEG+ZIP CHARX), and does not import a standalone lorebook_v3 file", source: "RisuAI src/ts/characterCards.ts importCharacterProcess; other-systems.md 1" },
    Rule { id: "agnai-decorators", app: App::Agnai, code: "decorator-ignored", fact: "Agnai's memory book has no decorators: decorator lines reach the model as text", source: "agnai common/memory.ts; other-systems.md 1 (Decorators: N) and 2.7" },
    Rule { id: "agnai-macros", app: App::Agnai, code: "macro-not-expanded", fact: "Agnai's memory book replaces {{char}} and {{user}} only", source: "agnai common/memory.ts; other-systems.md 1 (CBS / macros) and 2.7" },
    Rule { id: "agnai-fields", app: App::Agnai, code: "lore-field-dropped", fact: "an Agnai memory entry has name, entry, keywords, priority/weight and enabled: secondary keys, constant, position, case_sensitive, use_regex, probability, groups and recursion settings have no place", source: "agnai common/memory.ts; other-systems.md 2.7" },
    Rule { id: "agnai-keys", app: App::Agnai, code: "lore-behaves-differently", fact: "Agnai wraps each keyword in \\b...\\b as a regex without escaping it: keys with regex characters match differently", source: "agnai common/memory.ts; other-systems.md 2.7" },
    Rule { id: "agnai-containers", app: App::Agnai, code: "container-unsupported", fact: "Agnai imports cards as PNG or JSON: no CHARX, JPEG, WebP, BYAF or Voxta", source: "other-systems.md 1 (CHARX read: none for Agnai)" },
];

fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|r| r.id == id).unwrap_or(&RULES[0])
}

/// Findings of one application.
struct Out<'o> {
    app: App,
    list: &'o mut Vec<PortabilityFinding>,
}

impl Out<'_> {
    fn add(
        &mut self,
        rule_id: &str,
        severity: Severity,
        path: String,
        entry: Option<usize>,
        what: String,
    ) {
        let r = rule(rule_id);
        self.list.push(PortabilityFinding {
            file: None,
            app: self.app,
            severity,
            code: r.code.to_string(),
            path,
            entry,
            message: format!("{what} (source: {})", r.source),
        });
    }
}

/// What each of `apps` (default: [`App::PORTABILITY`]) does with the document.
///
/// ```
/// use ccv3_analyze::{portability, App};
/// let doc = ccv3::read_bytes(br#"{"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "nickname": "Em"}}"#)?;
/// let found = portability(&doc, &[App::V2]);
/// assert!(found.iter().any(|f| f.code == "v3-field-dropped" && f.path == "data.nickname"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn portability(doc: &Document, apps: &[App]) -> Vec<PortabilityFinding> {
    let apps: &[App] = if apps.is_empty() {
        &App::PORTABILITY
    } else {
        apps
    };
    let mut list = Vec::new();
    for &app in apps {
        let mut out = Out {
            app,
            list: &mut list,
        };
        match doc {
            Document::Card(cf) => {
                container(app, Some(cf.container), None, &mut out);
                card(app, &cf.card, &mut out);
            }
            Document::Lorebook(bf) => {
                container(app, None, Some(bf.format), &mut out);
                book(app, &bf.book, "data", &mut out);
            }
        }
    }
    list
}

fn container(
    app: App,
    c: Option<Container>,
    f: Option<ccv3::lorebook::BookFormat>,
    out: &mut Out<'_>,
) {
    use ccv3::lorebook::BookFormat as F;
    let (id, bad) = match (app, c, f) {
        (App::V2, Some(c @ (Container::Charx | Container::Byaf | Container::Voxta)), _) => {
            ("v2-containers", c.label())
        }
        (App::SillyTavern, Some(c @ (Container::Jpeg | Container::Webp)), _) => {
            ("st-containers", c.label())
        }
        (App::SillyTavern, _, Some(F::LorebookV3)) => ("st-containers", "lorebook_v3"),
        (
            App::Risu,
            Some(c @ (Container::Jpeg | Container::Webp | Container::Byaf | Container::Voxta)),
            _,
        ) => ("risu-containers", c.label()),
        (App::Risu, _, Some(F::LorebookV3)) => ("risu-containers", "lorebook_v3"),
        (
            App::Agnai,
            Some(
                c @ (Container::Charx
                | Container::Jpeg
                | Container::Webp
                | Container::Byaf
                | Container::Voxta),
            ),
            _,
        ) => ("agnai-containers", c.label()),
        _ => return,
    };
    out.add(
        id,
        Severity::Error,
        String::new(),
        None,
        format!("{} cannot import a {bad} file", app.label()),
    );
}

fn card(app: App, card: &Card, out: &mut Out<'_>) {
    let d = &card.data;
    if app == App::V2 {
        let set: [(&str, bool); 7] = [
            ("assets", d.assets.as_ref().is_some_and(|a| !a.is_empty())),
            (
                "nickname",
                d.nickname.as_ref().is_some_and(|s| !s.is_empty()),
            ),
            (
                "creator_notes_multilingual",
                d.creator_notes_multilingual
                    .as_ref()
                    .is_some_and(|m| !m.is_empty()),
            ),
            ("source", d.source.as_ref().is_some_and(|s| !s.is_empty())),
            ("group_only_greetings", !d.group_only_greetings.is_empty()),
            ("creation_date", d.creation_date.is_some()),
            ("modification_date", d.modification_date.is_some()),
        ];
        for (field, present) in set {
            if present {
                out.add(
                    "v2-v3-fields",
                    Severity::Warning,
                    format!("data.{field}"),
                    None,
                    format!("a V2 reader drops {field}"),
                );
            }
        }
    }
    if app == App::SillyTavern {
        for (i, a) in d.assets.iter().flatten().enumerate() {
            let image = [
                "png", "jpg", "jpeg", "webp", "gif", "apng", "avif", "bmp", "jfif",
            ]
            .contains(&a.ext.to_ascii_lowercase().as_str());
            if a.kind == "user_icon" || !image {
                out.add(
                    "st-assets",
                    Severity::Info,
                    format!("data.assets[{i}]"),
                    None,
                    format!(
                        "SillyTavern does not import asset {:?} ({}, .{})",
                        a.name, a.kind, a.ext
                    ),
                );
            }
        }
    }
    for (name, text) in d.prompt_texts() {
        macros(app, text, format!("data.{name}"), None, out);
    }
    for (i, g) in d.alternate_greetings.iter().enumerate() {
        macros(app, g, format!("data.alternate_greetings[{i}]"), None, out);
    }
    if let Some(b) = &d.character_book {
        book(app, b, "data.character_book", out);
    }
}

/// The macros `app` knows (`None`: not checked, no recorded fact).
fn app_knows(app: App, name: &str) -> Option<bool> {
    match app {
        App::SillyTavern => {
            let r = Registry::dialect_ref(Dialect::SillyTavern);
            Some(
                r.contains(name)
                    || name.strip_prefix('#').is_some_and(|n| r.contains(n))
                    || name.starts_with(['.', '$']),
            )
        }
        App::Risu => Some(Registry::dialect_ref(Dialect::Risu).contains(name)),
        App::Agnai => Some(matches!(name, "char" | "user")),
        App::V2 | App::Spec => None,
    }
}

fn macros(app: App, text: &str, path: String, entry: Option<usize>, out: &mut Out<'_>) {
    if !text.contains("{{") || matches!(app, App::V2 | App::Spec) {
        return;
    }
    let rule_id = match app {
        App::SillyTavern => "st-macros",
        App::Risu => "risu-macros",
        _ => "agnai-macros",
    };
    let mut seen: Vec<String> = Vec::new();
    for (_, name) in Template::parse(text).macro_names() {
        if name.is_empty() || name.starts_with(['/', ':', '<']) || seen.contains(&name) {
            continue;
        }
        if seen.len() >= 20 {
            break;
        }
        if app_knows(app, &name) == Some(false) {
            out.add(
                rule_id,
                Severity::Warning,
                path.clone(),
                entry,
                format!(
                    "{} does not expand {{{{{name}}}}}: it reaches the model as written",
                    app.label()
                ),
            );
            seen.push(name);
        }
    }
}

fn book(app: App, b: &Lorebook, prefix: &str, out: &mut Out<'_>) {
    let settings = [
        ("scan_depth", b.scan_depth.is_some()),
        ("token_budget", b.token_budget.is_some()),
        ("recursive_scanning", b.recursive_scanning.is_some()),
    ];
    let n_set = settings.iter().filter(|s| s.1).count();
    for (field, set) in settings {
        if !set {
            continue;
        }
        match app {
            App::SillyTavern if prefix != "data" => out.add(
                "st-book-settings",
                Severity::Warning,
                format!("{prefix}.{field}"),
                None,
                format!("SillyTavern drops the book's {field}"),
            ),
            App::Risu if n_set < 3 => out.add(
                "risu-book-settings",
                Severity::Warning,
                format!("{prefix}.{field}"),
                None,
                format!("RisuAI drops the book's {field} (not all three settings are set)"),
            ),
            App::Agnai => out.add(
                "agnai-fields",
                Severity::Warning,
                format!("{prefix}.{field}"),
                None,
                format!("Agnai has no place for the book's {field}"),
            ),
            _ => {}
        }
    }
    for (i, e) in b.entries.iter().enumerate() {
        let ep = format!("{prefix}.entries[{i}]");
        let x = &e.extensions;
        match app {
            App::V2 if e.use_regex => out.add(
                "v2-use-regex",
                Severity::Warning,
                format!("{ep}.use_regex"),
                Some(i),
                "a V2 reader drops use_regex: the keys are matched as plain text".into(),
            ),
            App::Risu => {
                for k in ["group", "sticky", "cooldown"] {
                    if x.get(k)
                        .is_some_and(|v| !(v.is_null() || v == "" || v == 0 || v == false))
                    {
                        out.add(
                            "risu-groups",
                            Severity::Warning,
                            format!("{ep}.extensions.{k}"),
                            Some(i),
                            format!("RisuAI has no {k}"),
                        );
                    }
                }
                if e.case_sensitive == Some(true) {
                    out.add(
                        "risu-case",
                        Severity::Info,
                        format!("{ep}.case_sensitive"),
                        Some(i),
                        "RisuAI matches the keys case-insensitively".into(),
                    );
                }
                if e.keys.iter().any(|k| k.starts_with('/')) || e.use_regex {
                    out.add(
                        "risu-regex",
                        Severity::Warning,
                        format!("{ep}.keys"),
                        Some(i),
                        "RisuAI's regex keys do not work as written".into(),
                    );
                }
            }
            App::Agnai => {
                let dropped: Vec<&str> = [
                    (
                        "secondary_keys",
                        e.secondary_keys.as_ref().is_some_and(|s| !s.is_empty()),
                    ),
                    ("constant", e.constant == Some(true)),
                    ("position", e.position.is_some()),
                    ("case_sensitive", e.case_sensitive == Some(true)),
                    ("use_regex", e.use_regex),
                    ("extensions.probability", x.contains_key("probability")),
                    ("extensions.group", x.get("group").is_some_and(|v| v != "")),
                ]
                .into_iter()
                .filter(|f| f.1)
                .map(|f| f.0)
                .collect();
                if !dropped.is_empty() {
                    out.add(
                        "agnai-fields",
                        Severity::Warning,
                        ep.clone(),
                        Some(i),
                        format!("Agnai has no place for {}", dropped.join(", ")),
                    );
                }
                if e.keys.iter().any(|k| {
                    k.contains([
                        '.', '*', '+', '?', '(', ')', '[', ']', '|', '\\', '^', '$', '{',
                    ])
                }) {
                    out.add(
                        "agnai-keys",
                        Severity::Info,
                        format!("{ep}.keys"),
                        Some(i),
                        "a key has regex characters: Agnai reads it as a pattern".into(),
                    );
                }
            }
            _ => {}
        }
        decorators(app, &e.content, &format!("{ep}.content"), i, out);
        if e.enabled {
            let body = ccv3::decorator::split(&e.content).body;
            macros(app, body, format!("{ep}.content"), Some(i), out);
        }
    }
}

fn decorators(app: App, content: &str, path: &str, i: usize, out: &mut Out<'_>) {
    if !content.trim_start().starts_with("@@") {
        return;
    }
    let rule_id = match app {
        App::SillyTavern => "st-decorators",
        App::Risu => "risu-decorators",
        App::Agnai => "agnai-decorators",
        App::V2 => "v2-decorators",
        App::Spec => return,
    };
    let (list, _) = ccv3::decorator::parse_list(content);
    let before = out.list.len();
    for d in &list {
        if out.list.len() - before >= 20 {
            break;
        }
        let name = d.kind.name();
        if app_honours(app, name)
            || (app == App::Risu && !spec_decorator(name) && !crate::lint::decorator_known(name))
        {
            continue;
        }
        let fallback = d
            .fallbacks
            .iter()
            .map(|f| f.kind.name())
            .find(|n| app_honours(app, n));
        let what = match (app, fallback) {
            (App::V2 | App::Agnai, _) => {
                format!("{} sends @@{name} to the model as text", app.label())
            }
            (_, Some(f)) => format!(
                "{} ignores @@{name} and uses the fallback @@@{f}",
                app.label()
            ),
            (_, None) => format!("{} ignores @@{name}", app.label()),
        };
        out.add(rule_id, Severity::Warning, path.to_string(), Some(i), what);
    }
}
