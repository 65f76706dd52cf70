//! The server over Streamable HTTP on 127.0.0.1: rmcp's client and ours in both eras, live
//! replacement heard by a session client, two servers at once, the caps and the shutdown.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, NotificationContext};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolkit_core::{FnSource, FnTool, Reason, ToolSource, Toolkit, ToolkitOptions};
use toolkit_mcp::Mcp;
use toolkit_serve::{HttpOptions, McpServer};

use super::demo::{self, Nothing};
use super::serving::Serving;
use crate::support::object;

fn arguments(value: Value) -> serde_json::Map<String, Value> {
    object(value)
}

#[tokio::test]
async fn serve_http_rmcp_client_in_a_session_and_statelessly() {
    let serving = Serving::start(McpServer::new(demo::toolkit()).name("demo")).await;
    // A session: initialize, then requests with its id.
    let session = ()
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();
    let info = session.peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert_eq!(info.server_info.as_ref().unwrap().name, "demo");
    let tools = session.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 6);
    let wipe = tools.iter().find(|tool| tool.name == "wipe").unwrap();
    let hints = wipe.annotations.as_ref().unwrap();
    assert_eq!(hints.destructive_hint, Some(true));
    assert_eq!(hints.read_only_hint, Some(false));
    let added = session
        .call_tool(
            CallToolRequestParams::new("add").with_arguments(arguments(json!({"a": 2, "b": 3}))),
        )
        .await
        .unwrap();
    let added = serde_json::to_value(added).unwrap();
    assert_eq!(added["structuredContent"], json!({"sum": 5.0}));
    let refused = session
        .call_tool(CallToolRequestParams::new("add").with_arguments(arguments(json!({"a": 2}))))
        .await
        .unwrap();
    let refused = serde_json::to_value(refused).unwrap();
    assert_eq!(refused["isError"], true);
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("missing required property \"b\"")
    );
    session.cancel().await.unwrap();

    // Stateless: server/discover, then self-contained requests.
    let stateless = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(serving.url.to_string()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let tools = stateless.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 6);
    let echoed = stateless
        .call_tool(
            CallToolRequestParams::new("echo").with_arguments(arguments(json!({"text": "hi"}))),
        )
        .await
        .unwrap();
    let echoed = serde_json::to_value(echoed).unwrap();
    assert_eq!(echoed["structuredContent"], "hi");
    stateless.cancel().await.unwrap();
    serving.stop().await.unwrap();
}

/// A client that forwards each `tools/list_changed` it hears.
#[derive(Clone)]
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn serve_http_replace_is_heard_by_a_session_client() {
    let server = McpServer::new(demo::toolkit());
    let handle = server.toolkit_handle();
    let serving = Serving::start(server).await;
    let (heard, mut hearing) = mpsc::unbounded_channel();
    let client = Listener(heard)
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);
    // The session's notifications come on its GET stream, which the client opens after the
    // handshake: give it a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle.replace(Toolkit::default());
    tokio::time::timeout(Duration::from_secs(10), hearing.recv())
        .await
        .expect("tools/list_changed heard in time")
        .unwrap();
    assert!(client.list_all_tools().await.unwrap().is_empty());
    client.cancel().await.unwrap();
    serving.stop().await.unwrap();
}

