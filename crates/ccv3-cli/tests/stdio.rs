//! Issue 16 "Everyday commands people expect": `-` for standard input and output wherever a file
//! is read or written, `-o FILE` on every command that prints data (written atomically), and
//! `ccv3 export --format parquet` (the same rows and columns as `jsonl`, read back here with the
//! `parquet` crate's own reader).

mod common;
use common::{ccv3, example, stderr, stdout};
use serde_json::Value;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `ccv3 args` with `input` on standard input.
fn ccv3_in(args: &[&dyn AsRef<OsStr>], input: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccv3"));
    for a in args {
        cmd.arg(a);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ccv3");
    let mut stdin = child.stdin.take().unwrap();
    let bytes = input.to_vec();
    // Written from another thread: the command may stop reading early (a limit, an error).
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&bytes);
    });
    let out = child.wait_with_output().expect("wait for ccv3");
    let _ = writer.join();
    out
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// The names in a folder (to see that no temporary file is left).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Issue 16: every card input of every command reads standard input for `-` (the container
/// sniffed from the bytes, PNG, CHARX and JSON alike), with the same output as the file.
#[test]
fn dash_reads_standard_input_in_every_command() {
    let png = read(&example("ember.png"));
    let chat = example("chat.json");
    let world = example("world.json");
    let ember_json = example("ember.json");
    let cases: Vec<Vec<&dyn AsRef<OsStr>>> = vec![
        vec![&"inspect", &"FILE", &"--json"],
        vec![&"tokens", &"FILE", &"--json"],
        vec![&"lore", &"list", &"FILE", &"--json"],
        vec![&"debug", &"chunks", &"FILE"],
        vec![&"diff", &"FILE", &ember_json, &"--json"],
        vec![&"cbs", &"{{char}} {{description}}", &"--card", &"FILE"],
        vec![
            &"lore", &"scan", &"--book", &"FILE", &"--book", &world, &"--chat", &chat, &"--json",
        ],
        vec![
            &"prompt", &"--card", &"FILE", &"--chat", &chat, &"--now", &"0", &"--json",
        ],
    ];
    let file = example("ember.png");
    for case in cases {
        let with_file: Vec<&dyn AsRef<OsStr>> = case
            .iter()
            .map(|a| {
                if a.as_ref() == OsStr::new("FILE") {
                    &file as &dyn AsRef<OsStr>
                } else {
                    *a
                }
            })
            .collect();
        let with_dash: Vec<&dyn AsRef<OsStr>> = case
            .iter()
            .map(|a| {
                if a.as_ref() == OsStr::new("FILE") {
                    &"-" as &dyn AsRef<OsStr>
                } else {
                    *a
                }
            })
            .collect();
        let a = ccv3(&with_file);
        let b = ccv3_in(&with_dash, &png);
        let shown: Vec<String> = case
            .iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            a.status.code(),
            b.status.code(),
            "{shown:?}: {}",
            stderr(&b)
        );
        assert!(b.status.code().unwrap() < 2, "{shown:?}: {}", stderr(&b));
        // Book names are file names: the scan names the book `<stdin>` instead of ember.png.
        let want = stdout(&a).replace("ember.png", "<stdin>");
        assert_eq!(want, stdout(&b), "{shown:?}");
    }
    // The summary names `<stdin>`.
    let o = ccv3_in(&[&"inspect", &"-"], &png);
    assert!(
        stdout(&o).starts_with("file:        <stdin>\n"),
        "{}",
        stdout(&o)
    );
    // CHARX and JSON from standard input too.
    for name in ["ember.charx", "ember.json"] {
        let o = ccv3_in(&[&"tokens", &"-", &"--json"], &read(&example(name)));
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
    }
    // `validate -` checks one card from standard input, named `<stdin>`.
    let o = ccv3_in(
        &[&"validate", &"-", &"--jsonl"],
        br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let first: Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(first["file"], "<stdin>");
    let o = ccv3_in(&[&"validate", &"-"], &png);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("<stdin>: ok\n"), "{}", stdout(&o));
    // `--chat -` and `cbs -`.
    let o = ccv3_in(
        &[
            &"lore", &"scan", &"--book", &file, &"--chat", &"-", &"--json",
        ],
        &read(&chat),
    );
    let want = ccv3(&[
        &"lore", &"scan", &"--book", &file, &"--chat", &chat, &"--json",
    ]);
    assert_eq!(stdout(&o), stdout(&want), "{}", stderr(&o));
    let o = ccv3_in(&[&"cbs", &"-", &"--card", &file], b"{{char}}!");
    assert_eq!(stdout(&o), "Ember!");
}

