//! The conformance suites over the HTTP source, as the seed runs them: over operations written by
//! hand, and over the operations of an OpenAPI document, each against a server on 127.0.0.1 that
//! takes a bearer token, and can refuse it, be down, or be gone.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::{Request, State as Axum};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::json;
use toolkit_core::BoxFuture;
use toolkit_http::{HttpSource, Location, Operation, RequestTemplate, client_builder};
use toolkit_openapi::{ReadOptions, read_operations};
use toolkit_runtime::conformance::{self, ClosedPort, Fixture, State, Subject};

use crate::http::definition;

const SECRET: &str = "hk-9d1e44a07c";

/// What the system does with each request.
#[derive(Clone)]
struct System {
    state: State,
    blocking_ended: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn serve(Axum(system): Axum<System>, request: Request) -> Response {
    match system.state {
        State::Unauthorized => return (StatusCode::UNAUTHORIZED, "bad token").into_response(),
        State::Unavailable => return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response(),
        State::Working | State::Unreachable => {}
    }
    let authorized = request.headers().get(header::AUTHORIZATION)
        == Some(&HeaderValue::from_str(&format!("Bearer {SECRET}")).unwrap());
    if !authorized {
        return (StatusCode::UNAUTHORIZED, "no token").into_response();
    }
    let text: String = url::form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
        .find(|(key, _)| key == "text")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    match request.uri().path() {
        "/api/echo" => axum::Json(json!({ "text": text })).into_response(),
        "/api/failing" => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "The failing tool failed, as it does.",
        )
            .into_response(),
        "/api/blocking" => {
            let _ended = SetOnDrop(Arc::clone(&system.blocking_ended));
            std::future::pending::<()>().await;
            StatusCode::OK.into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Where the operations come from.
#[derive(Clone, Copy)]
enum Operations {
    ByHand,
    FromOpenApi,
}

fn operations(kind: Operations) -> Vec<Operation> {
    match kind {
        Operations::ByHand => ["echo", "failing", "blocking"]
            .into_iter()
            .map(|tool| {
                Operation::new(
                    definition(tool, json!({ "text": { "type": "string" } }), &["text"]),
                    RequestTemplate::new("GET", format!("/{tool}")).parameter(
                        "text",
                        Location::Query,
                        "text",
                    ),
                )
            })
            .collect(),
        Operations::FromOpenApi => {
            let text = json!({ "name": "text", "in": "query", "required": true, "schema": { "type": "string" } });
            let document = json!({
                "openapi": "3.1.0",
                "info": { "title": "conformance", "version": "1" },
                "paths": {
                    "/echo": { "get": { "operationId": "echo", "summary": "Answers with the text it is given.", "parameters": [text], "responses": { "200": { "description": "ok" } } } },
                    "/failing": { "post": { "operationId": "failing", "parameters": [text], "responses": { "422": { "description": "failed" } } } },
                    "/blocking": { "get": { "operationId": "blocking", "parameters": [text], "responses": { "200": { "description": "never" } } } }
                }
            });
            let read = read_operations(&document, &ReadOptions::default()).unwrap();
            assert!(read.skipped.is_empty(), "{:?}", read.skipped);
            read.operations
        }
    }
}

struct Http(Operations);

impl Fixture for Http {
    fn subject(&self) -> &str {
        match self.0 {
            Operations::ByHand => "HTTP source over operations written by hand",
            Operations::FromOpenApi => "HTTP source over the operations of an OpenAPI document",
        }
    }

    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
        Box::pin(async move {
            let blocking_ended = Arc::new(AtomicBool::new(false));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|e| e.to_string())?;
            let address = listener
                .local_addr()
                .map_err(|e| e.to_string())?
                .to_string();
            // Unreachable: the port is held bound and never listened on, so no other test's
            // server can take it while the check runs.
            let (server, closed) = if state == State::Unreachable {
                drop(listener);
                let closed = ClosedPort::new().map_err(|e| e.to_string())?;
                (None, Some(closed))
            } else {
                let system = System {
                    state,
                    blocking_ended: Arc::clone(&blocking_ended),
                };
                let app = Router::new().fallback(serve).with_state(system);
                let server = tokio::spawn(async move {
                    let _ = axum::serve(
                        axum::serve::ListenerExt::tap_io(listener, |tcp| {
                            let _ = tcp.set_nodelay(true);
                        }),
                        app,
                    )
                    .await;
                });
                (Some(server), None)
            };
            let address = closed
                .as_ref()
                .map_or(address, |closed| closed.address().to_string());
            let mut headers = HeaderMap::new();
            let mut token = HeaderValue::from_str(&format!("Bearer {SECRET}")).unwrap();
            token.set_sensitive(true);
            headers.insert(AUTHORIZATION, token);
            let client = client_builder()
                .default_headers(headers)
                .build()
                .map_err(|e| e.to_string())?;
            let source = HttpSource::builder("api", format!("http://{address}/api"), client)
                .operations(operations(self.0))
                .build()
                .map_err(|e| e.to_string())?;
            Ok(Subject {
                source: Arc::new(source),
                secret: SECRET.to_owned(),
                address,
                blocking_ended: Arc::new(move || blocking_ended.load(Ordering::SeqCst)),
                discover_asks_system: false,
                system: Box::new((server.map(AbortOnDrop), closed)),
            })
        })
    }
}

/// Stops the server when the check ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[tokio::test]
async fn the_http_source_over_operations_written_by_hand_conforms() {
    conformance::run(&Http(Operations::ByHand))
        .await
        .assert_passed();
}

#[tokio::test]
async fn the_http_source_over_an_openapi_document_conforms() {
    conformance::run(&Http(Operations::FromOpenApi))
        .await
        .assert_passed();
}
