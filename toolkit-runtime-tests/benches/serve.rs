//! Serving's speed: a served `tools/call` through our server beside a bare rmcp server serving
//! the same tool (both over Streamable HTTP on loopback, driven by rmcp's client, in the same
//! run), a round trip over stdio (the `toolkit-serve-fixture` binary) and in-process, and the
//! stdin guard's throughput on 100 MB of mixed good and bad lines.
//!
//! The HTTP pair is measured as `benches/http.rs` measures its own: every iteration of both
//! benches makes both calls, one after the other (which goes first alternates), and times each;
//! the ratio printed is the median, over all of criterion's samples, of our server's time over
//! the bare server's. Pairing the calls in time keeps other work on the machine out of the ratio.
//!
//! A gateway's call is measured the same way: through our server serving an MCP source of the
//! bare rmcp server, beside a call to that server directly; and through our server serving an
//! MCP source of a TypeScript SDK server (`toolkit-serve/tests/serve/content_peer.cjs`,
//! installed by `scripts/install-test-peers`), beside a call to that server directly. The same
//! pair through a hop that reads no MCP and only forwards bytes with axum and reqwest is the floor
//! under that ratio: what any HTTP gateway on this machine adds.
//!
//! rmcp's client opens a new connection for each call; each HTTP pair is measured a second time
//! (group `…_keep_alive`) by a client that keeps its connection, as every real client does, so
//! that a server socket that delays small writes (no `TCP_NODELAY`) shows.
//!
//! Run with `cargo bench -p toolkit-runtime-tests --features serve-test-peer,testing,mcp --bench serve`.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{
    StreamableHttpClientTransport, StreamableHttpServerConfig, StreamableHttpService,
    TokioChildProcess,
};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Value, json};
use toolkit_runtime::serve::stdin_guard::StdinGuard;
use toolkit_runtime::serve::testing::InProcessClient;
use toolkit_runtime::serve::{CancellationToken, McpServer};
use toolkit_runtime::{FnSource, FnTool, Toolkit, ToolkitOptions};

/// Answers with the text it is given.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Echo {
    /// The text to answer with.
    text: String,
}

fn toolkit() -> Toolkit {
    let source = FnSource::builder("bench")
        .tool(
            FnTool::new("echo", |input: Echo| async move { Ok(input.text) })
                .description("Answers with the text it is given.")
                .read_only(),
        )
        .build()
        .unwrap();
    let definitions = source.definitions();
    Toolkit::from_source(Arc::new(source), definitions, &ToolkitOptions::default()).unwrap()
}

/// rmcp's server with nothing of ours: the same tool, listed and answered by hand.
#[derive(Clone)]
struct Bare {
    tool: McpTool,
}

