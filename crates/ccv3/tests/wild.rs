//! Issue 13 "Reading": shapes real applications write, one fixture each in `tests/fixtures/wild/`
//! (made for these tests; `README.md` there says what each file is and which application writes
//! the shape).

use ccv3::{Container, Diagnostic, Document, Severity};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/wild")
        .join(name)
}

fn read(name: &str) -> Document {
    ccv3::read_file(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn card(name: &str) -> ccv3::CardFile {
    match read(name) {
        Document::Card(cf) => cf,
        Document::Lorebook(_) => panic!("{name}: read as a lorebook"),
    }
}

fn diag<'a>(diags: &'a [Diagnostic], code: &str) -> &'a Diagnostic {
    diags
        .iter()
        .find(|d| d.code == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
}

fn no_errors(name: &str, diags: &[Diagnostic]) {
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{name}: {diags:#?}"
    );
}

// --- PNG: a card chunk that reads, beside damage elsewhere (issue 13) ---------------------------

#[test]
fn wild_png_bad_crc_after_the_card_is_a_warning_naming_chunk_and_offset() {
    for (name, kind, at) in [
        ("png_bad_crc_after_card.png", "tIME", "9878"),
        ("png_bad_iend_crc.png", "IEND", "9878"),
    ] {
        let cf = card(name);
        assert_eq!(cf.card.data.name, "Ember Vale");
        let d = diag(&cf.diagnostics, "png-bad-crc");
        assert_eq!(d.severity, Severity::Warning);
        assert!(d.message.contains(kind) && d.message.contains(at), "{d}");
        no_errors(name, &cf.diagnostics);
    }
}

#[test]
fn wild_png_truncated_after_the_card_reads_with_a_warning() {
    let cf = card("png_truncated_after_card.png");
    assert_eq!(cf.card.data.name, "Ember Vale");
    let d = diag(&cf.diagnostics, "png-truncated");
    assert_eq!(d.severity, Severity::Warning);
    assert!(d.message.contains("IDAT at byte 9579"), "{d}");
}

#[test]
fn wild_png_junk_after_iend_is_a_warning_naming_where() {
    let cf = card("png_junk_after_iend.png");
    assert_eq!(cf.card.data.name, "Ember Vale");
    let d = diag(&cf.diagnostics, "png-data-after-iend");
    assert_eq!(d.severity, Severity::Warning);
    assert!(
        d.message.contains("IEND chunk at byte 9878") && d.message.contains("70 bytes"),
        "{d}"
    );
}

#[test]
fn wild_png_broken_ccv3_beside_a_good_chara_reads_chara_with_a_warning() {
    for (name, code) in [
        ("png_ccv3_bad_base64.png", "png-card-chunk-undecodable"),
        ("png_ccv3_bad_json.png", "png-ccv3-chunk-broken"),
    ] {
        let cf = card(name);
        assert_eq!(cf.card.data.name, "Ember Vale", "{name}");
        let d = diag(&cf.diagnostics, code);
        assert_eq!(d.severity, Severity::Warning, "{name}");
        assert!(
            d.message.contains("tEXt") && d.message.contains("5229"),
            "{d}"
        );
        no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
        // The same from bytes and from a random-access source.
        let bytes = std::fs::read(fixture(name)).unwrap();
        for doc in [
            ccv3::read_bytes(&bytes),
            ccv3::read_seekable(std::io::Cursor::new(&bytes)),
        ] {
            let Ok(Document::Card(cf)) = doc else {
                panic!("{name}: {doc:?}")
            };
            assert_eq!(cf.container, Container::Png);
            assert_eq!(cf.card.data.name, "Ember Vale");
        }
    }
}

// --- JSON shapes (issue 13) ----------------------------------------------------------------------

fn book(name: &str) -> ccv3::BookFile {
    match read(name) {
        Document::Lorebook(bf) => bf,
        Document::Card(cf) => panic!("{name}: read as the card {:?}", cf.card.data.name),
    }
}

#[test]
fn wild_world_info_with_a_name_and_description_is_a_lorebook() {
    let bf = book("st_world_info_named.json");
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::WorldInfo);
    assert_eq!(bf.book.name.as_deref(), Some("Harbor Town"));
    assert!(bf
        .book
        .description
        .as_deref()
        .unwrap()
        .starts_with("Places"));
    assert_eq!(bf.book.entries.len(), 2);
    assert_eq!(bf.book.entries[0].keys, ["lighthouse", "lamp"]);
    assert!(!bf.book.entries[1].enabled);
    // Lossless back to World Info.
    let text = std::fs::read_to_string(fixture("st_world_info_named.json")).unwrap();
    let original: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(ccv3::lorebook::to_worldinfo(&bf.book), original);
}

#[test]
fn wild_entries_array_beside_card_like_fields_is_a_lorebook_that_keeps_them() {
    let bf = book("chub_lorebook_array_named.json");
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::CharacterBook);
    assert_eq!(bf.book.name.as_deref(), Some("Old Roads"));
    assert_eq!(bf.book.entries.len(), 2);
    assert!(bf.book.extra.contains_key("first_mes"));
}

