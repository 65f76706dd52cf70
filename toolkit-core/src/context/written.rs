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
