//! `toolkit-gateway --config toolkit.toml`, run as a user runs it and driven by a real MCP
//! client (the runtime's own): an OpenAPI source over a fixture API on 127.0.0.1 that wants a
//! credential, a scripted stdio MCP server, a source that is down but known from the catalog file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use serde_json::{Value, json};
use toolkit_core::{ToolDefinition, ToolSource};
use toolkit_mcp::{Mcp, StdioCommand};

const TOKEN: &str = "gateway-test-secret";

/// A pet store that answers only with the bearer token.
async fn pet_store() -> String {
    let authorized = |headers: &HeaderMap| {
        headers.get("authorization").and_then(|v| v.to_str().ok())
            == Some(&format!("Bearer {TOKEN}"))
    };
    let app = axum::Router::new().route(
        "/v1/pets",
        get(move |headers: HeaderMap| async move {
            if authorized(&headers) {
                (
                    StatusCode::OK,
                    axum::Json(json!([{"id": 1, "name": "Rex"}])),
                )
            } else {
                (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "no"})))
            }
        })
        .post(|| async { axum::Json(json!({"id": 2})) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
    base
}

const PETSTORE: &str = r#"{
  "openapi": "3.1.0",
  "info": {"title": "Pets", "version": "1"},
  "paths": {
    "/pets": {
      "get": {"operationId": "list_pets", "summary": "Lists pets.", "responses": {"200": {"description": "ok"}}},
      "post": {"operationId": "create_pet", "summary": "Adds a pet.",
        "requestBody": {"content": {"application/json": {"schema": {"type": "object",
          "properties": {"name": {"type": "string"}}, "required": ["name"]}}}},
        "responses": {"200": {"description": "ok"}}}
    },
    "/pets/{id}": {
      "delete": {"operationId": "delete_pet", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
        "responses": {"204": {"description": "gone"}}}
    }
  }
}"#;

/// A directory holding the document, the configuration and the catalog of one test.
fn workspace(name: &str, config: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pets.json"), PETSTORE).unwrap();
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    dir
}

fn scripted_mcp(dir: &Path) -> String {
    scripted_mcp_in(dir, "normal")
}

fn scripted_mcp_in(dir: &Path, mode: &str) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolkit-mcp/tests/mcp/stdio_peer.py"
    );
    format!(
        r#"["python3", "{script}", "{mode}", "{}"]"#,
        dir.join("pids").display()
    )
}

fn config(base_url: &str, dir: &Path, extra: &str) -> String {
    format!(
        r#"
[catalog]
refresh_seconds = 0

[policy]
default = "approve"
rules = [
  {{ source = "pets", tool = "list_*", decision = "allow" }},
  {{ source = "scripted", tool = "echo", decision = "allow" }},
  {{ tool = "delete_*", decision = "block" }},
  {{ source = "githbu", decision = "block" }},
]

[[sources]]
name = "pets"
openapi = "pets.json"
base_url = "{base_url}"
headers = {{ Authorization = {{ env = "PETS_TOKEN", prefix = "Bearer " }} }}

[[sources]]
name = "scripted"
command = {}
{extra}"#,
        scripted_mcp(dir)
    )
}

