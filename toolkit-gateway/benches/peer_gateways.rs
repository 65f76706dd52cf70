//! The gateway beside the gateways a user would pick instead, as a user's client sees them:
//! crates.io `mcp-proxy` 0.6.0 (Rust, when `TOOLKIT_BENCH_PEERS=1 scripts/install-test-peers` has
//! built it), PyPI `mcp-proxy` 0.13.0, npm `mcp-proxy` 6.7.19 and npm `supergateway` 4.0.0
//! (installed, pinned, by `scripts/install-test-peers`) and `toolkit-gateway --config FILE` (this
//! build), each putting the same stdio MCP server (`noop_server.cjs`: the TypeScript SDK's, one
//! tool that answers "ok" at once) behind Streamable HTTP on 127.0.0.1, with the direct stdio call
//! as the floor.
//!
//! One load generator that keeps its connections, as every real client does: each client has its
//! own pooled `reqwest` client (HTTP/1.1 keep-alive) and speaks MCP 2025-06-18 (`initialize`,
//! `notifications/initialized`, then `tools/call`, reading JSON or SSE answers, and `DELETE` at
//! the end, as the Python SDK's client does). Per round and
//! gateway, in an order that turns each round: `tools/call` p50 and p99 at concurrency 1
//! (`LATENCY_CALLS` calls after a warm-up), calls per second at concurrency 16 (`CLIENTS`
//! sessions calling for `LOAD_TIME`), and the resident memory of the gateway's process tree (the
//! gateway and every process it started: the stdio server, a shell in between): its peak (the
//! highest sum of VmRSS sampled every 50 ms under load) and its steady size (the sum once the
//! round is over). Medians over `ROUNDS` rounds, with the lowest and highest round beside them.
//! The goals are printed as ratios: issue 41's beside crates.io `mcp-proxy` (what each adds over
//! the stdio floor at p50, p99, calls/s, steady RSS), issue 27's beside the best script peer. A
//! reference row, an axum server answering at once with no upstream (this executable, started
//! again), shows what any gateway on hyper pays here before its own work.
//!
//! `cargo bench -p toolkit-gateway --bench peer_gateways` (about two minutes; `ROUNDS=N` for more;
//! `TOOLKIT_VARIANT="KEY=VALUE …"` adds ours run with these in its environment, beside it, and
//! `TOOLKIT_VARIANT_TOML` with these tables in its configuration (`[audit]`);
//! `PEERS=0` leaves the peers out).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// Rounds, each measuring every gateway once (`ROUNDS` in the environment overrides it).
const ROUNDS: usize = 5;
/// Calls timed one after the other, per gateway and round.
const LATENCY_CALLS: usize = 400;
/// Clients calling at once for the throughput figure.
const CLIENTS: usize = 16;
/// How long the clients call, per gateway and round.
const LOAD_TIME: Duration = Duration::from_secs(2);
/// How long one call may take before the benchmark gives up on a gateway.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// The revision the load generator speaks: every peer and the gateway speak it.
const REVISION: &str = "2025-06-18";
/// The reference row: an HTTP hop that reads each request and answers it at once, with no
/// upstream (this benchmark's own executable, axum on one thread): what any gateway on hyper
/// pays on this machine before it does any work of its own. Not a peer.
const HTTP_FLOOR: &str = "axum answering at once (no upstream)";
/// Where the benchmark's executable, started again with this in its environment, serves
/// [`HTTP_FLOOR`].
const HTTP_FLOOR_PORT: &str = "PEER_GATEWAYS_HTTP_FLOOR_PORT";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn peers() -> PathBuf {
    root().join("target/peers")
}

/// The upstream's command line: `node noop_server.cjs NODE_MODULES`.
fn upstream() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/noop_server.cjs");
    let modules = peers().join("mcp-npm/node_modules");
    for needed in [&script, &modules.join("@modelcontextprotocol/sdk")] {
        assert!(
            needed.exists(),
            "{} is missing: run scripts/install-test-peers",
            needed.display()
        );
    }
    vec![
        "node".to_owned(),
        script.display().to_string(),
        modules.display().to_string(),
    ]
}

