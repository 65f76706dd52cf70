//! An MCP server's `tools/call` result as it wrote it, left for the server that serves the call:
//! [`Written`].
//!
//! A toolkit's tools answer with JSON a model reads: an MCP source gives the structured content
//! of a result, else its content blocks. A server that serves such a tool (the gateway) passes
//! the upstream's result on instead: its blocks (text, image, audio, resource links, embedded
//! resources), `structuredContent`, `isError` and `_meta`, unchanged. The served call puts an
//! `Arc<Written>` in its [`CallContext`](crate::CallContext); the MCP source that runs the call
//! leaves its server's result there, with what it made of it; the server passes the result on
//! when the call's outcome is what the source made of it (the tool answered as the source did,
//! not a code-mode run or a search that called it on the way).

use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use crate::{Failure, JsonObject};

/// One call's slot for its server's result, as an `Arc<Written>` extension of its context.
#[derive(Debug, Default)]
pub struct Written {
    left: Mutex<Option<Left>>,
}

/// A result as written, and what the source made of it.
#[derive(Debug)]
struct Left {
    result: JsonObject,
    /// The answer the source gave, or the words of the failure it reported (`isError`).
    made: Result<Value, String>,
}

impl Written {
    /// Leaves `result`, of which the source made `made`. A later result (a call that asked again
    /// with `requestState`) replaces an earlier one.
    pub fn leave(&self, result: JsonObject, made: Result<Value, String>) {
        *self.left.lock().unwrap_or_else(PoisonError::into_inner) = Some(Left { result, made });
    }

    /// Edits the content blocks of the result left with `blocks`, and those of what the source
    /// made of it alike (an answer of blocks, an array; a structured answer, an object, is left
    /// as it is), so that a server that serves a source's results changed (the gateway, serving
    /// an upstream's resource URIs under its own) still finds the result the outcome's, once it
    /// changed that outcome with the same `blocks`.
    pub fn edit_blocks(&self, blocks: impl Fn(&mut Vec<Value>)) {
        let mut left = self.left.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(left) = left.as_mut() else {
            return;
        };
        if let Some(Value::Array(content)) = left.result.get_mut("content") {
            blocks(content);
        }
        if let Ok(Value::Array(made)) = &mut left.made {
            blocks(made);
        }
    }

    /// The result as written, when the call's `outcome` is what the source made of it.
    pub fn take_for(&self, outcome: &Result<Value, Failure>) -> Option<JsonObject> {
        let left = self
            .left
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()?;
        let same = match (outcome, &left.made) {
            (Ok(answer), Ok(made)) => answer == made,
            (Err(failure), Err(words)) => {
                failure.code == "CallFailedError" && failure.message == *words
            }
            _ => false,
        };
        same.then_some(left.result)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn result() -> JsonObject {
        json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn blocks_edited_are_edited_in_the_result_and_in_what_was_made_of_it() {
        let link = json!({"type": "resource_link", "uri": "demo://a", "name": "a"});
        let served = json!({"type": "resource_link", "uri": "demo://s/a", "name": "a"});
        let edit = |blocks: &mut Vec<Value>| {
            for block in blocks {
                block["uri"] = json!("demo://s/a");
            }
        };
        let written = Written::default();
        written.edit_blocks(edit);
        written.leave(
            json!({"content": [link.clone()]})
                .as_object()
                .cloned()
                .unwrap(),
            Ok(json!([link])),
        );
        written.edit_blocks(edit);
        assert_eq!(written.take_for(&Ok(json!([link.clone()]))), None);
        written.leave(
            json!({"content": [link.clone()]})
                .as_object()
                .cloned()
                .unwrap(),
            Ok(json!([link])),
        );
        written.edit_blocks(edit);
        assert_eq!(
            written.take_for(&Ok(json!([served.clone()]))),
            json!({"content": [served]}).as_object().cloned()
        );
        // A structured answer is no blocks: it stays as it was made.
        written.leave(
            json!({"content": [], "structuredContent": {"uri": "x"}})
                .as_object()
                .cloned()
                .unwrap(),
            Ok(json!({"uri": "x"})),
        );
        written.edit_blocks(edit);
        assert!(written.take_for(&Ok(json!({"uri": "x"}))).is_some());
    }

    #[test]
    fn a_result_is_passed_on_only_for_the_outcome_made_of_it() {
        let written = Written::default();
        assert_eq!(written.take_for(&Ok(json!(1))), None);
        written.leave(result(), Ok(json!([1])));
        // A code-mode run's answer is not what the source made: the result stays unused.
        assert_eq!(written.take_for(&Ok(json!({"result": [1]}))), None);
        written.leave(result(), Ok(json!([1])));
        assert_eq!(written.take_for(&Ok(json!([1]))), Some(result()));
        // Taken once.
        assert_eq!(written.take_for(&Ok(json!([1]))), None);
    }

    #[test]
    fn a_failure_is_passed_on_when_it_is_the_tools_own() {
        let written = Written::default();
        written.leave(result(), Err("no such city".into()));
        let other = Failure::new("CallFailedError", "another failure", false);
        assert_eq!(written.take_for(&Err(other)), None);
        written.leave(result(), Err("no such city".into()));
        let timeout = Failure::new("Timeout", "no such city", true);
        assert_eq!(written.take_for(&Err(timeout)), None);
        written.leave(result(), Err("no such city".into()));
        let own = Failure::new("CallFailedError", "no such city", false);
        assert_eq!(written.take_for(&Err(own)), Some(result()));
    }
}
