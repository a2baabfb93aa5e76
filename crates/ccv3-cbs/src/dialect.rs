//! Dialects: which application's macros a text is written for.
//!
//! Cards are written for one application's macros. RisuAI and SillyTavern share the spec's
//! nine macros and many names, but some names mean different things (RisuAI's `{{getvar}}` of
//! an unset variable is `null`, SillyTavern's is empty; RisuAI's `{{time}}` is `H:M:S`,
//! SillyTavern's `h:mm A`; RisuAI's `{{addvar}}` adds numbers only, SillyTavern's appends
//! text). A [`Dialect`] picks one application's set and meanings:
//!
//! - [`Dialect::Risu`]: RisuAI's CBS (its `cbs.ts`), names it does not define stay text;
//! - [`Dialect::SillyTavern`]: SillyTavern's macros, names it does not define stay text;
//! - [`Dialect::Spec`]: the spec's nine macros only ([`crate::Registry::spec_only`]);
//! - [`Dialect::Auto`]: resolved from the card by the caller ([`Dialect::for_card`]: RisuAI
//!   extensions mean `risu`, else `sillytavern`); with nothing to decide from, every built-in
//!   macro ([`crate::Registry::standard`], the union of both applications, SillyTavern's
//!   meaning where they differ).
//!
//! The spec set keeps the spec's meaning in every dialect. [`crate::Registry::dialect_ref`]
//! gives the registry of a dialect; the catalog ([`crate::Registry::macros`]) says which
//! dialects each macro belongs to. The `sillytavern` dialect also reads SillyTavern's macro engine
//! syntax (`{{if}}...{{else}}...{{/if}}`, scoped blocks `{{name}}...{{/name}}`, flags, the
//! `{{.var}}`/`{{$var}}` shorthand): see [`crate::families::st_syntax`].
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables};
//! let t = Template::parse("[{{getvar::unset}}] {{upper::abc}}");
//! let run = |d: Dialect| {
//!     t.expand_with(Registry::dialect_ref(d), &Limits::default(), &Context::new(), &mut Variables::new(), Mode::Prompt).text
//! };
//! assert_eq!(run(Dialect::Risu), "[null] ABC");
//! assert_eq!(run(Dialect::SillyTavern), "[] {{upper::abc}}");
//! assert_eq!(run(Dialect::Spec), "[{{getvar::unset}}] {{upper::abc}}");
//! assert_eq!("risu".parse::<Dialect>(), Ok(Dialect::Risu));
//! ```

use std::fmt;
use std::str::FromStr;

/// Which application's macros a text is written for. See the [module docs](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Decided by the card ([`Dialect::for_card`]); without one, every built-in macro.
    #[default]
    Auto,
    /// RisuAI's CBS.
    Risu,
    /// SillyTavern's macros.
    SillyTavern,
    /// The spec's nine macros only.
    Spec,
}

impl Dialect {
    /// Every dialect, `auto` first.
    pub const ALL: [Dialect; 4] = [
        Dialect::Auto,
        Dialect::Risu,
        Dialect::SillyTavern,
        Dialect::Spec,
    ];

    /// The name used on the command line and in option objects: `auto`, `risu`,
    /// `sillytavern`, `spec`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Auto => "auto",
            Dialect::Risu => "risu",
            Dialect::SillyTavern => "sillytavern",
            Dialect::Spec => "spec",
        }
    }

    /// Resolves `auto` for a card: `risu` when the card carries RisuAI extensions
    /// (`extensions.risuai` in its data), else `sillytavern`. Other dialects are kept.
    ///
    /// ```
    /// use ccv3_cbs::Dialect;
    /// assert_eq!(Dialect::Auto.for_card(true), Dialect::Risu);
    /// assert_eq!(Dialect::Auto.for_card(false), Dialect::SillyTavern);
    /// assert_eq!(Dialect::Spec.for_card(true), Dialect::Spec);
    /// ```
    pub fn for_card(self, has_risu_extensions: bool) -> Dialect {
        match self {
            Dialect::Auto if has_risu_extensions => Dialect::Risu,
            Dialect::Auto => Dialect::SillyTavern,
            other => other,
        }
    }

    /// The bit of this dialect in [`Dialects`] (`auto` has none).
    pub(crate) fn bit(self) -> u8 {
        match self {
            Dialect::Auto => 0,
            Dialect::Risu => Dialects::RISU.0,
            Dialect::SillyTavern => Dialects::SILLYTAVERN.0,
            Dialect::Spec => Dialects::SPEC.0,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = String;

    /// Reads `auto`, `risu` (also `risuai`), `sillytavern` (also `st`), `spec` in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Dialect::Auto),
            "risu" | "risuai" => Ok(Dialect::Risu),
            "sillytavern" | "st" => Ok(Dialect::SillyTavern),
            "spec" => Ok(Dialect::Spec),
            other => Err(format!(
                "unknown dialect {other:?}: expected auto, risu, sillytavern or spec"
            )),
        }
    }
}

/// A set of dialects (the ones a macro belongs to).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dialects(pub(crate) u8);

impl Dialects {
    /// The spec set.
    pub const SPEC: Dialects = Dialects(1);
    /// SillyTavern.
    pub const SILLYTAVERN: Dialects = Dialects(2);
    /// RisuAI.
    pub const RISU: Dialects = Dialects(4);
    /// Both applications.
    pub const APPS: Dialects = Dialects(2 | 4);
    /// All three (the spec's macros).
    pub const ALL: Dialects = Dialects(1 | 2 | 4);
    /// None: a macro of this crate's own (in [`Dialect::Auto`]'s standard set only).
    pub const NONE: Dialects = Dialects(0);

    /// `true` if `dialect` is in the set (`auto` is in every set).
    pub fn contains(self, dialect: Dialect) -> bool {
        dialect == Dialect::Auto || self.0 & dialect.bit() != 0
    }

    /// The names of the dialects in the set (`spec`, `sillytavern`, `risu`).
    pub fn names(self) -> Vec<&'static str> {
        [Dialect::Spec, Dialect::SillyTavern, Dialect::Risu]
            .into_iter()
            .filter(|d| self.0 & d.bit() != 0)
            .map(Dialect::as_str)
            .collect()
    }
}
