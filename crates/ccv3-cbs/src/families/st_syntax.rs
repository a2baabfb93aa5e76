//! SillyTavern's macro engine syntax, [`crate::Family::SillyTavernSyntax`] (SillyTavern 1.19.0,
//! `public/scripts/macros/engine/` and `definitions/core-macros.js`). Only the `sillytavern`
//! dialect has it; the expander implements it, and these entries name it in the registry and
//! in `ccv3 cbs --list`.
//!
//! | syntax | result |
//! |---|---|
//! | `{{if COND}}A{{else}}B{{/if}}`, `{{if::COND::A}}` | `A` if `COND` is true, else `B`; only that part is expanded |
//! | `{{if !COND}}` | inverted (the `!` as written, not from an expanded value) |
//! | `{{name args}}content{{/name}}` | the content (expanded, dedented, trimmed) as the last argument |
//! | `{{#name}}` | keeps the whitespace of scoped content |
//! | `{{!name}}`, `{{?name}}`, `{{~name}}`, `{{>name}}` | flags read and ignored, like SillyTavern |
//! | `{{//}}...{{///}}` | a comment block: nothing |
//! | `{{.x}}`, `{{$x}}` | the local / global variable `x` |
//! | `{{.x = V}}`, `{{.x += V}}`, `{{.x -= V}}` | set, add (numbers add, text appends), subtract; empty |
//! | `{{.x++}}`, `{{.x--}}` | add 1 / subtract 1; the new value |
//! | `{{.x \|\| V}}`, `{{.x ?? V}}` | `V` if `x` is false-like / unset, else `x` |
//! | `{{.x \|\|= V}}`, `{{.x ??= V}}` | the same, also setting `x` to `V` |
//! | `{{.x == V}}`, `!=`, `>`, `>=`, `<`, `<=` | `true` or `false` (order compares numbers; not numbers: `false`) |
//!
//! A condition is false when it is empty, `false`, `off` or `0` (any case). A condition that is
//! `.name` / `$name` reads that variable; one that is a macro name taking no argument (`char`,
//! `noop`) is expanded first. Malformed shorthand (`{{.x++5}}`), closing tags that close
//! nothing and scoped macros that take no more arguments stay as written. `\{` and `\}` in the
//! final text become `{` and `}`.
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables};
//! let reg = Registry::dialect_ref(Dialect::SillyTavern);
//! let ctx = Context::new().with_char_name("Alice");
//! let mut vars = Variables::new();
//! let run = |src: &str, vars: &mut Variables| {
//!     Template::parse(src).expand_with(reg, &Limits::default(), &ctx, vars, Mode::Prompt).text
//! };
//! assert_eq!(run("{{if char}}Hi {{char}}{{else}}nobody{{/if}}", &mut vars), "Hi Alice");
//! assert_eq!(run("{{if 0}}{{.x = 1}}{{else}}{{.x = 2}}{{/if}}{{.x}}", &mut vars), "2");
//! assert_eq!(run("{{setvar::s}}\n  hello\n{{/setvar}}[{{getvar::s}}]", &mut vars), "[hello]");
//! assert_eq!(run("{{.n++}}{{.n += 5}}{{.n}} {{.n > 3}}", &mut vars), "16 true");
//! ```

use crate::registry::{Family, Registry};

/// Adds the names of SillyTavern's engine syntax. The expander handles them itself; called
/// directly (another dialect's expander), `{{if}}` and the shorthand stay text and `{{else}}`
/// is empty, as SillyTavern's own marker is removed.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::st_syntax::register(&mut registry);
/// assert!(registry.contains("else"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::SillyTavernSyntax;
    r.register_all(f, &["if", ".name", "$name"], |_| None);
    r.register_all(f, &["else"], |_| Some(String::new()));
}