/// A gateway process, killed (with the processes it started) when dropped.
struct Gateway {
    name: &'static str,
    url: String,
    /// The upstream's tool as the gateway names it.
    tool: &'static str,
    child: Child,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        for pid in tree(self.child.id()).into_iter().rev() {
            let _ = Command::new("kill")
                .arg(pid.to_string())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Gateway {
    fn url_port(&self) -> &str {
        let rest = self.url.trim_start_matches("http://127.0.0.1:");
        &rest[..rest.find('/').unwrap()]
    }
}

/// `TOOLKIT_VARIANT="KEY=VALUE …"`: a second instance of ours with these in its environment
/// (an A/B of a setting, measured in the same interleaved run); `TOOLKIT_VARIANT_TOML` (TOML
/// tables, such as `[audit]`) is added to that instance's configuration, and
/// `TOOLKIT_VARIANT_SOURCE` (keys and tables of the source, such as `[sources.resilience]`) to its
/// source.
fn variant() -> Option<Vec<(String, String)>> {
    let variant = std::env::var("TOOLKIT_VARIANT").ok().or_else(|| {
        (std::env::var_os("TOOLKIT_VARIANT_TOML").is_some()
            || std::env::var_os("TOOLKIT_VARIANT_SOURCE").is_some())
        .then(String::new)
    })?;
    Some(
        variant
            .split_whitespace()
            .filter_map(|pair| pair.split_once('='))
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect(),
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `program args…` with its output in `logs/NAME.log`, serving at `url`.
fn start(name: &'static str, logs: &Path, mut command: Command, url: String) -> Gateway {
    let log = std::fs::File::create(logs.join(format!("{name}.log"))).unwrap();
    let child = command
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|error| panic!("{name} could not be started: {error}"));
    Gateway {
        name,
        url,
        tool: "noop",
        child,
    }
}

/// Every gateway of the comparison, started.
fn gateways(logs: &Path) -> Vec<Gateway> {
    let upstream = upstream();
    let npm = peers().join("gateways-npm/node_modules/.bin");
    // Run as a module of the venv's interpreter: the venv's scripts name the path it was made
    // at, which a copied target directory no longer has.
    let python = peers().join("gateways-python/bin/python");
    for needed in [&npm.join("mcp-proxy"), &npm.join("supergateway"), &python] {
        assert!(
            needed.exists(),
            "{} is missing: run scripts/install-test-peers",
            needed.display()
        );
    }
    let mut all = Vec::new();

    let port = free_port();
    let config = logs.join("toolkit.toml");
    std::fs::write(
        &config,
        format!(
            "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\
             [catalog]\nfile = \"catalog.json\"\nrefresh_seconds = 0\n\
             [policy]\ndefault = \"allow\"\n\
             [[sources]]\nname = \"noop\"\nprefix = false\ncommand = {}\n",
            serde_json::to_string(&upstream).unwrap()
        ),
    )
    .unwrap();
    let mut ours = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
    ours.arg("--config").arg(&config).env("RUST_LOG", "warn");
    all.push(start(
        "toolkit-gateway",
        logs,
        ours,
        format!("http://127.0.0.1:{port}/mcp"),
    ));
    if let Some(variant) = variant() {
        // The same gateway in a variant of its environment, in the same interleaved run.
        let port = free_port();
        let config = logs.join("toolkit-variant.toml");
        std::fs::write(
            &config,
            std::fs::read_to_string(logs.join("toolkit.toml"))
                .unwrap()
                .replace(
                    &format!("127.0.0.1:{}", all[0].url_port()),
                    &format!("127.0.0.1:{port}"),
                )
                .replace(
                    "[[sources]]",
                    &format!(
                        "{}\n[[sources]]",
                        std::env::var("TOOLKIT_VARIANT_TOML").unwrap_or_default()
                    ),
                )
                + &std::env::var("TOOLKIT_VARIANT_SOURCE").unwrap_or_default(),
        )
        .unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
        command
            .arg("--config")
            .arg(&config)
            .env("RUST_LOG", "warn")
            .envs(variant.iter().cloned());
        let name = variant
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .chain(std::env::var("TOOLKIT_VARIANT_TOML").ok())
            .chain(std::env::var("TOOLKIT_VARIANT_SOURCE").ok())
            .collect::<Vec<_>>()
            .join(" ");
        all.push(start(
            Box::leak(format!("toolkit-gateway ({name})").into_boxed_str()),
            logs,
            command,
            format!("http://127.0.0.1:{port}/mcp"),
        ));
    }
    let port = free_port();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(HTTP_FLOOR_PORT, port.to_string());
    all.push(start(
        HTTP_FLOOR,
        logs,
        command,
        format!("http://127.0.0.1:{port}/mcp"),
    ));
    if std::env::var_os("PEERS").is_some_and(|peers| peers == "0") {
        return all;
    }

    // crates.io mcp-proxy 0.6.0 (Rust, tower): built only when the benchmarks ask for their
    // peers (`TOOLKIT_BENCH_PEERS=1 scripts/install-test-peers`, about 12 minutes on two cores).
    let rust = peers().join("mcp-proxy-rs/bin/mcp-proxy");
    if rust.exists() {
        let port = free_port();
        let config = logs.join("mcp-proxy-rs.toml");
        let (program, args) = upstream.split_first().unwrap();
        std::fs::write(
            &config,
            format!(
                "[proxy]\nname = \"bench\"\n[proxy.listen]\nhost = \"127.0.0.1\"\nport = {port}\n\
                 [[backends]]\nname = \"noop\"\ntransport = \"stdio\"\ncommand = {}\nargs = {}\n",
                serde_json::to_string(program).unwrap(),
                serde_json::to_string(args).unwrap()
            ),
        )
        .unwrap();
        let mut command = Command::new(&rust);
        command.arg("--config").arg(&config).env("RUST_LOG", "warn");
        let mut gateway = start(
            "crates.io mcp-proxy 0.6.0",
            logs,
            command,
            format!("http://127.0.0.1:{port}/"),
        );
        gateway.tool = "noop/noop";
        all.push(gateway);
    } else {
        eprintln!(
            "crates.io mcp-proxy 0.6.0 left out: TOOLKIT_BENCH_PEERS=1 scripts/install-test-peers \
             builds it"
        );
    }

    let port = free_port();
    let mut command = Command::new(&python);
    command
        .args([
            "-m",
            "mcp_proxy",
            "--port",
            &port.to_string(),
            "--host",
            "127.0.0.1",
        ])
        .args(&upstream);
    all.push(start(
        "PyPI mcp-proxy 0.13.0",
        logs,
        command,
        format!("http://127.0.0.1:{port}/mcp"),
    ));

    let port = free_port();
    let mut command = Command::new(npm.join("mcp-proxy"));
    command
        .args(["--port", &port.to_string(), "--host", "127.0.0.1", "--"])
        .args(&upstream);
    all.push(start(
        "npm mcp-proxy 6.7.19",
        logs,
        command,
        format!("http://127.0.0.1:{port}/mcp"),
    ));

    let port = free_port();
    let mut command = Command::new(npm.join("supergateway"));
    command.args(["--stdio", &upstream.join(" ")]).args([
        "--outputTransport",
        "streamableHttp",
        "--stateful",
        "--port",
        &port.to_string(),
    ]);
    all.push(start(
        "npm supergateway 4.0.0",
        logs,
        command,
        format!("http://127.0.0.1:{port}/mcp"),
    ));
    all
}

/// One MCP client of a gateway: its own connection pool, its session.
struct Session {
    http: reqwest::Client,
    url: String,
    tool: &'static str,
    session: Option<String>,
}

/// Request ids, unique across every session: a gateway that multiplexes its clients over one
/// stdio server without renumbering their ids (as a client's own counter would collide) still
/// answers each call to its caller.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Session {
    async fn open(url: &str, tool: &'static str) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .build()
            .map_err(|e| e.to_string())?;
        let mut session = Self {
            http,
            url: url.to_owned(),
            tool,
            session: None,
        };
        let initialize = json!({"protocolVersion": REVISION, "capabilities": {},
            "clientInfo": {"name": "peer-gateways-bench", "version": "1.0.0"}});
        let answer = session.request("initialize", initialize).await?;
        if answer.get("protocolVersion").is_none() {
            return Err(format!("initialize answered {answer}"));
        }
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let status = session
            .post(&notification)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .status();
        if !status.is_success() {
            return Err(format!("notifications/initialized answered {status}"));
        }
        Ok(session)
    }

    /// Ends the session (`DELETE`), as the Python SDK's client does when it closes
    /// (`terminate_on_close`): what the gateway kept for it is then its to free, and the steady
    /// size is not that of the sessions of the rounds before, left to time out.
    async fn close(self) -> Result<(), String> {
        let Some(id) = &self.session else {
            return Ok(());
        };
        let status = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", REVISION)
            .timeout(CALL_TIMEOUT)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .status();
        // A server may refuse to end a session on request (405); nothing else is an answer.
        if status.is_success() || status == reqwest::StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(format!("DELETE answered {status}"))
        }
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string())
            .timeout(CALL_TIMEOUT);
        if let Some(id) = &self.session {
            request = request
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", REVISION);
        }
        request
    }

