//! The request body of a Swagger 2.0 operation as OpenAPI 3.0 writes it: the `in: body`
//! parameter, or the `in: formData` ones as the fields of a form.
//!
//! - The body parameter's schema is the content of each media type the operation `consumes`
//!   (its own list, else the document's, else `application/json`); its name is kept as the
//!   operation's `x-codegen-request-body-name` (where converters from 2.0 write it), which the
//!   reader names the body's property after.
//! - Form fields make one object schema under `multipart/form-data` when the operation
//!   consumes it or a field is a file (`type: file`, a `{type: string, format: binary}`), else
//!   under `application/x-www-form-urlencoded`. A list field's `collectionFormat` becomes its
//!   `encoding` (`multi` exploded, any other joined).

use serde_json::{Map, Value, json};

use super::parameters::value_schema;
use super::schema::Schemas;
use crate::SkipReason;

pub(crate) use crate::naming::BODY_NAME;

const FORM: &str = "application/x-www-form-urlencoded";
const MULTIPART: &str = "multipart/form-data";

/// The `requestBody` of the body parameter `body`, sent as each of `consumes`.
pub(super) fn body(body: &Map<String, Value>, consumes: &[String], schemas: &Schemas<'_>) -> Value {
    let schema = body
        .get("schema")
        .map_or_else(|| json!({}), |schema| schemas.convert(schema, None));
    let media_types: Vec<&str> = if consumes.is_empty() {
        vec!["application/json"]
    } else {
        consumes.iter().map(String::as_str).collect()
    };
    let content: Map<String, Value> = media_types
        .into_iter()
        .map(|media_type| (media_type.to_owned(), json!({ "schema": schema })))
        .collect();
    let mut out = Map::new();
    if let Some(description) = body.get("description") {
        out.insert("description".to_owned(), description.clone());
    }
    out.insert("content".to_owned(), Value::Object(content));
    if body.get("required") == Some(&Value::Bool(true)) {
        out.insert("required".to_owned(), Value::Bool(true));
    }
    Value::Object(out)
}

/// The `requestBody` of the form fields `fields` (the `formData` parameters, in order).
///
/// # Errors
///
/// [`SkipReason::Malformed`] for a field with no name.
pub(super) fn form(
    fields: &[&Map<String, Value>],
    consumes: &[String],
    schemas: &Schemas<'_>,
) -> Result<Value, SkipReason> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut encoding = Map::new();
    let mut file = false;
    for field in fields {
        let Some(name) = field.get("name").and_then(Value::as_str) else {
            return Err(SkipReason::malformed("a formData parameter has no `name`"));
        };
        file |= field.get("type").and_then(Value::as_str) == Some("file");
        let mut schema = value_schema(field, schemas);
        if let (Value::Object(object), Some(description)) = (&mut schema, field.get("description"))
        {
            object.insert("description".to_owned(), description.clone());
        }
        if field.get("required") == Some(&Value::Bool(true)) {
            required.push(Value::String(name.to_owned()));
        }
        if field.get("type").and_then(Value::as_str) == Some("array") {
            let multi = field.get("collectionFormat").and_then(Value::as_str) == Some("multi");
            encoding.insert(
                name.to_owned(),
                json!({ "style": "form", "explode": multi }),
            );
        }
        properties.insert(name.to_owned(), schema);
    }
    let multipart = file
        || consumes
            .iter()
            .any(|media_type| media_type.to_ascii_lowercase().starts_with(MULTIPART));
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".to_owned(), Value::Array(required));
    }
    let mut media = Map::new();
    media.insert("schema".to_owned(), Value::Object(schema));
    if !encoding.is_empty() {
        media.insert("encoding".to_owned(), Value::Object(encoding));
    }
    let media_type = if multipart { MULTIPART } else { FORM };
    let mut content = Map::new();
    content.insert(media_type.to_owned(), Value::Object(media));
    let any_required = fields
        .iter()
        .any(|field| field.get("required") == Some(&Value::Bool(true)));
    let mut out = Map::new();
    out.insert("content".to_owned(), Value::Object(content));
    if any_required {
        out.insert("required".to_owned(), Value::Bool(true));
    }
    Ok(Value::Object(out))
}
