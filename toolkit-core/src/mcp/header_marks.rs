//! The `x-mcp-header` marks of a tool's input schema (revision 2026-07-28): which parameters a
//! call also sends as `Mcp-Param-<X>` headers, and every problem of the marks, located.
//!
//! A server of the stateless revision may mark a property with `"x-mcp-header": "Region"`; the
//! rules follow the specification (`server/tools.mdx` §x-mcp-header) except where seed 000 says
//! otherwise: a mark on a `number` is allowed. What a client sends of them (and the base64
//! sentinel) is the MCP source's part, in `toolkit-mcp`.

use serde_json::Value;

use crate::JsonObject;

/// A marked parameter: where it sits in the input, and the `<X>` of its `Mcp-Param-<X>` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderMark {
    /// The chain of property names from the input's root to the parameter.
    pub path: Vec<String>,
    /// The header name's suffix, as the server wrote it.
    pub header: String,
}

/// The marks of a tool's input schema, or why the tool cannot be used with them.
///
/// ```text
/// {"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}  -> [region => Region]
/// {"properties": {"a": {"items": {"x-mcp-header": "A"}}}}                   -> Err (under items)
/// ```
pub fn header_marks(input_schema: &JsonObject) -> Result<Vec<HeaderMark>, String> {
    let (found, problems) = sweep(input_schema);
    match problems.into_iter().next() {
        Some(problem) => Err(problem.message),
        None => Ok(found),
    }
}

/// A mark of a tool's input schema that makes the tool unusable with `x-mcp-header` (a client
/// over HTTP of the stateless revision leaves such a tool out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkProblem {
    /// Where, as a JSON pointer into the input schema (`#/properties/region/x-mcp-header`).
    pub pointer: String,
    /// Why, in a sentence.
    pub message: String,
}

/// Every problem of the `x-mcp-header` marks of `input_schema`, each located: the checks this
/// source runs on a listed tool (a mark off the chain of `properties`, on the root, not a string,
/// empty, not an HTTP token, on an object or an array, two marks naming one header), for a static
/// audit of a listing. Empty when the marks are usable.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::mcp::mark_problems;
///
/// let schema = json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}});
/// let problems = mark_problems(schema.as_object().unwrap_or(&Default::default()));
/// assert_eq!(problems[0].pointer, "#/properties/a/items/x-mcp-header");
/// ```
pub fn mark_problems(input_schema: &JsonObject) -> Vec<MarkProblem> {
    sweep(input_schema).1
}

/// The marks of `input_schema` and the problems of its marks.
fn sweep(input_schema: &JsonObject) -> (Vec<HeaderMark>, Vec<MarkProblem>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut at = At::default();
    walk(input_schema, &mut at, true, &mut found, &mut problems);
    let mut seen: Vec<String> = Vec::new();
    for (mark, pointer) in found.iter().zip(&at.marked) {
        let lower = mark.header.to_ascii_lowercase();
        if seen.contains(&lower) {
            problems.push(MarkProblem {
                pointer: pointer.clone(),
                message: format!(
                    "two parameters are marked with the header {:?} (names are case-insensitive)",
                    mark.header
                ),
            });
        }
        seen.push(lower);
    }
    (found, problems)
}

/// Where the walk is: the chain of property names, and the JSON pointer's segments.
#[derive(Default)]
struct At {
    path: Vec<String>,
    pointer: Vec<String>,
    /// The pointer of each mark found, in the order of the marks.
    marked: Vec<String>,
}

impl At {
    fn pointer_to(&self, last: &str) -> String {
        let mut pointer = String::from("#");
        for segment in self.pointer.iter().map(String::as_str).chain([last]) {
            pointer.push('/');
            pointer.push_str(&segment.replace('~', "~0").replace('/', "~1"));
        }
        pointer
    }
}

/// Keywords whose values are data, not schemas: an `x-mcp-header` key inside them is no mark.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "example"];

