//! Swagger 2.0 read as OpenAPI 3.0: [`read`] converts the document ([`convert`]) and reads the
//! result, the skips located in the 2.0 document.
//!
//! The conversion follows the 3.0 model, one concept per file: [`servers`] (`host`,
//! `basePath`, `schemes`), [`parameters`] (type keywords and `collectionFormat`), [`bodies`]
//! (the `body` parameter and `formData` fields), [`responses`] (`produces`, `schema`,
//! `headers`), [`security`] (`securityDefinitions`), [`schema`] (`definitions`, references and
//! the 2.0 and AutoRest extensions: `x-nullable`, `type: file`, `discriminator`, `x-ms-enum`),
//! [`operations`] (path items). `x-ms-paths` (AutoRest's paths with a query part, such as
//! `/query?restype=container`) join the paths, the query kept as a fixed part of the request.
//!
//! The paths are the same in both documents, so a skip's location (`#/paths/~1pets/post`) is
//! the 2.0 document's; one of `x-ms-paths` is moved back there, and a reason's reference is
//! written as the 2.0 document writes it (`#/definitions/Pet`).

mod bodies;
mod operations;
mod parameters;
mod responses;
mod schema;
mod security;
mod servers;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::pointer::{escape, location};
use crate::{NotOpenApi, ReadOperations, ReadOptions, SkipReason, Skipped};
use operations::{Defaults, media_types};
use schema::Schemas;

/// A 2.0 document converted.
pub(crate) struct Converted {
    /// The OpenAPI 3.0.3 document.
    pub(crate) document: Value,
    /// The operations left out, with where they are in the 2.0 document and why.
    pub(crate) skipped: Vec<Skipped>,
    /// The paths that came from `x-ms-paths`.
    pub(crate) moved: BTreeSet<String>,
}

