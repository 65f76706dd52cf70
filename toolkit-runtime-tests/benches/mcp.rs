//! The MCP source's speed: a `tools/call` round trip against rmcp's server over Streamable HTTP
//! on loopback and over stdio (our source beside rmcp's own client, in the same run), and the
//! discovery of 1,000 tools in pages of 50.
//!
//! Run with `cargo bench -p toolkit-runtime-tests --features mcp-test-peer --bench mcp`.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use toolkit_runtime::ToolSource;
use toolkit_runtime::mcp::{Mcp, StdioCommand};

#[path = "../../toolkit-mcp/tests/mcp/peer_handler.rs"]
#[allow(dead_code)]
mod peer_handler;

#[path = "../../toolkit-mcp/tests/mcp/rmcp_peer.rs"]
#[allow(dead_code)]
mod rmcp_peer;

fn arguments() -> serde_json::Map<String, Value> {
    json!({"text": "hello"}).as_object().cloned().unwrap()
}

fn round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(rmcp_peer::serve(rmcp_peer::Peer::standard(), false, true));
    let ours = Mcp::http("bench", server.url.clone(), reqwest::Client::new());
    runtime.block_on(ours.discover()).unwrap();
    // rmcp's transport spawns its worker when made: make it inside the runtime.
    let url = server.url.to_string();
    let theirs = runtime
        .block_on(async { ().serve(StreamableHttpClientTransport::from_uri(url)).await })
        .unwrap();

    let mut group = c.benchmark_group("mcp_call_round_trip_http");
    group.bench_function("toolkit", |b| {
        b.iter(|| {
            let answer = runtime
                .block_on(ours.call("echo", arguments(), &toolkit_runtime::CallContext::new()))
                .unwrap();
            black_box(answer)
        });
    });
    group.bench_function("rmcp_client", |b| {
        b.iter(|| {
            let request = CallToolRequestParams::new("echo").with_arguments(arguments());
            let answer = runtime.block_on(theirs.call_tool(request)).unwrap();
            black_box(answer)
        });
    });
    group.finish();
    runtime.block_on(async move {
        let _ = theirs.cancel().await;
    });
}

fn round_trip_stdio(c: &mut Criterion) {
    let peer = env!("CARGO_BIN_EXE_rmcp-stdio-peer");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ours = Mcp::stdio("bench", StdioCommand::new(peer));
    runtime.block_on(ours.discover()).unwrap();
    let theirs = runtime
        .block_on(async {
            let command = tokio::process::Command::new(peer);
            ().serve(TokioChildProcess::new(command).unwrap()).await
        })
        .unwrap();
    let mut group = c.benchmark_group("mcp_call_round_trip_stdio");
    group.bench_function("toolkit", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(ours.call("echo", arguments(), &toolkit_runtime::CallContext::new()))
                    .unwrap(),
            )
        });
    });
    group.bench_function("rmcp_client", |b| {
        b.iter(|| {
            let request = CallToolRequestParams::new("echo").with_arguments(arguments());
            black_box(runtime.block_on(theirs.call_tool(request)).unwrap())
        });
    });
    group.finish();
    runtime.block_on(async move {
        ours.close().await;
        let _ = theirs.cancel().await;
    });
}

fn discovery(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tools: Vec<Value> = (0..1000)
        .map(|i| {
            json!({
                "name": format!("tool_{i:04}"),
                "description": "A tool of the benchmark, with a schema of a few properties.",
                "inputSchema": {"type": "object", "properties": {
                    "id": {"type": "string"}, "limit": {"type": "integer"}, "flag": {"type": "boolean"}
                }, "required": ["id"]},
                "annotations": {"readOnlyHint": true}
            })
        })
        .collect();
    let mut peer = rmcp_peer::Peer::new(tools);
    peer.page_size = 50;
    let server = runtime.block_on(rmcp_peer::serve(peer, false, true));
    let source = Mcp::http("bench", server.url.clone(), reqwest::Client::new());
    let mut group = c.benchmark_group("mcp_discover");
    group.sample_size(20);
    group.bench_function("1000_tools_pages_of_50", |b| {
        b.iter(|| {
            let definitions = runtime.block_on(source.discover()).unwrap();
            assert_eq!(definitions.len(), 1000);
            black_box(definitions)
        });
    });
    group.finish();
}

criterion_group!(benches, round_trip, round_trip_stdio, discovery);
criterion_main!(benches);
