//! A Swagger 2.0 response as OpenAPI 3.0 writes it: its `schema` the content of each media type
//! the operation `produces` (its own list, else the document's, else `application/json`), its
//! `examples` beside them, its `headers` each with a `schema`.

use serde_json::{Map, Value, json};

use super::parameters::value_schema;
use super::schema::Schemas;

/// `response` (a 2.0 response object, references already followed) as 3.0 writes it.
pub(super) fn response(response: &Value, produces: &[String], schemas: &Schemas<'_>) -> Value {
    let Value::Object(response) = response else {
        return response.clone();
    };
    let mut out = Map::new();
    out.insert(
        "description".to_owned(),
        response
            .get("description")
            .cloned()
            .unwrap_or_else(|| json!("")),
    );
    let examples = response.get("examples").and_then(Value::as_object);
    if let Some(schema) = response.get("schema") {
        let schema = schemas.convert(schema, None);
        let media_types: Vec<&str> = if produces.is_empty() {
            vec!["application/json"]
        } else {
            produces.iter().map(String::as_str).collect()
        };
        let content: Map<String, Value> = media_types
            .into_iter()
            .map(|media_type| {
                let mut media = Map::new();
                media.insert("schema".to_owned(), schema.clone());
                if let Some(example) = examples.and_then(|examples| examples.get(media_type)) {
                    media.insert("example".to_owned(), example.clone());
                }
                (media_type.to_owned(), Value::Object(media))
            })
            .collect();
        out.insert("content".to_owned(), Value::Object(content));
    }
    if let Some(Value::Object(headers)) = response.get("headers") {
        let headers: Map<String, Value> = headers
            .iter()
            .map(|(name, header)| {
                let Value::Object(header) = header else {
                    return (name.clone(), header.clone());
                };
                let mut converted = Map::new();
                if let Some(description) = header.get("description") {
                    converted.insert("description".to_owned(), description.clone());
                }
                converted.insert("schema".to_owned(), value_schema(header, schemas));
                (name.clone(), Value::Object(converted))
            })
            .collect();
        out.insert("headers".to_owned(), Value::Object(headers));
    }
    for (key, value) in response {
        if key.starts_with("x-") {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}
