//! Writing output files atomically: a temporary file beside the target, then a rename, so a
//! failure never leaves a partial file or a staging file behind.
//!
//! Every file the commands write (`convert`, `pack`, the `--state` of `prompt` and `lore scan`)
//! and every folder (`extract`) goes through here (issue 12 "Files"): a target that is a
//! symbolic link (dangling or not) is refused, so nothing is ever written through a link; a
//! written file never carries setuid, setgid or sticky bits.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The error for a target that is a symbolic link.
fn symlink_refused() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "is a symbolic link; give a path that is not a link (nothing is written through links)",
    )
}

/// True when `path` itself (not what it points to) is a symbolic link, dangling or not.
fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Writes `path` through a temporary file beside it that `fill` writes (streamed, never built in
/// memory first), then a rename. On any failure the temporary file is removed and `path` is left
/// as it was.
pub fn write_atomic_with<E: From<std::io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut fs::File) -> Result<(), E>,
) -> Result<(), E> {
    write_atomic_mode(path, true, fill)
}

/// [`write_atomic_with`], but when `replace` is false an existing `path` is left alone and the
/// write fails with [`std::io::ErrorKind::AlreadyExists`] (checked by the rename itself, so two
/// writers of one path never replace each other's file).
pub fn write_atomic_mode<E: From<std::io::Error>>(
    path: &Path,
    replace: bool,
    fill: impl FnOnce(&mut fs::File) -> Result<(), E>,
) -> Result<(), E> {
    if !replace && fs::symlink_metadata(path).is_ok() {
        return Err(exists().into());
    }
    if is_symlink(path) {
        return Err(symlink_refused().into());
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".ccv3-out")
        .tempfile_in(dir)?;
    fill(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    // Temporary files are private (0600); the output is an ordinary file: a replaced file keeps
    // its permission bits but never setuid, setgid or sticky (issue 12 "Files").
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::symlink_metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0o644);
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(mode))?;
    }
    // Checked again right before the rename (the link could have appeared meanwhile); the rename
    // itself replaces a path, never follows it.
    if is_symlink(path) {
        return Err(symlink_refused().into());
    }
    if replace {
        tmp.persist(path).map_err(|e| e.error)?;
    } else {
        tmp.persist_noclobber(path)
            .map_err(|e| match e.error.kind() {
                std::io::ErrorKind::AlreadyExists => exists(),
                _ => e.error,
            })?;
    }
    Ok(())
}

/// The error for an output that exists and may not be replaced.
fn exists() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "exists; not replaced (--force replaces it)",
    )
}

/// A folder that becomes `target` only when [`StagedDir::commit`] is called; dropped otherwise.
pub struct StagedDir {
    staging: Option<tempfile::TempDir>,
    target: PathBuf,
}

impl StagedDir {
    /// Prepares a staging folder beside `target`, which must not exist or be an empty folder.
    pub fn new(target: &Path) -> std::io::Result<Self> {
        // Never through a symbolic link, dangling or not (issue 12 "Files").
        if is_symlink(target) {
            return Err(symlink_refused());
        }
        if target.exists() {
            let empty = fs::read_dir(target)?.next().is_none();
            if !empty {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "folder exists and is not empty",
                ));
            }
        }
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::create_dir_all(parent)?;
        let staging = tempfile::Builder::new()
            .prefix(".ccv3-extract")
            .tempdir_in(parent)?;
        Ok(StagedDir {
            staging: Some(staging),
            target: target.to_path_buf(),
        })
    }

    /// The staging folder to write into.
    pub fn path(&self) -> &Path {
        self.staging
            .as_ref()
            .map(|s| s.path())
            .unwrap_or(&self.target)
    }

    /// Moves the staging folder to the target.
    pub fn commit(mut self) -> std::io::Result<()> {
        if let Some(staging) = self.staging.take() {
            if is_symlink(&self.target) {
                // Dropping `staging` removes it: nothing is left behind.
                return Err(symlink_refused());
            }
            if self.target.exists() {
                fs::remove_dir(&self.target)?;
            }
            let path = staging.keep();
            if let Err(e) = fs::rename(&path, &self.target) {
                // Nothing staged is left behind on failure.
                let _ = fs::remove_dir_all(&path);
                return Err(e);
            }
        }
        Ok(())
    }
}

/// Reads a whole file of at most `max` bytes, refused from its metadata before anything is
/// read (and read through a `take`, so a file that grows meanwhile is still bounded).
pub fn read_bounded(path: &Path, max: u64, option: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("file of {len} bytes is over the limit of {max} bytes ({option})"),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("file grew over the limit of {max} bytes ({option})"),
        ));
    }
    Ok(bytes)
}
