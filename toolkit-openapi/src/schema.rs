//! A schema of the document made as JSON Schema 2020-12 has it (OpenAPI 3.1's dialect), with
//! its references rewritten to the `$defs` of the input schema it will stand in.
//!
//! For OpenAPI 3.0 documents, what 3.1 changed:
//!
//! - `nullable: true` becomes `null` in the `type` list (and in the `enum`, which would refuse
//!   it otherwise), or `anyOf: [.., {type: null}]` for a schema with no `type`; a validator that
//!   does not know `nullable` would refuse a null the API accepts;
//! - a boolean `exclusiveMinimum`/`exclusiveMaximum` becomes the number of `minimum`/`maximum`;
//! - `example` becomes `examples: [example]`;
//! - the siblings of a `$ref` are ignored, as 3.0 says, but for `description`.
//!
//! All but the last are done for 3.1 documents too: real ones (OpenAI's) still write `nullable`
//! and boolean bounds, which 3.1 does not have and whose meaning is plain.
//!
//! Draft 2019-09's `$recursiveRef: "#"` (which OpenAI's description uses) becomes a `$ref` to the
//! `$defs` entry of the schema of the document it stands in, which is what it means there, and
//! `$recursiveAnchor` is left out.
//!
//! For both versions, `discriminator` and `xml` (OpenAPI's, not JSON Schema's, and whose
//! references would lead nowhere in the input schema) are left out, and an `items` list (an
//! older draft's tuple) becomes `prefixItems`.

use serde_json::{Map, Value};

use super::SkipReason;
use super::def_names::Names;

/// The deepest nesting of schemas converted; a deeper schema skips its operation rather than
/// risk the stack.
const MAX_DEPTH: usize = 200;

/// The OpenAPI version of a document, which decides how its schemas are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchemaDialect {
    /// OpenAPI 3.0: its own schema dialect.
    V30,
    /// OpenAPI 3.1 and later: JSON Schema 2020-12.
    V31,
}

/// Keywords whose value is a schema.
const ONE: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalProperties",
    "additionalItems",
    "contentSchema",
];

/// Keywords whose value is a list of schemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value is an object of schemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Converts `schema`, pushing onto `refs` each reference it makes (as the document writes it).
pub(crate) struct Converter<'a> {
    pub(crate) dialect: SchemaDialect,
    pub(crate) names: &'a mut Names,
    pub(crate) refs: &'a mut Vec<String>,
    /// The `$defs` name of the schema of the document being converted, which a
    /// `$recursiveRef` leads back to; `None` for a schema written in an operation.
    pub(crate) place: Option<String>,
}