#[test]
fn wild_hybrid_v2_card_takes_the_top_level_fields_data_lacks() {
    let cf = card("st_hybrid_v2_extensions_only.json");
    let d = &cf.card.data;
    assert_eq!(cf.card.origin, Some(ccv3::SpecVersion::V2));
    assert_eq!(d.name, "Mira");
    assert_eq!(d.first_mes, "Hold the chart steady, please.");
    assert_eq!(d.personality, "curious, patient");
    assert_eq!(d.creator_notes, "Made with care.");
    assert_eq!(d.tags, ["maps", "sea"]);
    assert!(d.extensions.contains_key("depth_prompt"));
    let hybrid: Vec<&str> = cf
        .diagnostics
        .iter()
        .filter(|d| d.code == "hybrid-card-field")
        .map(|d| d.path.as_str())
        .collect();
    assert!(hybrid.contains(&"data.name") && hybrid.contains(&"data.creator_notes"));
    assert!(cf
        .diagnostics
        .iter()
        .all(|d| d.path != "data.name" || d.code == "hybrid-card-field"));
    // The top-level fields are kept where they were (SillyTavern writes both).
    assert_eq!(
        cf.card.extra.get("avatar"),
        Some(&serde_json::json!("none"))
    );
    let v3 = cf.card.to_v3_json();
    assert_eq!(v3["name"], "Mira");
    assert_eq!(v3["data"]["name"], "Mira");
}

#[test]
fn wild_hybrid_v3_card_prefers_data_and_fills_the_rest() {
    let cf = card("hybrid_v3_few_fields.json");
    let d = &cf.card.data;
    assert_eq!(d.name, "Data Name", "data wins where it has the field");
    assert_eq!(d.first_mes, "Hello from the top.");
    assert_eq!(d.description, "The description stands at the top level.");
    assert_eq!(d.tags, ["hybrid"]);
    let codes: Vec<(&str, &str)> = cf
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.path.as_str()))
        .collect();
    assert!(codes.contains(&("hybrid-card-field", "data.first_mes")));
    assert!(!codes.contains(&("hybrid-card-field", "data.name")));
}

#[test]
fn wild_bare_v2_data_is_read_as_v2_data_not_v1() {
    let cf = card("bare_v2_data.json");
    let d = &cf.card.data;
    assert_eq!(cf.card.origin, Some(ccv3::SpecVersion::V2));
    assert_eq!(d.name, "Bram");
    assert_eq!(d.creator_notes, "Written without the V2 wrapper.");
    assert_eq!(d.system_prompt, "You are Bram.");
    assert_eq!(d.post_history_instructions, "Stay terse.");
    assert_eq!(d.alternate_greetings, ["Another traveller?"]);
    assert_eq!(d.character_version, "1.2");
    assert_eq!(d.character_book.as_ref().map(|b| b.entries.len()), Some(1));
    assert!(cf.card.extra.is_empty(), "{:?}", cf.card.extra);
    assert_eq!(
        diag(&cf.diagnostics, "bare-card-data").severity,
        Severity::Warning
    );
}

#[test]
fn wild_tavernai_v1_metadata_is_kept_as_unknown_fields() {
    let cf = card("tavernai_v1_metadata.json");
    assert_eq!(cf.card.origin, Some(ccv3::SpecVersion::V1));
    assert_eq!(cf.card.data.first_mes, "Get off my lawn.");
    for key in [
        "avatar",
        "chat",
        "create_date",
        "edit_date",
        "add_date",
        "metadata",
    ] {
        assert!(cf.card.extra.contains_key(key), "{key} lost");
    }
    // ... and written back beside `data` in every container.
    let json = ccv3::write_json(&cf, ccv3::CardVersion::V3);
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["metadata"]["tool"]["name"], "TavernAI");
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    let Document::Card(back) = ccv3::read_bytes(&png).unwrap() else {
        panic!()
    };
    assert_eq!(
        back.card.extra.get("metadata"),
        cf.card.extra.get("metadata")
    );
}

// --- CHARX files no asset references (issue 13) --------------------------------------------------

#[test]
fn wild_charx_files_no_asset_references_are_kept_and_carried() {
    let cf = card("charx_unreferenced_files.charx");
    let mut paths: Vec<&str> = cf.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "assets/icon/images/main.png",
            "assets/other/notes.txt",
            "readme.md",
            "x_meta/1.json"
        ]
    );
    let out = ccv3::write_charx(&cf).unwrap();
    let Document::Card(back) = ccv3::read_bytes(&out).unwrap() else {
        panic!()
    };
    let mut again: Vec<(&str, &[u8])> = back
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.data.as_slice()))
        .collect();
    again.sort_unstable();
    let mut before: Vec<(&str, &[u8])> = cf
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.data.as_slice()))
        .collect();
    before.sort_unstable();
    assert_eq!(again, before);
}

// --- Backyard AI archives (issue 13 "Done when": BYAF) --------------------------------------------