impl Bare {
    fn new() -> Self {
        let toolkit = toolkit();
        let definition = toolkit.definitions().next().unwrap();
        let tool = McpTool::new_with_raw(
            "echo",
            definition.description.clone().map(Into::into),
            Arc::clone(definition.shared_input_schema()),
        );
        Self { tool }
    }
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bare", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        (name == "echo").then(|| self.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

fn arguments() -> serde_json::Map<String, Value> {
    json!({"text": "hello"}).as_object().cloned().unwrap()
}

fn served_call_http(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (ours, bare) = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ours = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(McpServer::new(toolkit()).serve_http(listener));

        let bare = bare_server().await;
        (ours, bare)
    });
    const WHAT: &str = "served tools/call over HTTP, our server / bare rmcp server";
    paired_kept_alive(
        c,
        &runtime,
        ("serve_call_http", WHAT),
        ("echo", &arguments()),
        ("toolkit_server", &ours),
        ("bare_rmcp_server", &bare),
    );
    let (ours, bare) = runtime.block_on(async {
        let ours = ().serve(StreamableHttpClientTransport::from_uri(ours)).await.unwrap();
        let bare = ().serve(StreamableHttpClientTransport::from_uri(bare)).await.unwrap();
        (ours, bare)
    });
    let median = paired(
        c,
        &runtime,
        "serve_call_http",
        ("toolkit_server", &ours),
        ("bare_rmcp_server", &bare),
    );
    report(WHAT, median);
    runtime.block_on(async move {
        let _ = ours.cancel().await;
        let _ = bare.cancel().await;
    });
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Benches `ours` and `bare` in pairs (every iteration calls both, the first alternating, each
/// timed) in the group `group`; gives the median of ours / bare over criterion's samples, and
/// their number.
fn paired(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    group: &str,
    (ours_name, ours): (&str, &Client),
    (bare_name, bare): (&str, &Client),
) -> (f64, usize) {
    paired_calls(
        c,
        runtime,
        group,
        ("echo", &arguments()),
        (ours_name, ours),
        (bare_name, bare),
    )
}

/// [`paired`], each call of `tool` with `arguments`.
fn paired_calls(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    group: &str,
    (tool, arguments): (&'static str, &serde_json::Map<String, Value>),
    (ours_name, ours): (&str, &Client),
    (bare_name, bare): (&str, &Client),
) -> (f64, usize) {
    let call = |client: &Client| {
        let request = CallToolRequestParams::new(tool).with_arguments(arguments.clone());
        black_box(runtime.block_on(client.call_tool(request)).unwrap());
    };
    paired_with(
        c,
        group,
        (ours_name, &|| call(ours)),
        (bare_name, &|| call(bare)),
    )
}

/// [`paired`] for any two calls: every iteration makes both (the first alternating), each timed.
fn paired_with(
    c: &mut Criterion,
    group: &str,
    (ours_name, ours): (&str, &dyn Fn()),
    (bare_name, bare): (&str, &dyn Fn()),
) -> (f64, usize) {
    let ratios = Mutex::new(Vec::new());
    // Both calls in every iteration, each timed: (ours, bare).
    let both = |iterations: u64| {
        let (mut ours_time, mut bare_time) = (Duration::ZERO, Duration::ZERO);
        for iteration in 0..iterations {
            let (first, second) = if iteration % 2 == 0 {
                (ours, bare)
            } else {
                (bare, ours)
            };
            let started = Instant::now();
            first();
            let between = Instant::now();
            second();
            let (one, two) = (between - started, between.elapsed());
            let (ours_one, bare_one) = if iteration % 2 == 0 {
                (one, two)
            } else {
                (two, one)
            };
            ours_time += ours_one;
            bare_time += bare_one;
        }
        if !bare_time.is_zero() {
            ratios
                .lock()
                .unwrap()
                .push(ours_time.as_secs_f64() / bare_time.as_secs_f64());
        }
        (ours_time, bare_time)
    };
    let mut benches = c.benchmark_group(group);
    benches.bench_function(ours_name, |b| b.iter_custom(|n| both(n).0));
    benches.bench_function(bare_name, |b| b.iter_custom(|n| both(n).1));
    benches.finish();
    let mut ratios = ratios.into_inner().unwrap();
    ratios.sort_by(f64::total_cmp);
    (
        ratios.get(ratios.len() / 2).copied().unwrap_or(0.0),
        ratios.len(),
    )
}

/// An MCP client that keeps its connection, as every real client does (rmcp's client opens a
/// new one for each call, so a server that delays small writes never shows it): its own pooled
/// reqwest client, HTTP/1.1 keep-alive, every answer read to its end (JSON or SSE) so the
/// connection is reused; revision 2025-11-25, in a session.
struct KeptAlive {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
}

impl KeptAlive {
    async fn open(url: &str) -> Self {
        let mut client = Self {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .unwrap(),
            url: url.to_owned(),
            session: None,
        };
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1.0.0"}});
        client.request("initialize", params).await;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let status = client.post(&initialized).send().await.unwrap().status();
        assert!(status.is_success(), "{status}");
        client
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request
    }

    /// Request `method`'s result.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = self.post(&body).send().await.unwrap();
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_owned());
        }
        let text = response.text().await.unwrap();
        let answer = if text.trim_start().starts_with('{') {
            serde_json::from_str(&text).unwrap()
        } else {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message["id"] == 1)
                .unwrap_or_else(|| panic!("{method} was not answered: {text}"))
        };
        answer["result"].clone()
    }

    async fn call(&mut self, tool: &str, arguments: &serde_json::Map<String, Value>) -> Value {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert!(result.get("content").is_some(), "{result}");
        result
    }
}