impl Converter<'_> {
    /// `schema` converted.
    ///
    /// # Errors
    ///
    /// [`SkipReason::Malformed`] for a schema nested deeper than 200 levels.
    pub(crate) fn convert(&mut self, schema: &Value) -> Result<Value, SkipReason> {
        self.schema(schema, 0)
    }

    fn schema(&mut self, schema: &Value, depth: usize) -> Result<Value, SkipReason> {
        if depth > MAX_DEPTH {
            return Err(SkipReason::malformed(
                "a schema is nested more than 200 levels deep",
            ));
        }
        let Value::Object(object) = schema else {
            // `true`, `false`, or something that is no schema, which a validator judges.
            return Ok(schema.clone());
        };
        let mut out = Map::new();
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            out.insert("$ref".to_owned(), Value::String(self.reference(reference)));
            if self.dialect == SchemaDialect::V30 {
                if let Some(description) = object.get("description") {
                    out.insert("description".to_owned(), description.clone());
                }
                return Ok(Value::Object(out));
            }
        }
        for (key, value) in object {
            match key.as_str() {
                "$ref" | "discriminator" | "xml" | "$recursiveAnchor" => {}
                "$recursiveRef" => {
                    if let Some(place) = &self.place
                        && !object.contains_key("$ref")
                    {
                        out.insert("$ref".to_owned(), Value::String(format!("#/$defs/{place}")));
                    }
                }
                "nullable" | "exclusiveMinimum" | "exclusiveMaximum" | "example" => {}
                "items" => {
                    let converted = match value {
                        Value::Array(items) => {
                            out.insert("prefixItems".to_owned(), self.list(items, depth)?);
                            continue;
                        }
                        item => self.schema(item, depth + 1)?,
                    };
                    out.insert(key.clone(), converted);
                }
                key_str if ONE.contains(&key_str) => {
                    out.insert(key.clone(), self.schema(value, depth + 1)?);
                }
                key_str if LIST.contains(&key_str) => match value {
                    Value::Array(items) => {
                        out.insert(key.clone(), self.list(items, depth)?);
                    }
                    other => {
                        out.insert(key.clone(), other.clone());
                    }
                },
                key_str if MAP.contains(&key_str) => match value {
                    Value::Object(members) => {
                        let mut converted = Map::new();
                        for (name, member) in members {
                            converted.insert(name.clone(), self.schema(member, depth + 1)?);
                        }
                        out.insert(key.clone(), Value::Object(converted));
                    }
                    other => {
                        out.insert(key.clone(), other.clone());
                    }
                },
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(as_31(object, out))
    }

    fn list(&mut self, items: &[Value], depth: usize) -> Result<Value, SkipReason> {
        items
            .iter()
            .map(|item| self.schema(item, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    }

    /// The reference rewritten to the input schema's `$defs`; an external one is kept as it is
    /// (the operation will be skipped for it).
    fn reference(&mut self, reference: &str) -> String {
        self.refs.push(reference.to_owned());
        if reference.starts_with('#') {
            format!("#/$defs/{}", self.names.name(reference))
        } else {
            reference.to_owned()
        }
    }
}

/// The 3.0 keywords of `original` written into `out` as 3.1 has them.
fn as_31(original: &Map<String, Value>, mut out: Map<String, Value>) -> Value {
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match original.get(exclusive) {
            Some(Value::Bool(true)) => {
                if let Some(limit) = out.remove(bound) {
                    out.insert(exclusive.to_owned(), limit);
                }
            }
            // A number is 3.1's form already (some 3.0 documents use it).
            Some(number @ Value::Number(_)) => {
                out.insert(exclusive.to_owned(), number.clone());
            }
            _ => {}
        }
    }
    if let Some(example) = original.get("example")
        && !out.contains_key("examples")
    {
        out.insert("examples".to_owned(), Value::Array(vec![example.clone()]));
    }
    if original.get("nullable") != Some(&Value::Bool(true)) {
        return Value::Object(out);
    }
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match out.get_mut("type") {
        Some(Value::String(single)) => {
            let single = std::mem::take(single);
            out.insert(
                "type".to_owned(),
                Value::Array(vec![
                    Value::String(single),
                    Value::String("null".to_owned()),
                ]),
            );
            Value::Object(out)
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(Value::String("null".to_owned()));
            }
            Value::Object(out)
        }
        _ => {
            let mut nullable = Map::new();
            nullable.insert(
                "anyOf".to_owned(),
                Value::Array(vec![
                    Value::Object(out),
                    serde_json::json!({ "type": "null" }),
                ]),
            );
            Value::Object(nullable)
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn convert(dialect: SchemaDialect, schema: Value) -> (Value, Vec<String>) {
        let mut names = Names::default();
        let mut refs = Vec::new();
        let converted = Converter {
            dialect,
            names: &mut names,
            refs: &mut refs,
            place: None,
        }
        .convert(&schema)
        .unwrap();
        (converted, refs)
    }

    #[test]
    fn nullable_becomes_a_type_list_or_an_any_of() {
        let (converted, _) = convert(
            SchemaDialect::V30,
            json!({"type": "string", "nullable": true, "enum": ["a"], "example": "a"}),
        );
        assert_eq!(
            converted,
            json!({"type": ["string", "null"], "enum": ["a", null], "examples": ["a"]})
        );
        let (converted, refs) = convert(
            SchemaDialect::V30,
            json!({"allOf": [{"$ref": "#/components/schemas/Pet"}], "nullable": true}),
        );
        assert_eq!(
            converted,
            json!({"anyOf": [{"allOf": [{"$ref": "#/$defs/Pet"}]}, {"type": "null"}]})
        );
        assert_eq!(refs, ["#/components/schemas/Pet"]);
    }

    #[test]
    fn boolean_exclusive_bounds_become_numbers() {
        let (converted, _) = convert(
            SchemaDialect::V30,
            json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false}),
        );
        assert_eq!(
            converted,
            json!({"type": "integer", "exclusiveMinimum": 0, "maximum": 9})
        );
    }

    #[test]
    fn siblings_of_a_30_ref_are_ignored_but_31_keeps_them() {
        let schema =
            json!({"$ref": "#/components/schemas/A", "description": "d", "nullable": true});
        assert_eq!(
            convert(SchemaDialect::V30, schema.clone()).0,
            json!({"$ref": "#/$defs/A", "description": "d"})
        );
        assert_eq!(
            convert(SchemaDialect::V31, schema).0,
            json!({"anyOf": [{"$ref": "#/$defs/A", "description": "d"}, {"type": "null"}]})
        );
    }

    #[test]
    fn a_schema_nested_too_deep_is_refused_not_overflowed() {
        let mut schema = json!({"type": "string"});
        for _ in 0..500 {
            schema = json!({ "items": schema });
        }
        let mut names = Names::default();
        let mut refs = Vec::new();
        let result = Converter {
            dialect: SchemaDialect::V31,
            names: &mut names,
            refs: &mut refs,
            place: None,
        }
        .convert(&schema);
        assert!(result.is_err());
    }
}
