//! SillyTavern's key matching: its scan buffer (`WorldInfoBuffer`), `matchKeys` (`/regex/flags`
//! keys, an invalid pattern falling back to plain text, ASCII `\W` word boundaries) and
//! `getScore`.

use super::entry::StEntry;
use super::prefilter::KeyFilter;
use super::shared::{State, MAX_SCAN_DEPTH};
use crate::chat::{Chat, Role};
use crate::jsregex;
use crate::scan::ScanOptions;
use crate::st_regex::{StRegex, StRegexCache};
use std::collections::HashMap;
use std::sync::Arc;

/// A word character of JavaScript's `\w` (ASCII only).
pub(super) fn js_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `needle` occurs in `hay` with a non-word character or the text edge on both sides.
pub(super) fn whole_word(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while from <= hay.len() {
        let Some(p) = hay[from..].find(needle).map(|p| p + from) else {
            return false;
        };
        let before = hay[..p].chars().next_back();
        let after = hay[p + needle.len()..].chars().next();
        if before.is_none_or(|c| !js_word(c)) && after.is_none_or(|c| !js_word(c)) {
            return true;
        }
        from = p + hay[p..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The scan buffer of SillyTavern (`WorldInfoBuffer`).
pub(super) struct Buffer {
    /// Messages, newest first, trimmed.
    pub(super) depth: Vec<String>,
    pub(super) recurse: Vec<String>,
    /// The entries whose contents make each part of `recurse`, in the same order.
    pub(super) recurse_from: Vec<Vec<usize>>,
    pub(super) skew: usize,
}

/// The part of an entry's scan text where a key was found, for the explanation.
pub(super) enum Place {
    /// The chat message with this index (0: the oldest).
    Message(usize),
    /// The content of this entry (a recursion step).
    Entry(usize),
}

impl Buffer {
    /// The chat's messages, newest first, as SillyTavern's caller formats them.
    pub(super) fn messages(chat: &Chat, opts: &ScanOptions) -> Vec<String> {
        chat.messages
            .iter()
            .rev()
            .take(MAX_SCAN_DEPTH)
            .map(|m| {
                let text = if opts.include_names {
                    let name = match (&m.name, m.role) {
                        (Some(n), _) => n.as_str(),
                        (None, Role::User) => opts.user_name.as_str(),
                        (None, Role::Assistant) => opts.char_name.as_str(),
                        (None, Role::System) => "",
                    };
                    format!("{name}: {}", m.content)
                } else {
                    m.content.clone()
                };
                text.trim().to_string()
            })
            .collect()
    }

    /// The text an entry scans in this step, made once per scan depth and step (`cache` is
    /// emptied when a step ends).
    pub(super) fn text(
        &self,
        cache: &mut HashMap<i64, Arc<str>>,
        e: &StEntry<'_>,
        base: usize,
        state: State,
    ) -> Arc<str> {
        let depth = match e.scan_depth {
            Some(d) => d,
            None => (base + self.skew) as i64,
        };
        cache
            .entry(depth)
            .or_insert_with(|| Arc::from(self.make_text(depth, state)))
            .clone()
    }

    /// SillyTavern's `WorldInfoBuffer.get` for a scan depth.
    pub(super) fn make_text(&self, depth: i64, state: State) -> String {
        if depth <= 0 {
            return String::new();
        }
        let depth = (depth as usize).min(MAX_SCAN_DEPTH).min(self.depth.len());
        let mut s = String::from("\x01");
        s.push_str(&self.depth[..depth].join("\n\x01"));
        if !self.recurse.is_empty() && state != State::MinActivations {
            s.push_str("\n\x01");
            s.push_str(&self.recurse.join("\n\x01"));
        }
        s
    }
}

impl Buffer {
    /// Where in entry `i`'s scan text key `key` matched, found by matching each part alone: the
    /// chat messages newest first (each with the `\x01` SillyTavern starts it with), then the
    /// contents the recursion steps added. SillyTavern matches the parts joined, so a match that
    /// spans two parts is found in none (`None`). The matcher's per-text caches and the scan's
    /// regex allowance are left as they were; locating spends at most one key's regex steps.
    pub(super) fn locate(
        &self,
        st: &mut St<'_, '_>,
        i: usize,
        key: &str,
        base: usize,
        state: State,
        len: usize,
    ) -> Option<Place> {
        let depth = match st.entries[i].scan_depth {
            Some(d) => d,
            None => (base + self.skew) as i64,
        };
        let depth = (depth.max(0) as usize)
            .min(MAX_SCAN_DEPTH)
            .min(self.depth.len());
        let lower = std::mem::take(&mut st.lower);
        let filter = st.filter.replace(None);
        let regex_left = st.regex_left;
        st.regex_left = regex_left.min(st.opts.regex_key_steps);
        let mut found = None;
        for (j, m) in self.depth[..depth].iter().enumerate() {
            if st.matches(&Arc::from(format!("\x01{m}")), key, i) {
                found = Some(Place::Message(len.saturating_sub(1 + j)));
                break;
            }
        }
        if found.is_none() && state != State::MinActivations {
            'parts: for from in &self.recurse_from {
                for &k in from {
                    if st.matches(&Arc::from(format!("\x01{}", st.entries[k].content)), key, i) {
                        found = Some(Place::Entry(k));
                        break 'parts;
                    }
                }
            }
        }
        st.lower = lower;
        st.filter = filter;
        st.regex_left = regex_left;
        found
    }
}

/// The scan's working state.
pub(super) struct St<'s, 'a> {
    pub(super) opts: &'s ScanOptions,
    pub(super) regex: &'s StRegexCache,
    pub(super) entries: Vec<StEntry<'a>>,
    pub(super) global_case: bool,
    /// The last haystack, and its lower-cased form (keys are checked against the same text
    /// many times in a row). The text is held, so the same allocation is the same text: a
    /// pointer comparison tells (comparing the texts cost a pass over the step's whole text
    /// for every key, the most of a WebAssembly scan; issue 28).
    pub(super) lower: (Option<Arc<str>>, String),
    /// Regex steps left for the whole scan ([`ScanOptions::regex_scan_steps`]).
    pub(super) regex_left: u64,
    /// The case-insensitive keys found in `lower.1` in one pass (built at the first such key;
    /// `Some(None)`: none to build).
    pub(super) filter: Option<Option<KeyFilter>>,
}

impl St<'_, '_> {
    /// `hay` lower-cased (in `lower.1`), kept while the same text is asked about.
    fn lowered(&mut self, hay: &Arc<str>) {
        if !self.lower.0.as_ref().is_some_and(|h| Arc::ptr_eq(h, hay)) {
            self.lower = (Some(Arc::clone(hay)), hay.to_lowercase());
            if let Some(Some(f)) = &mut self.filter {
                f.reset();
            }
        }
    }

    /// SillyTavern's `matchKeys`.
    pub(super) fn matches(&mut self, text: &Arc<str>, needle: &str, i: usize) -> bool {
        let hay: &str = text;
        if let Some((pat, flags)) = jsregex::split_slash(needle) {
            let steps_max = self.opts.regex_key_steps;
            let build = || {
                let pat = pat.replacen("\\/", "/", 1);
                let engine = jsregex::engine(&pat, flags).ok()?;
                let (lits, icase) = jsregex::literals(&pat, flags);
                Some(Arc::new(StRegex {
                    engine,
                    lits,
                    icase,
                }))
            };
            let re = match self.regex.lock() {
                Ok(mut cache) => cache
                    .entry(needle.to_string())
                    .or_insert_with(build)
                    .clone(),
                Err(_) => build(),
            };
            if let Some(re) = re {
                // Every match holds one of the literals: without them, no need to run it.
                if !re.lits.is_empty() {
                    let searched: &str = if re.icase {
                        self.lowered(text);
                        &self.lower.1
                    } else {
                        hay
                    };
                    if !re.lits.iter().any(|l| searched.contains(l.as_str())) {
                        return false;
                    }
                }
                let given = steps_max.min(self.regex_left);
                let mut steps = given;
                let found = matches!(re.engine.find(hay, &mut steps), Ok(Some(_)));
                self.regex_left = self.regex_left.saturating_sub(given.saturating_sub(steps));
                return found;
            }
        }
        let e = &self.entries[i];
        let case = e.case_sensitive.unwrap_or(self.global_case);
        let whole = e.whole_words.unwrap_or(self.opts.match_whole_words);
        let needle_l;
        let (hay, needle): (&str, &str) = if case {
            (hay, needle)
        } else {
            self.lowered(text);
            let entries = &self.entries;
            let filter = self.filter.get_or_insert_with(|| KeyFilter::new(entries));
            if let Some(f) = filter {
                if !f.may_occur(entries, &self.lower.1, i, needle) {
                    return false;
                }
            }
            needle_l = needle.to_lowercase();
            (&self.lower.1, &needle_l)
        };
        if whole {
            if needle.split_whitespace().count() > 1 {
                hay.contains(needle)
            } else {
                whole_word(hay, needle)
            }
        } else {
            hay.contains(needle)
        }
    }

    /// SillyTavern's `getScore`.
    pub(super) fn score(&mut self, hay: &Arc<str>, i: usize) -> u32 {
        let keys = self.entries[i].keys.clone();
        let sec = self.entries[i].secondary.clone();
        let p = keys.iter().filter(|k| self.matches(hay, k, i)).count() as u32;
        let s = sec.iter().filter(|k| self.matches(hay, k, i)).count() as u32;
        if keys.is_empty() {
            return 0;
        }
        if !sec.is_empty() {
            match self.entries[i].logic {
                Some(0) => return p + s,
                Some(3) => return if s as usize == sec.len() { p + s } else { p },
                _ => {}
            }
        }
        p
    }
}
