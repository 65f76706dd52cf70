//! Our served toolkit driven by real clients: rmcp's (over stdio; HTTP is in `http`), the
//! TypeScript SDK's and the Python SDK's (over stdio and Streamable HTTP), and our own MCP
//! source over stdio in both eras.

use std::ffi::OsStr;
use std::path::PathBuf;

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::process::Command;
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::{Mcp, StdioCommand};
use toolkit_serve::McpServer;

use super::demo;
use super::serving::Serving;
use crate::fixture;
use crate::processes::installed;
use crate::support::object;

fn script(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/serve")).join(name)
}

#[tokio::test]
async fn serve_interop_rmcp_client_over_stdio_in_both_eras() {
    let session = ().serve(TokioChildProcess::new(Command::new(fixture())).unwrap()).await.unwrap();
    assert_eq!(
        session.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2025_11_25
    );
    assert_eq!(session.list_all_tools().await.unwrap().len(), 6);
    let echoed = session
        .call_tool(CallToolRequestParams::new("echo").with_arguments(object(json!({"text": "hi"}))))
        .await
        .unwrap();
    let echoed = serde_json::to_value(echoed).unwrap();
    assert_eq!(echoed["content"][0]["text"], "hi");
    session.cancel().await.unwrap();

    let stateless = ()
        .serve_with_lifecycle(
            TokioChildProcess::new(Command::new(fixture())).unwrap(),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    assert_eq!(stateless.list_all_tools().await.unwrap().len(), 6);
    let added = stateless
        .call_tool(
            CallToolRequestParams::new("add").with_arguments(object(json!({"a": 1, "b": 2}))),
        )
        .await
        .unwrap();
    let added = serde_json::to_value(added).unwrap();
    assert_eq!(added["structuredContent"], json!({"sum": 3.0}));
    stateless.cancel().await.unwrap();
}

#[tokio::test]
async fn serve_interop_our_client_over_stdio_in_both_eras() {
    let source = Mcp::stdio("ours", StdioCommand::new(fixture()));
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2026-07-28");
    assert_eq!(snapshot["server"]["name"], "toolkit-serve-fixture");
    assert_eq!(source.discover().await.unwrap().len(), 6);
    let answer = source
        .call(
            "echo",
            object(json!({"text": "hi"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!("hi"));
    let exploded = source
        .call(
            "explode",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(exploded.reason, Reason::CallFailed { .. }),
        "{exploded}"
    );
    let answer = source
        .call(
            "add",
            object(json!({"a": 2, "b": 2})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"sum": 4.0}));
    source.close().await;

    let legacy = Mcp::stdio(
        "ours",
        StdioCommand::new(fixture()).env("FIXTURE_VERSIONS", "2025-11-25,2025-06-18"),
    );
    let snapshot = legacy.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-11-25");
    let answer = legacy
        .call(
            "add",
            object(json!({"a": 2, "b": 3})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"sum": 5.0}));
    legacy.close().await;
}

/// What the SDK clients read is the same whoever reads it.
fn assert_read_the_demo(out: &Value) {
    let tools = out["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 6, "{out}");
    let wipe = tools.iter().find(|tool| tool["name"] == "wipe").unwrap();
    assert_eq!(wipe["annotations"]["destructiveHint"], true, "{wipe}");
    assert_eq!(wipe["annotations"]["readOnlyHint"], false, "{wipe}");
    assert_eq!(out["echo"]["content"][0]["text"], "hi", "{out}");
    assert_eq!(
        out["add"]["structuredContent"]["sum"].as_f64(),
        Some(3.0),
        "{out}"
    );
    assert_eq!(out["bad"]["isError"], true, "{out}");
    let report = out["bad"]["content"][0]["text"].as_str().unwrap();
    assert!(
        report.contains("missing required property \"b\""),
        "{report}"
    );
    assert_eq!(out["failed"]["isError"], true, "{out}");
    assert_eq!(
        out["failed"]["content"][0]["text"],
        "No thing \"x\". List the ids first. Try list_things."
    );
    let unknown = out["unknown"].to_string();
    assert!(unknown.contains("Unknown tool: nope"), "{unknown}");
}

async fn run_client(mut command: Command) -> Value {
    let output = command.output().await.unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|_| panic!("not JSON: {stdout}"))
}

fn typescript(kind: &str, target: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new("node");
    command
        .env("NODE_PATH", installed("mcp-npm/node_modules"))
        .arg(script("ts_client.cjs"))
        .arg(kind)
        .arg(target);
    command
}

#[tokio::test]
async fn serve_interop_typescript_sdk_client_over_stdio_and_http() {
    let out = run_client(typescript("stdio", fixture())).await;
    assert_eq!(out["server"]["name"], "toolkit-serve-fixture");
    assert_read_the_demo(&out);

    let serving = Serving::start(McpServer::new(demo::toolkit()).name("served")).await;
    let out = run_client(typescript("http", serving.url.as_str())).await;
    assert_eq!(out["server"]["name"], "served");
    assert_read_the_demo(&out);
    serving.stop().await.unwrap();
}

fn python(kind: &str, target: impl AsRef<OsStr>, mode: &str) -> Command {
    let mut command = Command::new(installed("mcp-python/bin/python"));
    command
        .arg(script("python_client.py"))
        .arg(kind)
        .arg(target)
        .arg(mode);
    command
}

#[tokio::test]
async fn serve_interop_python_sdk_client_over_stdio_and_http() {
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let out = run_client(python("stdio", fixture(), mode)).await;
        assert_eq!(out["protocolVersion"], version, "{out}");
        assert_read_the_demo(&out);
    }
    let serving = Serving::start(McpServer::new(demo::toolkit()).name("served")).await;
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let out = run_client(python("http", serving.url.as_str(), mode)).await;
        assert_eq!(out["protocolVersion"], version, "{out}");
        assert_read_the_demo(&out);
    }
    serving.stop().await.unwrap();
}