#[test]
fn wild_backyard_archive_reads_as_sillytavern_imports_it() {
    let cf = card("backyard_archive.byaf");
    assert_eq!(cf.container, Container::Byaf);
    let d = &cf.card.data;
    assert_eq!(d.name, "Wren");
    assert_eq!(
        d.description,
        "{{char}} keeps the lighthouse and distrusts {{user}}."
    );
    assert_eq!(d.scenario, "A stormy night at the lighthouse.");
    assert_eq!(
        d.first_mes,
        "The door creaks. {{char}} looks up at {{user}}."
    );
    assert_eq!(
        d.mes_example,
        "<START>\n{{user}}: Is the lamp lit?\n{{char}}: Always."
    );
    assert_eq!(
        d.system_prompt,
        "Write {{char}}'s replies in the third person."
    );
    assert_eq!(d.alternate_greetings, ["Morning light fills the room."]);
    assert_eq!(d.creator, "Quill");
    assert_eq!(d.creator_notes, "https://example.com/u/quill");
    let book = d.character_book.as_ref().expect("lore items");
    assert_eq!(book.entries[0].keys, ["lamp", "light"]);
    assert_eq!(
        book.entries[0].content,
        "The lamp of {{char}}'s lighthouse never goes out."
    );
    let byaf = d.extensions.get("byaf").expect("kept");
    assert_eq!(byaf["scenarios"][0]["temperature"], 0.8);
    assert!(byaf["scenarios"][0].get("messages").is_none());
    // The portrait is the main icon, and goes with the card into CHARX and PNG.
    let icon = &d.assets.as_ref().unwrap()[0];
    assert_eq!(icon.uri, "embeded://characters/c1/images/portrait.png");
    no_errors(
        "backyard_archive.byaf",
        &ccv3::check_document(&Document::Card(cf.clone())),
    );
    let charx = ccv3::write_charx(&cf).unwrap();
    let Document::Card(back) = ccv3::read_bytes(&charx).unwrap() else {
        panic!()
    };
    assert_eq!(back.card.data.first_mes, d.first_mes);
    assert_eq!(back.files.len(), 1);
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    let Document::Card(back) = ccv3::read_bytes(&png).unwrap() else {
        panic!()
    };
    // The portrait is the PNG's picture: its chunks up to IEND come first.
    let portrait = &cf.files[2].data;
    let image = back.image.expect("picture");
    assert!(image.starts_with(&portrait[..portrait.len() - 12]));
    assert!(ccv3::conversion_notes(&cf, Container::Charx, None).is_empty());
}

#[test]
fn wild_a_zip_that_is_neither_charx_nor_byaf_names_card_json() {
    let zip = ccv3::charx::write_charx_to_vec(b"{}", &[]).unwrap();
    // Rename card.json: a zip without it and without manifest.json.
    let bytes: Vec<u8> = String::from_utf8_lossy(&zip)
        .replace("card.json", "cord.json")
        .into_bytes();
    if bytes.len() != zip.len() {
        return; // not plain ASCII around the names; nothing to check
    }
    let err = ccv3::read_bytes(&bytes).unwrap_err().to_string();
    assert!(err.contains("card.json"), "{err}");
}

// --- Files that are not cards or lorebooks: the error says what they are (issue 13) ------------

