//! Redirects to another origin, on every HTTP transport: an answer from elsewhere is never read,
//! and with the client this crate recommends (`client_builder`) nothing is sent there at all.

use axum::response::Response;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::json;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::Mcp;

use super::quick;
use super::scripted::*;
use crate::support::object;

const KEY: &str = "key-that-stays-home";

/// The credential header of a host, as `toolkit-gen --header` gives it.
fn credentials() -> HeaderMap {
    let mut headers = HeaderMap::new();
    let mut key = HeaderValue::from_static(KEY);
    key.set_sensitive(true);
    headers.insert("x-api-key", key);
    headers
}

/// A stateless server elsewhere whose every answer would be read as good, if read.
async fn elsewhere() -> Scripted {
    serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            "tools/list" => tools_page(&r, json!([{"name": "stolen", "inputSchema": {}}]), None),
            "tools/call" => text_result(&r, "from elsewhere"),
            _ => accepted(),
        }
    })
    .await
}

fn redirect_to(url: &reqwest::Url) -> Response {
    Response::builder()
        .status(307)
        .header("location", url.as_str())
        .body(axum::body::Body::empty())
        .unwrap()
}

#[tokio::test]
async fn mcp_redirects_an_answer_from_another_origin_is_never_read() {
    let other = elsewhere().await;
    let target = other.url.clone();
    let server = serve(move |_r: Recorded| {
        let response = redirect_to(&target);
        async move { response }
    })
    .await;
    // A client that follows every redirect (reqwest's default policy).
    let client = reqwest::Client::builder()
        .default_headers(credentials())
        .build()
        .unwrap();
    let source = Mcp::http_with_options("peer", server.url.clone(), client, quick());
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    let failed = source
        .call(
            "stolen",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(!failed.model_message().contains("elsewhere"), "{failed}");
    // Negotiation stopped at the first redirected answer: no initialize, no old transport.
    assert!(server.seen_method("initialize").is_empty());
    assert!(server.seen().iter().all(|r| r.http_method == "POST"));
}

#[tokio::test]
async fn mcp_redirects_the_recommended_client_sends_nothing_elsewhere() {
    use toolkit_http::client_builder;

    let other = elsewhere().await;
    let target = other.url.clone();
    let server = serve(move |_r: Recorded| {
        let response = redirect_to(&target);
        async move { response }
    })
    .await;
    let client = client_builder()
        .default_headers(credentials())
        .build()
        .unwrap();
    let source = Mcp::http_with_options("peer", server.url.clone(), client, quick());
    assert!(source.discover().await.is_err());
    assert!(
        source
            .call(
                "stolen",
                object(json!({})),
                &toolkit_core::CallContext::new()
            )
            .await
            .is_err()
    );
    assert!(other.seen().is_empty(), "{:?}", other.seen());
}

#[tokio::test]
async fn mcp_redirects_the_old_transports_endpoint_cannot_redirect_elsewhere() {
    // The stream names an endpoint of its own origin, which answers each POST with a 307 to
    // another origin: the messages must not be taken as delivered there.
    let other = elsewhere().await;
    let target = other.url.clone();
    let server = serve(move |r: Recorded| {
        let response = if r.http_method == "GET" {
            then_stall(
                "text/event-stream",
                vec!["event: endpoint\ndata: /mcp/message\n\n".into()],
            )
        } else if r.path == "/mcp" {
            status(405, "text/plain", "Method Not Allowed")
        } else {
            redirect_to(&target)
        };
        async move { response }
    })
    .await;
    let client = reqwest::Client::builder()
        .default_headers(credentials())
        .build()
        .unwrap();
    let source = Mcp::http_with_options("legacy", server.url.clone(), client, quick());
    let started = std::time::Instant::now();
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    // Refused at once, not left waiting on the stream for an answer that cannot come.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