/// Issue 16: outputs of `convert`, `set` and `pack` go to standard output for `-` (the container
/// from `--format`), and read back as the same card; `extract` and `convert --image` read `-`.
#[test]
fn dash_writes_cards_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let png = read(&example("ember.png"));
    let name = |o: &Output| -> Value {
        let v: Value =
            serde_json::from_slice(&ccv3_in(&[&"inspect", &"-", &"--json"], &o.stdout).stdout)
                .unwrap();
        v["data"]["name"].clone()
    };
    for format in ["png", "charx", "json"] {
        let o = ccv3_in(&[&"convert", &"-", &"-", &"--format", &format], &png);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        assert_eq!(name(&o), "Ember Vale", "{format}");
        // The same bytes as a file output.
        let file = d.join(format!("out.{format}"));
        let f = ccv3(&[&"convert", &example("ember.png"), &file]);
        assert_eq!(f.status.code(), Some(0), "{}", stderr(&f));
        if format != "charx" {
            assert_eq!(read(&file), o.stdout, "{format}");
        }
    }
    let o = ccv3_in(
        &[
            &"set",
            &"-",
            &"name",
            &"Ash",
            &"-o",
            &"-",
            &"--format",
            &"json",
        ],
        &png,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(name(&o), "Ash");
    // `extract -` then `pack DIR -`.
    let folder = d.join("card");
    let o = ccv3_in(&[&"extract", &"-", &folder], &read(&example("ember.charx")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(folder.join("card.json").is_file());
    let o = ccv3(&[&"pack", &folder, &"-", &"--format", &"charx"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(name(&o), "Ember Vale");
    // `--image -`: the picture from standard input.
    let out = d.join("pic.png");
    let o = ccv3_in(
        &[&"convert", &example("ember.json"), &out, &"--image", &"-"],
        &png,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&out).starts_with(b"\x89PNG"));
    // Standard output has no extension: `--format` is asked for, and must agree with a file's.
    let o = ccv3(&[&"convert", &example("ember.png"), &"-"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "ccv3: <stdout>: standard output has no extension: give --format png, charx or json\n"
    );
    let o = ccv3(&[
        &"convert",
        &example("ember.png"),
        &d.join("x.json"),
        &"--format",
        &"png",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--format says Png"), "{}", stderr(&o));
    assert!(!d.join("x.json").exists());
}

/// Issue 16: `--state -` reads the state from standard input (empty: a new chat) and writes
/// the next one to standard output; the command's own output then needs `-o FILE`.
#[test]
fn state_through_standard_input_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = example("ember.png");
    let chat = example("chat.json");
    let scan = d.join("scan.json");
    for cmd in ["lore", "prompt"] {
        let base: Vec<&dyn AsRef<OsStr>> = if cmd == "lore" {
            vec![&"lore", &"scan", &"--book", &file, &"--chat", &chat]
        } else {
            vec![
                &"prompt", &"--card", &file, &"--chat", &chat, &"--now", &"0",
            ]
        };
        // The state as a file, for comparison.
        let state_file = d.join(format!("{cmd}-state.json"));
        let mut args = base.clone();
        args.extend([&"--state" as &dyn AsRef<OsStr>, &state_file, &"--json"]);
        let want = ccv3(&args);
        assert_eq!(want.status.code(), Some(0), "{}", stderr(&want));
        let mut args = base.clone();
        args.extend([
            &"--state" as &dyn AsRef<OsStr>,
            &"-",
            &"--json",
            &"-o",
            &scan,
        ]);
        let o = ccv3_in(&args, b"");
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", stderr(&o));
        assert_eq!(
            String::from_utf8(o.stdout.clone()).unwrap(),
            format!("{}\n", std::fs::read_to_string(&state_file).unwrap()),
            "{cmd}"
        );
        assert_eq!(read(&scan), want.stdout, "{cmd}");
        // The state read back from standard input gives the file's next turn.
        let mut args = base.clone();
        args.extend([&"--state" as &dyn AsRef<OsStr>, &state_file, &"--json"]);
        let want2 = ccv3(&args);
        let mut args = base.clone();
        args.extend([
            &"--state" as &dyn AsRef<OsStr>,
            &"-",
            &"--json",
            &"-o",
            &scan,
        ]);
        let o2 = ccv3_in(&args, &o.stdout);
        assert_eq!(o2.status.code(), Some(0), "{cmd}: {}", stderr(&o2));
        assert_eq!(read(&scan), want2.stdout, "{cmd}");
        // Without -o the two would share standard output: refused before anything is read.
        let mut args = base.clone();
        args.extend([&"--state" as &dyn AsRef<OsStr>, &"-"]);
        let o = ccv3_in(&args, b"");
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).starts_with("ccv3: --state: `--state -` reads the state"),
            "{}",
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
    }
}

/// Issue 16: standard input is read once: a second `-` is an error naming both inputs, and
/// standard input keeps the limits of a file (read through the bound, named `<stdin>`).
#[test]
fn bad_uses_of_dash_are_clear_errors() {
    let png = read(&example("ember.png"));
    let chat = read(&example("chat.json"));
    let o = ccv3_in(&[&"diff", &"-", &"-"], &png);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "ccv3: <stdin>: standard input is read once, and A already reads it: give B as a file (only one input can be `-`)\n"
    );
    let o = ccv3_in(&[&"prompt", &"--card", &"-", &"--chat", &"-"], &chat);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("ccv3: <stdin>: standard input is read once, and --chat already reads it: give --card as a file"),
        "{}",
        stderr(&o)
    );
    let o = ccv3_in(
        &[
            &"lore",
            &"scan",
            &"--book",
            &"-",
            &"--book",
            &"-",
            &"--chat",
            &example("chat.json"),
        ],
        &png,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--book already reads it"),
        "{}",
        stderr(&o)
    );
    let o = ccv3_in(&[&"validate", &"-", &"-", &"--jsonl"], &png);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("standard input is read once"),
        "{}",
        stderr(&o)
    );
    let o = ccv3(&[&"index", &"-", &"--db", &"/nonexistent/x.sqlite"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("ccv3: <stdin>: an index records files by path"));
    for args in [
        vec![&"search" as &dyn AsRef<OsStr>, &"--db", &"-", &"x"],
        vec![&"export", &"--db", &"-"],
        vec![&"index", &example("ember.png"), &"--db", &"-"],
    ] {
        let o = ccv3(&args);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            stderr(&o),
            "ccv3: --db: the index is an SQLite file: give its path, not `-`\n"
        );
    }
    let o = ccv3_in(&[&"convert", &"-", &"--out", &"/nonexistent/out"], &png);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("ccv3: <stdin>: --out DIR is for folders"),
        "{}",
        stderr(&o)
    );
    // The limits of a file: 2 MiB on standard input against --max-input-mib 1.
    let big = vec![b' '; 2 << 20];
    let o = ccv3_in(&[&"inspect", &"-", &"--max-input-mib", &"1"], &big);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "ccv3: <stdin>: standard input is more than the limit of 1048576 bytes (1 MiB) (the ccv3 option --max-input-mib raises it)\n"
    );
    let o = ccv3_in(
        &[
            &"prompt",
            &"--card",
            &example("ember.png"),
            &"--chat",
            &"-",
            &"--max-chat-size",
            &"100",
        ],
        &chat,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("ccv3: <stdin>: the chat is more, over the limit of 100 bytes (--max-chat-size raises it)"),
        "{}",
        stderr(&o)
    );
    // What is read from standard input is sniffed from its bytes; a bad one is named.
    let o = ccv3_in(&[&"inspect", &"-"], b"\x00\x01 not a card");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("ccv3: <stdin>: "), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1);
}

