//! Adapters from the other ccv3 crates' types to this crate's inputs.
//!
//! - [`CbsExpander`]: an [`Expander`](crate::Expander) over the full CBS engine of `ccv3-cbs`,
//!   with its variables kept across the prompt's texts.
//! - [`decorator_facts`]: the pieces of a lorebook activation that prompt assembly needs, from
//!   an entry's content.
//!
//! - [`inserts_from_activations`]: a lorebook scan's activations as [`LoreInsert`]s.

use crate::chat::Role;
use crate::lore::{InsertPosition, LoreInsert, UiPrompt};

pub use cbs::CbsExpander;

/// The decorator facts of an entry that prompt assembly uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecoratorFacts {
    /// `@@priority N` (the first valid one).
    pub priority: Option<f64>,
    /// `@@ignore_on_max_context` is present.
    pub ignore_on_max_context: bool,
    /// `@@disable_ui_prompt` values this crate knows.
    pub disable_ui_prompt: Vec<UiPrompt>,
}

/// Reads `@@priority`, `@@ignore_on_max_context` and `@@disable_ui_prompt` from the decorator
/// lines at the top of an entry's `content` with ccv3's one decorator parser
/// ([`ccv3::decorator::parse`]), so `@@@` fallbacks apply as the spec says: a fallback stands in
/// for the decorator before it when that one is not known.
///
/// ```
/// let f = ccv3_prompt::adapters::decorator_facts(
///     "@@priority 5\n@@ignore_on_max_context\n@@disable_ui_prompt system_prompt\nText");
/// assert_eq!(f.priority, Some(5.0));
/// assert!(f.ignore_on_max_context);
/// assert_eq!(f.disable_ui_prompt, [ccv3_prompt::UiPrompt::SystemPrompt]);
/// let f = ccv3_prompt::adapters::decorator_facts("@@unknown_x 1\n@@@priority 7\nText");
/// assert_eq!(f.priority, Some(7.0));
/// ```
pub fn decorator_facts(content: &str) -> DecoratorFacts {
    facts_of(&ccv3::decorator::parse(content).decorators)
}

/// The facts of parsed decorators.
fn facts_of(d: &ccv3::decorator::Decorators) -> DecoratorFacts {
    DecoratorFacts {
        priority: d.priority.filter(|p| p.is_finite()),
        ignore_on_max_context: d.ignore_on_max_context,
        disable_ui_prompt: ui_prompts(d.disable_ui_prompt.as_deref()),
    }
}

