//! OpenAPI security: schemes and requirements read, credential parameters kept out of the
//! model's input, and credentials put exactly where the document says (and nowhere else, never
//! in a failure) against a recorder on 127.0.0.1.

use serde_json::{Value, json};
use toolkit_core::{Reason, ToolSource};
use toolkit_http::{
    Credential, Credentials, HttpSource, KeyLocation, SecurityScheme, client_builder,
};
use toolkit_openapi::{ReadOperations, ReadOptions, read_operations};

use crate::http::Server;
use crate::support::object;

fn get(security: Option<Value>, parameters: Value) -> Value {
    let mut operation =
        json!({"parameters": parameters, "responses": {"200": {"description": "ok"}}});
    if let Some(security) = security {
        operation["security"] = security;
    }
    json!({"get": operation})
}

fn document() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "security": [{"header_key": []}],
        "paths": {
            "/by-header": get(None, json!([
                {"name": "x-api-key", "in": "header", "schema": {"type": "string"}},
                {"name": "q", "in": "query", "schema": {"type": "string"}}
            ])),
            "/by-query": get(Some(json!([{"query_key": []}])), json!([
                {"name": "key", "in": "query", "required": true, "schema": {"type": "string"}}
            ])),
            "/by-cookie": get(Some(json!([{"cookie_key": []}])), json!([
                {"name": "session", "in": "cookie", "required": true, "schema": {"type": "string"}}
            ])),
            "/by-basic": get(Some(json!([{"basic": []}])), json!([])),
            "/by-bearer": get(Some(json!([{"bearer": []}])), json!([
                {"name": "Authorization", "in": "header", "schema": {"type": "string"}}
            ])),
            "/by-oauth": get(Some(json!([{"missing": []}, {"oauth": ["read"]}])), json!([])),
            "/open": get(Some(json!([])), json!([])),
            "/optional": get(Some(json!([{"header_key": []}, {}])), json!([])),
            "/echo-query": get(Some(json!([{"query_key": []}])), json!([])),
            "/echo-cut": get(Some(json!([{"query_key": []}])), json!([])),
            "/echo-headers": get(Some(json!([{"basic": []}, {"query_key": []}])), json!([])),
        },
        "components": {"securitySchemes": {
            "header_key": {"type": "apiKey", "name": "X-Api-Key", "in": "header"},
            "query_key": {"type": "apiKey", "name": "key", "in": "query"},
            "cookie_key": {"type": "apiKey", "name": "session", "in": "cookie"},
            "basic": {"type": "http", "scheme": "Basic"},
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "/token", "scopes": {"read": "r"}}}},
            "tls": {"type": "mutualTLS"},
            "broken": {"type": "apiKey", "in": "header"},
        }}
    })
}

fn read() -> ReadOperations {
    read_operations(&document(), &ReadOptions::default()).unwrap()
}

