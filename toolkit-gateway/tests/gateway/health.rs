//! The gateway's probes as balancers send them, `/metrics` behind its token, and the server card
//! (SEP-2127), against the built `toolkit-gateway` and HAProxy (the Debian package `haproxy`,
//! installed by `scripts/install-test-peers`), all on 127.0.0.1.
//!
//! `/healthz` and `/readyz` answer any `Host`, or none (HAProxy's plain `option httpchk` sends
//! HTTP/1.0 without one, a Kubernetes probe the pod's address), saying no more than up or ready
//! to a `Host` not allowed; every other route still answers only an allowed `Host`.
#![allow(clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::support::{free_port, run};
use crate::team::terminate;

/// Two tools, never called: the gateway lists them from the document.
const API: &str = r#"{
  "openapi": "3.1.0",
  "info": {"title": "Pets", "version": "1"},
  "paths": {
    "/pets": {"get": {"operationId": "list_pets", "responses": {"200": {"description": "ok"}}}},
    "/pets/{id}": {"get": {"operationId": "get_pet",
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
      "responses": {"200": {"description": "ok"}}}}
  }
}"#;

/// What no answer to a `Host` not allowed, nor the card, may hold: the source's and the tools'
/// names.
const PRIVATE: [&str; 3] = ["petstore", "list_pets", "get_pet"];

/// A directory of the test's own, `name` telling it apart.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-health-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `NAME.toml` in `dir`: a gateway on 127.0.0.1:`port` with `serve_extra` in `[serve]`
/// and one OpenAPI source, `petstore`, whose API is never called.
fn configure(dir: &Path, name: &str, port: u16, serve_extra: &str) -> PathBuf {
    std::fs::write(dir.join("api.json"), API).unwrap();
    let config = format!(
        r#"[serve]
transport = "http"
address = "127.0.0.1:{port}"
{serve_extra}

[catalog]
file = "{name}-catalog.json"
refresh_seconds = 0

[policy]
default = "allow"

[[sources]]
name = "petstore"
openapi = "api.json"
base_url = "http://127.0.0.1:9"
"#
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    path
}

/// Starts the gateway of `config` on `port` with `env`, and waits until `/healthz` answers.
async fn start(config: &Path, port: u16, env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
    command
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    for _ in 0..400 {
        if raw(port, "GET /healthz HTTP/1.0\r\n\r\n").await.0 == 200 {
            return child;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let output = child.wait_with_output().await.unwrap();
            panic!(
                "the gateway exited with {status}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the gateway on {port} did not become healthy");
}

/// Sends `request` as written to 127.0.0.1:`port` and reads the answer to its end: the status
/// (0 when there is none), the head and the body. `request` is to end the connection after the
/// answer (HTTP/1.0, or `Connection: close`).
async fn raw(port: u16, request: &str) -> (u16, String, String) {
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return (0, String::new(), String::new());
    };
    if stream.write_all(request.as_bytes()).await.is_err() {
        return (0, String::new(), String::new());
    }
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer));
    if !matches!(read.await, Ok(Ok(_))) {
        return (0, String::new(), String::new());
    }
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

/// The value of header `name` in an answer's `head`.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

/// A `GET` of `path` on 127.0.0.1:`port` naming `host` (none when `None`), with `extra` header
/// lines, over HTTP/1.1 (HTTP/1.0 without a `Host`).
async fn get(port: u16, path: &str, host: Option<&str>, extra: &str) -> (u16, String, String) {
    let request = match host {
        Some(host) => {
            format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}\r\n")
        }
        None => format!("GET {path} HTTP/1.0\r\n{extra}\r\n"),
    };
    raw(port, &request).await
}

