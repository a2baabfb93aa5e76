//! RisuAI's markup and escape functions, [`crate::Family::Markup`] (its `cbs.ts`, dialect
//! `risu`).
//!
//! RisuAI writes its display escapes as private-use characters that its later passes turn
//! back into the character (so the text is never parsed again as a macro); this crate's
//! expansion is a single pass, so the character is written at once: `{{decbo}}` is `{`,
//! `{{bo}}` is `{{`, `{{(}}` is `(`, `{{<}}` is `&lt;` (as RisuAI turns it back, in prompts
//! too), `{{:}}` is `:`, `{{;}}` is `;`.
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{cbr}}` (`cnl`, `cnewline`), `{{cbr::N}}` | the two characters `\n`, `N` times (at least once), as RisuAI documents it |
//! | `{{decbo}}`, `{{decbc}}`, `{{bo}}` (`ddecbo`), `{{bc}}` (`ddecbc`) | `{`, `}`, `{{`, `}}` |
//! | `{{debo}}` (`(`), `{{debc}}` (`)`), `{{deabo}}` (`<`), `{{deabc}}` (`>`), `{{dec}}` (`:`), `{{;}}` | `(`, `)`, `&lt;`, `&gt;`, `:`, `;` |
//! | `{{tex::A}}` (`latex`, `katex`) | `$$A$$` |
//! | `{{ruby::BASE::RUBY}}` (`furigana`) | a `<ruby>` element |
//! | `{{codeblock::CODE}}`, `{{codeblock::LANG::CODE}}` | an HTML code block, the code HTML-escaped |
//! | `{{button::LABEL::TRIGGER}}` | a `<button>` that runs a RisuAI trigger |
//! | `{{risu}}`, `{{risu::SIZE}}` | RisuAI's logo as an `<img>` |
//! | `{{file::NAME::BASE64}}` | display: the name in a `risu-file` box; prompt: the decoded text |
//!
//! ```
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables};
//! let risu = |s: &str| Template::parse(s).expand_with(Registry::dialect_ref(Dialect::Risu),
//!     &Limits::default(), &Context::new(), &mut Variables::new(), Mode::Prompt).text;
//! assert_eq!(risu("a{{cbr}}b{{cbr::2}}"), r"a\nb\n\n");
//! assert_eq!(risu("{{bo}}char{{bc}} {{(}}x{{)}}"), "{{char}} (x)");
//! assert_eq!(risu("{{tex::E=mc^2}}"), "$$E=mc^2$$");
//! assert_eq!(risu("{{file::a.txt::aGk=}}"), "hi");
//! assert_eq!(risu("{{cnl}}{{cnewline}}"), r"\n\n");
//! assert_eq!(risu("{{decbo}}{{decbc}}{{ddecbo}}{{ddecbc}}"), "{}{{}}");
//! assert_eq!(risu("{{displayescapedcurlybracketopen}}{{displayescapedcurlybracketclose}}"), "{}");
//! assert_eq!(risu("{{doubledisplayescapedcurlybracketopen}}{{doubledisplayescapedcurlybracketclose}}"), "{{}}");
//! assert_eq!(risu("{{debo}}{{debc}}{{displayescapedbracketopen}}{{displayescapedbracketclose}}"), "()()");
//! assert_eq!(risu("{{deabo}}{{deabc}}{{<}}{{>}}"), "&lt;&gt;&lt;&gt;");
//! assert_eq!(risu("{{displayescapedanglebracketopen}}{{displayescapedanglebracketclose}}"), "&lt;&gt;");
//! assert_eq!(risu("{{dec}}{{:}}{{displayescapedcolon}}{{;}}{{displayescapedsemicolon}}"), ":::;;");
//! assert_eq!(risu("{{latex::x}} {{katex::y}}"), "$$x$$ $$y$$");
//! assert_eq!(risu("{{ruby::漢字::かんじ}}"), "<ruby>漢字<rp> (</rp><rt>かんじ</rt><rp>) </rp></ruby>");
//! assert_eq!(risu("{{furigana::a::b}}"), "<ruby>a<rp> (</rp><rt>b</rt><rp>) </rp></ruby>");
//! assert_eq!(risu("{{codeblock::a<b}} {{codeblock::js::x}}"),
//!     "<pre><code>a&lt;b</code></pre> <pre-hljs-placeholder lang=\"js\">x</pre-hljs-placeholder>");
//! assert_eq!(risu("{{button::Go::t1}}"), "<button class=\"button-default\" risu-trigger=\"t1\">Go</button>");
//! assert_eq!(risu("{{risu}}"), "<img src=\"/logo2.png\" style=\"height:45px;width:45px\" />");
//! ```

