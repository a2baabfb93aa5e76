//! `ccv3 extract FILE DIR` and `ccv3 pack DIR OUT`: a card as a folder of `card.json` plus asset
//! files (the CHARX layout), and back.

use super::convert::{out_kind, write_card};
use super::{load_whole, CliError, CmdResult};
use crate::output::{write_atomic, StagedDir};
use ccv3::{CardFile, CardVersion, Container, Document, EmbeddedFile};
use std::path::Path;

/// Most files `pack` reads from a folder.
const MAX_PACK_FILES: usize = 20_000;

/// Writes `card.json` and every asset of the card in `file` into the new folder `dir`.
pub fn extract(file: &Path, dir: &Path) -> CmdResult {
    let Document::Card(cf) = load_whole(file)? else {
        return Err(CliError::file(
            file,
            "is a lorebook, not a card: use `ccv3 convert` instead",
        ));
    };
    let (card_json, files) = ccv3::charx_layout(&cf);
    let staged = StagedDir::new(dir).map_err(|e| CliError::file(dir, e))?;
    let root = staged.path().to_path_buf();
    std::fs::write(root.join("card.json"), &card_json).map_err(|e| CliError::file(dir, e))?;
    for f in &files {
        let target = ccv3::charx::safe_join(&root, &f.path).map_err(|e| CliError::file(file, e))?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::file(dir, e))?;
        }
        std::fs::write(&target, &f.data).map_err(|e| CliError::file(dir, e))?;
    }
    staged.commit().map_err(|e| CliError::file(dir, e))?;
    Ok(0)
}

/// Builds a card from a folder with `card.json` and its files, written to `output`.
pub fn pack(dir: &Path, output: &Path) -> CmdResult {
    let kind = out_kind(output)?;
    let card_path = dir.join("card.json");
    let bytes = std::fs::read(&card_path).map_err(|e| CliError::file(&card_path, e))?;
    let (value, mut diagnostics) =
        ccv3::json::parse(&bytes).map_err(|e| CliError::file(&card_path, e))?;
    let card = ccv3::Card::from_json(value, &mut diagnostics)
        .map_err(|e| CliError::file(&card_path, e))?;
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let cf = CardFile {
        card,
        container: Container::Charx,
        files,
        image: None,
        diagnostics,
    };
    let out = write_card(&cf, kind, CardVersion::V3, None, output)?;
    write_atomic(output, &out).map_err(|e| CliError::file(output, e))?;
    Ok(0)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<EmbeddedFile>) -> Result<(), CliError> {
    for entry in std::fs::read_dir(dir).map_err(|e| CliError::file(dir, e))? {
        let entry = entry.map_err(|e| CliError::file(dir, e))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| CliError::file(&path, e))?;
        if ft.is_dir() {
            walk(root, &path, out)?;
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
            let data = std::fs::read(&path).map_err(|e| CliError::file(&path, e))?;
            out.push(EmbeddedFile { path: rel, data });
        }
    }
    Ok(())
}
