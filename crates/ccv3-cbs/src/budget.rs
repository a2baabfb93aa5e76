//! A budget shared by every expansion of one prompt.
//!
//! [`crate::Limits`] bound one expansion. A prompt expands many texts (seven card fields, every
//! active lorebook entry, keys, the author's note, ...), each within its own limits, so a card
//! whose every text stays just under them still multiplies its way to gigabytes (issue 12: seven
//! fields and 800 entries of 1 MiB each; 300 entries setting 100 variables of 64 KiB). A
//! [`Budget`] is handed to each expansion of a turn ([`crate::Template::expand_in`]) and bounds
//! them together: total output, total work, total steps, and the size of the variables. When it
//! is spent, expansion stops where it is with a [`crate::Warning::PromptBudget`] (and a later
//! expansion with the budget spent produces nothing, again with the warning: once the output is
//! spent, later texts are not expanded at all, side effects included); a variable write
//! that would take the variables past [`BudgetLimits::max_variable_bytes`] is refused with a
//! [`crate::Warning::Variable`].
//!
//! ```
//! use ccv3_cbs::{Budget, BudgetLimits, Context, Limits, Mode, Registry, Template, Variables, Warning};
//! let mut budget = Budget::new(BudgetLimits { max_output: 10, ..BudgetLimits::default() });
//! let (ctx, mut vars) = (Context::new(), Variables::new());
//! let t = Template::parse("{{reverse:abcdef}}");
//! let mut expand = |budget: &mut Budget| {
//!     t.expand_in(Registry::standard_ref(), &Limits::default(), budget, &ctx, &mut vars, Mode::Prompt)
//! };
//! assert_eq!(expand(&mut budget).text, "fedcba");
//! let second = expand(&mut budget);
//! assert_eq!(second.text, "fedc");
//! assert_eq!(second.warnings[0].kind(), "prompt-budget");
//! assert!(budget.is_spent());
//! assert_eq!(expand(&mut budget).text, "");
//! ```

/// The bounds of a [`Budget`]: what all expansions of one prompt may spend together. The
/// defaults are far above what real cards use (their prompts are at most a few MiB of text) and
/// keep a hostile card's prompt under a few hundred MiB of memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetLimits {
    /// Total bytes of expanded text, all expansions together. Default 32 MiB.
    pub max_output: usize,
    /// Total bytes written into any buffer (outputs and macro arguments), all expansions
    /// together. Default 256 MiB.
    pub max_work: usize,
    /// Total template nodes visited, all expansions together. Default 20,000,000.
    pub max_steps: u64,
    /// The most bytes the variables may hold (names and values, local and global together): a
    /// write past it is refused. Default 16 MiB. This also bounds the state a chat carries.
    pub max_variable_bytes: usize,
}

impl Default for BudgetLimits {
    fn default() -> Self {
        BudgetLimits {
            max_output: 32 << 20,
            max_work: 256 << 20,
            max_steps: 20_000_000,
            max_variable_bytes: 16 << 20,
        }
    }
}

/// What the expansions of one prompt have spent of their [`BudgetLimits`]: pass the same budget
/// to every [`crate::Template::expand_in`] of a turn. See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    limits: BudgetLimits,
    output: usize,
    work: usize,
    steps: u64,
    spent: bool,
}

impl Budget {
    /// A fresh budget with these bounds.
    pub fn new(limits: BudgetLimits) -> Self {
        Budget {
            limits,
            ..Budget::default()
        }
    }

    /// The bounds.
    pub fn limits(&self) -> &BudgetLimits {
        &self.limits
    }

    /// Bytes of expanded text so far.
    pub fn output(&self) -> usize {
        self.output
    }

    /// Bytes written into buffers so far.
    pub fn work(&self) -> usize {
        self.work
    }

    /// Nodes visited so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// `true` once an expansion stopped because the budget ran out.
    pub fn is_spent(&self) -> bool {
        self.spent
    }

    /// Output bytes left.
    pub(crate) fn output_left(&self) -> usize {
        self.limits.max_output.saturating_sub(self.output)
    }

    /// Work bytes left.
    pub(crate) fn work_left(&self) -> usize {
        self.limits.max_work.saturating_sub(self.work)
    }

    /// Steps left.
    pub(crate) fn steps_left(&self) -> u64 {
        self.limits.max_steps.saturating_sub(self.steps)
    }

    /// Charges one expansion's spending.
    pub(crate) fn charge(&mut self, output: usize, work: usize, steps: u64, spent: bool) {
        self.output = self.output.saturating_add(output);
        self.work = self.work.saturating_add(work);
        self.steps = self.steps.saturating_add(steps);
        self.spent |= spent;
    }
}

/// Bytes held by variables: names and values, both scopes.
pub(crate) fn variable_bytes(vars: &crate::Variables) -> usize {
    vars.local
        .iter()
        .chain(vars.global.iter())
        .fold(0usize, |n, (k, v)| n.saturating_add(k.len() + v.len()))
}
