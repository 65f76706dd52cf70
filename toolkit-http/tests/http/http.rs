//! The HTTP source against a real server on 127.0.0.1 (axum, in the process) that records every
//! request it gets: each encoding rule, each status, both caps, the timeout, redirects, and the
//! attacks a model could try through the values it gives.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Value, json};
use toolkit_core::{Reason, ToolDefinition, ToolSource, ToolSourceError, Toolkit, ToolkitOptions};
use toolkit_http::{
    BodyEncoding, HeaderClient, HttpSource, Location, Operation, RequestTemplate, client_builder,
};

use crate::support::object;

/// A request as the server got it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// The path and query exactly as they came over the wire.
    pub target: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// A server on 127.0.0.1 that records every request and answers by its path.
pub struct Server {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

#[derive(Clone)]
struct Shared {
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// Where `/away` redirects to.
    elsewhere: Option<String>,
    base: String,
}

impl Server {
    pub async fn start() -> Self {
        Self::start_redirecting_to(None).await
    }

    pub async fn start_redirecting_to(elsewhere: Option<String>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            requests: Arc::clone(&requests),
            elsewhere,
            base: base.clone(),
        };
        let app = Router::new().fallback(answer).with_state(shared);
        tokio::spawn(async move {
            let _ = axum::serve(
                axum::serve::ListenerExt::tap_io(listener, |tcp| {
                    let _ = tcp.set_nodelay(true);
                }),
                app,
            )
            .await;
        });
        Self { base, requests }
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn last(&self) -> Recorded {
        self.recorded().pop().expect("the server got no request")
    }
}

async fn answer(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let target = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    shared.requests.lock().unwrap().push(Recorded {
        method: parts.method.to_string(),
        target: target.clone(),
        headers: parts.headers.clone(),
        body,
    });
    let path = parts.uri.path();
    if let Some(code) = path.strip_prefix("/status/") {
        let status = StatusCode::from_u16(code.parse().unwrap_or(500)).unwrap();
        let mut response = (status, format!("the API's words for {code}")).into_response();
        if code == "429" {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("7"));
        }
        if code == "503" {
            let later =
                httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3600));
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_str(&later).unwrap());
        }
        return response;
    }
    match path {
        "/text" => "plain words".into_response(),
        "/empty" => StatusCode::NO_CONTENT.into_response(),
        "/binary" => (
            [(header::CONTENT_TYPE, "image/png")],
            vec![0x89u8, 0xff, 0x00, 0xfe],
        )
            .into_response(),
        "/long-words" => (StatusCode::UNPROCESSABLE_ENTITY, "w".repeat(5_000)).into_response(),
        "/leaky-words" => (
            StatusCode::BAD_REQUEST,
            format!("no such thing at {}/leaky-words", shared.base),
        )
            .into_response(),
        "/sized" => "x".repeat(3_000).into_response(),
        "/endless" => {
            // An answer that never ends: a source that buffered it would never return.
            let chunks = futures_util::stream::repeat_with(|| {
                Ok::<_, Infallible>(Bytes::from(vec![b'x'; 16 * 1024]))
            });
            Body::from_stream(chunks).into_response()
        }
        "/continuation" => Body::from_stream(continuation_bytes()).into_response(),
        "/continuation-404" => (
            StatusCode::NOT_FOUND,
            Body::from_stream(continuation_bytes()),
        )
            .into_response(),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            "late".into_response()
        }
        "/hang" => {
            // Marks the server's work as dropped when the client goes away before the answer.
            struct Dropped(Arc<Mutex<Vec<Recorded>>>);
            impl Drop for Dropped {
                fn drop(&mut self) {
                    self.0.lock().unwrap().push(Recorded {
                        method: "DROPPED".to_owned(),
                        target: String::new(),
                        headers: HeaderMap::new(),
                        body: Bytes::new(),
                    });
                }
            }
            let _dropped = Dropped(Arc::clone(&shared.requests));
            tokio::time::sleep(Duration::from_secs(30)).await;
            "late".into_response()
        }
        "/slow-body" => {
            let chunks = futures_util::stream::unfold(0, |step| async move {
                if step > 0 {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                Some((Ok::<_, Infallible>(Bytes::from_static(b"[1,")), step + 1))
            });
            Body::from_stream(chunks).into_response()
        }
        // An API that echoes what it got, as APIs do in their words: the query as it came
        // (percent-encoded), the headers as JSON, and the query again where a read stops.
        "/echo-query" => (
            StatusCode::BAD_REQUEST,
            format!("you sent {}", parts.uri.query().unwrap_or_default()),
        )
            .into_response(),
        "/echo-headers" => {
            let headers: serde_json::Map<String, Value> = parts
                .headers
                .iter()
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.to_string(), Value::String(value))
                })
                .collect();
            let query = parts.uri.query().unwrap_or_default();
            axum::Json(json!({ "headers": headers, "query": query })).into_response()
        }
        "/echo-cut" => {
            use futures_util::StreamExt as _;
            // 495 characters and the start of the query, then nothing more: the read stops
            // after the first chunk with a secret's first characters at its end.
            let query = parts.uri.query().unwrap_or_default();
            let first = format!("{} {}", "w".repeat(495), &query[..query.len().min(12)]);
            let chunks = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from(first))])
                .chain(futures_util::stream::pending());
            (StatusCode::BAD_REQUEST, Body::from_stream(chunks)).into_response()
        }
        "/here" => redirect("/landed"),
        "/loop" => redirect("/loop"),
        "/away" => redirect(&format!("{}/stolen", shared.elsewhere.unwrap_or_default())),
        _ => axum::Json(json!({ "ok": true, "path": path })).into_response(),
    }
}

