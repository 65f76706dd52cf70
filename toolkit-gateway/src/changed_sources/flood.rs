//! Two stdio sources of one small peer (`flood_peer.cjs`, which counts the listings it answers):
//! one floods `list_changed` (tools, resources, prompts), and the gateway lists that one again
//! once per `catalog.min_refresh_seconds` and the other never; clients asking for resources,
//! templates and prompts over and over ask neither upstream again.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolkit_core::Toolkit;
use toolkit_serve::{McpServer, Resources};

use crate::Gateway;
use crate::config::Config;
use crate::serve::{Served, keep_refreshed};

/// The floor between two listings of one source, in seconds.
const FLOOR: u64 = 2;

/// A gateway of two sources, `flood` and `quiet`, both the peer, refreshed on an interval far
/// away and when a source says its lists changed.
fn config() -> Config {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/changed_sources/flood_peer.cjs");
    let text = format!(
        r#"
[catalog]
file = "{catalog}"
refresh_seconds = 3600
min_refresh_seconds = {FLOOR}

[policy]
default = "allow"

[[sources]]
name = "flood"
command = ["node", "{peer}"]

[[sources]]
name = "quiet"
command = ["node", "{peer}"]
"#,
        catalog = dir.join("catalog.json").display(),
        peer = peer.display(),
    );
    Config::parse(&text).unwrap()
}

/// How many listings of each kind `source`'s peer answered so far.
async fn counts(toolkit: &Toolkit, source: &str) -> Value {
    let answer = toolkit
        .call(&format!("{source}__counts"), json!({}))
        .await
        .unwrap();
    let text = answer
        .pointer("/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text in {answer}"));
    serde_json::from_str(text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_list_changed_lists_its_source_once_a_floor_and_no_other() {
    let mut gateway = Gateway::new(config()).unwrap();
    let refresh = gateway.refresh().await;
    assert!(refresh.failures.is_empty(), "{:?}", refresh.failures);
    let interval = gateway.refresh_interval();
    let changes = gateway.take_tools_changed();
    assert_eq!(changes.len(), 2);
    let resources = gateway.resources().watched(true);
    resources.probe().await;
    let server = McpServer::new(gateway.toolkit().unwrap()).resources(Arc::new(resources.clone()));
    let toolkit = server.toolkit_handle();
    let started = Instant::now();
    let served = Served {
        toolkit: toolkit.clone(),
        resources: resources.clone(),
        tasks: Arc::new(gateway.tasks()),
        auth: None,
    };
    tokio::spawn(keep_refreshed(gateway, served, interval, changes, None));

    // Clients asking for the lists again and again: each upstream listed once.
    for _ in 0..50 {
        assert_eq!(resources.list_resources().await.unwrap().len(), 2);
        assert_eq!(resources.list_prompts().await.unwrap().len(), 2);
        resources.list_resource_templates().await.unwrap();
    }
    let once = json!({"tools/list": 1, "resources/list": 1, "resources/templates/list": 1,
        "prompts/list": 1});
    assert_eq!(counts(&toolkit.current(), "quiet").await, once);
    assert_eq!(counts(&toolkit.current(), "flood").await, once);

    // A flood of changes, the last one adding a tool: served once listed after the floor.
    toolkit
        .current()
        .call("flood__flood", json!({"times": 600}))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while toolkit.current().get("flood__after").is_none() {
        assert!(
            Instant::now() < deadline,
            "the last change of the flood was never listed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed().as_secs();

    // The other source was not listed again, nor asked for its resources or prompts.
    assert_eq!(counts(&toolkit.current(), "quiet").await, once);
    // The flooding one: the start's listing, then one a floor at most.
    let flood = counts(&toolkit.current(), "flood").await;
    let most = 1 + elapsed / FLOOR;
    let listed = flood["tools/list"].as_u64().unwrap();
    assert!((2..=most).contains(&listed), "{flood} in {elapsed} s");
    drop(server);
}
