//! The lifetime a stateless server gives its `tools/list` (`ttlMs`, `cacheScope`), read from a
//! server of the Python SDK (`mcp==2.3.0`, `python_expiring_peer.py`), a huge one bounded.

use std::time::Duration;

use tokio::process::Command;
use toolkit_core::ToolSource;
use toolkit_mcp::{CacheScope, MAX_LIST_TTL, Mcp};

use super::processes::{free_port, installed, listening, script};
use super::quick;

async fn lifetime_of(ttl_ms: &str) -> toolkit_mcp::ListLifetime {
    let port = free_port();
    let mut command = Command::new(installed("mcp-python/bin/python"));
    command
        .arg(script("python_expiring_peer.py"))
        .arg(ttl_ms)
        .arg("http")
        .arg(port.to_string());
    let server = listening(command, port, "the expiring Python MCP server").await;
    let source = Mcp::http_with_options(
        "expiring",
        server.url("/mcp"),
        reqwest::Client::new(),
        quick(),
    );
    assert_eq!(source.list_lifetime(), None, "nothing listed yet");
    let handle = source.list_lifetime_handle();
    source.discover().await.unwrap();
    let lifetime = source.list_lifetime().unwrap();
    assert_eq!(handle.get(), Some(lifetime), "the handle reads the same");
    lifetime
}

#[tokio::test]
async fn mcp_list_lifetime_is_the_servers_ttl_and_scope() {
    let lifetime = lifetime_of("1500").await;
    assert_eq!(lifetime.ttl, Duration::from_millis(1500));
    assert_eq!(lifetime.scope, Some(CacheScope::Public));
    assert!(!lifetime.is_stale());
}

#[tokio::test]
async fn mcp_list_lifetime_a_huge_ttl_is_bounded() {
    let lifetime = lifetime_of("1000000000000000000000").await;
    assert_eq!(lifetime.ttl, MAX_LIST_TTL);
}
