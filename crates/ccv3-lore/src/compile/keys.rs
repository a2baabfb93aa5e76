//! The key table a compile fills: every key of every entry (plain ones as ids of distinct
//! pattern texts, per case mode; regex ones as ids of distinct regex keys) and the diagnostics
//! met, in book order. A table can take in another that compiled the entries after its own
//! ([`Builder::absorb`]), as if it had gone on alone.

use crate::hash::{FxBuildHasher, FxMap};
use crate::jsregex::{self, Engine};
use ccv3::Diagnostic;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyKind {
    /// Index into the pattern table; `multiword` keys are never whole-word matched.
    Plain {
        pat: u32,
        multiword: bool,
    },
    Regex(u32),
    Invalid,
}

/// A key as resolved (macros expanded, trimmed); borrowed from the book when unchanged.
pub(crate) type KeyText<'a> = Cow<'a, str>;

/// A run of keys in [`CompiledBooks::keys`](super::CompiledBooks).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KeyRange {
    pub start: u32,
    pub len: u32,
}

impl KeyRange {
    pub(crate) fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// A regex key: its engine (once parsed) and its prefilter literals.
#[derive(Debug)]
pub(crate) struct RegexKey {
    pub engine: Result<Engine, String>,
    /// Prefilter literal patterns; empty: always run.
    pub lits: Vec<u32>,
}

/// Distinct pattern texts, each with its id (its place in `texts`): the hash table holds only
/// the ids (4 bytes a slot), where a map would hold each text beside its id.
#[derive(Default)]
pub(super) struct PatternTable<'a> {
    pub(super) texts: Vec<Cow<'a, str>>,
    ids: hashbrown::HashTable<u32>,
}

impl<'a> PatternTable<'a> {
    fn with_capacity(n: usize) -> Self {
        PatternTable {
            texts: Vec::new(),
            ids: hashbrown::HashTable::with_capacity(n),
        }
    }

    fn hash(text: &str) -> u64 {
        use std::hash::BuildHasher;
        FxBuildHasher.hash_one(text)
    }

    /// The id of `text`, a new one (the next number) when it is not in the table yet.
    fn id_of(&mut self, text: Cow<'a, str>) -> u32 {
        let h = Self::hash(&text);
        let texts = &self.texts;
        if let Some(&id) = self.ids.find(h, |&id| texts[id as usize] == text) {
            return id;
        }
        let id = texts.len() as u32;
        self.ids
            .insert_unique(h, id, |&i| Self::hash(&texts[i as usize]));
        self.texts.push(text);
        id
    }
}

/// The key table being filled (see the module docs).
pub(super) struct Builder<'a> {
    /// A buffer for reading entries' knobs (`entry::Knobs::read`).
    pub(super) knobs: Vec<Cow<'a, Value>>,
    /// Case-insensitive patterns (lower-cased) and their temporary ids.
    pub(super) pats_ci: PatternTable<'a>,
    /// Case-sensitive patterns and their temporary ids (`1 << 31 | n`).
    pub(super) pats_cs: PatternTable<'a>,
    pub(super) regex_ids: FxMap<(String, String), u32>,
    pub(super) regexes: Vec<RegexKey>,
    pub(super) keys: Vec<KeyKind>,
    pub(super) texts: Vec<KeyText<'a>>,
    /// Diagnostics in the order met; a regex key's is known once its pattern is parsed.
    pub(super) diags: Vec<DiagSlot>,
    /// Pattern and flags of each regex (by id), parsed after the entries are read.
    pub(super) pending: Vec<(String, String)>,
}

/// A diagnostic in book order, or the place of one that depends on a regex's parse.
pub(super) enum DiagSlot {
    Ready(Diagnostic),
    /// The regex with this id, first met at this path: a diagnostic when it is not usable.
    Regex(u32, String),
}

/// `s` lower-cased, borrowed when it has no upper-case letter.
fn lower<'a>(s: Cow<'a, str>) -> Cow<'a, str> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(s.to_ascii_lowercase())
        } else {
            s
        }
    } else {
        Cow::Owned(s.to_lowercase())
    }
}

