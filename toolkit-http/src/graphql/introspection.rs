//! A GraphQL endpoint's schema asked of the endpoint: the introspection query sent as a `POST`,
//! its answer read up to a cap, and validated by `toolkit-graphql` as a schema file would be.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, Request, Url};
use serde_json::{Value, json};
use toolkit_graphql::GraphqlSchema;

use crate::HttpClient;
use crate::answer::{self, Capped, Failing};
use toolkit_core::Reason;

/// The introspection query sent: every type with its fields and their arguments, input fields,
/// interfaces, enum values and possible types, deprecated ones included, type references eight
/// levels deep (`[[Int!]!]!` takes five). Directives are not asked: reading a schema into tools
/// needs none.
pub const INTROSPECTION_QUERY: &str = "\
query IntrospectionQuery {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
  }
}
fragment FullType on __Type {
  kind
  name
  description
  fields(includeDeprecated: true) {
    name
    description
    args { ...InputValue }
    type { ...TypeRef }
    isDeprecated
    deprecationReason
  }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue {
  name
  description
  type { ...TypeRef }
  defaultValue
}
fragment TypeRef on __Type {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}";

/// Asks `endpoint` for its schema over `client`: [`INTROSPECTION_QUERY`] as a `POST`, an answer
/// of at most `max_length` characters read, within `timeout` from the request to the answer's
/// last byte.
///
/// # Errors
///
/// A [`Reason`] whose description (for people: a model reads only the reason's default
/// message) names the endpoint: `Unavailable` when it cannot be reached, answers 408, 429 or
/// 5xx, or takes longer than `timeout`; `Authentication` on 401 and 403; `InvalidResponse` on
/// another failing status, an answer over `max_length`, `errors` and no `data` (introspection
/// turned off, as many public endpoints do: give the schema as a file then), no introspection
/// result, or a schema that does not validate; `Unknown` when `endpoint` is no URL.
///
/// # Examples
///
/// ```no_run
/// use toolkit_http::graphql::{MAX_SCHEMA_LENGTH, introspect};
/// use toolkit_http::client_builder;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = client_builder().build()?;
/// let timeout = std::time::Duration::from_secs(30);
/// let schema = introspect(&client, "https://example.com/graphql", MAX_SCHEMA_LENGTH, timeout)
///     .await
///     .map_err(|reason| reason.description().to_owned())?;
/// # Ok(())
/// # }
/// ```
pub async fn introspect(
    client: &dyn HttpClient,
    endpoint: &str,
    max_length: usize,
    timeout: Duration,
) -> Result<GraphqlSchema, Reason> {
    let unreadable = |why: String| {
        Reason::invalid_response(format!("the schema of {endpoint} cannot be read: {why}"))
    };
    let url = Url::parse(endpoint)
        .map_err(|error| Reason::unknown(format!("{endpoint} is no URL: {error}")))?;
    let mut request = Request::new(Method::POST, url);
    request
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    request.headers_mut().insert(
        ACCEPT,
        HeaderValue::from_static("application/graphql-response+json, application/json"),
    );
    *request.body_mut() = Some(
        json!({"query": INTROSPECTION_QUERY, "operationName": "IntrospectionQuery"})
            .to_string()
            .into(),
    );
    *request.timeout_mut() = Some(timeout);
    let request_failure = |error: reqwest::Error| {
        let what = if error.is_timeout() {
            format!("took longer than {timeout:?}")
        } else {
            "cannot be reached".to_owned()
        };
        Reason::unavailable(format!(
            "{endpoint} {what} to introspect its schema: {}",
            error.without_url()
        ))
    };
    let response = client.execute(request).await.map_err(request_failure)?;
    match answer::failure_status(response.status(), response.headers()) {
        Some(Failing::Now(reason)) => {
            return Err(with_endpoint(reason, endpoint));
        }
        Some(Failing::WithWords(status)) => {
            let words = match answer::read_capped(response, answer::MAX_ERROR_WORDS).await {
                Ok(Capped::Whole(words) | Capped::TooLong(words)) => words,
                Err(_) => Vec::new(),
            };
            let reason = answer::call_failed(status, &String::from_utf8_lossy(&words));
            return Err(with_endpoint(reason, endpoint));
        }
        None => {}
    }
    let over = || {
        Reason::invalid_response(format!(
            "the schema {endpoint} answers is longer than the {max_length} characters read"
        ))
    };
    if answer::declared_too_long(response.headers(), max_length) {
        return Err(over());
    }
    let body = match answer::read_capped(response, max_length)
        .await
        .map_err(request_failure)?
    {
        Capped::Whole(body) => body,
        Capped::TooLong(_) => return Err(over()),
    };
    let json: Value =
        serde_json::from_slice(&body).map_err(|error| unreadable(format!("no JSON: {error}")))?;
    if json.get("data").is_none_or(Value::is_null)
        && let Some(errors) = json.get("errors").and_then(Value::as_array)
    {
        let messages: Vec<&str> = errors
            .iter()
            .filter_map(|error| error.get("message").and_then(Value::as_str))
            .collect();
        return Err(Reason::invalid_response(format!(
            "{endpoint} refused to introspect its schema ({}); give the schema as a file",
            toolkit_core::text::cut_utf16(&messages.join("; "), answer::MAX_ERROR_WORDS)
        )));
    }
    GraphqlSchema::from_introspection_json(&json, endpoint)
        .map_err(|error| unreadable(error.to_string()))
}

/// `reason` with its description saying it is about introspecting `endpoint`.
fn with_endpoint(reason: Reason, endpoint: &str) -> Reason {
    let description = format!(
        "introspecting the schema of {endpoint}: {}",
        reason.description()
    );
    match reason {
        Reason::Authentication { .. } => Reason::authentication(description),
        Reason::Unavailable { retry_after, .. } => Reason::Unavailable {
            description,
            retry_after,
        },
        _ => Reason::invalid_response(description),
    }
}
