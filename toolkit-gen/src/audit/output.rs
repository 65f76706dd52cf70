//! The check of a tool's `outputSchema`: MCP wants its root to be an object.

use serde_json::Value;

use super::{Check, Severity, ToolFindings};

/// Checks the output schema `schema` of the tool `at`.
pub(super) fn audit(schema: &Value, at: &mut ToolFindings<'_>) {
    let schema = match schema {
        Value::Null => return,
        Value::Object(schema) => schema,
        _ => {
            at.push(
                Severity::Error,
                Check::ObjectRootedOutput,
                "#/outputSchema",
                "the outputSchema is no JSON object: clients refuse it".to_owned(),
            );
            return;
        }
    };
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return;
    }
    let union = ["anyOf", "oneOf"].into_iter().find_map(|keyword| {
        schema
            .get(keyword)
            .and_then(Value::as_array)
            .map(|m| (keyword, m))
    });
    let message = match (schema.get("type"), union) {
        (None, Some((keyword, members))) => {
            if members.iter().all(is_object_shape) {
                format!(
                    "the root is a bare `{keyword}` of objects: MCP requires an object root (stateful servers drop the outputSchema, strict clients refuse it); add `type: \"object\"` beside the `{keyword}`"
                )
            } else {
                format!(
                    "the root is a bare `{keyword}` with a member that is no object: MCP requires an object root; give the tool an object envelope (`{{\"result\": ...}}`) rather than claim `type: \"object\"` for the union"
                )
            }
        }
        (None, None) => "the root has no `type: \"object\"`: MCP requires an object root, and strict clients refuse the schema".to_owned(),
        (Some(kind), _) => format!(
            "the root's type is {kind}, not \"object\": MCP requires an object root (structured content is an object); give the tool an object envelope"
        ),
    };
    at.push(
        Severity::Error,
        Check::ObjectRootedOutput,
        "#/outputSchema",
        message,
    );
}

/// Whether a union member is an object shape: `type: "object"`, or properties and no type.
fn is_object_shape(member: &Value) -> bool {
    match member.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(_) => false,
        None => member.get("properties").is_some(),
    }
}
