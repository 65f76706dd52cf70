//! The gateway as a team runs it, in release builds of `toolkit-gateway`:
//!
//! - served calls per second through HAProxy (`scripts/install-test-peers` installs it) with 1, 2
//!   and 3 replicas: 16 clients of the stateless revision, each call a `tools/call` through
//!   HAProxy, the gateway, an OpenAPI source and an echo API on 127.0.0.1;
//! - `tools/list` of a gateway serving 10,000 catalog tools, and the gateway's resident memory
//!   (VmRSS, printed) once started and once it has listed them.
//!
//! `cargo bench -p toolkit-gateway --bench gateway`
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Query;
use axum::routing::get;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tokio::runtime::Runtime;
use toolkit_core::ToolSource;
use toolkit_mcp::Mcp;

/// Clients calling at once.
const CLIENTS: usize = 16;
/// Calls each client makes in one iteration.
const CALLS: usize = 16;

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An OpenAPI document of `count` operations `op{i}` (GET /echo?n=), the first one `echo`.
fn document(count: usize) -> String {
    let mut paths = serde_json::Map::new();
    for i in 0..count {
        let name = if i == 0 {
            "echo".to_owned()
        } else {
            format!("op{i}")
        };
        paths.insert(
            format!("/{name}"),
            json!({"get": {"operationId": name,
                "description": format!("Operation {i} of the benchmark's document: echoes n."),
                "parameters": [{"name": "n", "in": "query", "required": true, "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}}}}),
        );
    }
    json!({"openapi": "3.1.0", "info": {"title": "Echo", "version": "1"}, "paths": paths})
        .to_string()
}

/// The echo API on 127.0.0.1: answers every path with `n`.
fn echo_api(runtime: &Runtime) -> String {
    runtime.block_on(async {
        let app = axum::Router::new().fallback(get(
            |Query(query): Query<BTreeMap<String, i64>>| async move {
                axum::Json(json!({"n": query.get("n")}))
            },
        ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
        base
    })
}

fn wait_ready(runtime: &Runtime, url: &str) {
    runtime.block_on(async {
        for _ in 0..600 {
            if let Ok(response) = reqwest::get(url).await
                && response.status() == 200
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{url} did not become ready");
    });
}

/// Starts a gateway replica of the document in `dir` on `port`.
fn replica(runtime: &Runtime, dir: &Path, name: &str, port: u16, api: &str) -> Killed {
    let config = format!(
        "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\
         [catalog]\nfile = \"{name}-catalog.json\"\nrefresh_seconds = 0\n\
         [policy]\ndefault = \"allow\"\n\
         [[sources]]\nname = \"api\"\nopenapi = \"api.json\"\nbase_url = \"{api}\"\n"
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(&path)
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = Killed(child);
    wait_ready(runtime, &format!("http://127.0.0.1:{port}/readyz"));
    child
}

fn haproxy() -> PathBuf {
    [
        "/usr/sbin/haproxy",
        "/usr/bin/haproxy",
        "/usr/local/sbin/haproxy",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|path| path.is_file())
    .unwrap_or_else(|| panic!("haproxy is not installed: run scripts/install-test-peers"))
}

/// HAProxy balancing `ports` round robin on 127.0.0.1:`front` (the stick table of
/// `docs/serving.md` is left out: stateless clients never use it).
fn balancer(runtime: &Runtime, dir: &Path, front: u16, ports: &[u16]) -> Killed {
    let mut config = format!(
        "global\n    maxconn 4096\n    nbthread 1\ndefaults\n    mode http\n    timeout connect 2s\n    \
         timeout client 60s\n    timeout server 60s\nfrontend mcp\n    bind 127.0.0.1:{front}\n    \
         default_backend gateways\nbackend gateways\n    balance roundrobin\n"
    );
    for (i, port) in ports.iter().enumerate() {
        config.push_str(&format!("    server r{i} 127.0.0.1:{port}\n"));
    }
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, config).unwrap();
    let child = Command::new(haproxy())
        .arg("-db")
        .arg("-f")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = Killed(child);
    wait_ready(runtime, &format!("http://127.0.0.1:{front}/healthz"));
    child
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-bench-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn through_haproxy(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let api = echo_api(&runtime);
    let dir = scratch("replicas");
    std::fs::write(dir.join("api.json"), document(1)).unwrap();
    let mut group = c.benchmark_group("calls through HAProxy");
    group.throughput(Throughput::Elements((CLIENTS * CALLS) as u64));
    group.sample_size(20);
    for replicas in 1..=3 {
        let ports: Vec<u16> = (0..replicas).map(|_| free_port()).collect();
        let _replicas: Vec<Killed> = ports
            .iter()
            .enumerate()
            .map(|(i, port)| replica(&runtime, &dir, &format!("r{i}"), *port, &api))
            .collect();
        let front = free_port();
        let _balancer = balancer(&runtime, &dir, front, &ports);
        let url: reqwest::Url = format!("http://127.0.0.1:{front}/mcp").parse().unwrap();
        let http = reqwest::Client::new();
        let clients: Vec<Arc<Mcp>> = (0..CLIENTS)
            .map(|_| Arc::new(Mcp::http("gateway", url.clone(), http.clone())))
            .collect();
        let batch = || async {
            let mut calls = Vec::new();
            for client in &clients {
                let client = Arc::clone(client);
                calls.push(tokio::spawn(async move {
                    for n in 0..CALLS {
                        let mut input = serde_json::Map::new();
                        input.insert("n".to_owned(), json!(n));
                        let answer = client
                            .call("api__echo", input, &toolkit_core::CallContext::new())
                            .await
                            .unwrap();
                        assert_eq!(answer["n"], json!(n));
                    }
                }));
            }
            for call in calls {
                call.await.unwrap();
            }
        };
        runtime.block_on(batch());
        group.bench_function(format!("{replicas} replica(s), {CLIENTS} clients"), |b| {
            b.iter(|| runtime.block_on(batch()));
        });
    }
    group.finish();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn ten_thousand_tools(c: &mut Criterion) {
    const TOOLS: usize = 10_000;
    let runtime = Runtime::new().unwrap();
    let api = echo_api(&runtime);
    let dir = scratch("catalog");
    std::fs::write(dir.join("api.json"), document(TOOLS)).unwrap();
    let port = free_port();
    let gateway = replica(&runtime, &dir, "big", port, &api);
    let pid = gateway.0.id();
    let started = rss_kib(pid);
    let url: reqwest::Url = format!("http://127.0.0.1:{port}/mcp").parse().unwrap();
    let client = Mcp::http("gateway", url, reqwest::Client::new());
    let listed = runtime.block_on(client.discover()).unwrap();
    assert_eq!(listed.len(), TOOLS);
    let after = rss_kib(pid);
    eprintln!(
        "gateway with {TOOLS} catalog tools: VmRSS {} MiB started, {} MiB after tools/list",
        started / 1024,
        after / 1024
    );
    let mut group = c.benchmark_group("gateway, 10,000 tools");
    group.sample_size(10);
    group.bench_function("tools/list over HTTP", |b| {
        b.iter(|| runtime.block_on(client.discover()).unwrap());
    });
    group.finish();
    eprintln!(
        "gateway with {TOOLS} catalog tools: VmRSS {} MiB after the benchmark's listings",
        rss_kib(pid) / 1024
    );
    drop(gateway);
    std::fs::remove_dir_all(&dir).unwrap();
}

criterion_group!(benches, through_haproxy, ten_thousand_tools);
criterion_main!(benches);
