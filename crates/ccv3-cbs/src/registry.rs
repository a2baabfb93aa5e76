//! The macro registry: normalised name to handler, grouped in families.
//!
//! A handler is a function of a [`Call`] returning `Some(text)` (the replacement) or `None`
//! (the macro stays as text, with its arguments expanded). Names are normalised with
//! [`normalize_name`] on registration and lookup. The block names `#if`, `#ifpure`, `#when`,
//! `#each` and the `slot` macro are registered by the [`Family::Blocks`] family; without them
//! blocks stay text.
//!
//! An import circle, kept on purpose: a registry of built-in macros and its families. The
//! registry fills itself from the families (`families::*::register`, by [`Family`]), every
//! family's handlers are functions of an expansion [`Call`] that register into a [`Registry`],
//! and the expander (`expand.rs`, `expand/st_engine.rs`) looks its handlers up here; the parser
//! shares the expander's warnings (`expand::Warning`), and the catalog (`catalog.rs`, what
//! `ccv3 cbs --list` prints) lists the same names. Cutting the loop would need the families
//! registered from outside the crate, or handlers that do not see a `Call`. Name parsing
//! (`parse.rs`, SillyTavern's `time_UTC±N` names included) depends on no family.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::catalog::{self, MacroInfo};
use crate::dialect::Dialect;
use crate::expand::Call;
use crate::families;
use crate::parse::normalize_name;

/// A macro implementation.
pub type Handler = Arc<dyn Fn(&mut Call<'_, '_>) -> Option<String> + Send + Sync>;

/// A group of macros that can be left out together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// The CCv3 spec set: `char`, `user`, `random`, `pick`, `roll`, `//`, `hidden_key`,
    /// `comment`, `reverse`, `<char>`, `<bot>`.
    Spec,
    /// V2's `original`.
    Original,
    /// Character fields: `description`, `personality`, `scenario`, `persona`, `mesExamples`.
    Character,
    /// Chat: `lastMessage`, `lastUserMessage`, `lastCharMessage`, `lastMessageId`, `firstMsgIndex`.
    Chat,
    /// Time: `time`, `date`, `weekday`, `isotime`, `isodate`, `idle_duration`, `unixtime`.
    Time,
    /// Text: `newline`/`br`, `space`, `trim`, `noop`/`blank`/`none`.
    Text,
    /// Variables: `setvar`, `getvar`, `addvar`, `incvar`, `decvar`, global and temp forms.
    Variables,
    /// Math and comparison: `calc`, `?`, `equal`, `not_equal`, `greater`, ..., `and`, `or`, `not`.
    Math,
    /// Blocks: `#if`, `#if_pure`, `#when`, `#each` and `slot`.
    Blocks,
    /// Dice: `dice` (the spec's `roll` already reads `XdY+Z`).
    Dice,
    /// Legacy markers: `<user>` (with `<char>`/`<bot>` from the spec set).
    Legacy,
    /// RisuAI's string functions: `replace`, `split`, `join`, `lower`, `hash`, ... (see
    /// [`families::strings`]).
    Strings,
    /// RisuAI's arrays and dictionaries: `makearray`, `arrayelement`, `range`, `filter`, ...
    /// (see [`families::collections`]).
    Collections,
    /// RisuAI's number functions: `round`, `pow`, `fixnum`, `randint`, ... (see
    /// [`families::numbers`]).
    Numbers,
    /// RisuAI's markup and escapes: `cbr`, `bo`, `tex`, `ruby`, `codeblock`, ... (see
    /// [`families::markup`]).
    Markup,
    /// RisuAI's chat and application functions: `chatindex`, `history`, `metadata`, ... (see
    /// [`families::risu`]).
    RisuChat,
    /// SillyTavern's macro engine syntax: `{{if}}`, `{{else}}` and the `{{.name}}` / `{{$name}}`
    /// variable shorthand (see [`families::st_syntax`]). Only the `sillytavern` dialect's
    /// registry ([`Registry::dialect`]) has it; it is not in [`Family::ALL`].
    SillyTavernSyntax,
    /// SillyTavern's macros beyond the shared ones: `hasvar`, `deletevar`, `getvarkey`,
    /// `group`, `greeting`, `datetimeformat`, `timeDiff`, `time_UTC+N`, ... (see
    /// [`families::sillytavern`]).
    SillyTavern,
    /// Macros added by the application with [`Registry::register`].
    Custom,
}

impl Family {
    /// All built-in families, in registration order.
    pub const ALL: [Family; 17] = [
        Family::Spec,
        Family::Original,
        Family::Character,
        Family::Chat,
        Family::Time,
        Family::Text,
        Family::Variables,
        Family::Math,
        Family::Blocks,
        Family::Dice,
        Family::Legacy,
        Family::Strings,
        Family::Collections,
        Family::Numbers,
        Family::Markup,
        Family::RisuChat,
        Family::SillyTavern,
    ];
}