/// Visits the schema `node`; `on_chain` while every step from the root was a `properties` entry.
fn walk(
    node: &JsonObject,
    at: &mut At,
    on_chain: bool,
    found: &mut Vec<HeaderMark>,
    problems: &mut Vec<MarkProblem>,
) {
    if let Some(mark) = node.get("x-mcp-header") {
        let pointer = at.pointer_to("x-mcp-header");
        match check_mark(node, mark, &at.path, on_chain) {
            Ok(header) => {
                found.push(HeaderMark {
                    path: at.path.clone(),
                    header,
                });
                at.marked.push(pointer);
            }
            Err(message) => problems.push(MarkProblem { pointer, message }),
        }
    }
    for (keyword, value) in node {
        if keyword == "x-mcp-header" || DATA_KEYWORDS.contains(&keyword.as_str()) {
            continue;
        }
        at.pointer.push(keyword.clone());
        if keyword == "properties" {
            if let Value::Object(properties) = value {
                for (name, property) in properties {
                    if let Value::Object(property) = property {
                        at.path.push(name.clone());
                        at.pointer.push(name.clone());
                        walk(property, at, on_chain, found, problems);
                        at.pointer.pop();
                        at.path.pop();
                    }
                }
            }
        } else {
            // Any other keyword leaves the chain of `properties`: a mark found below it is refused.
            walk_off_chain(value, at, found, problems);
        }
        at.pointer.pop();
    }
}

fn walk_off_chain(
    value: &Value,
    at: &mut At,
    found: &mut Vec<HeaderMark>,
    problems: &mut Vec<MarkProblem>,
) {
    match value {
        Value::Object(object) => walk(object, at, false, found, problems),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                at.pointer.push(index.to_string());
                walk_off_chain(item, at, found, problems);
                at.pointer.pop();
            }
        }
        _ => {}
    }
}

fn check_mark(
    node: &JsonObject,
    mark: &Value,
    path: &[String],
    on_chain: bool,
) -> Result<String, String> {
    if path.is_empty() && on_chain {
        return Err("x-mcp-header marks the schema's root, not a parameter".into());
    }
    if !on_chain {
        return Err(
            "x-mcp-header is on a schema that a chain of `properties` does not reach".into(),
        );
    }
    let Value::String(header) = mark else {
        return Err(format!(
            "x-mcp-header of {:?} is not a string",
            path.join(".")
        ));
    };
    if header.is_empty() {
        return Err(format!("x-mcp-header of {:?} is empty", path.join(".")));
    }
    if !header.bytes().all(is_token_byte) {
        return Err(format!(
            "x-mcp-header of {:?} holds characters a header name cannot",
            path.join(".")
        ));
    }
    let types: Vec<&str> = match node.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types
        .iter()
        .any(|kind| *kind == "object" || *kind == "array")
    {
        return Err(format!(
            "x-mcp-header of {:?} marks an object or an array",
            path.join(".")
        ));
    }
    Ok(header.clone())
}

/// RFC 9110 `tchar`.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn schema(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn marks_along_properties_are_found_nested_ones_too() {
        let found = header_marks(&schema(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "where": {"type": "object", "properties": {
                    "zone": {"type": "integer", "x-mcp-header": "Zone"}
                }},
                "ratio": {"type": "number", "x-mcp-header": "Ratio"},
                "x-mcp-header": {"type": "string"}
            }
        })))
        .unwrap();
        let paths: Vec<_> = found
            .iter()
            .map(|m| (m.path.join("."), m.header.as_str()))
            .collect();
        assert_eq!(
            paths,
            [
                ("region".into(), "Region"),
                ("where.zone".into(), "Zone"),
                ("ratio".into(), "Ratio")
            ]
        );
    }

    #[test]
    fn marks_the_protocol_forbids_make_the_tool_unusable() {
        let bad = [
            json!({"x-mcp-header": "Root"}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": ["array", "null"], "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}}),
            json!({"$defs": {"A": {"type": "string", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "Bad:Name"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": 3}}}),
        ];
        for schema_value in bad {
            assert!(
                header_marks(&schema(schema_value.clone())).is_err(),
                "{schema_value}"
            );
        }
    }

    #[test]
    fn a_mark_inside_data_is_no_mark() {
        let found = header_marks(&schema(json!({
            "properties": {"a": {"type": "object", "default": {"x-mcp-header": "A"}}}
        })))
        .unwrap();
        assert!(found.is_empty());
    }
}
