//! The files of an archive, one at a time (issue 16): the paths given, and inside folders every
//! card or lorebook file, recursively, in path order, as they are found.
//!
//! Folders are read one at a time (only the entries of the folders on the way down are held),
//! so memory does not grow with the number of files. Inside folders, hidden files and folders
//! (names starting with `.`) are skipped, symbolic links are not followed (so a link loop is no
//! loop) and only the extensions in [`EXTENSIONS`] are looked at; a path given on the command
//! line is always taken. A path that cannot be read is an [`Item::Error`], and the walk goes on.
//!
//! On Unix each folder is also opened once, and the files found in it come with its handle
//! ([`Item::InFolder`]): opening `card.png` relative to it (`openat`) spares the kernel the
//! lookup of every folder on the path, a tenth of the system time of `ccv3 validate DIR` over
//! small cards (issue 16).

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// File extensions looked at inside folders.
pub const EXTENSIONS: [&str; 8] = [
    "json", "png", "apng", "charx", "webp", "jpg", "jpeg", "lorebook",
];

/// The deepest folder nesting walked into (below it, a folder is an [`Item::Error`]).
pub const MAX_DEPTH: usize = 256;

/// One thing the walk found.
#[derive(Debug)]
pub enum Item {
    /// A file to read.
    File(PathBuf),
    /// A file found in a folder, with the folder's handle to open it by its name
    /// ([`Folder::open`]); the path is the same file's, for messages and fallbacks.
    InFolder(PathBuf, Folder),
    /// A path that could not be read (a missing file, a folder without permission).
    Error(PathBuf, std::io::Error),
}

/// The walk over the paths given (see the module docs).
pub struct Walk {
    /// The paths given, not yet started.
    roots: std::vec::IntoIter<PathBuf>,
    /// The entries of each folder on the way down, not yet visited: `(path, is_folder)`, with
    /// the folder's handle when it could be opened.
    stack: Vec<(Option<Folder>, Entries)>,
}

/// A folder's entries not yet visited: `(path, is_folder)`.
type Entries = std::vec::IntoIter<(PathBuf, bool)>;

/// The most folder handles open at once: items in flight (up to the pipeline's window) hold
/// their folder's, so a tree of many small folders would otherwise hold hundreds of file
/// descriptors; past this, files are opened by their paths.
pub const MAX_FOLDER_HANDLES: usize = 64;

/// Folder handles open now (against [`MAX_FOLDER_HANDLES`]).
#[cfg(unix)]
static OPEN_HANDLES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// An open folder's descriptor, counted in [`OPEN_HANDLES`] while it lives.
#[cfg(unix)]
#[derive(Debug)]
struct Handle(rustix::fd::OwnedFd);

#[cfg(unix)]
impl Drop for Handle {
    fn drop(&mut self) {
        OPEN_HANDLES.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// An open folder, shared by the files found in it (see the module docs).
#[derive(Debug, Clone)]
pub struct Folder {
    #[cfg(unix)]
    fd: Arc<Handle>,
    #[cfg(not(unix))]
    _none: Arc<()>,
}

impl Folder {
    /// Opens the folder `dir` (read-only, closed on `exec`); `None` where folders cannot be
    /// opened so (not Unix), when this one cannot, or when [`MAX_FOLDER_HANDLES`] are open.
    fn open_dir(dir: &Path) -> Option<Folder> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            use std::sync::atomic::Ordering;
            if OPEN_HANDLES.fetch_add(1, Ordering::Relaxed) >= MAX_FOLDER_HANDLES {
                OPEN_HANDLES.fetch_sub(1, Ordering::Relaxed);
                return None;
            }
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            match rustix::fs::open(dir, flags, Mode::empty()) {
                Ok(fd) => Some(Folder {
                    fd: Arc::new(Handle(fd)),
                }),
                Err(_) => {
                    OPEN_HANDLES.fetch_sub(1, Ordering::Relaxed);
                    None
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            None
        }
    }

    /// Opens the file `path` names in this folder (its last component) for reading, as
    /// [`std::fs::File::open`] opens it (read-only, closed on `exec`; the same errors).
    pub fn open(&self, path: &Path) -> std::io::Result<std::fs::File> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let Some(name) = path.file_name() else {
                return std::fs::File::open(path);
            };
            let flags = OFlags::RDONLY | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.fd.0, name, flags, Mode::empty())?;
            Ok(std::fs::File::from(fd))
        }
        #[cfg(not(unix))]
        {
            std::fs::File::open(path)
        }
    }

    /// The [`SizeAndTime`] of the file `path` names in this folder (its last component),
    /// looked up relative to the folder without opening it (issue 16: `ccv3 index` reads no
    /// unchanged file), following a link as [`std::fs::metadata`] does, with its errors.
    pub fn size_and_time(&self, path: &Path) -> std::io::Result<SizeAndTime> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use rustix::fs::{AtFlags, StatxFlags};
            let Some(name) = path.file_name() else {
                return SizeAndTime::of_path(path);
            };
            let want = StatxFlags::SIZE | StatxFlags::MTIME;
            let st = rustix::fs::statx(&self.fd.0, name, AtFlags::empty(), want)?;
            let mtime_ns = if st.stx_mask & StatxFlags::MTIME.bits() != 0 {
                nanos_since_1970(st.stx_mtime.tv_sec, st.stx_mtime.tv_nsec)
            } else {
                0
            };
            Ok(SizeAndTime {
                size: st.stx_size,
                mtime_ns,
            })
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            SizeAndTime::of_path(path)
        }
    }

    /// Reads the card or lorebook file `path` names in this folder as
    /// [`ccv3::read_file_with`] reads the path (the same document, the same errors), through
    /// the worker's `scratch`.
    pub fn read_document(
        &self,
        path: &Path,
        opts: &ccv3::ReadOptions,
        scratch: &mut ccv3::ReadScratch,
    ) -> ccv3::Result<ccv3::Document> {
        ccv3::read_open_file_reusing(self.open(path)?, None, opts, scratch)
    }
}