fn unrecognized(name: &str, bytes: Option<&[u8]>) -> String {
    let res = match bytes {
        Some(b) => ccv3::read_bytes(b),
        None => ccv3::read_file(&fixture(name)),
    };
    match res {
        Err(ccv3::Error::Unrecognized(msg)) => {
            assert!(msg.contains("expected a character card"), "{name}: {msg}");
            msg
        }
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn wild_other_applications_files_get_an_error_naming_what_they_are() {
    assert!(unrecognized("st_chat.jsonl", None).contains("SillyTavern chat"));
    let cases: [(&str, &str); 6] = [
        (
            r#"{"scenarioVersion":3,"lorebook":{"entries":[]}}"#,
            "NovelAI scenario",
        ),
        (
            r#"[{"keys":["a"],"content":"b"}]"#,
            "lorebook entries without a book",
        ),
        (r#"[{"name":"A","is_user":true,"mes":"hi"}]"#, "a chat"),
        (r#"{"temperature":1,"prompts":[]}"#, "preset"),
        (r#"{"gamestarted":true,"actions":[]}"#, "KoboldAI story"),
        (r#"{"hello":1,"world":2}"#, r#"the keys "hello", "world""#),
    ];
    for (text, what) in cases {
        let msg = unrecognized(text, Some(text.as_bytes()));
        assert!(msg.contains(what), "{text}: {msg}");
    }
}

#[test]
fn wild_agnai_character_export_reads_as_agnai_exports_it_to_v2() {
    let cf = card("agnai_character.json");
    let d = &cf.card.data;
    assert_eq!(d.name, "Tamsin");
    assert_eq!(d.description, "species: fox, spirit\nmind: sly, kind");
    assert_eq!(d.first_mes, "Oh, a visitor!");
    assert_eq!(d.alternate_greetings, ["Back again?"]);
    assert_eq!(d.scenario, "A shrine in the woods.");
    assert_eq!(d.creator_notes, "Exported from Agnai.");
    assert_eq!(d.tags, ["fox"]);
    let book = d.character_book.as_ref().expect("memory book");
    assert_eq!(book.entries[0].content, "The shrine is old.");
    let agnai = d.extensions.get("agnai").expect("kept");
    assert_eq!(agnai["persona"]["kind"], "wpp");
    assert_eq!(agnai["avatar"], "/assets/4f9c2a.png");
    assert!(cf.diagnostics.iter().any(|d| d.code == "agnai-character"));
}

// --- APNG and JPEG-fronted cards (issue 13 "Done when") -----------------------------------------

#[test]
fn wild_apng_card_reads_and_keeps_its_frames_through_png() {
    let cf = ccv3::read_file_with(
        &fixture("apng_card.png"),
        &ccv3::ReadOptions::default().keep_image(true),
    )
    .unwrap();
    let Document::Card(cf) = cf else { panic!() };
    assert_eq!(cf.card.data.name, "Ember Vale");
    no_errors("apng_card.png", &cf.diagnostics);
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    let kinds: Vec<String> = ccv3::png::list_chunks(&png)
        .unwrap()
        .into_iter()
        .map(|c| c.kind)
        .collect();
    for k in ["acTL", "fcTL", "fdAT"] {
        assert!(kinds.iter().any(|x| x == k), "{k} lost: {kinds:?}");
    }
    let Document::Card(back) = ccv3::read_bytes(&png).unwrap() else {
        panic!()
    };
    assert_eq!(back.card.to_v3_json(), cf.card.to_v3_json());
}

#[test]
fn wild_charx_behind_a_jpeg_reads_from_a_file_and_from_bytes() {
    let cf = card("charx_behind_jpeg.jpg");
    assert_eq!(cf.container, Container::Charx);
    assert_eq!(cf.card.data.name, "Behind A Jpeg");
    assert!(cf.diagnostics.iter().any(|d| d.code == "charx-prefix"));
    let bytes = std::fs::read(fixture("charx_behind_jpeg.jpg")).unwrap();
    let Document::Card(again) = ccv3::read_bytes(&bytes).unwrap() else {
        panic!()
    };
    assert_eq!(again.card.data.name, "Behind A Jpeg");
}

#[test]
fn wild_pygmalion_character_reads_its_old_field_names() {
    let cf = card("pygmalion_character.json");
    let d = &cf.card.data;
    assert_eq!(cf.card.origin, Some(ccv3::SpecVersion::V1));
    assert_eq!(d.name, "Ren");
    assert_eq!(d.personality, "A tired night-shift librarian.");
    assert_eq!(d.scenario, "The library after closing.");
    assert_eq!(d.first_mes, "We're closed. ...Fine, come in.");
    assert!(d.mes_example.starts_with("You: Any good books?"));
    // The original names stay, so nothing is lost on the way back.
    assert!(cf.card.extra.contains_key("char_greeting"));
}

// --- text-generation-webui characters (issue 13 "Done when": TextGen YAML) ----------------------

#[test]
fn wild_textgen_yaml_character_reads_as_text_generation_webui_loads_it() {
    // text-generation-webui modules/chat.py (load_character, generate_character_yaml) and
    // docs/Custom-chat-characters.md: `name`, `greeting`, `context`; `<BOT>`/`<USER>` stand for
    // the names as `{{char}}`/`{{user}}` do. SillyTavern's YAML import maps `context` to the
    // description.
    let cf = card("textgen_character.yaml");
    let d = &cf.card.data;
    assert_eq!(d.name, "Chiharu");
    assert!(
        d.first_mes.starts_with("*Chiharu looks up"),
        "{}",
        d.first_mes
    );
    assert!(d.first_mes.ends_with("{{user}}.\nMind the wires."));
    assert!(d.description.contains(
        "{{char}} is cheerful, precise and a little forgetful, and calls {{user}} \"customer\""
    ));
    // The text as written is kept.
    assert!(d.extensions["textgen"]["context"]
        .as_str()
        .unwrap()
        .contains("<BOT> is cheerful"));
    assert!(cf.diagnostics.iter().any(|d| d.code == "textgen-character"));
    no_errors(
        "textgen_character.yaml",
        &ccv3::check_document(&Document::Card(cf.clone())),
    );
}

#[test]
fn wild_textgen_json_character_keeps_what_a_card_has_no_field_for() {
    let cf = card("textgen_character.json");
    let d = &cf.card.data;
    assert_eq!(d.name, "Ossian");
    assert_eq!(
        d.mes_example,
        "<START>\n{{user}}: How deep is the river?\n{{char}}: Deeper than it looks."
    );
    let kept = &d.extensions["textgen"];
    assert_eq!(kept["your_name"], "Wanderer");
    assert_eq!(kept["name_key"], "bot");
    assert!(kept["turn_template"].as_str().unwrap().contains("<|bot|>"));
}

#[test]
fn wild_pygmalion_character_in_yaml_reads_as_the_same_json() {
    let yaml = card("textgen_pygmalion.yaml");
    let json = card("pygmalion_character.json");
    assert_eq!(yaml.card.origin, Some(ccv3::SpecVersion::V1));
    assert_eq!(yaml.card.data.name, "Ren");
    assert_eq!(yaml.card.data.personality, json.card.data.personality);
    assert_eq!(yaml.card.data.scenario, json.card.data.scenario);
    assert!(yaml.card.data.mes_example.contains("Ren: All of them."));
    assert!(yaml.diagnostics.iter().any(|d| d.code == "yaml-document"));
}

#[test]
fn wild_hostile_yaml_is_bounded() {
    // Nine aliases of nine aliases ("billion laughs"): stopped at the node budget.
    let mut text = String::from("name: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    text.push_str("context: x\n");
    match ccv3::read_bytes(text.as_bytes()) {
        Err(ccv3::Error::Limit(msg)) => assert!(msg.contains("aliases"), "{msg}"),
        other => panic!("{other:?}"),
    }
    let deep = format!("name: {}{}\n", "[".repeat(5000), "]".repeat(5000));
    assert!(matches!(
        ccv3::read_bytes(deep.as_bytes()),
        Err(ccv3::Error::Limit(_))
    ));
    let template = "user: \"### Instruction:\"\nbot: \"### Response:\"\nturn_template: \"<|user|>\\n<|user-message|>\\n\\n<|bot|>\\n<|bot-message|>\\n\\n\"\ncontext: \"Below is an instruction.\\n\\n\"\n";
    let msg = unrecognized("instruction template", Some(template.as_bytes()));
    assert!(msg.contains("instruction template"), "{msg}");
    let broken = "name: A\ncontext: [unclosed\n";
    assert!(ccv3::read_bytes(broken.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("YAML"));
}

// --- KoboldAI world info (issue 13 "Done when": Kobold) ----------------------------------------

#[test]
fn wild_kobold_story_save_reads_its_world_info_as_a_lorebook() {
    // KoboldAI-Client aiserver.py saveRequest: `worldinfo` entries with comma-separated `key`
    // and `keysecondary`, `folder` uids named in `wifolders_d`; inserted in list order.
    let bf = book("kobold_story.json");
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::Kobold);
    let e = &bf.book.entries;
    assert_eq!(e.len(), 3);
    assert_eq!(e[0].keys, ["Mara", "caravan master"]);
    assert_eq!(e[0].extensions["kobold"]["folder"], 1);
    assert_eq!(e[1].keys, ["well", "oasis"]);
    assert_eq!(
        e[1].secondary_keys.as_deref(),
        Some(&["night".to_string()][..])
    );
    assert_eq!(e[1].selective, Some(true));
    assert_eq!(e[2].constant, Some(true));
    assert!(e[2].keys.is_empty());
    let orders: Vec<String> = e.iter().map(|x| x.insertion_order.to_string()).collect();
    assert_eq!(orders, ["0", "1", "2"]);
    let kept = &bf.book.extensions["kobold"];
    assert_eq!(kept["wifolders_d"]["1"]["name"], "Caravan");
    assert_eq!(
        kept["memory"],
        "Mara leads the caravan. Tobin keeps the ledgers."
    );
    no_errors(
        "kobold_story.json",
        &ccv3::check_document(&Document::Lorebook(bf.clone())),
    );
}

#[test]
fn wild_kobold_lite_world_info_export_reads_as_a_lorebook() {
    let bf = book("koboldlite_worldinfo.json");
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::Kobold);
    let e = &bf.book.entries;
    assert_eq!(e[0].keys, ["lantern", "lamp"]);
    assert!(e[0].enabled);
    assert_eq!(e[0].extensions["kobold"]["keyanti"], "daylight");
    assert!(!e[1].enabled, "widisabled");
    assert_eq!(
        e[1].secondary_keys.as_deref(),
        Some(&["toll".to_string(), "coin".to_string()][..])
    );
    assert_eq!(e[1].extensions["kobold"]["probability"], 60);
    assert_eq!(e[1].extensions["kobold"]["keysecondary"], "toll, coin");
}

// --- RisuAI modules (issue 13 "Done when": Risu .risum modules) ---------------------------------

/// A made-up RPack-like table (not RisuAI's): byte b decodes to 167 * b + 13 mod 256.
fn test_rpack() -> ccv3::lorebook::risum::RpackTable {
    let mut t = [0u8; 256];
    for (i, slot) in t.iter_mut().enumerate() {
        *slot = ((i * 167 + 13) % 256) as u8;
    }
    ccv3::lorebook::risum::RpackTable(t)
}

/// `bytes` decoded with `from` and encoded again with the inverse of `to`.
fn reencode(
    bytes: &[u8],
    from: &ccv3::lorebook::risum::RpackTable,
    to: &ccv3::lorebook::risum::RpackTable,
) -> Vec<u8> {
    let mut inv = [0u8; 256];
    for (i, b) in to.0.iter().enumerate() {
        inv[usize::from(*b)] = i as u8;
    }
    from.decode(bytes)
        .iter()
        .map(|b| inv[usize::from(*b)])
        .collect()
}

/// `risu_module.risum` with every block encoded with `table` in place of RisuAI's.
fn risum_encoded_with(table: &ccv3::lorebook::risum::RpackTable) -> Vec<u8> {
    let risuai = ccv3::lorebook::risum::RpackTable::RISUAI;
    let bytes = std::fs::read(fixture("risu_module.risum")).unwrap();
    let mut out = bytes[..2].to_vec();
    let mut at = 2;
    loop {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        out.extend_from_slice(&bytes[at..at + 4]);
        out.extend(reencode(&bytes[at + 4..at + 4 + len], &risuai, table));
        at += 4 + len;
        out.push(bytes[at]);
        if bytes[at] == 0 {
            return out;
        }
        at += 1;
    }
}

#[test]
fn wild_risum_module_made_by_risuai_encoder_reads_as_its_lorebook() {
    // RisuAI src/ts/process/modules.ts (exportModule): 111, 0, u32 LE length, RPack main block
    // {module, type: 'risuModule'}, then asset blocks (1, length, bytes) and 0. The fixture was
    // written by scripts/risum-table/observe.mjs from scripts/risum-table/lighthouse/, every
    // block encoded by RisuAI's own encoder (its src/ts/rpack/rpack_bg.wasm); ccv3 reads it with
    // the table observed from that encoder, no option needed.
    let bf = book("risu_module.risum");
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::RisuModule);
    assert_eq!(bf.book.name.as_deref(), Some("Lighthouse Module"));
    assert_eq!(bf.book.entries.len(), 2);
    assert_eq!(bf.book.entries[0].keys, ["lamp", "lens"]);
    assert!(bf.book.entries[1].use_regex);
    assert!(
        bf.book.entries[1].content.contains("灯台守"),
        "UTF-8 decoded"
    );
    let kept = &bf.book.extensions["risuai"];
    assert_eq!(kept["type"], "risuModule");
    assert_eq!(kept["module"]["id"], "9d4e1f20-7b3a-4c8e-a1f5-0e2d6c3b8a71");
    assert_eq!(kept["module"]["regex"][0]["type"], "editdisplay");
    assert_eq!(kept["module"]["namespace"], "lighthouse");
    // exportModule blanks each asset's data in the JSON and writes its bytes as a block.
    assert_eq!(
        kept["module"]["assets"][0],
        serde_json::json!(["keeper", "", "png"])
    );
    let keeper = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../scripts/risum-table/lighthouse/keeper.png"),
    )
    .unwrap();
    assert_eq!(
        kept["risum_assets"],
        serde_json::json!([base64_simd::STANDARD.encode_to_string(&keeper)])
    );
    assert!(bf.diagnostics.iter().any(|d| d.code == "risum-read"));
    no_errors(
        "risu_module.risum",
        &ccv3::check_document(&Document::Lorebook(bf.clone())),
    );
    // The same from bytes and from a random-access source.
    let bytes = std::fs::read(fixture("risu_module.risum")).unwrap();
    for doc in [
        ccv3::read_bytes(&bytes),
        ccv3::read_seekable(std::io::Cursor::new(&bytes)),
    ] {
        let Ok(Document::Lorebook(b)) = doc else {
            panic!("{doc:?}")
        };
        assert_eq!(b.book.to_json(), bf.book.to_json());
    }
    // Written as lorebook_v3 and as World Info, the module's data goes along.
    for out in [
        serde_json::to_vec(&bf.book.to_lorebook_v3()).unwrap(),
        serde_json::to_vec(&ccv3::lorebook::to_worldinfo(&bf.book)).unwrap(),
    ] {
        let Document::Lorebook(back) = ccv3::read_bytes(&out).unwrap() else {
            panic!()
        };
        assert_eq!(back.book.extensions["risuai"], *kept);
        assert_eq!(back.book.entries.len(), 2);
    }
}

#[test]
fn wild_risum_reads_with_another_rpack_table_given_as_read_options_rpack() {
    // ReadOptions::rpack overrides the built-in table (should a RisuAI release change it).
    let table = test_rpack();
    let bytes = risum_encoded_with(&table);
    let mut opts = ccv3::ReadOptions::default();
    opts.rpack = Some(table);
    let Ok(Document::Lorebook(bf)) = ccv3::read_bytes_with(&bytes, &opts) else {
        panic!("not read with the given table")
    };
    assert_eq!(bf.book.name.as_deref(), Some("Lighthouse Module"));
    assert_eq!(bf.book.to_json(), book("risu_module.risum").book.to_json());
    // Read with RisuAI's table, the same file is an error naming the table and the option.
    let Err(e) = ccv3::read_bytes(&bytes) else {
        panic!("read with the wrong table")
    };
    let msg = e.to_string();
    assert!(
        msg.contains(".risum main block")
            && msg.contains("RisuAI's RPack table")
            && msg.contains("ReadOptions::rpack"),
        "{msg}"
    );
}

#[test]
fn wild_risum_inside_a_real_risuai_charx_reads_with_the_observed_table() {
    // An independent check of the observed table: the module.risum a RisuAI user's CHARX
    // carries (corpus charx/risutoki_night_veil_v2_ko.charx, MANIFEST: "REAL RisuAI CHARX")
    // reads as its module. Skipped when the full corpus is not beside the repository.
    let Some(path) = crate::util::corpus_file("charx/risutoki_night_veil_v2_ko.charx") else {
        return;
    };
    let bytes = std::fs::read(path).unwrap();
    let archive =
        ccv3::charx::read_charx_from_slice(&bytes, &ccv3::charx::Limits::default()).unwrap();
    let risum = archive.file("module.risum").expect("module.risum");
    let Ok(Document::Lorebook(bf)) = ccv3::read_bytes(&risum.data) else {
        panic!("the corpus module.risum does not read")
    };
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::RisuModule);
    assert_eq!(bf.book.name.as_deref(), Some("The Veil of Night Module"));
    assert_eq!(
        bf.book.extensions["risuai"]["module"]["id"],
        "7562f17e-daba-402e-9f95-94bac476c36d"
    );
}

#[test]
fn wild_risu_module_json_export_reads_as_its_lorebook() {
    let bf = book("risu_module.json");
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::RisuModule);
    assert_eq!(bf.book.name.as_deref(), Some("Harbor Rules"));
    assert_eq!(bf.book.entries[0].keys, ["harbor", "docks"]);
    assert_eq!(bf.book.entries[1].constant, Some(true));
    let kept = &bf.book.extensions["risuai"];
    assert_eq!(kept["trigger"][0]["comment"], "Count turns");
    assert_eq!(kept["id"], "5a0c1e8e-3c1b-4e52-9b61-2f7c0d1a9e44");
}

// --- Backyard AI's legacy (Faraday) PNG exports (issue 13 "Done when": Backyard) ---------------

#[test]
fn wild_backyard_faraday_png_reads_its_exif_character() {
    // Faraday's "Export to PNG": no chara chunk; the character is base64 JSON in the EXIF
    // UserComment of an eXIf chunk (the public Faraday/Backyard-to-Tavern converters read it
    // there: aiName, aiPersona, scenario, firstMessage, customDialogue, basePrompt, loreItems).
    let name = "backyard_faraday_legacy.png";
    let bytes = std::fs::read(fixture(name)).unwrap();
    let from_file = card(name);
    let Document::Card(from_bytes) = ccv3::read_bytes(&bytes).unwrap() else {
        panic!()
    };
    let Document::Card(from_seek) = ccv3::read_seekable(std::io::Cursor::new(&bytes)).unwrap()
    else {
        panic!()
    };
    for cf in [&from_file, &from_bytes, &from_seek] {
        assert_eq!(cf.container, Container::Png);
        let d = &cf.card.data;
        assert_eq!(d.name, "Wren");
        assert_eq!(
            d.description,
            "{{char}} keeps the lighthouse on Gull Rock and distrusts strangers like {{user}}."
        );
        assert_eq!(
            d.mes_example,
            "{{user}}: Is the lamp always lit?\n{{char}}: Every night for thirty years."
        );
        assert!(d.first_mes.starts_with("The door bangs open. {{char}}"));
        assert!(d.system_prompt.contains("{{user}} and {{char}}"));
        let book = d.character_book.as_ref().expect("lore items");
        assert_eq!(book.entries[0].keys, ["lamp", "lens"]);
        assert_eq!(book.entries[1].keys, ["Gull Rock"]);
        let kept = &d.extensions["faraday"];
        assert_eq!(
            kept["character"]["aiDisplayName"],
            "Wren, Lighthouse Keeper"
        );
        assert_eq!(kept["character"]["model"], "mistral-7b");
        assert_eq!(kept["version"], 1);
        assert!(cf.diagnostics.iter().any(|d| d.code == "faraday-png"));
    }
    no_errors(
        name,
        &ccv3::check_document(&Document::Card(from_bytes.clone())),
    );
    // Written back as a PNG, the card is in the card chunks, and the picture stays.
    let png = ccv3::write_png(&from_bytes, None, ccv3::CardVersion::V3).unwrap();
    let Document::Card(back) = ccv3::read_bytes(&png).unwrap() else {
        panic!()
    };
    assert_eq!(back.card.to_v3_json(), from_bytes.card.to_v3_json());
    // A PNG with neither card chunks nor EXIF still says what is missing.
    let plain = ccv3::png::plain_image();
    let err = ccv3::read_bytes(&plain).unwrap_err().to_string();
    assert!(
        err.contains("no ccv3 or chara text chunk") && err.contains("eXIf"),
        "{err}"
    );
}

#[test]
fn wild_kobold_united_world_info_export_reads_as_world_info() {
    // KoboldAI United's world info export has SillyTavern World Info's shape (an `entries`
    // object keyed by uid, `key`/`keysecondary` lists) plus its own fields (`title`, `folder`,
    // `wpp`, `manual_text`, ...) and top-level `folders`: read as World Info, nothing lost.
    let bf = book("kobold_united_worldinfo.json");
    assert_eq!(bf.format, ccv3::lorebook::BookFormat::WorldInfo);
    let e = &bf.book.entries;
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].keys, ["mill", "waterwheel"]);
    assert_eq!(e[1].content, "[Oswin: miller; gruff, honest]");
    assert_eq!(e[1].selective, Some(true));
    let text = std::fs::read_to_string(fixture("kobold_united_worldinfo.json")).unwrap();
    let original: serde_json::Value = serde_json::from_str(&text).unwrap();
    let back = ccv3::lorebook::to_worldinfo(&bf.book);
    assert_eq!(back["folders"], original["folders"]);
    for uid in ["0", "1"] {
        for k in [
            "title",
            "folder",
            "wpp",
            "manual_text",
            "token_length",
            "used_in_game",
        ] {
            assert_eq!(
                back["entries"][uid][k], original["entries"][uid][k],
                "{uid}.{k}"
            );
        }
    }
}