/// The pair of `paired_calls` by [`KeptAlive`] clients of `ours` and `bare`, in `GROUP_keep_alive`;
/// prints the median ratio under `what`.
fn paired_kept_alive(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    (group, what): (&str, &str),
    (tool, arguments): (&'static str, &serde_json::Map<String, Value>),
    (ours_name, ours): (&str, &str),
    (bare_name, bare): (&str, &str),
) {
    let ours = Mutex::new(runtime.block_on(KeptAlive::open(ours)));
    let bare = Mutex::new(runtime.block_on(KeptAlive::open(bare)));
    let call = |client: &Mutex<KeptAlive>| {
        let mut client = client.lock().unwrap();
        black_box(runtime.block_on(client.call(tool, arguments)));
    };
    let median = paired_with(
        c,
        &format!("{group}_keep_alive"),
        (ours_name, &|| call(&ours)),
        (bare_name, &|| call(&bare)),
    );
    report(
        &format!("{what}, by a client that keeps its connection"),
        median,
    );
}

/// Prints a paired ratio, unless criterion's filter skipped its benches (no samples).
fn report(what: &str, (median, samples): (f64, usize)) {
    if samples > 0 {
        println!("{what} = {median:.3} (median of {samples} paired samples)");
    }
}

/// A bare rmcp server on loopback, serving until the runtime ends; its URL.
async fn bare_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bare = format!("http://{}/mcp", listener.local_addr().unwrap());
    // The same configuration as `McpServer`'s defaults.
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(None)
        .with_cancellation_token(CancellationToken::new());
    let handler = Bare::new();
    let service: StreamableHttpService<Bare, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(handler.clone()), Arc::default(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    tokio::spawn(async move {
        axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            router,
        )
        .await
    });
    bare
}

/// What a gateway adds: a call through our server in front of the bare rmcp server (an MCP
/// source of it, the upstream's result passed on as written) beside a call to that server
/// directly, paired.
fn gateway_call_http(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    const WHAT: &str =
        "tools/call through our server in front of an rmcp server / to that server directly";
    let (bare, gateway) = runtime.block_on(async {
        let bare = bare_server().await;
        let gateway = gateway_in_front_of(&bare).await;
        (bare, gateway)
    });
    paired_kept_alive(
        c,
        &runtime,
        ("gateway_call_http", WHAT),
        ("echo", &arguments()),
        ("through_our_server", &gateway),
        ("direct", &bare),
    );
    let (through, direct) = runtime.block_on(async {
        let through = ().serve(StreamableHttpClientTransport::from_uri(gateway)).await.unwrap();
        let direct = ().serve(StreamableHttpClientTransport::from_uri(bare)).await.unwrap();
        (through, direct)
    });
    let median = paired(
        c,
        &runtime,
        "gateway_call_http",
        ("through_our_server", &through),
        ("direct", &direct),
    );
    report(WHAT, median);
    runtime.block_on(async move {
        let _ = through.cancel().await;
        let _ = direct.cancel().await;
    });
}

/// A TypeScript SDK server (`content_peer.cjs`: sessions, answers as SSE) on loopback, killed
/// when dropped; needs `scripts/install-test-peers`.
struct TypeScriptUpstream {
    child: std::process::Child,
    url: String,
}

