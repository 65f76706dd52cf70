//! The gateway as N replicas behind HAProxy (the Debian package `haproxy`, installed by
//! `scripts/install-test-peers`), all started here on 127.0.0.1: round robin for clients of the
//! stateless revision 2026-07-28, a stick table on `Mcp-Session-Id` for clients of the session
//! revisions, and one replica stopped (SIGTERM) while the clients call.
//!
//! The HAProxy configuration is the one `docs/serving.md` shows, with a shorter health-check
//! interval.
#![allow(clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Query;
use axum::http::HeaderMap;
use axum::routing::get;
use serde_json::{Value, json};
use tokio::process::{Child, Command};
use toolkit_core::{Reason, ToolSource};
use toolkit_mcp::Mcp;

use crate::support::free_port;
use crate::team::terminate;

const REPLICAS: usize = 3;
const STATELESS_CLIENTS: usize = 10;
const SESSION_CLIENTS: usize = 10;
const CALLS_PER_CLIENT: usize = 100;
/// After how many answered calls in all one replica is stopped.
const STOP_AFTER: usize = 700;

const API: &str = r#"{
  "openapi": "3.1.0",
  "info": {"title": "Echo", "version": "1"},
  "paths": {
    "/echo": {"get": {"operationId": "echo",
      "parameters": [{"name": "n", "in": "query", "required": true, "schema": {"type": "integer"}}],
      "responses": {"200": {"description": "ok"}}}}
  }
}"#;

