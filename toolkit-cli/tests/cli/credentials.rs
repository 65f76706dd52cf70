//! `--credential SCHEME=VAR` on `call` and `execute`, and the requirements in `report`: against a
//! recorder on 127.0.0.1 that also issues OAuth 2 client-credentials tokens, each scheme's
//! credential goes exactly where the document says, and no output carries one.

use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use serde_json::{Value, json};

/// What the recorder saw of one request: its path and query, and its credential-bearing headers.
#[derive(Clone, Debug, Default)]
struct Seen {
    target: String,
    authorization: Option<String>,
    key: Option<String>,
    cookie: Option<String>,
}

struct Recorder {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    _runtime: tokio::runtime::Runtime,
}

fn recorder() -> Recorder {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
    let issued = Arc::new(Mutex::new(0_u32));
    let record = {
        let seen = seen.clone();
        move |uri: axum::http::Uri, headers: HeaderMap| {
            let seen = seen.clone();
            async move {
                let header = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|value| value.to_str().ok())
                        .map(str::to_owned)
                };
                seen.lock().unwrap().push(Seen {
                    target: uri.to_string(),
                    authorization: header("authorization"),
                    key: header("x-key"),
                    cookie: header("cookie"),
                });
                axum::Json(json!({ "ok": true }))
            }
        }
    };
    let token = {
        let seen = seen.clone();
        move |headers: HeaderMap, body: String| {
            let (seen, issued) = (seen.clone(), issued.clone());
            async move {
                seen.lock().unwrap().push(Seen {
                    target: format!("/oauth/token {body}"),
                    authorization: headers
                        .get("authorization")
                        .and_then(|value| value.to_str().ok())
                        .map(str::to_owned),
                    ..Seen::default()
                });
                let mut issued = issued.lock().unwrap();
                *issued += 1;
                axum::Json(json!({
                    "access_token": format!("machine-token-{issued}"),
                    "token_type": "Bearer",
                    "expires_in": 3600,
                }))
            }
        }
    };
    let app = axum::Router::new()
        .route("/oauth/token", axum::routing::post(token))
        .fallback(record);
    runtime.spawn(async move {
        axum::serve(toolkit_runtime::serve::without_delay(listener), app).await
    });
    Recorder {
        base_url: format!("http://{address}/v1"),
        seen,
        _runtime: runtime,
    }
}

const DOCUMENT: &str = r#"{
  "openapi": "3.0.3",
  "info": { "title": "secured", "version": "1" },
  "components": { "securitySchemes": {
    "key": { "type": "apiKey", "name": "X-Key", "in": "header" },
    "query": { "type": "apiKey", "name": "api_key", "in": "query" },
    "session": { "type": "apiKey", "name": "sid", "in": "cookie" },
    "basic": { "type": "http", "scheme": "basic" },
    "bearer": { "type": "http", "scheme": "bearer" },
    "machine": { "type": "oauth2", "flows": { "clientCredentials": {
      "tokenUrl": "/oauth/token", "scopes": { "read": "read things" } } } }
  } },
  "paths": {
    "/keyed": { "get": { "operationId": "keyed", "security": [{ "key": [] }],
      "parameters": [{ "name": "X-Key", "in": "header", "required": true, "schema": { "type": "string" } }],
      "responses": { "200": { "description": "ok" } } } },
    "/queried": { "get": { "operationId": "queried", "security": [{ "query": [] }],
      "responses": { "200": { "description": "ok" } } } },
    "/cookie": { "get": { "operationId": "cookie", "security": [{ "session": [] }],
      "responses": { "200": { "description": "ok" } } } },
    "/basic": { "get": { "operationId": "basic", "security": [{ "basic": [] }],
      "responses": { "200": { "description": "ok" } } } },
    "/either": { "get": { "operationId": "either", "security": [{ "bearer": [] }, { "machine": ["read"] }],
      "responses": { "200": { "description": "ok" } } } },
    "/open": { "get": { "operationId": "open", "security": [{}],
      "responses": { "200": { "description": "ok" } } } }
  }
}"#;

fn document() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "toolkit-gen-credentials-{}.json",
        std::process::id()
    ));
    std::fs::write(&path, DOCUMENT).unwrap();
    path
}

/// Runs `toolkit-gen call` of `operation` with `--credential`s and the environment `variables`:
/// the exit code and everything printed.
fn call(
    recorder: &Recorder,
    operation: &str,
    credentials: &[&str],
    variables: &[(&str, &str)],
) -> (i32, String) {
    let document = document();
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolkit-gen"));
    command.args([
        "call",
        "--openapi",
        document.to_str().unwrap(),
        "--base-url",
        &recorder.base_url,
    ]);
    for credential in credentials {
        command.args(["--credential", credential]);
    }
    command.arg(operation).envs(variables.iter().copied());
    let output = command.output().unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), printed)
}

fn last(recorder: &Recorder) -> Seen {
    recorder.seen.lock().unwrap().last().cloned().unwrap()
}