/// 1 MiB of UTF-8 continuation bytes (0x80), which count as no character, then a stall: a source
/// that capped characters alone would read it all and wait for the rest until its timeout.
fn continuation_bytes() -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> {
    use futures_util::StreamExt as _;
    futures_util::stream::iter((0..64).map(|_| Ok(Bytes::from(vec![0x80_u8; 16 * 1024]))))
        .chain(futures_util::stream::pending())
}

fn redirect(to: &str) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to.to_owned())]).into_response()
}

pub fn definition(name: &str, properties: Value, required: &[&str]) -> ToolDefinition {
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    ToolDefinition::new(name, object(schema)).unwrap()
}

/// An operation `GET <path>` with no parameters.
fn fixed(name: &str, path: &str) -> Operation {
    Operation::new(
        definition(name, json!({}), &[]),
        RequestTemplate::new("GET", path),
    )
}

/// The operation most tests use: a value in the path, the query, a header, and a JSON body.
fn everywhere() -> Operation {
    Operation::new(
        definition(
            "everywhere",
            json!({
                "id": {}, "tag": {}, "trace": {}, "body": {}
            }),
            &["id"],
        ),
        RequestTemplate::new("POST", "/items/{id}/notes")
            .parameter("id", Location::Path, "id")
            .parameter("tag", Location::Query, "tag")
            .parameter("trace", Location::Header, "X-Trace")
            .body("body", BodyEncoding::Json),
    )
}

fn all_operations() -> Vec<Operation> {
    let mut operations = vec![everywhere()];
    for (name, path) in [
        ("status_401", "/status/401"),
        ("status_403", "/status/403"),
        ("status_404", "/status/404"),
        ("status_408", "/status/408"),
        ("status_409", "/status/409"),
        ("status_429", "/status/429"),
        ("status_500", "/status/500"),
        ("status_503", "/status/503"),
        ("text", "/text"),
        ("empty", "/empty"),
        ("binary", "/binary"),
        ("long_words", "/long-words"),
        ("leaky_words", "/leaky-words"),
        ("sized", "/sized"),
        ("endless", "/endless"),
        ("continuation", "/continuation"),
        ("continuation_404", "/continuation-404"),
        ("slow", "/slow"),
        ("hang", "/hang"),
        ("slow_body", "/slow-body"),
        ("here", "/here"),
        ("loop", "/loop"),
        ("away", "/away"),
        ("json", "/json"),
    ] {
        operations.push(fixed(name, path));
    }
    operations
}

