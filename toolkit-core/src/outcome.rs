//! What a call gave, with its server's result as written: [`Outcome`].
//!
//! A toolkit's tools answer with JSON a model reads: an MCP source gives the structured content
//! of a result, else its content blocks. A server that serves such a tool (the gateway) passes
//! the upstream's result on instead: its blocks (text, image, audio, resource links, embedded
//! resources), `structuredContent`, `isError` and `_meta`, unchanged. So a call can give, beside
//! its answer, the result its answer was made of ([`ToolSource::call_outcome`](crate::ToolSource::call_outcome),
//! [`Tool::call_outcome`](crate::Tool::call_outcome)). A source that wraps another and changes
//! nothing of the answer forwards it; one that changes the answer edits both or drops the
//! result; a tool whose answer is its own (a code-mode run) gives none.

use serde_json::Value;

use crate::JsonObject;

/// What a call gave: its answer (`E` is [`ToolSourceError`](crate::ToolSourceError) for a
/// source, [`Failure`](crate::Failure) for a tool), and the result its server wrote, when the
/// answer was made of one.
///
/// `written` is `Some` only when `answer` is what the source made of it: the result's answer,
/// or the words of the failure the result reported (`isError`).
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{Failure, Outcome};
///
/// let made: Outcome<Failure> = Outcome::from(Ok(json!([1])));
/// assert_eq!(made.written, None);
/// assert_eq!(made.answer, Ok(json!([1])));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome<E> {
    /// The answer, or the failure a model reads.
    pub answer: Result<Value, E>,
    /// The server's result, as it wrote it, that `answer` was made of.
    pub written: Option<JsonObject>,
}

impl<E> Outcome<E> {
    /// The same outcome with its failure mapped by `f`.
    pub fn map_err<F>(self, f: impl FnOnce(E) -> F) -> Outcome<F> {
        Outcome {
            answer: self.answer.map_err(f),
            written: self.written,
        }
    }

    /// Edits the content blocks of the answer with `blocks`, and those of the written result
    /// alike: an answer of blocks is an array; a structured answer, an object, is data and stays
    /// as it is.
    pub fn edit_blocks(&mut self, blocks: impl Fn(&mut Vec<Value>)) {
        if let Some(Value::Array(content)) = self
            .written
            .as_mut()
            .and_then(|written| written.get_mut("content"))
        {
            blocks(content);
        }
        if let Ok(Value::Array(answer)) = &mut self.answer {
            blocks(answer);
        }
    }
}

impl<E> From<Result<Value, E>> for Outcome<E> {
    /// An answer made of no written result.
    fn from(answer: Result<Value, E>) -> Self {
        Self {
            answer,
            written: None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::Failure;

    #[test]
    fn blocks_edited_are_edited_in_the_result_and_in_the_answer() {
        let link = json!({"type": "resource_link", "uri": "demo://a", "name": "a"});
        let served = json!({"type": "resource_link", "uri": "demo://s/a", "name": "a"});
        let edit = |blocks: &mut Vec<Value>| {
            for block in blocks {
                block["uri"] = json!("demo://s/a");
            }
        };
        let mut outcome: Outcome<Failure> = Outcome {
            answer: Ok(json!([link.clone()])),
            written: json!({"content": [link]}).as_object().cloned(),
        };
        outcome.edit_blocks(edit);
        assert_eq!(outcome.answer, Ok(json!([served.clone()])));
        assert_eq!(
            outcome.written,
            json!({"content": [served]}).as_object().cloned()
        );
        // A structured answer is no blocks: it stays as it was made.
        let mut structured: Outcome<Failure> = Outcome {
            answer: Ok(json!({"uri": "x"})),
            written: json!({"content": [], "structuredContent": {"uri": "x"}})
                .as_object()
                .cloned(),
        };
        let before = structured.clone();
        structured.edit_blocks(edit);
        assert_eq!(structured, before);
    }
}