#[test]
fn openapi_security_schemes_and_requirements_are_read_and_credentials_are_no_input() {
    let read = read();
    let schemes = &read.security.schemes;
    assert_eq!(
        schemes["header_key"],
        SecurityScheme::ApiKey {
            name: "X-Api-Key".into(),
            location: KeyLocation::Header
        }
    );
    assert_eq!(
        schemes["basic"],
        SecurityScheme::Http {
            scheme: "basic".into()
        }
    );
    assert_eq!(schemes["tls"], SecurityScheme::MutualTls);
    assert!(!schemes.contains_key("broken"));
    assert_eq!(
        read.security.problems[0].location,
        "#/components/securitySchemes/broken"
    );
    // The document's requirement holds where an operation says none; `[]` means none.
    assert_eq!(
        read.security.requirements["get_by-header"][0]
            .keys()
            .collect::<Vec<_>>(),
        ["header_key"]
    );
    assert!(!read.security.requirements.contains_key("get_open"));
    assert_eq!(
        read.security.requirements["get_by-oauth"][1]["oauth"],
        ["read"]
    );
    // No credential is a property a model fills.
    let properties = |name: &str| -> Vec<String> {
        let operation = read.operations.iter().find(|o| o.name() == name).unwrap();
        operation.definition.input_schema()["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(properties("get_by-header"), ["q"]);
    assert!(properties("get_by-query").is_empty());
    assert!(properties("get_by-cookie").is_empty());
    assert!(properties("get_by-bearer").is_empty());
    let left_out: Vec<(&str, &str)> = read
        .security
        .credential_parameters
        .iter()
        .map(|c| (c.parameter.as_str(), c.scheme.as_str()))
        .collect();
    assert_eq!(
        left_out,
        [
            ("x-api-key", "header_key"),
            ("key", "query_key"),
            ("session", "cookie_key"),
            ("Authorization", "basic")
        ]
    );
    // The required cookie that is a credential no longer skips its operation.
    assert!(read.skipped.is_empty(), "{:?}", read.skipped);
}

#[test]
fn openapi_security_petstores_api_key_is_no_input_of_delete_pet() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../build-examples/swagger-petstore/spec/petstore3.yaml"
    ))
    .unwrap();
    let document = toolkit_openapi::decode_document(&text).unwrap();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let delete = read
        .operations
        .iter()
        .find(|o| o.name() == "deletePet")
        .unwrap();
    let properties = delete.definition.input_schema()["properties"]
        .as_object()
        .unwrap();
    assert!(!properties.contains_key("api_key"), "{properties:?}");
    assert!(
        read.security
            .credential_parameters
            .iter()
            .any(|c| c.operation == "deletePet" && c.parameter == "api_key")
    );
    assert_eq!(
        read.security.requirements["deletePet"][0]["petstore_auth"],
        ["write:pets", "read:pets"]
    );
}

fn credentials() -> Credentials {
    Credentials::new()
        .with("header_key", Credential::Token("header-secret".into()))
        .with("query_key", Credential::Token("query secret&=".into()))
        .with("cookie_key", Credential::Token("cookie-secret".into()))
        .with(
            "basic",
            Credential::Basic {
                user: "ann".into(),
                password: "basic-secret".into(),
            },
        )
        .with("bearer", Credential::Token("bearer-secret".into()))
        .with("oauth", Credential::Token("oauth-secret".into()))
}

fn source(base: &str, credentials: Credentials) -> HttpSource {
    let read = read();
    HttpSource::builder("api", base, client_builder().build().unwrap())
        .operations(read.operations)
        .security(
            read.security.schemes,
            read.security.requirements,
            credentials,
        )
        .build()
        .unwrap()
}

/// Whether a recorded request carries a credential where it should.
type Placed = dyn Fn(&crate::http::Recorded) -> bool;

#[tokio::test]
async fn openapi_security_each_credential_goes_exactly_where_the_document_says() {
    let server = Server::start().await;
    let api = source(&server.base, credentials());
    let secrets = [
        "header-secret",
        "query",
        "cookie-secret",
        "basic-secret",
        "bearer-secret",
        "oauth-secret",
    ];
    let cases: [(&str, Value, &Placed, &str); 7] = [
        (
            "get_by-header",
            json!({"q": "x"}),
            &|r| r.headers["x-api-key"] == "header-secret",
            "header-secret",
        ),
        (
            "get_by-query",
            json!({}),
            &|r| r.target == "/by-query?key=query+secret%26%3D",
            "query",
        ),
        (
            "get_by-cookie",
            json!({}),
            &|r| r.headers["cookie"] == "session=cookie-secret",
            "cookie-secret",
        ),
        (
            "get_by-basic",
            json!({}),
            &|r| r.headers["authorization"] == "Basic YW5uOmJhc2ljLXNlY3JldA==",
            "basic-secret",
        ),
        (
            "get_by-bearer",
            json!({}),
            &|r| r.headers["authorization"] == "Bearer bearer-secret",
            "bearer-secret",
        ),
        // The first requirement names a scheme the host has no credential for: the second.
        (
            "get_by-oauth",
            json!({}),
            &|r| r.headers["authorization"] == "Bearer oauth-secret",
            "oauth-secret",
        ),
        (
            "get_open",
            json!({}),
            &|r| !r.headers.contains_key("authorization"),
            "",
        ),
    ];
    for (tool, input, placed, own) in cases {
        api.call(tool, object(input), &toolkit_core::CallContext::new())
            .await
            .unwrap();
        let request = server.last();
        assert!(placed(&request), "{tool}: {request:?}");
        // No other credential anywhere in the request.
        let everything = format!("{} {:?}", request.target, request.headers);
        for secret in secrets
            .iter()
            .filter(|s| own.is_empty() || !own.starts_with(**s))
        {
            assert!(
                !everything.contains(secret),
                "{tool} carries {secret}: {everything}"
            );
        }
    }
}

