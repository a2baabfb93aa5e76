//! Writing output files atomically: a temporary file beside the target, then a rename, so a
//! failure never leaves a partial file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // Temporary files are private (0600); the output is an ordinary file: a replaced file keeps
    // its permission bits but never setuid, setgid or sticky (issue 12 "Files").
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0o644);
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(mode))?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
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
        if fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "is a symbolic link; give a folder path that is not a link",
            ));
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
