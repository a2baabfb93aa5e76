//! Real files (issue 27, "Done when"): every card and lorebook of `../shared/corpus`, the
//! repository's fixtures and examples lint, graph and port without a panic, and lint finds no
//! `error` on a card both SillyTavern and RisuAI load and use as written (the corpus's readable
//! cards: `MANIFEST.tsv` records where each comes from).

use ccv3_analyze::{lint_document, lore_graph, portability, App, LintOptions};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else if p.file_name().is_some_and(|n| n != "MANIFEST.tsv") {
            out.push(p);
        }
    }
}

#[test]
fn real_files_lint_without_panic_or_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "../../../shared/corpus",
        "../ccv3/tests/fixtures",
        "../../examples",
    ] {
        files_under(&root.join(dir), &mut files);
    }
    assert!(!files.is_empty());
    let tok = ccv3_tokens::load(&ccv3_tokens::TokenizerKind::O200k).unwrap();
    let mut linted = 0;
    for f in &files {
        let Ok(doc) = ccv3::read_file(f) else {
            continue;
        };
        linted += 1;
        for app in [
            None,
            Some(App::SillyTavern),
            Some(App::Risu),
            Some(App::Agnai),
            Some(App::Spec),
        ] {
            let opts = LintOptions {
                app,
                ..Default::default()
            };
            let findings = lint_document(&doc, &opts, &*tok);
            if app.is_none() && matches!(doc, ccv3::Document::Card(_)) {
                let errors: Vec<_> = findings
                    .iter()
                    .filter(|x| x.severity == ccv3::Severity::Error)
                    .collect();
                assert!(errors.is_empty(), "{}: {errors:?}", f.display());
            }
        }
        let _ = portability(&doc, &[]);
        let book = match &doc {
            ccv3::Document::Card(c) => c.card.data.character_book.clone(),
            ccv3::Document::Lorebook(b) => Some(b.book.clone()),
        };
        if let Some(b) = book {
            let g = lore_graph(&b);
            assert_eq!(g.nodes.len(), b.entries.len());
            let _ = (g.cycles(), g.to_dot(), g.to_mermaid());
        }
    }
    assert!(linted > 0);
}

#[test]
fn docs_portability_lists_every_rule() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/portability.md"),
    )
    .unwrap();
    for r in ccv3_analyze::portability::RULES {
        assert!(doc.contains(&format!("| `{}` |", r.id)), "{} missing", r.id);
        assert!(
            doc.contains(&r.source.replace('|', "\\|")),
            "{}'s source missing",
            r.id
        );
    }
}
