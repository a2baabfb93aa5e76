//! `ccv3 extract FILE DIR` and `ccv3 pack DIR OUT`: a card as a folder of `card.json` plus asset
//! files (the CHARX layout), and back.

use super::convert::{write_card, OutKind};
use crate::error::{CliError, CmdResult};
use crate::load::load_deferred;
use crate::output::{read_bounded, StagedDir};
use ccv3::{CardFile, CardVersion, Container, Document, EmbeddedFile};
use std::io::Read;
use std::path::Path;

/// Most files `pack` reads from a folder.
const MAX_PACK_FILES: usize = 20_000;

/// Deepest folder nesting `pack` walks.
const MAX_PACK_DEPTH: usize = 64;

/// Writes `card.json` and every asset of the card in `file` into the new folder `dir`.
pub fn extract(file: &Path, dir: &Path) -> CmdResult {
    let (Document::Card(cf), mut deferred) = load_deferred(file, "FILE")? else {
        return Err(CliError::file(
            file,
            "is a lorebook, not a card: use `ccv3 convert` instead",
        ));
    };
    let staged = StagedDir::new(dir).map_err(|e| CliError::file(dir, e))?;
    let root = staged.path().to_path_buf();
    // Folders made so far: each is made once, not once per file in it.
    let mut made = std::collections::HashSet::new();
    // The files are read from the input one at a time (issue 12), each written and dropped
    // before the next is read. A failure to write names the folder; a failure to read, the input.
    let mut write_failed: Option<CliError> = None;
    let card_json = ccv3::charx_layout_deferred(cf, &mut deferred, |f| {
        let target = ccv3::charx::safe_join(&root, &f.path)?;
        let written = (|| {
            if let Some(parent) = target.parent() {
                if !made.contains(parent) {
                    std::fs::create_dir_all(parent)?;
                    made.insert(parent.to_path_buf());
                }
            }
            write_new(&target, &f.data)
        })();
        written.map_err(|e| {
            let err = ccv3::Error::Io(std::io::Error::new(e.kind(), e.to_string()));
            write_failed = Some(CliError::file(dir, format!("{}: {e}", f.path)));
            err
        })
    });
    let card_json = match (card_json, write_failed) {
        (Ok(json), _) => json,
        (Err(_), Some(e)) => return Err(e),
        (Err(e), None) => return Err(CliError::file(file, e)),
    };
    write_new(&root.join("card.json"), &card_json).map_err(|e| CliError::file(dir, e))?;
    drop(card_json);
    staged.commit().map_err(|e| CliError::file(dir, e))?;
    Ok(0)
}

/// Creates a new file (never one that exists, never through a link) holding `data`.
fn write_new(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(data)
}

/// Builds a card from a folder with `card.json` and its files, written to `output` (`-`:
/// standard output) as `kind`.
pub fn pack(dir: &Path, output: &Path, kind: OutKind) -> CmdResult {
    let card_path = dir.join("card.json");
    let opts = crate::load::read_options();
    let bytes = read_bounded(&card_path, opts.max_json_len, crate::load::RAISE_HINT)
        .map_err(|e| CliError::file(&card_path, e))?;
    let (value, mut diagnostics) = ccv3::json::parse_with(&bytes, &opts)
        .map_err(|e| crate::load::read_error(&card_path, e))?;
    drop(bytes);
    let card = ccv3::Card::from_json(value, &mut diagnostics)
        .map_err(|e| CliError::file(&card_path, e))?;
    let mut files = Vec::new();
    let mut total = 0u64;
    // All files together within the CHARX reader's budget, so whatever `pack` writes reads
    // back; checked from each file's metadata before it is read (issue 12: a 3 GiB sparse file
    // is refused, not read).
    let max = opts.charx.max_total_size;
    walk(dir, dir, 0, (&mut total, max), &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let cf = CardFile {
        card,
        container: Container::Charx,
        files,
        image: None,
        diagnostics,
    };
    write_card(cf, None, kind, CardVersion::V3, None, output)?;
    Ok(0)
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    (total, max): (&mut u64, u64),
    out: &mut Vec<EmbeddedFile>,
) -> Result<(), CliError> {
    if depth > MAX_PACK_DEPTH {
        return Err(CliError::file(
            dir,
            format!("folders nested more than {MAX_PACK_DEPTH} deep"),
        ));
    }
    for entry in std::fs::read_dir(dir).map_err(|e| CliError::file(dir, e))? {
        let entry = entry.map_err(|e| CliError::file(dir, e))?;
        let path = entry.path();
        // The entry's own type: symbolic links are neither followed nor read.
        let ft = entry.file_type().map_err(|e| CliError::file(&path, e))?;
        if ft.is_dir() {
            walk(root, &path, depth + 1, (&mut *total, max), out)?;
        } else if ft.is_file() {
            let rel = path
                .strip_prefix(root)
                .map_err(|e| CliError::file(&path, e))?;
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let rel = rel.join("/");
            if rel == "card.json" {
                continue;
            }
            if out.len() >= MAX_PACK_FILES {
                return Err(CliError::file(
                    root,
                    format!("more than {MAX_PACK_FILES} files"),
                ));
            }
            // Sizes come from the metadata, before anything is read.
            let len = entry
                .metadata()
                .map_err(|e| CliError::file(&path, e))?
                .len();
            *total = total.saturating_add(len);
            if *total > max {
                return Err(CliError::file(
                    &path,
                    format!(
                        "the folder's files hold more than {max} bytes (the CHARX limit, \
                         charx::Limits::max_total_size): not packed {}",
                        crate::load::RAISE_HINT
                    ),
                ));
            }
            let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            std::fs::File::open(&path)
                .and_then(|f| f.take(len).read_to_end(&mut data))
                .map_err(|e| CliError::file(&path, e))?;
            out.push(EmbeddedFile { path: rel, data });
        }
    }
    Ok(())
}
