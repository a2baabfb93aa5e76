//! The scan text (step 2 of the scan order): the newest messages joined as SillyTavern does,
//! one pass of each automaton over it (and over each activated entry's content in recursion),
//! recording where each pattern occurs and which entries become candidates.

use super::context::Scan;
use crate::chat::{Chat, Role};
use crate::compile::Automata;
use crate::text::{clean_scan_text, whole_word_at};

/// The value stored in a [`PatHit`](super::context::PatHit) slot ([`super::context::NONE`] for
/// "nowhere").
pub(super) fn get(v: u32) -> u32 {
    v.wrapping_sub(1)
}

impl<'s, 'a> Scan<'s, 'a> {
    /// How many of the newest messages the scan text needs (the deepest window any entry,
    /// book, option or min-activations pass can ask for).
    fn buffer_depth(&self) -> usize {
        let mut need = self.cb.max_depth.max(self.opts.scan_depth);
        if self.opts.min_activations > 0 {
            need = if self.opts.min_activations_depth_max > 0 {
                need.max(self.opts.min_activations_depth_max)
            } else {
                self.len as u64
            };
        }
        need.min(self.len as u64) as usize
    }

    /// Builds the scan text of `chat` and searches it.
    pub(super) fn build_buffer(&mut self, chat: &Chat) {
        let depth = self.buffer_depth();
        for k in 0..depth {
            let ci = self.len - 1 - k;
            let m = &chat.messages[ci];
            if k > 0 {
                self.orig.push('\n');
                self.lower.push('\n');
            }
            self.orig.push('\x01');
            self.lower.push('\x01');
            let raw = m.content.as_str();
            let cleaned = clean_scan_text(raw, false);
            let content = cleaned.as_deref().unwrap_or(raw);
            let start_o = self.orig.len();
            if self.opts.include_names {
                let name = match (&m.name, m.role) {
                    (Some(n), _) => n.as_str(),
                    (None, Role::User) => self.opts.user_name.as_str(),
                    (None, Role::Assistant) => self.opts.char_name.as_str(),
                    (None, Role::System) => "",
                };
                if !name.is_empty() {
                    self.orig.push_str(name);
                    self.orig.push_str(": ");
                }
            }
            self.orig.push_str(content);
            let trimmed_len = self.orig[start_o..].trim_end().len();
            self.orig.truncate(start_o + trimmed_len);
            let lead = self.orig[start_o..].len() - self.orig[start_o..].trim_start().len();
            if lead > 0 {
                self.orig.replace_range(start_o..start_o + lead, "");
            }
            let piece = &self.orig[start_o..];
            self.lower.push_str(&piece.to_lowercase());
            self.ends_o.push(self.orig.len());
            self.ends_l.push(self.lower.len());
            self.chat_idx.push(ci);
        }
        self.search_chat();
    }

    /// The message (newest-first index) of the text position `pos`, given the messages' ends.
    pub(super) fn msg_of(ends: &[usize], pos: usize) -> u32 {
        ends.partition_point(|&e| e < pos) as u32
    }

    /// Records that pattern `p` occurs in message `chat_k` or in entry `rec`'s content (whole
    /// word or not); a pattern's first occurrence makes its entries candidates. Kept out of the
    /// automata's match loop, with the fan-out inside it, as before issue 14 (inlined into the
    /// loop it cost the default scan ~2% more instructions; docs/benchmarks.md).
    #[inline(never)]
    fn record(&mut self, p: u32, chat_k: Option<u32>, rec: Option<u32>, whole: bool) {
        let Some(h) = self.hits.get_mut(p as usize) else {
            return;
        };
        let fresh = *h == [0; 4];
        if let Some(k) = chat_k {
            h[0] = h[0].wrapping_sub(1).min(k).wrapping_add(1);
            if whole {
                h[1] = h[1].wrapping_sub(1).min(k).wrapping_add(1);
            }
        }
        if let Some(src) = rec {
            if h[2] == 0 {
                h[2] = src + 1;
            }
            if whole && h[3] == 0 {
                h[3] = src + 1;
            }
        }
        if fresh {
            self.fan_out(p);
        }
    }

