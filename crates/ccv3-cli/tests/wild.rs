//! Issue 13 "Reading", what the command shows: `inspect` lists a lorebook's entries and a card's
//! files (marking those no asset points at), `extract` writes them, and `convert` says on stderr
//! what the output cannot carry (a portrait, files no asset points at).

mod common;
use common::{ccv3, example, root, stderr, stdout};
use std::path::PathBuf;

fn wild(name: &str) -> PathBuf {
    root().join("crates/ccv3/tests/fixtures/wild").join(name)
}

#[test]
fn issue13_inspect_says_a_named_world_info_file_is_a_lorebook_and_lists_its_entries() {
    let o = ccv3(&[&"inspect", &wild("st_world_info_named.json")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("lorebook:    Harbor Town"), "{out}");
    assert!(out.contains("format:      WorldInfo"), "{out}");
    assert!(out.contains("entries:     2 (1 enabled)"), "{out}");
    assert!(
        out.contains("  - 0 \"The lighthouse\" keys: lighthouse, lamp\n"),
        "{out}"
    );
    assert!(
        out.contains("  - 1 \"Sighs\" keys: *sigh* (disabled)\n"),
        "{out}"
    );
}

#[test]
fn issue13_charx_files_no_asset_points_at_are_listed_extracted_and_carried() {
    let charx = wild("charx_unreferenced_files.charx");
    let o = ccv3(&[&"inspect", &charx]);
    let out = stdout(&o);
    assert!(
        out.contains("files:       4 embedded (3 referenced by no asset)"),
        "{out}"
    );
    assert!(out.contains("  - readme.md 31 bytes (no asset)"), "{out}");
    assert!(
        out.contains("  - assets/icon/images/main.png 67 bytes\n"),
        "{out}"
    );

    let dir = tempfile::tempdir().unwrap();
    let ex = dir.path().join("ex");
    let o = ccv3(&[&"extract", &charx, &ex]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "readme.md",
        "x_meta/1.json",
        "assets/other/notes.txt",
        "card.json",
    ] {
        assert!(ex.join(f).is_file(), "{f} not extracted");
    }

    // To CHARX: carried, nothing said.
    let out_charx = dir.path().join("o.charx");
    let o = ccv3(&[&"convert", &charx, &out_charx]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let again = stdout(&ccv3(&[&"inspect", &out_charx]));
    assert!(again.contains("(3 referenced by no asset)"), "{again}");

    // To PNG or JSON: not carried, and said.
    for out in ["o.png", "o.json"] {
        let o = ccv3(&[&"convert", &charx, &dir.path().join(out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("files-not-carried") && err.contains("readme.md"),
            "{out}: {err}"
        );
    }
}

#[test]
fn issue13_convert_says_when_a_portrait_cannot_be_carried() {
    let dir = tempfile::tempdir().unwrap();
    // JSON to PNG without --image: a plain picture, said.
    let o = ccv3(&[
        &"convert",
        &example("ember.json"),
        &dir.path().join("a.png"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("portrait-plain"), "{}", stderr(&o));
    // With --image: nothing to say.
    let o = ccv3(&[
        &"convert",
        &example("ember.json"),
        &dir.path().join("b.png"),
        &"--image",
        &example("ember.png"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    // A PNG into PNG or CHARX: carried, nothing said; into JSON (which holds no picture by
    // design): nothing said either, as before.
    for out in ["c.json", "d.png", "d.charx"] {
        let o = ccv3(&[&"convert", &example("ember.png"), &dir.path().join(out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stderr(&o), "", "{out}");
    }
}

/// Issue 13 "a PNG's portrait is never silently replaced", the other way round: a CHARX whose
/// main icon is a PNG (Card Architect's export, `charx-builder.ts`) converted to PNG gets that
/// icon as its picture, and nothing is said (the files `convert` leaves in the CHARX until they
/// are written are read to know the icon is a PNG).
#[test]
fn issue13_charx_with_a_png_main_icon_converts_to_png_without_a_portrait_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.png");
    let o = ccv3(&[&"convert", &wild("card_architect_export.charx"), &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let png = std::fs::read(&out).unwrap();
    let archive = ccv3::charx::read_charx_from_slice(
        &std::fs::read(wild("card_architect_export.charx")).unwrap(),
        &ccv3::charx::Limits::default(),
    )
    .unwrap();
    let icon = &archive.file("assets/icon/png/main.png").unwrap().data;
    // The icon's image data is the PNG's.
    let idat = |b: &[u8]| {
        ccv3::png::list_chunks(b)
            .unwrap()
            .into_iter()
            .find(|c| c.kind == "IDAT")
            .map(|c| b[c.offset as usize + 8..][..c.length as usize].to_vec())
    };
    assert_eq!(idat(&png), idat(icon));
}

/// Issue 13 "Done when" (shapes real tools write): a Voxta package (character-foundry's and Card
/// Architect's `.voxpkg` export) is inspected as a card, and converts to CHARX with its files
/// and to PNG with its thumbnail as the picture, nothing said.
#[test]
fn issue13_voxta_package_inspects_and_converts() {
    let pkg = wild("voxta_package.voxpkg");
    let o = ccv3(&[&"inspect", &pkg]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("container:   Voxta") && out.contains("Nell Harrow"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    for name in ["n.charx", "n.png"] {
        let o = ccv3(&[&"convert", &pkg, &dir.path().join(name)]);
        assert!(o.status.success(), "{}", stderr(&o));
        if name.ends_with(".charx") {
            assert_eq!(stderr(&o), "", "{name}");
        }
        let o = ccv3(&[&"inspect", &dir.path().join(name)]);
        assert!(stdout(&o).contains("Nell Harrow"), "{}", stdout(&o));
    }
}

#[test]
fn issue13_a_webp_portrait_is_said_into_png_and_carried_into_charx() {
    let webp = common::corpus("webp/tavernai_Aqua.webp");
    if !webp.is_file() {
        eprintln!("skipped: no WebP card in the corpus in use");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = ccv3(&[&"convert", &webp, &dir.path().join("a.png")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("portrait-not-carried") && err.contains("WebP"),
        "{err}"
    );
    let charx = dir.path().join("a.charx");
    let o = ccv3(&[&"convert", &webp, &charx]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let out = stdout(&ccv3(&[&"inspect", &charx]));
    assert!(
        out.contains("icon \"main\" .webp embeded://assets/icon/images/main.webp"),
        "{out}"
    );
}

#[test]
fn issue13_other_applications_lorebooks_are_listed_and_converted() {
    // KoboldAI world info and a RisuAI JSON module: `inspect` lists the entries, `convert`
    // writes lorebook_v3 and World Info.
    for (name, format, entry) in [
        (
            "kobold_story.json",
            "format:      Kobold",
            "  - \"Mara\" keys: Mara, caravan master",
        ),
        (
            "risu_module.json",
            "format:      RisuModule",
            "\"Harbor\" keys: harbor, docks",
        ),
    ] {
        let o = ccv3(&[&"inspect", &wild(name)]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(format), "{name}: {out}");
        assert!(out.contains(entry), "{name}: {out}");
        let dir = tempfile::tempdir().unwrap();
        for to in ["lorebook_v3", "worldinfo"] {
            let path = dir.path().join(format!("{to}.json"));
            let o = ccv3(&[&"convert", &wild(name), &path, &"--to", &to]);
            assert!(o.status.success(), "{name} to {to}: {}", stderr(&o));
            assert!(path.is_file());
        }
    }
}

#[test]
fn issue13_textgen_yaml_and_faraday_png_read_as_cards() {
    for (name, card) in [
        ("textgen_character.yaml", "Chiharu"),
        ("backyard_faraday_legacy.png", "Wren"),
    ] {
        let o = ccv3(&[&"inspect", &wild(name)]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stdout(&o).contains(card), "{name}: {}", stdout(&o));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("card.json");
        let o = ccv3(&[&"convert", &wild(name), &out]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(v["data"]["name"], card, "{name}");
    }
}

/// Issue 13 "Done when" (Risu `.risum` modules) through the CLI: the fixture, written by RisuAI's
/// own encoder (scripts/risum-table/observe.mjs), reads with the built-in table; `--rpack-map
/// FILE` (a 512-byte `rpack_map.bin` layout) replaces the table, and a table that does not
/// decode the file gives an error naming the option.
#[test]
fn issue13_risum_module_reads_with_rpack_map() {
    let risum = wild("risu_module.risum");
    let o = ccv3(&[&"inspect", &risum]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("lorebook:"), "{}", stdout(&o));

    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("rpack_map.bin");
    let mut bytes = vec![0u8; 512];
    for i in 0..256 {
        bytes[256 + i] = ((i * 167 + 13) % 256) as u8;
    }
    std::fs::write(&map, &bytes).unwrap();
    let o = ccv3(&[&"inspect", &risum, &"--rpack-map", &map]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--rpack-map FILE gives another table"),
        "{}",
        stderr(&o)
    );

    // A bare 256-byte decoding table, here RisuAI's own: the file reads as without the option.
    std::fs::write(&map, ccv3::lorebook::risum::RpackTable::RISUAI.0).unwrap();
    let o = ccv3(&[&"inspect", &risum, &"--rpack-map", &map]);
    assert!(o.status.success(), "{}", stderr(&o));

    std::fs::write(&map, [0u8; 100]).unwrap();
    let o = ccv3(&[&"inspect", &risum, &"--rpack-map", &map]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--rpack-map"), "{}", stderr(&o));
}
