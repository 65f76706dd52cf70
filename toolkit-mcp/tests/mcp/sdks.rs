//! Against the official SDKs' servers: Python `mcp==2.3.0` (`MCPServer`: the stateless revision,
//! sessions, stdio, a marked parameter) and the TypeScript `@modelcontextprotocol/sdk@1.32.2`
//! (stateless, answering JSON: sessions only, refusing 2026-07-28).

use serde_json::json;
use tokio::process::Command;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::{Mcp, StdioCommand};

use super::processes::{Listening, free_port, installed, listening, script};
use super::quick;
use crate::support::object;

fn python() -> std::path::PathBuf {
    installed("mcp-python/bin/python")
}

async fn python_http(mode: &str) -> Listening {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(script("python_peer.py"))
        .arg(mode)
        .arg(port.to_string());
    listening(command, port, "the Python MCP server").await
}

async fn python_tools(source: &Mcp, expected_version: &str) {
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], expected_version, "{snapshot}");
    assert_eq!(snapshot["server"]["name"], "python-peer");
    let definitions = source.discover().await.unwrap();
    let names: Vec<_> = definitions.iter().map(|d| d.name()).collect();
    assert_eq!(names, ["echo", "weather", "failing"]);
    let answer = source
        .call(
            "echo",
            object(json!({"text": "hi"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"result": "hi"}));
    // The marked parameter goes as a header too; the Python server refuses a call without it.
    let answer = source
        .call(
            "weather",
            object(json!({"city": "Zürich"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"city": "Zürich", "sky": "clear"}));
    let failed = source
        .call(
            "failing",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::CallFailed { .. }),
        "{failed}"
    );
    assert!(
        failed
            .model_message()
            .contains("the tool failed on purpose"),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_python_stateless() {
    let server = python_http("stateless").await;
    let source = Mcp::http_with_options(
        "python",
        server.url("/mcp"),
        reqwest::Client::new(),
        quick(),
    );
    python_tools(&source, "2026-07-28").await;
}

#[tokio::test]
async fn mcp_python_a_call_before_any_listing_learns_the_marks() {
    let server = python_http("stateless").await;
    let source = Mcp::http_with_options(
        "python",
        server.url("/mcp"),
        reqwest::Client::new(),
        quick(),
    );
    let answer = source
        .call(
            "weather",
            object(json!({"city": " Zürich "})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer["city"], " Zürich ");
}

#[tokio::test]
async fn mcp_python_sessions() {
    let server = python_http("sessions").await;
    let source = Mcp::http_with_options(
        "python",
        server.url("/mcp"),
        reqwest::Client::new(),
        quick(),
    );
    // It answers server/discover (with 2026-07-28 only), so it is spoken to statelessly, as the
    // server prefers; sessions are what a client of an older revision gets.
    python_tools(&source, "2026-07-28").await;
    source.close().await;
}

#[tokio::test]
async fn mcp_python_stdio() {
    let command = StdioCommand::new(python())
        .arg(script("python_peer.py"))
        .arg("stdio");
    let source = Mcp::stdio_with_options("python", command, quick());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2026-07-28");
    let answer = source
        .call(
            "echo",
            object(json!({"text": "over stdio"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"result": "over stdio"}));
    // On stdio the marks do not count: the tool is called with its input alone.
    let answer = source
        .call(
            "weather",
            object(json!({"city": "Oslo"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer["city"], "Oslo");
    source.close().await;
}

#[tokio::test]
async fn mcp_typescript_stateless_json() {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .env("NODE_PATH", installed("mcp-npm/node_modules"))
        .arg(script("ts_peer.cjs"))
        .arg(port.to_string());
    let server = listening(command, port, "the TypeScript MCP server").await;
    let source = Mcp::http_with_options("ts", server.url("/mcp"), reqwest::Client::new(), quick());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-11-25");
    assert_eq!(snapshot["server"]["name"], "ts-peer");
    let answer = source
        .call(
            "echo",
            object(json!({"text": "hi"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!([{"type": "text", "text": "hi"}]));
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
}
