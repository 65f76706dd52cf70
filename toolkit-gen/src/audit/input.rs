//! The checks of a tool's `inputSchema`: an object root, closed object levels, `required` names
//! that exist, parameter descriptions, a schema the runtime can compile, and `x-mcp-header` marks.

use serde_json::{Map, Value};
use toolkit_core::InputCheck;
use toolkit_core::mcp::mark_problems;

use super::pointer::{in_input, join};
use super::{AuditOptions, Check, Severity, ToolFindings};

/// How deep the walk goes into nested schemas; deeper levels are not audited.
const MAX_DEPTH: usize = 64;

/// Keywords whose value is one schema.
const ONE_SCHEMA: [&str; 9] = [
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];

/// Keywords whose value is an array of schemas.
const SCHEMA_ARRAYS: [&str; 5] = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Audits the input schema `schema` of the tool `at`.
pub(super) fn audit(
    schema: &Map<String, Value>,
    options: &AuditOptions,
    at: &mut ToolFindings<'_>,
) {
    object_root(schema, at);
    let mut walk = Walk { options, at };
    walk.node(schema, "#/inputSchema", 0, false);
    parameter_descriptions(schema, walk.at);
    if !InputCheck::new(schema).is_complete() {
        walk.at.push(
            Severity::Warning,
            Check::InputSchema,
            "#/inputSchema",
            "the input schema is no valid JSON Schema (2020-12 or draft-07): the runtime then holds an input only to being an object".to_owned(),
        );
    }
    headers(schema, walk.at);
}

fn type_names(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn object_root(schema: &Map<String, Value>, at: &mut ToolFindings<'_>) {
    let kinds = type_names(schema);
    let message = match (schema.get("type"), kinds.as_slice()) {
        (Some(Value::String(_)), ["object"]) => return,
        (Some(Value::Array(_)), kinds) if kinds.contains(&"object") => format!(
            "the root's type is {kinds:?}: MCP requires `type: \"object\"` alone, and strict clients refuse the tool"
        ),
        (None, _) if schema.contains_key("anyOf") || schema.contains_key("oneOf") => {
            let union = if schema.contains_key("anyOf") { "anyOf" } else { "oneOf" };
            format!(
                "the root is a bare `{union}` with no `type: \"object\"`: MCP requires an object root, and strict clients refuse the tool (add `type: \"object\"` beside the `{union}` when every member is an object, or wrap the union in a property)"
            )
        }
        (None, _) => "the root has no `type: \"object\"`: MCP requires it, and strict clients refuse the tool".to_owned(),
        (Some(_), kinds) => format!(
            "the root's type is {kinds:?}, not \"object\": a tool's input is always an object (wrap the value in a property)"
        ),
    };
    at.push(
        Severity::Error,
        Check::ObjectRootedInput,
        "#/inputSchema",
        message,
    );
}

struct Walk<'o, 'a, 'f> {
    options: &'o AuditOptions,
    at: &'a mut ToolFindings<'f>,
}

