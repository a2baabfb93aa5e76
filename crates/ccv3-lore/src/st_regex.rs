//! The regex keys of `Compat::SillyTavern` scans, compiled once per set of compiled books (the
//! books own the cache, the scan fills it).

use crate::jsregex::Engine;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Regex keys as `Compat::SillyTavern` reads them (`None`: not a usable pattern, so plain
/// text), compiled once per set of compiled books.
pub(crate) type StRegexCache = Mutex<HashMap<String, Option<Arc<StRegex>>>>;

/// A compiled regex key and the literals of which every match holds one.
#[derive(Debug)]
pub(crate) struct StRegex {
    /// The pattern's engine.
    pub(crate) engine: Engine,
    /// Literals of which every match holds one (empty: none known).
    pub(crate) lits: Vec<String>,
    /// Whether the literals are lower-cased (the `i` flag).
    pub(crate) icase: bool,
}
