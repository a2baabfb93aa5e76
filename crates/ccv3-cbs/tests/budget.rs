//! Issue 12 (hostile input, part 2): the limits of CBS hold per prompt, not per expansion. One
//! [`Budget`] is spent by many expansions; these tests set its bounds low.

use ccv3_cbs::{
    Budget, BudgetLimits, Context, Limits, Mode, Registry, Template, Variables, Warning,
};

fn run(t: &Template, budget: &mut Budget, vars: &mut Variables) -> ccv3_cbs::Expansion {
    t.expand_in(
        Registry::standard_ref(),
        &Limits::default(),
        budget,
        &Context::new(),
        vars,
        Mode::Prompt,
    )
}

/// Issue 12: many texts each under the output limit of one expansion stop together at the
/// budget's total, with a warning each time a text is cut or left empty.
#[test]
fn issue12_output_budget_is_shared_by_expansions() {
    let t = Template::parse(&"0123456789".repeat(100));
    let mut budget = Budget::new(BudgetLimits {
        max_output: 2500,
        ..BudgetLimits::default()
    });
    let mut vars = Variables::new();
    let outs: Vec<_> = (0..5).map(|_| run(&t, &mut budget, &mut vars)).collect();
    let lens: Vec<usize> = outs.iter().map(|o| o.text.len()).collect();
    assert_eq!(lens, [1000, 1000, 500, 0, 0]);
    let warned: Vec<bool> = outs
        .iter()
        .map(|o| o.warnings.iter().any(|w| w.kind() == "prompt-budget"))
        .collect();
    assert_eq!(warned, [false, false, true, true, true]);
    assert_eq!(budget.output(), 2500);
    assert!(budget.is_spent());
}

/// Issue 12: the step and work budgets stop expansions that each stay under their own limits.
#[test]
fn issue12_step_and_work_budgets_are_shared() {
    let t = Template::parse(&"{{char}}".repeat(100));
    let mut budget = Budget::new(BudgetLimits {
        max_steps: 250,
        ..BudgetLimits::default()
    });
    let mut vars = Variables::new();
    let a = run(&t, &mut budget, &mut vars);
    let b = run(&t, &mut budget, &mut vars);
    let c = run(&t, &mut budget, &mut vars);
    assert!(a.warnings.is_empty() && b.warnings.is_empty());
    assert!(c
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::PromptBudget { what: "steps", .. })));
    assert!(budget.steps() <= 251, "{}", budget.steps());

    let t = Template::parse(&format!("{{{{reverse:{}}}}}", "ab".repeat(500)));
    let mut budget = Budget::new(BudgetLimits {
        max_work: 5000,
        ..BudgetLimits::default()
    });
    let outs: Vec<_> = (0..4).map(|_| run(&t, &mut budget, &mut vars)).collect();
    assert_eq!(outs[0].text.len(), 1000);
    assert!(outs[3].text.is_empty());
    assert!(outs[3].warnings.iter().any(|w| matches!(
        w,
        Warning::PromptBudget {
            what: "work bytes",
            ..
        }
    )));
}

/// Issue 12: the variables (both scopes, names and values) never grow past
/// `max_variable_bytes`, however many expansions write them; overwriting with less is allowed.
#[test]
fn issue12_variable_bytes_are_bounded_across_expansions() {
    let mut budget = Budget::new(BudgetLimits {
        max_variable_bytes: 1000,
        ..BudgetLimits::default()
    });
    let mut vars = Variables::new();
    for i in 0..20 {
        let t = Template::parse(&format!(
            "{{{{setvar::l{i}::{}}}}}{{{{setglobalvar::g{i}::{}}}}}",
            "x".repeat(60),
            "y".repeat(60)
        ));
        let out = run(&t, &mut budget, &mut vars);
        if i > 10 {
            assert!(out
                .warnings
                .iter()
                .any(|w| matches!(w, Warning::Variable { .. })));
        }
    }
    let bytes = |v: &Variables| -> usize {
        v.local
            .iter()
            .chain(&v.global)
            .map(|(k, v)| k.len() + v.len())
            .sum()
    };
    assert!(bytes(&vars) <= 1000, "{}", bytes(&vars));
    assert!(bytes(&vars) > 900, "{}", bytes(&vars));
    // Shrinking a variable is always allowed.
    let out = run(
        &Template::parse("{{setvar::l0::1}}"),
        &mut budget,
        &mut vars,
    );
    assert!(out.warnings.is_empty());
    assert_eq!(vars.local["l0"], "1");
}