    /// Makes the entries whose keys pattern `p` can match candidates.
    #[inline(always)]
    pub(super) fn fan_out(&mut self, p: u32) {
        let cb = self.cb;
        let lo = cb.fan_off[p as usize] as usize;
        let hi = cb.fan_off[p as usize + 1] as usize;
        for &r in &cb.fan[lo..hi] {
            if !self.cand_flag[r as usize] {
                self.cand_flag[r as usize] = true;
                self.cands.push(r);
            }
        }
    }

    /// Runs the automata over one text (the chat, with its message ends, or an entry's
    /// content, `rec`).
    fn search_text(
        &mut self,
        lower: &str,
        orig: &str,
        ends: Option<(&[usize], &[usize])>,
        rec: Option<u32>,
    ) {
        let cb = self.cb;
        let own = self.own_automata.take();
        let aut = match &own {
            Some(a) => a,
            None => cb.automata(),
        };
        let long = aut.long_for(&cb.patterns, (lower, orig));
        let mut seen = std::mem::take(&mut self.seen);
        for aut in std::iter::once(aut).chain(long.as_ref()) {
            let id = |ids: &[u32], p: u32| ids.get(p as usize).copied().unwrap_or(p);
            if let Some(ac) = &aut.ci {
                ac.walk(lower, &mut seen, |p, start, end| {
                    let k = ends.map(|(_, el)| Self::msg_of(el, end));
                    let whole = whole_word_at(lower, start, end);
                    self.record(id(&aut.ci_ids, p), k, rec, whole);
                });
            }
            if let Some(ac) = &aut.cs {
                ac.walk(orig, &mut seen, |p, start, end| {
                    let k = ends.map(|(eo, _)| Self::msg_of(eo, end));
                    let whole = whole_word_at(orig, start, end);
                    self.record(cb.n_ci + id(&aut.cs_ids, p), k, rec, whole);
                });
            }
        }
        self.seen = seen;
        self.own_automata = own;
    }

    /// Searches the chat text; constant, forced and sticky entries become candidates.
    fn search_chat(&mut self) {
        let lower = std::mem::take(&mut self.lower);
        let orig = std::mem::take(&mut self.orig);
        // Compiled for a single scan: when no entry content can be scanned (no recursion), the
        // chat is all this scan searches, and only the keys that can occur in it are needed.
        let recursion = self.any_book_recursive() || !self.cb.levels.is_empty();
        let wanted = self.sources_wanted();
        if self.cb.single_scan && !recursion && self.cb.automata.get().is_none() {
            self.own_automata = Some(if wanted == 0 {
                Automata::build(&self.cb.patterns, Some((&lower, &orig)))
            } else {
                // Keys that occur only in the extra texts of `match_*` flags are needed too.
                let (l, o) = self.with_source_texts(wanted, &lower, &orig);
                Automata::build(&self.cb.patterns, Some((&l, &o)))
            });
        }
        let eo = std::mem::take(&mut self.ends_o);
        let el = std::mem::take(&mut self.ends_l);
        self.search_text(&lower, &orig, Some((&eo, &el)), None);
        if wanted != 0 {
            let own = self.own_automata.take();
            let cb = self.cb;
            self.search_sources(wanted, own.as_ref().unwrap_or_else(|| cb.automata()));
            self.own_automata = own;
        }
        self.lower = lower;
        self.orig = orig;
        self.ends_o = eo;
        self.ends_l = el;
        for &r in &self.cb.always {
            if !self.cand_flag[r as usize] {
                self.cand_flag[r as usize] = true;
                self.cands.push(r);
            }
        }
        let sticky: Vec<u32> = self
            .state
            .sticky
            .iter()
            .filter_map(|(k, r)| self.resolve(k, &r.entry).map(|x| x.1))
            .collect();
        for r in sticky {
            if !self.cand_flag[r as usize] {
                self.cand_flag[r as usize] = true;
                self.cands.push(r);
            }
        }
    }

    /// Adds an activated entry's content to the recursion text and searches it.
    pub(super) fn add_recursion(&mut self, src: u32) {
        let body = self.cb.entries[src as usize].body;
        let text = clean_scan_text(body, true).unwrap_or_else(|| body.to_string());
        let lower = text.to_lowercase();
        self.search_text(&lower, &text, None, Some(src));
        self.rec_chunks.push((src, text));
    }
}