    /// Sends request `method` and reads its result, from a JSON answer or an SSE stream.
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self.post(&body).send().await.map_err(|e| e.to_string())?;
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = session.to_str().ok().map(str::to_owned);
        }
        let status = response.status();
        let text = response.text().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{method} answered {status}: {text}"));
        }
        let messages: Vec<Value> = if text.trim_start().starts_with('{') {
            vec![serde_json::from_str(&text).map_err(|e| e.to_string())?]
        } else {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect()
        };
        let answer = messages
            .into_iter()
            .find(|message| message["id"] == json!(id))
            .ok_or_else(|| format!("{method} was not answered: {text}"))?;
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| format!("{method} failed: {answer}"))
    }

    async fn call(&mut self) -> Result<(), String> {
        let result = self
            .request("tools/call", json!({"name": self.tool, "arguments": {}}))
            .await?;
        if result["content"][0]["text"] == "ok" {
            Ok(())
        } else {
            Err(format!("tools/call answered {result}"))
        }
    }
}

/// The stdio server spoken to directly: the floor.
struct Direct {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    next_id: u64,
}

impl Direct {
    async fn start() -> Self {
        let upstream = upstream();
        let mut child = tokio::process::Command::new(&upstream[0])
            .args(&upstream[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut direct = Self {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let initialize = json!({"protocolVersion": REVISION, "capabilities": {},
            "clientInfo": {"name": "peer-gateways-bench", "version": "1.0.0"}});
        direct.send("initialize", initialize).await;
        direct.receive().await;
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        direct.write(&notification).await;
        direct
    }

    async fn write(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
    }

    async fn send(&mut self, method: &str, params: Value) {
        self.next_id += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.write(&message).await;
    }

    async fn send_call(&mut self) {
        self.send("tools/call", json!({"name": "noop", "arguments": {}}))
            .await;
    }

    async fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).await.unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        assert!(message.get("result").is_some(), "{message}");
        message
    }

    async fn call(&mut self) {
        self.send_call().await;
        let answer = self.receive().await;
        assert_eq!(answer["result"]["content"][0]["text"], "ok", "{answer}");
    }
}

/// The processes of the tree under `pid`, `pid` first.
fn tree(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The parent is the second field after the command's closing parenthesis.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok());
        if let Some(parent) = parent {
            children.entry(parent).or_default().push(child);
        }
    }
    let mut all = vec![pid];
    let mut next = 0;
    while next < all.len() {
        all.extend(children.get(&all[next]).cloned().unwrap_or_default());
        next += 1;
    }
    all
}