use super::js;
use super::strings::{opt, or_undefined};
use crate::expand::{Call, Mode};
use crate::registry::{Family, Registry};

fn html_escape_code(s: &str) -> String {
    s.replace('"', "&quot;")
        .replace('\'', "&#39;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn cbr(c: &mut Call<'_, '_>) -> Option<String> {
    if c.raw_args().is_empty() {
        return Some("\\n".to_owned());
    }
    let n = js::number(c.raw_arg(0));
    let n = if n < 1.0 { 1.0 } else { n };
    if n.is_nan() {
        return Some(String::new());
    }
    if c.too_big((n.min(usize::MAX as f64) as usize).saturating_mul(2)) {
        return None;
    }
    Some("\\n".repeat(n as usize))
}

/// Adds RisuAI's markup and escape functions.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::markup::register(&mut registry);
/// assert!(registry.contains("cbr"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Markup;
    r.register_all(f, &["cbr", "cnl", "cnewline"], cbr);
    let escapes: [(&[&str], &str); 10] = [
        (&["decbo", "displayescapedcurlybracketopen"], "{"),
        (&["decbc", "displayescapedcurlybracketclose"], "}"),
        (
            &["bo", "ddecbo", "doubledisplayescapedcurlybracketopen"],
            "{{",
        ),
        (
            &["bc", "ddecbc", "doubledisplayescapedcurlybracketclose"],
            "}}",
        ),
        (&["displayescapedbracketopen", "debo", "("], "("),
        (&["displayescapedbracketclose", "debc", ")"], ")"),
        (&["displayescapedanglebracketopen", "deabo", "<"], "&lt;"),
        (&["displayescapedanglebracketclose", "deabc", ">"], "&gt;"),
        (&["displayescapedcolon", "dec", ":"], ":"),
        (&["displayescapedsemicolon", ";"], ";"),
    ];
    for (names, text) in escapes {
        r.register_all(f, names, move |_| Some(text.to_owned()));
    }
    r.register_all(f, &["tex", "latex", "katex"], |c| {
        Some(format!("$${}$$", or_undefined(c, 0)))
    });
    r.register_all(f, &["ruby", "furigana"], |c| {
        Some(format!(
            "<ruby>{}<rp> (</rp><rt>{}</rt><rp>) </rp></ruby>",
            or_undefined(c, 0),
            or_undefined(c, 1)
        ))
    });
    r.register_all(f, &["codeblock"], |c| {
        let args = c.raw_args();
        let code = html_escape_code(args.last()?);
        Some(if args.len() > 1 {
            format!(
                "<pre-hljs-placeholder lang=\"{}\">{code}</pre-hljs-placeholder>",
                c.raw_arg(0)
            )
        } else {
            format!("<pre><code>{code}</code></pre>")
        })
    });
    r.register_all(f, &["button"], |c| {
        Some(format!(
            "<button class=\"button-default\" risu-trigger=\"{}\">{}</button>",
            or_undefined(c, 1),
            or_undefined(c, 0)
        ))
    });
    r.register_all(f, &["risu"], |c| {
        let size = match opt(c, 0) {
            Some(s) if !s.is_empty() => s.to_owned(),
            _ => "45".to_owned(),
        };
        Some(format!(
            "<img src=\"/logo2.png\" style=\"height:{size}px;width:{size}px\" />"
        ))
    });
    r.register_all(f, &["file"], |c| {
        if c.mode() == Mode::Display {
            return Some(format!(
                "<br><div class=\"risu-file\">{}</div><br>",
                or_undefined(c, 0)
            ));
        }
        let data: String = opt(c, 1)?
            .chars()
            .filter(|ch| !ch.is_whitespace())
            .collect();
        let bytes = base64_simd::forgiving_decode_to_vec(data.as_bytes()).unwrap_or_default();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    });
}
