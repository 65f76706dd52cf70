//! Against rmcp's server over stdio (`rmcp-stdio-peer`, a binary of toolkit-runtime-tests): the
//! stateless revision, and each session revision in turn.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::{Mcp, StdioCommand};

use super::processes::rmcp_stdio_peer;
use super::quick;
use crate::support::object;

fn rmcp(version: Option<&str>) -> Mcp {
    let mut command = StdioCommand::new(rmcp_stdio_peer());
    if let Some(version) = version {
        command = command.arg(version);
    }
    Mcp::stdio_with_options("rmcp", command, quick())
}

#[tokio::test]
async fn mcp_rmcp_stdio_in_every_revision() {
    for version in [
        None,
        Some("2026-07-28"),
        Some("2025-11-25"),
        Some("2025-06-18"),
        Some("2025-03-26"),
        Some("2024-11-05"),
    ] {
        let source = rmcp(version);
        let snapshot = source.snapshot().await.unwrap();
        assert_eq!(
            snapshot["protocolVersion"],
            version.unwrap_or("2026-07-28"),
            "{snapshot}"
        );
        assert_eq!(snapshot["server"]["name"], "rmcp-peer");
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
            "{version:?}"
        );
        let failed = source
            .call(
                "failing",
                object(json!({})),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(
            failed.reason,
            Reason::call_failed("the tool failed on purpose")
        );
        let missing = source
            .call("nope", object(json!({})), &toolkit_core::CallContext::new())
            .await
            .unwrap_err();
        assert!(
            matches!(missing.reason, Reason::NotFound { .. }),
            "{missing}"
        );
        source.close().await;
    }
}

#[tokio::test]
async fn mcp_rmcp_stdio_a_dropped_call_is_cancelled_and_others_go_on() {
    for version in ["2026-07-28", "2025-11-25"] {
        let source = Arc::new(rmcp(Some(version)));
        source.discover().await.unwrap();
        let context = toolkit_core::CallContext::new();
        let blocked = source.call("blocking", object(json!({})), &context);
        assert!(
            tokio::time::timeout(Duration::from_millis(200), blocked)
                .await
                .is_err()
        );
        // notifications/cancelled went; the server is still there for the next call.
        let answer = source
            .call(
                "echo",
                object(json!({"text": "after"})),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        assert_eq!(answer[0]["text"], "after");
        let calls = (0..100).map(|i| {
            let source = source.clone();
            async move {
                let text = format!("{i}");
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
        source.close().await;
    }
}