/// The resident memory of the tree under `pid`: the sum of VmRSS (KiB) of the gateway's own
/// processes, of the upstream servers it started (`noop_server.cjs`), and how many of those.
#[derive(Clone, Copy, Default)]
struct Memory {
    own_kib: u64,
    upstream_kib: u64,
    upstreams: u64,
}

fn memory(pid: u32) -> Memory {
    let mut memory = Memory::default();
    for pid in tree(pid) {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let rss = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or_default();
        let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        // The server itself runs the script (`node …/noop_server.cjs`); a gateway or a shell
        // that only names it among its arguments is the gateway's own.
        let mut arguments = command.split(|byte| *byte == 0);
        let (program, script) = (arguments.next(), arguments.next());
        let program = program.map(String::from_utf8_lossy).unwrap_or_default();
        let script = script.map(String::from_utf8_lossy).unwrap_or_default();
        if program.ends_with("node") && script.ends_with("noop_server.cjs") {
            memory.upstream_kib += rss;
            memory.upstreams += 1;
        } else {
            memory.own_kib += rss;
        }
    }
    memory
}

/// One round's figures for one gateway.
#[derive(Clone, Copy, Default)]
struct Figures {
    p50_ms: f64,
    p99_ms: f64,
    calls_per_second: f64,
    /// The highest own RSS sampled under load.
    peak_kib: f64,
    /// Once the round is over.
    steady: Memory,
}

