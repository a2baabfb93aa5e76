//! `ccv3 portability FILE [--app A]...` (issue 27): what SillyTavern, RisuAI, Agnai and any V2
//! reader do with a card. The findings are [`ccv3_analyze::portability`]'s, from the rules
//! `docs/portability.md` lists with their sources; this command prints them.

use crate::args::PortabilityArgs;
use crate::error::CmdResult;
use crate::load::load;
use crate::output::emit;
use ccv3_analyze::App;

/// Prints what each application does with the file.
pub fn run(args: &PortabilityArgs) -> CmdResult {
    let doc = load(&args.file, "FILE")?;
    let findings = ccv3_analyze::portability(&doc, &args.apps);
    let text = if args.json {
        let mut s = serde_json::to_string(&findings).map_err(std::io::Error::from)?;
        s.push('\n');
        s
    } else {
        let apps: &[App] = if args.apps.is_empty() {
            &App::PORTABILITY
        } else {
            &args.apps
        };
        let mut s = String::new();
        for &app in apps {
            let mine: Vec<_> = findings.iter().filter(|f| f.app == app).collect();
            s.push_str(&format!(
                "{} ({}): {}\n",
                app.label(),
                app,
                super::validate::plural(mine.len(), "finding", "findings")
            ));
            for f in mine {
                s.push_str(&super::lint::finding_line(
                    &f.severity.to_string(),
                    &f.code,
                    f.entry,
                    &f.path,
                    &f.message,
                ));
            }
        }
        s
    };
    emit(args.output.as_deref(), &text)?;
    Ok(0)
}