#[derive(Clone)]
struct Entry {
    family: Family,
    handler: Handler,
}

/// Name to handler map used by the expander. `Registry::default()` is empty; most callers
/// want [`Registry::standard`] (or the shared [`Registry::standard_ref`]).
#[derive(Clone, Default)]
pub struct Registry {
    map: HashMap<String, Entry>,
    dialect: Dialect,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.map.keys().collect();
        names.sort();
        f.debug_struct("Registry").field("names", &names).finish()
    }
}

impl Registry {
    /// A registry with no macros at all (everything stays text).
    pub fn empty() -> Self {
        Self::default()
    }

    /// Only the CCv3 spec set ([`Family::Spec`]): the [`Dialect::Spec`] registry.
    pub fn spec_only() -> Self {
        let mut r = Self::empty();
        r.add_family(Family::Spec);
        r.dialect = Dialect::Spec;
        r
    }

    /// The macros of one dialect ([`crate::dialect`]): RisuAI's or SillyTavern's names with
    /// their meanings, or the spec's nine. [`Dialect::Auto`] is [`Registry::standard`].
    ///
    /// ```
    /// use ccv3_cbs::{Dialect, Registry};
    /// assert!(Registry::dialect(Dialect::Risu).contains("arrayelement"));
    /// assert!(!Registry::dialect(Dialect::SillyTavern).contains("arrayelement"));
    /// assert!(Registry::dialect(Dialect::SillyTavern).contains("incvar"));
    /// ```
    pub fn dialect(dialect: Dialect) -> Self {
        match dialect {
            Dialect::Auto => Self::standard(),
            Dialect::Spec => Self::spec_only(),
            Dialect::Risu | Dialect::SillyTavern => {
                let mut r = Self::standard();
                if dialect == Dialect::Risu {
                    families::risu::register_overrides(&mut r);
                } else {
                    families::sillytavern::register_overrides(&mut r);
                }
                r.map.retain(|name, _| {
                    catalog::lookup(dialect, name).is_some_and(|row| row.unavailable.is_none())
                });
                if dialect == Dialect::SillyTavern {
                    r.add_family(Family::SillyTavernSyntax);
                    r.check_sillytavern_arity();
                }
                r.dialect = dialect;
                r
            }
        }
    }

    /// SillyTavern's rule: a macro called with a number of arguments its definition does not
    /// take stays as written (`{{char::x}}`, `{{reverse}}`, `{{setvar::a}}`), with a warning.
    /// Arguments are counted as SillyTavern's parser counts them: `::` separates, while the
    /// legacy `name:text` and `name text` forms are one argument.
    fn check_sillytavern_arity(&mut self) {
        for (name, entry) in &mut self.map {
            let Some((min, max)) =
                catalog::lookup(Dialect::SillyTavern, name).and_then(|r| r.st_arity)
            else {
                continue;
            };
            let inner = Arc::clone(&entry.handler);
            entry.handler = Arc::new(move |c: &mut Call<'_, '_>| {
                let count = families::sillytavern::arg_count(c);
                if count < usize::from(min) || (max != u8::MAX && count > usize::from(max)) {
                    let expected = match (min, max) {
                        (a, b) if a == b => a.to_string(),
                        (a, u8::MAX) => format!("at least {a}"),
                        (a, b) => format!("{a} to {b}"),
                    };
                    c.warn(format!("called with {count} arguments, takes {expected}"));
                    return None;
                }
                inner(c)
            });
        }
    }

