//! The gateway reloaded without a restart (`toolkit-gen serve --config FILE`, the file changed
//! while it serves): a policy rule and a source added apply; a configuration that does not check,
//! or changes what needs a restart, is refused and the running one keeps serving; and the
//! TypeScript and Python SDKs' clients keep their sessions across a reload and hear
//! `notifications/tools/list_changed`.

use std::time::{Duration, Instant};

use serde_json::json;
use toolkit_runtime::mcp::Mcp;
use toolkit_runtime::{CallContext, ToolSource};

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
        .args([env!("CARGO_BIN_EXE_toolkit-gen"), "serve", "--config"])
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
        .arg(root.join("toolkit-cli/tests/cli/reload_client.cjs"))
        .env("NODE_PATH", root.join("target/peers/mcp-npm/node_modules"));
    let mut python = tokio::process::Command::new(root.join("target/peers/mcp-python/bin/python"));
    python.arg(root.join("toolkit-cli/tests/cli/reload_client.py"));
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
    use toolkit_runtime::mcp::CacheScope;

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
