//! Against rmcp's server over Streamable HTTP: stateless, and sessions in each revision.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use toolkit_core::{Assembly, Decision, Member, Reason, ToolSource};
use toolkit_mcp::Mcp;

use super::rmcp_peer::{Peer, serve};
use super::{http, quick};
use crate::support::object;

fn names(definitions: &[toolkit_core::ToolDefinition]) -> Vec<&str> {
    definitions.iter().map(|d| d.name()).collect()
}

#[tokio::test]
async fn mcp_rmcp_stateless_lists_and_calls() {
    let server = serve(Peer::standard(), false, false).await;
    let source = http(&server.url);
    let definitions = source.discover().await.unwrap();
    assert_eq!(
        names(&definitions),
        ["echo", "failing", "blocking", "structured", "region"]
    );
    let echo = &definitions[0];
    assert_eq!(echo.annotations.read_only, Some(true));
    assert_eq!(echo.annotations.title.as_deref(), Some("Echo"));

    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2026-07-28");
    assert_eq!(
        snapshot["server"],
        json!({"name": "rmcp-peer", "version": "1.2.3"})
    );
    assert_eq!(snapshot["tools"].as_array().unwrap().len(), 5);

    let answer = source
        .call(
            "echo",
            object(json!({"text": "hi"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!([{"type": "text", "text": "hi"}]));
    let structured = source
        .call(
            "structured",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(structured["answer"], 42);

    let failed = source
        .call(
            "failing",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(failed.source, "peer");
    assert_eq!(
        failed.reason,
        Reason::call_failed("the tool failed on purpose")
    );
    assert_eq!(failed.model_message(), "the tool failed on purpose");

    let missing = source
        .call("nope", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(missing.reason, Reason::NotFound { .. }),
        "{missing}"
    );
    // A failure does not stop the source: it runs tools again after one.
    assert!(
        source
            .call(
                "echo",
                object(json!({"text": "again"})),
                &toolkit_core::CallContext::new()
            )
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn mcp_rmcp_stateless_sends_marked_parameters_as_headers() {
    let server = serve(Peer::standard(), false, true).await;
    let source = http(&server.url);
    source.discover().await.unwrap();
    // rmcp refuses (-32020) a call whose Mcp-Param-* headers are missing or differ.
    let answer = source
        .call(
            "region",
            object(json!({"region": "Zürich", "count": 3})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer["arguments"]["region"], "Zürich");
}

#[tokio::test]
async fn mcp_rmcp_a_call_before_any_listing_learns_the_marks_from_the_refusal() {
    let peer = Peer::standard();
    let listings = peer.listings.clone();
    let server = serve(peer, false, false).await;
    let source = http(&server.url);
    let answer = source
        .call(
            "region",
            object(json!({"region": " eu-west "})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer["arguments"]["region"], " eu-west ");
    assert_eq!(
        listings.load(Ordering::SeqCst),
        1,
        "listed once after the -32020"
    );
}

#[tokio::test]
async fn mcp_rmcp_sessions_in_every_revision() {
    const ONLY: [&[ProtocolVersion]; 4] = [
        &[ProtocolVersion::V_2025_11_25],
        &[ProtocolVersion::V_2025_06_18],
        &[ProtocolVersion::V_2025_03_26],
        &[ProtocolVersion::V_2024_11_05],
    ];
    for versions in ONLY {
        let mut peer = Peer::standard();
        peer.versions = Some(versions);
        let server = serve(peer, true, false).await;
        let source = http(&server.url);
        let snapshot = source.snapshot().await.unwrap();
        assert_eq!(
            snapshot["protocolVersion"],
            versions[0].as_str(),
            "{snapshot}"
        );
        // Marks do not count in a session: the tool is listed as it is, and called without them.
        assert_eq!(source.discover().await.unwrap().len(), 5);
        let answer = source
            .call(
                "echo",
                object(json!({"text": "hi"})),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(
            answer,
            json!([{"type": "text", "text": "hi"}]),
            "{versions:?}"
        );
        let answer = source
            .call(
                "region",
                object(json!({"region": "x"})),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(answer["arguments"]["region"], "x");
        let failed = source
            .call(
                "failing",
                object(json!({})),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(failed.reason, Reason::CallFailed { .. }));
        source.close().await;
    }
}

#[tokio::test]
async fn mcp_rmcp_pages_of_one_tool() {
    let mut peer = Peer::standard();
    peer.page_size = 1;
    let listings = peer.listings.clone();
    let server = serve(peer, false, false).await;
    let definitions = http(&server.url).discover().await.unwrap();
    assert_eq!(definitions.len(), 5);
    assert_eq!(listings.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn mcp_rmcp_discovers_a_thousand_tools_in_pages_of_fifty() {
    let tools: Vec<Value> = (0..1000)
        .map(|i| json!({"name": format!("tool_{i:04}"), "inputSchema": {"type": "object"}}))
        .collect();
    let mut peer = Peer::new(tools);
    peer.page_size = 50;
    let listings = peer.listings.clone();
    let server = serve(peer, false, false).await;
    let definitions = http(&server.url).discover().await.unwrap();
    assert_eq!(definitions.len(), 1000);
    assert_eq!(definitions[999].name(), "tool_0999");
    assert_eq!(listings.load(Ordering::SeqCst), 20);
}

#[tokio::test]
async fn mcp_rmcp_two_hundred_concurrent_calls_each_get_their_own_answer() {
    for sessions in [false, true] {
        let server = serve(Peer::standard(), sessions, false).await;
        let source = Arc::new(http(&server.url));
        let calls = (0..200).map(|i| {
            let source = source.clone();
            async move {
                let text = format!("call {i}");
                let answer = source
                    .call(
                        "echo",
                        object(json!({"text": text})),
                        &toolkit_core::CallContext::new(),
                    )
                    .await
                    .unwrap();
                assert_eq!(answer[0]["text"], text);
            }
        });
        futures_util::future::join_all(calls).await;
    }
}

#[tokio::test]
async fn mcp_rmcp_a_dropped_call_is_seen_closed_by_the_server() {
    for sessions in [false, true] {
        let peer = Peer::standard();
        let dropped = peer.dropped.clone();
        let server = serve(peer, sessions, false).await;
        let source = http(&server.url);
        source.discover().await.unwrap();
        let context = toolkit_core::CallContext::new();
        let call = source.call("blocking", object(json!({})), &context);
        assert!(
            tokio::time::timeout(Duration::from_millis(300), call)
                .await
                .is_err()
        );
        let mut seen = false;
        for _ in 0..100 {
            if dropped.load(Ordering::SeqCst) == 1 {
                seen = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            seen,
            "the server went on with a dropped call (sessions: {sessions})"
        );
    }
}

#[tokio::test]
async fn mcp_rmcp_a_call_past_the_timeout_is_unavailable() {
    let server = serve(Peer::standard(), false, false).await;
    let mut options = quick();
    options.timeout = Duration::from_millis(200);
    let source =
        Mcp::http_with_options("peer", server.url.clone(), reqwest::Client::new(), options);
    let failed = source
        .call(
            "blocking",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    assert!(failed.is_retryable());
}

#[tokio::test]
async fn mcp_rmcp_a_new_server_behind_the_url_gets_a_new_session() {
    let peer = Peer::standard();
    let first = serve(peer.clone(), true, false).await;
    // No pooled connection may reach the old server once it is gone.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let source = Mcp::http_with_options("peer", first.url.clone(), client, quick());
    source
        .call(
            "echo",
            object(json!({"text": "one"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    let address = first.address;
    drop(first);
    let _second = super::rmcp_peer::serve_at(peer, true, false, address).await;
    // The new server knows nothing of the old session: it answers 404, and the source begins
    // another session and sends the call again.
    let answer = source
        .call(
            "echo",
            object(json!({"text": "two"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "two");
}

#[tokio::test]
async fn mcp_rmcp_source_is_assembled_and_read_by_a_model() {
    let server = serve(Peer::standard(), false, false).await;
    let source = Arc::new(http(&server.url));
    let definitions = source.discover().await.unwrap();
    let members = [Member::new(source, definitions)];
    let toolkit = Assembly::new()
        .toolkit(&members, |_, _| Decision::Allow)
        .unwrap();
    let answer = toolkit
        .call("peer__echo", json!({"text": "via toolkit"}))
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "via toolkit");
    let failure = toolkit.call("peer__failing", json!({})).await.unwrap_err();
    assert_eq!(failure.code, "CallFailedError");
    let refused = toolkit
        .call("peer__echo", json!({"txt": 1}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, "InvalidInputError");
}