/// HAProxy in front of `replicas` on 127.0.0.1:`front`, checking them as balancers are
/// configured when nobody thinks of `Host`: backend `by_health` with `option httpchk GET
/// /healthz`, `by_readiness` with `option httpchk GET /readyz` (HTTP/1.0, no `Host`). Its stats
/// are read on the socket `socket`.
fn haproxy_config(front: u16, socket: &Path, replicas: &[u16]) -> String {
    let servers = |backend: &str| {
        replicas
            .iter()
            .enumerate()
            .map(|(index, port)| format!("    server {backend}{index} 127.0.0.1:{port}\n"))
            .collect::<String>()
    };
    format!(
        "global
    stats socket {socket} mode 600 level user

defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s

frontend gateways
    bind 127.0.0.1:{front}
    default_backend by_health

backend by_health
    option httpchk GET /healthz
    default-server check inter 200ms fall 1 rise 1
{health}
backend by_readiness
    option httpchk GET /readyz
    default-server check inter 200ms fall 1 rise 1
{ready}",
        socket = socket.display(),
        health = servers("health"),
        ready = servers("ready"),
    )
}

/// HAProxy's `show stat` on `socket`: for each server, its name, status (`UP`, `DOWN`), last
/// check's status (`L7OK`, `L7STS`, …) and the HTTP status that check got.
async fn server_states(socket: &Path) -> Vec<(String, String, String, String)> {
    let Ok(mut stream) = tokio::net::UnixStream::connect(socket).await else {
        return Vec::new();
    };
    if stream.write_all(b"show stat\n").await.is_err() {
        return Vec::new();
    }
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text).await;
    let mut lines = text.lines();
    let Some(columns) = lines.next() else {
        return Vec::new();
    };
    let columns: Vec<&str> = columns.trim_start_matches("# ").split(',').collect();
    let at = |name: &str| columns.iter().position(|column| *column == name);
    let (Some(server), Some(status), Some(check), Some(code)) = (
        at("svname"),
        at("status"),
        at("check_status"),
        at("check_code"),
    ) else {
        panic!("HAProxy's stats lack a column: {columns:?}");
    };
    lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .filter(|fields| {
            fields
                .get(server)
                .is_some_and(|name| !matches!(*name, "FRONTEND" | "BACKEND"))
        })
        .map(|fields| {
            let field = |index: usize| fields.get(index).copied().unwrap_or("").to_owned();
            (field(server), field(status), field(check), field(code))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn haproxy_with_a_plain_check_marks_both_replicas_up_and_probes_answer_any_host() {
    let dir = scratch("haproxy");
    let ports = [free_port(), free_port()];
    let mut replicas = Vec::new();
    for (index, port) in ports.iter().enumerate() {
        let config = configure(&dir, &format!("r{index}"), *port, "");
        replicas.push(start(&config, *port, &[]).await);
    }
    let port = ports[0];

    // The probes, with no Host (HTTP/1.0) and with a Host not allowed (a pod's address): up, and
    // ready, and nothing else.
    for host in [None, Some("10.1.2.3:9")] {
        let (status, _, body) = get(port, "/healthz", host, "").await;
        assert_eq!((status, body.as_str()), (200, "ok\n"), "{host:?}");
        let (status, head, body) = get(port, "/readyz", host, "").await;
        assert_eq!(status, 200, "{host:?}: {head}");
        let ready: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(ready, json!({"ready": true}), "{host:?}");
        for private in PRIVATE {
            assert!(!body.contains(private), "{host:?}: {body}");
        }
    }
    // To an allowed Host, /readyz says why, as before.
    let allowed = format!("127.0.0.1:{port}");
    let (status, _, body) = get(port, "/readyz", Some(&allowed), "").await;
    assert_eq!(status, 200);
    let ready: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(ready["tools"], 2, "{ready}");
    assert_eq!(ready["catalog_loaded"], true, "{ready}");
    // Every other route still answers only an allowed Host: 403 to another, 400 to none.
    for path in ["/metrics", "/mcp", "/.well-known/mcp/server-card.json"] {
        let (status, _, body) = get(port, path, Some("10.1.2.3:9"), "").await;
        assert_eq!(status, 403, "{path}");
        for private in PRIVATE {
            assert!(!body.contains(private), "{path}: {body}");
        }
        assert_eq!(get(port, path, None, "").await.0, 400, "{path}");
    }

    // The card of a gateway without authentication, at both its paths.
    let (status, head, body) = get(
        port,
        "/.well-known/mcp/server-card.json",
        Some(&allowed),
        "",
    )
    .await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(header(&head, "content-type"), Some("application/json"));
    assert_eq!(header(&head, "cache-control"), Some("public, max-age=300"));
    assert_eq!(header(&head, "access-control-allow-origin"), Some("*"));
    let card: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        card["$schema"],
        "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
    );
    assert_eq!(card["name"], "127.0.0.1/toolkit-gateway", "{card}");
    assert_eq!(card["title"], "toolkit-gateway");
    assert!(card["version"].as_str().is_some_and(|v| !v.is_empty()));
    assert!(card["description"].as_str().is_some_and(|d| d.len() <= 100));
    assert_eq!(
        card["remotes"],
        json!([{"type": "streamable-http", "url": format!("http://127.0.0.1:{port}/mcp")}])
    );
    let capabilities = &card["_meta"]["toolkit-gateway/capabilities"];
    assert_eq!(
        capabilities["tools"],
        json!({"listChanged": true}),
        "{card}"
    );
    // An OpenAPI source has no resources nor prompts.
    assert!(capabilities.get("resources").is_none(), "{card}");
    assert_eq!(
        card["_meta"]["toolkit-gateway/authentication"],
        json!({"required": false})
    );
    for private in PRIVATE {
        assert!(!body.contains(private), "{body}");
    }
    let (status, _, same) = get(port, "/mcp/server-card", Some(&allowed), "").await;
    assert_eq!((status, &same), (200, &body));
    // Its ETag answers 304; its own media type to a client that asks for it.
    let tag = header(&head, "etag").unwrap().to_owned();
    let (status, _, empty) = get(
        port,
        "/mcp/server-card",
        Some(&allowed),
        &format!("If-None-Match: {tag}\r\n"),
    )
    .await;
    assert_eq!((status, empty.as_str()), (304, ""));
    let (status, typed, _) = get(
        port,
        "/mcp/server-card",
        Some(&allowed),
        "Accept: application/mcp-server-card+json\r\n",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&typed, "content-type"),
        Some("application/mcp-server-card+json")
    );

    // HAProxy, its checks as written when nobody thinks of Host, marks every replica up.
    let front = free_port();
    let socket = dir.join("haproxy.sock");
    let config = dir.join("haproxy.cfg");
    std::fs::write(&config, haproxy_config(front, &socket, &ports)).unwrap();
    let mut proxy = Command::new(crate::replicas::haproxy())
        .arg("-db")
        .arg("-f")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let states = loop {
        let states = server_states(&socket).await;
        for (name, _, check, code) in &states {
            // A check answered 400 (no Host) or 403 (a Host not allowed): what marked the
            // replicas down before the probes answered any Host.
            assert_ne!(check, "L7STS", "{name}'s check got HTTP {code}: {states:?}");
        }
        if states.len() == 4
            && states
                .iter()
                .all(|(_, status, check, code)| status == "UP" && check == "L7OK" && code == "200")
        {
            break states;
        }
        if let Ok(Some(status)) = proxy.try_wait() {
            let mut stderr = String::new();
            if let Some(mut pipe) = proxy.stderr.take() {
                let _ = pipe.read_to_string(&mut stderr).await;
            }
            panic!("haproxy exited with {status}: {stderr}");
        }
        assert!(
            Instant::now() < deadline,
            "HAProxy did not mark every replica up: {states:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("HAProxy's servers: {states:?}");
    // And requests through it reach the replicas, round robin.
    let mut served = Vec::new();
    for _ in 0..2 {
        let (status, _, body) =
            get(front, "/readyz", Some(&format!("127.0.0.1:{front}")), "").await;
        assert_eq!(status, 200, "{body}");
        let ready: Value = serde_json::from_str(&body).unwrap();
        served.push(ready["tools"].clone());
    }
    assert_eq!(served, [json!(2), json!(2)]);

    drop(proxy);
    for child in replicas {
        let (code, stderr) = terminate(child).await;
        assert_eq!(code, Some(0), "{stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_take_their_token_and_the_card_of_an_authenticated_gateway_names_no_tool() {
    let dir = scratch("token");
    let port = free_port();
    let serve = "metrics_token_env = \"METRICS_TOKEN\"\n\
                 [serve.auth]\nmode = \"tokens\"\ntokens = [{ name = \"ci\", env = \"GATEWAY_TOKEN\" }]";
    let config = configure(&dir, "gateway", port, serve);
    let (token, mcp_token) = ("metrics-s3cret-token", "mcp-s3cret-token");

    // The variable unset: the start fails naming it, never a value.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(&config)
        .env("GATEWAY_TOKEN", mcp_token)
        .env_remove("METRICS_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("METRICS_TOKEN") && stderr.contains("not set"),
        "{stderr}"
    );
    // A token written in the configuration is no key: the message points to the variable's,
    // and does not repeat the value.
    let written = configure(
        &dir,
        "written",
        port,
        "metrics_token = \"hunter2-in-the-file\"",
    );
    let (code, _, stderr) = run(&["--config", written.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("did you mean `metrics_token_env`"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");

    let child = start(
        &config,
        port,
        &[("METRICS_TOKEN", token), ("GATEWAY_TOKEN", mcp_token)],
    )
    .await;
    let allowed = format!("127.0.0.1:{port}");
    let bearer = |token: &str| format!("Authorization: Bearer {token}\r\n");

    // A Host not allowed is refused first, token or not.
    let (status, _, body) = get(port, "/metrics", Some("10.1.2.3:9"), &bearer(token)).await;
    assert_eq!(status, 403, "{body}");
    // No token, another token (the MCP one), another scheme: 401.
    for (extra, what) in [
        (String::new(), "no token"),
        (bearer("wrong"), "a wrong token"),
        (bearer(mcp_token), "the MCP token"),
        (format!("Authorization: Basic {token}\r\n"), "Basic"),
        (bearer(&format!("{token}x")), "a longer token"),
    ] {
        let (status, head, body) = get(port, "/metrics", Some(&allowed), &extra).await;
        assert_eq!(status, 401, "{what}: {head}");
        assert_eq!(
            header(&head, "www-authenticate"),
            Some("Bearer realm=\"metrics\""),
            "{what}"
        );
        assert!(!body.contains("toolkit_gateway"), "{what}: {body}");
    }
    let (status, head, body) = get(port, "/metrics", Some(&allowed), &bearer(token)).await;
    assert_eq!(status, 200, "{head}");
    assert!(
        body.contains("toolkit_gateway_catalog_refreshes_total"),
        "{body}"
    );

    // The probes need no token, MCP still does.
    assert_eq!(get(port, "/healthz", None, "").await.0, 200);
    let (status, _, body) = get(port, "/readyz", Some("10.1.2.3:9"), "").await;
    assert_eq!((status, body.as_str()), (200, r#"{"ready":true}"#));
    let (status, _, _) = get(port, "/mcp", Some(&allowed), "").await;
    assert_eq!(status, 401);

    // The card says a bearer token is needed, and names no tool and no source.
    let (status, head, body) = get(
        port,
        "/.well-known/mcp/server-card.json",
        Some(&allowed),
        "",
    )
    .await;
    assert_eq!(status, 200, "{head}");
    let card: Value = serde_json::from_str(&body).unwrap();
    let remote = &card["remotes"][0];
    assert_eq!(remote["url"], format!("http://127.0.0.1:{port}/mcp"));
    assert_eq!(remote["headers"][0]["name"], "Authorization", "{card}");
    assert_eq!(remote["headers"][0]["isRequired"], true);
    assert_eq!(remote["headers"][0]["isSecret"], true);
    assert_eq!(
        card["_meta"]["toolkit-gateway/authentication"],
        json!({"required": true, "schemes": ["bearer"]})
    );
    for private in PRIVATE.iter().chain(&[token, mcp_token]) {
        assert!(!body.contains(private), "{private} in {body}");
    }

    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