// --- Pygmalion.chat and Card Architect exports (issue 13 "Done when") ---------------------------

#[test]
fn wild_pygmalion_site_export_reads_the_card_inside_its_character_key() {
    // Pygmalion.chat's /api/export/character/{id}/v2 answers {"character": V2 card}; SillyTavern
    // (src/endpoints/content-manager.js, downloadPygmalionCharacter) takes the card from
    // `character`, and hands on the whole answer as a .json file when the avatar URL cannot be
    // fetched.
    let name = "pygmalion_site_export.json";
    let cf = card(name);
    assert_eq!(cf.container, Container::Json);
    assert_eq!(cf.card.origin, Some(ccv3::SpecVersion::V2));
    let d = &cf.card.data;
    assert_eq!(d.name, "Captain Iris Vey");
    assert_eq!(d.alternate_greetings.len(), 1);
    assert_eq!(d.creator_notes, "Made on Pygmalion.");
    assert_eq!(
        d.extra["avatar"],
        "https://assets.pygmalion.chat/avatars/0f9e6c1a-2b7d-4e33-9a51-6c0d2e8f4b17.png"
    );
    assert_eq!(d.character_book.as_ref().map(|b| b.entries.len()), Some(1));
    let info = diag(&cf.diagnostics, "wrapped-card");
    assert_eq!(info.severity, Severity::Info);
    no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
}