/// The gateway as an MCP source of the runtime's own client, over stdio.
fn gateway(dir: &Path) -> Mcp {
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("PETS_TOKEN", TOKEN);
    Mcp::stdio("gateway", command)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_the_configured_sources_under_the_policy_to_an_mcp_client() {
    let base_url = pet_store().await;
    let dir = workspace("stdio", "");
    std::fs::write(dir.join("toolkit.toml"), config(&base_url, &dir, "")).unwrap();
    let served = Arc::new(gateway(&dir));

    let definitions = served.discover().await.unwrap();
    let names: Vec<&str> = definitions.iter().map(ToolDefinition::name).collect();
    assert_eq!(
        names,
        ["pets__list_pets", "pets__create_pet", "scripted__echo"],
        "delete_pet is blocked, so absent"
    );
    let listed = definitions[0].annotations.hints();
    assert!(!listed.destructive, "{listed:?}");
    let approved = definitions[1].annotations.hints();
    assert!(
        approved.destructive && !approved.read_only,
        "approve is served as destructive"
    );

    let pets = served
        .call(
            "pets__list_pets",
            serde_json::Map::new(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert!(pets.to_string().contains("Rex"), "{pets}");
    let refused = served
        .call(
            "pets__create_pet",
            json!({"nmae": "Tom"}).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("Accepted params at the root: body."),
        "{refused}"
    );
    // An `approve` tool asks the calling client, and this one declared no elicitation: nobody
    // can be asked, so the call is declined and never runs.
    let unasked = served
        .call(
            "pets__create_pet",
            json!({"body": {"name": "Tom"}})
                .as_object()
                .cloned()
                .unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        unasked.to_string().contains("no person could be asked"),
        "{unasked}"
    );
    let echoed = served
        .call(
            "scripted__echo",
            json!({"text": "hi"}).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert!(echoed.to_string().contains("hi"), "{echoed}");

    let catalog: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("toolkit-catalog.json")).unwrap())
            .unwrap();
    assert_eq!(catalog["sources"]["pets"].as_array().unwrap().len(), 3);
    assert!(!catalog.to_string().contains(TOKEN));
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_with_prefix_false_is_served_under_its_own_names() {
    let base_url = pet_store().await;
    let dir = workspace("unprefixed", "");
    std::fs::write(
        dir.join("toolkit.toml"),
        config(&base_url, &dir, "prefix = false"),
    )
    .unwrap();
    let served = Arc::new(gateway(&dir));
    let definitions = served.discover().await.unwrap();
    let names: Vec<&str> = definitions.iter().map(ToolDefinition::name).collect();
    assert_eq!(names, ["pets__list_pets", "pets__create_pet", "echo"]);
    let echoed = served
        .call(
            "echo",
            json!({"text": "hi"}).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert!(echoed.to_string().contains("hi"), "{echoed}");
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_that_is_down_is_served_from_the_catalog_file() {
    let base_url = pet_store().await;
    let dir = workspace("down", "");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", closed.local_addr().unwrap());
    let extra = format!("\n[[sources]]\nname = \"down\"\nurl = \"{url}\"\ntimeout_seconds = 2\n");
    std::fs::write(dir.join("toolkit.toml"), config(&base_url, &dir, &extra)).unwrap();
    std::fs::write(
        dir.join("toolkit-catalog.json"),
        r#"{"sources": {"down": [{"name": "ping", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}]}}"#,
    )
    .unwrap();
    let served = gateway(&dir);
    let definitions = served.discover().await.unwrap();
    let names: Vec<&str> = definitions.iter().map(ToolDefinition::name).collect();
    assert!(names.contains(&"down__ping"), "{names:?}");
    let failed = served
        .call(
            "down__ping",
            serde_json::Map::new(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(!failed.to_string().contains("127.0.0.1"), "{failed}");
    drop(closed);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn run_until_eof(dir: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
    command
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env_remove("PETS_TOKEN")
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_that_matches_no_tool_is_reported_and_the_end_of_stdin_ends_with_0() {
    let base_url = pet_store().await;
    let dir = workspace("dead", "");
    std::fs::write(dir.join("toolkit.toml"), config(&base_url, &dir, "")).unwrap();
    let (code, stdout, stderr) =
        tokio::task::spawn_blocking(move || run_until_eof(&dir, &[("PETS_TOKEN", TOKEN)]))
            .await
            .unwrap();
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert!(
        stderr.contains(
            r#"policy rule { source = "githbu", tool = "*", decision = "block" } matches no tool"#
        ),
        "{stderr}"
    );
}

#[test]
fn a_missing_credential_exits_1_naming_the_variable() {
    let dir = workspace("unset", "");
    std::fs::write(
        dir.join("toolkit.toml"),
        config("http://127.0.0.1:9/v1", &dir, ""),
    )
    .unwrap();
    let (code, stdout, stderr) = run_until_eof(&dir, &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr.trim(),
        "toolkit-gateway: source \"pets\" needs the environment variable PETS_TOKEN, which is not set"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_configuration_exits_1_with_its_place() {
    let dir = workspace("bad", "[policy]\ndefault = \"maybe\"\n");
    let (code, stdout, stderr) = run_until_eof(&dir, &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(stderr.starts_with("toolkit-gateway: "), "{stderr}");
    assert!(
        stderr.contains("toolkit.toml: line 2, column 11: unknown variant `maybe`"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_over_streamable_http_on_the_configured_address() {
    serves_over_http_on("127.0.0.1").await;
}

/// Any loopback address, not only the loopback names: the `Host` a client sends for the bound
/// address is accepted (it was refused with 403 "Host header is not allowed").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_over_streamable_http_on_another_loopback_address() {
    serves_over_http_on("127.0.0.2").await;
}

async fn serves_over_http_on(ip: &str) {
    let base_url = pet_store().await;
    let dir = workspace(&format!("http-{ip}"), "");
    let port = std::net::TcpListener::bind(format!("{ip}:0"))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let extra = format!(
        "\n[serve]\ntransport = \"http\"\naddress = \"{ip}:{port}\"\npresentation = \"search\"\n"
    );
    let text = config(&base_url, &dir, "").replacen("[catalog]", &format!("{extra}\n[catalog]"), 1);
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("PETS_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url: reqwest::Url = format!("http://{ip}:{port}/mcp").parse().unwrap();
    let client = Mcp::http("gateway", url, reqwest::Client::new());
    let mut definitions = Err(None);
    for _ in 0..100 {
        match client.discover().await {
            Ok(found) => {
                definitions = Ok(found);
                break;
            }
            Err(error) => definitions = Err(Some(error)),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let definitions = definitions.unwrap();
    let names: Vec<&str> = definitions.iter().map(ToolDefinition::name).collect();
    assert_eq!(names, ["tool_search", "tool_call"]);
    let found = client
        .call(
            "tool_search",
            json!({"query": "list pets"}).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert!(found.to_string().contains("pets__list_pets"), "{found}");
    child.kill().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every connection the gateway accepts has `TCP_NODELAY`, read off the gateway process's
/// accepted socket: without it (axum leaves it off) a client that keeps its connection waits
/// about 40 ms for each answer written in pieces (issue 27: 44 ms for every sequential call).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_accepts_every_connection_with_tcp_nodelay() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let base_url = pet_store().await;
    let dir = workspace("nodelay", "");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let extra = format!("\n[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n");
    let text = config(&base_url, &dir, "").replacen("[catalog]", &format!("{extra}\n[catalog]"), 1);
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("PETS_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let server: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let mut connected = None;
    for _ in 0..100 {
        if let Ok(stream) = tokio::net::TcpStream::connect(server).await {
            connected = Some(stream);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut client = connected.expect("the gateway listens");
    // An answer read back means the gateway has accepted the connection.
    client
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0; 12];
    client.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let nodelay = toolkit_serve::testing::tcp_nodelay(
        child.id().unwrap(),
        server,
        client.local_addr().unwrap(),
    );
    assert!(
        nodelay.unwrap(),
        "TCP_NODELAY is off on the accepted socket"
    );
    child.kill().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_that_says_its_tools_changed_is_refreshed_after_the_floor() {
    // No refresh interval: only the upstream's notifications/tools/list_changed refreshes, no
    // sooner than min_refresh_seconds after the start's listing.
    let dir = workspace("announced", "");
    let text = format!(
        r#"
[catalog]
refresh_seconds = 0
min_refresh_seconds = 1

[policy]
default = "allow"

[[sources]]
name = "scripted"
command = {}
"#,
        scripted_mcp_in(&dir, "announcing")
    );
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let served = gateway(&dir);
    let first = served.discover().await.unwrap();
    let names: Vec<&str> = first.iter().map(ToolDefinition::name).collect();
    assert_eq!(names, ["scripted__echo", "scripted__grown_1"]);
    let mut heard = served.tools_changed().expect("heard over stdio");
    served
        .call(
            "scripted__echo",
            json!({"text": "change"}).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    // The gateway refreshes and tells its own client.
    tokio::time::timeout(std::time::Duration::from_secs(10), heard.changed())
        .await
        .expect("the gateway said its tools changed");
    let later = served.discover().await.unwrap();
    let names: Vec<&str> = later.iter().map(ToolDefinition::name).collect();
    assert!(names.contains(&"scripted__grown_2"), "{names:?}");
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_serves_new_tools_under_the_same_rules() {
    let dir = workspace("refresh", "");
    let text = format!(
        r#"
[catalog]
refresh_seconds = 1

[policy]
default = "approve"
rules = [{{ tool = "grown_1", decision = "allow" }}, {{ tool = "grown_3", decision = "block" }}]

[[sources]]
name = "scripted"
command = {}
"#,
        scripted_mcp_in(&dir, "growing")
    );
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let served = gateway(&dir);
    let first = served.discover().await.unwrap();
    let names: Vec<&str> = first.iter().map(ToolDefinition::name).collect();
    assert_eq!(names, ["scripted__echo", "scripted__grown_1"]);
    let mut later = first.clone();
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        later = served.discover().await.unwrap();
        if later.len() >= 4 {
            break;
        }
    }
    let names: Vec<&str> = later.iter().map(ToolDefinition::name).collect();
    assert!(names.contains(&"scripted__grown_2"), "{names:?}");
    assert!(
        !names.contains(&"scripted__grown_3"),
        "blocked when it appears: {names:?}"
    );
    let grown = later
        .iter()
        .find(|d| d.name() == "scripted__grown_2")
        .unwrap();
    let hints = grown.annotations.hints();
    assert!(
        hints.destructive && !hints.read_only,
        "a new tool gets the default (approve), not its own read-only hint: {hints:?}"
    );
    let allowed = later
        .iter()
        .find(|d| d.name() == "scripted__grown_1")
        .unwrap();
    assert!(allowed.annotations.hints().read_only);
    let catalog = std::fs::read_to_string(dir.join("toolkit-catalog.json")).unwrap();
    assert!(
        catalog.contains("grown_2"),
        "the catalog file follows the refresh"
    );
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_of_the_served_tools_list_finds_no_error() {
    use toolkit_gen::audit::{AuditOptions, Severity, audit, tools_of};
    let base_url = pet_store().await;
    let dir = workspace("audit", "");
    std::fs::write(dir.join("toolkit.toml"), config(&base_url, &dir, "")).unwrap();
    // The `tools/list` the gateway writes, as `toolkit-gen snapshot` keeps it and `toolkit-gen
    // audit` reads it: no client's parsing in between.
    let config = dir.join("toolkit.toml");
    let listing = tokio::task::spawn_blocking(move || tools_list(&config))
        .await
        .unwrap();
    let tools = tools_of(&listing).unwrap();
    assert!(!tools.is_empty(), "{listing}");
    let findings = audit(tools, &AuditOptions::default());
    let errors: Vec<_> = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The result of `tools/list` as the gateway configured by `config` writes it over stdio.
fn tools_list(config: &Path) -> Value {
    use std::io::{BufRead, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(config)
        .env("PETS_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "audit", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let answer = stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(&line.unwrap()).unwrap())
        .find(|message| message["id"] == 2)
        .unwrap();
    drop(stdin);
    child.wait().unwrap();
    answer["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_code_mode_where_the_configuration_asks_for_it() {
    let base_url = pet_store().await;
    let dir = workspace("code", "");
    let text = config(&base_url, &dir, "").replacen(
        "[catalog]",
        "[serve]\npresentation = \"code\"\n\n[catalog]",
        1,
    );
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let served = gateway(&dir);
    let definitions = served.discover().await.unwrap();
    let names: Vec<&str> = definitions.iter().map(ToolDefinition::name).collect();
    assert_eq!(
        names,
        ["execute", "pets__create_pet"],
        "the tools that need approval stay outside code"
    );
    let code = "const pets = await tools.pets__list_pets({}); return pets.length;";
    let run = served
        .call(
            "execute",
            json!({ "code": code }).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(run, json!({ "result": 1, "logs": [] }));
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_gets_its_own_variables_and_no_other_sources_credential() {
    let base_url = pet_store().await;
    let dir = workspace("env", "");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolkit-mcp/tests/mcp/stdio_peer.py"
    );
    let shell = format!(
        "env > '{}'; exec python3 '{script}' normal '{}'",
        dir.join("env.txt").display(),
        dir.join("pids").display()
    );
    let text = config(&base_url, &dir, "").replace(
        &format!("command = {}", scripted_mcp(&dir)),
        &format!(
            "command = [\"sh\", \"-c\", {}]\nenv = {{ KEY = \"SCRIPTED_KEY\" }}",
            serde_json::to_string(&shell).unwrap()
        ),
    );
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("PETS_TOKEN", TOKEN)
        .env("SCRIPTED_KEY", "scripted-key");
    let served = Mcp::stdio("gateway", command);
    let names: Vec<String> = served
        .discover()
        .await
        .unwrap()
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert!(names.contains(&"scripted__echo".to_owned()), "{names:?}");
    let seen = std::fs::read_to_string(dir.join("env.txt")).unwrap();
    assert!(
        seen.lines().any(|line| line == "KEY=scripted-key"),
        "{seen}"
    );
    assert!(seen.lines().any(|line| line.starts_with("PATH=")), "{seen}");
    assert!(
        !seen.contains(TOKEN),
        "another source's credential leaked: {seen}"
    );
    assert!(!seen.contains("SCRIPTED_KEY"), "{seen}");
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_that_never_answers_is_given_up_at_its_timeout() {
    let base_url = pet_store().await;
    let dir = workspace("hanging", "");
    // Connections are taken by the kernel's backlog and never answered.
    let hanging = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", hanging.local_addr().unwrap());
    let extra = format!("\n[[sources]]\nname = \"slow\"\nurl = \"{url}\"\ntimeout_seconds = 1\n");
    std::fs::write(dir.join("toolkit.toml"), config(&base_url, &dir, &extra)).unwrap();
    std::fs::write(
        dir.join("toolkit-catalog.json"),
        r#"{"sources": {"slow": [{"name": "ping", "inputSchema": {"type": "object"}}]}}"#,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let definitions = gateway(&dir).discover().await.unwrap();
    let names: Vec<&str> = definitions.iter().map(ToolDefinition::name).collect();
    assert!(names.contains(&"slow__ping"), "{names:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "the start waited for the source beyond its 1 s timeout: {:?}",
        started.elapsed()
    );
    drop(hanging);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file is read as static vectors (`toolkit-gen distill`): one that is none is refused at start.
#[cfg(feature = "search-embeddings")]
#[test]
fn a_search_model_file_that_is_no_static_model_exits_1_naming_it() {
    let dir = workspace(
        "no-static-model",
        "[serve]\nsearch_model = \"static.safetensors\"\n\n[policy]\ndefault = \"allow\"\n",
    );
    std::fs::write(dir.join("static.safetensors"), "not vectors").unwrap();
    let (code, stdout, stderr) = run_until_eof(&dir, &[]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(
        stderr.contains("serve.search_model") && stderr.contains("static.safetensors"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_search_model_that_cannot_be_loaded_exits_1_naming_the_setting() {
    let dir = workspace(
        "no-model",
        "[serve]\nsearch_model = \"models/none\"\n\n[policy]\ndefault = \"allow\"\n",
    );
    let (code, stdout, stderr) = run_until_eof(&dir, &[]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(stderr.contains("serve.search_model"), "{stderr}");
    #[cfg(feature = "search-embeddings")]
    assert!(
        stderr.contains("models/none") && stderr.contains("no such file or directory"),
        "{stderr}"
    );
    #[cfg(not(feature = "search-embeddings"))]
    assert!(stderr.contains("feature `search-embeddings`"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With `serve.search_model` (all-MiniLM-L6-v2 as `scripts/install-test-peers` installs it), the
/// served `tool_search` finds a tool that shares no word with the query.
#[cfg(feature = "search-embeddings")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_model_ranks_the_served_search_by_meaning() {
    let base_url = pet_store().await;
    let dir = workspace("model", "");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/all-minilm-l6-v2");
    assert!(
        model.join("model.safetensors").is_file(),
        "run scripts/install-test-peers"
    );
    let serve = format!(
        "[serve]\npresentation = \"search\"\nsearch_model = {:?}\n\n[catalog]",
        model.display().to_string()
    );
    let text = config(&base_url, &dir, "").replacen("[catalog]", &serve, 1);
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let served = gateway(&dir);
    let found = served
        .call(
            "tool_search",
            json!({ "query": "which animals do you have" })
                .as_object()
                .cloned()
                .unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(found["tools"][0]["name"], "pets__list_pets", "{found}");
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An API whose pet's `name` drifts from its document (a number where a string is promised).
async fn drifting_api() -> String {
    let app = axum::Router::new().route(
        "/pets/{id}",
        get(|| async { axum::Json(json!({"id": 1, "name": 7})) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

const DRIFTING: &str = r#"{
  "openapi": "3.1.0",
  "info": {"title": "Pets", "version": "1"},
  "paths": {"/pets/{id}": {"get": {"operationId": "get_pet",
    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
    "responses": {"200": {"description": "The pet.", "content": {"application/json": {"schema": {
      "type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}}}}}}
}"#;

/// The gateway over the drifting API, with `extra` in its source; its `get_pet` tool's definition
/// and what a call of pet 1 gives.
async fn drifted(name: &str, extra: &str) -> (ToolDefinition, Result<Value, String>) {
    let base_url = drifting_api().await;
    let dir = workspace(name, "");
    std::fs::write(dir.join("drift.json"), DRIFTING).unwrap();
    let config = format!(
        "[catalog]\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\n[[sources]]\n\
         name = \"drift\"\nopenapi = \"drift.json\"\nbase_url = \"{base_url}\"\n{extra}\n"
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    let served = Arc::new(gateway(&dir));
    let definitions = served.discover().await.unwrap();
    let called = served
        .call(
            "drift__get_pet",
            json!({"id": 1}).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .map_err(|error| error.to_string());
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
    (definitions[0].clone(), called)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drifting_answer_reaches_the_model_with_or_without_an_output_schema() {
    // By default no outputSchema: the answer is served as it came.
    let (definition, called) = drifted("drift-off", "").await;
    assert_eq!(definition.output_schema(), None);
    assert_eq!(called.unwrap(), json!({"id": 1, "name": 7}));
    // Asked for: listed, and an answer that does not fit says where, with the answer's text.
    let (definition, called) = drifted("drift-on", "output_schema = true").await;
    assert!(definition.output_schema().is_some());
    let failure = called.unwrap_err();
    assert!(
        failure.contains("does not match the tool's output schema (at /name")
            && failure.contains(r#"{"id":1,"name":7}"#),
        "{failure}"
    );
}

#[test]
fn output_schema_on_an_mcp_source_exits_1_naming_the_setting() {
    let dir = workspace("output-schema-mcp", "");
    std::fs::write(
        dir.join("toolkit.toml"),
        "[catalog]\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\n[[sources]]\n\
         name = \"m\"\ncommand = [\"true\"]\noutput_schema = true\n",
    )
    .unwrap();
    let (code, _, stderr) = run_until_eof(&dir, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("`output_schema` goes with `openapi`"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The command of `python_expiring_peer.py` (the Python SDK's server whose `tools/list` says
/// `ttlMs` and changes without saying so) with `ttl_ms`, over stdio.
fn expiring_mcp(ttl_ms: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    format!(
        r#"["{root}/target/peers/mcp-python/bin/python", "{root}/toolkit-mcp/tests/mcp/python_expiring_peer.py", "{ttl_ms}", "stdio"]"#
    )
}

/// Serves `python_expiring_peer.py` with `ttl_ms` under `catalog`, has it grow a tool, and
/// waits (up to 30 s) until the gateway's list has it: true when it came.
async fn follows_a_growing_list(name: &str, ttl_ms: &str, catalog: &str) -> bool {
    let dir = workspace(name, "");
    let text = format!(
        "\n[catalog]\n{catalog}\n\n[policy]\ndefault = \"allow\"\n\n[[sources]]\nname = \"expiring\"\ncommand = {}\n",
        expiring_mcp(ttl_ms)
    );
    std::fs::write(dir.join("toolkit.toml"), text).unwrap();
    let served = gateway(&dir);
    let first = served.discover().await.unwrap();
    let names: Vec<&str> = first.iter().map(ToolDefinition::name).collect();
    assert_eq!(names, ["expiring__grow"]);
    let grown = served
        .call(
            "expiring__grow",
            serde_json::Map::new(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(grown, json!({"result": "grown_1"}));
    let mut followed = false;
    for _ in 0..300 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let later = served.discover().await.unwrap();
        if later.iter().any(|d| d.name() == "expiring__grown_1") {
            followed = true;
            break;
        }
    }
    drop(served);
    std::fs::remove_dir_all(&dir).unwrap();
    followed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_whose_list_expires_is_refreshed_when_it_does() {
    // The interval (10 minutes) would not come within the test: the list's ttl (1 s) does.
    assert!(
        follows_a_growing_list(
            "expiring",
            "1000",
            "refresh_seconds = 600\nmin_refresh_seconds = 1"
        )
        .await,
        "the gateway's list followed the upstream's after its ttl"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_ttl_waits_no_longer_than_the_refresh_interval() {
    assert!(
        follows_a_growing_list(
            "lasting",
            "1000000000000000000000",
            "refresh_seconds = 2\nmin_refresh_seconds = 1"
        )
        .await,
        "the gateway's list followed the upstream's within the interval"
    );
}

#[test]
fn logs_written_anywhere_but_a_terminal_carry_no_colour() {
    let dir =
        std::env::temp_dir().join(format!("toolkit-gateway-plain-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A subscription is no tool: the gateway warns of it as it starts.
    std::fs::write(
        dir.join("schema.graphql"),
        "type Query { a: Int }\ntype Subscription { b: Int }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("toolkit.toml"),
        "[policy]\ndefault = \"allow\"\n\n[[sources]]\nname = \"g\"\n\
         graphql = \"http://127.0.0.1:9/graphql\"\nschema = \"schema.graphql\"\n",
    )
    .unwrap();
    // Its stdin closed at once, the stdio server starts, warns and ends.
    let (_, _, stderr) =
        crate::support::run(&["--config", dir.join("toolkit.toml").to_str().unwrap()]);
    assert!(stderr.contains("is no tool"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
