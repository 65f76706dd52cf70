//! The gateway reloaded without a restart (`toolkit-gateway --config FILE`, the file changed
//! while it serves): a policy rule and a source added apply; a configuration that does not check,
//! or changes what needs a restart, is refused and the running one keeps serving; and the
//! TypeScript and Python SDKs' clients keep their sessions across a reload and hear
//! `notifications/tools/list_changed`; MCP sources added and removed while a subscription goes on;
//! and SIGHUP applying new tokens.

use std::time::{Duration, Instant};

use serde_json::json;
use toolkit_core::{CallContext, ToolSource};
use toolkit_mcp::Mcp;

use crate::items_api::{DOCUMENT, Upstream, start};

fn config(base: &str, extra_rule: &str, extra_source: &str) -> String {
    format!(
        r#"[catalog]
refresh_seconds = 0

[policy]
default = "allow"
rules = [{extra_rule}]

[[sources]]
name = "items"
openapi = "items.json"
base_url = "{base}"
{extra_source}"#
    )
}

/// The served tool names, once they satisfy `done` (asked every 200 ms for up to 10 s).
async fn names_once(served: &Mcp, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let names: Vec<String> = served
            .discover()
            .await
            .unwrap()
            .iter()
            .map(|definition| definition.name().to_owned())
            .collect();
        if done(&names) || Instant::now() > deadline {
            return names;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_file_is_applied_to_the_running_gateway_and_a_bad_one_refused() {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("items.json"), DOCUMENT).unwrap();
    let base = start(Upstream::default()).await;
    let path = dir.join("toolkit.toml");
    let served = crate::support::gateway(&dir, "");
    // `support::gateway` wrote its own configuration: this test's replaces it before the start.
    std::fs::write(&path, config(&base, "", "")).unwrap();
    let first = names_once(&served, |names| !names.is_empty()).await;
    assert_eq!(first, ["items__listItems", "items__createItem"]);

    // A rule and a source added, while the client is connected.
    let more = "\n[[sources]]\nname = \"more\"\nopenapi = \"items.json\"\nbase_url = \"BASE\"\n"
        .replace("BASE", &base);
    let block = r#"{ tool = "createItem", decision = "block" }"#;
    std::fs::write(&path, config(&base, block, &more)).unwrap();
    let reloaded = names_once(&served, |names| {
        names.len() == 2 && names[1].starts_with("more")
    })
    .await;
    assert_eq!(reloaded, ["items__listItems", "more__listItems"]);

    let context = CallContext::new();
    let listed = served
        .call(
            "items__listItems",
            json!({}).as_object().cloned().unwrap(),
            &context,
        )
        .await;
    assert!(listed.is_ok(), "the session goes on: {listed:?}");

    // A file that does not check, and one that changes what needs a restart: both refused.
    std::fs::write(
        &path,
        config(&base, block, &more).replace("default = \"allow\"", "defualt = 1"),
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let restart = format!("[serve]\nname = \"renamed\"\n{}", config(&base, "", ""));
    std::fs::write(&path, restart).unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let kept = names_once(&served, |_| true).await;
    assert_eq!(
        kept,
        ["items__listItems", "more__listItems"],
        "the running configuration is kept"
    );
    let listed = served
        .call(
            "more__listItems",
            json!({}).as_object().cloned().unwrap(),
            &context,
        )
        .await;
    assert!(listed.is_ok(), "{listed:?}");
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a client started by `client` (given the tool to call, then the gateway's command line)
/// prints once it held its session across a reload that blocks `createItem`.
async fn across_a_reload(name: &str, mut client: tokio::process::Command) -> serde_json::Value {
    use tokio::io::AsyncBufReadExt as _;

    let dir = std::env::temp_dir().join(format!(
        "toolkit-gateway-reload-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("items.json"), DOCUMENT).unwrap();
    let base = start(Upstream::default()).await;
    let path = dir.join("toolkit.toml");
    std::fs::write(&path, config(&base, "", "")).unwrap();
    let mut client = client
        .arg("items__listItems")
        .args([env!("CARGO_BIN_EXE_toolkit-gateway"), "--config"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(client.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await;
    assert!(
        matches!(&ready, Ok(Ok(Some(line))) if line == "ready"),
        "{name}: {ready:?}"
    );

    let block = r#"{ tool = "createItem", decision = "block" }"#;
    std::fs::write(&path, config(&base, block, "")).unwrap();
    let told = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await;
    let line = told.ok().and_then(Result::ok).flatten().unwrap_or_default();
    let _ = client.wait().await;
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&line).unwrap_or_else(|_| json!(line))
}

/// The TypeScript SDK's client (`reload_client.cjs`) and the Python SDK's (`reload_client.py`),
/// each holding a stdio session across a reload: told the tools changed, shown the new list,
/// and served a call on the same session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_clients_keep_their_sessions_and_hear_the_reload() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut typescript = tokio::process::Command::new("node");
    typescript
        .arg(root.join("toolkit-gateway/tests/gateway/reload_client.cjs"))
        .env("NODE_PATH", root.join("target/peers/mcp-npm/node_modules"));
    let mut python = tokio::process::Command::new(root.join("target/peers/mcp-python/bin/python"));
    python.arg(root.join("toolkit-gateway/tests/gateway/reload_client.py"));
    for (name, client) in [("typescript", typescript), ("python", python)] {
        let seen = across_a_reload(name, client).await;
        assert_eq!(
            seen["before"],
            json!(["items__listItems", "items__createItem"]),
            "{name}: {seen}"
        );
        assert_eq!(seen["heard"], true, "{name}: {seen}");
        assert_eq!(seen["after"], json!(["items__listItems"]), "{name}: {seen}");
        assert_eq!(seen["called"], true, "{name}: {seen}");
    }
}

/// The tools served say how long they stay fresh (`ttlMs`: the refresh interval here) and that any
/// client may share them (`cacheScope: public`: no upstream said its list was private, and the
/// policy shows everyone the same tools); and a reload that changes the interval says the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_list_says_how_long_it_stays_fresh() {
    use toolkit_mcp::CacheScope;

    let dir = std::env::temp_dir().join(format!("toolkit-gateway-ttl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("items.json"), DOCUMENT).unwrap();
    let base = start(Upstream::default()).await;
    let path = dir.join("toolkit.toml");
    let served = crate::support::gateway(&dir, "");
    let with_interval = |seconds: u64| {
        config(&base, "", "").replace(
            "refresh_seconds = 0",
            &format!("refresh_seconds = {seconds}"),
        )
    };
    std::fs::write(&path, with_interval(120)).unwrap();
    served.discover().await.unwrap();
    let lifetime = served.list_lifetime_handle().get().unwrap();
    assert_eq!(lifetime.ttl, Duration::from_secs(120));
    assert_eq!(lifetime.scope, Some(CacheScope::Public));

    std::fs::write(&path, with_interval(90)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut ttl = lifetime.ttl;
    while ttl != Duration::from_secs(90) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        served.discover().await.unwrap();
        ttl = served.list_lifetime_handle().get().unwrap().ttl;
    }
    assert_eq!(ttl, Duration::from_secs(90));
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A served resource of server-everything under the source `name`.
fn architecture(name: &str) -> String {
    format!("demo://{name}/resource/static/document/architecture.md")
}

/// The configuration of a gateway of server-everything (stdio) under each of `names`.
fn everything_sources(names: &[&str]) -> String {
    let server = crate::resources::everything();
    let sources: String = names
        .iter()
        .map(|name| {
            format!(
                "\n[[sources]]\nname = \"{name}\"\ncommand = [\"node\", \"{}\", \"stdio\"]\n",
                server.display()
            )
        })
        .collect();
    format!("[catalog]\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n{sources}")
}

/// An MCP source added to the running gateway is listed and served (its tools, its resources),
/// and one removed is no longer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_sources_are_added_and_removed() {
    let dir =
        std::env::temp_dir().join(format!("toolkit-gateway-reload-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("toolkit.toml");
    let served = crate::support::gateway(&dir, "");
    std::fs::write(&path, everything_sources(&["everything"])).unwrap();
    let first = names_once(&served, |names| !names.is_empty()).await;
    assert!(
        first.iter().all(|name| name.starts_with("everything__")),
        "{first:?}"
    );

    // A second server added.
    std::fs::write(&path, everything_sources(&["everything", "second"])).unwrap();
    let added = names_once(&served, |names| {
        names.iter().any(|name| name.starts_with("second__"))
    })
    .await;
    assert!(added.contains(&"second__echo".to_owned()), "{added:?}");
    let arguments = json!({ "message": "hello" }).as_object().cloned().unwrap();
    let context = CallContext::new();
    let echoed = served
        .call("second__echo", arguments.clone(), &context)
        .await;
    assert!(echoed.is_ok(), "{echoed:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let listed = loop {
        let resources = served.list_resources().await.unwrap();
        let uris: Vec<String> = resources
            .iter()
            .filter_map(|resource| resource["uri"].as_str().map(str::to_owned))
            .collect();
        if uris.contains(&architecture("second")) || Instant::now() > deadline {
            break uris;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(listed.contains(&architecture("second")), "{listed:?}");
    assert!(listed.contains(&architecture("everything")), "{listed:?}");

    // The second removed: its tools and resources are gone, its tools no longer called.
    std::fs::write(&path, everything_sources(&["everything"])).unwrap();
    let removed = names_once(&served, |names| {
        !names.iter().any(|name| name.starts_with("second__"))
    })
    .await;
    assert!(
        removed.iter().all(|name| name.starts_with("everything__")),
        "{removed:?}"
    );
    let refused = served.call("second__echo", arguments, &context).await;
    assert!(refused.is_err(), "{refused:?}");
    let resources = served.list_resources().await.unwrap();
    assert!(
        resources
            .iter()
            .all(|resource| resource["uri"] != json!(architecture("second"))),
        "{resources:?}"
    );
    served.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The status of an MCP `initialize` sent to the gateway on 127.0.0.1:`port` with `token`.
async fn initialize_status(http: &reqwest::Client, port: u16, token: &str) -> u16 {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "reload-test", "version": "1" }
        }
    });
    http.post(format!("http://127.0.0.1:{port}/mcp"))
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_or(0, |answer| answer.status().as_u16())
}

/// SIGHUP reloads the configuration, and a reload applies `[serve.auth]`'s settings: the tokens
/// the gateway takes are the new file's from then on (the old holder is refused, the new one
/// let in), without a restart.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_and_a_reload_applies_who_may_connect() {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-sighup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("items.json"), DOCUMENT).unwrap();
    let base = start(Upstream::default()).await;
    let port = crate::support::free_port();
    let with_token = |holder: &str, env: &str| {
        format!(
            "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\
             [serve.auth]\nmode = \"tokens\"\ntokens = [{{ name = \"{holder}\", env = \"{env}\" }}]\n\n{}",
            config(&base, "", "")
        )
    };
    let path = dir.join("toolkit.toml");
    std::fs::write(&path, with_token("alice", "ALICE_TOKEN")).unwrap();
    let log = std::fs::File::create(dir.join("gateway.log")).unwrap();
    let mut gateway = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(&path)
        .env("ALICE_TOKEN", "alice-s3cret")
        .env("BOB_TOKEN", "bob-s3cret")
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while initialize_status(&http, port, "alice-s3cret").await != 200 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(initialize_status(&http, port, "alice-s3cret").await, 200);
    assert_eq!(initialize_status(&http, port, "bob-s3cret").await, 401);

    std::fs::write(&path, with_token("bob", "BOB_TOKEN")).unwrap();
    let pid = gateway.id().unwrap().to_string();
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap();
    assert!(hup.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while initialize_status(&http, port, "bob-s3cret").await != 200 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(initialize_status(&http, port, "bob-s3cret").await, 200);
    assert_eq!(initialize_status(&http, port, "alice-s3cret").await, 401);
    let _ = gateway.kill().await;
    let log = std::fs::read_to_string(dir.join("gateway.log")).unwrap();
    // Read at the signal: reloaded then, or found unchanged then when the file's poll was first.
    assert!(log.contains("(SIGHUP)"), "{log}");
    assert!(!log.contains("s3cret"), "no token is logged: {log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The TypeScript SDK's client (`subscriber.cjs`, a session revision) subscribed to a resource of
/// an MCP source through the gateway keeps its subscription across a reload that adds another
/// source: it hears `list_changed`, and the kept source's updates still reach it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_to_a_kept_source_goes_on_across_a_reload() {
    use tokio::io::AsyncBufReadExt as _;

    let dir = std::env::temp_dir().join(format!(
        "toolkit-gateway-reload-subscribed-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("toolkit.toml");
    std::fs::write(&path, everything_sources(&["everything"])).unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut client = tokio::process::Command::new("node")
        .arg(root.join("toolkit-gateway/tests/gateway/subscriber.cjs"))
        .args([
            &architecture("everything"),
            "everything__toggle-subscriber-updates",
        ])
        .args([env!("CARGO_BIN_EXE_toolkit-gateway"), "--config"])
        .arg(&path)
        .env("NODE_PATH", root.join("target/peers/mcp-npm/node_modules"))
        .env("AFTER_RELOAD", "1")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(client.stdout.take().unwrap()).lines();
    let subscribed = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await;
    assert!(
        matches!(&subscribed, Ok(Ok(Some(line))) if line == "subscribed"),
        "{subscribed:?}"
    );
    std::fs::write(&path, everything_sources(&["everything", "second"])).unwrap();
    let told = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await;
    let line = told.ok().and_then(Result::ok).flatten().unwrap_or_default();
    let _ = client.wait().await;
    let seen: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|_| json!(line));
    assert_eq!(seen["reloaded"], true, "{seen}");
    let updated = seen["updated"].as_array().cloned().unwrap_or_default();
    assert!(!updated.is_empty(), "no update after the reload: {seen}");
    assert!(
        updated
            .iter()
            .all(|uri| *uri == json!(architecture("everything"))),
        "{seen}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