#[test]
fn wild_card_architect_png_with_a_v3_card_in_chara_reads_as_v3() {
    // Card Architect apps/api/src/utils/png.ts (embedIntoPNG): every text chunk removed, then one
    // tEXt `chara` (base64 of the minified card, V2 or V3 alike) inserted before IEND; no `ccv3`.
    let name = "card_architect_v3_in_chara.png";
    let cf = card(name);
    assert_eq!(cf.container, Container::Png);
    assert_eq!(cf.card.origin, Some(ccv3::SpecVersion::V3));
    assert_eq!(cf.card.data.name, "Marisol Reed");
    let book = cf.card.data.character_book.as_ref().unwrap();
    // Its importer moves V3 entry fields (probability, depth, role, selectiveLogic) into the
    // entry's extensions; they stay there.
    assert_eq!(book.entries[0].extensions["depth"], 4);
    assert_eq!(
        cf.card.data.extensions["card_architect"]["lastEdited"],
        "2025-11-02T10:15:00.000Z"
    );
    no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
}

#[test]
fn wild_card_architect_charx_reads_with_its_assets() {
    // Card Architect apps/api/src/utils/charx-builder.ts (buildCharx): a pretty card.json, assets
    // at assets/{type}/{subtype}/{name}.{ext} named by `embeded://` URIs, and `width`, `height`,
    // `size` added to the asset descriptors.
    let name = "card_architect_export.charx";
    let cf = card(name);
    assert_eq!(cf.container, Container::Charx);
    assert_eq!(cf.card.data.name, "Marisol Reed (CHARX)");
    let assets = cf.card.data.assets.as_ref().unwrap();
    assert_eq!(assets.len(), 2);
    assert_eq!(assets[0].extra["width"], 4);
    let paths: Vec<&str> = cf.files.iter().map(|f| f.path.as_str()).collect();
    assert!(paths.contains(&"assets/icon/png/main.png"), "{paths:?}");
    assert!(paths.contains(&"assets/emotion/png/smile.png"), "{paths:?}");
    no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
}

