//! Against `@modelcontextprotocol/server-everything` (npm, the TypeScript SDK's reference
//! server): sessions over Streamable HTTP, the old HTTP+SSE transport, and stdio.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use tokio::process::Command;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::{Mcp, StdioCommand};

use super::processes::{Listening, free_port, installed, listening, script};
use super::quick;
use crate::support::object;

/// `dist/index.js` of the installed server.
pub fn everything() -> PathBuf {
    installed("mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

async fn start(transport: &str, port: u16) -> Listening {
    let mut command = Command::new("node");
    command
        .arg("-r")
        .arg(script("loopback.cjs"))
        .arg(everything())
        .arg(transport)
        .env("PORT", port.to_string());
    listening(command, port, "server-everything").await
}

async fn lists_and_calls(source: &Mcp) {
    let definitions = source.discover().await.unwrap();
    let echo = definitions
        .iter()
        .find(|d| d.name() == "echo")
        .expect("an echo tool");
    assert_eq!(echo.annotations.read_only, Some(true));
    assert_eq!(echo.title.as_deref(), Some("Echo Tool"));
    let answer = source
        .call(
            "echo",
            object(json!({"message": "hi"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!([{"type": "text", "text": "Echo: hi"}]));
    let sum = source
        .call(
            "get-sum",
            object(json!({"a": 2, "b": 3})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert!(sum.to_string().contains('5'), "{sum}");
    let bad = source
        .call(
            "echo",
            object(json!({"message": 5})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            bad.reason,
            Reason::CallFailed { .. } | Reason::InvalidInput { .. }
        ),
        "{bad}"
    );
}

#[tokio::test]
async fn mcp_everything_streamable_http_session() {
    let port = free_port();
    let server = start("streamableHttp", port).await;
    let url = server.url("/mcp");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let source = Mcp::http_with_options("everything", url, client, quick());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-11-25");
    assert_eq!(snapshot["server"]["name"], "mcp-servers/everything");
    lists_and_calls(&source).await;

    // A new server on the same port knows nothing of the session: it answers 400 "No valid
    // session ID provided", and the source begins another session.
    server.stop().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _again = start("streamableHttp", port).await;
    let answer = source
        .call(
            "echo",
            object(json!({"message": "again"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "Echo: again");
    source.close().await;
}

#[tokio::test]
async fn mcp_everything_old_http_sse_transport() {
    let server = start("sse", free_port()).await;
    let url = server.url("/sse");
    let source = Mcp::http_with_options("everything", url, reqwest::Client::new(), quick());
    lists_and_calls(&source).await;
    let snapshot = source.snapshot().await.unwrap();
    assert!(snapshot["tools"].as_array().unwrap().len() > 5);
}

#[tokio::test]
async fn mcp_everything_stdio() {
    let command = StdioCommand::new("node").arg(everything()).arg("stdio");
    let source = Mcp::stdio_with_options("everything", command, quick());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-11-25");
    lists_and_calls(&source).await;
    source.close().await;
}
