//! Lorebook entry decorators: `@@name value` lines at the top of an entry's content
//! (SPEC_V3 "Decorators").
//!
//! This module splits content into its decorator header and its body; the full parser (names,
//! values, `@@@` fallback chains) builds on [`split`].

/// An entry's content split into the decorator lines at its top and the text after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The decorator lines (each starting with `@@`), joined by `\n`, without surrounding newlines.
    pub header: &'a str,
    /// The content after the decorators, with the newlines before it removed.
    pub body: &'a str,
}

/// Splits `content` into decorator header and body.
///
/// Decorator lines are the consecutive lines at the top of the content (after blank lines) whose
/// first non-blank characters are `@@`. The body starts at the first other line; the newlines
/// between header and body are trimmed, as the spec asks.
///
/// ```
/// let s = ccv3::decorator::split("@@depth 4\n@@role system\n\nThe castle is old.");
/// assert_eq!(s.header, "@@depth 4\n@@role system");
/// assert_eq!(s.body, "The castle is old.");
/// assert_eq!(ccv3::decorator::split("No decorators").body, "No decorators");
/// ```
pub fn split(content: &str) -> Split<'_> {
    let mut pos = 0;
    let mut header_start = None;
    let mut header_end = 0;
    while pos < content.len() {
        let line_end = content[pos..].find('\n').map_or(content.len(), |i| pos + i);
        let line = content[pos..line_end].trim();
        if line.starts_with("@@") {
            header_start.get_or_insert(pos);
            header_end = line_end;
        } else if !(line.is_empty() && header_start.is_none()) {
            break;
        }
        pos = line_end + 1;
    }
    match header_start {
        None => Split {
            header: "",
            body: content,
        },
        Some(start) => {
            let header = content[start..header_end].trim_end_matches('\r');
            let body = content[header_end.min(content.len())..].trim_start_matches(['\n', '\r']);
            Split { header, body }
        }
    }
}
