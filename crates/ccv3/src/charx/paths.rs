//! Zip paths: the safety check shared by reader and writer, the spec's asset folder rule, file
//! name sanitising and de-duplication, and joining a zip path onto a directory.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use crate::{Error, Result};

/// Longest zip path accepted, in bytes.
pub(crate) const MAX_PATH_LEN: usize = 4096;

/// Returns why `path` is unsafe as a CHARX entry name, or `None` when it is safe.
///
/// A trailing `/` (directory entry) is allowed.
pub(crate) fn path_problem(path: &str) -> Option<String> {
    if path.is_empty() {
        return Some("empty path".into());
    }
    if path.len() > MAX_PATH_LEN {
        return Some(format!(
            "path is {} bytes long, over the {MAX_PATH_LEN} byte limit",
            path.len()
        ));
    }
    if path.contains('\0') {
        return Some("nul byte in path".into());
    }
    if let Some(c) = path.chars().find(|c| c.is_control()) {
        return Some(format!("control character U+{:04X} in path", u32::from(c)));
    }
    if path.contains('\\') {
        return Some("backslash in path (zip paths are separated by '/')".into());
    }
    if path.starts_with('/') {
        return Some("absolute path".into());
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Some("path starts with a drive letter".into());
    }
    let body = path.strip_suffix('/').unwrap_or(path);
    for segment in body.split('/') {
        match segment {
            "" => return Some("empty path segment ('//' or a lone '/')".into()),
            "." => return Some("'.' segment in path".into()),
            ".." => return Some("'..' segment in path (parent directory)".into()),
            _ => {}
        }
    }
    None
}

/// Checks that `path` is a safe CHARX entry name (see the module's safety rules).
///
/// # Errors
///
/// [`Error::Charx`] naming the path and the problem.
///
/// # Example
///
/// ```
/// use ccv3::charx::validate_zip_path;
/// assert!(validate_zip_path("assets/icon/images/main.png").is_ok());
/// assert!(validate_zip_path("../evil").is_err());
/// ```
pub fn validate_zip_path(path: &str) -> Result<()> {
    match path_problem(path) {
        None => Ok(()),
        Some(problem) => Err(Error::Charx {
            entry: path.to_string(),
            problem,
        }),
    }
}

/// Joins the zip path `zip_path` onto `root`; the result is always inside `root`.
///
/// The zip path must pass [`validate_zip_path`], and each segment must be one plain file name on
/// this platform (on Windows a `:` is refused too). Pre-existing symlinks under `root` are not
/// looked at: extract into a fresh directory.
///
/// # Errors
///
/// [`Error::Charx`] naming the path when it is unsafe.
///
/// # Example
///
/// ```
/// use std::path::Path;
/// use ccv3::charx::safe_join;
/// let p = safe_join(Path::new("out"), "assets/icon/images/main.png")?;
/// assert!(p.starts_with("out"));
/// assert!(safe_join(Path::new("out"), "../etc/passwd").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn safe_join(root: &Path, zip_path: &str) -> Result<PathBuf> {
    validate_zip_path(zip_path)?;
    let bad = |problem: &str| Error::Charx {
        entry: zip_path.to_string(),
        problem: problem.into(),
    };
    let mut out = root.to_path_buf();
    for segment in zip_path.trim_end_matches('/').split('/') {
        if cfg!(windows) && segment.contains(':') {
            return Err(bad("':' in path segment"));
        }
        let mut components = Path::new(segment).components();
        match (components.next(), components.next()) {
            (Some(Component::Normal(c)), None) if c == std::ffi::OsStr::new(segment) => {}
            _ => {
                return Err(bad(
                    "path segment is not a plain file name on this platform",
                ))
            }
        }
        out.push(segment);
    }
    Ok(out)
}

/// The kind folder of an extension: `images`, `audio`, `video`, `l2d`, `3d`, `ai`, `fonts`,
/// `code` or `other`.
///
/// `ext` is matched without a leading dot and case-insensitively. Live2D files are recognised by
/// `moc3`/`moc` and by the compound extensions Cubism uses (`model3.json`, `motion3.json`, ...).
///
/// ```
/// use ccv3::charx::asset_kind;
/// assert_eq!(asset_kind("PNG"), "images");
/// assert_eq!(asset_kind(".mp3"), "audio");
/// assert_eq!(asset_kind("model3.json"), "l2d");
/// assert_eq!(asset_kind("xyz"), "other");
/// ```
pub fn asset_kind(ext: &str) -> &'static str {
    let ext = ext.trim_start_matches('.').to_ascii_lowercase();
    match ext.as_str() {
        "png" | "apng" | "jpg" | "jpeg" | "jfif" | "webp" | "gif" | "avif" | "bmp" | "svg"
        | "ico" | "tif" | "tiff" | "heic" | "heif" | "jxl" => "images",
        "mp3" | "wav" | "ogg" | "oga" | "flac" | "m4a" | "aac" | "opus" | "weba" | "mid"
        | "midi" => "audio",
        "mp4" | "webm" | "mov" | "mkv" | "avi" | "m4v" | "ogv" | "wmv" | "mpeg" | "mpg" => "video",
        "moc3" | "moc" | "model3.json" | "motion3.json" | "physics3.json" | "exp3.json"
        | "pose3.json" | "cdi3.json" | "userdata3.json" => "l2d",
        "mmd" | "pmx" | "pmd" | "vmd" | "obj" | "mtl" | "fbx" | "glb" | "gltf" | "vrm" | "stl"
        | "dae" | "3ds" | "blend" | "usdz" | "ply" => "3d",
        "safetensors" | "ckpt" | "onnx" | "pt" | "pth" | "gguf" | "ggml" | "tflite" => "ai",
        "otf" | "ttf" | "ttc" | "woff" | "woff2" | "eot" => "fonts",
        "lua" | "js" | "mjs" | "cjs" | "ts" | "jsx" | "tsx" | "py" | "wasm" | "html" | "htm"
        | "css" => "code",
        _ => "other",
    }
}

