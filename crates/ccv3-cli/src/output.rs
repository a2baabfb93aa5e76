//! Writing output files atomically: a temporary file beside the target, then a rename, so a
//! failure never leaves a partial file or a staging file behind.
//!
//! Every file the commands write (`convert`, `pack`, `set`, the `--state` of `prompt` and `lore
//! scan`, every `-o FILE` of a command that prints data: [`Out`]) and every folder (`extract`)
//! goes through here (issue 12 "Files"): a target that is a
//! symbolic link (dangling or not) is refused, so nothing is ever written through a link; a
//! written file never carries setuid, setgid or sticky bits. Text a command prints goes out
//! through [`emit`] (`-o FILE` or standard output) or [`print`].

use crate::error::CliError;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `text` to `-o FILE` (atomically), or to standard output without it or for `-`.
pub fn emit(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    let mut out = Out::open(output)?;
    out.write_all(text.as_bytes())?;
    out.finish()
}

/// Writes to stdout, mapping a closed pipe to a quiet exit.
pub fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

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
    let mut staged = StagedFile::new(path)?;
    fill(staged.file_mut())?;
    staged.commit(replace)?;
    Ok(())
}

/// A file that becomes `target` only when [`StagedFile::commit`] is called: written into a
/// temporary file beside it, which is removed when the staged file is dropped uncommitted.
/// Errors never name the temporary file (issue 16): its writes go through the plain
/// [`fs::File`], and [`StagedFile::new`] strips the name tempfile adds.
pub struct StagedFile {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl StagedFile {
    /// Prepares a temporary file beside `target` (refused when `target` is a symbolic link).
    pub fn new(target: &Path) -> std::io::Result<Self> {
        if is_symlink(target) {
            return Err(symlink_refused());
        }
        let dir = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let tmp = tempfile::Builder::new()
            .prefix(".ccv3-out")
            .tempfile_in(dir)
            .map_err(without_temp_name)?;
        Ok(StagedFile {
            tmp,
            target: target.to_path_buf(),
        })
    }

    /// The temporary file to write.
    pub fn file_mut(&mut self) -> &mut fs::File {
        self.tmp.as_file_mut()
    }

    /// Syncs the temporary file and renames it to the target (when `replace` is false, only if
    /// the target does not exist).
    pub fn commit(self, replace: bool) -> std::io::Result<()> {
        let StagedFile { tmp, target } = self;
        let path = target.as_path();
        tmp.as_file().sync_all()?;
        // Temporary files are private (0600); the output is an ordinary file: a replaced file
        // keeps its permission bits but never setuid, setgid or sticky (issue 12 "Files").
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::symlink_metadata(path)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0o644);
            tmp.as_file()
                .set_permissions(fs::Permissions::from_mode(mode))?;
        }
        // Checked again right before the rename (the link could have appeared meanwhile); the
        // rename itself replaces a path, never follows it.
        if is_symlink(path) {
            return Err(symlink_refused());
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
}

impl Write for StagedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.as_file_mut().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.as_file_mut().flush()
    }
}

/// `e` without the ` at path "..."` tempfile appends (the name of a temporary file is no
/// business of the user's).
fn without_temp_name(e: std::io::Error) -> std::io::Error {
    let text = e.to_string();
    match text.find(" at path ") {
        Some(i) => std::io::Error::new(e.kind(), text[..i].to_string()),
        None => e,
    }
}

/// Where a command's data goes: standard output, or a file given with `-o FILE` (written
/// atomically: nothing appears at FILE until [`Out::finish`], and a command that fails leaves
/// FILE as it was). Write errors name FILE.
pub enum Out {
    /// Standard output (no `-o`, or `-o -`).
    Stdout(std::io::BufWriter<std::io::Stdout>),
    /// A staged file.
    File(std::io::BufWriter<StagedFile>, PathBuf),
}

impl Out {
    /// The output for `-o` (`None` or `-`: standard output).
    pub fn open(output: Option<&Path>) -> Result<Out, CliError> {
        match output {
            Some(path) if !crate::dash::is_dash(path) => {
                let staged = StagedFile::new(path).map_err(|e| CliError::file(path, e))?;
                Ok(Out::File(
                    std::io::BufWriter::with_capacity(1 << 16, staged),
                    path.to_path_buf(),
                ))
            }
            _ => Ok(Out::Stdout(std::io::BufWriter::with_capacity(
                1 << 16,
                std::io::stdout(),
            ))),
        }
    }

    /// True when the data goes to a terminal (standard output, and it is one).
    pub fn is_terminal(&self) -> bool {
        use std::io::IsTerminal;
        matches!(self, Out::Stdout(_)) && std::io::stdout().is_terminal()
    }

    /// Flushes the data; a file is renamed into place.
    pub fn finish(self) -> Result<(), CliError> {
        match self {
            Out::Stdout(mut w) => Ok(w.flush()?),
            Out::File(w, path) => {
                let staged = w
                    .into_inner()
                    .map_err(|e| CliError::file(&path, e.into_error()))?;
                staged.commit(true).map_err(|e| CliError::file(&path, e))
            }
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Out::Stdout(w) => w.write(buf),
            Out::File(w, path) => w.write(buf).map_err(|e| named(path, e)),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Out::Stdout(w) => w.flush(),
            Out::File(w, path) => w.flush().map_err(|e| named(path, e)),
        }
    }
}

/// `e`, its message starting with `path` (same kind).
fn named(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
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
            .tempdir_in(parent)
            .map_err(without_temp_name)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16: temporary-file names never appear in messages, and a staged file that is not
    /// committed leaves nothing behind.
    #[test]
    fn temporary_names_stay_out_of_messages_and_uncommitted_files_vanish() {
        let dir = tempfile::tempdir().unwrap();
        let err = StagedFile::new(&dir.path().join("no/such/out.json"))
            .err()
            .expect("no folder");
        assert!(!err.to_string().contains(".ccv3-out"), "{err}");
        assert!(!err.to_string().contains("at path"), "{err}");
        let mut staged = StagedFile::new(&dir.path().join("out.json")).unwrap();
        staged.write_all(b"half").unwrap();
        drop(staged);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut staged = StagedFile::new(&dir.path().join("out.json")).unwrap();
        staged.write_all(b"whole").unwrap();
        staged.commit(true).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("out.json")).unwrap(),
            b"whole"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
