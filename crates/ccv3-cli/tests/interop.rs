//! Interoperability: every card ccv3 writes reads the same in the applications people use.
//!
//! Runs `interop_read.mjs` from `../shared/peers` (SillyTavern's reading path, ccardlib's schema
//! check, character-card-utils as a strict V2 reader on the `chara` chunk alone, and
//! character-foundry's loader) on cards written by `ccv3 convert`. It needs Node and the peers'
//! packages: set `CCV3_PEERS_DIR` to a folder holding `interop_read.mjs` and its `node_modules`
//! (`.ci/run` prepares one). Without it the test prints why and passes.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn peers() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("CCV3_PEERS_DIR")?);
    dir.join("node_modules").is_dir().then_some(dir)
}

fn read_with_peers(peers: &Path, file: &Path) -> Value {
    let out = Command::new("node")
        .arg(peers.join("interop_read.mjs"))
        .arg(file)
        .output()
        .expect("node");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(line.lines().last().unwrap_or("")).expect("one JSON line")
}

fn convert(input: &Path, output: &Path, extra: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_ccv3"))
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(extra)
        .output()
        .expect("ccv3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn inputs() -> Vec<PathBuf> {
    let corpus = root().join("../shared/corpus");
    let mut v = vec![root().join("examples/ember.json")];
    for rel in [
        "json/ca_e2e_test-ccv3-beepboop.json",
        "json/ca_e2e_test-ccv2-amanda.json",
        "json/tavernai_Aqua_v1.json",
        "png/st_default_Seraphina.png",
        "png/lide_KOF_academy_zh.png",
        "charx/risutoki_night_veil_v2_ko.charx",
        "webp/tavernai_Megumin.webp",
    ] {
        v.push(corpus.join(rel));
    }
    v
}

#[test]
fn interop_png_cards_read_the_same_in_every_peer() {
    let Some(peers) = peers() else {
        eprintln!("skipped: set CCV3_PEERS_DIR (see .ci/run) to run the interoperability checks");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for input in inputs() {
        let png = dir.path().join("card.png");
        convert(&input, &png, &[]);
        let ours = Command::new(env!("CARGO_BIN_EXE_ccv3"))
            .arg("inspect")
            .arg(&png)
            .arg("--json")
            .output()
            .unwrap();
        let ours: Value = serde_json::from_slice(&ours.stdout).unwrap();
        let name = ours["data"]["name"].clone();
        let r = read_with_peers(&peers, &png);
        let label = input.display().to_string();
        assert_eq!(r["st"]["ok"], true, "{label}: SillyTavern path {r}");
        assert_eq!(r["st"]["data"]["name"], name, "{label}");
        assert_eq!(
            r["st"]["data"]["description"], ours["data"]["description"],
            "{label}"
        );
        assert_eq!(
            r["ccardlib"]["version"], "v3",
            "{label}: ccardlib {}",
            r["ccardlib"]
        );
        assert_eq!(
            r["ccu"]["ok"], true,
            "{label}: strict V2 reader {}",
            r["ccu"]
        );
        assert_eq!(r["ccu"]["data"]["name"], name, "{label}");
        let notes = r["ccu"]["data"]["creator_notes"].as_str().unwrap_or("");
        assert!(
            notes.starts_with(ccv3::V2_BACKFILL_WARNING),
            "{label}: backfill warning"
        );
        for e in r["ccu"]["data"]["entries"].as_array().into_iter().flatten() {
            let content = e[1].as_str().unwrap_or("");
            assert!(
                !content.trim_start().starts_with("@@"),
                "{label}: decorator left in V2: {content}"
            );
        }
        assert_eq!(
            r["cf"]["ok"], true,
            "{label}: character-foundry {}",
            r["cf"]
        );
        assert_eq!(r["cf"]["spec"], "v3", "{label}");
        assert_eq!(r["cf"]["data"]["name"], name, "{label}");
    }
}

#[test]
fn interop_charx_and_json_cards_load_in_character_foundry() {
    let Some(peers) = peers() else {
        eprintln!("skipped: set CCV3_PEERS_DIR (see .ci/run) to run the interoperability checks");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for input in inputs() {
        for (file, container) in [("card.charx", "charx"), ("card.json", "json")] {
            let out = dir.path().join(file);
            convert(&input, &out, &[]);
            let r = read_with_peers(&peers, &out);
            assert_eq!(
                r["cf"]["ok"],
                true,
                "{} as {file}: {}",
                input.display(),
                r["cf"]
            );
            assert_eq!(r["cf"]["container"], container, "{}", input.display());
            assert_eq!(r["cf"]["spec"], "v3", "{}", input.display());
        }
    }
}
