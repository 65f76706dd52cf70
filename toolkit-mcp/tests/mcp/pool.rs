//! An answer read from an event stream leaves its connection to the next request: the source
//! reads the stream to its end after the answer, so calls in a row share one connection (a
//! scripted stateless server on 127.0.0.1 that records each request's peer address).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::response::Response;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use toolkit_core::ToolSource;

use super::http;

type Peers = Arc<Mutex<Vec<SocketAddr>>>;

async fn handle(
    State(peers): State<Peers>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    body: Bytes,
) -> Response {
    peers.lock().unwrap().push(peer);
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let result = match request["method"].as_str() {
        Some("server/discover") => json!({
            "resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"
        }),
        Some("tools/list") => json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        _ => json!({"content": [{"type": "text", "text": "ok"}]}),
    };
    let event = format!(
        "event: message\ndata: {}\n\n",
        json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
    );
    // Chunked, as a streaming server sends it: the stream's end comes a little after the
    // answer's event.
    let end = futures_util::stream::once(async {
        tokio::time::sleep(Duration::from_millis(20)).await;
    })
    .filter_map(|()| async { None::<Result<Bytes, std::io::Error>> });
    let chunks =
        futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from(event))]).chain(end);
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(chunks))
        .unwrap()
}

#[tokio::test]
async fn mcp_calls_in_a_row_share_one_connection() {
    let peers: Peers = Arc::default();
    let router = axum::Router::new()
        .route("/mcp", axum::routing::post(handle))
        .with_state(Arc::clone(&peers));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url: reqwest::Url = format!("http://{}/mcp", listener.local_addr().unwrap())
        .parse()
        .unwrap();
    let server = tokio::spawn(async move {
        let _ = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await;
    });
    let source = http(&url);
    source.discover().await.unwrap();
    for _ in 0..5 {
        source
            .call(
                "t",
                serde_json::Map::new(),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        // Time for the stream's end to come (a closed connection would not be taken again).
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let peers = peers.lock().unwrap().clone();
    assert_eq!(peers.len(), 7, "discover, list, five calls");
    // The calls, each after the stream before it ended, all on one connection (a new one per
    // call when an answered stream is left unread).
    let connections: BTreeSet<_> = peers[2..].iter().collect();
    assert_eq!(connections.len(), 1, "{peers:?}");
    server.abort();
}
