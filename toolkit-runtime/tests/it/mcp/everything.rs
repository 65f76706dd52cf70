//! Against `@modelcontextprotocol/server-everything` (npm, the TypeScript SDK's reference
//! server): sessions over Streamable HTTP, the old HTTP+SSE transport, and stdio.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::process::{Child, Command};
use toolkit_runtime::mcp::{Mcp, StdioCommand};
use toolkit_runtime::{Reason, ToolSource};

use super::quick;
use crate::support::object;

/// `dist/index.js` of the installed server, or a loud failure saying how to install it.
pub fn everything() -> PathBuf {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/peers/mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    ));
    assert!(
        path.exists(),
        "server-everything is not installed at {}: run scripts/install-test-peers",
        path.display()
    );
    path
}

fn loopback() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/mcp/loopback.cjs")
}

/// A server-everything process on 127.0.0.1, killed by its own handle on drop.
struct Running {
    child: Child,
    port: u16,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

async fn start(transport: &str, port: u16) -> Running {
    let child = Command::new("node")
        .arg("-r")
        .arg(loopback())
        .arg(everything())
        .arg(transport)
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Running { child, port };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server-everything ({transport}) did not listen on port {port}");
}

async fn lists_and_calls(source: &Mcp) {
    let definitions = source.discover().await.unwrap();
    let echo = definitions
        .iter()
        .find(|d| d.name() == "echo")
        .expect("an echo tool");
    assert_eq!(echo.annotations.read_only, Some(true));
    assert_eq!(echo.annotations.title.as_deref(), Some("Echo Tool"));
    let answer = source
        .call("echo", object(json!({"message": "hi"})))
        .await
        .unwrap();
    assert_eq!(answer, json!([{"type": "text", "text": "Echo: hi"}]));
    let sum = source
        .call("get-sum", object(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert!(sum.to_string().contains('5'), "{sum}");
    let bad = source
        .call("echo", object(json!({"message": 5})))
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
    let url: reqwest::Url = format!("http://127.0.0.1:{}/mcp", server.port)
        .parse()
        .unwrap();
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
    drop(server);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _again = start("streamableHttp", port).await;
    let answer = source
        .call("echo", object(json!({"message": "again"})))
        .await
        .unwrap();
    assert_eq!(answer[0]["text"], "Echo: again");
    source.close().await;
}

#[tokio::test]
async fn mcp_everything_old_http_sse_transport() {
    let server = start("sse", free_port()).await;
    let url: reqwest::Url = format!("http://127.0.0.1:{}/sse", server.port)
        .parse()
        .unwrap();
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
