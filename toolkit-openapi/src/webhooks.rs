//! An OpenAPI 3.1 document's `webhooks`: the requests the API sends, each read as an event type
//! a host can receive ([`read_webhooks`]): its name (the webhook's key), its description, and the
//! JSON Schema of its payload (the request's JSON body, its `$ref`s gathered into `$defs` as the
//! reader gathers an operation's).

use serde_json::{Map, Value};
use toolkit_core::JsonObject;

use super::naming::BODY;
use super::{NotOpenApi, ReadOptions, reader};

/// One webhook the API sends.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Webhook {
    /// Its key under `webhooks`.
    pub name: String,
    /// What its operation says of it (`summary`, `description`).
    pub description: String,
    /// The JSON Schema of its JSON body, self-contained.
    pub payload_schema: JsonObject,
}

/// The webhooks of `document`: its `webhooks` (OpenAPI 3.1 and later), or its `x-webhooks` (the
/// extension 3.0 documents such as GitHub's write them in), each whose request has a JSON body;
/// one without is left out. None for a document without.
///
/// ```
/// let document = serde_json::json!({
///     "openapi": "3.1.0",
///     "info": { "title": "Shop", "version": "1" },
///     "webhooks": { "orderPlaced": { "post": {
///         "summary": "An order was placed.",
///         "requestBody": { "content": { "application/json": { "schema": {
///             "type": "object",
///             "properties": { "id": { "type": "string" } },
///             "required": ["id"]
///         } } } },
///         "responses": { "200": { "description": "taken" } }
///     } } }
/// });
/// let hooks = toolkit_openapi::read_webhooks(&document, &Default::default())?;
/// assert_eq!(hooks[0].name, "orderPlaced");
/// assert_eq!(hooks[0].payload_schema["required"], serde_json::json!(["id"]));
/// # Ok::<(), toolkit_openapi::NotOpenApi>(())
/// ```
///
/// # Errors
///
/// [`NotOpenApi`] when the document is no OpenAPI 3 document.
pub fn read_webhooks(document: &Value, options: &ReadOptions) -> Result<Vec<Webhook>, NotOpenApi> {
    let Some(Value::Object(hooks)) = document
        .get("webhooks")
        .or_else(|| document.get("x-webhooks"))
    else {
        return Ok(Vec::new());
    };
    // Each webhook read as an operation of a path of its own, by the reader that reads paths.
    let mut as_paths = document.clone();
    let mut paths = Map::new();
    for (name, item) in hooks {
        paths.insert(format!("/{}", name.replace('/', "~1")), item.clone());
    }
    if let Value::Object(object) = &mut as_paths {
        object.remove("webhooks");
        object.remove("x-webhooks");
        object.insert("paths".into(), Value::Object(paths));
    }
    let read = reader::read_openapi(&as_paths, options)?;
    let mut webhooks = Vec::new();
    for (name, item) in hooks {
        let path = format!("/{}", name.replace('/', "~1"));
        let Some(operation) = read
            .operations
            .iter()
            .find(|operation| operation.request.path == path)
        else {
            continue;
        };
        let input = operation.definition.input_schema();
        let Some(Value::Object(body)) = input
            .get("properties")
            .and_then(|properties| properties.get(BODY))
        else {
            continue;
        };
        let mut payload = body.clone();
        if let Some(defs) = input.get("$defs") {
            payload.insert("$defs".into(), defs.clone());
        }
        let description = item
            .as_object()
            .and_then(|item| item.values().find_map(Value::as_object))
            .and_then(|operation| {
                operation
                    .get("description")
                    .or_else(|| operation.get("summary"))
            })
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        webhooks.push(Webhook {
            name: name.clone(),
            description,
            payload_schema: payload,
        });
    }
    Ok(webhooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub's description (3.0, `x-webhooks`, as `scripts/install-test-peers` installs it):
    /// every one of its webhooks read, each with its payload's schema.
    #[test]
    fn githubs_webhooks_are_read_with_their_payloads() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/peers/node_modules/@octokit/openapi/generated/api.github.com.json");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            !text.is_empty(),
            "{} is missing: run scripts/install-test-peers",
            path.display()
        );
        let document: Value = serde_json::from_str(&text).unwrap_or_default();
        let hooks = read_webhooks(&document, &ReadOptions::default()).unwrap_or_default();
        assert!(hooks.len() >= 250, "{}", hooks.len());
        let opened = hooks
            .iter()
            .find(|hook| hook.name == "pull-request-opened")
            .map(|hook| &hook.payload_schema);
        let Some(opened) = opened else {
            unreachable!("GitHub has a pull-request-opened webhook")
        };
        assert_eq!(
            opened["$ref"],
            serde_json::json!("#/$defs/webhook-pull-request-opened")
        );
        let required = &opened["$defs"]["webhook-pull-request-opened"]["required"];
        assert!(required.to_string().contains("pull_request"), "{required}");
    }
}
