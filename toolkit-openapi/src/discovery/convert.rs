//! A Discovery document as an OpenAPI 3.1 document: [`convert`].
//!
//! Each method (top-level `methods`, and those of `resources`, however deep) is one operation
//! of a path item of its own (`/v1/{name}:publish#pubsub.projects.topics.publish`: the fragment,
//! which the reader never sends, keeps methods of one path apart), so that where the reader
//! skips something is where the Discovery document has it. What OpenAPI cannot say is kept
//! beside the document ([`Converted`]).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};
use url::Url;

use super::schema;
use crate::pointer::location;
use crate::{SkipReason, Skipped};

/// The methods that carry a request body (the official clients send one with these only).
const PAYLOAD_METHODS: &[&str] = &["POST", "PUT", "PATCH"];

/// The methods the reader takes.
const METHODS: &[&str] = &[
    "GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE",
];

/// The name of the OAuth 2.0 scheme the document's scopes make.
pub(super) const OAUTH2: &str = "Oauth2";

/// Google's OAuth 2.0 endpoints (authorization code flow), as its clients use them.
const AUTHORIZATION_URL: &str = "https://accounts.google.com/o/oauth2/auth";
const TOKEN_URL: &str = "https://oauth2.googleapis.com/token";

/// The global parameter a tool takes: a partial answer (`fields=id,name`). The others (`alt`,
/// `key`, `oauth_token`, `access_token`, `callback`, `prettyPrint`, `quotaUser`, `userIp`,
/// `uploadType`, `upload_protocol`, `$.xgafv`) are the client's: a credential, or the shape of
/// the answer the reader expects.
const GLOBAL_PARAMETER_KEPT: &str = "fields";

/// A Discovery document converted, with what OpenAPI cannot say.
#[derive(Debug, Default)]
pub(super) struct Converted {
    /// The OpenAPI 3.1 document.
    pub openapi: Value,
    /// By operation name, the path parameters in reserved expansion (`{+name}`).
    pub reserved: HashMap<String, HashSet<String>>,
    /// By location in `openapi` (`#/paths/…/post`), the method's place in the Discovery document.
    pub places: HashMap<String, Place>,
    /// The methods (and media uploads) no operation was made of, each with its reason.
    pub skipped: Vec<Skipped>,
}

/// Where a method is in the Discovery document.
#[derive(Clone, Debug)]
pub(super) struct Place {
    /// Its JSON pointer: `#/resources/files/methods/list`.
    pub location: String,
    /// Its `path` as the document writes it.
    pub path: String,
}

/// The OpenAPI 3.1 document of the Discovery document `document`.
pub(super) fn convert(document: &Value) -> Converted {
    let mut converter = Converter {
        document,
        converted: Converted::default(),
        paths: Map::new(),
        fields: document
            .pointer("/parameters/fields")
            .filter(|fields| fields.is_object()),
        data_wrapper: document
            .get("features")
            .and_then(Value::as_array)
            .is_some_and(|features| features.iter().any(|f| f.as_str() == Some("dataWrapper"))),
    };
    let mut tokens = Vec::new();
    converter.resource(document, &mut tokens);

    let text = |key: &str| document.get(key).and_then(Value::as_str);
    let mut info = Map::new();
    info.insert(
        "title".to_owned(),
        json!(
            text("title")
                .or(text("name"))
                .unwrap_or("Discovery document")
        ),
    );
    info.insert("version".to_owned(), json!(text("version").unwrap_or("")));
    if let Some(description) = text("description") {
        info.insert("description".to_owned(), json!(description));
    }
    let mut openapi = Map::new();
    openapi.insert("openapi".to_owned(), json!("3.1.0"));
    openapi.insert("info".to_owned(), Value::Object(info));
    if let Some(server) = server(document) {
        openapi.insert("servers".to_owned(), json!([server]));
    }
    openapi.insert(
        "paths".to_owned(),
        Value::Object(std::mem::take(&mut converter.paths)),
    );
    let mut components = Map::new();
    if let Some(Value::Object(schemas)) = document.get("schemas") {
        let schemas: Map<String, Value> = schemas
            .iter()
            .map(|(id, discovery)| (id.clone(), schema::convert(discovery)))
            .collect();
        components.insert("schemas".to_owned(), Value::Object(schemas));
    }
    if let Some(Value::Object(scopes)) = document.pointer("/auth/oauth2/scopes") {
        let scopes: Map<String, Value> = scopes
            .iter()
            .map(|(scope, about)| {
                let description = about
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                (scope.clone(), json!(description))
            })
            .collect();
        components.insert(
            "securitySchemes".to_owned(),
            json!({ OAUTH2: {
                "type": "oauth2",
                "description": "Google's OAuth 2.0, with the scopes the document lists.",
                "flows": { "authorizationCode": {
                    "authorizationUrl": AUTHORIZATION_URL,
                    "tokenUrl": TOKEN_URL,
                    "scopes": scopes
                } }
            } }),
        );
    }
    openapi.insert("components".to_owned(), Value::Object(components));
    let mut converted = converter.converted;
    converted.openapi = Value::Object(openapi);
    converted
}

