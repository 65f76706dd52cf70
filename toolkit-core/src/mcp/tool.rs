//! An MCP `Tool` object (a `tools/list` entry, or one of a snapshot) read as a definition: what
//! the MCP source and the generator share, with no transport.

use serde_json::Value;

use super::header_marks::{HeaderMark, header_marks};
use crate::{Annotations, ToolDefinition};

/// A tool of a listing as a client uses it: its definition, and the marks of its parameters.
#[derive(Debug)]
pub struct ListedTool {
    /// The definition made of the tool.
    pub definition: ToolDefinition,
    /// Its `x-mcp-header` marks (empty when they were not asked for).
    pub marks: Vec<HeaderMark>,
}

/// A tool of a `tools/list` result as a definition and its marks; `Err` says why the tool is left
/// out.
///
/// `with_marks` is whether the tool's `x-mcp-header` marks count (the stateless revision over
/// HTTP); otherwise the tool is taken as it is.
pub fn listed_tool(tool: &Value, with_marks: bool) -> Result<ListedTool, String> {
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
        header_marks(input_schema).map_err(|problem| format!("tool {name:?}: {problem}"))?
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
    Ok(ListedTool { definition, marks })
}

/// An MCP `Tool` object, as a server lists it (or a snapshot holds it), as the definition this
/// source makes of it: its name, title, description, input schema, output schema (when it is an
/// object), hints (`readOnlyHint`… under their catalog names, `annotations.title` as
/// [`Annotations::title`]), `execution`, `icons` and `_meta`. The MCP source and the generator
/// both read tools with it, so that a generated tool and a discovered one are the same.
///
/// ```
/// let tool = serde_json::json!({
///     "name": "get_weather",
///     "inputSchema": { "type": "object" },
///     "annotations": { "readOnlyHint": true }
/// });
/// let definition = toolkit_core::mcp::tool_definition(&tool)?;
/// assert_eq!(definition.annotations.read_only, Some(true));
/// # Ok::<(), String>(())
/// ```
///
/// # Errors
///
/// Why the tool is left out: no name, no `inputSchema` object, or a `title` that is no string.
pub fn tool_definition(tool: &Value) -> Result<ToolDefinition, String> {
    listed_tool(tool, false).map(|listed| listed.definition)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn listed_tools_carry_hints_and_keep_their_execution() {
        let tool = json!({
            "name": "get", "title": "Get", "description": "Gets.",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        });
        let listed = listed_tool(&tool, true).unwrap();
        assert_eq!(listed.definition.title.as_deref(), Some("Get"));
        assert_eq!(listed.definition.annotations.title, None);
        assert_eq!(listed.definition.annotations.read_only, Some(true));
        assert_eq!(listed.definition.annotations.destructive, None);
        assert_eq!(listed.definition.description.as_deref(), Some("Gets."));
        let task =
            json!({"name": "t", "inputSchema": {}, "execution": {"taskSupport": "required"}});
        let task = listed_tool(&task, false).unwrap().definition;
        assert_eq!(task.execution().unwrap()["taskSupport"], "required");
        assert!(listed_tool(&json!({"name": "", "inputSchema": {}}), false).is_err());
    }

    #[test]
    fn marks_count_only_when_asked() {
        let tool = json!({"name": "t", "inputSchema": {"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}});
        assert!(listed_tool(&tool, true).is_err());
        assert!(listed_tool(&tool, false).is_ok());
    }
}