impl Drop for TypeScriptUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TypeScriptUpstream {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let modules = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/peers/mcp-npm/node_modules"
        );
        assert!(
            std::path::Path::new(modules).exists(),
            "run scripts/install-test-peers"
        );
        let child = std::process::Command::new("node")
            .env("NODE_PATH", modules)
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../toolkit-serve/tests/serve/content_peer.cjs"
            ))
            .arg(port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..300 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

/// A gateway (an `Mcp` source of `upstream` served by `McpServer` on 127.0.0.1): its URL.
async fn gateway_in_front_of(upstream: &str) -> String {
    let source = Arc::new(toolkit_runtime::mcp::Mcp::http(
        "up",
        upstream.parse().unwrap(),
        reqwest::Client::new(),
    ));
    let definitions = toolkit_runtime::ToolSource::discover(source.as_ref())
        .await
        .unwrap();
    let toolkit = Toolkit::from_source(source, definitions, &ToolkitOptions::default()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(McpServer::new(toolkit).serve_http(listener));
    gateway
}

/// The least any HTTP gateway can add, for comparison: a hop that reads no MCP at all, only
/// forwards each POST's and DELETE's bytes (and the headers MCP needs) to `upstream` with
/// reqwest, and the answer's bytes back, built from axum and reqwest as our server is. A GET (the
/// standalone stream) is refused 405, as a server without one refuses it. Its URL.
async fn forwarding_hop(upstream: &str) -> String {
    use axum::body::{Body, Bytes};
    use axum::http::{HeaderMap, Method, StatusCode};
    use axum::response::{IntoResponse, Response};
    const ASKED: [&str; 5] = [
        "content-type",
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
    ];
    const ANSWERED: [&str; 2] = ["content-type", "mcp-session-id"];
    let client = reqwest::Client::new();
    let upstream: reqwest::Url = upstream.parse().unwrap();
    let forward = move |method: Method, headers: HeaderMap, body: Bytes| {
        let (client, upstream) = (client.clone(), upstream.clone());
        async move {
            if method == Method::GET {
                return StatusCode::METHOD_NOT_ALLOWED.into_response();
            }
            let mut request = client.request(method, upstream).body(body);
            for name in ASKED {
                if let Some(value) = headers.get(name) {
                    request = request.header(name, value);
                }
            }
            // The upstream is stopped before the clients' sessions end: a failure is a 502.
            let Ok(answer) = request.send().await else {
                return StatusCode::BAD_GATEWAY.into_response();
            };
            let mut response = Response::builder().status(answer.status());
            for name in ANSWERED {
                if let Some(value) = answer.headers().get(name) {
                    response = response.header(name, value);
                }
            }
            match answer.bytes().await {
                Ok(body) => response.body(Body::from(body)).unwrap(),
                Err(_) => StatusCode::BAD_GATEWAY.into_response(),
            }
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hop = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = axum::Router::new().route("/mcp", axum::routing::any(forward));
    tokio::spawn(async move {
        axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            router,
        )
        .await
    });
    hop
}

/// A call through `front` (started in front of a real TypeScript SDK server, given its URL)
/// beside a call to that server directly (`test_simple_text`), paired; prints the median ratio.
fn in_front_of_typescript<F, Fut>(c: &mut Criterion, group: &str, through_name: &str, front: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = String>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let what = format!(
        "tools/call {through_name} in front of a TypeScript SDK server / to that server directly"
    );
    let (upstream, front) = runtime.block_on(async {
        let upstream = TypeScriptUpstream::start().await;
        let front = front(upstream.url.clone()).await;
        (upstream, front)
    });
    paired_kept_alive(
        c,
        &runtime,
        (group, &what),
        ("test_simple_text", &serde_json::Map::new()),
        (through_name, &front),
        ("direct", &upstream.url),
    );
    let (through, direct) = runtime.block_on(async {
        let through = ().serve(StreamableHttpClientTransport::from_uri(front)).await.unwrap();
        let direct = ()
            .serve(StreamableHttpClientTransport::from_uri(
                upstream.url.clone(),
            ))
            .await
            .unwrap();
        (through, direct)
    });
    let median = paired_calls(
        c,
        &runtime,
        group,
        ("test_simple_text", &serde_json::Map::new()),
        (through_name, &through),
        ("direct", &direct),
    );
    report(&what, median);
    runtime.block_on(async move {
        let _ = through.cancel().await;
        let _ = direct.cancel().await;
    });
    drop(upstream);
}

/// A gateway's call in front of a real TypeScript SDK server, beside a call to that server
/// directly, paired.
fn gateway_call_http_typescript(c: &mut Criterion) {
    in_front_of_typescript(
        c,
        "gateway_call_http_typescript",
        "through_our_server",
        |upstream| async move { gateway_in_front_of(&upstream).await },
    );
}

/// The same pair through [`forwarding_hop`]: the floor under the gateway's ratio.
fn forwarding_hop_http_typescript(c: &mut Criterion) {
    in_front_of_typescript(
        c,
        "forwarding_hop_http_typescript",
        "through_forwarding_hop",
        |upstream| async move { forwarding_hop(&upstream).await },
    );
}

fn served_call_stdio(c: &mut Criterion) {
    let fixture = env!("CARGO_BIN_EXE_toolkit-serve-fixture");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let child = runtime
        .block_on(async {
            let command = tokio::process::Command::new(fixture);
            ().serve(TokioChildProcess::new(command).unwrap()).await
        })
        .unwrap();
    let mut in_process = runtime.block_on(async {
        let mut client = InProcessClient::start(McpServer::new(toolkit()));
        client.initialize().await.unwrap();
        client
    });
    let mut group = c.benchmark_group("serve_call_stdio");
    group.bench_function("child_process", |b| {
        b.iter(|| {
            let request = CallToolRequestParams::new("echo").with_arguments(arguments());
            black_box(runtime.block_on(child.call_tool(request)).unwrap())
        });
    });
    group.bench_function("in_process_pipe", |b| {
        b.iter(|| {
            let answer = runtime.block_on(in_process.call("echo", json!({"text": "hello"})));
            black_box(answer.unwrap())
        });
    });
    group.finish();
    runtime.block_on(async move {
        let _ = child.cancel().await;
        let _ = in_process.close().await;
    });
}

/// About 100 MB of lines: requests, notifications, responses, lines that are not JSON, JSON that
/// is no JSON-RPC message, whitespace, and long lines.
fn mixed_stdin() -> Vec<u8> {
    let lines: [&[u8]; 8] = [
        br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        b"this is not json at all",
        br#"{"jsonrpc":"2.0"}"#,
        b"   \t\r",
        br#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":"caf\xc3\xa9 \xe2\x82\xac"}}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"text":"unterminated"#,
    ];
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        "x".repeat(16 * 1024)
    );
    let mut stdin = Vec::with_capacity(101 * 1024 * 1024);
    let mut index = 0usize;
    while stdin.len() < 100 * 1024 * 1024 {
        if index % 64 == 63 {
            stdin.extend_from_slice(long.as_bytes());
        } else {
            stdin.extend_from_slice(lines[index % lines.len()]);
        }
        stdin.push(b'\n');
        index += 1;
    }
    stdin
}

fn stdin_guard_throughput(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let stdin = mixed_stdin();
    let mut group = c.benchmark_group("stdin_guard");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(stdin.len() as u64));
    group.bench_function("mixed_100_mb", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut guard = StdinGuard::new(&stdin[..]);
                let mut frames = 0usize;
                while let Some(frame) = guard.next_frame().await.unwrap() {
                    black_box(&frame);
                    frames += 1;
                }
                frames
            })
        });
    });
    group.finish();
}

criterion_group!(
    benches,
    served_call_http,
    gateway_call_http,
    gateway_call_http_typescript,
    forwarding_hop_http_typescript,
    served_call_stdio,
    stdin_guard_throughput
);
criterion_main!(benches);