/// Issue 16: `-o FILE` on every command that prints data writes exactly what standard output
/// would get, atomically, and nothing to standard output; `-o -` is standard output.
#[test]
fn dash_o_on_every_command_that_prints_data() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let png = example("ember.png");
    let json = example("ember.json");
    let chat = example("chat.json");
    let db = d.join("cards.sqlite");
    let cards = d.join("cards");
    std::fs::create_dir_all(&cards).unwrap();
    std::fs::copy(&png, cards.join("ember.png")).unwrap();
    let o = ccv3(&[&"index", &cards, &"--db", &db]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let cases: Vec<Vec<&dyn AsRef<OsStr>>> = vec![
        vec![&"inspect", &png],
        vec![&"inspect", &png, &"--json"],
        vec![&"validate", &png, &json],
        vec![&"validate", &png, &json, &"--json"],
        vec![&"validate", &png, &"--jsonl"],
        vec![&"validate", &png, &"--summary", &"--json"],
        vec![&"lore", &"scan", &"--book", &png, &"--chat", &chat],
        vec![
            &"lore", &"scan", &"--book", &png, &"--chat", &chat, &"--json",
        ],
        vec![&"lore", &"list", &png],
        vec![&"lore", &"list", &png, &"--json"],
        vec![&"prompt", &"--card", &png, &"--chat", &chat, &"--now", &"0"],
        vec![
            &"prompt", &"--card", &png, &"--chat", &chat, &"--now", &"0", &"--json",
        ],
        vec![&"cbs", &"{{char}}", &"--card", &png],
        vec![&"cbs", &"--list", &"--json"],
        vec![&"tokens", &png],
        vec![&"tokens", &png, &"--json"],
        vec![&"diff", &png, &json],
        vec![&"diff", &png, &json, &"--json"],
        vec![&"search", &"--db", &db, &"ember"],
        vec![&"export", &"--db", &db],
        vec![&"export", &"--db", &db, &"--format", &"parquet"],
        vec![&"debug", &"chunks", &png],
        vec![&"completions", &"bash"],
    ];
    let out = d.join("out.txt");
    for case in cases {
        let shown: Vec<String> = case
            .iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect();
        let _ = std::fs::remove_file(&out);
        let plain = ccv3(&case);
        let mut with_o = case.clone();
        with_o.extend([&"-o" as &dyn AsRef<OsStr>, &out]);
        let o = ccv3(&with_o);
        assert_eq!(
            o.status.code(),
            plain.status.code(),
            "{shown:?}: {}",
            stderr(&o)
        );
        assert!(
            plain.status.code().unwrap() < 2,
            "{shown:?}: {}",
            stderr(&plain)
        );
        assert!(o.stdout.is_empty(), "{shown:?}");
        let written = read(&out);
        if shown[0] != "export" || !shown.contains(&"parquet".to_string()) {
            assert_eq!(
                String::from_utf8_lossy(&written),
                stdout(&plain),
                "{shown:?}"
            );
        } else {
            assert_eq!(written.len(), plain.stdout.len(), "{shown:?}");
        }
        // Text ends in a newline (`cbs` prints the text as it expands).
        if !written.is_empty() && (shown[0] != "cbs" || shown[1] == "--list") {
            assert!(
                written.ends_with(b"\n") || shown.contains(&"parquet".to_string()),
                "{shown:?}"
            );
        }
        let mut dash = case.clone();
        dash.extend([&"-o" as &dyn AsRef<OsStr>, &"-"]);
        let o = ccv3(&dash);
        if !shown.contains(&"parquet".to_string()) {
            assert_eq!(stdout(&o), stdout(&plain), "{shown:?}");
        }
    }
    // Only the outputs are left: no temporary file.
    assert_eq!(names(d), ["cards", "cards.sqlite", "out.txt"]);
}

