//! Curly-braced syntax (CBS): the macros of Character Card V3 (`{{char}}`, `{{user}}`,
//! `{{random:...}}`, ...), parsed once into a tree and expanded with a context.
//!
//! # Grammar
//!
//! A template is text with macros in it. Parsing never fails: whatever does not form a
//! macro stays text, byte for byte.
//!
//! - **Macro**: `{{` content `}}`. The content starts with a *name* (after optional
//!   whitespace) that ends at the first `:` or whitespace. Names are case-insensitive, and
//!   `_` and `-` are ignored (`hidden_key` = `hiddenKey` = `hiddenkey`). The names `//` and
//!   `?` end at once (`{{// note}}`, `{{?1+1}}`), and a name may start with `:` (`{{:else}}`).
//! - **Arguments**, in one of these styles, chosen by what follows the name:
//!   - `{{name}}`: none;
//!   - `{{name::a::b}}`: split on every `::`;
//!   - `{{name:a:b}}` (legacy): split on every `:`;
//!   - `{{name a b}}`: everything after the whitespace is one argument.
//!
//!   Splitting looks only at the literal text of the template: a separator produced by a
//!   nested macro does not split. Macros that take one text (`reverse`, `comment`, `random`,
//!   ...) read all arguments joined back with the separator, so `{{comment: a: b}}` is the
//!   text ` a: b`.
//! - **Nesting**: macros nest (`{{reverse:{{user}}}}`); inner ones expand first, left to
//!   right. In a run of braces the macro opens at the last two (`{{{char}}}` is `{` + name +
//!   `}`), and the first `}}` closes the innermost open macro.
//! - **Escaping**: inside `random` and `pick` choices, `\,` is a literal comma. There is no
//!   other escape; `{{` that never closes is text.
//! - **Unknown macros** stay as text: `{{` + the content with nested macros expanded + `}}`
//!   (RisuAI and SillyTavern both expand inside unknown macros). So do macros whose handler
//!   refuses its arguments (e.g. `{{roll:abc}}`), with a [`Warning`].
//! - **Legacy markers**: `<user>`, `<char>`, `<bot>`, `<group>`, `<charifnotgroup>` (any
//!   case, exactly so) are macros of those names (the last two are SillyTavern's, in
//!   [`families::sillytavern`]).
//! - **`{{time_UTC+2}}`, `{{time_UTC-10}}`**: SillyTavern's legacy offset form; the name keeps
//!   its sign (`timeutc-10`) and reaches one handler.
//! - **Blocks**: `{{#if c}}...{{:else}}...{{/if}}`, `{{#if_pure c}}`, `{{#when ...}}`, `{{#each
//!   LIST as x}}...{{slot::x}}...{{/each}}`; any `{{/...}}` closes the innermost open block; a
//!   block never closed stays text. See [`families::blocks`].
//! - **SillyTavern's engine syntax** (the `sillytavern` dialect only): `{{if}}`/`{{else}}`,
//!   scoped blocks `{{name args}}content{{/name}}`, flags (`{{#name}}`, ...), comment blocks
//!   `{{//}}...{{///}}`, the `{{.var}}`/`{{$var}}` shorthand and `\{` escapes, read from the
//!   same tree. See [`families::st_syntax`].
//!
//! # Modes
//!
//! [`Mode`] says where the text goes. [`Mode::Prompt`]: `{{// A}}`, `{{comment:A}}` and
//! `{{hidden_key:A}}` are empty. [`Mode::Display`]: `{{comment:A}}` is shown with
//! [`Context::comment_renderer`] (default `<span class="cbs-comment">A</span>`).
//! [`Mode::LoreScan`] (recursive lorebook scanning): `{{hidden_key:A}}` yields `A`.
//!
//! # Randomness
//!
//! Reproducible on every platform: a SplitMix64 generator of our own (state += the golden
//! gamma `0x9E3779B97F4A7C15`, output = a 64-bit xor-shift/multiply finaliser; integer range
//! by multiply-shift), with wrapping integer arithmetic only.
//! - `{{pick}}` is seeded by [`Context::seed`] mixed with the macro's byte offset in its
//!   template (inside an expanded card field, also with an FNV-1a hash of the field), so the
//!   same prompt in the same chat gives the same choice on every run.
//! - `{{random}}` and `{{roll}}` draw from one stream per expansion seeded by
//!   [`Context::seed`] mixed with [`Context::nonce`]: the same context gives the same text
//!   (tests), and an application changes the nonce per generation for fresh rolls.
//!
//! # Bounds
//!
//! Hostile input cannot hang or exhaust memory: nesting depth, output size, total work,
//! steps, `#each` items, variable sizes and nested field expansion are capped by [`Limits`].
//! When a bound is hit, expansion stops growing and reports it in [`Expansion::warnings`].
//! A [`Budget`] bounds many expansions together (all texts of one prompt: card fields,
//! lorebook entries, keys): see [`budget`] and [`Template::expand_in`].
//! Parsing and expansion are linear in the input for templates without loops.
//!
//! # API tour
//!
//! - [`Template::parse`] then [`Template::expand`] (standard macros) or
//!   [`Template::expand_with`] (your [`Registry`] and [`Limits`]) giving an [`Expansion`].
//! - [`expand`]: one-shot prompt expansion with fresh [`Variables`].
//! - [`Registry`]: [`Registry::spec_only`], [`Registry::standard`], [`Registry::register`],
//!   [`Registry::remove_family`]; handlers see a [`Call`].
//! - [`Context`]: names, card fields, chat, clock, seed; [`Variables`]: local and global
//!   variables, serde-serialisable.
//! - [`Dialect`]: whose macros a text uses (RisuAI, SillyTavern, the spec's nine);
//!   [`Registry::dialect_ref`] gives a dialect's registry, [`Registry::macros`] its catalog
//!   ([`MacroInfo`]: arguments, description, dialects). See [`dialect`].
//!
//! ```
//! use ccv3_cbs::{Context, Mode, Template, Variables};
//! let ctx = Context::new().with_char_name("Seraphina").with_user_name("Bob").with_seed(42);
//! let t = Template::parse("{{setvar::mood::calm}}{{char}} greets {{user}}. Mood: {{getvar::mood}}.");
//! let mut vars = Variables::new();
//! let out = t.expand(&ctx, &mut vars, Mode::Prompt);
//! assert_eq!(out.text, "Seraphina greets Bob. Mood: calm.");
//! assert!(out.warnings.is_empty());
//! assert_eq!(vars.local["mood"], "calm");
//! ```
//!
//! # Choices where the spec is silent
//!
//! Following SillyTavern where it documents a behaviour, else RisuAI:
//! - Unknown macros keep their text, with nested macros expanded (both apps).
//! - Whitespace around separators is ignored: handlers see trimmed arguments, and
//!   `{{ setvar :: x :: 1 }}` equals `{{setvar::x::1}}` (SillyTavern); unknown macros keep
//!   their whitespace.
//! - `random`/`pick` choices are trimmed; several `::` arguments are the choices; one
//!   argument is split on `::` if it holds one (`{{random:a::b}}`, SillyTavern), else on
//!   unescaped commas.
//! - `pick` is stable per (chat seed, byte offset); `random`/`roll` per (seed, nonce) stream.
//! - `roll` reads `N`, `dN`, `XdY`, `XdY+Z`, `XdY-Z`; bad dice stay text with a warning.
//! - `comment` in display mode renders as an HTML span by default (configurable).
//! - `original` expands once per expansion (SillyTavern).
//! - Time formats follow SillyTavern's moment.js formats; see [`families::time`].
//! - `getvar` of an unset variable is empty (SillyTavern), not `null` (RisuAI); `addvar`
//!   adds numbers and appends text (SillyTavern); `incvar`/`decvar` return the new value.
//! - Conditions are true for `1` or `true` (RisuAI; this crate also accepts `TRUE`);
//!   `#if`/`#when` read the first word of a space-style condition; `#when::...` is reduced
//!   right to left like RisuAI; block whitespace follows RisuAI ([`families::blocks`]);
//!   `#if` also accepts `{{:else}}`.
//! - `#each` items are inserted as text and never parsed (RisuAI re-parses them).
//! - Card fields (`description`, ...) are expanded as templates (bounded); chat messages
//!   and `original` are inserted as they are.
//! - In the `sillytavern` dialect a macro called with a number of arguments it does not take
//!   stays as written (SillyTavern's macro registry); see [`families::sillytavern`].
//! - The standard registry ([`Dialect::Auto`] without a card) holds both applications' macros
//!   and RisuAI's functions ([`families::strings`], [`families::collections`],
//!   [`families::numbers`], [`families::markup`], [`families::risu`]); the `risu` dialect gives
//!   the names both use RisuAI's meanings ([`families::risu`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod budget;
mod catalog;
mod context;
pub mod dialect;
mod expand;
pub mod families;
mod parse;
mod registry;
mod rng;
mod vars;

pub use budget::{Budget, BudgetLimits};
pub use catalog::MacroInfo;
pub use context::{html_comment, CommentRenderer, Context, Message, Role, Timestamp};
pub use dialect::{Dialect, Dialects};
pub use expand::{Call, Expansion, Limits, Mode, Template, Warning, MAX_WARNINGS};
pub use families::st_examples::{ExampleFormat, InstructExamples, NamesBehavior};
pub use parse::{normalize_name, Style};
pub use registry::{Family, Handler, Registry};
pub use vars::{Scope, Variables};

/// Expands `text` for a prompt with the standard macros, default limits and fresh variables.
///
/// ```
/// use ccv3_cbs::{expand, Context};
/// let ctx = Context::new().with_char_name("Alice");
/// assert_eq!(expand("I am {{char}}.", &ctx), "I am Alice.");
/// ```
pub fn expand(text: &str, ctx: &Context) -> String {
    Template::parse(text)
        .expand(ctx, &mut Variables::new(), Mode::Prompt)
        .text
}