// --- character-foundry exports (issue 13 "Done when": shapes real tools write) -----------------

#[test]
fn wild_character_foundry_risu_charx_keeps_readme_and_x_meta() {
    // character-foundry packages/charx/src/writer.ts (writeCharX, spec 'risu'): readme.txt,
    // assets at assets/{type}/{images|audio|video|other}/{name}.{ext}, and x_meta/{i}.json
    // `{"type": "PNG"}` for each image.
    let name = "character_foundry_risu.charx";
    let cf = card(name);
    assert_eq!(cf.container, Container::Charx);
    assert_eq!(cf.card.data.name, "Tobin Ash");
    let paths: Vec<&str> = cf.files.iter().map(|f| f.path.as_str()).collect();
    for p in [
        "readme.txt",
        "x_meta/0.json",
        "x_meta/1.json",
        "assets/other/audio/camp-theme.ogg",
    ] {
        assert!(paths.contains(&p), "{p}: {paths:?}");
    }
    no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
}

#[test]
fn wild_character_foundry_png_with_raw_json_in_chara_reads_with_a_warning() {
    // character-foundry packages/png/src/builder.ts (embedIntoPNG, `base64: false`): the
    // minified JSON itself, UTF-8, in a tEXt `chara` chunk before IEND.
    let name = "character_foundry_raw_json_chara.png";
    let cf = card(name);
    assert_eq!(cf.card.data.name, "Ysolde Marr");
    assert!(
        cf.card.data.description.contains("Vell — café"),
        "UTF-8 kept"
    );
    assert_eq!(cf.card.data.first_mes, "Mind the drop. ¿Listo?");
    assert_eq!(
        diag(&cf.diagnostics, "png-text-not-base64").severity,
        Severity::Warning
    );
    no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
}