/// The API every replica's one source calls: it answers `n` and the replica that asked (each
/// replica sends its name in `X-Replica`, a header its configuration takes from its environment).
async fn echo_api() -> String {
    let app = axum::Router::new().route(
        "/echo",
        get(
            |headers: HeaderMap, Query(query): Query<BTreeMap<String, i64>>| async move {
                let replica = headers
                    .get("x-replica")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("?")
                    .to_owned();
                axum::Json(json!({"n": query.get("n"), "replica": replica}))
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
    base
}

/// The HAProxy configuration of `docs/serving.md`, for `replicas` (name, port) behind
/// 127.0.0.1:`port`.
fn haproxy_config(port: u16, replicas: &[(String, u16)]) -> String {
    let mut config = format!(
        "global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # A replica that refuses the connection, or answers 503 while it stops: the request goes
    # to another replica (a session client then gets 404 there and initializes again).
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response 503

frontend mcp
    bind 127.0.0.1:{port}
    default_backend gateways

backend gateways
    balance roundrobin
    # Session clients: the replica that answered `initialize` with an Mcp-Session-Id gets every
    # request carrying it. Clients without a session are balanced round robin.
    stick-table type string len 128 size 100k expire 1h
    stick match req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
    # Every route checks Host (DNS rebinding): the health check sends one the replicas allow.
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
    default-server check inter 500ms fall 2 rise 2
"
    );
    for (name, replica) in replicas {
        config.push_str(&format!("    server {name} 127.0.0.1:{replica}\n"));
    }
    config
}

/// Where HAProxy is: on PATH, or where Debian puts it (`/usr/sbin`, not on every user's PATH).
pub fn haproxy() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file());
    let debian = PathBuf::from("/usr/sbin/haproxy");
    on_path
        .or_else(|| debian.is_file().then_some(debian))
        .unwrap_or_else(|| {
            panic!(
                "haproxy is not installed: run scripts/install-test-peers (apt-get install haproxy)"
            )
        })
}

/// Waits until `url` answers 200, or panics naming `what`; `child` exiting first panics with its
/// stderr.
async fn wait_ready(url: &str, what: &str, child: &mut Child) {
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if let Ok(response) = client.get(url).send().await
            && response.status() == 200
        {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                use tokio::io::AsyncReadExt;
                let _ = pipe.read_to_string(&mut stderr).await;
            }
            panic!("{what} exited with {status}: {stderr}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not become ready at {url}");
}

/// Starts replica `name` of the gateway configured in `dir`, on `port`.
async fn replica(dir: &Path, name: &str, port: u16, api: &str) -> Child {
    std::fs::write(dir.join("api.json"), API).unwrap();
    let config = format!(
        r#"[serve]
transport = "http"
address = "127.0.0.1:{port}"
shutdown_grace_seconds = 5

[catalog]
file = "{name}-catalog.json"
refresh_seconds = 0

[policy]
default = "allow"

[[sources]]
name = "api"
openapi = "api.json"
base_url = "{api}"
headers = {{ X-Replica = {{ env = "REPLICA_NAME" }} }}
"#
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(&path)
        .env("REPLICA_NAME", name)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/readyz");
    wait_ready(&url, &format!("replica {name}"), &mut child).await;
    child
}

/// What the clients counted, and what they are told.
#[derive(Default)]
struct Counts {
    answered: AtomicUsize,
    /// Set once the stopped replica has exited.
    stopped: AtomicBool,
    /// The replica that answered each session client's last call.
    session_replica: Mutex<BTreeMap<usize, String>>,
    /// Calls of stateless clients sent again after an `Unavailable` failure.
    retried: AtomicUsize,
    /// `initialize` sent again by session clients whose session was gone.
    reinitialized: AtomicUsize,
}

/// What a client saw: for each call, the replica that answered it, and whether the call was sent
/// after the stopped replica had exited.
type Seen = Vec<(String, bool)>;

/// A client of the stateless revision: our own MCP source, which speaks 2026-07-28 to the
/// gateway. A call that fails as unavailable is sent again (and counted); any other failure
/// fails the test.
async fn stateless_client(url: reqwest::Url, id: usize, counts: Arc<Counts>) -> Seen {
    let gateway = Mcp::http("gateway", url, reqwest::Client::new());
    let mut seen = Vec::new();
    for call in 0..CALLS_PER_CLIENT {
        let n = (id * 10_000 + call) as i64;
        let mut tries = 0;
        let after_stop = counts.stopped.load(Ordering::SeqCst);
        let answer = loop {
            let mut input = serde_json::Map::new();
            input.insert("n".to_owned(), json!(n));
            match gateway
                .call("api__echo", input, &toolkit_core::CallContext::new())
                .await
            {
                Ok(answer) => break answer,
                Err(error) if matches!(error.reason, Reason::Unavailable { .. }) && tries < 3 => {
                    tries += 1;
                    counts.retried.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => panic!("stateless client {id}, call {call}: {error}"),
            }
        };
        assert_eq!(answer["n"], json!(n), "stateless client {id}: {answer}");
        let replica = answer["replica"].as_str().unwrap_or("?").to_owned();
        seen.push((replica, after_stop));
        counts.answered.fetch_add(1, Ordering::SeqCst);
    }
    seen
}

/// A client of the session revision 2025-11-25, written here on the wire so that what it sends
/// is plain: `initialize` (the answer names the session), `notifications/initialized`, then
/// `tools/call`s carrying `Mcp-Session-Id`. A 404 means the session is gone (its replica
/// stopped): it initializes again (counted) and sends the call once more.
struct SessionClient {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl SessionClient {
    const VERSION: &'static str = "2025-11-25";

    /// POSTs `body`: the status, the session id the answer names, and the JSON-RPC answer
    /// (read from JSON or from the event stream), if any.
    async fn post(&self, body: &Value) -> Result<(u16, Option<String>, Option<Value>), String> {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .json(body);
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", Self::VERSION);
        }
        let response = request.send().await.map_err(|error| error.to_string())?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let event_stream = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|kind| kind.starts_with("text/event-stream"));
        let Some(id) = body.get("id").cloned() else {
            return Ok((status, session, None));
        };
        if !event_stream {
            let text = response.text().await.map_err(|error| error.to_string())?;
            return Ok((status, session, serde_json::from_str(&text).ok()));
        }
        // The answer is the event whose data is the response to `id`; the stream may stay open.
        let mut response = response;
        let mut buffer = String::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| error.to_string())? {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            for line in buffer.lines() {
                if let Some(data) = line.strip_prefix("data:")
                    && let Ok(message) = serde_json::from_str::<Value>(data.trim())
                    && message.get("id") == Some(&id)
                {
                    return Ok((status, session, Some(message)));
                }
            }
        }
        Ok((status, session, None))
    }

    async fn initialize(&mut self) -> Result<(), String> {
        self.session = None;
        let id = self.id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": Self::VERSION, "capabilities": {},
            "clientInfo": {"name": "session-client", "version": "1"}}});
        let (status, session, answer) = self.post(&body).await?;
        let answer = answer.ok_or(format!("initialize: HTTP {status} without an answer"))?;
        if answer["result"]["protocolVersion"] != Self::VERSION {
            return Err(format!("initialize: {answer}"));
        }
        self.session = Some(session.ok_or("initialize: no Mcp-Session-Id")?);
        let (status, _, _) = self
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        if status != 202 {
            return Err(format!("notifications/initialized: HTTP {status}"));
        }
        Ok(())
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Calls `api__echo` with `n`: the answer's structured content, or `None` when the session
    /// is gone (404).
    async fn echo(&mut self, n: i64) -> Result<Option<Value>, String> {
        let id = self.id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "api__echo", "arguments": {"n": n}}});
        let (status, _, answer) = self.post(&body).await?;
        if status == 404 {
            return Ok(None);
        }
        let answer = answer.ok_or(format!("tools/call: HTTP {status} without an answer"))?;
        let result = &answer["result"];
        if result["isError"] == true {
            return Err(format!("tools/call failed: {answer}"));
        }
        match &result["structuredContent"] {
            Value::Null => {
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                serde_json::from_str(text)
                    .map(Some)
                    .map_err(|_| format!("tools/call: {answer}"))
            }
            structured => Ok(Some(structured.clone())),
        }
    }
}