/// Issue 16: an output written with `-o` appears whole or not at all: a failing command leaves
/// an existing file as it was, and errors never name a temporary file.
#[test]
fn dash_o_is_atomic_and_names_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out.json");
    std::fs::write(&out, "before").unwrap();
    let o = ccv3(&[&"inspect", &d.join("missing.png"), &"--json", &"-o", &out]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(read(&out), b"before");
    let o = ccv3(&[&"inspect", &example("ember.png"), &"--json", &"-o", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&out).starts_with(b"{"));
    assert_eq!(names(d), ["out.json"]);
    // A folder that is not there, and one that cannot be written.
    let missing = d.join("no/such/dir/out.json");
    let o = ccv3(&[&"tokens", &example("ember.png"), &"-o", &missing]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("ccv3: {}: ", missing.display())),
        "{err}"
    );
    assert!(!err.contains(".ccv3-out"), "{err}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = d.join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        let target = ro.join("out.json");
        let o = ccv3(&[&"lore", &"list", &example("ember.png"), &"-o", &target]);
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Root writes anywhere: then the file is simply written.
        if o.status.code() == Some(2) {
            let err = stderr(&o);
            assert!(
                err.starts_with(&format!("ccv3: {}: ", target.display())),
                "{err}"
            );
            assert!(
                !err.contains(".ccv3-out") && !err.contains("at path"),
                "{err}"
            );
        }
    }
}