impl Walk<'_, '_, '_> {
    /// Audits the schema `node` at `pointer`; `combined` when it is a member of an `allOf` (whose
    /// `required` may name another member's properties).
    fn node(&mut self, node: &Map<String, Value>, pointer: &str, depth: usize, combined: bool) {
        if depth > MAX_DEPTH {
            return;
        }
        let kinds = type_names(node);
        let is_object =
            kinds.contains(&"object") || (kinds.is_empty() && node.contains_key("properties"));
        if is_object {
            self.closed(node, pointer);
            let has_combinator = ["allOf", "anyOf", "oneOf", "$ref"]
                .iter()
                .any(|keyword| node.contains_key(*keyword));
            if !combined && !has_combinator {
                self.required(node, pointer);
            }
        }
        for (keyword, value) in node {
            let keyword = keyword.as_str();
            match value {
                Value::Object(child) if ONE_SCHEMA.contains(&keyword) => {
                    self.node(child, &join(pointer, keyword), depth + 1, false);
                }
                Value::Object(children) if SCHEMA_MAPS.contains(&keyword) => {
                    let base = join(pointer, keyword);
                    for (name, child) in children {
                        if let Value::Object(child) = child {
                            self.node(child, &join(&base, name), depth + 1, false);
                        }
                    }
                }
                Value::Array(children) if SCHEMA_ARRAYS.contains(&keyword) => {
                    let base = join(pointer, keyword);
                    for (index, child) in children.iter().enumerate() {
                        if let Value::Object(child) = child {
                            let place = join(&base, &index.to_string());
                            self.node(child, &place, depth + 1, keyword == "allOf");
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn closed(&mut self, node: &Map<String, Value>, pointer: &str) {
        let Some(severity) = self.options.closed_input else {
            return;
        };
        let closed = |keyword: &str| node.get(keyword) == Some(&Value::Bool(false));
        if closed("additionalProperties") || closed("unevaluatedProperties") {
            return;
        }
        let message = match node.get("additionalProperties") {
            Some(Value::Object(schema)) if !schema.is_empty() => {
                "the level is a record: it takes any property whose value fits `additionalProperties`, so a misspelt name is no error".to_owned()
            }
            _ if node.contains_key("patternProperties") => {
                "the level takes properties matching `patternProperties` and any other as well: add `additionalProperties: false` to refuse the rest".to_owned()
            }
            _ => {
                "the level takes properties it does not name (no `additionalProperties: false`): a client following the schema sends a misspelt argument on, and the server may drop it unseen".to_owned()
            }
        };
        self.at.push(severity, Check::ClosedInput, pointer, message);
    }

    fn required(&mut self, node: &Map<String, Value>, pointer: &str) {
        let Some(Value::Array(required)) = node.get("required") else {
            return;
        };
        if node.contains_key("patternProperties")
            || matches!(node.get("additionalProperties"), Some(Value::Object(schema)) if !schema.is_empty())
        {
            return;
        }
        let properties = node.get("properties").and_then(Value::as_object);
        let unknown: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| properties.is_none_or(|properties| !properties.contains_key(*name)))
            .collect();
        if !unknown.is_empty() {
            self.at.push(
                Severity::Warning,
                Check::RequiredUnknown,
                &join(pointer, "required"),
                format!(
                    "requires {unknown:?}, which the level does not declare: a strict input can never give it"
                ),
            );
        }
    }
}

fn parameter_descriptions(schema: &Map<String, Value>, at: &mut ToolFindings<'_>) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    let bare: Vec<&str> = properties
        .iter()
        .filter(|(_, property)| {
            let described = |key: &str| {
                property
                    .get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|text| !text.trim().is_empty())
            };
            property.is_object() && !described("description") && !described("title")
        })
        .map(|(name, _)| name.as_str())
        .collect();
    if !bare.is_empty() {
        at.push(
            Severity::Info,
            Check::ParameterDescriptions,
            "#/inputSchema/properties",
            format!(
                "{} of {} parameters have no description: {bare:?}",
                bare.len(),
                properties.len()
            ),
        );
    }
}

/// The `x-mcp-header` marks: the runtime's refusals (errors: a client over HTTP drops the tool),
/// then what the specification forbids but the runtime accepts.
fn headers(schema: &Map<String, Value>, at: &mut ToolFindings<'_>) {
    let problems = mark_problems(schema);
    for problem in &problems {
        at.push(
            Severity::Error,
            Check::McpHeader,
            &in_input(&problem.pointer),
            format!(
                "{}: a client over HTTP leaves the tool out",
                problem.message
            ),
        );
    }
    let refused: Vec<String> = problems.iter().map(|p| in_input(&p.pointer)).collect();
    let mut marks = Vec::new();
    marked(schema, "#/inputSchema", 0, &mut marks);
    for (pointer, property) in marks {
        let mark_pointer = join(&pointer, "x-mcp-header");
        if refused.contains(&mark_pointer) {
            continue;
        }
        let message = match property.get("type") {
            Some(Value::String(kind)) if kind == "number" => {
                "x-mcp-header marks a `number`: the specification allows only integer, string and boolean parameters (this runtime sends it; other clients drop the tool)"
            }
            Some(Value::String(_)) => continue,
            Some(Value::Array(_)) => {
                "x-mcp-header marks a parameter whose `type` is an array: the specification wants one of integer, string or boolean, and the Python SDK drops the tool"
            }
            _ => {
                "x-mcp-header marks a parameter with no `type`: the specification wants one of integer, string or boolean, and the Python SDK drops the tool"
            }
        };
        at.push(
            Severity::Warning,
            Check::McpHeader,
            &mark_pointer,
            message.to_owned(),
        );
    }
}

/// The properties reached from `node` by a chain of `properties` that carry an `x-mcp-header`.
fn marked<'s>(
    node: &'s Map<String, Value>,
    pointer: &str,
    depth: usize,
    found: &mut Vec<(String, &'s Map<String, Value>)>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(Value::Object(properties)) = node.get("properties") else {
        return;
    };
    let base = join(pointer, "properties");
    for (name, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        let place = join(&base, name);
        if property.contains_key("x-mcp-header") {
            found.push((place.clone(), property));
        }
        marked(property, &place, depth + 1, found);
    }
}