const SECRET: &str = "s3cr3t-t0ken-4f9c";

/// A client as a host builds one: its credential in its default headers.
fn client_with_secret() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    let mut token = HeaderValue::from_str(&format!("Bearer {SECRET}")).unwrap();
    token.set_sensitive(true);
    headers.insert(AUTHORIZATION, token);
    client_builder().default_headers(headers).build().unwrap()
}

fn source(server: &Server) -> HttpSource {
    HttpSource::builder("api", format!("{}/", server.base), client_with_secret())
        .operations(all_operations())
        .timeout(Duration::from_millis(300))
        .max_answer_length(1_000)
        .build()
        .unwrap()
}

async fn call(source: &HttpSource, tool: &str, input: Value) -> Result<Value, ToolSourceError> {
    source
        .call(tool, object(input), &toolkit_core::CallContext::new())
        .await
}

async fn failure(source: &HttpSource, tool: &str, input: Value) -> ToolSourceError {
    match call(source, tool, input).await {
        Ok(value) => panic!("{tool} answered {value}"),
        Err(error) => error,
    }
}

#[tokio::test]
async fn each_value_goes_to_its_place_encoded() {
    let server = Server::start().await;
    let source = source(&server);
    let answer = call(
        &source,
        "everywhere",
        json!({
            "id": "a b/c",
            "tag": ["x&y=1", "#z", "?w"],
            "trace": ["t1", 2, true],
            "body": { "note": "hi" }
        }),
    )
    .await
    .unwrap();
    assert_eq!(answer["ok"], json!(true));
    let request = server.last();
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.target,
        "/items/a%20b%2Fc/notes?tag=x%26y%3D1&tag=%23z&tag=%3Fw"
    );
    assert_eq!(request.headers["x-trace"], "t1,2,true");
    assert_eq!(request.headers["content-type"], "application/json");
    assert_eq!(
        serde_json::from_slice::<Value>(&request.body).unwrap(),
        json!({"note": "hi"})
    );
    // The client's own header came with it.
    assert_eq!(request.headers[AUTHORIZATION], format!("Bearer {SECRET}"));
}

#[tokio::test]
async fn numbers_and_booleans_are_written_as_json_writes_them() {
    let server = Server::start().await;
    let source = source(&server);
    call(
        &source,
        "everywhere",
        json!({"id": 12.5, "tag": false, "trace": 7}),
    )
    .await
    .unwrap();
    let request = server.last();
    assert_eq!(request.target, "/items/12.5/notes?tag=false");
    assert_eq!(request.headers["x-trace"], "7");
    assert!(request.body.is_empty());
}

#[tokio::test]
async fn path_traversal_through_a_path_value_is_refused_before_sending() {
    let server = Server::start().await;
    let source = source(&server);
    for value in [
        "",
        ".",
        "..",
        "%2e%2e",
        "%2E%2e",
        ".%2e",
        "../admin",
        "a/../../b",
        "..%2Fadmin",
        "%2e%2e%2f",
        "..\\admin",
    ] {
        let error = failure(&source, "everywhere", json!({ "id": value })).await;
        assert!(
            matches!(error.reason, Reason::InvalidInput { .. }),
            "{value:?}: {error:?}"
        );
    }
    for value in [json!(null), json!(["a"]), json!({"a": 1})] {
        let error = failure(&source, "everywhere", json!({ "id": value })).await;
        assert!(
            matches!(error.reason, Reason::InvalidInput { .. }),
            "{value}"
        );
    }
    assert!(server.recorded().is_empty(), "a refused call sent nothing");
}

