//! Assets: the `assets` array of a V3 card and the URIs it uses.

use super::fields::{self, arranged, join, s, Arranged, KeyOrder, Object, Repairs};
use super::raw::Raw;
use serde_json::Value;

/// One element of `data.assets`: what the asset is for (`type`), where it is (`uri`), its name
/// and file extension. Unknown fields are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Asset {
    /// `icon`, `background`, `user_icon`, `emotion`, or an application type (`x_...`).
    pub kind: String,
    /// `embeded://path`, `ccdefault:`, `__asset:path`, a `data:` URL or an http(s) URL.
    pub uri: String,
    /// `main` for the main icon or background; an emotion name; free text otherwise.
    pub name: String,
    /// Lowercase file extension without a dot (`png`), or `unknown`.
    pub ext: String,
    /// Fields the spec does not name, in file order.
    pub extra: Object,
    /// The key order as read (written back the same way); `KeyOrder::default()` for new values.
    pub order: KeyOrder,
}

/// What an asset URI points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetUri<'a> {
    /// `ccdefault:`: the application's default for the type (the PNG itself for a PNG card's icon).
    Default,
    /// `embeded://PATH` (or the tolerated `embedded://`): a file inside the CHARX.
    Embedded(&'a str),
    /// `__asset:PATH`: a `chara-ext-asset_:PATH` chunk of a PNG card.
    PngChunk(&'a str),
    /// A base64 `data:` URL: media type and the base64 payload.
    Data {
        /// The media type (`image/png`), possibly empty.
        media_type: &'a str,
        /// The base64 text after the comma.
        base64: &'a str,
    },
    /// An `http://` or `https://` URL (kept, never fetched).
    Remote(&'a str),
    /// Anything else (kept as is).
    Other(&'a str),
}

impl AssetUri<'_> {
    /// Classifies a URI string.
    ///
    /// ```
    /// use ccv3::AssetUri;
    /// assert_eq!(AssetUri::parse("embeded://assets/icon/images/a.png"),
    ///            AssetUri::Embedded("assets/icon/images/a.png"));
    /// assert_eq!(AssetUri::parse("ccdefault:"), AssetUri::Default);
    /// ```
    pub fn parse(uri: &str) -> AssetUri<'_> {
        if uri.eq_ignore_ascii_case("ccdefault:") {
            AssetUri::Default
        } else if let Some(p) = uri.strip_prefix("embeded://") {
            AssetUri::Embedded(p)
        } else if let Some(p) = uri.strip_prefix("embedded://") {
            AssetUri::Embedded(p)
        } else if let Some(p) = uri.strip_prefix("__asset:") {
            AssetUri::PngChunk(p)
        } else if let Some(rest) = uri.strip_prefix("data:") {
            match rest.split_once(',') {
                Some((meta, payload)) if meta.ends_with(";base64") => AssetUri::Data {
                    media_type: meta.trim_end_matches(";base64"),
                    base64: payload,
                },
                _ => AssetUri::Other(uri),
            }
        } else if uri.starts_with("http://") || uri.starts_with("https://") {
            AssetUri::Remote(uri)
        } else {
            AssetUri::Other(uri)
        }
    }
}

impl Asset {
    /// A new asset with the four spec fields.
    pub fn new(kind: &str, uri: &str, name: &str, ext: &str) -> Self {
        Asset {
            kind: kind.into(),
            uri: uri.into(),
            name: name.into(),
            ext: ext.into(),
            ..Default::default()
        }
    }

    /// The list the spec says to assume when `assets` is absent: one `ccdefault:` main icon.
    pub fn default_list() -> Vec<Asset> {
        vec![Asset::new("icon", "ccdefault:", "main", "png")]
    }

    /// This asset's URI, classified.
    pub fn parsed_uri(&self) -> AssetUri<'_> {
        AssetUri::parse(&self.uri)
    }

    pub(crate) fn read(v: Raw, path: &str, r: &mut Repairs) -> Option<Asset> {
        let pairs = fields::expect_object(v, &path, "asset", r)?;
        let mut a = Asset {
            order: KeyOrder::with_capacity(pairs.len()),
            ..Default::default()
        };
        let (mut kind, mut uri, mut name, mut ext) = (None, None, None, None);
        for (k, v) in pairs {
            match a.order.note(&k, &["type", "uri", "name", "ext"]) {
                Some("type") => kind = Some(v.into_value()),
                Some("uri") => uri = Some(v.into_value()),
                Some("name") => name = Some(v.into_value()),
                Some(_) => ext = Some(v.into_value()),
                None => {
                    a.extra.insert(k.into_owned(), v.into_value());
                }
            }
        }
        a.kind = fields::req_string(kind, &join(path, "type"), r);
        a.uri = fields::req_string(uri, &join(path, "uri"), r);
        a.name = fields::req_string(name, &join(path, "name"), r);
        a.ext = fields::req_string(ext, &join(path, "ext"), r);
        Some(a)
    }

    /// This asset as a JSON object, keys in their original order.
    pub fn to_json(&self) -> Value {
        Value::Object(self.arranged().into_object())
    }

    /// The asset's keys in writing order, for [`Asset::to_json`] or straight to text.
    pub(crate) fn arranged(&self) -> Arranged<'_> {
        arranged(
            &self.order,
            vec![
                ("type", s(&self.kind)),
                ("uri", s(&self.uri)),
                ("name", s(&self.name)),
                ("ext", s(&self.ext)),
            ],
            &self.extra,
        )
    }
}
