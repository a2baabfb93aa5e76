//! Blocks, [`crate::Family::Blocks`] (RisuAI forms and whitespace rules).
//!
//! - `{{#if cond}}...{{:else}}...{{/if}}`: the first part if `cond` is `1` or `true` (any case,
//!   trimmed), else the part after `{{:else}}` (optional). The chosen part loses the leading
//!   whitespace of every line and is trimmed at both ends. `{{#if_pure cond}}` keeps it as is.
//! - `{{#when cond}}` or `{{#when::args}}` with `{{:else}}`, closed by `{{/when}}`. With
//!   `::` arguments the list is reduced from the right, as RisuAI does: the last two entries
//!   (an operator and its right operand) are replaced by their result, binary operators also
//!   taking the entry before them as left operand, until one value is left. Operators:
//!   `a::is::b`, `a::isnot::b`, `a::>::b` (also `<`, `>=`, `<=`, numbers read like
//!   JavaScript's `parseFloat`), `a::and::b`, `a::or::b`, `not::a`, `var::name` (chat variable
//!   true), `toggle::name` (global variable `toggle_name` true), `name::vis::value` /
//!   `name::visnot::value` (chat variable equals / differs), `name::tis::value` /
//!   `name::tisnot::value` (toggle `toggle_name` equals / differs); an unknown operator is
//!   dropped. `keep::...` keeps all whitespace; `legacy::...` trims like `#if` and ignores
//!   `{{:else}}`. Otherwise the chosen part loses its leading and trailing whitespace-only
//!   lines (spaces inside lines stay). `{{#when cond}}` and `{{#if cond}}` read only the first
//!   word of `cond`.
//! - `{{#each LIST as name}}...{{slot::name}}...{{/each}}` (also `{{#each LIST name}}` and
//!   `{{#each::LIST::name}}`): repeats the body for each item; `LIST` is a JSON array (strings
//!   as they are, other values as JSON) or else text split on `§`. At most
//!   [`crate::Limits::max_each_items`] items. Each repetition loses the leading whitespace of
//!   every line and is trimmed, and so is the whole result, unless the header starts with
//!   `::keep` (`{{#each::keep LIST as x}}`). Items are inserted as text, never re-parsed as
//!   macros (RisuAI substitutes them into the body source; this crate does not, so an item
//!   cannot inject macros).
//!
//! - `{{#puredisplay}}...{{/puredisplay}}` (also `#pure_display`): the body as written, no
//!   macro in it expanded, trimmed, with `{{` and `}}` written `\{\{` and `\}\}` (RisuAI's
//!   escape for display). `{{#pure}}...{{/pure}}` (deprecated in RisuAI) gives the body as
//!   written, trimmed. The body ends at the first `{{/...}}` not closing a `{{#...}}` inside it.
//!
//! Any `{{/...}}` closes the innermost open block. A block never closed stays text. Unlike
//! RisuAI, which trims the body's source text, this crate trims the expanded text.
//!
//! ```
//! use ccv3_cbs::{expand, Context};
//! let ctx = Context::new().with_user_name("Bob");
//! assert_eq!(expand("{{#if 1}} yes {{:else}} no {{/if}}", &ctx), "yes");
//! assert_eq!(expand("{{#if {{equal::{{user}}::Ann}}}}yes{{:else}}no{{/if}}", &ctx), "no");
//! assert_eq!(expand("{{#if_pure true}} x {{/if_pure}}", &ctx), " x ");
//! assert_eq!(expand("{{#when::{{user}}::is::Bob}}hi Bob{{/when}}", &ctx), "hi Bob");
//! assert_eq!(expand("{{#when::not::0}}a{{:else}}b{{/when}}", &ctx), "a");
//! assert_eq!(expand("{{#when::3::>=::10}}a{{:else}}b{{/when}}", &ctx), "b");
//! assert_eq!(expand("{{#when::keep::1}} a {{/when}}", &ctx), " a ");
//! assert_eq!(expand("{{setvar::m::on}}{{#when::m::vis::on}}on{{/when}}", &ctx), "on");
//! assert_eq!(expand(r#"{{#each ["a","b",3] as x}}<{{slot::x}}>{{/each}}"#, &ctx), "<a><b><3>");
//! assert_eq!(expand("{{#each a§b as x}}{{slot::x}};{{/}}", &ctx), "a;b;");
//! assert_eq!(expand("{{#if 1}}never closed", &ctx), "{{#if 1}}never closed");
//! assert_eq!(expand("{{#puredisplay}} {{user}} {{/puredisplay}}", &ctx), r"\{\{user\}\}");
//! assert_eq!(expand("{{#pure}}{{user}}{{/pure}}", &ctx), "{{user}}");
//! ```

use crate::registry::{Family, Registry};

/// Adds the block names and `slot`.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::blocks::register(&mut registry);
/// assert!(registry.contains("slot"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Blocks;
    // Block headers are evaluated by the expander; as plain macros they stay text.
    r.register_all(
        f,
        &["#if", "#ifpure", "#when", "#each", "#pure", "#puredisplay"],
        |_| None,
    );
    r.register_all(f, &["slot"], |c| {
        let name = c.raw();
        c.slot(name.trim()).map(str::to_owned)
    });
}
