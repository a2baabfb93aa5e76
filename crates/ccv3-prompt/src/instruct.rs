//! Instruct templates: the prompt as one text for completion models.
//!
//! A template wraps each message (after the merging described in [`crate::render`]) in its role's
//! prefix and suffix, starts with `bos`, and ends with the generation prefix (by default the
//! assistant prefix) followed by the prefill, if any, so the model continues the assistant's turn.
//! With `names` on, history messages that have a speaker name start with `Name: `.
//!
//! Built in: `chatml`, `llama3`, `mistral` (no system role: system text is wrapped like user text)
//! and `alpaca`. A custom template is a JSON file; every key is optional (missing prefixes and
//! suffixes are empty) and unknown keys are an error:
//!
//! ```json
//! {
//!   "name": "vicuna",
//!   "bos": "",
//!   "system": {"prefix": "", "suffix": "\n\n"},
//!   "user": {"prefix": "USER: ", "suffix": "\n"},
//!   "assistant": {"prefix": "ASSISTANT: ", "suffix": "</s>\n"},
//!   "generation": "ASSISTANT:",
//!   "stop": ["USER:", "</s>"],
//!   "names": false
//! }
//! ```
//!
//! `generation` is what the text ends with before the prefill (default: the assistant prefix);
//! `stop` lists strings at which an application should stop generating.

use crate::assemble::Assembled;
use crate::chat::Role;
use crate::error::Error;
use crate::render::Message;
use serde::{Deserialize, Serialize};

/// The largest instruct template file read (1 MiB).
pub const MAX_INSTRUCT_BYTES: usize = 1024 * 1024;

/// The text around one role's messages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Wrap {
    /// Before the message.
    pub prefix: String,
    /// After the message.
    pub suffix: String,
}

impl Wrap {
    fn new(prefix: &str, suffix: &str) -> Self {
        Wrap {
            prefix: prefix.into(),
            suffix: suffix.into(),
        }
    }
}

/// An instruct template (see the module docs for the JSON format).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InstructTemplate {
    /// The template's name.
    pub name: String,
    /// Text at the very start.
    pub bos: String,
    /// System messages.
    pub system: Wrap,
    /// User messages.
    pub user: Wrap,
    /// Assistant messages.
    pub assistant: Wrap,
    /// The text the prompt ends with before the prefill; `None` = the assistant prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
    /// Strings at which generation should stop.
    pub stop: Vec<String>,
    /// Whether history messages start with `Name: `.
    pub names: bool,
}

impl InstructTemplate {
    /// The names of the built-in templates.
    pub const BUILTIN: [&'static str; 4] = ["chatml", "llama3", "mistral", "alpaca"];

    /// ChatML (`<|im_start|>role ... <|im_end|>`).
    pub fn chatml() -> Self {
        InstructTemplate {
            name: "chatml".into(),
            system: Wrap::new("<|im_start|>system\n", "<|im_end|>\n"),
            user: Wrap::new("<|im_start|>user\n", "<|im_end|>\n"),
            assistant: Wrap::new("<|im_start|>assistant\n", "<|im_end|>\n"),
            stop: vec!["<|im_end|>".into()],
            ..Default::default()
        }
    }

    /// Llama 3 (`<|start_header_id|>role<|end_header_id|>` ... `<|eot_id|>`).
    pub fn llama3() -> Self {
        let header = |r: &str| format!("<|start_header_id|>{r}<|end_header_id|>\n\n");
        InstructTemplate {
            name: "llama3".into(),
            bos: "<|begin_of_text|>".into(),
            system: Wrap::new(&header("system"), "<|eot_id|>"),
            user: Wrap::new(&header("user"), "<|eot_id|>"),
            assistant: Wrap::new(&header("assistant"), "<|eot_id|>"),
            stop: vec!["<|eot_id|>".into()],
            ..Default::default()
        }
    }

    /// Mistral (`[INST] ... [/INST]`; system text wrapped like user text).
    pub fn mistral() -> Self {
        InstructTemplate {
            name: "mistral".into(),
            bos: "<s>".into(),
            system: Wrap::new("[INST] ", " [/INST]"),
            user: Wrap::new("[INST] ", " [/INST]"),
            assistant: Wrap::new("", "</s>"),
            stop: vec!["</s>".into(), "[INST]".into()],
            ..Default::default()
        }
    }

    /// Alpaca (`### Instruction:` / `### Response:`).
    pub fn alpaca() -> Self {
        InstructTemplate {
            name: "alpaca".into(),
            system: Wrap::new("", "\n\n"),
            user: Wrap::new("### Instruction:\n", "\n\n"),
            assistant: Wrap::new("### Response:\n", "\n\n"),
            stop: vec!["### Instruction:".into()],
            ..Default::default()
        }
    }

    /// A built-in template by name (ASCII case-insensitive).
    pub fn builtin(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "chatml" => Some(Self::chatml()),
            "llama3" | "llama-3" => Some(Self::llama3()),
            "mistral" => Some(Self::mistral()),
            "alpaca" => Some(Self::alpaca()),
            _ => None,
        }
    }

