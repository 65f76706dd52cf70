//! An API on 127.0.0.1 for the gateway's tests, `GET /items` (read-only) and `POST /items` (not
//! idempotent), that counts its requests and answers 503 to as many of them as a test says; and
//! its OpenAPI document.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

/// The upstream's state: requests seen, and how many of the next ones fail with 503.
#[derive(Clone, Default)]
pub struct Upstream {
    /// Requests seen.
    pub requests: Arc<AtomicUsize>,
    /// How many of the next requests fail with 503.
    pub failing: Arc<AtomicUsize>,
}

async fn items(State(upstream): State<Upstream>) -> Response {
    upstream.requests.fetch_add(1, Ordering::SeqCst);
    let failing = upstream.failing.load(Ordering::SeqCst);
    if failing > 0 {
        upstream.failing.store(failing - 1, Ordering::SeqCst);
        return (StatusCode::SERVICE_UNAVAILABLE, "busy").into_response();
    }
    axum::Json(json!({ "items": ["a"] })).into_response()
}

/// Serves `upstream` on a free port of 127.0.0.1: its base URL.
pub async fn start(upstream: Upstream) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/items", get(items).post(items))
        .with_state(upstream);
    tokio::spawn(async move {
        let _ = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            app,
        )
        .await;
    });
    base
}

/// The API's OpenAPI document.
pub const DOCUMENT: &str = r#"{
  "openapi": "3.1.0",
  "info": { "title": "items", "version": "1" },
  "paths": { "/items": {
    "get": { "operationId": "listItems", "responses": { "200": { "description": "ok" } } },
    "post": { "operationId": "createItem", "responses": { "200": { "description": "ok" } } }
  } }
}"#;
