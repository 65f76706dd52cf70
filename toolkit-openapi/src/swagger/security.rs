//! Swagger 2.0's `securityDefinitions` as OpenAPI 3.0's `components.securitySchemes`: `basic`
//! is HTTP's `basic` scheme, an `apiKey` stays one, and an `oauth2` scheme's one flow becomes
//! the 3.0 flow of the same grant (`implicit`, `password`, `application` as
//! `clientCredentials`, `accessCode` as `authorizationCode`).

use serde_json::{Map, Value, json};

/// The 3.0 security schemes of the 2.0 `definitions`.
pub(super) fn schemes(definitions: &Map<String, Value>) -> Map<String, Value> {
    definitions
        .iter()
        .map(|(name, scheme)| (name.clone(), scheme_of(scheme)))
        .collect()
}

fn scheme_of(scheme: &Value) -> Value {
    let Value::Object(scheme) = scheme else {
        return scheme.clone();
    };
    let field = |key: &str| scheme.get(key).cloned();
    let mut out = Map::new();
    match scheme.get("type").and_then(Value::as_str) {
        Some("basic") => {
            out.insert("type".to_owned(), json!("http"));
            out.insert("scheme".to_owned(), json!("basic"));
        }
        Some("oauth2") => {
            out.insert("type".to_owned(), json!("oauth2"));
            let scopes = field("scopes").unwrap_or_else(|| json!({}));
            let mut flow = Map::new();
            let name = match scheme.get("flow").and_then(Value::as_str) {
                Some("implicit") => "implicit",
                Some("password") => "password",
                Some("application") => "clientCredentials",
                Some("accessCode") => "authorizationCode",
                // No flow 3.0 knows: the scheme is kept without flows, which the reader lists
                // as a problem of the document's security.
                _ => "",
            };
            if matches!(name, "implicit" | "authorizationCode")
                && let Some(url) = field("authorizationUrl")
            {
                flow.insert("authorizationUrl".to_owned(), url);
            }
            if matches!(name, "password" | "clientCredentials" | "authorizationCode")
                && let Some(url) = field("tokenUrl")
            {
                flow.insert("tokenUrl".to_owned(), url);
            }
            flow.insert("scopes".to_owned(), scopes);
            let mut flows = Map::new();
            if !name.is_empty() {
                flows.insert(name.to_owned(), Value::Object(flow));
            }
            out.insert("flows".to_owned(), Value::Object(flows));
        }
        _ => {
            // `apiKey` (and anything else) as written: its `name` and `in` are 3.0's too.
            for key in ["type", "name", "in"] {
                if let Some(value) = field(key) {
                    out.insert(key.to_owned(), value);
                }
            }
        }
    }
    for (key, value) in scheme {
        if key == "description" || key.starts_with("x-") {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}