    /// Reads a custom template from JSON text.
    ///
    /// # Errors
    /// [`Error::Instruct`] for JSON that is not a template (unknown keys included),
    /// [`Error::Limit`] above [`MAX_INSTRUCT_BYTES`].
    ///
    /// ```
    /// let t = ccv3_prompt::InstructTemplate::from_json(
    ///     r#"{"name":"plain","user":{"prefix":"Q: ","suffix":"\n"},"assistant":{"prefix":"A: ","suffix":"\n"}}"#)?;
    /// assert_eq!(t.user.prefix, "Q: ");
    /// assert!(ccv3_prompt::InstructTemplate::from_json(r#"{"usr":{}}"#).is_err());
    /// # Ok::<(), ccv3_prompt::Error>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Self, Error> {
        if text.len() > MAX_INSTRUCT_BYTES {
            return Err(Error::Limit {
                what: "instruct template".into(),
                size: text.len() as u64,
                limit: MAX_INSTRUCT_BYTES as u64,
            });
        }
        serde_json::from_str(text).map_err(|e| Error::Instruct {
            name: "custom".into(),
            problem: e.to_string(),
        })
    }

    /// A built-in template by name, else a template file at that path (`--instruct`).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read, else as [`InstructTemplate::from_json`].
    pub fn load(name_or_path: &str) -> Result<Self, Error> {
        if let Some(t) = Self::builtin(name_or_path) {
            return Ok(t);
        }
        let path = std::path::Path::new(name_or_path);
        let text = crate::file::read_capped(path, MAX_INSTRUCT_BYTES, "instruct template")?;
        let mut t = Self::from_json(&text).map_err(|e| match e {
            Error::Instruct { problem, .. } => Error::Instruct {
                name: path.display().to_string(),
                problem,
            },
            other => other,
        })?;
        if t.name.is_empty() {
            t.name = path.display().to_string();
        }
        Ok(t)
    }

    fn wrap(&self, role: Role) -> &Wrap {
        match role {
            Role::System => &self.system,
            Role::User => &self.user,
            Role::Assistant => &self.assistant,
        }
    }

    /// How `{{mesExamples}}` shapes the card's example messages under this template, as
    /// SillyTavern does in instruct mode (`public/scripts/instruct-mode.js`,
    /// `formatInstructModeExamples`): each message wrapped in the user's or the assistant's
    /// prefix and suffix (they carry their own newlines, so no `wrap`), the speaker's name
    /// written before it when the template writes names.
    ///
    /// ```
    /// use ccv3_cbs::ExampleFormat;
    /// use ccv3_prompt::InstructTemplate;
    /// let ExampleFormat::Instruct(t) = InstructTemplate::chatml().example_format() else { panic!() };
    /// assert_eq!(t.input_sequence, "<|im_start|>user\n");
    /// ```
    pub fn example_format(&self) -> ccv3_cbs::ExampleFormat {
        ccv3_cbs::ExampleFormat::Instruct(ccv3_cbs::InstructExamples {
            separator: String::new(),
            input_sequence: self.user.prefix.clone(),
            input_suffix: self.user.suffix.clone(),
            output_sequence: self.assistant.prefix.clone(),
            output_suffix: self.assistant.suffix.clone(),
            wrap: false,
            macros: false,
            names: if self.names {
                ccv3_cbs::NamesBehavior::Always
            } else {
                ccv3_cbs::NamesBehavior::None
            },
            skip_examples: false,
        })
    }

    /// Renders messages and an optional prefill as one text.
    pub fn render_messages(&self, messages: &[Message], prefill: Option<&str>) -> String {
        let mut out = String::new();
        out.push_str(&self.bos);
        for m in messages {
            let w = self.wrap(m.role);
            out.push_str(&w.prefix);
            if self.names {
                if let Some(n) = m.name.as_deref().filter(|n| !n.is_empty()) {
                    out.push_str(n);
                    out.push_str(": ");
                }
            }
            out.push_str(&m.content);
            out.push_str(&w.suffix);
        }
        out.push_str(self.generation.as_deref().unwrap_or(&self.assistant.prefix));
        if let Some(p) = prefill {
            out.push_str(p);
        }
        out
    }

    /// Renders an assembled prompt (its [`messages`](Assembled::messages) and
    /// [`prefill`](Assembled::prefill)) as one text.
    ///
    /// ```
    /// use ccv3_prompt::{Assembled, InstructTemplate};
    /// assert_eq!(InstructTemplate::chatml().render(&Assembled::default()), "<|im_start|>assistant\n");
    /// ```
    pub fn render(&self, assembled: &Assembled) -> String {
        self.render_messages(&assembled.messages(), assembled.prefill().as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Message> {
        vec![
            Message {
                role: Role::System,
                content: "SYS".into(),
                name: None,
            },
            Message {
                role: Role::Assistant,
                content: "Hello".into(),
                name: Some("Bot".into()),
            },
            Message {
                role: Role::User,
                content: "Hi".into(),
                name: Some("Ann".into()),
            },
        ]
    }

    #[test]
    fn instruct_chatml_golden() {
        assert_eq!(
            InstructTemplate::chatml().render_messages(&sample(), None),
            "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn instruct_llama3_golden() {
        assert_eq!(
            InstructTemplate::llama3().render_messages(&sample(), None),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nSYS<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
    }

    #[test]
    fn instruct_mistral_golden() {
        assert_eq!(
            InstructTemplate::mistral().render_messages(&sample(), None),
            "<s>[INST] SYS [/INST]Hello</s>[INST] Hi [/INST]"
        );
    }

    #[test]
    fn instruct_alpaca_golden() {
        assert_eq!(
            InstructTemplate::alpaca().render_messages(&sample(), None),
            "SYS\n\n### Response:\nHello\n\n### Instruction:\nHi\n\n### Response:\n"
        );
    }

    #[test]
    fn instruct_prefill_continues_the_generation_prefix() {
        assert_eq!(
            InstructTemplate::chatml().render_messages(&[], Some("Sure,")),
            "<|im_start|>assistant\nSure,"
        );
    }

    #[test]
    fn instruct_custom_template_from_json_with_names_and_generation() {
        let t = InstructTemplate::from_json(
            r#"{"name":"vicuna","system":{"suffix":"\n\n"},"user":{"prefix":"USER: ","suffix":"\n"},
                "assistant":{"prefix":"ASSISTANT: ","suffix":"</s>\n"},"generation":"ASSISTANT:",
                "stop":["USER:"],"names":true}"#,
        )
        .unwrap();
        assert_eq!(
            t.render_messages(&sample(), None),
            "SYS\n\nASSISTANT: Bot: Hello</s>\nUSER: Ann: Hi\nASSISTANT:"
        );
        assert_eq!(t.stop, ["USER:"]);
    }

    #[test]
    fn instruct_unknown_key_and_bad_json_are_errors() {
        assert!(InstructTemplate::from_json(r#"{"user":{"prefx":"x"}}"#).is_err());
        assert!(InstructTemplate::from_json("[").is_err());
        assert!(InstructTemplate::load("/nonexistent/ccv3-template.json").is_err());
    }

    #[test]
    fn instruct_builtin_names_resolve() {
        for n in InstructTemplate::BUILTIN {
            assert_eq!(InstructTemplate::load(n).unwrap().name, n);
        }
    }
}