/// The document's server: `rootUrl` joined with `servicePath`, as Google's clients join them
/// (`baseUrl` when there is no `rootUrl`). Batch requests (`batchPath`) are no operation.
fn server(document: &Value) -> Option<Value> {
    let text = |key: &str| document.get(key).and_then(Value::as_str);
    let url = match (text("rootUrl"), text("servicePath")) {
        (Some(root), Some(service)) => Url::parse(root)
            .and_then(|root| root.join(service))
            .map(String::from)
            .unwrap_or_else(|_| format!("{root}{service}")),
        (Some(root), None) => root.to_owned(),
        (None, _) => text("baseUrl")?.to_owned(),
    };
    let mut description = "`rootUrl` and `servicePath`".to_owned();
    if let Some(batch) = text("batchPath") {
        description.push_str(&format!(
            "; batch requests (`{batch}` below `rootUrl`) are no operation"
        ));
    }
    Some(json!({ "url": url, "description": description }))
}

struct Converter<'d> {
    document: &'d Value,
    converted: Converted,
    paths: Map<String, Value>,
    /// The global `fields` parameter, which every operation takes.
    fields: Option<&'d Value>,
    /// `features: ["dataWrapper"]`: a request body is sent as `{"data": body}`.
    data_wrapper: bool,
}

impl<'d> Converter<'d> {
    /// The methods of `resource` (at `tokens`) and of its resources, in the document's order.
    fn resource(&mut self, resource: &'d Value, tokens: &mut Vec<&'d str>) {
        if let Some(Value::Object(methods)) = resource.get("methods") {
            for (name, method) in methods {
                tokens.extend(["methods", name.as_str()]);
                self.method(method, tokens);
                tokens.truncate(tokens.len() - 2);
            }
        }
        if let Some(Value::Object(resources)) = resource.get("resources") {
            for (name, nested) in resources {
                tokens.extend(["resources", name.as_str()]);
                self.resource(nested, tokens);
                tokens.truncate(tokens.len() - 2);
            }
        }
    }

    fn skip(&mut self, at: String, method: &Value, reason: SkipReason) {
        let text = |key: &str| method.get(key).and_then(Value::as_str).unwrap_or("");
        self.converted.skipped.push(Skipped {
            location: at,
            method: text("httpMethod").to_ascii_uppercase(),
            path: text("path").to_owned(),
            reason,
        });
    }