/// A Parquet value as JSON (lists as arrays), for comparing with `--format jsonl`.
fn field_json(f: &parquet::record::Field) -> Value {
    use parquet::record::{Field, ListAccessor};
    match f {
        Field::Null => Value::Null,
        Field::Long(n) => Value::from(*n),
        Field::Int(n) => Value::from(*n),
        Field::Double(x) => Value::from(*x),
        Field::Str(s) => Value::from(s.as_str()),
        Field::Bool(b) => Value::from(*b),
        Field::ListInternal(list) => Value::Array(
            (0..list.len())
                .map(|i| Value::from(list.get_string(i).unwrap().as_str()))
                .collect(),
        ),
        other => panic!("unexpected Parquet field {other:?}"),
    }
}

/// Issue 16 "Archives": `export --format parquet` has the rows and columns of `--format jsonl`
/// (`tags` a list of strings, `tokens` and `findings` JSON text), read back with the `parquet`
/// crate's reader, across several row groups.
#[test]
fn export_parquet_reads_back_as_the_jsonl_rows() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cards = d.join("cards");
    std::fs::create_dir_all(cards.join("sub")).unwrap();
    std::fs::copy(example("ember.png"), cards.join("ember.png")).unwrap();
    std::fs::copy(example("ember.charx"), cards.join("sub/ember.charx")).unwrap();
    std::fs::copy(example("world.json"), cards.join("world.json")).unwrap();
    std::fs::write(cards.join("broken.json"), "{ nope").unwrap();
    let db = d.join("cards.sqlite");
    let o = ccv3(&[&"index", &cards, &"--db", &db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o)); // broken.json
                                                            // Enough rows for two row groups (8,192 rows each): copies of the PNG card's row, with
                                                            // tags that are empty or not.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let cols: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info('cards') WHERE name != 'id'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let exprs: Vec<String> =
            cols.iter()
                .map(|c| match c.as_str() {
                    "path" => "'many/' || printf('%05d', n) || '.png'".to_string(),
                    "tags" => "CASE WHEN n % 3 = 0 THEN '[]' ELSE json_array('t' || n, 'x') END"
                        .to_string(),
                    c => c.to_string(),
                })
                .collect();
        conn.execute_batch(&format!(
            "WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c WHERE n < 8199)
             INSERT INTO cards ({}) SELECT {} FROM c, cards WHERE cards.path LIKE '%ember.png'",
            cols.join(", "),
            exprs.join(", ")
        ))
        .unwrap();
    }
    let jsonl = ccv3(&[&"export", &"--db", &db]);
    assert_eq!(jsonl.status.code(), Some(0), "{}", stderr(&jsonl));
    let rows: Vec<Value> = stdout(&jsonl)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 8_204);
    let file: PathBuf = d.join("cards.parquet");
    let o = ccv3(&[
        &"export",
        &"--db",
        &db,
        &"--format",
        &"parquet",
        &"-o",
        &file,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reader = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let meta = reader.metadata();
    assert_eq!(meta.file_metadata().num_rows(), 8_204);
    assert_eq!(meta.num_row_groups(), 2);
    let columns: Vec<String> = meta
        .file_metadata()
        .schema()
        .get_fields()
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    let keys: Vec<String> = rows[0].as_object().unwrap().keys().cloned().collect();
    assert_eq!(columns, keys);
    let mut n = 0;
    for (row, want) in reader.get_row_iter(None).unwrap().zip(&rows) {
        let row = row.unwrap();
        for (name, field) in row.get_column_iter() {
            let mut got = field_json(field);
            if matches!(name.as_str(), "tokens" | "findings") {
                if let Value::String(s) = &got {
                    got = serde_json::from_str(s).unwrap();
                }
            }
            assert_eq!(&got, &want[name], "row {n} column {name}");
        }
        n += 1;
    }
    assert_eq!(n, rows.len());
    // To standard output, the same bytes.
    let o = ccv3(&[&"export", &"--db", &db, &"--format", &"parquet"]);
    assert_eq!(o.stdout, read(&file));
    assert!(o.stdout.starts_with(b"PAR1") && o.stdout.ends_with(b"PAR1"));
}

/// Issue 16 "Everyday commands": examples in every `--help` (the command's and each
/// subcommand's), and completions that know the new flags (`-o`, `--format`).
#[test]
fn every_help_has_examples_and_completions_know_the_new_flags() {
    let commands: [&[&str]; 23] = [
        &[],
        &["inspect"],
        &["validate"],
        &["convert"],
        &["extract"],
        &["pack"],
        &["cbs"],
        &["prompt"],
        &["index"],
        &["search"],
        &["export"],
        &["tokens"],
        &["diff"],
        &["set"],
        &["completions"],
        &["lore"],
        &["lore", "scan"],
        &["lore", "list"],
        &["lore", "graph"],
        &["lint"],
        &["portability"],
        &["debug"],
        &["debug", "chunks"],
    ];
    for c in commands {
        let mut args: Vec<&dyn AsRef<OsStr>> = c.iter().map(|a| a as &dyn AsRef<OsStr>).collect();
        args.push(&"--help");
        let o = ccv3(&args);
        assert_eq!(o.status.code(), Some(0), "{c:?}");
        let help = stdout(&o);
        assert!(help.contains("\nExamples:\n  ccv3 "), "{c:?}:\n{help}");
        assert!(help.ends_with('\n'), "{c:?}");
    }
    for shell in ["bash", "zsh", "fish"] {
        let o = ccv3(&[&"completions", &shell]);
        let text = stdout(&o);
        // fish spells long options `-l output`.
        let (output, format) = if shell == "fish" {
            ("-l output", "-l format")
        } else {
            ("--output", "--format")
        };
        assert!(text.contains(output), "{shell}");
        assert!(text.contains(format), "{shell}");
        assert!(text.contains("parquet"), "{shell}");
    }
}

/// Issue 16 "plurals right": one of a thing is singular in the tables and summaries.
#[test]
fn plurals_are_right() {
    let o = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &example("ember.png"),
        &"--book",
        &example("world.json"),
        &"--chat",
        &example("chat.json"),
    ]);
    let out = stdout(&o);
    assert!(out.contains("\nrejected: 1 entry\n"), "{out}");
    assert!(
        out.starts_with("activated: 6 entries, 148 tokens\n"),
        "{out}"
    );
    let o = ccv3(&[&"inspect", &example("ember.png")]);
    assert!(stdout(&o).ends_with("diagnostics: 0 errors, 0 warnings\n"));
}

