//! The caps of a session's standalone stream (the GET), against a scripted server on 127.0.0.1:
//! setting up a session waits for the server to answer the GET at most 2 seconds (`OPEN_WAIT`),
//! and a stream the server keeps ending without an event is opened again at most 5 times in a
//! row (`MAX_REOPENS`). The same cap holds for the stateless revision's `subscriptions/listen`.

use std::time::{Duration, Instant};

use axum::response::Response;
use serde_json::json;
use toolkit_core::ToolSource;

use super::http;
use super::scripted::{
    Recorded, Scripted, accepted, discovered, initialized, rpc_error, serve, sse_body, status,
    tools_page,
};

/// A server of sessions whose GET is answered by `get`.
async fn sessions<F, Fut>(get: F) -> Scripted
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    serve(move |r: Recorded| {
        let answer = match (r.http_method.as_str(), r.method()) {
            ("GET", _) => return futures_util::future::Either::Left(get()),
            ("DELETE", _) => status(202, "text/plain", ""),
            (_, "server/discover") => rpc_error(&r, 400, -32601, "Method not found", None),
            (_, "initialize") => initialized(&r, "2025-11-25", Some("s1")),
            (_, "tools/list") => tools_page(&r, json!([{"name": "t", "inputSchema": {}}]), None),
            _ => accepted(),
        };
        futures_util::future::Either::Right(async move { answer })
    })
    .await
}

fn gets(server: &Scripted) -> usize {
    server
        .seen()
        .iter()
        .filter(|r| r.http_method == "GET")
        .count()
}

#[tokio::test]
async fn mcp_standalone_stream_never_answered_holds_setup_two_seconds_only() {
    // The GET is never answered: setup waits for it the 2 s of OPEN_WAIT, then goes on (the
    // source's own timeout, 10 s, is not what ends the wait).
    let server = sessions(|| async {
        std::future::pending::<()>().await;
        accepted()
    })
    .await;
    let source = http(&server.url);
    let started = Instant::now();
    let listed = source.discover().await.unwrap();
    let took = started.elapsed();
    assert_eq!(listed.len(), 1);
    assert_eq!(gets(&server), 1);
    assert!(took >= Duration::from_millis(1_900), "waited {took:?}");
    assert!(took < Duration::from_secs(8), "waited {took:?}");
    // Later requests do not wait for it again.
    let started = Instant::now();
    source.discover().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn mcp_standalone_stream_ending_empty_is_opened_again_five_times_at_most() {
    // Each GET is a stream with only a priming event (an id, a short retry, no data), then ends.
    let server = sessions(|| async { sse_body("id: e1\nretry: 20\ndata:\n\n") }).await;
    let source = http(&server.url);
    source.discover().await.unwrap();
    assert!(
        server
            .wait_until(|seen| seen.iter().filter(|r| r.http_method == "GET").count() >= 5)
            .await
    );
    // Well past five more retries: no sixth opening.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(gets(&server), 5);
    // Every reopening resumed from the last event id.
    let resumed = server
        .seen()
        .iter()
        .filter(|r| r.http_method == "GET")
        .skip(1)
        .all(|r| r.header("last-event-id") == Some("e1"));
    assert!(resumed);
}

#[tokio::test]
async fn mcp_subscription_ending_empty_is_opened_again_five_times_at_most() {
    // A stateless server whose every `subscriptions/listen` is a stream that ends without a
    // notification (only a priming `retry`).
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            "tools/list" => tools_page(&r, json!([{"name": "t", "inputSchema": {}}]), None),
            "subscriptions/listen" => sse_body("retry: 20\n\n"),
            _ => accepted(),
        }
    })
    .await;
    let source = http(&server.url);
    // Someone waits for changes: the source listens.
    let _heard = source.tools_changed().expect("heard over Streamable HTTP");
    source.discover().await.unwrap();
    let listens = |seen: &[Recorded]| {
        seen.iter()
            .filter(|r| r.method() == "subscriptions/listen")
            .count()
    };
    // Reopened a second apart: up to about four seconds for the fifth.
    let mut five = false;
    for _ in 0..3 {
        five = server.wait_until(|seen| listens(seen) >= 5).await;
        if five {
            break;
        }
    }
    assert!(five, "opened {} times", listens(&server.seen()));
    // Past the next reopening's wait: no sixth.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(listens(&server.seen()), 5);
}
