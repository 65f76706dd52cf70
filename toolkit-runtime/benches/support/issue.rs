//! What the runtime's benchmarks share: a source that costs nothing, and the input of a tool of
//! ten properties of the kinds real tools use.

use serde_json::{Value, json};
use toolkit_runtime::{BoxFuture, JsonObject, ToolDefinition, ToolSource, ToolSourceError};

/// A source whose every tool answers `null` at once: what is left is the runtime's own cost.
pub struct Noop(pub String);

impl ToolSource for Noop {
    fn name(&self) -> &str {
        &self.0
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn call<'a>(
        &'a self,
        _: &'a str,
        _: JsonObject,
        _: &'a toolkit_runtime::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async { Ok(Value::Null) })
    }
}

/// A closed schema of ten properties of the kinds real tools use.
pub fn ten_property_schema() -> JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "owner": { "type": "string", "description": "The account owner." },
            "repo": { "type": "string", "description": "The repository." },
            "title": { "type": "string", "minLength": 1 },
            "body": { "type": ["string", "null"] },
            "labels": { "type": "array", "items": { "type": "string" } },
            "milestone": { "type": "integer", "minimum": 1 },
            "draft": { "type": "boolean" },
            "state": { "enum": ["open", "closed"] },
            "assignee": { "type": "object", "properties": { "login": { "type": "string" } } },
            "score": { "type": "number" }
        },
        "required": ["owner", "repo", "title"],
        "additionalProperties": false
    });
    schema.as_object().cloned().unwrap_or_default()
}

pub fn ten_property_input() -> Value {
    json!({
        "owner": "octo", "repo": "hello", "title": "Bug", "body": null, "labels": ["bug", "p1"],
        "milestone": 3, "draft": false, "state": "open", "assignee": { "login": "me" }, "score": 0.5
    })
}