/// Reads the operations of a Swagger 2.0 document (`document` has a `swagger` field).
///
/// # Errors
///
/// [`NotOpenApi`] for a `swagger` version other than 2.0.
pub(crate) fn read(document: &Value, options: &ReadOptions) -> Result<ReadOperations, NotOpenApi> {
    let version = document.get("swagger");
    if version.and_then(Value::as_str) != Some("2.0") {
        let version = match version {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        return Err(NotOpenApi::new(format!(
            "the document is Swagger {version}: only Swagger 2.0 and OpenAPI 3.0 and 3.1 are read"
        )));
    }
    let Converted {
        document,
        skipped,
        moved,
    } = convert(document);
    let mut read = crate::reader::read_openapi(&document, options)?;
    for skip in &mut read.skipped {
        relocate(skip, &moved);
    }
    // A scheme the reader could not read is where 2.0 keeps it.
    for problem in &mut read.security.problems {
        if let Some(name) = problem
            .location
            .strip_prefix("#/components/securitySchemes/")
        {
            problem.location = format!("#/securityDefinitions/{name}");
        }
    }
    read.skipped.extend(skipped);
    Ok(read)
}

/// Converts a Swagger 2.0 document (a JSON object) to OpenAPI 3.0.3. Nothing about one
/// operation fails the document: an operation that cannot be converted is left out and listed.
pub(crate) fn convert(document: &Value) -> Converted {
    let mut skipped = Vec::new();
    let mut moved = BTreeSet::new();
    let mappings = schema::mappings(document.get("definitions"));
    let schemas = Schemas {
        mappings: &mappings,
    };
    let defaults = Defaults {
        document,
        consumes: media_types(document.get("consumes")).unwrap_or_default(),
        produces: media_types(document.get("produces")).unwrap_or_default(),
    };

    let mut out = Map::new();
    out.insert("openapi".to_owned(), json!("3.0.3"));
    out.insert(
        "info".to_owned(),
        document
            .get("info")
            .cloned()
            .unwrap_or_else(|| json!({ "title": "", "version": "" })),
    );
    out.insert(
        "servers".to_owned(),
        Value::Array(servers::servers(document)),
    );
    for key in ["security", "tags", "externalDocs"] {
        if let Some(value) = document.get(key) {
            out.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(object) = document.as_object() {
        for (key, value) in object {
            if key.starts_with("x-") && key != "x-ms-paths" {
                out.insert(key.clone(), value.clone());
            }
        }
    }

    let mut paths = Map::new();
    match document.get("paths") {
        Some(Value::Object(items)) => {
            for (path, item) in items {
                if path.starts_with("x-") {
                    paths.insert(path.clone(), item.clone());
                    continue;
                }
                let (converted, left) = operations::path_item(item, &defaults, &schemas);
                skipped.extend(left.into_iter().map(|(method, reason)| Skipped {
                    location: location(["paths", path, method]),
                    method: method.to_ascii_uppercase(),
                    path: path.clone(),
                    reason,
                }));
                paths.insert(path.clone(), converted);
            }
        }
        // Not an object: as written, for the reader to say so.
        Some(other) => {
            out.insert("paths".to_owned(), other.clone());
        }
        None => {}
    }
    if let Some(Value::Object(items)) = document.get("x-ms-paths") {
        for (path, item) in items {
            if path.starts_with("x-") {
                continue;
            }
            let (converted, left) = operations::path_item(item, &defaults, &schemas);
            skipped.extend(left.into_iter().map(|(method, reason)| Skipped {
                location: location(["x-ms-paths", path, method]),
                method: method.to_ascii_uppercase(),
                path: path.clone(),
                reason,
            }));
            if paths.contains_key(path) {
                skipped.push(Skipped {
                    location: location(["x-ms-paths", path]),
                    method: String::new(),
                    path: path.clone(),
                    reason: SkipReason::malformed(
                        "the path is in both `paths` and `x-ms-paths`; the one in `paths` is read",
                    ),
                });
                continue;
            }
            moved.insert(path.clone());
            paths.insert(path.clone(), converted);
        }
    }
    if !out.contains_key("paths") {
        out.insert("paths".to_owned(), Value::Object(paths));
    }

    let mut components = Map::new();
    if let Some(Value::Object(definitions)) = document.get("definitions") {
        let converted: Map<String, Value> = definitions
            .iter()
            .map(|(name, definition)| (name.clone(), schemas.convert(definition, Some(name))))
            .collect();
        components.insert("schemas".to_owned(), Value::Object(converted));
    }
    if let Some(Value::Object(shared)) = document.get("parameters") {
        let mut converted = Map::new();
        let mut bodies = Map::new();
        for (name, parameter) in shared {
            let Value::Object(parameter) = parameter else {
                continue;
            };
            match parameter.get("in").and_then(Value::as_str) {
                Some("body") => {
                    bodies.insert(
                        name.clone(),
                        bodies::body(parameter, &defaults.consumes, &schemas),
                    );
                }
                Some(place @ ("query" | "path" | "header")) => {
                    if let Ok(value) = parameters::parameter(parameter, place, &schemas) {
                        converted.insert(name.clone(), value);
                    }
                }
                // A form field is no 3.0 component of its own: operations hold it in their
                // request bodies.
                _ => {}
            }
        }
        components.insert("parameters".to_owned(), Value::Object(converted));
        if !bodies.is_empty() {
            components.insert("requestBodies".to_owned(), Value::Object(bodies));
        }
    }
    if let Some(Value::Object(shared)) = document.get("responses") {
        let converted: Map<String, Value> = shared
            .iter()
            .map(|(name, response)| {
                (
                    name.clone(),
                    responses::response(response, &defaults.produces, &schemas),
                )
            })
            .collect();
        components.insert("responses".to_owned(), Value::Object(converted));
    }
    if let Some(Value::Object(definitions)) = document.get("securityDefinitions") {
        components.insert(
            "securitySchemes".to_owned(),
            Value::Object(security::schemes(definitions)),
        );
    }
    if !components.is_empty() {
        out.insert("components".to_owned(), Value::Object(components));
    }
    Converted {
        document: Value::Object(out),
        skipped,
        moved,
    }
}

/// `skip`, read from the converted document, as the 2.0 document has it: a path of
/// `x-ms-paths` located there, references as 2.0 writes them.
fn relocate(skip: &mut Skipped, moved: &BTreeSet<String>) {
    let to_original = |at: &mut String| {
        for path in moved {
            let prefix = format!("#/paths/{}", escape(path));
            if at == &prefix || at.starts_with(&format!("{prefix}/")) {
                *at = format!("#/x-ms-paths{}", &at["#/paths".len()..]);
                return;
            }
        }
    };
    to_original(&mut skip.location);
    match &mut skip.reason {
        SkipReason::ExternalReference { reference }
        | SkipReason::BrokenReference { reference }
        | SkipReason::NotASchema { reference } => {
            *reference = schema::original_reference(reference);
        }
        SkipReason::DuplicateName { taken_by, .. } => to_original(taken_by),
        _ => {}
    }
}