impl<'a> Builder<'a> {
    /// An empty builder with room for `n_keys` keys.
    pub(super) fn with_capacity(n_keys: usize) -> Self {
        Builder {
            knobs: Vec::new(),
            pats_ci: PatternTable::with_capacity(n_keys / 2),
            pats_cs: PatternTable::default(),
            regex_ids: FxMap::default(),
            regexes: Vec::new(),
            keys: Vec::with_capacity(n_keys),
            texts: Vec::with_capacity(n_keys),
            diags: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Takes in the builder `other` that compiled the entries right after this one's: its
    /// patterns and regexes get this builder's ids (new ones in the order `other` met them, as
    /// if this builder had gone on alone), its keys and diagnostics follow this builder's.
    /// Returns where its keys start now: the entries it compiled move their key ranges by that
    /// much ([`CEntry::shift_keys`](super::CEntry::shift_keys)).
    pub(super) fn absorb(&mut self, other: Builder<'a>) -> u32 {
        let key_base = self.keys.len() as u32;
        // Each of `other`'s patterns, in its id order, gets this builder's id.
        let remap = |from: PatternTable<'a>, into: &mut PatternTable<'a>, base: u32| -> Vec<u32> {
            from.texts
                .into_iter()
                .map(|text| base | into.id_of(text))
                .collect()
        };
        let ci = remap(other.pats_ci, &mut self.pats_ci, 0);
        let cs = remap(other.pats_cs, &mut self.pats_cs, 1 << 31);
        let fix = |p: u32| -> u32 {
            if p & (1 << 31) != 0 {
                cs.get((p & !(1 << 31)) as usize).copied().unwrap_or(p)
            } else {
                ci.get(p as usize).copied().unwrap_or(p)
            }
        };
        let mut rx = Vec::with_capacity(other.regexes.len());
        let mut fresh = Vec::with_capacity(other.regexes.len());
        for (key, mut r) in other.pending.into_iter().zip(other.regexes) {
            match self.regex_ids.get(&key) {
                Some(&id) => {
                    rx.push(id);
                    fresh.push(false);
                }
                None => {
                    let id = self.regexes.len() as u32;
                    for l in &mut r.lits {
                        *l = fix(*l);
                    }
                    self.regexes.push(r);
                    self.pending.push(key.clone());
                    self.regex_ids.insert(key, id);
                    rx.push(id);
                    fresh.push(true);
                }
            }
        }
        for d in other.diags {
            match d {
                DiagSlot::Ready(d) => self.diags.push(DiagSlot::Ready(d)),
                // A regex this builder had met already has its diagnostic here.
                DiagSlot::Regex(id, path) => {
                    if fresh.get(id as usize) == Some(&true) {
                        self.diags.push(DiagSlot::Regex(rx[id as usize], path));
                    }
                }
            }
        }
        self.keys.extend(other.keys.into_iter().map(|k| match k {
            KeyKind::Plain { pat, multiword } => KeyKind::Plain {
                pat: fix(pat),
                multiword,
            },
            KeyKind::Regex(id) => KeyKind::Regex(rx.get(id as usize).copied().unwrap_or(id)),
            KeyKind::Invalid => KeyKind::Invalid,
        }));
        self.texts.extend(other.texts);
        key_base
    }

    fn pattern(&mut self, ci: bool, text: Cow<'a, str>) -> u32 {
        // Temporary ids: case-insensitive patterns are renumbered after the sensitive ones are known.
        if ci {
            self.pats_ci.id_of(text)
        } else {
            (1u32 << 31) | self.pats_cs.id_of(text)
        }
    }

    /// Registers a regex key: its prefilter literals join the automata now; the pattern itself
    /// is parsed later ([`Builder::parse_regexes`]), while the automata are built.
    fn regex(&mut self, pat: &str, flags: &str, path: &dyn Fn() -> String) -> u32 {
        let key = (pat.to_string(), flags.to_string());
        if let Some(&id) = self.regex_ids.get(&key) {
            return id;
        }
        let (literals, icase) = jsregex::literals(pat, flags);
        let lits = literals
            .into_iter()
            .map(|l| self.pattern(icase, Cow::Owned(l)))
            .collect();
        let id = self.regexes.len() as u32;
        self.regexes.push(RegexKey {
            engine: Err(String::new()),
            lits,
        });
        self.diags.push(DiagSlot::Regex(id, path()));
        self.pending.push(key.clone());
        self.regex_ids.insert(key, id);
        id
    }

    /// Parses the regex keys (`pending` holds each one's pattern and flags); an unusable one
    /// loses its literals. (They stay in the automata, where nothing refers to them.)
    pub(super) fn parse_regexes(regexes: &mut [RegexKey], pending: &[(String, String)]) {
        Self::set_engines(regexes, Self::engines(pending));
    }

    /// The engines of the regex keys in `pending` (pattern and flags of each).
    pub(super) fn engines(pending: &[(String, String)]) -> Vec<Result<Engine, String>> {
        pending
            .iter()
            .map(|(pat, flags)| jsregex::engine(pat, flags))
            .collect()
    }

    /// Gives the regex keys their engines ([`Builder::engines`]); an unusable one loses its
    /// literals.
    pub(super) fn set_engines(regexes: &mut [RegexKey], engines: Vec<Result<Engine, String>>) {
        for (r, engine) in regexes.iter_mut().zip(engines) {
            r.engine = engine;
            if r.engine.is_err() {
                r.lits.clear();
            }
        }
    }

    /// Marks the keys whose regex did not parse as [`KeyKind::Invalid`] and turns the regex
    /// diagnostics into warnings.
    pub(super) fn finish_regexes(
        regexes: &[RegexKey],
        keys: &mut [KeyKind],
        diags: Vec<DiagSlot>,
    ) -> Vec<Diagnostic> {
        for k in keys.iter_mut() {
            if let KeyKind::Regex(id) = *k {
                if regexes.get(id as usize).is_none_or(|r| r.engine.is_err()) {
                    *k = KeyKind::Invalid;
                }
            }
        }
        diags
            .into_iter()
            .filter_map(|d| match d {
                DiagSlot::Ready(d) => Some(d),
                DiagSlot::Regex(id, path) => match &regexes.get(id as usize)?.engine {
                    Ok(_) => None,
                    Err(why) => Some(Diagnostic::warning(
                        if why.contains("refused") {
                            "lore-regex-refused"
                        } else {
                            "lore-regex-invalid"
                        },
                        path,
                        format!("{why}; the key never matches"),
                    )),
                },
            })
            .collect()
    }

    /// Compiles the keys of a book entry (borrowed from the book when macros and trimming leave
    /// them unchanged).
    pub(super) fn keys(
        &mut self,
        raw: &'a [String],
        regex_mode: bool,
        case_sensitive: bool,
        names: (&str, &str, ccv3_cbs::Dialect),
        at: (&str, usize, &str),
    ) -> KeyRange {
        let resolved = raw.iter().map(|r| {
            match crate::text::resolve_key_macros_cow(r, names.0, names.1, names.2) {
                Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
                Cow::Owned(o) => Cow::Owned(o.trim().to_string()),
            }
        });
        self.keys_from(resolved, regex_mode, case_sensitive, at)
    }

    /// Compiles keys that do not live in the book (decorator values).
    pub(super) fn keys_owned(
        &mut self,
        raw: &[String],
        regex_mode: bool,
        case_sensitive: bool,
        names: (&str, &str, ccv3_cbs::Dialect),
        at: (&str, usize, &str),
    ) -> KeyRange {
        let resolved = raw.iter().map(|r| {
            Cow::Owned(
                crate::text::resolve_key_macros_cow(r, names.0, names.1, names.2)
                    .trim()
                    .to_string(),
            )
        });
        self.keys_from(resolved, regex_mode, case_sensitive, at)
    }

    fn keys_from(
        &mut self,
        resolved: impl Iterator<Item = Cow<'a, str>>,
        regex_mode: bool,
        case_sensitive: bool,
        at: (&str, usize, &str),
    ) -> KeyRange {
        let start = self.keys.len() as u32;
        for (i, k) in resolved.enumerate() {
            if k.is_empty() {
                continue;
            }
            let p = || format!("{}: entries[{}].{}[{i}]", at.0, at.1, at.2);
            let kind = if let Some((pat, flags)) = jsregex::split_slash(&k) {
                KeyKind::Regex(self.regex(pat, flags, &p))
            } else if regex_mode {
                KeyKind::Regex(self.regex(&k, if case_sensitive { "" } else { "i" }, &p))
            } else {
                let multiword = k.contains(char::is_whitespace);
                let text = if case_sensitive {
                    k.clone()
                } else {
                    lower(k.clone())
                };
                KeyKind::Plain {
                    pat: self.pattern(!case_sensitive, text),
                    multiword,
                }
            };
            self.keys.push(kind);
            self.texts.push(k);
        }
        KeyRange {
            start,
            len: self.keys.len() as u32 - start,
        }
    }
}
