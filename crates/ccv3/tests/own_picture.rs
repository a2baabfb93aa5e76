//! Which picture a card's PNG is written into (issue 13, and SPEC_V3 "assets": the
//! `ccdefault:` icon is the container's picture): the caller's picture as given, else the card's
//! own PNG when it can carry a card (`ccv3::png::can_carry_card`), else the card's PNG main icon,
//! else the plain image. `write_png` and `write_card_to` choose alike, and the card's own
//! picture is checked by the same walk that writes it.

use ccv3::{CardFile, CardVersion, Container, Document, EmbeddedFile};

/// `png` with a `tEXt` chunk `Comment: label` (a picture told apart from the plain image).
fn labelled(label: &str) -> Vec<u8> {
    ccv3::png::write_card_chunks(&ccv3::png::plain_image(), &[("Comment", label.as_bytes())])
        .unwrap()
}

/// The `Comment` texts of a PNG's `tEXt` chunks.
fn comments(png: &[u8]) -> Vec<String> {
    ccv3::png::list_chunks(png)
        .unwrap()
        .into_iter()
        .filter(|c| c.kind == "tEXt")
        .filter_map(|c| {
            let start = c.offset as usize + 8;
            let data = &png[start..start + c.length as usize];
            data.strip_prefix(b"Comment\0")
                .map(|v| String::from_utf8_lossy(v).into_owned())
        })
        .collect()
}

fn card(json: &str) -> CardFile {
    match ccv3::read_bytes(json.as_bytes()).unwrap() {
        Document::Card(cf) => cf,
        Document::Lorebook(_) => panic!("a card"),
    }
}

const PLAIN: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
const WITH_ICON: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
    "assets":[{"type":"icon","name":"main","uri":"embeded://assets/icon/images/main.png","ext":"png"}]}}"#;

/// Both writers, which must agree byte for byte.
fn write_both(cf: &CardFile, image: Option<&[u8]>) -> ccv3::Result<Vec<u8>> {
    let a = ccv3::write_png(cf, image, CardVersion::V3);
    let mut out = std::io::Cursor::new(Vec::new());
    let b = ccv3::write_card_to(
        cf.clone(),
        Container::Png,
        CardVersion::V3,
        image.map(<[u8]>::to_vec),
        &mut out,
    );
    match (a, b) {
        (Ok(a), Ok(())) => {
            assert_eq!(a, out.into_inner(), "write_png and write_card_to differ");
            Ok(a)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            Err(a)
        }
        (a, b) => panic!("write_png {:?}, write_card_to {:?}", a.map(|_| ()), b),
    }
}

fn with_icon(own: Option<Vec<u8>>) -> CardFile {
    let mut cf = card(WITH_ICON);
    cf.files = vec![EmbeddedFile {
        path: "assets/icon/images/main.png".into(),
        data: labelled("icon"),
    }];
    cf.image = own;
    cf
}

#[test]
fn can_carry_card_needs_every_chunk_header_up_to_iend() {
    let own = labelled("own");
    assert!(ccv3::png::can_carry_card(&own));
    assert!(!ccv3::png::can_carry_card(&own[..own.len() - 4]));
    assert!(!ccv3::png::can_carry_card(&own[..20]));
    assert!(!ccv3::png::can_carry_card(b"RIFF\0\0\0\0WEBPVP8 "));
    assert!(!ccv3::png::can_carry_card(b""));
}

#[test]
fn own_picture_that_can_carry_a_card_is_kept() {
    let mut cf = card(PLAIN);
    cf.image = Some(labelled("own"));
    assert_eq!(comments(&write_both(&cf, None).unwrap()), ["own"]);
    // It comes before the card's PNG main icon.
    let cf = with_icon(Some(labelled("own")));
    assert_eq!(comments(&write_both(&cf, None).unwrap()), ["own"]);
}

#[test]
fn own_picture_cut_short_falls_back_to_the_plain_image() {
    let own = labelled("own");
    for cut in [own.len() - 4, own.len() / 2, 10] {
        let mut cf = card(PLAIN);
        cf.image = Some(own[..cut].to_vec());
        let out = write_both(&cf, None).unwrap();
        assert!(comments(&out).is_empty(), "cut at {cut}");
        let back = card_of(&out);
        assert_eq!(back.card.data.name, "A");
    }
}

#[test]
fn own_picture_cut_short_falls_back_to_the_png_main_icon() {
    let own = labelled("own");
    let cf = with_icon(Some(own[..own.len() - 4].to_vec()));
    let out = write_both(&cf, None).unwrap();
    assert_eq!(comments(&out), ["icon"]);
    let back = card_of(&out);
    let assets = back.card.data.assets.as_deref().unwrap_or_default();
    assert_eq!(assets[0].uri, "ccdefault:");
    // No own picture at all: the same.
    assert_eq!(write_both(&with_icon(None), None).unwrap(), out);
}

#[test]
fn a_given_picture_is_used_as_given_and_a_damaged_one_is_an_error() {
    let cf = with_icon(Some(labelled("own")));
    let given = labelled("given");
    assert_eq!(comments(&write_both(&cf, Some(&given)).unwrap()), ["given"]);
    let err = write_both(&cf, Some(&given[..given.len() - 4])).unwrap_err();
    assert!(matches!(err, ccv3::Error::Png { .. }), "{err}");
}

fn card_of(png: &[u8]) -> CardFile {
    match ccv3::read_bytes(png).unwrap() {
        Document::Card(cf) => cf,
        Document::Lorebook(_) => panic!("a card"),
    }
}