/// A file's size and modification time, as `ccv3 index` records them to tell changed files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeAndTime {
    /// The length in bytes.
    pub size: u64,
    /// Nanoseconds since 1970 (0 when the system has no time, or one before 1970).
    pub mtime_ns: i64,
}

impl SizeAndTime {
    /// The size and time in `m`.
    pub fn of(m: &std::fs::Metadata) -> Self {
        let mtime_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        SizeAndTime {
            size: m.len(),
            mtime_ns,
        }
    }

    /// The size and time of the file at `path` ([`std::fs::metadata`]: links followed).
    pub fn of_path(path: &Path) -> std::io::Result<Self> {
        Ok(SizeAndTime::of(&std::fs::metadata(path)?))
    }
}

/// `sec` seconds and `nsec` nanoseconds after 1970 in nanoseconds, as [`SizeAndTime::of`]
/// counts them (0 before 1970, `i64::MAX` past it).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn nanos_since_1970(sec: i64, nsec: u32) -> i64 {
    if sec < 0 {
        return 0;
    }
    let nanos = i128::from(sec) * 1_000_000_000 + i128::from(nsec);
    i64::try_from(nanos).unwrap_or(i64::MAX)
}

impl Walk {
    /// A walk over `paths`, in the order given.
    pub fn new(paths: &[PathBuf]) -> Self {
        Walk {
            roots: Vec::from(paths).into_iter(),
            stack: Vec::new(),
        }
    }

    /// Opens `dir` (its entries become the next to visit), or the error reading it.
    fn enter(&mut self, dir: PathBuf) -> Option<Item> {
        if self.stack.len() >= MAX_DEPTH {
            let e = std::io::Error::other(format!("folders nested deeper than {MAX_DEPTH}"));
            return Some(Item::Error(dir, e));
        }
        match entries(&dir) {
            Ok(list) => {
                let folder = Folder::open_dir(&dir);
                self.stack.push((folder, list.into_iter()));
                None
            }
            Err(e) => Some(Item::Error(dir, e)),
        }
    }
}

impl Iterator for Walk {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        loop {
            if let Some((folder, top)) = self.stack.last_mut() {
                match top.next() {
                    Some((path, true)) => {
                        if let Some(err) = self.enter(path) {
                            return Some(err);
                        }
                    }
                    Some((path, false)) => {
                        return Some(match folder {
                            Some(folder) => Item::InFolder(path, folder.clone()),
                            None => Item::File(path),
                        })
                    }
                    None => {
                        self.stack.pop();
                    }
                }
                continue;
            }
            let root = self.roots.next()?;
            // `-`: standard input, read as one file (issue 16).
            if crate::dash::is_dash(&root) {
                return Some(Item::File(root));
            }
            match std::fs::metadata(&root) {
                Ok(m) if m.is_dir() => {
                    if let Some(err) = self.enter(root) {
                        return Some(err);
                    }
                }
                Ok(_) => return Some(Item::File(root)),
                Err(e) => return Some(Item::Error(root, e)),
            }
        }
    }
}

/// The entries of `dir` worth visiting, in path order: folders and files with a known
/// extension, hidden ones and links left out.
fn entries(dir: &Path) -> std::io::Result<Vec<(PathBuf, bool)>> {
    // Each entry's sort key is made once (issue 16: making both keys in every comparison was
    // 7% of the instructions of `ccv3 validate` over a folder of 1,000 cards).
    let mut keyed: Vec<(Vec<u8>, PathBuf, bool)> = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let Ok(e) = e else { continue };
        let name = e.file_name();
        if name.as_encoded_bytes().first() == Some(&b'.') {
            continue;
        }
        let Ok(ft) = e.file_type() else { continue };
        let is_dir = ft.is_dir();
        let wanted = is_dir || (ft.is_file() && has_card_extension(Path::new(&name)));
        if !wanted {
            continue;
        }
        // Sorted as whole paths would sort: a folder `a` as `a/`, so `a.png` comes before
        // `a/x.png`.
        let mut key = name.as_encoded_bytes().to_vec();
        if is_dir {
            key.push(b'/');
        }
        keyed.push((key, e.path(), is_dir));
    }
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(keyed
        .into_iter()
        .map(|(_, path, is_dir)| (path, is_dir))
        .collect())
}

