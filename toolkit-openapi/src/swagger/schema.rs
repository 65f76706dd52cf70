//! A Swagger 2.0 schema as OpenAPI 3.0 writes it, and the references that move with it.
//!
//! - `$ref`s to `#/definitions/`, `#/parameters/` and `#/responses/` lead to the same entries
//!   under `#/components/` (and [`original_reference`] leads back, for the skips' reasons);
//! - `x-nullable: true` is 3.0's `nullable: true`;
//! - `type: file` is `{type: string, format: binary}`;
//! - a `discriminator` (a property name in 2.0) is 3.0's object, its `mapping` made from the
//!   `x-ms-discriminator-value` of the definitions that extend it through `allOf`, at any depth;
//! - an `x-ms-enum` with `modelAsString: true` is an open enum: its values go in the
//!   description and any string is accepted (the `enum` is dropped).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::pointer::escape;

/// The deepest nesting converted; deeper parts are copied as written (the reader refuses
/// schemas nested past 200 levels anyway).
const MAX_DEPTH: usize = 200;

/// Where 2.0 keeps each kind of entry, and where 3.0 does.
const MOVED: &[(&str, &str)] = &[
    ("#/definitions/", "#/components/schemas/"),
    ("#/parameters/", "#/components/parameters/"),
    ("#/responses/", "#/components/responses/"),
];

/// `reference` as it reads in the converted document.
pub(super) fn reference(reference: &str) -> String {
    for (from, to) in MOVED {
        if let Some(rest) = reference.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    reference.to_owned()
}

/// A reference of the converted document as the 2.0 document writes it.
pub(super) fn original_reference(reference: &str) -> String {
    for (to, from) in MOVED {
        if let Some(rest) = reference.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    reference.to_owned()
}

/// The discriminator mappings of the document's definitions: for each base (by name), each
/// `x-ms-discriminator-value` of a definition whose `allOf` names it, with that definition.
pub(super) fn mappings(definitions: Option<&Value>) -> BTreeMap<String, Map<String, Value>> {
    let mut mappings: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let Some(Value::Object(definitions)) = definitions else {
        return mappings;
    };
    for (name, definition) in definitions {
        let Some(value) = definition
            .get("x-ms-discriminator-value")
            .and_then(Value::as_str)
        else {
            continue;
        };
        let Some(Value::Array(parts)) = definition.get("allOf") else {
            continue;
        };
        for base in parents(parts) {
            mappings
                .entry(discriminating(definitions, base))
                .or_default()
                .insert(
                    value.to_owned(),
                    Value::String(format!("#/components/schemas/{}", escape(name))),
                );
        }
    }
    mappings
}

/// The definitions an `allOf` names (`#/definitions/NAME`), unescaped.
fn parents(parts: &[Value]) -> impl Iterator<Item = String> + '_ {
    parts.iter().filter_map(|part| {
        part.get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix("#/definitions/"))
            .map(|base| base.replace("~1", "/").replace("~0", "~"))
    })
}

/// The definition whose `discriminator` a value given under `base` is for: `base` when it has
/// one, else the nearest ancestor through `allOf` that has one (AutoRest's `goblinshark` →
/// `shark` → `Fish`), else `base` itself. At most 32 levels up, each definition once.
fn discriminating(definitions: &Map<String, Value>, base: String) -> String {
    let mut level = vec![base.clone()];
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..32 {
        let mut next = Vec::new();
        for name in level {
            let Some(definition) = definitions.get(&name) else {
                continue;
            };
            if definition.get("discriminator").is_some() {
                return name;
            }
            if seen.insert(name.clone())
                && let Some(Value::Array(parts)) = definition.get("allOf")
            {
                next.extend(parents(parts));
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    base
}

/// Converts schemas; `mappings` are the discriminator mappings of [`mappings`].
pub(super) struct Schemas<'a> {
    pub(super) mappings: &'a BTreeMap<String, Map<String, Value>>,
}

impl Schemas<'_> {
    /// `schema` (a 2.0 schema, or a parameter's or header's `items`) as 3.0 writes it; `name`
    /// is the definition's name when it is one (for its discriminator's mapping).
    pub(super) fn convert(&self, schema: &Value, name: Option<&str>) -> Value {
        self.schema(schema, name, 0)
    }

    fn schema(&self, schema: &Value, name: Option<&str>, depth: usize) -> Value {
        let Value::Object(object) = schema else {
            return schema.clone();
        };
        if depth > MAX_DEPTH {
            return schema.clone();
        }
        let mut out = Map::new();
        for (key, value) in object {
            let converted = match key.as_str() {
                "$ref" => match value {
                    Value::String(target) => Value::String(reference(target)),
                    other => other.clone(),
                },
                "x-nullable" => {
                    if value == &Value::Bool(true) {
                        out.insert("nullable".to_owned(), Value::Bool(true));
                    }
                    continue;
                }
                // A parameter's `items` carry their own format, which 3.0's schema has not.
                "collectionFormat" => continue,
                "type" if value == "file" => {
                    out.insert("type".to_owned(), json!("string"));
                    out.insert("format".to_owned(), json!("binary"));
                    continue;
                }
                "format" if object.get("type") == Some(&json!("file")) => continue,
                "discriminator" => match value {
                    Value::String(property) => {
                        let mut discriminator = Map::new();
                        discriminator.insert("propertyName".to_owned(), json!(property));
                        if let Some(mapping) = name.and_then(|name| self.mappings.get(name)) {
                            discriminator
                                .insert("mapping".to_owned(), Value::Object(mapping.clone()));
                        }
                        Value::Object(discriminator)
                    }
                    other => other.clone(),
                },
                "properties" | "definitions" | "patternProperties" => match value {
                    Value::Object(schemas) => Value::Object(
                        schemas
                            .iter()
                            .map(|(key, schema)| {
                                (key.clone(), self.schema(schema, None, depth + 1))
                            })
                            .collect(),
                    ),
                    other => other.clone(),
                },
                "items" | "additionalProperties" | "not" => match value {
                    Value::Array(list) => Value::Array(
                        list.iter()
                            .map(|schema| self.schema(schema, None, depth + 1))
                            .collect(),
                    ),
                    schema => self.schema(schema, None, depth + 1),
                },
                "allOf" | "anyOf" | "oneOf" => match value {
                    Value::Array(list) => Value::Array(
                        list.iter()
                            .map(|schema| self.schema(schema, None, depth + 1))
                            .collect(),
                    ),
                    other => other.clone(),
                },
                _ => value.clone(),
            };
            out.insert(key.clone(), converted);
        }
        open_enum(&mut out);
        Value::Object(out)
    }
}

/// An `x-ms-enum` with `modelAsString: true` names the values known today and accepts any
/// string: the `enum` goes, its values are told in the description.
fn open_enum(schema: &mut Map<String, Value>) {
    let open = schema
        .get("x-ms-enum")
        .and_then(|extension| extension.get("modelAsString"))
        == Some(&Value::Bool(true));
    if !open {
        return;
    }
    let Some(Value::Array(values)) = schema.remove("enum") else {
        return;
    };
    let known: Vec<String> = values
        .iter()
        .map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect();
    let note = format!("Known values: {}; others are accepted.", known.join(", "));
    let description = match schema.get("description").and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => format!("{} {note}", text.trim_end()),
        _ => note,
    };
    schema.insert("description".to_owned(), Value::String(description));
    if let Some(first) = values.into_iter().next()
        && !schema.contains_key("example")
    {
        schema.insert("example".to_owned(), first);
    }
}