/// `--template -` and `--instruct -` read the prompt's templates from standard input.
#[test]
fn prompt_templates_from_standard_input() {
    let base: [&dyn AsRef<OsStr>; 6] = [
        &"prompt",
        &"--card",
        &example("ember.png"),
        &"--chat",
        &example("chat.json"),
        &"--now",
    ];
    let mut args = base.to_vec();
    args.extend([&"0" as &dyn AsRef<OsStr>, &"--instruct", &"-"]);
    let o = ccv3_in(
        &args,
        br#"{"name":"plain","user":{"prefix":"Q: ","suffix":"\n"},"assistant":{"prefix":"A: ","suffix":"\n"}}"#,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Q: Thank you. What are the Teeth?\n"),
        "{}",
        stdout(&o)
    );
    let mut args = base.to_vec();
    args.extend([&"0" as &dyn AsRef<OsStr>, &"--template", &"-", &"--json"]);
    let o = ccv3_in(&args, br#"["description","history"]"#);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["messages"][0]["content"]
        .as_str()
        .unwrap()
        .starts_with("Ember is a lighthouse keeper"));
    let o = ccv3_in(&args, b"[\"nope\"]");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("ccv3: <stdin>: "), "{}", stderr(&o));
}

/// Parse, don't trust: an index with odd values (text in an INTEGER column, tags that are not
/// JSON, invalid UTF-8, a REAL column) still exports as valid Parquet, read back by the crate.
#[test]
fn export_parquet_of_an_odd_database_is_still_valid() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("odd.sqlite");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE cards (id INTEGER PRIMARY KEY, path TEXT, size INTEGER, tags TEXT,
             score REAL, findings TEXT, indexed_run INTEGER);
         INSERT INTO cards (path, size, tags, score, findings, indexed_run) VALUES
             ('a', 'not a number', 'not json', 1.5, CAST(X'FF41' AS TEXT), 1),
             (CAST(X'C328' AS TEXT), 7, '[1, \"x\", null]', NULL, NULL, 1),
             ('c', NULL, NULL, 2, '[]', 1);",
    )
    .unwrap();
    drop(conn);
    let out = dir.path().join("odd.parquet");
    let o = ccv3(&[
        &"export",
        &"--db",
        &db,
        &"--format",
        &"parquet",
        &"-o",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reader = SerializedFileReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    let rows: Vec<Value> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            Value::Object(
                r.get_column_iter()
                    .map(|(n, f)| (n.clone(), field_json(f)))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["size"], Value::Null);
    assert_eq!(rows[0]["tags"], Value::Null);
    assert_eq!(rows[0]["score"], 1.5);
    assert_eq!(rows[0]["findings"], "\u{FFFD}A");
    // In path order: `a`, `c`, then the invalid UTF-8 one (0xC3...).
    assert_eq!(rows[1]["score"], 2.0);
    assert_eq!(rows[2]["tags"], serde_json::json!(["1", "x", "null"]));
    assert_eq!(rows[2]["path"], "\u{FFFD}(");
    // Not an index at all: one line naming the file.
    let o = ccv3(&[&"export", &"--db", &out, &"--format", &"parquet"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(&format!("ccv3: {}: ", out.display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1);
}