    fn method(&mut self, method: &'d Value, tokens: &[&str]) {
        let at = location(tokens.iter().copied());
        let text = |key: &str| method.get(key).and_then(Value::as_str);
        let (Some(id), Some(http_method), Some(path)) =
            (text("id"), text("httpMethod"), text("path"))
        else {
            let reason = SkipReason::malformed("the method has no `id`, `httpMethod` or `path`");
            self.skip(at, method, reason);
            return;
        };
        let http_method = http_method.to_ascii_uppercase();
        if !METHODS.contains(&http_method.as_str()) {
            let reason = SkipReason::malformed(format!(
                "the HTTP method {http_method:?} is none an operation takes"
            ));
            self.skip(at, method, reason);
            return;
        }
        if let Some(upload) = method.get("mediaUpload") {
            self.media_upload(&at, method, upload);
        }
        let (openapi_path, reserved) = match template(path) {
            Ok(converted) => converted,
            Err(reason) => {
                self.skip(at, method, reason);
                return;
            }
        };
        let name = id.replace('.', "_");
        let mut operation = Map::new();
        operation.insert("operationId".to_owned(), json!(name));
        let mut description = text("description").map(str::trim).unwrap_or("").to_owned();
        if method.get("supportsMediaDownload") == Some(&Value::Bool(true)) {
            if !description.is_empty() {
                description.push_str("\n\n");
            }
            description.push_str(
                "(The method also downloads the media itself with `alt=media`, which this tool does not ask for: it answers the metadata as JSON.)",
            );
        }
        if !description.is_empty() {
            operation.insert("description".to_owned(), json!(description));
        }
        if method.get("deprecated") == Some(&Value::Bool(true)) {
            operation.insert("deprecated".to_owned(), Value::Bool(true));
        }
        operation.insert(
            "parameters".to_owned(),
            Value::Array(self.parameters(method)),
        );
        if PAYLOAD_METHODS.contains(&http_method.as_str())
            && let Some(request) = method.get("request")
        {
            operation.insert("requestBody".to_owned(), self.request_body(request, id));
        }
        let mut success = Map::new();
        success.insert("description".to_owned(), json!("The answer."));
        if let Some(response) = method.get("response") {
            success.insert(
                "content".to_owned(),
                json!({ "application/json": { "schema": schema::convert(response) } }),
            );
        }
        operation.insert("responses".to_owned(), json!({ "200": success }));
        // Any one of a method's scopes grants it (Google's clients ask for one): each is an
        // alternative requirement, not all of them together.
        if let Some(Value::Array(scopes)) = method.get("scopes")
            && self.document.pointer("/auth/oauth2/scopes").is_some()
        {
            let alternatives: Vec<Value> = scopes
                .iter()
                .map(|scope| json!({ OAUTH2: [scope] }))
                .collect();
            operation.insert("security".to_owned(), Value::Array(alternatives));
        }

        let key = format!("{openapi_path}#{id}");
        let method_key = http_method.to_ascii_lowercase();
        self.converted.places.insert(
            location(["paths", key.as_str(), method_key.as_str()]),
            Place {
                location: at,
                path: path.to_owned(),
            },
        );
        if !reserved.is_empty() {
            self.converted.reserved.insert(name, reserved);
        }
        let mut item = Map::new();
        item.insert(method_key, Value::Object(operation));
        self.paths.insert(key, Value::Object(item));
    }

    /// The method's parameters in `parameterOrder` first, then as the document lists them, and
    /// the global `fields`.
    fn parameters(&self, method: &Value) -> Vec<Value> {
        let Some(Value::Object(declared)) = method.get("parameters") else {
            return self
                .fields
                .map(|fields| vec![parameter("fields", fields)])
                .unwrap_or_default();
        };
        let mut order: Vec<&str> = method
            .get("parameterOrder")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|name| declared.contains_key(*name))
            .collect();
        for name in declared.keys() {
            if !order.contains(&name.as_str()) {
                order.push(name);
            }
        }
        let mut parameters: Vec<Value> = order
            .into_iter()
            .filter_map(|name| Some(parameter(name, declared.get(name)?)))
            .collect();
        if let Some(fields) = self.fields
            && !declared.contains_key(GLOBAL_PARAMETER_KEPT)
        {
            parameters.push(parameter(GLOBAL_PARAMETER_KEPT, fields));
        }
        parameters
    }

    /// The request body: the schema the method names, with the properties the method requires
    /// (`annotations.required`), as JSON (inside `{"data": …}` for a `dataWrapper` API).
    fn request_body(&self, request: &Value, id: &str) -> Value {
        let mut body = schema::convert(request);
        if let (Some(reference), Value::Object(body)) =
            (request.get("$ref").and_then(Value::as_str), &mut body)
        {
            let required = schema::required_by(self.document.get("schemas"), reference, id);
            if !required.is_empty() {
                body.insert("required".to_owned(), Value::Array(required));
            }
        }
        if self.data_wrapper {
            body = json!({
                "type": "object",
                "properties": { "data": body },
                "required": ["data"]
            });
        }
        json!({ "content": { "application/json": { "schema": body } } })
    }

    /// The media upload of a method, which is no tool: its body is the media itself, in the
    /// types `accept` lists, which the operations (JSON or form bodies) do not carry.
    fn media_upload(&mut self, at: &str, method: &Value, upload: &Value) {
        let media_types = upload
            .get("accept")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let path = upload
            .pointer("/protocols/simple/path")
            .and_then(Value::as_str)
            .map(|path| format!("{path}?uploadType=media"));
        self.converted.skipped.push(Skipped {
            location: format!("{at}/mediaUpload"),
            method: method
                .get("httpMethod")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_ascii_uppercase(),
            path: path.unwrap_or_default(),
            reason: SkipReason::BodyNotJson { media_types },
        });
    }
}

