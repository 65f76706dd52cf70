//! Swagger 2.0's `host`, `basePath` and `schemes` as OpenAPI 3.0's `servers`: a server per
//! scheme (`https` when none is given, as for a host with `x-ms-parameterized-host`
//! variables), and a relative URL (the `basePath`) when there is no host.

use serde_json::{Map, Value, json};

/// The `servers` of `document`.
pub(super) fn servers(document: &Value) -> Vec<Value> {
    let base_path = document
        .get("basePath")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim_end_matches('/');
    let parameterized = document.get("x-ms-parameterized-host");
    let template = parameterized
        .and_then(|host| host.get("hostTemplate"))
        .and_then(Value::as_str);
    let host = template.or_else(|| document.get("host").and_then(Value::as_str));
    let Some(host) = host.filter(|host| !host.is_empty()) else {
        let url = if base_path.is_empty() { "/" } else { base_path };
        return vec![json!({ "url": url })];
    };
    // A template may carry its scheme already (`useSchemePrefix: false`).
    let prefixed = parameterized
        .and_then(|host| host.get("useSchemePrefix"))
        .and_then(Value::as_bool)
        == Some(false);
    let variables = parameterized
        .map(variables)
        .filter(|found| !found.is_empty());
    let mut schemes: Vec<&str> = document
        .get("schemes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if schemes.is_empty() {
        schemes.push("https");
    }
    if prefixed {
        schemes = vec![""];
    }
    schemes
        .into_iter()
        .map(|scheme| {
            let url = if scheme.is_empty() {
                format!("{host}{base_path}")
            } else {
                format!("{scheme}://{host}{base_path}")
            };
            let mut server = Map::new();
            server.insert("url".to_owned(), Value::String(url));
            if let Some(variables) = &variables {
                server.insert("variables".to_owned(), Value::Object(variables.clone()));
            }
            Value::Object(server)
        })
        .collect()
}

/// The server variables of `x-ms-parameterized-host`'s parameters (those written inline; a
/// default is 3.0's requirement, an empty one when the document gives none).
fn variables(parameterized: &Value) -> Map<String, Value> {
    parameterized
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|parameter| {
            let name = parameter.get("name")?.as_str()?;
            let mut variable = Map::new();
            variable.insert(
                "default".to_owned(),
                match parameter.get("default") {
                    Some(Value::String(text)) => Value::String(text.clone()),
                    Some(other) => Value::String(other.to_string()),
                    None => json!(""),
                },
            );
            if let Some(description) = parameter.get("description") {
                variable.insert("description".to_owned(), description.clone());
            }
            Some((name.to_owned(), Value::Object(variable)))
        })
        .collect()
}
