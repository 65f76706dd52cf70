//! The gateway's resilience layers (`[sources.resilience]`), as an agent meets them through
//! `toolkit-gateway`: an API upstream on 127.0.0.1 that flaps, then goes down. The retry hides
//! the flap of a read-only tool; the breaker opens on the failures and then answers at once
//! without asking the upstream; the audit record says which layer answered. A configuration whose
//! settings contradict each other is refused with the key that says it.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use toolkit_core::{CallContext, ToolSource};

use crate::items_api::{DOCUMENT, Upstream, start};

fn config(base: &str, breaker_window: u32) -> String {
    format!(
        r#"
[policy]
default = "allow"

[audit]
file = "audit.jsonl"

[[sources]]
name = "items"
openapi = "items.json"
base_url = "{base}"

[sources.resilience]
retry = {{ attempts = 3, min_delay_ms = 10, max_delay_ms = 100 }}
breaker = {{ failure_rate = 0.75, window_seconds = {breaker_window}, minimum_calls = 4, open_seconds = 60, half_open_calls = 1 }}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retry_hides_a_flap_and_the_open_breaker_answers_without_the_upstream() {
    let dir =
        std::env::temp_dir().join(format!("toolkit-gateway-resilience-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("items.json"), DOCUMENT).unwrap();
    let upstream = Upstream::default();
    let base = start(upstream.clone()).await;
    let served = crate::support::gateway(&dir, &config(&base, 60));
    served.discover().await.unwrap();
    let context = CallContext::new();
    let empty = || json!({}).as_object().cloned().unwrap();

    // A flap of the read-only tool is retried: the agent reads the items.
    upstream.failing.store(1, Ordering::SeqCst);
    let listed = served.call("items__listItems", empty(), &context).await;
    assert!(
        listed
            .as_ref()
            .is_ok_and(|answer| answer.to_string().contains("\"a\"")),
        "{listed:?}"
    );
    assert_eq!(upstream.requests.load(Ordering::SeqCst), 2);

    // The upstream goes down: two failed creations (not retried) open the breaker, which counts
    // each attempt: 3 of the last 4 failed.
    upstream.failing.store(usize::MAX, Ordering::SeqCst);
    for _ in 0..2 {
        let created = served.call("items__createItem", empty(), &context).await;
        assert!(created.is_err(), "{created:?}");
    }
    assert_eq!(upstream.requests.load(Ordering::SeqCst), 4);
    let refused = served.call("items__createItem", empty(), &context).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(
        upstream.requests.load(Ordering::SeqCst),
        4,
        "the open breaker sent nothing"
    );
    drop(served);

    // The gateway writes its last records as it ends, once its stdin is closed.
    let mut audit = String::new();
    for _ in 0..100 {
        audit = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap_or_default();
        if audit.lines().count() >= 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let records: Vec<Value> = audit
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let layers: Vec<(&str, Option<&str>)> = records
        .iter()
        .map(|record| {
            (
                record["outcome"].as_str().unwrap_or_default(),
                record["answered_by"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        layers,
        [
            ("ok", None),
            ("unavailable", None),
            ("unavailable", None),
            ("unavailable", Some("breaker"))
        ],
        "{audit}"
    );

    // A breaker whose window is shorter than the source's timeout (30 s) is refused by its key.
    std::fs::write(dir.join("toolkit.toml"), config(&base, 5)).unwrap();
    let config = dir.join("toolkit.toml");
    let (code, _, stderr) = crate::support::run(&["--config", config.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains(
            "`resilience.breaker.window_seconds` (5 s) is shorter than timeout_seconds (30 s)"
        ),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// npm server-everything over Streamable HTTP on a free port, killed when dropped; its port.
async fn everything_over_http() -> (tokio::process::Child, u16) {
    let port = crate::support::free_port();
    let child = tokio::process::Command::new("node")
        .arg(crate::support::peer(
            "mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        ))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "server-everything did not listen"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    (child, port)
}

/// Two replicas of server-everything behind one source (`url` and `failover`): when the first
/// is killed, the retry of a tool the configuration says is safe to repeat goes to the second,
/// and the agent reads its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replica_is_failed_over_to_the_healthy_one() {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-failover-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut first, first_port) = everything_over_http().await;
    let (_second, second_port) = everything_over_http().await;
    let served = crate::support::gateway(
        &dir,
        &format!(
            r#"
[policy]
default = "allow"

[[sources]]
name = "everything"
url = "http://127.0.0.1:{first_port}/mcp"
failover = ["http://127.0.0.1:{second_port}/mcp"]

[sources.resilience]
retry = {{ attempts = 2, min_delay_ms = 10, max_delay_ms = 100, tools = ["echo"] }}
"#
        ),
    );
    served.discover().await.unwrap();
    let context = CallContext::new();
    let echo = |text: &str| json!({ "message": text }).as_object().cloned().unwrap();
    let answer = served.call("everything__echo", echo("one"), &context).await;
    assert!(
        answer
            .as_ref()
            .is_ok_and(|answer| answer.to_string().contains("one")),
        "{answer:?}"
    );

    first.kill().await.unwrap();
    let answer = served.call("everything__echo", echo("two"), &context).await;
    assert!(
        answer
            .as_ref()
            .is_ok_and(|answer| answer.to_string().contains("two")),
        "{answer:?}"
    );
    // The dead replica is left out: the next call goes straight to the healthy one.
    let answer = served
        .call("everything__echo", echo("three"), &context)
        .await;
    assert!(
        answer
            .as_ref()
            .is_ok_and(|answer| answer.to_string().contains("three")),
        "{answer:?}"
    );
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}