/// Turns the activations of a lorebook scan into prompt inserts, in the scan's prompt order.
///
/// `books` are the books the scan was compiled from (in the same order). Positions map one to
/// one; an entry at a depth keeps its depth and role (system when it has none); `@@position`
/// values without a slot here (`pt_*`) and SillyTavern outlets go after the character; an entry
/// placed nowhere ([`ccv3_lore::Position::Nowhere`]) gives no insert, as in SillyTavern. Priority,
/// `@@ignore_on_max_context` and `@@disable_ui_prompt` come from the entry's decorators as
/// compiled ([`ccv3_lore::Activation::decorators`], fallbacks applied), `@@priority` over the
/// entry's `priority`.
///
/// ```
/// use ccv3_lore::{chat::{Chat, Message, Role}, BookInput, BookKind, LorebookCompiler, ScanOptions};
/// let mut book = ccv3::Lorebook::default();
/// book.entries.push(ccv3::Entry::new(&["dragon"], "@@depth 2\nDragons breathe fire."));
/// let books = [BookInput { book: &book, kind: BookKind::Global, name: "world".into(), world_info: false }];
/// let compiled = LorebookCompiler::new().compile(&books);
/// let chat = Chat { messages: vec![Message::new(Role::User, "I saw a dragon!")], ..Default::default() };
/// let result = compiled.scan(&chat, &Default::default(), &ScanOptions::default(), &ccv3_tokens::Estimate);
/// let inserts = ccv3_prompt::adapters::inserts_from_activations(&result, &books);
/// assert_eq!(inserts[0].content, "Dragons breathe fire.");
/// assert!(matches!(inserts[0].position, ccv3_prompt::InsertPosition::Depth { depth: 2, .. }));
/// ```
pub fn inserts_from_activations(
    result: &ccv3_lore::ScanResult<'_>,
    books: &[ccv3_lore::BookInput<'_>],
) -> Vec<LoreInsert> {
    use ccv3_lore::Position;
    result
        .activated
        .iter()
        .filter(|a| a.position != Position::Nowhere)
        .map(|a| {
            let book = books.get(a.entry.book);
            let entry = book.and_then(|b| b.book.entries.get(a.entry.index));
            let facts = a.decorators.as_deref().map(facts_of).unwrap_or_default();
            let role = match a.role {
                Some(ccv3::decorator::DecoratorRole::User) => Role::User,
                Some(ccv3::decorator::DecoratorRole::Assistant) => Role::Assistant,
                _ => Role::System,
            };
            let position = match &a.position {
                Position::BeforeChar => InsertPosition::BeforeChar,
                Position::AfterChar => InsertPosition::AfterChar,
                Position::AuthorsNoteTop => InsertPosition::AuthorsNoteTop,
                Position::AuthorsNoteBottom => InsertPosition::AuthorsNoteBottom,
                Position::ExamplesTop => InsertPosition::ExamplesTop,
                Position::ExamplesBottom => InsertPosition::ExamplesBottom,
                Position::AtDepth => InsertPosition::Depth {
                    depth: u32::try_from(a.depth.unwrap_or(4)).unwrap_or(u32::MAX),
                    role,
                },
                Position::Named(v) => {
                    InsertPosition::from_position_value(v).unwrap_or(InsertPosition::AfterChar)
                }
                Position::Outlet(_) | Position::Nowhere => InsertPosition::AfterChar,
            };
            let name = a
                .name
                .map_or_else(|| format!("#{}", a.entry.index), str::to_string);
            let label = match book {
                Some(b) => format!("{}/{name}", b.name),
                None => name,
            };
            let mut insert = LoreInsert::new(label, a.content, position).with_order(a.order);
            insert.priority = facts
                .priority
                .or_else(|| entry.and_then(ccv3::Entry::priority_f64));
            insert.ignore_on_max_context = facts.ignore_on_max_context;
            insert.disable_ui_prompt = facts.disable_ui_prompt;
            insert.position_default = a.position_default;
            insert
        })
        .collect()
}

/// Reads `@@disable_ui_prompt` values, keeping the ones this crate knows.
///
/// ```
/// use ccv3_prompt::UiPrompt;
/// let kept = ccv3_prompt::adapters::ui_prompts(["system_prompt", "pt_unknown"]);
/// assert_eq!(kept, [UiPrompt::SystemPrompt]);
/// ```
pub fn ui_prompts<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<UiPrompt> {
    values.into_iter().filter_map(UiPrompt::parse).collect()
}

/// The dialect of a card's macros: `dialect` itself unless it is `auto`, then `risu` for a card
/// with RisuAI extensions (`extensions.risuai`), else `sillytavern` (issue 17).
///
/// ```
/// use ccv3_cbs::Dialect;
/// let mut card = ccv3::Card::new("Aqua").data;
/// assert_eq!(ccv3_prompt::adapters::card_dialect(&card, Dialect::Auto), Dialect::SillyTavern);
/// card.extensions.insert("risuai".into(), serde_json::json!({}));
/// assert_eq!(ccv3_prompt::adapters::card_dialect(&card, Dialect::Auto), Dialect::Risu);
/// assert_eq!(ccv3_prompt::adapters::card_dialect(&card, Dialect::Spec), Dialect::Spec);
/// ```
pub fn card_dialect(card: &ccv3::CardData, dialect: ccv3_cbs::Dialect) -> ccv3_cbs::Dialect {
    dialect.for_card(
        card.extensions
            .contains_key(ccv3::lorebook::risu::NAMESPACE),
    )
}

mod cbs {
    use crate::chat::{ChatMessage, Role};
    use crate::expand::{ExpandContext, Expander};
    use crate::PromptOptions;
    use ccv3::CardData;
    use ccv3_cbs::{
        Budget, BudgetLimits, Context, Limits, Message, Mode, Registry, Template, Variables,
        Warning,
    };

    /// An [`Expander`] over the CBS engine (`ccv3_cbs`): the macros of the card's dialect
    /// ([`PromptOptions::dialect`], resolved by [`super::card_dialect`]), variables carried
    /// from one text to the next in prompt order, warnings collected.
    ///
    /// Every text is expanded within [`Limits`] and all of them together within one
    /// [`Budget`] (issue 12: a card whose every text stays just under the limits of one
    /// expansion must not add up to gigabytes): once it is spent, texts are cut or left empty,
    /// each with a [`Warning::PromptBudget`].
    ///
    /// The context holds the card's fields, the chat (oldest first; assistant messages named
    /// after the character, user messages after the user unless the message has a name), the
    /// seed, the greeting index and the clock ([`PromptOptions::now`]) from the options. This
    /// crate never reads the system clock: without `now` the time macros (`{{time}}`,
    /// `{{date}}`, `{{isotime}}`, `{{idle_duration}}`, ...) expand to an empty string.
    pub struct CbsExpander {
        /// What the macros read; `original` is set for each text.
        pub context: Context,
        /// Chat and global variables (load them from `--state`, save them afterwards).
        pub variables: Variables,
        /// Warnings from every expansion, in order.
        pub warnings: Vec<Warning>,
        /// What the texts of this prompt have spent, together.
        pub budget: Budget,
        limits: Limits,
        registry: std::borrow::Cow<'static, Registry>,
    }

    impl CbsExpander {
        /// A CBS expander for one prompt of `card` and `chat`.
        pub fn new(card: &CardData, chat: &[ChatMessage], opts: &PromptOptions) -> Self {
            let (char_name, nickname) = match &opts.char_name {
                Some(n) => (n.clone(), String::new()),
                None => (card.name.clone(), card.nickname.clone().unwrap_or_default()),
            };
            let messages = chat
                .iter()
                .map(|m| {
                    let (role, default_name) = match m.role {
                        Role::User => (ccv3_cbs::Role::User, opts.user_name.as_str()),
                        Role::Assistant => (ccv3_cbs::Role::Char, card.char_name()),
                        Role::System => (ccv3_cbs::Role::System, "System"),
                    };
                    let name = m.name.clone().unwrap_or_else(|| default_name.to_string());
                    Message::new(role, name, m.content.clone())
                })
                .collect();
            let context = Context::new()
                .with_char_name(char_name)
                .with_nickname(nickname)
                .with_user_name(opts.user_name.clone())
                .with_description(card.description.clone())
                .with_personality(card.personality.clone())
                .with_scenario(card.scenario.clone())
                .with_mes_examples(card.mes_example.clone())
                .with_first_message(card.first_mes.clone())
                .with_alternate_greetings(card.alternate_greetings.clone())
                .with_creator_notes(card.creator_notes.clone())
                .with_char_version(card.character_version.clone())
                .with_system_prompt(card.system_prompt.clone())
                .with_post_history_instructions(card.post_history_instructions.clone())
                .with_depth_prompt(
                    card.extensions
                        .get("depth_prompt")
                        .and_then(|d| d.get("prompt"))
                        .and_then(|p| p.as_str())
                        .unwrap_or_default(),
                )
                .with_messages(messages)
                .with_seed(opts.seed)
                .with_greeting_index(opts.greeting)
                .with_example_format(opts.example_format.clone());
            let context = match opts.now {
                Some(now) => context.with_now(now),
                None => context,
            };
            CbsExpander {
                context,
                variables: Variables::new(),
                warnings: Vec::new(),
                budget: Budget::default(),
                limits: Limits::default(),
                registry: std::borrow::Cow::Borrowed(Registry::dialect_ref(super::card_dialect(
                    card,
                    opts.dialect,
                ))),
            }
        }

        /// Uses these limits for each text (default [`Limits::default`]).
        pub fn with_limits(mut self, limits: Limits) -> Self {
            self.limits = limits;
            self
        }

        /// Starts a fresh budget with these bounds for all texts together (default
        /// [`BudgetLimits::default`]).
        pub fn with_budget(mut self, limits: BudgetLimits) -> Self {
            self.budget = Budget::new(limits);
            self
        }

        /// Starts from saved variables.
        pub fn with_variables(mut self, variables: Variables) -> Self {
            self.variables = variables;
            self
        }

        /// Uses another macro registry (e.g. [`Registry::spec_only`]).
        pub fn with_registry(mut self, registry: Registry) -> Self {
            self.registry = std::borrow::Cow::Owned(registry);
            self
        }
    }

    impl Expander for CbsExpander {
        fn expand(&mut self, text: &str, ctx: &ExpandContext<'_>) -> String {
            ctx.original
                .unwrap_or("")
                .clone_into(&mut self.context.original);
            let template = Template::parse_with(text, &self.limits);
            let out = template.expand_in(
                &self.registry,
                &self.limits,
                &mut self.budget,
                &self.context,
                &mut self.variables,
                Mode::Prompt,
            );
            self.warnings.extend(out.warnings);
            out.text
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::{assemble, InsertPosition, LoreInsert, TokenCounter};

        #[test]
        fn adapters_cbs_expands_original_and_carries_variables_in_prompt_order() {
            let mut card = ccv3::Card::new("Aqua").data;
            card.system_prompt = "{{original}} {{setvar::mood::calm}}".into();
            card.description = "{{char}} is {{getvar::mood}}. {{reverse:abc}}".into();
            let opts = PromptOptions {
                system_prompt: Some("APP".into()),
                insert_greeting: false,
                ..Default::default()
            };
            let lore = [LoreInsert::new(
                "l",
                "{{user}} {{// hidden}}here",
                InsertPosition::AfterChar,
            )];
            let mut ex = CbsExpander::new(&card, &[], &opts);
            let counter = TokenCounter::new(ccv3_tokens::Estimate);
            let a = assemble(&card, &[], &lore, &opts, &mut ex, &counter).unwrap();
            let texts: Vec<&str> = a.parts.iter().map(|p| p.content.as_str()).collect();
            assert_eq!(texts, ["APP", "Aqua is calm. cba", "User here"]);
            assert_eq!(ex.variables.local["mood"], "calm");
        }
    }
}
