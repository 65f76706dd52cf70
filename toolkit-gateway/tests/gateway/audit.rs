//! The gateway's audit (`[audit]`), as a team runs it: `toolkit-gateway` over HTTP with two
//! people's opaque tokens, in front of an HTTP API of ours; a thousand calls at once from both,
//! then SIGTERM: the audit file holds one record per call, each of the right person, none with an
//! input's value. And a file that cannot be opened stops the start, naming it.
#![allow(clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::Query;
use axum::routing::get;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use toolkit_core::ToolSource as _;
use toolkit_mcp::Mcp;

use crate::support::free_port;
use crate::team::terminate;

const API: &str = r#"{
  "openapi": "3.1.0",
  "info": {"title": "Echo", "version": "1"},
  "paths": {
    "/echo": {"get": {"operationId": "echo",
      "parameters": [{"name": "word", "in": "query", "required": true, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "ok"}}}},
    "/slow": {"get": {"operationId": "slow",
      "parameters": [{"name": "ms", "in": "query", "required": true, "schema": {"type": "integer"}}],
      "responses": {"200": {"description": "ok"}}}}
  }
}"#;

/// How many calls of `/slow` the API began.
static SLOW_BEGUN: AtomicUsize = AtomicUsize::new(0);

/// The API the gateway's one source calls, on 127.0.0.1: `/echo` answers `{"heard": true}`,
/// `/slow` does after `ms` milliseconds.
async fn api() -> String {
    let app = axum::Router::new()
        .route(
            "/v1/echo",
            get(|Query(_): Query<Vec<(String, String)>>| async {
                axum::Json(json!({"heard": true}))
            }),
        )
        .route(
            "/v1/slow",
            get(|Query(query): Query<Vec<(String, u64)>>| async move {
                SLOW_BEGUN.fetch_add(1, Ordering::SeqCst);
                let ms = query.first().map_or(0, |(_, ms)| *ms);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                axum::Json(json!({"heard": true}))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
    base
}

/// A directory with the API document and a configuration serving it on `port` to alice and
/// bob, its audit written to `audit_file`.
fn workspace(name: &str, port: u16, base_url: &str, audit_file: &Path) -> PathBuf {
    workspace_auditing(
        name,
        port,
        base_url,
        &format!("file = \"{}\"", audit_file.display()),
    )
}

/// As [`workspace`], with `audit` as the `[audit]` table.
fn workspace_auditing(name: &str, port: u16, base_url: &str, audit: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-audit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("api.json"), API).unwrap();
    let config = format!(
        r#"[serve]
transport = "http"
address = "127.0.0.1:{port}"

[serve.auth]
mode = "tokens"
tokens = [{{ name = "alice", env = "AUDIT_TOKEN_ALICE" }}, {{ name = "bob", env = "AUDIT_TOKEN_BOB" }}]

[catalog]
refresh_seconds = 0

[policy]
default = "allow"

[audit]
{audit}

[[sources]]
name = "api"
openapi = "api.json"
base_url = "{base_url}"
"#
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    dir
}

const ALICE: &str = "audit-token-alice-0123456789";
const BOB: &str = "audit-token-bob-9876543210";

fn client(port: u16, token: &str) -> Mcp {
    crate::support::bearer_client(port, Some(token))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_of_two_people_is_recorded_once_before_the_gateway_stops() {
    let base = api().await;
    let port = free_port();
    let scratch = std::env::temp_dir().join(format!("toolkit-audit-{}-file", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let audit_file = scratch.join("audit.jsonl");
    let dir = workspace("calls", port, &base, &audit_file);
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
    command
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("AUDIT_TOKEN_ALICE", ALICE)
        .env("AUDIT_TOKEN_BOB", BOB)
        // Each record is an info event too: the piped stderr is read only at the end.
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().unwrap();
    let ready = format!("http://127.0.0.1:{port}/readyz");
    let mut up = false;
    for _ in 0..300 {
        if let Ok(response) = reqwest::get(&ready).await
            && response.status() == 200
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "the gateway did not become ready");
    let ready: Value = reqwest::get(&ready).await.unwrap().json().await.unwrap();
    assert_eq!(ready["audit"], Value::Null, "{ready}");

    // 500 calls each, 128 at a time in all: 1,000 calls, both people's at once. This client
    // speaks the stateless revision (2026-07-28): no session.
    let people = [("alice", client(port, ALICE)), ("bob", client(port, BOB))];
    for (_, mcp) in &people {
        let tools = mcp.discover().await.unwrap();
        assert_eq!(tools.len(), 2);
    }
    let calls = people.iter().flat_map(|(name, mcp)| {
        (0..500).map(move |n| async move {
            let word = format!("private-word-{name}-{n}-zq");
            let input = json!({ "word": word }).as_object().cloned().unwrap();
            mcp.call("api__echo", input, &toolkit_core::CallContext::new())
                .await
                .map(|answer| (name.to_owned(), answer))
        })
    });
    let answers: Vec<_> = futures_util::stream::iter(calls)
        .buffer_unordered(128)
        .collect()
        .await;
    assert_eq!(answers.len(), 1_000);
    for answer in &answers {
        let (_, answer) = answer.as_ref().unwrap();
        assert_eq!(answer["heard"], true, "{answer}");
    }
    // And one call each in a session (2025-06-18): recorded with it.
    let alices = in_a_session(port, ALICE, "alice").await;
    let bobs = in_a_session(port, BOB, "bob").await;
    assert_ne!(alices, bobs);

    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&audit_file).unwrap();
    assert!(
        !text.contains("private-word"),
        "an input's value is in the audit"
    );
    assert!(
        !text.contains(ALICE) && !text.contains(BOB),
        "a token is in the audit"
    );
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 1_002, "one record per call");
    let mut by_person: BTreeMap<String, usize> = BTreeMap::new();
    let mut sessions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut inputs = BTreeSet::new();
    for record in &records {
        assert_eq!(record["v"], 1, "{record}");
        assert_eq!(record["kind"], "tool_call", "{record}");
        assert_eq!(record["source"], "api", "{record}");
        assert_eq!(record["tool"], "echo", "{record}");
        assert_eq!(record["decision"], "allow", "{record}");
        assert_eq!(record["outcome"], "ok", "{record}");
        assert!(record.get("input").is_none(), "{record}");
        let principal = record["principal"].as_str().unwrap().to_owned();
        if let Some(session) = record["session"].as_str() {
            sessions
                .entry(principal.clone())
                .or_default()
                .insert(session.to_owned());
        }
        *by_person.entry(principal).or_default() += 1;
        inputs.insert(record["input_sha256"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        by_person,
        BTreeMap::from([
            ("token:alice".to_owned(), 501),
            ("token:bob".to_owned(), 501)
        ])
    );
    // Every call's input differs, and so does each record's hash: each call recorded once.
    assert_eq!(inputs.len(), 1_002);
    // The calls in a session, and those alone, name it: each person's their own.
    assert_eq!(
        sessions,
        BTreeMap::from([
            ("token:alice".to_owned(), BTreeSet::from([alices])),
            ("token:bob".to_owned(), BTreeSet::from([bobs])),
        ])
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&scratch).unwrap();
}

/// Opens a session (2025-06-18) with `token` and calls `api__echo` in it: the session's id.
async fn in_a_session(port: u16, token: &str, name: &str) -> String {
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request.send()
    };
    let opened = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    opened.text().await.unwrap();
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    let answer = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "api__echo", "arguments": {"word": format!("private-word-{name}-session")}}}),
        Some(&session),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(answer.contains(r#"\"heard\":true"#), "{answer}");
    session
}

#[test]
fn an_audit_file_that_cannot_be_opened_stops_the_start_naming_it() {
    let port = free_port();
    let scratch = std::env::temp_dir().join(format!(
        "toolkit-audit-{}-unwritable-scratch",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    // Its directory is a file: no one (root neither) can create it.
    let plain = scratch.join("plain");
    std::fs::write(&plain, "").unwrap();
    let audit_file = plain.join("audit.jsonl");
    let dir = workspace("unwritable", port, "http://127.0.0.1:9/v1", &audit_file);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("AUDIT_TOKEN_ALICE", ALICE)
        .env("AUDIT_TOKEN_BOB", BOB)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&audit_file.display().to_string()),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_stdout_each_record_is_a_json_line_of_standard_output() {
    let base = api().await;
    let port = free_port();
    let dir = workspace_auditing("stdout", port, &base, "stdout = true");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
    command
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("AUDIT_TOKEN_ALICE", ALICE)
        .env("AUDIT_TOKEN_BOB", BOB)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let child = command.spawn().unwrap();
    let ready = format!("http://127.0.0.1:{port}/readyz");
    for _ in 0..300 {
        if let Ok(response) = reqwest::get(&ready).await
            && response.status() == 200
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for n in 0..3 {
        let input = json!({ "word": format!("private-word-{n}") });
        client(port, BOB)
            .call(
                "api__echo",
                input.as_object().cloned().unwrap(),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
    }
    let pid = child.id().unwrap().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!text.contains("private-word"), "{text}");
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{text}");
    assert!(
        records
            .iter()
            .all(|record| record["principal"] == "token:bob")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_at_sigterm_are_recorded_when_they_end_before_the_exit() {
    let base = api().await;
    let port = free_port();
    let scratch = std::env::temp_dir().join(format!(
        "toolkit-audit-{}-inflight-file",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let audit_file = scratch.join("audit.jsonl");
    let dir = workspace("inflight", port, &base, &audit_file);
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
    command
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("AUDIT_TOKEN_ALICE", ALICE)
        .env("AUDIT_TOKEN_BOB", BOB)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().unwrap();
    let ready = format!("http://127.0.0.1:{port}/readyz");
    for _ in 0..300 {
        if let Ok(response) = reqwest::get(&ready).await
            && response.status() == 200
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = SLOW_BEGUN.load(Ordering::SeqCst);
    let alice = std::sync::Arc::new(client(port, ALICE));
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let alice = std::sync::Arc::clone(&alice);
            tokio::spawn(async move {
                let input = json!({"ms": 1_500});
                alice
                    .call(
                        "api__slow",
                        input.as_object().cloned().unwrap(),
                        &toolkit_core::CallContext::new(),
                    )
                    .await
            })
        })
        .collect();
    for _ in 0..200 {
        if SLOW_BEGUN.load(Ordering::SeqCst) >= before + 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(SLOW_BEGUN.load(Ordering::SeqCst), before + 20);
    // All 20 in flight: SIGTERM. They finish within the grace period, and are recorded.
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    for call in calls {
        call.await.unwrap().unwrap();
    }
    let records: Vec<Value> = std::fs::read_to_string(&audit_file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 20);
    for record in &records {
        assert_eq!(record["tool"], "slow", "{record}");
        assert_eq!(record["outcome"], "ok", "{record}");
        assert_eq!(record["principal"], "token:alice", "{record}");
        assert!(
            record["duration_ms"].as_f64().unwrap() >= 1_400.0,
            "{record}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&scratch).unwrap();
}
