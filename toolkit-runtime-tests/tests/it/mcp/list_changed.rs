//! A server of the session revisions over Streamable HTTP that says its tools changed, on the
//! session's standalone stream, wakes `Mcp::tools_changed` (TypeScript SDK upstream,
//! `serve/content_peer.cjs`).

use std::time::Duration;

use serde_json::json;
use toolkit_runtime::ToolSource;
use toolkit_runtime::mcp::Mcp;

use super::quick;
use crate::serve::pass_through::upstream;
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
        .call("test_tools_changed", object(json!({})))
        .await
        .unwrap();
    let woke = tokio::time::timeout(Duration::from_secs(10), heard.changed())
        .await
        .expect("the server's notifications/tools/list_changed was heard");
    assert!(woke);
    source.close().await;
}
