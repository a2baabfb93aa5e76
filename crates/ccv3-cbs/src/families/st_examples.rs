//! SillyTavern's `{{mesExamples}}` and `{{mesExamplesRaw}}` (the `sillytavern` dialect), as
//! SillyTavern 1.19.0 builds them (`public/scripts/macros/definitions/env-macros.js`, with
//! `parseMesExamples` in `public/script.js`, `formatInstructModeExamples` in
//! `public/scripts/instruct-mode.js` and `parseExampleIntoIndividual` in
//! `public/scripts/openai.js`):
//!
//! - `{{mesExamplesRaw}}`: the card's `mes_example`, trimmed, its macros expanded.
//! - `{{mesExamples}}`: that text cut into blocks at each `<START>` (any case; text before the
//!   first one is a block too, unless the text starts with `<START>`), each block trimmed and
//!   ended with a newline, headed as the [`ExampleFormat`] says:
//!   - [`ExampleFormat::ChatCompletion`] (SillyTavern's default API): `<START>\n`;
//!   - [`ExampleFormat::TextCompletion`]: the context template's example separator and a
//!     newline (nothing without a separator);
//!   - [`ExampleFormat::Instruct`]: each block split into messages at lines starting with
//!     `USER:` / `CHAR:` (the names; the name and colon are taken out, lines before the first
//!     speaker join the first message), each message wrapped in the input or output sequence
//!     and suffix, the names written before the text when [`NamesBehavior`] asks, the block
//!     headed by the separator line. `skip_examples` keeps the blocks and only swaps the
//!     `<START>` heading for the separator line.
//!
//! ```
//! use ccv3_cbs::families::st_examples::{ExampleFormat, InstructExamples};
//! use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables};
//! let ctx = Context::new()
//!     .with_char_name("Alice")
//!     .with_user_name("Bob")
//!     .with_mes_examples("  {{user}}: Hi\n{{char}}: Hello\n<START>\nBob: Bye  ");
//! let run = |ctx: &Context, text: &str| {
//!     let reg = Registry::dialect_ref(Dialect::SillyTavern);
//!     Template::parse(text)
//!         .expand_with(reg, &Limits::default(), ctx, &mut Variables::new(), Mode::Prompt)
//!         .text
//! };
//! assert_eq!(run(&ctx, "{{mesExamplesRaw}}"), "Bob: Hi\nAlice: Hello\n<START>\nBob: Bye");
//! assert_eq!(
//!     run(&ctx, "{{mesExamples}}"),
//!     "<START>\nBob: Hi\nAlice: Hello\n<START>\nBob: Bye\n"
//! );
//! let text = ctx.clone().with_example_format(ExampleFormat::TextCompletion {
//!     separator: "***".into(),
//! });
//! assert_eq!(run(&text, "{{mesExamples}}"), "***\nBob: Hi\nAlice: Hello\n***\nBob: Bye\n");
//! let instruct = ctx.clone().with_example_format(ExampleFormat::Instruct(InstructExamples {
//!     input_sequence: "[INST]".into(),
//!     output_sequence: "[OUT]".into(),
//!     wrap: true,
//!     ..InstructExamples::default()
//! }));
//! assert_eq!(
//!     run(&instruct, "{{mesExamples}}"),
//!     "[INST]\nHi[OUT]\nHello[INST]\nBye"
//! );
//! ```

/// How `{{mesExamples}}` heads and shapes the example blocks (SillyTavern's API and instruct
/// settings). See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ExampleFormat {
    /// Chat completion (SillyTavern's `openai` API, its default): blocks headed `<START>`.
    #[default]
    ChatCompletion,
    /// Text completion with a context template: blocks headed by its example separator.
    TextCompletion {
        /// The context template's `example_separator` (empty: no heading).
        separator: String,
    },
    /// Text completion in instruct mode: messages wrapped in the instruct sequences.
    Instruct(InstructExamples),
}

/// When instruct-formatted examples write the speaker's name before the text (SillyTavern's
/// `names_behavior`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NamesBehavior {
    /// Never (`none`).
    #[default]
    None,
    /// The user's name only (`force`, outside groups).
    Force,
    /// Always (`always`).
    Always,
}

/// The instruct template's settings `{{mesExamples}}` reads (SillyTavern's `power_user.instruct`
/// and the context template's `example_separator`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstructExamples {
    /// The context template's `example_separator`: each block's heading line (empty: none).
    pub separator: String,
    /// Before each user message (`input_sequence`).
    pub input_sequence: String,
    /// After each user message (`input_suffix`).
    pub input_suffix: String,
    /// Before each character message (`output_sequence`).
    pub output_sequence: String,
    /// After each character message (`output_suffix`).
    pub output_suffix: String,
    /// `wrap`: a newline between a sequence and its message.
    pub wrap: bool,
    /// `macro`: macros in the sequences are expanded (`{{name}}` is the speaker's name), and an
    /// empty suffix becomes a newline when `wrap` is on.
    pub macros: bool,
    /// `names_behavior`.
    pub names: NamesBehavior,
    /// `skip_examples`: blocks are not split into messages.
    pub skip_examples: bool,
}

