//! A Swagger 2.0 path item and its operations as OpenAPI 3.0 writes them.
//!
//! The path item's parameters are merged into each operation's (the operation's win, by name
//! and place), references followed in the 2.0 document; then the `body` parameter or the
//! `formData` ones make the `requestBody` (see [`bodies`]), the others stay
//! parameters (see [`parameters`]), and each response gets its content (see
//! [`responses`]). An operation that cannot be converted (a reference to
//! nothing, a `tsv` list, a body beside form fields) is left out, with its reason, for the
//! reader to list among the skips at its 2.0 location.

use serde_json::{Map, Value};

use super::bodies;
use super::parameters;
use super::responses;
use super::schema::Schemas;
use crate::SkipReason;
use crate::pointer;

/// The methods of a 2.0 path item.
pub(super) const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch"];

/// The document-wide lists an operation falls back on.
pub(super) struct Defaults<'d> {
    pub(super) document: &'d Value,
    pub(super) consumes: Vec<String>,
    pub(super) produces: Vec<String>,
}

/// A media type list (`consumes`, `produces`), or `None` when there is none.
pub(super) fn media_types(value: Option<&Value>) -> Option<Vec<String>> {
    let Value::Array(list) = value? else {
        return None;
    };
    Some(
        list.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
    )
}

/// `item` converted, with each method that could not be, and why.
pub(super) fn path_item(
    item: &Value,
    defaults: &Defaults<'_>,
    schemas: &Schemas<'_>,
) -> (Value, Vec<(&'static str, SkipReason)>) {
    let mut skipped = Vec::new();
    let item = match pointer::follow(defaults.document, item) {
        Ok(Value::Object(item)) => item,
        // Not an object, or a reference that leads nowhere: the reader says so, at the path.
        Ok(other) => return (other.clone(), skipped),
        Err(reason) => {
            return (
                serde_json::json!({ "$ref": reason_reference(&reason) }),
                skipped,
            );
        }
    };
    let mut out = Map::new();
    for (key, value) in item {
        if key == "parameters" || key == "$ref" {
            continue;
        }
        if let Some(method) = METHODS.iter().find(|method| **method == key) {
            match operation(value, item.get("parameters"), defaults, schemas) {
                Ok(operation) => {
                    out.insert(key.clone(), operation);
                }
                Err(reason) => skipped.push((*method, reason)),
            }
        } else {
            out.insert(key.clone(), value.clone());
        }
    }
    (Value::Object(out), skipped)
}

/// The reference a reason names, to keep a broken path item's reference for the reader.
fn reason_reference(reason: &SkipReason) -> String {
    match reason {
        SkipReason::ExternalReference { reference } | SkipReason::BrokenReference { reference } => {
            reference.clone()
        }
        _ => "#/".to_owned(),
    }
}

fn operation(
    operation: &Value,
    of_item: Option<&Value>,
    defaults: &Defaults<'_>,
    schemas: &Schemas<'_>,
) -> Result<Value, SkipReason> {
    let Value::Object(operation) = operation else {
        // The reader skips it as "not an object".
        return Ok(operation.clone());
    };
    let document = defaults.document;
    let mut merged: Vec<&Map<String, Value>> = Vec::new();
    for list in [of_item, operation.get("parameters")].into_iter().flatten() {
        let Value::Array(list) = list else {
            return Err(SkipReason::malformed("`parameters` is not a list"));
        };
        for parameter in list {
            let Value::Object(parameter) = pointer::follow(document, parameter)? else {
                return Err(SkipReason::malformed("a parameter is not an object"));
            };
            let key = |parameter: &Map<String, Value>| {
                (parameter.get("name").cloned(), parameter.get("in").cloned())
            };
            match merged.iter_mut().find(|known| key(known) == key(parameter)) {
                Some(known) => *known = parameter,
                None => merged.push(parameter),
            }
        }
    }
    let consumes =
        media_types(operation.get("consumes")).unwrap_or_else(|| defaults.consumes.clone());
    let produces =
        media_types(operation.get("produces")).unwrap_or_else(|| defaults.produces.clone());

    let mut converted = Vec::new();
    let mut body = None;
    let mut fields = Vec::new();
    for parameter in merged {
        match parameter.get("in").and_then(Value::as_str) {
            Some("body") => {
                if body.is_some() {
                    return Err(SkipReason::malformed(
                        "the operation has two body parameters",
                    ));
                }
                body = Some(parameter);
            }
            Some("formData") => fields.push(parameter),
            Some(place @ ("query" | "path" | "header")) => {
                converted.push(parameters::parameter(parameter, place, schemas)?);
            }
            // No place 2.0 knows: as written, for the reader to say so.
            _ => converted.push(Value::Object(parameter.clone())),
        }
    }
    let request_body = match (body, fields.is_empty()) {
        (Some(_), false) => {
            return Err(SkipReason::malformed(
                "the operation has both a body parameter and formData parameters",
            ));
        }
        (Some(body), true) => Some(bodies::body(body, &consumes, schemas)),
        (None, false) => Some(bodies::form(&fields, &consumes, schemas)?),
        (None, true) => None,
    };

    let mut out = Map::new();
    for (key, value) in operation {
        match key.as_str() {
            "parameters" | "consumes" | "produces" | "schemes" => {}
            "responses" => {
                out.insert(
                    key.clone(),
                    responses_of(value, &produces, defaults, schemas)?,
                );
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if !converted.is_empty() {
        out.insert("parameters".to_owned(), Value::Array(converted));
    }
    if let Some(request_body) = request_body {
        out.insert("requestBody".to_owned(), request_body);
    }
    if let Some(name) = body
        .and_then(|body| body.get("name"))
        .and_then(Value::as_str)
        && !out.contains_key(bodies::BODY_NAME)
    {
        out.insert(bodies::BODY_NAME.to_owned(), Value::String(name.to_owned()));
    }
    if !out.contains_key("responses") {
        out.insert("responses".to_owned(), Value::Object(Map::new()));
    }
    Ok(Value::Object(out))
}

/// The operation's responses, each reference followed in the 2.0 document (the operation's
/// `produces` decide a shared response's media types).
fn responses_of(
    responses: &Value,
    produces: &[String],
    defaults: &Defaults<'_>,
    schemas: &Schemas<'_>,
) -> Result<Value, SkipReason> {
    let Value::Object(responses) = responses else {
        return Ok(responses.clone());
    };
    let mut out = Map::new();
    for (status, response) in responses {
        if status.starts_with("x-") {
            out.insert(status.clone(), response.clone());
            continue;
        }
        let response = pointer::follow(defaults.document, response)?;
        out.insert(
            status.clone(),
            responses::response(response, produces, schemas),
        );
    }
    Ok(Value::Object(out))
}