    /// A shared [`Registry::dialect`], built once per dialect.
    pub fn dialect_ref(dialect: Dialect) -> &'static Registry {
        static RISU: OnceLock<Registry> = OnceLock::new();
        static SILLYTAVERN: OnceLock<Registry> = OnceLock::new();
        static SPEC: OnceLock<Registry> = OnceLock::new();
        let cell = match dialect {
            Dialect::Auto => return Self::standard_ref(),
            Dialect::Risu => &RISU,
            Dialect::SillyTavern => &SILLYTAVERN,
            Dialect::Spec => &SPEC,
        };
        cell.get_or_init(|| Registry::dialect(dialect))
    }

    /// The dialect this registry was built for (`auto` for [`Registry::standard`] and
    /// registries built by hand).
    pub fn dialect_of(&self) -> Dialect {
        self.dialect
    }

    /// The catalog rows of the macros this registry expands, in catalog order (families
    /// together), then the rows of its dialect that cannot work outside their application
    /// ([`MacroInfo::unavailable`]). Macros added with [`Registry::register`] have no row and
    /// are not listed. This is what `ccv3 cbs --list` prints.
    ///
    /// ```
    /// use ccv3_cbs::{Dialect, Registry};
    /// let risu = Registry::dialect_ref(Dialect::Risu).macros();
    /// let join = risu.iter().find(|m| m.name == "join").unwrap();
    /// assert_eq!(join.usage(), "{{join::ARRAY::B}}");
    /// assert!(risu.iter().any(|m| m.name == "screenwidth" && m.unavailable.is_some()));
    /// ```
    pub fn macros(&self) -> Vec<&'static MacroInfo> {
        let mut rows: Vec<&'static MacroInfo> = self
            .map
            .keys()
            .filter_map(|name| catalog::lookup(self.dialect, name))
            .chain(catalog::unavailable(self.dialect))
            .collect();
        let order = |m: &&MacroInfo| {
            catalog::CATALOG
                .iter()
                .position(|r| std::ptr::eq(r, *m))
                .unwrap_or(usize::MAX)
        };
        rows.sort_by_key(order);
        rows.dedup_by(|a, b| std::ptr::eq(*a, *b));
        rows
    }

    /// Every built-in family ([`Family::ALL`]).
    pub fn standard() -> Self {
        let mut r = Self::empty();
        for f in Family::ALL {
            r.add_family(f);
        }
        r
    }

    /// A shared [`Registry::standard`], built once.
    pub fn standard_ref() -> &'static Registry {
        static STANDARD: OnceLock<Registry> = OnceLock::new();
        STANDARD.get_or_init(Registry::standard)
    }

    /// Adds (or re-adds) every macro of a built-in family.
    pub fn add_family(&mut self, family: Family) {
        match family {
            Family::Spec => families::spec::register(self),
            Family::Original => families::original::register(self),
            Family::Character => families::character::register(self),
            Family::Chat => families::chat::register(self),
            Family::Time => families::time::register(self),
            Family::Text => families::text::register(self),
            Family::Variables => families::variables::register(self),
            Family::Math => families::math::register(self),
            Family::Blocks => families::blocks::register(self),
            Family::Dice => families::dice::register(self),
            Family::Legacy => families::legacy::register(self),
            Family::Strings => families::strings::register(self),
            Family::Collections => families::collections::register(self),
            Family::Numbers => families::numbers::register(self),
            Family::Markup => families::markup::register(self),
            Family::RisuChat => families::risu::register(self),
            Family::SillyTavernSyntax => families::st_syntax::register(self),
            Family::SillyTavern => families::sillytavern::register(self),
            Family::Custom => {}
        }
    }

    /// Removes every macro registered under `family`.
    pub fn remove_family(&mut self, family: Family) {
        self.map.retain(|_, e| e.family != family);
    }

    /// Registers an application macro ([`Family::Custom`]); replaces a macro of the same name.
    ///
    /// ```
    /// use ccv3_cbs::{Context, Limits, Mode, Registry, Template, Variables};
    /// let mut reg = Registry::standard();
    /// reg.register("shout", |call| Some(call.raw().to_uppercase()));
    /// let t = Template::parse("{{shout::hey {{user}}}}");
    /// let ctx = Context::new().with_user_name("Bob");
    /// let out = t.expand_with(&reg, &Limits::default(), &ctx, &mut Variables::new(), Mode::Prompt);
    /// assert_eq!(out.text, "HEY BOB");
    /// ```
    pub fn register<F>(&mut self, name: &str, handler: F)
    where
        F: Fn(&mut Call<'_, '_>) -> Option<String> + Send + Sync + 'static,
    {
        self.register_in(Family::Custom, name, Arc::new(handler));
    }

    /// Registers a handler under a family.
    pub fn register_in(&mut self, family: Family, name: &str, handler: Handler) {
        self.map
            .insert(normalize_name(name), Entry { family, handler });
    }

    /// Registers one handler under several names.
    pub(crate) fn register_all<F>(&mut self, family: Family, names: &[&str], handler: F)
    where
        F: Fn(&mut Call<'_, '_>) -> Option<String> + Send + Sync + 'static,
    {
        let h: Handler = Arc::new(handler);
        for n in names {
            self.register_in(family, n, Arc::clone(&h));
        }
    }

    /// Removes one macro by name; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        self.map.remove(&normalize_name(name)).is_some()
    }

    /// `true` if a macro of this name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(&normalize_name(name))
    }

    /// The handler of an already normalised name.
    pub(crate) fn get(&self, normalized: &str) -> Option<&Handler> {
        match self.map.get(normalized) {
            Some(e) => Some(&e.handler),
            // SillyTavern's legacy `{{time_UTC+2}}` / `{{time_UTC-10}}`: one handler for
            // every offset (the parser keeps the sign in the name).
            None if crate::parse::is_time_utc(normalized) => {
                self.map.get("timeutc").map(|e| &e.handler)
            }
            None => None,
        }
    }

    /// Registered (normalised) names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.map.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}
