//! The check of a served answer against its tool's `outputSchema`: [`OutputCheck`].
//!
//! MCP says a server whose tool declares an `outputSchema` must answer with `structuredContent`
//! that conforms to it, and a client may refuse any other (the TypeScript SDK's client throws).
//! An API's answer drifts from its document now and then, so a served answer that does not
//! conform becomes an error result (`isError: true`) that says where it does not conform (a
//! JSON pointer into the answer, with what was expected; never an address or a credential) and
//! carries the answer as text (cut to [`MAX_ANSWER_TEXT`] characters), so the model reads both. An answer
//! that conforms is served as any other (text, and `structuredContent`).
//!
//! Formats and patterns are not checked (as for inputs). A schema that cannot be compiled
//! checks nothing. Results an MCP source wrote, passed through as written, are the upstream
//! server's to make conform and are not checked here.

use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

use toolkit_core::JsonObject;
use toolkit_core::text::cut_for_echo;

/// How many places that do not conform a failure names; the rest are counted.
const NAMED: usize = 3;

/// The most characters (UTF-16 code units) of the answer an error result carries: the HTTP
/// source's default answer cap, so that an answer an API may give is carried whole.
pub(crate) const MAX_ANSWER_TEXT: usize = 200_000;

/// The check of one tool's answers, compiled on the first answer.
#[derive(Debug)]
pub(crate) struct OutputCheck {
    schema: Arc<JsonObject>,
    validator: OnceLock<Option<Validator>>,
}

impl OutputCheck {
    /// The check of answers against `schema`, compiled when first used.
    pub(crate) fn new(schema: Arc<JsonObject>) -> Self {
        Self {
            schema,
            validator: OnceLock::new(),
        }
    }

    /// `Ok` when `answer` conforms (or the schema could not be compiled), else the text of the
    /// error result: where it does not conform, then the whole answer.
    pub(crate) fn check(&self, answer: &Value) -> Result<(), String> {
        let validator = self.validator.get_or_init(|| {
            toolkit_core::input::compile(&Value::Object((*self.schema).clone()))
                .inspect_err(|error| {
                    tracing::debug!(%error, "a tool's output schema could not be compiled; answers are not checked");
                })
                .ok()
        });
        let Some(validator) = validator else {
            return Ok(());
        };
        if validator.is_valid(answer) {
            return Ok(());
        }
        let mut named = Vec::new();
        let mut more = 0_usize;
        for error in validator.iter_errors(answer) {
            if named.len() < NAMED {
                let at = error.instance_path().as_str();
                let at = if at.is_empty() { "the root" } else { at };
                named.push(format!("at {at}: {}", cut_for_echo(&error.to_string())));
            } else {
                more += 1;
            }
        }
        let mut text = format!(
            "The API's answer does not match the tool's output schema ({})",
            named.join("; ")
        );
        if more > 0 {
            text.push_str(&format!(" and {more} more place(s)"));
        }
        let whole = match answer {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        if toolkit_core::text::utf16_length(&whole) > MAX_ANSWER_TEXT {
            text.push_str(&format!(
                ". The answer, cut to its first {MAX_ANSWER_TEXT} characters:\n"
            ));
            text.push_str(&toolkit_core::text::cut_utf16(&whole, MAX_ANSWER_TEXT));
        } else {
            text.push_str(". The whole answer:\n");
            text.push_str(&whole);
        }
        Err(text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn check() -> OutputCheck {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        OutputCheck::new(Arc::new(schema.as_object().cloned().unwrap()))
    }

    #[test]
    fn an_answer_that_does_not_fit_is_carried_whole_up_to_the_cap() {
        let text = check().check(&json!({"name": 7})).unwrap_err();
        assert!(text.ends_with("The whole answer:\n{\"name\":7}"), "{text}");
        let long = "a".repeat(MAX_ANSWER_TEXT);
        let text = check()
            .check(&json!({"name": 7, "more": long}))
            .unwrap_err();
        let (_, carried) = text
            .split_once(&format!("cut to its first {MAX_ANSWER_TEXT} characters:\n"))
            .unwrap();
        assert_eq!(carried.chars().count(), MAX_ANSWER_TEXT + 1);
        assert!(carried.starts_with("{\"name\":7,\"more\":\"aaa") && carried.ends_with('…'));
        assert!(check().check(&json!({"name": "Rex"})).is_ok());
    }
}
