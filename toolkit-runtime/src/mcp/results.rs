//! What MCP results become: a `tools/list` page becomes definitions (and the marks of each tool),
//! a `tools/call` result becomes the JSON a model reads or the reason it failed.

use serde_json::Value;

use crate::mcp::headers::{self, Mark};
use toolkit_core::Annotations;
use toolkit_core::{JsonObject, Reason, ToolDefinition};

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

/// A tool of a listing, as this source uses it.
#[derive(Debug)]
pub(crate) struct Listed {
    pub definition: ToolDefinition,
    pub marks: Vec<Mark>,
}

/// A tool of a `tools/list` result as a definition; `Err` says why the tool is left out.
///
/// `with_marks` is whether the tool's `x-mcp-header` marks count (the stateless revision over
/// HTTP); otherwise the tool is taken as it is.
pub(crate) fn listed(tool: &Value, with_marks: bool) -> Result<Listed, String> {
    let Some(tool) = tool.as_object() else {
        return Err("a listed tool is no JSON object".into());
    };
    let name = match tool.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => return Err("a listed tool has no name".into()),
    };
    let Some(Value::Object(input_schema)) = tool.get("inputSchema") else {
        return Err(format!("tool {name:?} has no inputSchema object"));
    };
    let marks = if with_marks {
        headers::marks(input_schema).map_err(|problem| format!("tool {name:?}: {problem}"))?
    } else {
        Vec::new()
    };
    let hints = tool.get("annotations").and_then(Value::as_object);
    let hint = |key: &str| {
        hints
            .and_then(|hints| hints.get(key))
            .and_then(Value::as_bool)
    };
    let text = |value: Option<&Value>, key: &str| match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(format!("tool {name:?}: its {key} is no string")),
    };
    let annotations = Annotations {
        title: text(
            hints.and_then(|hints| hints.get("title")),
            "annotations.title",
        )?,
        read_only: hint("readOnlyHint"),
        destructive: hint("destructiveHint"),
        idempotent: hint("idempotentHint"),
        open_world: hint("openWorldHint"),
    };
    let mut definition = ToolDefinition::new(name.clone(), input_schema.clone())
        .map_err(|error| format!("tool {name:?}: {error}"))?
        .with_annotations(annotations);
    definition.title = text(tool.get("title"), "title")?;
    if let Some(description) = tool.get("description").and_then(Value::as_str) {
        definition = definition.with_description(description);
    }
    // An outputSchema that is no object is no schema: the tool is kept without it.
    if let Some(Value::Object(output_schema)) = tool.get("outputSchema") {
        definition = definition.with_output_schema(output_schema.clone());
    }
    // Kept as written, for a server that lists the tool again; one not of its kind is dropped.
    if let Some(Value::Object(execution)) = tool.get("execution") {
        definition = definition.with_execution(execution.clone());
    }
    if let Some(Value::Array(icons)) = tool.get("icons") {
        definition = definition.with_icons(icons.clone());
    }
    if let Some(Value::Object(meta)) = tool.get("_meta") {
        definition = definition.with_meta(meta.clone());
    }
    Ok(Listed { definition, marks })
}

/// An MCP `Tool` object, as a server lists it (or a snapshot holds it), as the definition this
/// source makes of it: its name, title, description, input schema, output schema (when it is an
/// object), hints (`readOnlyHint`… under their catalog names, `annotations.title` as
/// [`Annotations::title`]), `execution`, `icons` and `_meta`. The generator uses this too, so
/// that a generated tool and a discovered one are the same.
///
/// ```
/// let tool = serde_json::json!({
///     "name": "get_weather",
///     "inputSchema": { "type": "object" },
///     "annotations": { "readOnlyHint": true }
/// });
/// let definition = toolkit_runtime::mcp::tool_definition(&tool)?;
/// assert_eq!(definition.annotations.read_only, Some(true));
/// # Ok::<(), String>(())
/// ```
///
/// # Errors
///
/// Why the tool is left out: no name, no `inputSchema` object, or a `title` that is no string.
pub fn tool_definition(tool: &Value) -> Result<ToolDefinition, String> {
    listed(tool, false).map(|listed| listed.definition)
}

/// What a `tools/call` result says.
#[derive(Debug, PartialEq)]
pub(crate) enum Called {
    /// The tool's answer.
    Answer(Value),
    /// The server asks for input first (`input_required`), and what it asks.
    #[cfg(feature = "mcp")]
    InputRequired(crate::mcp::input_required::Asked),
    /// The tool failed.
    Failed(Reason),
}

/// Reads a `tools/call` result.
pub(crate) fn called(result: JsonObject) -> Called {
    match result.get("resultType").map(|kind| kind.as_str()) {
        None | Some(Some("complete")) => {}
        #[cfg(feature = "mcp")]
        Some(Some("input_required")) => {
            return match crate::mcp::input_required::asked(&result) {
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

    #[cfg(feature = "mcp")]
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
    fn listed_tools_carry_hints_and_keep_their_execution() {
        let tool = json!({
            "name": "get", "title": "Get", "description": "Gets.",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        });
        let listed = listed(&tool, true).unwrap();
        assert_eq!(listed.definition.title.as_deref(), Some("Get"));
        assert_eq!(listed.definition.annotations.title, None);
        assert_eq!(listed.definition.annotations.read_only, Some(true));
        assert_eq!(listed.definition.annotations.destructive, None);
        assert_eq!(listed.definition.description.as_deref(), Some("Gets."));
        let task =
            json!({"name": "t", "inputSchema": {}, "execution": {"taskSupport": "required"}});
        let task = super::listed(&task, false).unwrap().definition;
        assert_eq!(task.execution().unwrap()["taskSupport"], "required");
        assert!(super::listed(&json!({"name": "", "inputSchema": {}}), false).is_err());
    }

    #[test]
    fn marks_count_only_when_asked() {
        let tool = json!({"name": "t", "inputSchema": {"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}});
        assert!(listed(&tool, true).is_err());
        assert!(listed(&tool, false).is_ok());
    }

    #[test]
    fn pages_keep_an_empty_cursor() {
        let page = page(&object(json!({"tools": [], "nextCursor": ""}))).unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some(""));
        assert!(super::page(&object(json!({"nextCursor": "x"}))).is_err());
    }
}