#[test]
fn each_scheme_puts_its_credential_where_the_document_says_and_nowhere_else() {
    let recorder = recorder();
    let (code, printed) = call(&recorder, "keyed", &["key=K"], &[("K", "key-secret")]);
    assert_eq!(code, 0, "{printed}");
    let seen = last(&recorder);
    assert_eq!(seen.key.as_deref(), Some("key-secret"));
    assert_eq!(seen.target, "/v1/keyed");
    assert!(seen.authorization.is_none() && seen.cookie.is_none());

    let (code, printed) = call(&recorder, "queried", &["query=Q"], &[("Q", "query secret")]);
    assert_eq!(code, 0, "{printed}");
    assert_eq!(last(&recorder).target, "/v1/queried?api_key=query+secret");

    let (code, printed) = call(
        &recorder,
        "cookie",
        &["session=S"],
        &[("S", "cookie-secret")],
    );
    assert_eq!(code, 0, "{printed}");
    assert_eq!(last(&recorder).cookie.as_deref(), Some("sid=cookie-secret"));

    let (code, printed) = call(&recorder, "basic", &["basic=B"], &[("B", "ann:pass word")]);
    assert_eq!(code, 0, "{printed}");
    // base64 of "ann:pass word".
    assert_eq!(
        last(&recorder).authorization.as_deref(),
        Some("Basic YW5uOnBhc3Mgd29yZA==")
    );

    let (code, printed) = call(
        &recorder,
        "either",
        &["bearer=T"],
        &[("T", "bearer-secret")],
    );
    assert_eq!(code, 0, "{printed}");
    assert_eq!(
        last(&recorder).authorization.as_deref(),
        Some("Bearer bearer-secret")
    );

    // An operation that needs none carries none, though credentials are given.
    let (code, printed) = call(&recorder, "open", &["key=K"], &[("K", "key-secret")]);
    assert_eq!(code, 0, "{printed}");
    let seen = last(&recorder);
    assert!(
        seen.key.is_none() && seen.authorization.is_none(),
        "{seen:?}"
    );

    for secret in [
        "key-secret",
        "query secret",
        "cookie-secret",
        "pass word",
        "bearer-secret",
    ] {
        assert!(!printed.contains(secret));
    }
}

#[test]
fn client_credentials_fetch_a_token_from_the_documents_token_url() {
    let recorder = recorder();
    let (code, printed) = call(
        &recorder,
        "either",
        &["machine=M"],
        &[("M", "agent:client-secret")],
    );
    assert_eq!(code, 0, "{printed}");
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].target.starts_with("/oauth/token "), "{seen:?}");
    assert!(seen[0].target.contains("grant_type=client_credentials"));
    // The client authenticates with HTTP basic: base64 of "agent:client-secret".
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some("Basic YWdlbnQ6Y2xpZW50LXNlY3JldA==")
    );
    assert_eq!(
        seen[1].authorization.as_deref(),
        Some("Bearer machine-token-1")
    );
    assert!(!printed.contains("client-secret") && !printed.contains("machine-token"));
}

#[test]
fn bad_credentials_are_usage_errors_naming_no_value() {
    let recorder = recorder();
    let (code, printed) = call(&recorder, "keyed", &["nope=K"], &[("K", "key-secret")]);
    assert_eq!(code, 2, "{printed}");
    assert!(printed.contains("no scheme nope"), "{printed}");
    let (code, printed) = call(&recorder, "basic", &["basic=B"], &[("B", "no-colon")]);
    assert_eq!(code, 2, "{printed}");
    assert!(
        printed.contains("user:password") && !printed.contains("no-colon"),
        "{printed}"
    );
    let (code, printed) = call(&recorder, "keyed", &["key=TOOLKIT_SURELY_UNSET"], &[]);
    assert_eq!(code, 2, "{printed}");
    assert!(
        printed.contains("TOOLKIT_SURELY_UNSET is not set"),
        "{printed}"
    );
    assert!(recorder.seen.lock().unwrap().is_empty());
}

#[test]
fn report_lists_each_operations_requirements_and_the_parameters_kept_from_models() {
    let document = document();
    let output = Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
        .args(["report", "--openapi", document.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success());
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let either = report["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|operation| operation["name"] == "either")
        .unwrap();
    assert_eq!(
        either["security"],
        json!([{ "bearer": [] }, { "machine": ["read"] }])
    );
    assert_eq!(report["securitySchemes"]["basic"]["scheme"], "basic");
    assert_eq!(
        report["credentialParameters"],
        json!([{ "operation": "keyed", "parameter": "X-Key", "in": "header", "scheme": "key" }])
    );
    let text = Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
        .args([
            "report",
            "--openapi",
            document.to_str().unwrap(),
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("either  needs: bearer | machine(read)"),
        "{text}"
    );
    assert!(
        text.contains("keyed: X-Key (header) carries key's credential"),
        "{text}"
    );
}