async fn session_client(url: String, id: usize, counts: Arc<Counts>) -> Seen {
    let mut client = SessionClient {
        http: reqwest::Client::new(),
        url,
        session: None,
        next_id: 0,
    };
    client
        .initialize()
        .await
        .unwrap_or_else(|error| panic!("session client {id}: {error}"));
    let mut seen = Vec::new();
    for call in 0..CALLS_PER_CLIENT {
        let n = ((STATELESS_CLIENTS + id) * 10_000 + call) as i64;
        let after_stop = counts.stopped.load(Ordering::SeqCst);
        let answer = match client.echo(n).await {
            Ok(Some(answer)) => answer,
            Ok(None) => {
                counts.reinitialized.fetch_add(1, Ordering::SeqCst);
                client
                    .initialize()
                    .await
                    .unwrap_or_else(|error| panic!("session client {id}, again: {error}"));
                client
                    .echo(n)
                    .await
                    .unwrap_or_else(|error| panic!("session client {id}, call {call}: {error}"))
                    .unwrap_or_else(|| panic!("session client {id}: a new session gone at once"))
            }
            Err(error) => panic!("session client {id}, call {call}: {error}"),
        };
        assert_eq!(answer["n"], json!(n), "session client {id}: {answer}");
        let replica = answer["replica"].as_str().unwrap_or("?").to_owned();
        counts
            .session_replica
            .lock()
            .unwrap()
            .insert(id, replica.clone());
        seen.push((replica, after_stop));
        counts.answered.fetch_add(1, Ordering::SeqCst);
    }
    seen
}

