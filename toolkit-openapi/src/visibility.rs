//! `readOnly` and `writeOnly`: which properties each direction carries. OpenAPI says a
//! `readOnly` property is sent only in answers and a `writeOnly` one only in requests, so an
//! input leaves the first out and an answer the second: [`leave_out`].
//!
//! A property goes with its name in `required`; `additionalProperties: false` stays, so a
//! closed schema stays closed without it (the model cannot send an `id` the API refuses). A
//! property is marked by its own schema, or by the `$defs` entry its `$ref` names (3.0 ignores
//! a `$ref`'s siblings, so documents mark the target).

use serde_json::{Map, Value};

/// A direction of the exchange, and the keyword whose properties it leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// A request: `readOnly` properties are left out.
    Request,
    /// An answer: `writeOnly` properties are left out.
    Answer,
}

impl Direction {
    fn keyword(self) -> &'static str {
        match self {
            Self::Request => "readOnly",
            Self::Answer => "writeOnly",
        }
    }
}

/// Whether `schema` or a schema inside it marks a property `direction` does not carry.
pub(crate) fn marks(schema: &Value, direction: Direction) -> bool {
    let keyword = direction.keyword();
    match schema {
        Value::Object(object) => object.iter().any(|(key, value)| {
            (key == keyword && value == &Value::Bool(true))
                || (!DATA.contains(&key.as_str()) && marks(value, direction))
        }),
        Value::Array(items) => items.iter().any(|item| marks(item, direction)),
        _ => false,
    }
}

/// Keywords whose values are data, not schemas: never walked.
const DATA: &[&str] = &["examples", "example", "default", "enum", "const"];

/// [`leave_out`] over the `$defs` an operation's schema gathered: copies are changed in place;
/// entries shared by name (none of which marks a property, see `Reader::gathered`) and no
/// entries leave only `schema` to change.
pub(crate) fn left_out(
    schema: &mut Value,
    defs: Option<Value>,
    direction: Direction,
) -> Option<Value> {
    match defs {
        Some(Value::Object(mut copies)) => {
            leave_out(schema, &mut copies, direction);
            Some(Value::Object(copies))
        }
        other => {
            leave_out(schema, &mut Map::new(), direction);
            other
        }
    }
}

/// Leaves out of `schema` and of `defs` (its `$defs` entries, `#/$defs/NAME`) every property
/// `direction` does not carry.
pub(crate) fn leave_out(schema: &mut Value, defs: &mut Map<String, Value>, direction: Direction) {
    let keyword = direction.keyword();
    // Which entries are themselves marked, read before any is changed.
    let marked: Vec<String> = defs
        .iter()
        .filter(|(_, entry)| is_marked(entry, keyword))
        .map(|(name, _)| name.clone())
        .collect();
    let marked = |schema: &Value| {
        is_marked(schema, keyword)
            || schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|reference| reference.strip_prefix("#/$defs/"))
                .is_some_and(|name| marked.iter().any(|m| m == name))
    };
    walk(schema, &marked);
    for entry in defs.values_mut() {
        walk(entry, &marked);
    }
}

fn is_marked(schema: &Value, keyword: &str) -> bool {
    schema.get(keyword) == Some(&Value::Bool(true))
}

/// Removes the marked properties of `schema` and of every schema inside it.
fn walk(schema: &mut Value, marked: &dyn Fn(&Value) -> bool) {
    match schema {
        Value::Object(object) => {
            let mut left_out = Vec::new();
            if let Some(Value::Object(properties)) = object.get_mut("properties") {
                properties.retain(|name, property| {
                    let keep = !marked(property);
                    if !keep {
                        left_out.push(name.clone());
                    }
                    keep
                });
            }
            if !left_out.is_empty()
                && let Some(Value::Array(required)) = object.get_mut("required")
            {
                required.retain(|name| {
                    !name
                        .as_str()
                        .is_some_and(|n| left_out.iter().any(|l| l == n))
                });
            }
            for (key, value) in object.iter_mut() {
                if !DATA.contains(&key.as_str()) {
                    walk(value, marked);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, marked)),
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_request_leaves_read_only_properties_out_and_stays_closed() {
        let mut schema = json!({"$ref": "#/$defs/Pet"});
        let mut defs = json!({
            "Pet": {
                "type": "object",
                "required": ["id", "name", "secret"],
                "additionalProperties": false,
                "properties": {
                    "id": {"type": "integer", "readOnly": true},
                    "created": {"$ref": "#/$defs/Stamp"},
                    "name": {"type": "string", "examples": [{"properties": {"x": {"readOnly": true}}}]},
                    "secret": {"type": "string", "writeOnly": true},
                    "tags": {"type": "array", "items": {"type": "object", "properties": {"etag": {"readOnly": true}, "v": {}}}}
                }
            },
            "Stamp": {"type": "string", "readOnly": true}
        })
        .as_object()
        .cloned()
        .unwrap();
        let mut answer_defs = defs.clone();
        leave_out(&mut schema, &mut defs, Direction::Request);
        assert_eq!(
            defs["Pet"],
            json!({
                "type": "object",
                "required": ["name", "secret"],
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string", "examples": [{"properties": {"x": {"readOnly": true}}}]},
                    "secret": {"type": "string", "writeOnly": true},
                    "tags": {"type": "array", "items": {"type": "object", "properties": {"v": {}}}}
                }
            })
        );
        leave_out(&mut schema, &mut answer_defs, Direction::Answer);
        let pet = &answer_defs["Pet"];
        assert_eq!(pet["required"], json!(["id", "name"]));
        assert!(pet["properties"].get("secret").is_none());
        assert!(pet["properties"].get("id").is_some());
        assert!(pet["properties"].get("created").is_some());
    }
}