// --- Voxta packages (character-foundry's and Card Architect's `.voxpkg` exports) ----------------

#[test]
fn wild_voxta_package_reads_its_entry_character_as_a_card() {
    // Layout as character-foundry packages/voxta/src/reader.ts reads it (package.json,
    // Characters/{id}/character.json + thumbnail, Books/{id}/book.json, Scenarios/{id}/...);
    // fields mapped as its mapper.ts (voxtaToCCv3) maps them; `{{ char }}` as `{{char}}` (its
    // macros.ts).
    let name = "voxta_package.voxpkg";
    let cf = card(name);
    assert_eq!(cf.container, Container::Voxta);
    assert_eq!(cf.container.label(), "Voxta");
    let d = &cf.card.data;
    assert_eq!(d.name, "Nell Harrow");
    assert_eq!(d.nickname.as_deref(), Some("Nell"));
    assert_eq!(
        d.description,
        "{{char}} pilots the night ferry across the Mere and knows {{user}} by sight."
    );
    assert_eq!(d.alternate_greetings, ["Fog's thick tonight, {{user}}."]);
    assert_eq!(
        d.post_history_instructions,
        "Keep {{char}}'s replies short."
    );
    assert_eq!(d.creator_notes, "Voice: low, unhurried.");
    assert_eq!(d.character_version, "1.2");
    assert_eq!(d.tags, ["boats", "slice of life"]);
    // Only the book the character names (MemoryBooks); a Deleted item is a disabled entry.
    let book = d.character_book.as_ref().unwrap();
    assert_eq!(book.name.as_deref(), Some("The Mere"));
    assert_eq!(book.entries.len(), 2);
    assert_eq!(book.entries[0].keys, ["ferry", "crossing"]);
    assert!(book.entries[0].enabled && !book.entries[1].enabled);
    assert_eq!(book.entries[0].extensions["voxta"]["Id"], "i-1");
    // The rest is kept: the appearance, voices, scripts, the texts as written, other books,
    // scenarios, the package.
    let kept = &d.extensions["voxta"];
    assert_eq!(
        kept["character"]["Description"],
        "Weathered oilskin coat, salt in her hair."
    );
    assert_eq!(
        kept["character"]["TextToSpeech"][0]["Voice"]["label"],
        "Emma"
    );
    assert!(kept["character"]["Profile"]
        .as_str()
        .unwrap()
        .contains("{{ char }}"));
    assert_eq!(kept["other_books"][0]["Name"], "Unrelated");
    assert_eq!(kept["scenarios"][0]["Name"], "Night Crossing");
    assert_eq!(kept["package"]["Name"], "Nell Harrow");
    // The thumbnail is the main icon; every file is kept.
    let assets = d.assets.as_ref().unwrap();
    assert_eq!(assets[0].kind, "icon");
    assert!(
        assets[0].uri.ends_with("/thumbnail.png"),
        "{}",
        assets[0].uri
    );
    // The avatars (a picture per emotion) are emotion assets, carried to every container.
    assert_eq!(assets[1].kind, "emotion");
    assert_eq!(assets[1].name, "Smile_Talking_01");
    assert_eq!(cf.files.len(), 7);
    assert_eq!(diag(&cf.diagnostics, "voxta-read").severity, Severity::Info);
    no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
    // Converted to CHARX and back: the same card, the files carried.
    let charx = ccv3::write_charx(&cf).unwrap();
    let Document::Card(back) = ccv3::read_bytes(&charx).unwrap() else {
        panic!()
    };
    assert_eq!(back.card.data.name, "Nell Harrow");
    assert_eq!(back.card.data.extensions["voxta"], *kept);
}