/// An OpenAPI parameter of the Discovery parameter `name`: its schema (a list of them when
/// `repeated`, sent as a key per value), `location`, `required` and description.
fn parameter(name: &str, discovery: &Value) -> Value {
    let mut schema = schema::convert(discovery);
    let description = match &mut schema {
        Value::Object(object) => object.remove("description"),
        _ => None,
    };
    if discovery.get("repeated") == Some(&Value::Bool(true)) {
        schema = json!({ "type": "array", "items": schema });
    }
    let mut parameter = Map::new();
    parameter.insert("name".to_owned(), json!(name));
    parameter.insert(
        "in".to_owned(),
        discovery.get("location").cloned().unwrap_or(json!("query")),
    );
    if discovery.get("required") == Some(&Value::Bool(true)) {
        parameter.insert("required".to_owned(), Value::Bool(true));
    }
    if let Some(description) = description {
        parameter.insert("description".to_owned(), description);
    }
    if discovery.get("deprecated") == Some(&Value::Bool(true)) {
        parameter.insert("deprecated".to_owned(), Value::Bool(true));
    }
    parameter.insert("schema".to_owned(), schema);
    Value::Object(parameter)
}

/// The OpenAPI path of a Discovery path template (RFC 6570: `{name}` and `{+name}`), below the
/// server as Google's clients join them (a leading `/` is dropped), and the names in reserved
/// expansion.
fn template(path: &str) -> Result<(String, HashSet<String>), SkipReason> {
    let mut openapi = String::from("/");
    let mut reserved = HashSet::new();
    let mut rest = path.strip_prefix('/').unwrap_or(path);
    while let Some(open) = rest.find('{') {
        openapi.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}').map(|close| open + close) else {
            return Err(SkipReason::PathMismatch {
                detail: "a { is never closed".to_owned(),
            });
        };
        let expression = &rest[open + 1..close];
        let (name, is_reserved) = match expression.strip_prefix('+') {
            Some(name) => (name, true),
            None => (expression, false),
        };
        let is_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !is_name {
            return Err(SkipReason::ParameterStyle {
                name: expression.to_owned(),
                style: format!("RFC 6570's {{{expression}}}"),
            });
        }
        if is_reserved {
            reserved.insert(name.to_owned());
        }
        openapi.push('{');
        openapi.push_str(name);
        openapi.push('}');
        rest = &rest[close + 1..];
    }
    openapi.push_str(rest);
    Ok((openapi, reserved))
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn templates_become_openapi_paths() {
        let (path, reserved) = template("v1/{+name}:publish").unwrap();
        assert_eq!(path, "/v1/{name}:publish");
        assert_eq!(reserved, HashSet::from(["name".to_owned()]));
        let (path, reserved) = template("/b/{bucket}/o/{object}").unwrap();
        assert_eq!(path, "/b/{bucket}/o/{object}");
        assert!(reserved.is_empty());
        assert_eq!(template("x/{/a}").unwrap_err().kind(), "parameterStyle");
        assert_eq!(template("x/{a*}").unwrap_err().kind(), "parameterStyle");
        assert_eq!(template("x/{?a,b}").unwrap_err().kind(), "parameterStyle");
        assert_eq!(template("x/{a").unwrap_err().kind(), "pathMismatch");
    }

    #[test]
    fn the_server_is_the_root_and_the_service_path() {
        let server = server(&json!({
            "rootUrl": "https://www.googleapis.com/",
            "servicePath": "drive/v3/",
            "batchPath": "batch/drive/v3"
        }))
        .unwrap();
        assert_eq!(server["url"], "https://www.googleapis.com/drive/v3/");
        assert!(
            server["description"]
                .as_str()
                .unwrap()
                .contains("batch/drive/v3")
        );
        let server = server_of("https://pubsub.googleapis.com/", "");
        assert_eq!(server, "https://pubsub.googleapis.com/");
    }

    fn server_of(root: &str, service: &str) -> String {
        server(&json!({"rootUrl": root, "servicePath": service})).unwrap()["url"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}
