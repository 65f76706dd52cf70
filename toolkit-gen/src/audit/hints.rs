//! The checks of a tool's `annotations` (its hints) and `execution`.

use serde_json::{Map, Value};

use super::{Check, Severity, ToolFindings};

const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// Checks the hints and the task support of `tool`.
pub(super) fn audit(tool: &Map<String, Value>, at: &mut ToolFindings<'_>) {
    if tool
        .get("execution")
        .and_then(|execution| execution.get("taskSupport"))
        .and_then(Value::as_str)
        == Some("required")
    {
        at.push(
            Severity::Warning,
            Check::TaskRequired,
            "#/execution/taskSupport",
            "the tool runs only as a task: a client without tasks cannot call it (this toolkit's MCP client runs it as one, and its gateway serves it as a plain call)".to_owned(),
        );
    }
    let hints = match tool.get("annotations") {
        None | Some(Value::Null) => return,
        Some(Value::Object(hints)) => hints,
        Some(_) => {
            at.push(
                Severity::Warning,
                Check::Hints,
                "#/annotations",
                "the annotations are no object, so a client reads no hint".to_owned(),
            );
            return;
        }
    };
    for key in HINTS {
        match hints.get(key) {
            None | Some(Value::Bool(_) | Value::Null) => {}
            Some(_) => at.push(
                Severity::Warning,
                Check::Hints,
                &format!("#/annotations/{key}"),
                format!("{key} is no boolean, so a client reads its default"),
            ),
        }
    }
    let is_true = |key: &str| hints.get(key).and_then(Value::as_bool) == Some(true);
    if is_true("readOnlyHint") && is_true("destructiveHint") {
        at.push(
            Severity::Info,
            Check::Hints,
            "#/annotations/destructiveHint",
            "the tool says it is read-only and destructive; destructiveHint means something only when readOnlyHint is false".to_owned(),
        );
    }
}