#[tokio::test]
async fn a_slash_or_url_in_a_value_stays_one_segment_on_the_same_host() {
    let server = Server::start().await;
    let source = source(&server);
    call(
        &source,
        "everywhere",
        json!({"id": "http://evil.example/steal?x=1#y", "tag": "https://evil.example"}),
    )
    .await
    .unwrap();
    let request = server.last();
    assert_eq!(
        request.target,
        "/items/http%3A%2F%2Fevil.example%2Fsteal%3Fx%3D1%23y/notes?tag=https%3A%2F%2Fevil.example"
    );
    assert_eq!(server.recorded().len(), 1);
}

#[tokio::test]
async fn header_injection_through_a_header_value_is_refused() {
    let server = Server::start().await;
    let source = source(&server);
    for value in [
        json!("a\r\nX-Evil: 1"),
        json!("a\nX-Evil: 1"),
        json!("a\rb"),
        json!("a\0b"),
        json!("a\u{7}b"),
        json!("a\u{7f}b"),
        json!(["ok", "b\r\nX-Evil: 1"]),
        json!("é"),
        json!({"X-Evil": "1"}),
    ] {
        let error = failure(&source, "everywhere", json!({"id": "1", "trace": value})).await;
        assert!(
            matches!(error.reason, Reason::InvalidInput { .. }),
            "{value}"
        );
    }
    assert!(server.recorded().is_empty());
}

#[tokio::test]
async fn a_property_the_template_does_not_place_is_refused() {
    let server = Server::start().await;
    let source = source(&server);
    let error = failure(&source, "everywhere", json!({"id": "1", "X-Evil": "1"})).await;
    assert_eq!(
        error.reason,
        Reason::invalid_input("The operation takes no property \"X-Evil\".")
    );
    assert!(server.recorded().is_empty());
}

#[tokio::test]
async fn the_clients_headers_come_last_and_win() {
    let server = Server::start().await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-api-key", HeaderValue::from_static("the-hosts-key"));
    let client = HeaderClient::new(client_builder().build().unwrap(), headers);
    let operation = Operation::new(
        definition("keyed", json!({"key": {}}), &[]),
        RequestTemplate::new("GET", "/json").parameter("key", Location::Header, "X-Api-Key"),
    );
    let source = HttpSource::builder("api", &server.base, client)
        .operation(operation)
        .build()
        .unwrap();
    call(&source, "keyed", json!({"key": "the-models-key"}))
        .await
        .unwrap();
    let request = server.last();
    let values: Vec<_> = request.headers.get_all("x-api-key").iter().collect();
    assert_eq!(values, ["the-hosts-key"]);
}

#[tokio::test]
async fn templates_may_not_fill_the_clients_credential_headers() {
    for name in [
        "Authorization",
        "Cookie",
        "Proxy-Authorization",
        "Host",
        "Content-Length",
    ] {
        let operation = Operation::new(
            definition("t", json!({"v": {}}), &[]),
            RequestTemplate::new("GET", "/json").parameter("v", Location::Header, name),
        );
        let built = HttpSource::builder("api", "http://127.0.0.1:9", reqwest::Client::new())
            .operation(operation)
            .build();
        assert!(built.is_err(), "{name}");
    }
}

#[tokio::test]
async fn a_form_body_is_encoded_as_a_form() {
    let server = Server::start().await;
    let operation = Operation::new(
        definition("send", json!({"body": {}}), &["body"]),
        RequestTemplate::new("POST", "/json").body("body", BodyEncoding::Form),
    );
    let source = HttpSource::builder("twilio", &server.base, reqwest::Client::new())
        .operation(operation)
        .build()
        .unwrap();
    call(
        &source,
        "send",
        json!({"body": {"To": "+1 555&0100", "Body": "a=b", "MediaUrl": ["u1", "u2"], "Skip": null, "N": 3}}),
    )
    .await
    .unwrap();
    let request = server.last();
    assert_eq!(
        request.headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        std::str::from_utf8(&request.body).unwrap(),
        "To=%2B1%20555%260100&Body=a%3Db&MediaUrl=u1&MediaUrl=u2&N=3"
    );
    let error = failure(&source, "send", json!({"body": {"nested": {"a": 1}}})).await;
    assert!(matches!(error.reason, Reason::InvalidInput { .. }));
}

