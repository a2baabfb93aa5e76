//! Adapters from the other ccv3 crates' types to this crate's inputs.
//!
//! TODO(merge): `CbsExpander` (an [`Expander`](crate::Expander) over `ccv3_cbs::Template`) and
//! `inserts_from_activations` (the lorebook engine's activations to [`LoreInsert`]s) are written
//! once those crates' APIs are on main.

use crate::chat::Role;
use crate::lore::{InsertPosition, LoreInsert, UiPrompt};

/// Converts the decorator facts of one lorebook entry into a [`LoreInsert`], following SPEC_V3:
/// `@@position` (when recognised) wins over `@@depth`, which wins over `@@reverse_depth`, which wins
/// over the V2 `position` field (`before_char`; anything else is `after_char`). A negative depth
/// counts as 0 ("after the most recent message"). `role` defaults to system.
///
/// ```
/// use ccv3_prompt::{adapters::insert_from_decorators, InsertPosition, Role};
/// let i = insert_from_decorators("lore", "text", None, Some(-2), None, Some("assistant"), None, 10.0);
/// assert_eq!(i.position, InsertPosition::Depth { depth: 0, role: Role::Assistant });
/// let i = insert_from_decorators("lore", "text", Some("after_desc"), Some(3), None, None, None, 10.0);
/// assert_eq!(i.position, InsertPosition::AfterDesc);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn insert_from_decorators(
    label: &str,
    content: &str,
    position_decorator: Option<&str>,
    depth: Option<i64>,
    reverse_depth: Option<i64>,
    role: Option<&str>,
    v2_position: Option<&str>,
    order: f64,
) -> LoreInsert {
    let role = role.and_then(Role::parse).unwrap_or(Role::System);
    let clamp = |d: i64| u32::try_from(d.max(0)).unwrap_or(u32::MAX);
    let position = match (
        position_decorator.and_then(InsertPosition::from_position_value),
        depth,
        reverse_depth,
    ) {
        (Some(p), _, _) => p,
        (None, Some(d), _) => InsertPosition::Depth {
            depth: clamp(d),
            role,
        },
        (None, None, Some(d)) => InsertPosition::ReverseDepth {
            depth: clamp(d),
            role,
        },
        (None, None, None) => match v2_position.map(str::trim) {
            Some("before_char") => InsertPosition::BeforeChar,
            _ => InsertPosition::AfterChar,
        },
    };
    LoreInsert::new(label, content, position).with_order(order)
}

/// Reads `@@disable_ui_prompt` values, keeping the ones this crate knows.
pub fn ui_prompts<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<UiPrompt> {
    values.into_iter().filter_map(UiPrompt::parse).collect()
}