fn percentile(sorted: &[Duration], fraction: f64) -> f64 {
    // Nearest rank: the smallest time at least `fraction` of the calls took no longer than.
    let rank = ((sorted.len() as f64 * fraction).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

async fn latency_over_http(url: &str, tool: &'static str) -> Result<(f64, f64), String> {
    let mut session = Session::open(url, tool).await?;
    for _ in 0..20 {
        session.call().await?;
    }
    let mut times = Vec::with_capacity(LATENCY_CALLS);
    for _ in 0..LATENCY_CALLS {
        let started = Instant::now();
        session.call().await?;
        times.push(started.elapsed());
    }
    session.close().await?;
    times.sort();
    Ok((percentile(&times, 0.5), percentile(&times, 0.99)))
}

/// Calls per second of `CLIENTS` sessions calling at once, and the peak of the tree's RSS
/// sampled meanwhile.
async fn load_over_http(url: &str, tool: &'static str, pid: u32) -> Result<(f64, u64), String> {
    let mut sessions = Vec::with_capacity(CLIENTS);
    for _ in 0..CLIENTS {
        let mut session = Session::open(url, tool).await?;
        session.call().await?;
        sessions.push(session);
    }
    let started = Instant::now();
    let deadline = started + LOAD_TIME;
    let mut running = Vec::new();
    for mut session in sessions {
        running.push(tokio::spawn(async move {
            let mut calls = 0u64;
            while Instant::now() < deadline {
                session.call().await?;
                calls += 1;
            }
            session.close().await?;
            Ok::<u64, String>(calls)
        }));
    }
    let sampler = tokio::spawn(async move {
        let mut peak = 0;
        while Instant::now() < deadline {
            peak = peak.max(memory(pid).own_kib);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        peak
    });
    let mut calls = 0;
    for client in running {
        calls += client.await.map_err(|e| e.to_string())??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let peak = sampler.await.map_err(|e| e.to_string())?;
    Ok((calls as f64 / elapsed, peak))
}

async fn round_over_http(gateway: &Gateway) -> Result<Figures, String> {
    let (p50_ms, p99_ms) = latency_over_http(&gateway.url, gateway.tool).await?;
    let pid = gateway.child.id();
    let (calls_per_second, peak) = load_over_http(&gateway.url, gateway.tool, pid).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(Figures {
        p50_ms,
        p99_ms,
        calls_per_second,
        peak_kib: peak as f64,
        steady: memory(pid),
    })
}

async fn round_direct(direct: &mut Direct) -> Figures {
    for _ in 0..20 {
        direct.call().await;
    }
    let mut times = Vec::with_capacity(LATENCY_CALLS);
    for _ in 0..LATENCY_CALLS {
        let started = Instant::now();
        direct.call().await;
        times.push(started.elapsed());
    }
    times.sort();
    // `CLIENTS` calls in flight on the one pipe, each answer followed by another call.
    let started = Instant::now();
    let deadline = started + LOAD_TIME;
    for _ in 0..CLIENTS {
        direct.send_call().await;
    }
    let mut calls = 0u64;
    let mut in_flight = CLIENTS;
    while in_flight > 0 {
        direct.receive().await;
        calls += 1;
        in_flight -= 1;
        if Instant::now() < deadline {
            direct.send_call().await;
            in_flight += 1;
        }
    }
    // The server itself is the upstream; there is no gateway.
    let pid = direct.child.id().unwrap_or_default();
    let server = memory(pid);
    Figures {
        p50_ms: percentile(&times, 0.5),
        p99_ms: percentile(&times, 0.99),
        calls_per_second: calls as f64 / started.elapsed().as_secs_f64(),
        peak_kib: 0.0,
        steady: Memory {
            own_kib: 0,
            upstream_kib: server.own_kib + server.upstream_kib,
            upstreams: 1,
        },
    }
}

/// The median of `values`, and the lowest and highest.
fn spread(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    (median, values[0], values[n - 1])
}

/// Serves [`HTTP_FLOOR`] on `port` until killed: `initialize` answered with a session, a
/// notification with 202, any other request with the noop tool's result, `DELETE` with 200.
fn serve_http_floor(port: u16) {
    use axum::http::{HeaderValue, StatusCode};
    use axum::response::{IntoResponse as _, Response};

    async fn answer(body: axum::body::Bytes) -> Response {
        let Ok(message) = serde_json::from_slice::<Value>(&body) else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        let Some(id) = message.get("id") else {
            return StatusCode::ACCEPTED.into_response();
        };
        let result = if message["method"] == "initialize" {
            json!({"protocolVersion": REVISION, "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-floor", "version": "1"}})
        } else {
            json!({"content": [{"type": "text", "text": "ok"}]})
        };
        let body = json!({"jsonrpc": "2.0", "id": id, "result": result});
        let mut response = axum::Json(body).into_response();
        response
            .headers_mut()
            .insert("mcp-session-id", HeaderValue::from_static("floor"));
        response
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let router = axum::Router::new().route(
            "/mcp",
            axum::routing::post(answer).delete(|| async { StatusCode::OK }),
        );
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
            let _ = stream.set_nodelay(true);
        });
        axum::serve(listener, router).await.unwrap();
    });
}