/// The spec's folder for an asset: `assets/{type}/{kind}/` (with the trailing `/`).
///
/// `{type}` is `asset_type` made a safe path segment (ASCII letters, digits, `_` and `-`; other
/// characters become `_`; empty becomes `other`); `{kind}` is [`asset_kind`] of `ext`.
///
/// # Example
///
/// ```
/// use ccv3::charx::asset_dir;
/// assert_eq!(asset_dir("icon", "png"), "assets/icon/images/");
/// assert_eq!(asset_dir("x_risu/../", "mp3"), "assets/x_risu____/audio/");
/// ```
pub fn asset_dir(asset_type: &str, ext: &str) -> String {
    let mut ty: String = asset_type
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if ty.is_empty() {
        ty.push_str("other");
    }
    format!("assets/{ty}/{}/", asset_kind(ext))
}

/// Windows device names that cannot be file names (with any extension).
const RESERVED: [&str; 22] = [
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Makes `name` a safe, portable, non-empty file name (one path segment).
///
/// ASCII letters, digits, `-`, `_` and `.` are kept; every other character (spaces, slashes,
/// non-ASCII letters) becomes `_`, runs of `_` collapse, and `.`/`_` are trimmed at both ends.
/// Windows device names get a `_` prefix; the result is at most 100 bytes; a name with nothing
/// left becomes `asset`.
///
/// # Example
///
/// ```
/// use ccv3::charx::sanitize_file_name;
/// assert_eq!(sanitize_file_name("happy face.png"), "happy_face.png");
/// assert_eq!(sanitize_file_name("../../etc"), "etc");
/// assert_eq!(sanitize_file_name("미소"), "asset");
/// ```
pub fn sanitize_file_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(100));
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
            c
        } else {
            '_'
        };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
        if out.len() >= 100 {
            break;
        }
    }
    let trimmed = out.trim_matches(|c| c == '.' || c == '_');
    if !trimmed.chars().any(|c| c.is_ascii_alphanumeric()) {
        return "asset".to_string();
    }
    let stem = trimmed.split('.').next().unwrap_or("").to_ascii_lowercase();
    if RESERVED.contains(&stem.as_str()) {
        return format!("_{trimmed}");
    }
    trimmed.to_string()
}

/// Hands out zip paths that do not collide, even on case-insensitive file systems.
///
/// # Example
///
/// ```
/// use ccv3::charx::PathDeduper;
/// let mut paths = PathDeduper::new();
/// assert_eq!(paths.asset_path("icon", "main", "png"), "assets/icon/images/main.png");
/// assert_eq!(paths.asset_path("icon", "Main", "png"), "assets/icon/images/Main-2.png");
/// ```
#[derive(Debug, Clone, Default)]
pub struct PathDeduper {
    used: HashSet<String>,
    /// For each base path (lowercased, without suffix), the suffix to try next: every smaller
    /// one is taken, so 200,000 assets of one name cost one probe each, not 200,000 (issue 12).
    next: std::collections::HashMap<String, u64>,
}

impl PathDeduper {
    /// An empty set of used paths.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks `path` as used (for example paths already in an archive); returns false when it
    /// already was.
    pub fn reserve(&mut self, path: &str) -> bool {
        self.used.insert(path.to_lowercase())
    }

    /// A free path `dir` + `stem` (+ `-N`) + `.ext`, marked as used.
    ///
    /// `dir` is used as given (normally from [`asset_dir`], ending in `/`); `stem` goes through
    /// [`sanitize_file_name`]; `ext` is sanitised and lowercased and left out when empty.
    pub fn unique_path(&mut self, dir: &str, stem: &str, ext: &str) -> String {
        let stem = sanitize_file_name(stem);
        let ext = ext.trim_start_matches('.');
        let ext = if ext.is_empty() {
            String::new()
        } else {
            sanitize_file_name(ext).to_ascii_lowercase()
        };
        let make = |n: u64| {
            let suffix = if n > 1 {
                format!("-{n}")
            } else {
                String::new()
            };
            if ext.is_empty() {
                format!("{dir}{stem}{suffix}")
            } else {
                format!("{dir}{stem}{suffix}.{ext}")
            }
        };
        let base = make(1).to_lowercase();
        let mut n = self.next.get(&base).copied().unwrap_or(1);
        loop {
            let candidate = make(n);
            if self.reserve(&candidate) || n == u64::MAX {
                self.next.insert(base, n.saturating_add(1));
                return candidate;
            }
            n += 1;
        }
    }

    /// A free path for an asset by the spec's folder rule: [`asset_dir`] + unique file name.
    pub fn asset_path(&mut self, asset_type: &str, name: &str, ext: &str) -> String {
        let dir = asset_dir(asset_type, ext);
        self.unique_path(&dir, name, ext)
    }
}
