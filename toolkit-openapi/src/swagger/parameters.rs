//! A Swagger 2.0 parameter in the path, the query or a header as OpenAPI 3.0 writes it: its
//! type keywords become its `schema`, its `collectionFormat` a `style` and `explode`.
//!
//! | `collectionFormat` | query                              | path, header |
//! |--------------------|------------------------------------|--------------|
//! | `csv` (default)    | `form`, `explode: false`           | `simple`     |
//! | `ssv`              | `spaceDelimited`, `explode: false` | skipped      |
//! | `pipes`            | `pipeDelimited`, `explode: false`  | skipped      |
//! | `multi`            | `form`, `explode: true`            | skipped      |
//! | `tsv`              | skipped                            | skipped      |
//!
//! 3.0 has no style that joins a list with tabs, so an operation with a `tsv` list is skipped
//! with [`SkipReason::ParameterStyle`] rather than sent in a format the API does not read.

use serde_json::{Map, Value};

use super::schema::Schemas;
use crate::SkipReason;

/// The keywords of a 2.0 parameter (or header, or `items`) that describe its value: its schema
/// in 3.0.
const SCHEMA_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
    "x-nullable",
    "x-ms-enum",
];

/// The schema of a 2.0 parameter, header or form field, from its type keywords.
pub(super) fn value_schema(parameter: &Map<String, Value>, schemas: &Schemas<'_>) -> Value {
    let own: Map<String, Value> = parameter
        .iter()
        .filter(|(key, _)| SCHEMA_KEYWORDS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    schemas.convert(&Value::Object(own), None)
}

/// A path, query or header parameter as 3.0 writes it.
///
/// # Errors
///
/// [`SkipReason::ParameterStyle`] for a list in a `collectionFormat` 3.0 cannot write there.
pub(super) fn parameter(
    parameter: &Map<String, Value>,
    place: &str,
    schemas: &Schemas<'_>,
) -> Result<Value, SkipReason> {
    let name = parameter
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut out = Map::new();
    for (key, value) in parameter {
        match key.as_str() {
            "x-example" => {
                out.insert("example".to_owned(), value.clone());
            }
            "collectionFormat" => {}
            key if SCHEMA_KEYWORDS.contains(&key) => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    out.insert("schema".to_owned(), value_schema(parameter, schemas));
    if parameter.get("type").and_then(Value::as_str) == Some("array") {
        let format = parameter
            .get("collectionFormat")
            .and_then(Value::as_str)
            .unwrap_or("csv");
        let refuse = || {
            Err(SkipReason::ParameterStyle {
                name: name.to_owned(),
                style: format!("collectionFormat {format} in the {place}"),
            })
        };
        let (style, explode) = match (place, format) {
            ("query", "csv") => ("form", false),
            ("query", "ssv") => ("spaceDelimited", false),
            ("query", "pipes") => ("pipeDelimited", false),
            ("query", "multi") => ("form", true),
            ("path" | "header", "csv") => ("simple", false),
            _ => return refuse(),
        };
        out.insert("style".to_owned(), Value::String(style.to_owned()));
        out.insert("explode".to_owned(), Value::Bool(explode));
    }
    Ok(Value::Object(out))
}