fn main() {
    if let Some(port) = std::env::var(HTTP_FLOOR_PORT)
        .ok()
        .and_then(|port| port.parse().ok())
    {
        serve_http_floor(port);
        return;
    }
    // `cargo bench` passes `--bench`; anything else (a test run listing benches) is ignored.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(ROUNDS);
    let logs = root().join("target/peer-gateways");
    std::fs::create_dir_all(&logs).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let gateways = gateways(&logs);
    runtime.block_on(async {
        for gateway in &gateways {
            let mut last = String::new();
            let ready = async {
                loop {
                    match Session::open(&gateway.url, gateway.tool).await {
                        Ok(mut session) => match session.call().await {
                            Ok(()) => match session.close().await {
                                Ok(()) => return,
                                Err(error) => last = error,
                            },
                            Err(error) => last = error,
                        },
                        Err(error) => last = error,
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            };
            if tokio::time::timeout(Duration::from_secs(90), ready)
                .await
                .is_err()
            {
                panic!(
                    "{} never answered (see target/peer-gateways): {last}",
                    gateway.name
                );
            }
        }
    });
    let mut direct = runtime.block_on(Direct::start());
    let names: Vec<&str> = std::iter::once("direct stdio (floor)")
        .chain(gateways.iter().map(|g| g.name))
        .collect();
    let mut figures: Vec<Vec<Figures>> = vec![Vec::new(); names.len()];
    for round in 0..rounds {
        for turn in 0..names.len() {
            let which = (turn + round) % names.len();
            let measured = if which == 0 {
                runtime.block_on(round_direct(&mut direct))
            } else {
                let gateway = &gateways[which - 1];
                runtime
                    .block_on(round_over_http(gateway))
                    .unwrap_or_else(|error| panic!("{}: {error}", gateway.name))
            };
            figures[which].push(measured);
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\n{rounds} rounds, {LATENCY_CALLS} calls at concurrency 1, {CLIENTS} clients for {} s; \
         load average {}; medians (lowest–highest round)\n",
        LOAD_TIME.as_secs(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "| | p50 (ms) | p99 (ms) | calls/s at {CLIENTS} | peak RSS (MiB) | steady RSS (MiB) | \
         with its stdio servers (MiB) | stdio servers |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut medians = Vec::new();
    for (name, rounds) in names.iter().zip(&figures) {
        let column = |pick: fn(&Figures) -> f64, scale: f64, digits: usize| {
            let mut values: Vec<f64> = rounds.iter().map(|f| pick(f) / scale).collect();
            let (median, low, high) = spread(&mut values);
            (
                median,
                format!("{median:.digits$} ({low:.digits$}–{high:.digits$})"),
            )
        };
        let (p50, p50_text) = column(|f| f.p50_ms, 1.0, 2);
        let (_, p99_text) = column(|f| f.p99_ms, 1.0, 2);
        let (rate, rate_text) = column(|f| f.calls_per_second, 1.0, 0);
        let (_, mut peak_text) = column(|f| f.peak_kib, 1024.0, 1);
        let (steady, mut steady_text) = column(|f| f.steady.own_kib as f64, 1024.0, 1);
        if medians.is_empty() {
            // The direct call has no gateway.
            peak_text = "—".to_owned();
            steady_text = "—".to_owned();
        }
        let (_, whole_text) = column(
            |f| (f.steady.own_kib + f.steady.upstream_kib) as f64,
            1024.0,
            1,
        );
        let (_, upstreams_text) = column(|f| f.steady.upstreams as f64, 1.0, 0);
        println!(
            "| {name} | {p50_text} | {p99_text} | {rate_text} | {peak_text} | {steady_text} | \
             {whole_text} | {upstreams_text} |"
        );
        medians.push((p50, rate, steady));
    }
    // Ours is the first gateway, then its variant if asked for, then the HTTP floor; the peers
    // follow.
    let ours = medians[1];
    let floor = medians[0];
    let figures_of = |name: &str| {
        names
            .iter()
            .position(|named| *named == name)
            .map(|at| (medians[at], &figures[at]))
    };
    if let Some((http, _)) = figures_of(HTTP_FLOOR) {
        println!(
            "\nadded over the stdio floor at p50: ours {:.3} ms, the HTTP floor {:.3} ms",
            ours.0 - floor.0,
            http.0 - floor.0
        );
    }
    if let Some((rust, rounds)) = figures_of("crates.io mcp-proxy 0.6.0") {
        let p99 = |rounds: &[Figures]| {
            let mut values: Vec<f64> = rounds.iter().map(|f| f.p99_ms).collect();
            spread(&mut values).0
        };
        println!(
            "goals beside crates.io mcp-proxy: added p50 {:.2} (≤ 0.5), p99 {:.2} (≤ 1), \
             calls/s {:.2} (≥ 1.5), steady RSS {:.2} (≤ 1)",
            (ours.0 - floor.0) / (rust.0 - floor.0),
            p99(&figures[1]) / p99(rounds),
            ours.1 / rust.1,
            ours.2 / rust.2
        );
    }
    let peers: Vec<(f64, f64, f64)> = names
        .iter()
        .zip(&medians)
        .skip(2 + usize::from(variant().is_some()))
        .filter(|(name, _)| **name != HTTP_FLOOR && !name.starts_with("crates.io"))
        .map(|(_, medians)| *medians)
        .collect();
    if peers.is_empty() {
        return;
    }
    let fastest = peers.iter().map(|m| m.0).fold(f64::INFINITY, f64::min);
    let best = peers.iter().map(|m| m.1).fold(0.0, f64::max);
    let smallest = peers.iter().map(|m| m.2).fold(f64::INFINITY, f64::min);
    println!(
        "goals beside the script peers (ours ÷ the best): p50 {:.2} (≤ 0.30), calls/s {:.2} (≥ 2), steady RSS {:.2} (≤ 0.50)",
        ours.0 / fastest,
        ours.1 / best,
        ours.2 / smallest
    );
}
