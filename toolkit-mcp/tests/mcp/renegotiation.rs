//! Against a scripted server that changes under the source: a server redeployed from the
//! stateless revision to sessions or back, `-32022` after setup, a DiscoverResult that is none,
//! and refusals told apart by their structure rather than their words.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::response::Response;
use serde_json::{Value, json};
use toolkit_core::{Reason, ToolSource, ToolSourceError};
use toolkit_mcp::Mcp;

use super::http;
use super::scripted::*;
use crate::support::object;

async fn call_t(source: &Mcp) -> Result<Value, ToolSourceError> {
    source
        .call("t", object(json!({})), &toolkit_core::CallContext::new())
        .await
}

/// The answer of a session server (the TypeScript SDK's) to a request without its session.
fn not_initialized() -> Response {
    status(
        400,
        "application/json",
        r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#,
    )
}

/// How a stateless server refuses a request of a session revision.
#[derive(Clone, Copy)]
enum SessionRefused {
    /// `-32022`, answering the request.
    Unsupported,
    /// 404, as for a session it does not know.
    NotFound,
}

/// A server that speaks the stateless revision while `modern` holds, and sessions (`s1`, `s2`,
/// …) otherwise; its tool `t` answers which it spoke.
async fn redeployable(modern: Arc<AtomicBool>, refused: SessionRefused) -> Scripted {
    let sessions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    serve(move |r: Recorded| {
        let stateless = modern.load(Ordering::SeqCst);
        let session_sent = r.header("mcp-session-id").map(str::to_owned);
        let response = match (stateless, r.method()) {
            (_, "") if r.http_method == "DELETE" => accepted(),
            (true, "server/discover") => discovered(&r),
            (true, "initialize") => rpc_error(
                &r,
                400,
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": ["2026-07-28"]})),
            ),
            (true, _) if r.header("mcp-protocol-version") != Some("2026-07-28") => match refused {
                SessionRefused::Unsupported => rpc_error(
                    &r,
                    400,
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": ["2026-07-28"]})),
                ),
                SessionRefused::NotFound => status(404, "text/plain", "Not Found"),
            },
            (true, "tools/list") => tools_page(&r, json!([{"name": "t", "inputSchema": {}}]), None),
            (true, _) => text_result(&r, "stateless"),
            (false, "initialize") => {
                let n = sessions.fetch_add(1, Ordering::SeqCst) + 1;
                initialized(&r, "2025-11-25", Some(&format!("s{n}")))
            }
            (false, _) if session_sent.is_none() => not_initialized(),
            (false, method) if method.starts_with("notifications/") => accepted(),
            (false, "tools/list") => {
                tools_page(&r, json!([{"name": "t", "inputSchema": {}}]), None)
            }
            (false, _) => text_result(&r, &format!("session {}", session_sent.unwrap_or_default())),
        };
        async move { response }
    })
    .await
}

#[tokio::test]
async fn mcp_renegotiation_a_stateless_server_redeployed_with_sessions_is_spoken_to_again() {
    let modern = Arc::new(AtomicBool::new(true));
    let server = redeployable(modern.clone(), SessionRefused::Unsupported).await;
    let source = http(&server.url);
    assert_eq!(call_t(&source).await.unwrap()[0]["text"], "stateless");
    modern.store(false, Ordering::SeqCst);
    assert_eq!(call_t(&source).await.unwrap()[0]["text"], "session s1");
    assert_eq!(call_t(&source).await.unwrap()[0]["text"], "session s1");
    assert_eq!(server.seen_method("initialize").len(), 1);
    assert_eq!(server.seen_method("server/discover").len(), 2);
}

#[tokio::test]
async fn mcp_renegotiation_a_session_server_redeployed_stateless_is_spoken_to_again() {
    for refused in [SessionRefused::Unsupported, SessionRefused::NotFound] {
        let modern = Arc::new(AtomicBool::new(false));
        let server = redeployable(modern.clone(), refused).await;
        let source = http(&server.url);
        assert_eq!(call_t(&source).await.unwrap()[0]["text"], "session s1");
        modern.store(true, Ordering::SeqCst);
        assert_eq!(call_t(&source).await.unwrap()[0]["text"], "stateless");
        assert_eq!(call_t(&source).await.unwrap()[0]["text"], "stateless");
        // Negotiated once more, not once per call.
        assert_eq!(server.seen_method("server/discover").len(), 2);
    }
}

#[tokio::test]
async fn mcp_renegotiation_a_server_that_keeps_answering_32022_is_unsupported() {
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => rpc_error(
                &r,
                200,
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": ["2026-07-28"]})),
            ),
        }
    })
    .await;
    let failed = call_t(&http(&server.url)).await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unsupported { .. }),
        "{failed}"
    );
    // Negotiated again once, the call sent again once.
    assert_eq!(server.seen_method("server/discover").len(), 2);
    assert_eq!(server.seen_method("tools/call").len(), 2);
}

#[tokio::test]
async fn mcp_renegotiation_a_discover_result_without_versions_is_a_session_server() {
    // As the conformance suite's `initialize` server does: every method it does not know is
    // answered with an empty result.
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "initialize" => initialized(&r, "2025-11-25", None),
            "tools/list" => tools_page(&r, json!([{"name": "t", "inputSchema": {}}]), None),
            "tools/call" => text_result(&r, "initialized"),
            _ => result(&r, json!({})),
        }
    })
    .await;
    let source = http(&server.url);
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-11-25");
    assert_eq!(call_t(&source).await.unwrap()[0]["text"], "initialized");
}

#[tokio::test]
async fn mcp_renegotiation_a_refusal_that_answers_the_request_keeps_the_session() {
    // A -32602 about an argument named session_id, with the request's id and HTTP 400: the
    // server took the request and refused its input. The session is not begun again, and the
    // model reads the server's words.
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => rpc_error(&r, 200, -32601, "Method not found", None),
            "initialize" => initialized(&r, "2025-11-25", Some("s1")),
            "tools/list" => tools_page(&r, json!([{"name": "t", "inputSchema": {}}]), None),
            "tools/call" => rpc_error(&r, 400, -32602, "Invalid session_id: expected a UUID", None),
            _ => accepted(),
        }
    })
    .await;
    let source = http(&server.url);
    let failed = call_t(&source).await.unwrap_err();
    assert_eq!(
        failed.reason,
        Reason::invalid_input("Invalid session_id: expected a UUID")
    );
    assert_eq!(server.seen_method("initialize").len(), 1);
    assert_eq!(server.seen_method("tools/call").len(), 1);
}
