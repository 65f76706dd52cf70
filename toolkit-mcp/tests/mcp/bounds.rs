//! What a server cannot make the source do without bound: a listing of many large pages, and
//! requests of its own on a response stream (none at all in the stateless revision).

use std::time::Duration;

use serde_json::json;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::Mcp;

use super::scripted::*;
use super::{http, quick};
use crate::support::object;

#[tokio::test]
async fn mcp_bounds_a_listing_is_capped_over_all_its_pages() {
    // Ten pages of about 40 KiB of tools each: every page is under the per-answer cap, the
    // listing is not under the total one.
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            _ => {
                let page: u64 = r.body["params"]["cursor"]
                    .as_str()
                    .and_then(|cursor| cursor.parse().ok())
                    .unwrap_or(0);
                let tools: Vec<_> = (0..40)
                    .map(|n| json!({"name": format!("t{page}_{n}"), "description": "d".repeat(1000), "inputSchema": {}}))
                    .collect();
                let next = (page < 9).then(|| (page + 1).to_string());
                tools_page(&r, json!(tools), next.as_deref())
            }
        }
    })
    .await;
    let options = quick()
        .max_response_bytes(64 * 1024)
        .max_listing_bytes(256 * 1024);
    let source =
        Mcp::http_with_options("peer", server.url.clone(), reqwest::Client::new(), options);
    let failed = source.discover().await.unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    assert!(server.seen_method("tools/list").len() < 10);
    // With room for them, the same pages are read whole.
    let options = quick()
        .max_response_bytes(64 * 1024)
        .max_listing_bytes(1024 * 1024);
    let source =
        Mcp::http_with_options("peer", server.url.clone(), reqwest::Client::new(), options);
    assert_eq!(source.discover().await.unwrap().len(), 400);
}

/// Whether `r` is the client's answer to the server's request `id`.
fn answers(r: &Recorded, id: &str) -> bool {
    r.body["id"] == id && r.body.get("method").is_none()
}

#[tokio::test]
async fn mcp_bounds_a_stateless_server_gets_no_answer_to_a_request() {
    // The stateless revision has the server send no request: a ping on the stream is left
    // unanswered.
    let server = serve(|r: Recorded| async move {
        match r.method() {
            "server/discover" => discovered(&r),
            "tools/call" => sse_body(format!(
                "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}}\n\n\
                 event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[]}}}}\n\n",
                r.id()
            )),
            _ => accepted(),
        }
    })
    .await;
    let source = http(&server.url);
    assert_eq!(
        source
            .call("t", object(json!({})), &toolkit_core::CallContext::new())
            .await
            .unwrap(),
        json!([])
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !server.seen().iter().any(|r| answers(r, "p1")),
        "a ping of a stateless server was answered"
    );
}

#[tokio::test]
async fn mcp_bounds_answers_to_a_servers_requests_in_flight_are_bounded() {
    // A session server streams 200 pings before its answer, and never finishes reading the
    // POST of any answer to them: at most a few are in flight, not one per ping.
    let server = serve(|r: Recorded| {
        let pong = r.method().is_empty() && r.http_method == "POST";
        let response = match r.method() {
            "server/discover" => rpc_error(&r, 200, -32601, "Method not found", None),
            "initialize" => initialized(&r, "2025-11-25", Some("s1")),
            "tools/call" => {
                let pings: String = (0..200)
                    .map(|n| format!("event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"p{n}\",\"method\":\"ping\"}}\n\n"))
                    .collect();
                sse_body(format!(
                    "{pings}event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[]}}}}\n\n",
                    r.id()
                ))
            }
            _ => accepted(),
        };
        async move {
            if pong {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            response
        }
    })
    .await;
    let source = http(&server.url);
    assert_eq!(
        source
            .call("t", object(json!({})), &toolkit_core::CallContext::new())
            .await
            .unwrap(),
        json!([])
    );
    assert!(
        server
            .wait_until(|seen| seen.iter().any(|r| answers(r, "p0")))
            .await
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pongs = server
        .seen()
        .iter()
        .filter(|r| r.method().is_empty() && r.http_method == "POST")
        .count();
    assert!(
        (1..=8).contains(&pongs),
        "{pongs} answers to pings in flight"
    );
}
