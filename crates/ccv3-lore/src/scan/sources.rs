//! SillyTavern's per-entry settings that look beyond the chat (issue 14; World Info doc,
//! "Character Filter" and "Additional matching sources"): the character filter, and the texts
//! an entry's `match_*` flags add to its scan text (persona description, character
//! description, personality, scenario, depth prompt, creator notes).
//!
//! The extra texts are searched once per scan, with the same automata as the chat, and only
//! when the options carry such a text: a scan without them pays nothing.

use super::context::{Scan, SourceText};
use super::memo::RegexMemo;
use super::options::ScanOptions;
use crate::compile::{Automata, CEntry};
use crate::source::Source;
use crate::text::whole_word_at;

/// Whether the character the scan is for passes `e`'s character filter (World Info doc,
/// "Character Filter"): names are the character's names ([`ScanOptions::char_name`] and
/// [`ScanOptions::character_names`]); tags are [`ScanOptions::character_tags`], checked only
/// when the scan knows its character (a name), as SillyTavern skips them without one.
pub(super) fn character_passes(e: &CEntry<'_>, opts: &ScanOptions) -> bool {
    let Some(f) = &e.rare().char_filter else {
        return true;
    };
    let is_name = |n: &String| {
        let n = n.trim();
        (!opts.char_name.is_empty() && opts.char_name == n)
            || opts.character_names.iter().any(|c| c.trim() == n)
    };
    if !f.names.is_empty() && f.names.iter().any(is_name) == f.exclude {
        return false;
    }
    let known = !opts.char_name.is_empty() || !opts.character_names.is_empty();
    if known && !f.tags.is_empty() {
        let tagged = f
            .tags
            .iter()
            .any(|t| opts.character_tags.iter().any(|c| c.trim() == t.trim()));
        if tagged == f.exclude {
            return false;
        }
    }
    true
}

impl<'s, 'a> Scan<'s, 'a> {
    /// The sources that both have text in the options and are asked for by an entry (as
    /// [`Source`] bits; 0 at no cost when the options have no such text).
    pub(super) fn sources_wanted(&self) -> u8 {
        let opts = self.opts;
        if opts.sources.is_empty() {
            return 0;
        }
        let have = Source::ALL
            .into_iter()
            .filter(|&s| !opts.sources.get(s).trim().is_empty())
            .fold(0u8, |a, s| a | s.bit());
        self.cb
            .entries
            .iter()
            .fold(0u8, |a, e| a | e.rare().sources)
            & have
    }

    /// Searches the extra texts `wanted` (after the chat; `aut` are the automata the chat was
    /// searched with).
    pub(super) fn search_sources(&mut self, wanted: u8, aut: &Automata) {
        let opts = self.opts;
        let mut st = SourceText {
            texts: Vec::new(),
            hits: vec![[0; 2]; self.hits.len()],
        };
        for s in Source::ALL {
            let text = opts.sources.get(s).trim();
            if wanted & s.bit() != 0 && !text.is_empty() {
                let cleaned = crate::text::clean_scan_text(text, false);
                let text = cleaned.as_deref().unwrap_or(text).to_string();
                st.texts.push((s, text.to_lowercase(), text));
            }
        }
        let cb = self.cb;
        let mut seen = std::mem::take(&mut self.seen);
        // Patterns met for the first time, to fan out once each (bounded by the patterns).
        let mut fresh: Vec<u32> = Vec::new();
        let hits = &mut st.hits;
        let mut note = |p: u32, bit: u8, whole: bool| {
            if let Some(h) = hits.get_mut(p as usize) {
                if h[0] == 0 {
                    fresh.push(p);
                }
                h[0] |= bit;
                if whole {
                    h[1] |= bit;
                }
            }
        };
        for (s, lower, orig) in &st.texts {
            let long = aut.long_for(&cb.patterns, (lower, orig));
            for a in std::iter::once(aut).chain(long.as_ref()) {
                let id = |ids: &[u32], p: u32| ids.get(p as usize).copied().unwrap_or(p);
                if let Some(ac) = &a.ci {
                    ac.walk(lower, &mut seen, |p, start, end| {
                        note(id(&a.ci_ids, p), s.bit(), whole_word_at(lower, start, end));
                    });
                }
                if let Some(ac) = &a.cs {
                    ac.walk(orig, &mut seen, |p, start, end| {
                        note(
                            cb.n_ci + id(&a.cs_ids, p),
                            s.bit(),
                            whole_word_at(orig, start, end),
                        );
                    });
                }
            }
        }
        self.seen = seen;
        for p in fresh {
            self.fan_out(p);
        }
        self.sources = Some(st);
    }

    /// The chat's text (`lower`, `orig`) with the options' extra texts after it, for choosing
    /// the automata of a single scan.
    pub(super) fn with_source_texts(
        &self,
        wanted: u8,
        lower: &str,
        orig: &str,
    ) -> (String, String) {
        let (mut l, mut o) = (lower.to_string(), orig.to_string());
        for s in Source::ALL {
            let t = self.opts.sources.get(s);
            if wanted & s.bit() != 0 {
                l.push('\n');
                l.push_str(&t.to_lowercase());
                o.push('\n');
                o.push_str(t);
            }
        }
        (l, o)
    }

    /// Whether plain-key pattern `pat` occurs in one of the sources `srcs` (whole word when
    /// `whole`): the first such source.
    pub(super) fn plain_in_sources(&self, pat: u32, whole: bool, srcs: u8) -> Option<Source> {
        let st = self.sources.as_ref()?;
        let h = st.hits.get(pat as usize)?;
        let bits = if whole { h[1] } else { h[0] } & srcs;
        Source::ALL.into_iter().find(|s| bits & s.bit() != 0)
    }

    /// Whether regex key `rx` matches in one of the sources `srcs`: the first such source
    /// (`Err` when a search ran out of steps).
    pub(super) fn regex_in_sources(
        &self,
        m: &mut RegexMemo,
        rx: u32,
        srcs: u8,
    ) -> Result<Option<Source>, ()> {
        let Some(st) = self.sources.as_ref() else {
            return Ok(None);
        };
        let Ok(engine) = &self.cb.regexes[rx as usize].engine else {
            return Ok(None);
        };
        for (s, _, orig) in &st.texts {
            if srcs & s.bit() == 0 {
                continue;
            }
            match self.search(m, engine, orig) {
                Ok(Some(_)) => return Ok(Some(*s)),
                Ok(None) => {}
                Err(_) => return Err(()),
            }
        }
        Ok(None)
    }
}
