//! The old HTTP+SSE transport against a scripted server: the endpoint's origin, the per-event
//! cap, and the flow itself (server-everything's `sse` mode is the real peer).

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::json;
use tokio::sync::mpsc;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::Mcp;

use super::quick;
use super::scripted::*;
use crate::support::object;

type Events = Arc<Mutex<Option<mpsc::UnboundedSender<String>>>>;

/// A server of the old transport: GET /mcp opens the stream and names `endpoint`; each POST to
/// the endpoint is answered on the stream with what `answer` makes of it.
async fn legacy(
    endpoint: &'static str,
    answer: impl Fn(&Recorded) -> Option<String> + Send + Sync + 'static,
) -> Scripted {
    legacy_ending_events_with(endpoint, "\n\n", answer).await
}

/// [`legacy`], each event ended by the blank line `blank` (`"\r\n\r\n"` as sse-starlette writes),
/// and each event sent as two chunks: up to its last line end, then the rest of the blank line.
async fn legacy_ending_events_with(
    endpoint: &'static str,
    blank: &'static str,
    answer: impl Fn(&Recorded) -> Option<String> + Send + Sync + 'static,
) -> Scripted {
    let half = blank.len() / 2;
    let (line_end, rest) = (&blank[..half], &blank[half..]);
    let events: Events = Arc::new(Mutex::new(None));
    serve(move |r: Recorded| {
        let response = if r.http_method == "GET" {
            let (sender, receiver) = mpsc::unbounded_channel::<String>();
            *events.lock().unwrap() = Some(sender.clone());
            let _ = sender.send(format!("event: endpoint{line_end}data: {endpoint}{line_end}"));
            let _ = sender.send(rest.to_owned());
            let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
                let event = receiver.recv().await?;
                Some((Ok::<_, std::io::Error>(Bytes::from(event)), receiver))
            });
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        } else if r.path == "/mcp" {
            // A POST to the stream's own URL: the old transport has none.
            status(405, "text/plain", "Method Not Allowed")
        } else if r.id().is_null() {
            accepted()
        } else {
            let message = match r.method() {
                "initialize" => Some(
                    json!({"jsonrpc": "2.0", "id": r.id(), "result": {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "legacy", "version": "1"}}})
                        .to_string(),
                ),
                _ => answer(&r),
            };
            if let (Some(message), Some(sender)) = (message, events.lock().unwrap().as_ref()) {
                let _ = sender.send(format!("event: message{line_end}data: {message}{line_end}"));
                let _ = sender.send(rest.to_owned());
            }
            accepted()
        };
        async move { response }
    })
    .await
}

#[tokio::test]
async fn mcp_legacy_sse_lists_and_calls_through_the_endpoint() {
    let server = legacy("/mcp/message?session=1", |r| match r.method() {
        "tools/list" => Some(json!({"jsonrpc": "2.0", "id": r.id(), "result": {"tools": [{"name": "t", "inputSchema": {}}]}}).to_string()),
        "tools/call" => Some(json!({"jsonrpc": "2.0", "id": r.id(), "result": {"content": [{"type": "text", "text": "over sse"}]}}).to_string()),
        _ => None,
    })
    .await;
    let source = Mcp::http_with_options(
        "legacy",
        server.url.clone(),
        reqwest::Client::new(),
        quick(),
    );
    assert_eq!(source.discover().await.unwrap().len(), 1);
    let answer = source
        .call("t", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "over sse");
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2024-11-05");
    assert!(
        server
            .seen()
            .iter()
            .any(|r| r.http_method == "POST" && r.body["method"] == "tools/call")
    );
}

#[tokio::test]
async fn mcp_legacy_sse_an_endpoint_on_another_origin_is_refused() {
    let server = legacy("http://elsewhere.invalid/message", |_| None).await;
    let source = Mcp::http_with_options(
        "legacy",
        server.url.clone(),
        reqwest::Client::new(),
        quick(),
    );
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    assert!(!failed.model_message().contains("elsewhere"));
}

#[tokio::test]
async fn mcp_legacy_sse_an_event_past_the_cap_fails_the_call() {
    let server = legacy("/mcp/message", |r| match r.method() {
        "tools/list" => Some(json!({"jsonrpc": "2.0", "id": r.id(), "result": {"tools": [{"name": "t", "inputSchema": {}}]}}).to_string()),
        "tools/call" => Some(format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":\"{}\"}}}}", r.id(), "x".repeat(2 * 1024 * 1024))),
        _ => None,
    })
    .await;
    let options = quick().max_response_bytes(1024 * 1024);
    let source = Mcp::http_with_options(
        "legacy",
        server.url.clone(),
        reqwest::Client::new(),
        options,
    );
    source.discover().await.unwrap();
    let failed = source
        .call("t", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::CallFailed { .. }),
        "{failed}"
    );
    // The stream is gone with it; the next request connects again.
    assert_eq!(source.discover().await.unwrap().len(), 1);
}

#[tokio::test]
async fn mcp_legacy_sse_the_cap_is_per_event_whatever_ends_the_events() {
    // (A lone CR at the end of what has come cannot be told from the start of a CRLF, so an
    // event ended by `\r\r` is dispatched when the next bytes come: left out here, counted by
    // the unit tests of `body.rs`.)
    for blank in ["\r\n\r\n", "\n\n"] {
        let server = legacy_ending_events_with("/mcp/message", blank, |r| match r.method() {
            "tools/list" => Some(json!({"jsonrpc": "2.0", "id": r.id(), "result": {"tools": [{"name": "t", "inputSchema": {}}]}}).to_string()),
            "tools/call" => Some(json!({"jsonrpc": "2.0", "id": r.id(), "result": {"content": [{"type": "text", "text": "x".repeat(10 * 1024)}]}}).to_string()),
            _ => None,
        })
        .await;
        let options = quick().max_response_bytes(64 * 1024);
        let source = Mcp::http_with_options(
            "legacy",
            server.url.clone(),
            reqwest::Client::new(),
            options,
        );
        // 20 answers of 10 KiB: 200 KiB on one stream, each event well under the 64 KiB cap.
        for n in 0..20 {
            let answer = source
                .call("t", object(json!({})), &toolkit_core::CallContext::new())
                .await;
            assert!(answer.is_ok(), "{blank:?}, call {n}: {answer:?}");
        }
        // Only one stream was opened: no call failed and reconnected on the way.
        let streams = server
            .seen()
            .iter()
            .filter(|r| r.http_method == "GET")
            .count();
        assert_eq!(streams, 1, "{blank:?}");
    }
}