/// `parseMesExamples`: the blocks of `raw` (already trimmed and expanded), each headed by
/// `heading` and ended with a newline.
pub(crate) fn blocks(raw: &str, heading: &str) -> Vec<String> {
    if raw.is_empty() || raw == "<START>" {
        return Vec::new();
    }
    let owned;
    let text = if raw.starts_with("<START>") {
        raw
    } else {
        owned = format!("<START>\n{}", raw.trim());
        &owned
    };
    split_start(text)
        .skip(1)
        .map(|block| format!("{heading}{}\n", block.trim()))
        .collect()
}

/// `text.split(/<START>/gi)`.
fn split_start(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let r = rest?;
        match find_start(r) {
            Some(i) => {
                rest = r.get(i + 7..);
                r.get(..i)
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// The byte index of the first `<START>` in any ASCII case.
fn find_start(s: &str) -> Option<usize> {
    s.as_bytes()
        .windows(7)
        .position(|w| w.eq_ignore_ascii_case(b"<START>"))
}

/// One example message: from the user, and its text.
struct Example {
    user: bool,
    text: String,
}

/// `parseExampleIntoIndividual` outside groups: the block's lines after the first (its
/// heading), cut where a line starts with `USER:` or `CHAR:`.
fn messages(block: &str, user: &str, char: &str) -> Vec<Example> {
    let (user_tag, char_tag) = (format!("{user}:"), format!("{char}:"));
    let mut out = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    let mut speaker: Option<bool> = None;
    let flush = |lines: &mut Vec<&str>, is_user: bool, out: &mut Vec<Example>| {
        let tag = if is_user { &user_tag } else { &char_tag };
        let text = lines.join("\n").replacen(tag.as_str(), "", 1);
        out.push(Example {
            user: is_user,
            text: text.trim().to_owned(),
        });
        lines.clear();
    };
    for line in block.split('\n').skip(1) {
        if line.starts_with(&user_tag) {
            if speaker == Some(false) {
                flush(&mut lines, false, &mut out);
            }
            speaker = Some(true);
        } else if line.starts_with(&char_tag) {
            if speaker == Some(true) {
                flush(&mut lines, true, &mut out);
            }
            speaker = Some(false);
        }
        lines.push(line);
    }
    if let Some(is_user) = speaker {
        flush(&mut lines, is_user, &mut out);
    }
    out
}

/// `{{mesExamples}}`: `raw` (trimmed, expanded) formatted as `format` says. `expand` expands
/// an instruct sequence's macros (with `{{name}}` already replaced).
pub(crate) fn format(
    raw: &str,
    format: &ExampleFormat,
    user: &str,
    char: &str,
    mut expand: impl FnMut(&str) -> String,
) -> String {
    if raw.is_empty() {
        return String::new();
    }
    let t = match format {
        ExampleFormat::ChatCompletion => return blocks(raw, "<START>\n").concat(),
        ExampleFormat::TextCompletion { separator } => {
            return blocks(raw, &heading(separator)).concat()
        }
        ExampleFormat::Instruct(t) => t,
    };
    let items = blocks(raw, "<START>\n");
    let heading = heading(&t.separator);
    let swap_heading = |items: &[String]| -> String {
        items
            .iter()
            .map(|x| replace_start_line(x, &heading))
            .collect()
    };
    if t.skip_examples {
        return swap_heading(&items);
    }
    let mut seq = [
        t.input_sequence.clone(),
        t.output_sequence.clone(),
        t.input_suffix.clone(),
        t.output_suffix.clone(),
    ];
    if t.macros {
        for (i, s) in seq.iter_mut().enumerate() {
            let name = if i % 2 == 0 { user } else { char };
            *s = expand(&replace_name(s, name));
            if i >= 2 && s.is_empty() && t.wrap {
                *s = "\n".to_owned();
            }
        }
    }
    let [in_prefix, out_prefix, in_suffix, out_suffix] = &seq;
    let joiner = if t.wrap { "\n" } else { "" };
    let mut out = String::new();
    let mut any = false;
    for item in &items {
        let cleaned = replace_start(item, "{Example Dialogue:}").replace('\r', "");
        let examples = messages(&cleaned, user, char);
        if examples.is_empty() {
            continue;
        }
        out.push_str(&heading);
        for e in examples {
            any = true;
            let (prefix, suffix, name) = if e.user {
                (in_prefix, in_suffix, user)
            } else {
                (out_prefix, out_suffix, char)
            };
            let named =
                t.names == NamesBehavior::Always || (t.names == NamesBehavior::Force && e.user);
            let body = if named {
                format!("{name}: {}{suffix}", e.text)
            } else {
                format!("{}{suffix}", e.text)
            };
            let parts: Vec<&str> = [prefix.as_str(), body.as_str()]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect();
            out.push_str(&parts.join(joiner));
        }
    }
    if !any {
        return swap_heading(&items);
    }
    out
}

/// A separator as a heading line: `SEP\n`, or nothing.
fn heading(separator: &str) -> String {
    if separator.is_empty() {
        String::new()
    } else {
        format!("{separator}\n")
    }
}

/// `x.replace(/<START>/i, with)`: the first `<START>` in any case.
fn replace_start(s: &str, with: &str) -> String {
    match find_start(s) {
        Some(i) => format!("{}{with}{}", &s[..i], &s[i + 7..]),
        None => s.to_owned(),
    }
}

/// `x.replace(/<START>\n/i, with)`.
fn replace_start_line(s: &str, with: &str) -> String {
    let at = s
        .as_bytes()
        .windows(8)
        .position(|w| w.eq_ignore_ascii_case(b"<START>\n"));
    match at {
        Some(i) => format!("{}{with}{}", &s[..i], &s[i + 8..]),
        None => s.to_owned(),
    }
}

/// `s.replace(/{{name}}/gi, name)`.
fn replace_name(s: &str, name: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest
        .as_bytes()
        .windows(8)
        .position(|w| w.eq_ignore_ascii_case(b"{{name}}"))
    {
        out.push_str(&rest[..i]);
        out.push_str(name);
        rest = &rest[i + 8..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // SillyTavern 1.19.0 `public/script.js` `parseMesExamples`.
    #[test]
    fn sillytavern_parse_mes_examples_blocks() {
        assert!(blocks("", "<START>\n").is_empty());
        assert!(blocks("<START>", "<START>\n").is_empty());
        assert_eq!(
            blocks("a\n<start>\nb", "<START>\n"),
            ["<START>\na\n", "<START>\nb\n"]
        );
        assert_eq!(blocks("<START>\n<START>\nb", ""), ["\n", "b\n"]);
        // Text before the first <START> is dropped when the text starts with it.
        assert_eq!(blocks("<START>x<START>y", "*\n"), ["*\nx\n", "*\ny\n"]);
    }

    // SillyTavern 1.19.0 `public/scripts/openai.js` `parseExampleIntoIndividual` and
    // `public/scripts/instruct-mode.js` `formatInstructModeExamples`.
    #[test]
    fn sillytavern_instruct_examples() {
        let raw = "Note\nBob: Hi\nthere\nBob: again\nAlice: Hello";
        let t = InstructExamples {
            separator: "### Example".into(),
            input_sequence: "<|user|>".into(),
            output_sequence: "<|{{name}}|>".into(),
            macros: true,
            wrap: true,
            names: NamesBehavior::Force,
            ..InstructExamples::default()
        };
        let f = ExampleFormat::Instruct(t.clone());
        let out = format(raw, &f, "Bob", "Alice", |s| s.to_owned());
        assert_eq!(
            out,
            "### Example\n<|user|>\nBob: Note\n Hi\nthere\nBob: again\n<|Alice|>\nHello\n"
        );
        let always = ExampleFormat::Instruct(InstructExamples {
            names: NamesBehavior::Always,
            macros: false,
            ..t.clone()
        });
        assert_eq!(
            format("Bob: Hi\nAlice: Yo", &always, "Bob", "Alice", |s| s
                .to_owned()),
            "### Example\n<|user|>\nBob: Hi<|{{name}}|>\nAlice: Yo"
        );
        // No speaker lines: the blocks as they are, headed by the separator.
        assert_eq!(
            format("just text", &f, "Bob", "Alice", |s| s.to_owned()),
            "### Example\njust text\n"
        );
        let skip = ExampleFormat::Instruct(InstructExamples {
            skip_examples: true,
            ..t
        });
        assert_eq!(
            format("Bob: Hi", &skip, "Bob", "Alice", |s| s.to_owned()),
            "### Example\nBob: Hi\n"
        );
    }

    #[test]
    fn sillytavern_examples_text_completion() {
        let f = ExampleFormat::TextCompletion {
            separator: String::new(),
        };
        assert_eq!(format("a<START>b", &f, "", "", |s| s.to_owned()), "a\nb\n");
        assert_eq!(format("", &f, "", "", |s| s.to_owned()), "");
    }
}