/// The replicas a client's answers came from, in runs: `["r1", "r3"]` for a client served by
/// r1 and then by r3.
fn runs(seen: &Seen) -> Vec<&str> {
    let mut runs: Vec<&str> = Vec::new();
    for (replica, _) in seen {
        if runs.last() != Some(&replica.as_str()) {
            runs.push(replica);
        }
    }
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_haproxy_serve_both_eras_and_survive_a_stopped_replica() {
    let started = Instant::now();
    let api = echo_api().await;
    let dir = std::env::temp_dir().join(format!("toolkit-replicas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let names: Vec<String> = (1..=REPLICAS).map(|i| format!("r{i}")).collect();
    let ports: Vec<u16> = names.iter().map(|_| free_port()).collect();
    let mut replicas = Vec::new();
    for (name, port) in names.iter().zip(&ports) {
        replicas.push(Some(replica(&dir, name, *port, &api).await));
    }
    let front = free_port();
    let listed: Vec<(String, u16)> = names.iter().cloned().zip(ports.iter().copied()).collect();
    let config = dir.join("haproxy.cfg");
    std::fs::write(&config, haproxy_config(front, &listed)).unwrap();
    let mut proxy = Command::new(haproxy())
        .arg("-db")
        .arg("-f")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_ready(
        &format!("http://127.0.0.1:{front}/readyz"),
        "haproxy",
        &mut proxy,
    )
    .await;

    let url = format!("http://127.0.0.1:{front}/mcp");
    let counts = Arc::new(Counts::default());
    let mut stateless = Vec::new();
    for id in 0..STATELESS_CLIENTS {
        let url = url.parse().unwrap();
        stateless.push(tokio::spawn(stateless_client(url, id, Arc::clone(&counts))));
    }
    let mut sessions = Vec::new();
    for id in 0..SESSION_CLIENTS {
        sessions.push(tokio::spawn(session_client(
            url.clone(),
            id,
            Arc::clone(&counts),
        )));
    }

    // Mid-run, the replica that answered the first call of a session client is stopped.
    while counts.answered.load(Ordering::SeqCst) < STOP_AFTER {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "{} calls answered in 40 s",
            counts.answered.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let answered_at_stop = counts.answered.load(Ordering::SeqCst);
    assert!(
        answered_at_stop < STATELESS_CLIENTS * CALLS_PER_CLIENT,
        "the run was over before a replica could be stopped"
    );
    let holder = counts.session_replica.lock().unwrap().get(&0).cloned();
    let holder = holder.unwrap_or_else(|| panic!("session client 0 has no answer yet"));
    let stopped = names.iter().position(|name| *name == holder).unwrap();
    let child = replicas[stopped].take().unwrap();
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    counts.stopped.store(true, Ordering::SeqCst);

    let mut stateless_seen = Vec::new();
    for client in stateless {
        stateless_seen.push(client.await.unwrap());
    }
    let mut session_seen = Vec::new();
    for client in sessions {
        session_seen.push(client.await.unwrap());
    }
    let total = STATELESS_CLIENTS * CALLS_PER_CLIENT + SESSION_CLIENTS * CALLS_PER_CLIENT;
    assert_eq!(total, 2_000);
    assert_eq!(counts.answered.load(Ordering::SeqCst), total);

    // Round robin: the stateless calls were spread over every replica.
    let by_replica = stateless_seen.iter().flatten().fold(
        BTreeMap::<&str, usize>::new(),
        |mut counts, (replica, _)| {
            *counts.entry(replica.as_str()).or_default() += 1;
            counts
        },
    );
    assert_eq!(
        by_replica.keys().copied().collect::<BTreeSet<_>>(),
        names.iter().map(String::as_str).collect(),
        "{by_replica:?}"
    );

    // After the stop, no call was answered by the stopped replica.
    let stopped_name = names[stopped].as_str();
    for (replica, after_stop) in stateless_seen.iter().chain(&session_seen).flatten() {
        assert!(!(*after_stop && replica == stopped_name));
    }

    // Stickiness: each session was answered by one replica; a client on the stopped replica
    // moved once, to another, and initialized once to do so; the others never moved.
    let mut moved = 0;
    for (id, seen) in session_seen.iter().enumerate() {
        let runs = runs(seen);
        match runs.as_slice() {
            [_] => assert!(
                runs[0] != stopped_name || seen.iter().all(|(_, after)| !after),
                "session client {id} was answered by the stopped replica to the end"
            ),
            [first, second] => {
                assert_eq!(*first, stopped_name, "session client {id} moved: {runs:?}");
                assert_ne!(*second, stopped_name);
                moved += 1;
            }
            _ => panic!("session client {id} was not kept on one replica: {runs:?}"),
        }
    }
    assert!(
        moved >= 1,
        "session client 0 did not move: {session_seen:?}"
    );
    assert_eq!(counts.reinitialized.load(Ordering::SeqCst), moved);
    let retried = counts.retried.load(Ordering::SeqCst);
    eprintln!(
        "2,000 calls in {:?}: stateless by replica {by_replica:?}; {moved} session clients \
         re-initialized once; {retried} stateless calls retried after Unavailable",
        started.elapsed()
    );
    assert!(retried <= STATELESS_CLIENTS, "{retried} retries");
    assert!(started.elapsed() < Duration::from_secs(45));

    drop(proxy);
    for child in replicas.into_iter().flatten() {
        drop(child);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
