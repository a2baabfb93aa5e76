//! Character fields, [`crate::Family::Character`].
//!
//! | macro (aliases) | field |
//! |---|---|
//! | `{{description}}` (`charDescription`, `chardesc`) | [`crate::Context::description`] |
//! | `{{personality}}` (`charPersonality`, `charpersona`) | [`crate::Context::personality`] |
//! | `{{scenario}}` (`charScenario`) | [`crate::Context::scenario`] |
//! | `{{persona}}` (`userpersona`) | [`crate::Context::persona`] |
//! | `{{mesExamples}}` (`mesExamplesRaw`, `exampledialogue`, `examplemessage`) | [`crate::Context::mes_examples`] |
//!
//! The `sillytavern` dialect formats `{{mesExamples}}` into `<START>` blocks and trims
//! `{{mesExamplesRaw}}`, as SillyTavern does: see [`super::st_examples`].
//!
//! Fields are themselves templates: macros inside them are expanded (a description saying
//! `{{char}} is tall` gives the name), up to [`crate::Limits::max_recursion`] levels; deeper
//! fields are inserted as they are with a warning.
//!
//! ```
//! use ccv3_cbs::{expand, Context};
//! let ctx = Context::new()
//!     .with_char_name("Alice")
//!     .with_description("{{char}} is tall")
//!     .with_personality("kind")
//!     .with_scenario("a cafe")
//!     .with_persona("a student")
//!     .with_mes_examples("<START>hi");
//! assert_eq!(expand("{{description}}", &ctx), "Alice is tall");
//! assert_eq!(expand("{{personality}}|{{scenario}}|{{persona}}", &ctx), "kind|a cafe|a student");
//! assert_eq!(expand("{{mesExamples}}", &ctx), "<START>hi");
//! assert_eq!(expand("{{charDescription}}", &ctx), "Alice is tall");
//! assert_eq!(expand("{{charPersonality}} {{charpersona}} {{charScenario}}", &ctx), "kind kind a cafe");
//! assert_eq!(expand("{{user_persona}}", &ctx), "a student");
//! assert_eq!(
//!     expand("{{mesExamplesRaw}}|{{example_dialogue}}|{{example_message}}", &ctx),
//!     "<START>hi|<START>hi|<START>hi"
//! );
//! ```

use crate::context::Context;
use crate::expand::Call;
use crate::registry::{Family, Registry};

fn field(get: fn(&Context) -> &str) -> impl Fn(&mut Call<'_, '_>) -> Option<String> {
    move |c| {
        let text = get(c.context()).to_owned();
        Some(c.expand_nested(&text))
    }
}

/// Adds the character field macros.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::character::register(&mut registry);
/// assert!(registry.contains("description"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Character;
    r.register_all(
        f,
        &["description", "chardescription", "chardesc"],
        field(|c| &c.description),
    );
    r.register_all(
        f,
        &["personality", "charpersonality", "charpersona"],
        field(|c| &c.personality),
    );
    r.register_all(f, &["scenario", "charscenario"], field(|c| &c.scenario));
    r.register_all(f, &["persona", "userpersona"], field(|c| &c.persona));
    r.register_all(
        f,
        &[
            "mesexamples",
            "mesexamplesraw",
            "exampledialogue",
            "examplemessage",
        ],
        field(|c| &c.mes_examples),
    );
}
