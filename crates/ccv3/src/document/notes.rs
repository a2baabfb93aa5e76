//! What a conversion cannot carry ([`conversion_notes`]) and every diagnostic of a document
//! ([`check_document`]).

use super::files::{CardFile, Container, Document};
use super::read::DeferredFiles;
use super::write::{asset_bytes, main_icon_index};
use crate::diag::Diagnostic;
use crate::model::AssetUri;
use crate::{legacy, png};

/// What writing `cf` to the container `to` cannot carry, as warnings to show the user before
/// converting (issue 13: a card's portrait is never replaced, nor its files dropped, silently).
/// `image` is the picture the caller gives a PNG output, if any.
///
/// Codes: `portrait-not-carried` (a WebP or JPEG portrait into a PNG, which needs a PNG
/// picture), `portrait-plain` (a PNG output with no picture at all: a plain image is generated),
/// `files-not-carried` (files no asset points at, kept only from CHARX to CHARX). JSON holds no
/// picture by design: converting a PNG to JSON is not reported.
///
/// ```
/// let doc = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// let notes = ccv3::conversion_notes(&cf, ccv3::Container::Png, None);
/// assert_eq!(notes[0].code, "portrait-plain");
/// assert!(ccv3::conversion_notes(&cf, ccv3::Container::Json, None).is_empty());
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn conversion_notes(cf: &CardFile, to: Container, image: Option<&[u8]>) -> Vec<Diagnostic> {
    notes_with(cf, to, image, &mut |uri| asset_bytes(uri, &cf.files))
}

/// [`conversion_notes`] for a card read by [`read_file_deferred`](crate::read_file_deferred), whose files are still in
/// the file it was read from: the main icon is read from there to know what it is (a card read
/// otherwise, with [`DeferredFiles::none`], is looked at as [`conversion_notes`] does).
///
/// ```
/// // A CHARX with one asset, written to a file.
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"data:image/png;base64,AQID","name":"main","ext":"png"}]}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let path = std::env::temp_dir().join("ccv3-doc-conversion-notes-deferred.charx");
/// std::fs::write(&path, ccv3::write_charx(&cf)?)?;
/// // Read it, leaving the asset in the file.
/// let (doc, mut files) = ccv3::read_file_deferred(&path, &ccv3::ReadOptions::default())?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// assert!(cf.files.iter().all(|f| f.data.is_empty()));
/// // To JSON nothing is lost; the notes say what a conversion changes.
/// let notes = ccv3::conversion_notes_deferred(&cf, &mut files, ccv3::Container::Json, None);
/// assert!(notes.is_empty());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn conversion_notes_deferred(
    cf: &CardFile,
    deferred: &mut DeferredFiles,
    to: Container,
    image: Option<&[u8]>,
) -> Vec<Diagnostic> {
    if !deferred.holds_files() {
        return conversion_notes(cf, to, image);
    }
    notes_with(cf, to, image, &mut |uri| match AssetUri::parse(uri) {
        AssetUri::Embedded(p) | AssetUri::PngChunk(p) => {
            let i = cf.files.iter().position(|f| f.path == p)?;
            deferred.load(i).ok()
        }
        _ => asset_bytes(uri, &cf.files),
    })
}

/// [`conversion_notes`] with `bytes_of` giving the bytes an asset URI stands for.
fn notes_with(
    cf: &CardFile,
    to: Container,
    image: Option<&[u8]>,
    bytes_of: &mut dyn FnMut(&str) -> Option<Vec<u8>>,
) -> Vec<Diagnostic> {
    let mut notes = Vec::new();
    let own = cf.image.as_deref().filter(|b| !b.is_empty());
    let kind = |b: &[u8]| {
        if png::can_carry_card(b) {
            "PNG"
        } else if png::is_png(b) {
            "damaged PNG"
        } else if legacy::is_webp(b) {
            "WebP"
        } else if legacy::is_jpeg(b) {
            "JPEG"
        } else {
            "unknown"
        }
    };
    let assets = cf.card.data.assets.as_deref().unwrap_or_default();
    let icon = main_icon_index(assets).and_then(|i| assets.get(i));
    match to {
        Container::Png if image.is_none() && !own.is_some_and(png::can_carry_card) => {
            let icon_bytes = icon.and_then(|a| bytes_of(&a.uri));
            let icon_png = icon_bytes.as_deref().is_some_and(png::is_png);
            if let Some(own) = own {
                notes.push(Diagnostic::warning(
                    "portrait-not-carried",
                    "",
                    format!(
                        "the card's {} portrait cannot be a PNG's picture (ccv3 does not convert images); the PNG gets {}: give a PNG picture to keep the portrait",
                        kind(own),
                        if icon_png {
                            "the card's PNG main icon instead"
                        } else {
                            "a plain generated image"
                        }
                    ),
                ));
            } else if !icon_png {
                let why = match icon_bytes.as_deref() {
                    Some(b) => format!(
                        "its main icon is {} (kept as an asset chunk) and a PNG's picture \
                         must be a PNG",
                        kind(b)
                    ),
                    None => "the card has no picture".to_string(),
                };
                notes.push(Diagnostic::warning(
                    "portrait-plain",
                    "",
                    format!("{why}; the PNG gets a plain generated image: give a PNG picture to use one"),
                ));
            }
        }
        _ => {}
    }
    if !(to == Container::Charx && cf.container == Container::Charx) {
        let referenced: std::collections::HashSet<&str> = assets
            .iter()
            .filter_map(|a| match a.parsed_uri() {
                AssetUri::Embedded(p) | AssetUri::PngChunk(p) => Some(p),
                _ => None,
            })
            .collect();
        let loose: Vec<&str> = cf
            .files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| !referenced.contains(p))
            // A BYAF's or Voxta package's own JSON files are read into the card (`extensions`).
            .filter(|p| {
                !(matches!(cf.container, Container::Byaf | Container::Voxta)
                    && p.ends_with(".json"))
            })
            .collect();
        if !loose.is_empty() {
            let first: Vec<&str> = loose.iter().take(5).copied().collect();
            let more = if loose.len() > 5 {
                format!(" and {} more", loose.len() - 5)
            } else {
                String::new()
            };
            notes.push(Diagnostic::warning(
                "files-not-carried",
                "",
                format!(
                    "{} file(s) no asset points at are not carried into {} ({}{more}); only a \
                     CHARX keeps them",
                    loose.len(),
                    to.label(),
                    first.join(", ")
                ),
            ));
        }
    }
    notes
}

/// Every diagnostic for a document: what the reader repaired plus what validation finds.
///
/// ```
/// let doc = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"https://example.com/a.png","name":"main","ext":".PNG"}]}}"#)?;
/// let diags = ccv3::check_document(&doc);
/// assert!(diags.iter().any(|d| d.path == "data.assets[0].ext"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn check_document(doc: &Document) -> Vec<Diagnostic> {
    let mut out = doc.diagnostics().to_vec();
    match doc {
        Document::Card(cf) => {
            let paths = || cf.files.iter().map(|f| f.path.clone()).collect();
            let ctx = match cf.container {
                Container::Charx | Container::Byaf | Container::Voxta => {
                    crate::validate::ValidateContext::charx(paths())
                }
                Container::Png => crate::validate::ValidateContext::png(paths()),
                _ => crate::validate::ValidateContext::default(),
            };
            out.extend(crate::validate::validate_card(&cf.card, &ctx));
        }
        Document::Lorebook(bf) => out.extend(crate::validate::validate_lorebook(&bf.book, "data")),
    }
    out
}
