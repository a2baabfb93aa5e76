//! `-` as a path: standard input where a command reads, standard output where it writes
//! (issue 16), and how messages name them (`<stdin>`, `<stdout>`).
//!
//! A leaf module: the errors ([`crate::error`]) and every reader and writer name `-` through it.

use std::path::Path;

/// How errors about standard input name it.
pub const STDIN: &str = "<stdin>";

/// How errors about standard output name it.
pub const STDOUT: &str = "<stdout>";

/// True when `path` is `-` (standard input or output); `./-` is a file named `-`.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// `<stdin>` as a path, for errors.
pub fn stdin_path() -> &'static Path {
    Path::new(STDIN)
}

/// How messages name an input: `<stdin>` for `-`, else the path.
pub fn in_name(path: &Path) -> &Path {
    if is_dash(path) {
        stdin_path()
    } else {
        path
    }
}

/// How errors name an output: `<stdout>` for `-`, else the path.
pub fn out_name(path: &Path) -> &Path {
    if is_dash(path) {
        Path::new(STDOUT)
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bare_dash_is_standard_input() {
        assert!(is_dash(Path::new("-")));
        assert!(!is_dash(Path::new("./-")));
        assert_eq!(in_name(Path::new("-")), Path::new("<stdin>"));
        assert_eq!(out_name(Path::new("-")), Path::new("<stdout>"));
        assert_eq!(in_name(Path::new("a.png")), Path::new("a.png"));
    }
}