#[tokio::test]
async fn openapi_security_no_credential_is_in_a_failure() {
    // A server that is down: the failure names no URL, so not the key in its query.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let api = source(&base, credentials());
    let error = api
        .call(
            "get_by-query",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error.reason, Reason::Unavailable { .. }));
    let words = format!("{error} {:?} {:?}", error.reason, error.to_failure());
    assert!(!words.contains("secret"), "{words}");

    // Without the credential a requirement needs, nothing is sent: a failure naming the scheme.
    let server = Server::start().await;
    let api = source(&server.base, Credentials::new());
    let error = api
        .call(
            "get_by-header",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error.reason, Reason::Authentication { .. }));
    assert!(error.to_string().contains("header_key"), "{error}");
    let error = api
        .call(
            "get_by-oauth",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("missing, or oauth"), "{error}");
    assert!(server.recorded().is_empty());
    // Unless the document allows no credential (`{}`): then it goes without.
    api.call(
        "get_optional",
        object(json!({})),
        &toolkit_core::CallContext::new(),
    )
    .await
    .unwrap();
    assert!(!server.last().headers.contains_key("x-api-key"));
}

/// A query key with characters a query encodes, and a basic password.
fn echoed_credentials() -> Credentials {
    Credentials::new()
        .with("query_key", Credential::Token("k3y+Secret/Value==".into()))
        .with(
            "basic",
            Credential::Basic {
                user: "ann".into(),
                password: "pa ss/w0rd+x".into(),
            },
        )
}

#[tokio::test]
async fn openapi_security_an_echoed_credential_reaches_no_model_in_any_form() {
    let server = Server::start().await;
    let api = source(&server.base, echoed_credentials());
    let mut read = String::new();
    for tool in ["get_echo-query", "get_echo-cut", "get_echo-headers"] {
        let outcome = match api
            .call(tool, object(json!({})), &toolkit_core::CallContext::new())
            .await
        {
            Ok(value) => value.to_string(),
            Err(error) => error.model_message().to_owned(),
        };
        read.push_str(&outcome);
        read.push('\n');
    }
    // The API got them, and echoed them encoded.
    let recorded = server.recorded();
    assert!(recorded[0].target.contains("k3y%2BSecret%2FValue%3D%3D"));
    assert!(read.contains("you sent key=<credential>"), "{read}");
    assert!(
        read.contains("\"authorization\":\"Basic <credential>\""),
        "{read}"
    );
    // The cut read ends where the key began: no prefix of it is left.
    assert!(
        read.contains(&format!("{} key=\n", "w".repeat(495))),
        "{read}"
    );
    for part in [
        "k3y", "Secret", "Value%3D", "pa ss", "pa+ss", "w0rd", "YW5uOnBh",
    ] {
        assert!(!read.contains(part), "{part} reached the model: {read}");
    }
}

#[test]
fn openapi_security_embedded_as_json_is_read_or_its_problem_reported() {
    let security = json!({
        "schemes": { "api_key": { "type": "apiKey", "name": "X-Api-Key", "in": "header" } },
        "requirements": { "list": [{ "api_key": [] }] }
    })
    .to_string();
    let builder = || {
        HttpSource::builder(
            "api",
            "http://127.0.0.1:9",
            client_builder().build().unwrap(),
        )
    };
    assert!(
        builder()
            .security_json(&security, Credentials::new())
            .build()
            .is_ok()
    );
    let error = builder()
        .security_json(
            r#"{"schemes": {"x": {"type": "nope"}}}"#,
            Credentials::new(),
        )
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the embedded security does not decode"),
        "{error}"
    );
}
