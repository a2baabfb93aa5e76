//! Issue 12 ("Hostile input, part 2"), the files the commands write and read: nothing written
//! through a symbolic link, no staging file left behind on failure, `pack` bounded from the
//! folder's metadata, `convert`/`extract` of a CHARX streamed through the library's limits.
#![cfg(unix)]

mod common;
use common::{ccv3, example, stderr};
use std::path::Path;
use std::process::Output;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One line on stderr, exit code 2.
fn one_line_failure(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn issue12_convert_never_writes_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.json");
    std::fs::write(&victim, b"keep me").unwrap();
    let link = dir.path().join("out.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = ccv3(&[&"convert", &example("ember.json"), &link]);
    let err = one_line_failure(&o);
    assert!(
        err.contains("out.json") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    // Nothing staged is left behind.
    assert_eq!(names(dir.path()), ["out.json", "victim.json"]);
}

#[test]
fn issue12_state_file_is_never_written_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let state = dir.path().join("state.json");
    std::os::unix::fs::symlink(&victim, &state).unwrap();
    let o = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &example("world.json"),
        &"--chat",
        &example("chat.json"),
        &"--state",
        &state,
    ]);
    assert!(!o.status.success());
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert_eq!(names(dir.path()), ["state.json", "victim"]);
}

#[test]
fn issue12_pack_refuses_a_huge_folder_from_its_metadata() {
    // A 3 GiB sparse file: refused at once (the old `pack` read it all), nothing written.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("card");
    std::fs::create_dir_all(src.join("assets")).unwrap();
    std::fs::copy(example("ember.json"), src.join("card.json")).unwrap();
    let f = std::fs::File::create(src.join("assets/huge.bin")).unwrap();
    f.set_len(3 << 30).unwrap();
    let out = dir.path().join("out.charx");
    let start = std::time::Instant::now();
    let o = ccv3(&[&"pack", &src, &out]);
    let err = one_line_failure(&o);
    assert!(start.elapsed().as_secs() < 5);
    assert!(err.contains("huge.bin"), "{err}");
    assert!(err.contains("max_total_size"), "{err}");
    assert_eq!(names(dir.path()), ["card"]);
}

#[test]
fn issue12_pack_does_not_follow_symlinks_out_of_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("card");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(example("ember.json"), src.join("card.json")).unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, b"top secret").unwrap();
    std::os::unix::fs::symlink(&secret, src.join("leak.txt")).unwrap();
    let out = dir.path().join("out.charx");
    let o = ccv3(&[&"pack", &src, &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert!(find(&bytes, b"top secret").is_none());
    assert!(find(&bytes, b"leak.txt").is_none());
}

#[test]
fn issue12_extract_and_convert_of_a_charx_stream_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("x");
    let o = ccv3(&[&"extract", &example("ember.charx"), &folder]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("again.charx");
    let o = ccv3(&[&"pack", &folder, &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    for ext in ["json", "png", "charx"] {
        let target = dir.path().join(format!("c.{ext}"));
        let o = ccv3(&[&"convert", &out, &target]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        let o = ccv3(&[&"inspect", &target]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
    }
    // Nothing but the outputs: no staging folder or temporary file remains.
    assert_eq!(
        names(dir.path()),
        ["again.charx", "c.charx", "c.json", "c.png", "x"]
    );
}

#[test]
fn issue12_a_bad_ccv3_chunk_is_named_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.png");
    // A picture with one ccv3 chunk of broken JSON (and no chara to fall back on).
    let value = ccv3::png::encode_text_value(r#"{"spec":"#);
    let png = ccv3::png::write_card_chunks(&ccv3::png::plain_image(), &[("ccv3", &value)]).unwrap();
    let at = ccv3::png::list_chunks(&png)
        .unwrap()
        .into_iter()
        .find(|c| c.keyword.as_deref() == Some("ccv3"))
        .unwrap()
        .offset;
    assert!(at > 0);
    std::fs::write(&bad, &png).unwrap();
    let o = ccv3(&[&"inspect", &bad]);
    let err = one_line_failure(&o);
    assert!(
        err.contains(&format!("PNG chunk tEXt ccv3 at byte {at}")),
        "{err} (chunk at {at})"
    );
}

#[test]
fn issue12_size_limits_name_the_option_that_raises_them() {
    // A 2 MiB card: within the defaults, over `--max-input-mib 1`, whose error says so.
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("big.json");
    let text = format!(
        r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"A","description":"{}"}}}}"#,
        "x".repeat(2 << 20)
    );
    std::fs::write(&card, text).unwrap();
    let o = ccv3(&[&"inspect", &card]);
    assert!(o.status.success(), "{}", stderr(&o));
    for cmd in ["inspect", "validate"] {
        let o = ccv3(&[&cmd, &card, &"--max-input-mib", &"1"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains("big.json"), "{cmd}: {err}");
        assert!(err.contains("--max-input-mib"), "{cmd}: {err}");
    }
    let o = ccv3(&[&"inspect", &card, &"--max-input-mib", &"3"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
