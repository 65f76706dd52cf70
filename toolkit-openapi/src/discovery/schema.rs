//! A Discovery schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect): [`convert`].
//!
//! - `{"$ref": "File"}` names an entry of the document's `schemas`:
//!   `#/components/schemas/File` in the converted document;
//! - `type: any` is any value; 64-bit integers are `type: string` with `format: int64` or
//!   `uint64` already in Discovery (Google sends them as strings), and stay so; every `format`
//!   is kept;
//! - `properties`, `items`, `additionalProperties`, `readOnly`, `deprecated`, `pattern`,
//!   `enum` are kept; `enumDescriptions` (JSON Schema has no place for them) are appended to
//!   the description, one line per value that has one; `default` and the bounds, which
//!   Discovery writes as strings, are numbers or booleans when the type is;
//! - a property marked `required: true` (older documents) is in its object's `required`;
//!   `annotations.required` (the methods that require a property) is the method's to read
//!   ([`required_by`]).

use serde_json::{Map, Value, json};

use crate::pointer;

/// The JSON Schema of the Discovery schema `schema`.
pub(super) fn convert(schema: &Value) -> Value {
    let Value::Object(schema) = schema else {
        return json!({});
    };
    let mut out = Map::new();
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        out.insert("$ref".to_owned(), Value::String(reference_to(reference)));
    }
    let kind = schema.get("type").and_then(Value::as_str);
    if let Some(kind) = kind
        && kind != "any"
    {
        out.insert("type".to_owned(), Value::String(kind.to_owned()));
    }
    for keyword in ["format", "pattern", "readOnly", "deprecated", "enum"] {
        if let Some(value) = schema.get(keyword) {
            out.insert(keyword.to_owned(), value.clone());
        }
    }
    if let Some(default) = schema
        .get("default")
        .and_then(|default| typed(default, kind))
    {
        out.insert("default".to_owned(), default);
    }
    for bound in ["minimum", "maximum"] {
        if let Some(number) = schema
            .get(bound)
            .and_then(|value| typed(value, Some("number")))
        {
            out.insert(bound.to_owned(), number);
        }
    }
    if let Some(description) = description(schema) {
        out.insert("description".to_owned(), Value::String(description));
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        let mut converted = Map::new();
        let mut required = Vec::new();
        for (name, property) in properties {
            if property.get("required") == Some(&Value::Bool(true)) {
                required.push(Value::String(name.clone()));
            }
            converted.insert(name.clone(), convert(property));
        }
        out.insert("properties".to_owned(), Value::Object(converted));
        if !required.is_empty() {
            out.insert("required".to_owned(), Value::Array(required));
        }
    }
    for keyword in ["items", "additionalProperties"] {
        match schema.get(keyword) {
            Some(Value::Bool(allowed)) => {
                out.insert(keyword.to_owned(), Value::Bool(*allowed));
            }
            Some(nested @ Value::Object(_)) => {
                out.insert(keyword.to_owned(), convert(nested));
            }
            _ => {}
        }
    }
    Value::Object(out)
}

/// Where the converted document keeps the schema of id `id`.
pub(super) fn reference_to(id: &str) -> String {
    format!("#/components/schemas/{}", pointer::escape(id))
}

/// The properties of the schema `id` that the method `method` requires
/// (`annotations.required.methods`), in the schema's order.
pub(super) fn required_by(schemas: Option<&Value>, id: &str, method: &str) -> Vec<Value> {
    let Some(Value::Object(properties)) = schemas
        .and_then(|schemas| schemas.get(id))
        .and_then(|schema| schema.get("properties"))
    else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(_, property)| {
            property
                .pointer("/annotations/required")
                .and_then(Value::as_array)
                .is_some_and(|methods| methods.iter().any(|m| m.as_str() == Some(method)))
        })
        .map(|(name, _)| Value::String(name.clone()))
        .collect()
}

/// The schema's description, with a line per enum value that `enumDescriptions` describes.
pub(super) fn description(schema: &Map<String, Value>) -> Option<String> {
    let mut text = schema
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    if let (Some(Value::Array(values)), Some(Value::Array(descriptions))) =
        (schema.get("enum"), schema.get("enumDescriptions"))
    {
        let lines: Vec<String> = values
            .iter()
            .zip(descriptions)
            .filter_map(|(value, description)| {
                let description = description.as_str()?.trim();
                (!description.is_empty())
                    .then(|| format!("- `{}`: {description}", value.as_str().unwrap_or_default()))
            })
            .collect();
        if !lines.is_empty() {
            let list = lines.join("\n");
            text = Some(match text {
                Some(text) => format!("{text}\n\n{list}"),
                None => list,
            });
        }
    }
    text
}

/// A value Discovery writes as a string (`"true"`, `"100"`) as the JSON its type takes; `None`
/// when it is not one.
fn typed(value: &Value, kind: Option<&str>) -> Option<Value> {
    let Value::String(text) = value else {
        return Some(value.clone());
    };
    match kind {
        Some("boolean") => match text.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        Some("integer") => text.parse::<i64>().ok().map(Value::from),
        Some("number") => text.parse::<i64>().ok().map(Value::from).or_else(|| {
            text.parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
        }),
        _ => Some(value.clone()),
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn discovery_schemas_become_json_schemas() {
        let schema = json!({
            "id": "File",
            "type": "object",
            "description": "A file.",
            "properties": {
                "size": {"type": "string", "format": "int64", "readOnly": true},
                "count": {"type": "integer", "format": "int32", "default": "10", "minimum": "1", "maximum": "100"},
                "shared": {"type": "boolean", "default": "false"},
                "owner": {"$ref": "User", "description": "Who owns it."},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "parents": {"type": "array", "items": {"$ref": "Parent"}},
                "extra": {"type": "any"},
                "kind": {"type": "string", "required": true, "enum": ["A", "B"], "enumDescriptions": ["The first.", ""]}
            }
        });
        assert_eq!(
            convert(&schema),
            json!({
                "type": "object",
                "description": "A file.",
                "properties": {
                    "size": {"type": "string", "format": "int64", "readOnly": true},
                    "count": {"type": "integer", "format": "int32", "default": 10, "minimum": 1, "maximum": 100},
                    "shared": {"type": "boolean", "default": false},
                    "owner": {"$ref": "#/components/schemas/User", "description": "Who owns it."},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "parents": {"type": "array", "items": {"$ref": "#/components/schemas/Parent"}},
                    "extra": {},
                    "kind": {"type": "string", "enum": ["A", "B"], "description": "- `A`: The first."}
                },
                "required": ["kind"]
            })
        );
    }

    #[test]
    fn a_method_reads_the_properties_it_requires() {
        let schemas = json!({"Topic": {"properties": {
            "name": {"type": "string", "annotations": {"required": ["pubsub.topics.create"]}},
            "labels": {"type": "object"}
        }}});
        assert_eq!(
            required_by(Some(&schemas), "Topic", "pubsub.topics.create"),
            vec![json!("name")]
        );
        assert!(required_by(Some(&schemas), "Topic", "pubsub.topics.patch").is_empty());
        assert!(required_by(None, "Topic", "x").is_empty());
    }
}