#[tokio::test]
async fn statuses_map_to_reasons() {
    let server = Server::start().await;
    let source = source(&server);
    for tool in ["status_401", "status_403"] {
        let error = failure(&source, tool, json!({})).await;
        assert!(
            matches!(error.reason, Reason::Authentication { .. }),
            "{tool}"
        );
        assert!(!error.is_retryable());
    }
    for tool in ["status_408", "status_500"] {
        let error = failure(&source, tool, json!({})).await;
        assert!(
            matches!(
                error.reason,
                Reason::Unavailable {
                    retry_after: None,
                    ..
                }
            ),
            "{tool}: {error:?}"
        );
        assert!(error.is_retryable());
        assert!(
            !error.model_message().contains("words"),
            "the body is not read"
        );
    }
    let error = failure(&source, "status_429", json!({})).await;
    assert!(matches!(
        error.reason,
        Reason::Unavailable { retry_after: Some(after), .. } if after == Duration::from_secs(7)
    ));
    let error = failure(&source, "status_503", json!({})).await;
    let Reason::Unavailable {
        retry_after: Some(after),
        ..
    } = error.reason
    else {
        panic!("{error:?}")
    };
    assert!(
        after > Duration::from_secs(3500) && after <= Duration::from_secs(3600),
        "{after:?}"
    );
    for (tool, code) in [
        ("status_404", "404 Not Found"),
        ("status_409", "409 Conflict"),
    ] {
        let error = failure(&source, tool, json!({})).await;
        let number = &code[..3];
        assert_eq!(
            error.reason,
            Reason::call_failed(format!(
                "The API answered {code}: the API's words for {number}"
            ))
        );
    }
}

#[tokio::test]
async fn the_apis_words_are_cut_to_500_characters() {
    let server = Server::start().await;
    let source = source(&server);
    let error = failure(&source, "long_words", json!({})).await;
    let message = error.model_message();
    assert!(message.starts_with("The API answered 422 Unprocessable Entity: www"));
    let words = message.split_once(": ").unwrap().1;
    assert_eq!(words.matches('w').count(), 500);
    assert!(message.ends_with('…'));
}

#[tokio::test]
async fn a_success_is_json_else_text_else_null() {
    let server = Server::start().await;
    let source = source(&server);
    assert_eq!(
        call(&source, "json", json!({})).await.unwrap(),
        json!({"ok": true, "path": "/json"})
    );
    assert_eq!(
        call(&source, "text", json!({})).await.unwrap(),
        json!("plain words")
    );
    assert_eq!(
        call(&source, "empty", json!({})).await.unwrap(),
        Value::Null
    );
    let error = failure(&source, "binary", json!({})).await;
    assert_eq!(
        error.reason,
        Reason::call_failed(
            "The operation answered 4 bytes of binary content (image/png), which a tool cannot return."
        )
    );
}

#[tokio::test]
async fn an_answer_longer_than_the_cap_asks_for_less() {
    let server = Server::start().await;
    let source = source(&server);
    // Declared by its Content-Length (3,000 characters > 1,000) …
    let error = failure(&source, "sized", json!({})).await;
    assert!(matches!(error.reason, Reason::CallFailed { .. }));
    assert!(
        error
            .model_message()
            .contains("longer than 1000 characters")
    );
    assert!(error.model_message().contains("Ask for less"));
    // … or streamed without end: reading stops at the cap instead of buffering forever.
    let error = failure(&source, "endless", json!({})).await;
    assert!(
        error
            .model_message()
            .contains("longer than 1000 characters")
    );
}