/// True when `path` ends in one of [`EXTENSIONS`] (any case).
pub fn has_card_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|x| x.to_str())
        .is_some_and(|x| EXTENSIONS.iter().any(|e| x.eq_ignore_ascii_case(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(items: Vec<Item>, base: &Path) -> Vec<String> {
        items
            .into_iter()
            .map(|i| match i {
                Item::File(p) | Item::InFolder(p, _) => {
                    p.strip_prefix(base).unwrap().display().to_string()
                }
                Item::Error(p, _) => format!("error {}", p.display()),
            })
            .collect()
    }

    /// Issue 16 "Archives": hidden files and folders are skipped, files come in path order,
    /// a missing path is an error item and the walk goes on.
    #[test]
    fn walks_in_path_order_skipping_hidden_and_reporting_missing() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in [
            "a.png",
            "a/x.png",
            "b.json",
            ".hidden.png",
            ".git/c.png",
            "sub/.x/y.png",
            "sub/z.charx",
            "notes.txt",
        ] {
            let p = d.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"x").unwrap();
        }
        let walk = Walk::new(&[
            d.to_path_buf(),
            d.join("missing.png"),
            d.join(".hidden.png"),
        ]);
        let got = names(walk.collect(), d);
        let missing = format!("error {}", d.join("missing.png").display());
        assert_eq!(
            got,
            [
                "a.png",
                "a/x.png",
                "b.json",
                "sub/z.charx",
                missing.as_str(),
                ".hidden.png"
            ]
        );
    }

    /// The tests that count on folder handles run one at a time (the count is per process).
    static HANDLE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Issue 16: files found in a folder come with the folder's handle (Unix), open to the
    /// same bytes as their paths, and a file gone since the walk gives `File::open`'s error.
    #[test]
    fn files_in_folders_open_through_the_folder() {
        let _one_at_a_time = HANDLE_TESTS.lock();
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("a.png"), b"first").unwrap();
        std::fs::write(sub.join("b.json"), b"second").unwrap();
        let items: Vec<Item> = Walk::new(&[dir.path().to_path_buf()]).collect();
        assert_eq!(items.len(), 2);
        for item in items {
            let (path, folder) = match item {
                Item::InFolder(path, folder) => (path, folder),
                Item::File(path) if cfg!(not(unix)) => {
                    assert!(std::fs::read(&path).is_ok());
                    continue;
                }
                other => panic!("{other:?}"),
            };
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut folder.open(&path).unwrap(), &mut got).unwrap();
            assert_eq!(got, std::fs::read(&path).unwrap());
            std::fs::remove_file(&path).unwrap();
            let gone = folder.open(&path).unwrap_err().to_string();
            assert_eq!(gone, std::fs::File::open(&path).unwrap_err().to_string());
        }
    }

    /// Issue 16 (`ccv3 index` looks files up relative to their folder): a file's size and
    /// time through its folder's handle are its metadata's, and a missing file gives
    /// `std::fs::metadata`'s error.
    #[test]
    fn size_and_time_through_the_folder_match_the_metadata() {
        let _one_at_a_time = HANDLE_TESTS.lock();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.png");
        std::fs::write(&path, b"twelve bytes").unwrap();
        let items: Vec<Item> = Walk::new(&[dir.path().to_path_buf()]).collect();
        let [item] = &items[..] else {
            panic!("{items:?}")
        };
        let Item::InFolder(found, folder) = item else {
            // Only Unix walks with folder handles.
            assert!(matches!(item, Item::File(_)), "{item:?}");
            return;
        };
        let got = folder.size_and_time(found).unwrap();
        assert_eq!(got, SizeAndTime::of_path(&path).unwrap());
        assert_eq!(got.size, 12);
        assert!(got.mtime_ns > 0);
        std::fs::remove_file(&path).unwrap();
        let gone = folder.size_and_time(found).unwrap_err().to_string();
        assert_eq!(gone, std::fs::metadata(&path).unwrap_err().to_string());
    }

    /// Folder handles are bounded: a walk over more folders than [`MAX_FOLDER_HANDLES`] whose
    /// items are all held still finds every file, the later ones opened by their paths.
    #[test]
    fn folder_handles_are_bounded() {
        let _one_at_a_time = HANDLE_TESTS.lock();
        let dir = tempfile::tempdir().unwrap();
        let n = MAX_FOLDER_HANDLES + 20;
        for i in 0..n {
            let sub = dir.path().join(format!("f{i:03}"));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join("a.png"), b"x").unwrap();
        }
        let items: Vec<Item> = Walk::new(&[dir.path().to_path_buf()]).collect();
        assert_eq!(items.len(), n);
        let by_path = items.iter().filter(|i| matches!(i, Item::File(_))).count();
        if cfg!(unix) {
            assert!(by_path >= 20, "{by_path} opened by path");
        }
        for item in &items {
            match item {
                Item::InFolder(path, folder) => assert!(folder.open(path).is_ok()),
                Item::File(path) => assert!(std::fs::File::open(path).is_ok()),
                Item::Error(path, e) => panic!("{}: {e}", path.display()),
            }
        }
    }
}
