//! A server over Streamable HTTP that says its tools changed wakes `Mcp::tools_changed`: one of
//! the session revisions on the session's standalone stream (TypeScript SDK upstream,
//! toolkit-serve's `tests/serve/content_peer.cjs`), one of the stateless revision on `subscriptions/listen` (the
//! project's own server).

use std::time::Duration;

use serde_json::json;
use toolkit_core::ToolSource;
use toolkit_mcp::Mcp;
use toolkit_serve::McpServer;

use super::quick;
use crate::serving::{Serving, upstream};
use crate::support::object;

#[tokio::test]
async fn mcp_streamable_http_hears_tools_list_changed() {
    let upstream = upstream().await;
    let source =
        Mcp::http_with_options("up", upstream.url("/mcp"), reqwest::Client::new(), quick());
    let mut heard = source.tools_changed().expect("heard over Streamable HTTP");
    source.discover().await.unwrap();
    // Nothing said yet: no wake-up.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), heard.changed())
            .await
            .is_err()
    );
    source
        .call(
            "test_tools_changed",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    let woke = tokio::time::timeout(Duration::from_secs(10), heard.changed())
        .await
        .expect("the server's notifications/tools/list_changed was heard");
    assert!(woke);
    source.close().await;
}

#[tokio::test]
async fn mcp_stateless_subscription_hears_tools_list_changed() {
    // The project's own server (rmcp's, behind `McpServer`) speaks 2026-07-28, where a change of
    // tools is said on `subscriptions/listen`.
    let server = McpServer::new(crate::demo::toolkit());
    let served = server.toolkit_handle();
    let serving = Serving::start(server).await;
    let source = Mcp::http_with_options("up", serving.url.clone(), reqwest::Client::new(), quick());
    let mut heard = source.tools_changed().expect("heard over Streamable HTTP");
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2026-07-28");
    let before = source.discover().await.unwrap().len();
    // Nothing said yet: no wake-up.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), heard.changed())
            .await
            .is_err()
    );
    let fewer = crate::demo::toolkit().restrict(|tool| tool.name() != "echo");
    served.replace(fewer);
    let woke = tokio::time::timeout(Duration::from_secs(10), heard.changed())
        .await
        .expect("the subscription's notifications/tools/list_changed was heard");
    assert!(woke);
    assert_eq!(source.discover().await.unwrap().len(), before - 1);
    source.close().await;
    serving.stop().await.unwrap();
}