#[tokio::test]
async fn bytes_that_are_no_characters_count_against_the_cap_too() {
    let server = Server::start().await;
    let source = source(&server);
    // A body of continuation bytes holds no character: the cap in bytes (4 × 1,000) stops it.
    let error = failure(&source, "continuation", json!({})).await;
    assert!(matches!(error.reason, Reason::CallFailed { .. }), "{error}");
    assert!(
        error
            .model_message()
            .contains("longer than 1000 characters"),
        "{error}"
    );
    // The excerpt of a 4xx is capped the same way (at 4 × 500 bytes), not read to the timeout.
    let error = failure(&source, "continuation_404", json!({})).await;
    assert!(matches!(error.reason, Reason::CallFailed { .. }), "{error}");
    assert!(
        error.model_message().starts_with("The API answered 404"),
        "{error}"
    );
}

#[tokio::test]
async fn the_default_cap_is_200_000_characters() {
    let server = Server::start().await;
    let source = HttpSource::builder("api", &server.base, reqwest::Client::new())
        .operation(fixed("endless", "/endless"))
        .build()
        .unwrap();
    let error = failure(&source, "endless", json!({})).await;
    assert!(
        error
            .model_message()
            .contains("longer than 200000 characters")
    );
}

#[tokio::test]
async fn a_call_longer_than_the_timeout_is_unavailable() {
    let server = Server::start().await;
    let source = source(&server);
    for tool in ["slow", "slow_body"] {
        let error = failure(&source, tool, json!({})).await;
        assert!(
            matches!(error.reason, Reason::Unavailable { .. }),
            "{tool}: {error:?}"
        );
        assert!(error.is_retryable());
    }
}

#[tokio::test]
async fn dropping_a_call_aborts_its_request() {
    let server = Server::start().await;
    let source = HttpSource::builder("api", &server.base, reqwest::Client::new())
        .operation(fixed("hang", "/hang"))
        .build()
        .unwrap();
    let context = toolkit_core::CallContext::new();
    let call = source.call("hang", object(json!({})), &context);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err()
    );
    // The connection closed, so the server dropped its work for the request.
    for _ in 0..100 {
        if server.recorded().iter().any(|r| r.method == "DROPPED") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "the server kept working for a dropped call: {:?}",
        server.recorded()
    );
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed() {
    let server = Server::start().await;
    let source = source(&server);
    let answer = call(&source, "here", json!({})).await.unwrap();
    assert_eq!(answer, json!({"ok": true, "path": "/landed"}));
    let recorded = server.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(
        recorded[1].headers[AUTHORIZATION],
        format!("Bearer {SECRET}")
    );
}