#[tokio::test]
async fn serve_http_our_client_discovers_and_calls_in_both_eras() {
    // Every revision: our client speaks 2026-07-28.
    let serving = Serving::start(McpServer::new(demo::toolkit()).name("demo")).await;
    let source = Mcp::http("ours", serving.url.clone(), reqwest::Client::new());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2026-07-28");
    assert_eq!(snapshot["server"]["name"], "demo");
    let definitions = source.discover().await.unwrap();
    assert_eq!(definitions.len(), 6);
    let echo = &definitions[0];
    assert_eq!(echo.annotations.read_only, Some(true));
    assert_eq!(echo.annotations.title.as_deref(), Some("Echo"));
    let answer = source
        .call(
            "echo",
            object(json!({"text": "hi"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!("hi"));
    let failed = source
        .call(
            "find_thing",
            object(json!({"id": "x"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        failed.reason,
        Reason::call_failed("No thing \"x\". List the ids first. Try list_things.")
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

    // Session revisions only: our client falls back to initialize.
    let legacy = Serving::start(McpServer::new(demo::toolkit()).protocol_versions([
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ]))
    .await;
    let source = Mcp::http("ours", legacy.url.clone(), reqwest::Client::new());
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2025-11-25");
    let added = source
        .call(
            "add",
            object(json!({"a": 1, "b": 1})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(added, json!({"sum": 2.0}));
    source.close().await;
    serving.stop().await.unwrap();
    legacy.stop().await.unwrap();
}

#[tokio::test]
async fn serve_http_two_servers_at_once_share_nothing() {
    let other = FnSource::builder("other")
        .tool(FnTool::new("other_tool", |_: Nothing| async {
            Ok("from the other")
        }))
        .build()
        .unwrap();
    let definitions = other.definitions();
    let other =
        Toolkit::from_source(Arc::new(other), definitions, &ToolkitOptions::default()).unwrap();
    let first = Serving::start(McpServer::new(demo::toolkit()).name("first")).await;
    let second = Serving::start(McpServer::new(other).name("second")).await;
    let one = Mcp::http("one", first.url.clone(), reqwest::Client::new());
    let two = Mcp::http("two", second.url.clone(), reqwest::Client::new());
    let (a, b) = tokio::join!(one.discover(), two.discover());
    assert_eq!(a.unwrap().len(), 6);
    let b = b.unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].name(), "other_tool");
    let answer = two
        .call(
            "other_tool",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!("from the other"));
    assert!(
        one.call(
            "other_tool",
            object(json!({})),
            &toolkit_core::CallContext::new()
        )
        .await
        .is_err()
    );
    first.stop().await.unwrap();
    second.stop().await.unwrap();
}

fn modern_headers(request: reqwest::RequestBuilder, method: &str) -> reqwest::RequestBuilder {
    request
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
}

fn modern_body(method: &str, params: Value) -> Value {
    let mut params = object(params);
    params.insert(
        "_meta".into(),
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }),
    );
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

#[tokio::test]
async fn serve_http_a_body_over_the_cap_is_refused() {
    let mut options = HttpOptions::default();
    options.max_request_body_bytes = 2_048;
    let serving = Serving::start(McpServer::new(demo::toolkit()).http_options(options)).await;
    let http = reqwest::Client::new();
    let small = modern_headers(http.post(serving.url.clone()), "tools/list")
        .body(modern_body("tools/list", json!({})).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(small.status(), 200);
    let big = modern_body(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x".repeat(4_096)}}),
    );
    let refused = modern_headers(http.post(serving.url.clone()), "tools/call")
        .header("mcp-name", "echo")
        .body(big.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 413);
    serving.stop().await.unwrap();
}

#[tokio::test]
async fn serve_http_headers_that_differ_from_the_body_are_refused_with_32020() {
    let serving = Serving::start(McpServer::new(demo::toolkit())).await;
    let http = reqwest::Client::new();
    let body = modern_body(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let refused = modern_headers(http.post(serving.url.clone()), "tools/call")
        .header("mcp-name", "add")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let text = refused.text().await.unwrap();
    assert!(text.contains("-32020"), "{text}");
    // A Host that is no loopback name is refused (DNS rebinding).
    let foreign = modern_headers(http.post(serving.url.clone()), "tools/list")
        .header("host", "attacker.example")
        .body(modern_body("tools/list", json!({})).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    serving.stop().await.unwrap();
}

#[tokio::test]
async fn serve_http_shuts_down_when_asked() {
    let serving = Serving::start(McpServer::new(demo::toolkit())).await;
    let url = serving.url.clone();
    let source = Mcp::http("ours", url.clone(), reqwest::Client::new());
    assert_eq!(source.discover().await.unwrap().len(), 6);
    source.close().await;
    serving.stop().await.unwrap();
    let after = reqwest::Client::new().post(url).body("{}").send().await;
    assert!(after.is_err(), "{after:?}");
}

/// Every connection the server accepts has `TCP_NODELAY`, read off the accepted socket itself:
/// without it (axum leaves it off) a client that keeps its connection waits about 40 ms for each
/// answer written in pieces (the client's delayed acknowledgement).
#[cfg(all(feature = "testing", target_os = "linux"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_accepts_every_connection_with_tcp_nodelay() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let serving = Serving::start(McpServer::new(demo::toolkit())).await;
    let server = serving.url.socket_addrs(|| None).unwrap()[0];
    for _ in 0..2 {
        let mut client = tokio::net::TcpStream::connect(server).await.unwrap();
        // An answer read back means the server has accepted the connection.
        client
            .write_all(b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        let mut head = [0; 8];
        client.read_exact(&mut head).await.unwrap();
        assert_eq!(&head, b"HTTP/1.1");
        let accepted = toolkit_serve::testing::tcp_nodelay(
            std::process::id(),
            server,
            client.local_addr().unwrap(),
        );
        assert!(
            accepted.unwrap(),
            "TCP_NODELAY is off on the accepted socket"
        );
        // The client's own end, found the other way round, is left as the system made it.
        let own = toolkit_serve::testing::tcp_nodelay(
            std::process::id(),
            client.local_addr().unwrap(),
            server,
        );
        assert!(!own.unwrap());
    }
    serving.stop().await.unwrap();
}
