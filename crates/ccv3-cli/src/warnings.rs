//! Warnings on stderr for people: repeated ones are counted, not printed a million times.
//!
//! A hostile book can carry hundreds of thousands of broken decorator lines; printing a line for
//! each would bury the output and take longer than the scan. Each kind of warning (a diagnostic's
//! code) is printed at most [`PER_KIND`] times, then one line says how many more of that kind
//! there were. Card text inside a warning is shown escaped ([`crate::shown::shown`]).

use crate::shown::shown;
use ccv3::Diagnostic;
use std::collections::HashMap;
use std::io::Write;

/// The most warnings of one kind printed before the rest are counted.
pub const PER_KIND: usize = 20;

/// Prints `diagnostics` as `ccv3: warning: ...` lines, at most [`PER_KIND`] of each code, then a
/// count of the rest per code (in the order the codes first appeared).
pub fn print_diagnostics<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) {
    print_capped(
        diagnostics
            .into_iter()
            .map(|d| (d.code.clone(), d.to_string())),
    );
}

/// Prints `(kind, text)` warnings with the same cap as [`print_diagnostics`].
pub fn print_capped(warnings: impl IntoIterator<Item = (String, String)>) {
    let stderr = std::io::stderr();
    let mut w = std::io::BufWriter::new(stderr.lock());
    for line in capped(warnings) {
        let _ = writeln!(w, "ccv3: warning: {line}");
    }
    let _ = w.flush();
}

/// The lines [`print_capped`] prints, without the `ccv3: warning: ` prefix.
pub fn capped(warnings: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    for (kind, text) in warnings {
        let n = seen.entry(kind.clone()).or_insert_with(|| {
            order.push(kind.clone());
            0
        });
        *n += 1;
        if *n <= PER_KIND {
            lines.push(shown(&text).into_owned());
        }
    }
    for kind in order {
        let n = seen[&kind];
        if n > PER_KIND {
            let more = n - PER_KIND;
            let noun = if more == 1 { "warning" } else { "warnings" };
            lines.push(format!("... and {more} more `{}` {noun}", shown(&kind)));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12: 200,000 decorator lines must not print 600,000 warning lines.
    #[test]
    fn repeated_warnings_are_counted_not_printed() {
        let many = (0..100_000).map(|i| ("decorator".to_string(), format!("line {i}")));
        let other = std::iter::once(("regex".to_string(), "bad\u{1b}[2J".to_string()));
        let lines = capped(many.chain(other));
        assert_eq!(lines.len(), PER_KIND + 1 + 1);
        assert_eq!(lines[0], "line 0");
        assert_eq!(lines[PER_KIND], "bad\\x1b[2J");
        assert_eq!(
            lines[PER_KIND + 1],
            format!("... and {} more `decorator` warnings", 100_000 - PER_KIND)
        );
    }
}