#[tokio::test]
async fn a_redirect_loop_stops_after_ten_redirects() {
    let server = Server::start().await;
    let source = source(&server);
    let error = failure(&source, "loop", json!({})).await;
    assert_eq!(
        error.reason,
        Reason::call_failed("The API redirected the request more often than the source follows.")
    );
    // The first request and the ten redirects the policy follows.
    assert_eq!(server.recorded().len(), 1 + toolkit_http::MAX_REDIRECTS);
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_carries_nothing() {
    let elsewhere = Server::start().await;
    let server = Server::start_redirecting_to(Some(elsewhere.base.clone())).await;
    let source = source(&server);
    let error = failure(&source, "away", json!({})).await;
    assert!(
        matches!(error.reason, Reason::CallFailed { .. }),
        "{error:?}"
    );
    assert!(error.model_message().contains("302 Found"));
    assert!(
        elsewhere.recorded().is_empty(),
        "the other origin got nothing"
    );
}

#[tokio::test]
async fn with_a_client_that_follows_anywhere_another_origins_answer_is_never_read() {
    let elsewhere = Server::start().await;
    let server = Server::start_redirecting_to(Some(elsewhere.base.clone())).await;
    // reqwest's default policy follows any redirect: the source still refuses the answer.
    let source = HttpSource::builder("api", &server.base, reqwest::Client::new())
        .operation(fixed("away", "/away"))
        .build()
        .unwrap();
    let error = failure(&source, "away", json!({})).await;
    assert_eq!(
        error.reason,
        Reason::call_failed(
            "The API redirected the request to another site, which the source does not follow."
        )
    );
}

#[tokio::test]
async fn an_unknown_tool_is_not_found_and_an_unreachable_api_unavailable() {
    let server = Server::start().await;
    let source = source(&server);
    let error = failure(&source, "nothing", json!({})).await;
    assert!(matches!(error.reason, Reason::NotFound { .. }));
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let source = HttpSource::builder("api", &closed, reqwest::Client::new())
        .operation(fixed("json", "/json"))
        .build()
        .unwrap();
    let error = failure(&source, "json", json!({})).await;
    assert!(matches!(error.reason, Reason::Unavailable { .. }));
    assert!(!error.model_message().contains("127.0.0.1"));
}

/// A buffer that a tracing subscriber writes its lines into.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_credential_and_no_address_reaches_what_a_model_reads() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = Server::start().await;
    let source = Arc::new(source(&server));
    let definitions = source.definitions();
    let toolkit = Toolkit::from_source(
        source.clone(),
        definitions.clone(),
        &ToolkitOptions::default(),
    )
    .unwrap();

    let mut read = serde_json::to_string(&definitions).unwrap();
    for tool in toolkit
        .tools()
        .map(|tool| tool.name().to_owned())
        .collect::<Vec<_>>()
    {
        let input = if tool == "everywhere" {
            json!({"id": "1"})
        } else {
            json!({})
        };
        let outcome = match toolkit.call(&tool, input).await {
            Ok(value) => value,
            Err(failure) => failure.to_json(),
        };
        read.push_str(&outcome.to_string());
    }
    // And a failure of input, and of a tool that does not exist.
    read.push_str(&format!(
        "{:?}",
        toolkit.call("everywhere", json!({"id": ".."})).await
    ));
    read.push_str(&format!("{:?}", toolkit.call("nothing", json!({})).await));
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logged.contains("HTTP call failed"),
        "the failures were logged: {logged}"
    );
    read.push_str(&logged);

    assert!(
        server
            .recorded()
            .iter()
            .filter(|r| r.method != "DROPPED")
            .all(|r| r.headers[AUTHORIZATION] == format!("Bearer {SECRET}")),
        "every request carried the client's credential"
    );
    assert!(!read.contains(SECRET), "the token leaked");
    let address = server.base.trim_start_matches("http://");
    assert!(!read.contains(address), "the address leaked: {read}");
    assert!(
        read.contains("no such thing at <the API>/leaky-words"),
        "the API's words are redacted"
    );
}

#[tokio::test]
async fn a_toolkit_checks_input_before_the_source_sees_it() {
    let server = Server::start().await;
    let source = Arc::new(source(&server));
    let toolkit = Toolkit::from_source(
        source.clone(),
        source.definitions(),
        &ToolkitOptions::default(),
    )
    .unwrap();
    let failure = toolkit
        .call("everywhere", json!({"idd": "1"}))
        .await
        .unwrap_err();
    assert_eq!(failure.code, "InvalidInputError");
    assert!(server.recorded().is_empty());
    let failure = toolkit.call("status_503", json!({})).await.unwrap_err();
    assert_eq!(failure.code, "UnavailableError");
    assert!(failure.retryable);
}

#[tokio::test]
async fn a_source_with_bad_templates_names_every_problem() {
    let error = HttpSource::builder("api", "ftp://example.com", reqwest::Client::new())
        .operation(Operation::new(
            definition("a", json!({}), &[]),
            RequestTemplate::new("GET", "/a/{id}"),
        ))
        .operation(fixed("b", "/b"))
        .operation(fixed("b", "/c"))
        .build()
        .unwrap_err();
    assert_eq!(error.problems().len(), 3, "{error}");
}

#[tokio::test]
async fn operations_round_trip_as_catalog_data() {
    let operations = all_operations();
    let text = serde_json::to_string(&operations).unwrap();
    let back: Vec<Operation> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, operations);
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
}
