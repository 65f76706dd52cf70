//! What MCP results become: a `tools/list` page becomes definitions (and the marks of each tool),
//! a `tools/call` result becomes the JSON a model reads or the reason it failed.

use serde_json::Value;

use toolkit_core::{JsonObject, Reason};

/// The most characters of a server's own words that a model reads in a failure.
pub(crate) const MAX_SERVER_WORDS: usize = 500;

/// One page of `tools/list`.
#[derive(Debug, Default)]
pub(crate) struct Page {
    /// The tools of the page as the server wrote them.
    pub tools: Vec<Value>,
    /// The cursor of the next page, when there is one (the empty string is a cursor).
    pub next_cursor: Option<String>,
}

/// Reads a `tools/list` result.
pub(crate) fn page(result: &JsonObject) -> Result<Page, Reason> {
    let tools = match result.get("tools") {
        Some(Value::Array(tools)) => tools.clone(),
        _ => {
            return Err(Reason::invalid_response(
                "a tools/list result without a `tools` array",
            ));
        }
    };
    let next_cursor = match result.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor.clone()),
        Some(_) => {
            return Err(Reason::invalid_response(
                "a tools/list result whose nextCursor is no string",
            ));
        }
    };
    Ok(Page { tools, next_cursor })
}

/// What a `tools/call` result says.
#[derive(Debug, PartialEq)]
pub(crate) enum Called {
    /// The tool's answer.
    Answer(Value),
    /// The server asks for input first (`input_required`), and what it asks.
    InputRequired(crate::input_required::Asked),
    /// The tool failed.
    Failed(Reason),
}

/// Reads a `tools/call` result.
pub(crate) fn called(result: JsonObject) -> Called {
    match result.get("resultType").map(|kind| kind.as_str()) {
        None | Some(Some("complete")) => {}
        Some(Some("input_required")) => {
            return match crate::input_required::asked(&result) {
                Ok(asked) => Called::InputRequired(asked),
                Err(reason) => Called::Failed(reason),
            };
        }
        Some(other) => {
            return Called::Failed(Reason::invalid_response(format!(
                "a tools/call result of an unknown resultType {:?}",
                other.unwrap_or("(not a string)")
            )));
        }
    }
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut result = result;
    let content = match result.remove("content") {
        None | Some(Value::Null) => Value::Array(Vec::new()),
        Some(content @ Value::Array(_)) => content,
        Some(_) => {
            return Called::Failed(Reason::invalid_response(
                "a tools/call result whose content is no array",
            ));
        }
    };
    if is_error {
        return Called::Failed(Reason::call_failed(failure_text(&content)));
    }
    match result.remove("structuredContent") {
        Some(structured) if !structured.is_null() => Called::Answer(structured),
        _ => Called::Answer(content),
    }
}

/// What a model reads of a tool that reported `isError`: the text it said.
fn failure_text(content: &Value) -> String {
    let text: Vec<&str> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    if text.is_empty() {
        "The tool failed without saying why.".to_owned()
    } else {
        toolkit_core::text::cut_utf16(&text.join("\n"), MAX_SERVER_WORDS * 4)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn structured_content_wins_over_blocks() {
        let result = object(
            json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"a": 1}}),
        );
        assert_eq!(called(result), Called::Answer(json!({"a": 1})));
    }

    #[test]
    fn blocks_are_given_as_written_and_missing_content_is_empty() {
        let blocks = json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}]);
        assert_eq!(
            called(object(json!({"content": blocks.clone()}))),
            Called::Answer(blocks)
        );
        assert_eq!(called(object(json!({}))), Called::Answer(json!([])));
    }

    #[test]
    fn is_error_is_a_failed_call_with_the_tools_words() {
        let result =
            object(json!({"isError": true, "content": [{"type": "text", "text": "no such city"}]}));
        assert_eq!(
            called(result),
            Called::Failed(Reason::call_failed("no such city"))
        );
    }

    #[test]
    fn input_required_is_what_it_asks_and_unknown_kinds_are_invalid() {
        let asks = object(
            json!({"resultType": "input_required", "inputRequests": {"a": {"method": "elicitation/create"}}}),
        );
        let Called::InputRequired(asked) = called(asks) else {
            panic!("not read as input_required");
        };
        assert_eq!(asked.requests.len(), 1);
        assert_eq!(asked.request_state, None);
        let state = object(json!({"resultType": "input_required", "requestState": "abc"}));
        let Called::InputRequired(asked) = called(state) else {
            panic!("not read as input_required");
        };
        assert_eq!(asked.request_state, Some(json!("abc")));
        let empty = object(json!({"resultType": "input_required"}));
        assert!(matches!(
            called(empty),
            Called::Failed(Reason::InvalidResponse { .. })
        ));
        let unknown = object(json!({"resultType": "task"}));
        assert!(matches!(
            called(unknown),
            Called::Failed(Reason::InvalidResponse { .. })
        ));
    }

    #[test]
    fn pages_keep_an_empty_cursor() {
        let page = page(&object(json!({"tools": [], "nextCursor": ""}))).unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some(""));
        assert!(super::page(&object(json!({"nextCursor": "x"}))).is_err());
    }
}
