//! GraphQL input types as JSON Schema 2020-12: the arguments of a field, or the variables of an
//! operation, as one strict object schema that stands alone.
//!
//! | GraphQL | JSON Schema |
//! | --- | --- |
//! | `String`, `ID` | `string` (an `ID` says so in its description) |
//! | `Int` | `integer`, within 32 bits |
//! | `Float` | `number` |
//! | `Boolean` | `boolean` |
//! | a custom scalar (`DateTime`, `URI`) | `string`, its name and description in the description |
//! | an enum | `{"$ref": "#/$defs/Name"}`: a `string` with its values as `enum` |
//! | an input object | `{"$ref": "#/$defs/Name"}`: an `object` with `additionalProperties: false` |
//! | `[T]` | `array` of `T` |
//! | `T!` with no default | required |

use std::collections::BTreeMap;

use apollo_compiler::Schema;
use apollo_compiler::ast::{Type, Value as GraphqlValue};
use apollo_compiler::schema::ExtendedType;
use serde_json::{Map, Value, json};

/// The `$defs` a tool's input schema gathers, by type name.
pub(crate) type Defs = BTreeMap<String, Value>;

/// One property of an input object: its name, type, description and default.
pub(crate) struct InputProperty<'a> {
    pub name: &'a str,
    pub ty: &'a Type,
    pub description: Option<&'a str>,
    pub default: Option<&'a GraphqlValue>,
    pub deprecated: bool,
}

/// The object schema of `properties`, their types' definitions added to `defs`.
pub(crate) fn object_schema<'a>(
    schema: &Schema,
    properties: impl IntoIterator<Item = InputProperty<'a>>,
    description: Option<&str>,
    defs: &mut Defs,
) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("type".into(), "object".into());
    if let Some(description) = description.filter(|text| !text.is_empty()) {
        object.insert("description".into(), description.into());
    }
    let mut fields = Map::new();
    let mut required = Vec::new();
    for property in properties {
        let mut field = type_schema(schema, property.ty, defs);
        if let Some(field) = field.as_object_mut() {
            if let Some(text) = property.description.filter(|text| !text.is_empty()) {
                let text = match field.get("description").and_then(Value::as_str) {
                    Some(about_type) if field.contains_key("type") => {
                        format!("{text} ({about_type})")
                    }
                    _ => text.to_owned(),
                };
                field.insert("description".into(), text.into());
            }
            if let Some(default) = property.default {
                field.insert("default".into(), json_value(default));
            }
            if property.deprecated {
                field.insert("deprecated".into(), true.into());
            }
        }
        if property.ty.is_non_null() && property.default.is_none() {
            required.push(Value::from(property.name));
        }
        fields.insert(property.name.to_owned(), field);
    }
    object.insert("properties".into(), Value::Object(fields));
    if !required.is_empty() {
        object.insert("required".into(), Value::Array(required));
    }
    object.insert("additionalProperties".into(), false.into());
    object
}

/// The schema of a type reference.
pub(crate) fn type_schema(schema: &Schema, ty: &Type, defs: &mut Defs) -> Value {
    match ty {
        Type::List(item) | Type::NonNullList(item) => {
            json!({ "type": "array", "items": type_schema(schema, item, defs) })
        }
        Type::Named(name) | Type::NonNullNamed(name) => named_schema(schema, name.as_str(), defs),
    }
}

/// The schema of the named type `name`: inline for a scalar, a `$ref` into `defs` otherwise.
fn named_schema(schema: &Schema, name: &str, defs: &mut Defs) -> Value {
    match name {
        "String" => return json!({ "type": "string" }),
        "ID" => return json!({ "type": "string", "description": "ID" }),
        "Int" => {
            return json!({ "type": "integer", "minimum": i32::MIN, "maximum": i32::MAX });
        }
        "Float" => return json!({ "type": "number" }),
        "Boolean" => return json!({ "type": "boolean" }),
        _ => {}
    }
    let reference = json!({ "$ref": format!("#/$defs/{name}") });
    match schema.types.get(name) {
        Some(ExtendedType::Enum(definition)) => {
            if !defs.contains_key(name) {
                let values: Vec<Value> = definition
                    .values
                    .keys()
                    .map(|value| value.as_str().into())
                    .collect();
                let mut def = Map::new();
                def.insert("type".into(), "string".into());
                if let Some(description) = &definition.description {
                    def.insert("description".into(), description.as_str().into());
                }
                def.insert("enum".into(), Value::Array(values));
                defs.insert(name.to_owned(), Value::Object(def));
            }
            reference
        }
        Some(ExtendedType::InputObject(definition)) => {
            if !defs.contains_key(name) {
                // A placeholder first, so that a recursive input type ends at its reference.
                defs.insert(name.to_owned(), Value::Bool(true));
                let properties = definition.fields.values().map(|field| InputProperty {
                    name: field.name.as_str(),
                    ty: &field.ty,
                    description: field.description.as_deref(),
                    default: field.default_value.as_deref(),
                    deprecated: field.directives.get("deprecated").is_some(),
                });
                let def =
                    object_schema(schema, properties, definition.description.as_deref(), defs);
                defs.insert(name.to_owned(), Value::Object(def));
            }
            reference
        }
        Some(ExtendedType::Scalar(definition)) => {
            let description = match &definition.description {
                Some(text) => format!("GraphQL scalar {name}: {}", text.as_str()),
                None => format!("GraphQL scalar {name}"),
            };
            json!({ "type": "string", "description": description })
        }
        // An output type as an input is refused by validation; nothing is known of it here.
        _ => json!({}),
    }
}

/// A GraphQL constant as JSON (an enum value as its name).
fn json_value(value: &GraphqlValue) -> Value {
    match value {
        GraphqlValue::Null | GraphqlValue::Variable(_) => Value::Null,
        GraphqlValue::Enum(name) => name.as_str().into(),
        GraphqlValue::String(text) => text.as_str().into(),
        GraphqlValue::Boolean(value) => (*value).into(),
        GraphqlValue::Int(number) => number
            .try_to_i32()
            .map_or_else(|_| Value::String(number.as_str().to_owned()), Value::from),
        GraphqlValue::Float(number) => number.try_to_f64().map_or(Value::Null, Value::from),
        GraphqlValue::List(items) => items.iter().map(|item| json_value(item)).collect(),
        GraphqlValue::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, value)| (name.as_str().to_owned(), json_value(value)))
                .collect(),
        ),
    }
}
