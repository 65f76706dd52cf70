//! SSE resumption in the session revisions, as the conformance suite's `sse-retry` scenario
//! presents it: a call's stream gives an event id and a `retry`, then closes before the answer;
//! the client waits `retry`, GETs the stream again with `Last-Event-ID`, and reads the answer
//! there.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::{Value, json};
use toolkit_core::{Reason, ToolSource};

use super::http;
use super::scripted::*;
use crate::support::object;

/// An event stream of `chunks` that ends `after` the last one.
fn ending_after(chunks: Vec<String>, after: Duration) -> Response {
    let stream = futures_util::stream::iter(
        chunks
            .into_iter()
            .map(|chunk| Ok::<_, std::io::Error>(Bytes::from(chunk))),
    )
    .chain(futures_util::stream::once(async move {
        tokio::time::sleep(after).await;
        Ok(Bytes::new())
    }));
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

use futures_util::StreamExt as _;

/// How the scripted server answers a GET of its stream.
#[derive(Clone, Copy)]
enum OnGet {
    /// The answer of the pending call, after a priming event of its own; never closed.
    Answer,
    /// 405: the server has no GET stream.
    Refuse,
}

/// The `sse-retry` mock: answers carry a session (unless `stateless`), a call's stream gives
/// `event-1` and `retry: 500` and ends 50 ms later without the answer.
async fn closing_streams(on_get: OnGet, stateless: bool) -> Scripted {
    let pending: Arc<Mutex<Option<Value>>> = Arc::new(Mutex::new(None));
    serve(move |r: Recorded| {
        let response = match (r.http_method.as_str(), r.method()) {
            ("GET", _) => match on_get {
                OnGet::Refuse => status(405, "text/plain", "Method Not Allowed"),
                OnGet::Answer => {
                    let id = pending.lock().unwrap().clone().unwrap_or(Value::Null);
                    then_stall(
                        "text/event-stream",
                        vec![
                            "id: get-1\nretry: 500\ndata: \n\n".into(),
                            format!(
                                "event: message\nid: get-2\ndata: {}\n\n",
                                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "Reconnection test completed successfully"}]}})
                            ),
                        ],
                    )
                }
            },
            (_, "server/discover") if stateless => discovered(&r),
            (_, "server/discover") => result(&r, json!({})),
            (_, "initialize") => initialized(&r, "2025-03-26", Some("session-1")),
            (_, "tools/list") => tools_page(
                &r,
                json!([{"name": "test_reconnection", "inputSchema": {"type": "object"}}]),
                None,
            ),
            (_, "tools/call") => {
                *pending.lock().unwrap() = Some(r.id());
                ending_after(
                    vec!["id: event-1\nretry: 500\ndata: \n\n".into()],
                    Duration::from_millis(50),
                )
            }
            _ => accepted(),
        };
        async move { response }
    })
    .await
}

#[tokio::test]
async fn mcp_resumption_a_stream_closed_before_its_answer_is_resumed_by_get() {
    let server = closing_streams(OnGet::Answer, false).await;
    let source = http(&server.url);
    let answer = source
        .call(
            "test_reconnection",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        answer[0]["text"], "Reconnection test completed successfully",
        "{answer}"
    );
    let seen = server.seen();
    let call = seen.iter().find(|r| r.method() == "tools/call").unwrap();
    // The session's standalone stream, opened once before the call.
    let standalone: Vec<_> = seen
        .iter()
        .filter(|r| r.http_method == "GET" && r.header("last-event-id").is_none())
        .collect();
    assert_eq!(standalone.len(), 1);
    assert!(standalone[0].at <= call.at);
    let gets: Vec<_> = seen
        .iter()
        .filter(|r| r.http_method == "GET" && r.header("last-event-id").is_some())
        .collect();
    assert_eq!(gets.len(), 1, "one GET, no POST again");
    assert_eq!(
        seen.iter().filter(|r| r.method() == "tools/call").count(),
        1
    );
    let get = gets[0];
    assert_eq!(get.header("last-event-id"), Some("event-1"));
    assert_eq!(get.header("mcp-session-id"), Some("session-1"));
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-03-26"));
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    // The server's retry (500 ms), counted from the stream's end (50 ms after the call).
    let waited = get.at.duration_since(call.at);
    assert!(
        waited >= Duration::from_millis(540) && waited < Duration::from_secs(3),
        "the GET came {waited:?} after the call"
    );
}

#[tokio::test]
async fn mcp_resumption_a_refused_get_is_unavailable() {
    let server = closing_streams(OnGet::Refuse, false).await;
    let failed = http(&server.url)
        .call(
            "test_reconnection",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    assert_eq!(
        server
            .seen()
            .iter()
            .filter(|r| r.http_method == "GET")
            .count(),
        // The standalone stream (refused: not opened again), and the resumption.
        2
    );
}

#[tokio::test]
async fn mcp_resumption_the_stateless_revision_resumes_nothing() {
    let server = closing_streams(OnGet::Answer, true).await;
    let failed = http(&server.url)
        .call(
            "test_reconnection",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    assert!(server.seen().iter().all(|r| r.http_method != "GET"));
}

/// A session server whose every stream (the call's, and each GET that resumes one) gives an
/// event id and `retry` (when `retry` is some) and ends without the answer; it has no standalone
/// stream (405 to a GET without `Last-Event-ID`).
async fn never_answering(retry: Option<u64>) -> Scripted {
    serve(move |r: Recorded| {
        let retry = retry.map(|ms| format!("retry: {ms}\n")).unwrap_or_default();
        let response = match (r.http_method.as_str(), r.method()) {
            (_, "server/discover") => result(&r, json!({})),
            (_, "initialize") => initialized(&r, "2025-11-25", Some("s1")),
            ("GET", _) if r.header("last-event-id").is_none() => {
                status(405, "text/plain", "Method Not Allowed")
            }
            ("GET", _) | (_, "tools/call") => ending_after(
                vec![format!(
                    "id: e-{}\n{retry}data: \n\n",
                    r.at.elapsed().as_nanos()
                )],
                Duration::from_millis(10),
            ),
            _ => accepted(),
        };
        async move { response }
    })
    .await
}

#[tokio::test]
async fn mcp_resumption_a_stream_is_resumed_five_times_at_most() {
    let server = never_answering(Some(20)).await;
    let failed = http(&server.url)
        .call("t", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    let gets: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|r| r.http_method == "GET" && r.header("last-event-id").is_some())
        .collect();
    assert_eq!(gets.len(), 5);
    // Each GET resumes from the id the stream before it gave.
    assert!(
        gets[0]
            .header("last-event-id")
            .is_some_and(|id| id.starts_with("e-"))
    );
    assert_ne!(
        gets[0].header("last-event-id"),
        gets[1].header("last-event-id")
    );
}

#[tokio::test]
async fn mcp_resumption_without_retry_waits_a_second() {
    let server = never_answering(None).await;
    let source = http(&server.url);
    let context = toolkit_core::CallContext::new();
    let call = source.call("t", object(json!({})), &context);
    // The call goes on resuming; only the first GET is waited for here.
    let _ = tokio::time::timeout(Duration::from_millis(1500), call).await;
    let seen = server.seen();
    let call = seen.iter().find(|r| r.method() == "tools/call").unwrap();
    let get = seen
        .iter()
        .find(|r| r.http_method == "GET" && r.header("last-event-id").is_some())
        .unwrap();
    let waited = get.at.duration_since(call.at);
    assert!(
        waited >= Duration::from_millis(1000),
        "the GET came {waited:?} after the call"
    );
}
