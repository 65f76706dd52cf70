//! The gateway's resources served to several sessions at once, in front of npm
//! `@modelcontextprotocol/server-everything` (stdio, installed by `scripts/install-test-peers`):
//! one session's unsubscribe (or end) leaves the others' updates coming, sessions that subscribe
//! and unsubscribe at once leave the upstream subscribed exactly when one is, a change of the
//! resources served is told to the session clients, and the reads, prompts and completions
//! passed to the upstream are counted in the metrics.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::{CallContext, JsonObject, ToolSource};
use toolkit_mcp::{Mcp, ResourcesUpdated};
use toolkit_serve::{CancellationToken, McpServer, Resources, bind_loopback};

use super::Upstreams;
use crate::Gateway;
use crate::config::Config;

const ARCHITECTURE: &str = "demo://everything/resource/static/document/architecture.md";
const TOGGLE: &str = "everything__toggle-subscriber-updates";

/// `dist/index.js` of the installed server-everything.
pub(crate) fn everything() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../target/peers/mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// The gateway in front of server-everything, served over Streamable HTTP with sessions (the
/// session revision 2025-11-25 only) on a port of its own, refreshed every `refresh_seconds`
/// (never for 0) as `serve` refreshes it.
struct Served {
    url: url::Url,
    resources: Upstreams,
    stop: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The configuration of a gateway (named `name`, for its catalog's directory) of
/// server-everything as source `everything`, refreshed every `refresh_seconds`.
pub(crate) fn config(name: &str, refresh_seconds: u64) -> Config {
    let dir = std::env::temp_dir().join(format!(
        "toolkit-gateway-sessions-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        r#"
[catalog]
file = "{catalog}"
refresh_seconds = {refresh_seconds}
min_refresh_seconds = 1

[policy]
default = "allow"

[[sources]]
name = "everything"
command = ["node", "{server}", "stdio"]
"#,
        catalog = dir.join("catalog.json").display(),
        server = everything().display()
    );
    Config::parse(&config).unwrap()
}

async fn served(name: &str, refresh_seconds: u64) -> Served {
    served_hearing(name, refresh_seconds, false).await
}

/// [`served`], hearing its source say that its lists changed when `hears` (as `serve` does),
/// and so refreshing then.
async fn served_hearing(name: &str, refresh_seconds: u64, hears: bool) -> Served {
    let mut gateway = Gateway::new(config(name, refresh_seconds)).unwrap();
    let refresh = gateway.refresh().await;
    assert!(refresh.failures.is_empty(), "{:?}", refresh.failures);
    let interval = gateway.refresh_interval();
    let changes = if hears {
        gateway.take_tools_changed()
    } else {
        Vec::new()
    };
    let watched = crate::serve::lists_watched(interval, &changes);
    let resources = gateway.resources().watched(watched);
    resources.probe().await;
    let server = McpServer::new(gateway.toolkit().unwrap())
        .resources(Arc::new(resources.clone()))
        .protocol_versions(["2025-11-25"]);
    if watched {
        let served = crate::serve::Served {
            toolkit: server.toolkit_handle(),
            resources: resources.clone(),
            tasks: Arc::new(gateway.tasks()),
            auth: None,
        };
        tokio::spawn(crate::serve::keep_refreshed(
            gateway, served, interval, changes, None,
        ));
    }
    let listener = bind_loopback(0).await.unwrap();
    let address = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(server.serve_http_until(listener, stop.clone().cancelled_owned()));
    Served {
        url: format!("http://{address}/mcp").parse().unwrap(),
        resources,
        stop,
    }
}

/// A client of the gateway in a session of its own.
fn session(served: &Served, name: &str) -> (Mcp, ResourcesUpdated) {
    let client = Mcp::http(name, served.url.clone(), reqwest::Client::new());
    let updates = client.resources_updated().unwrap();
    (client, updates)
}

/// The next URI `updates` hears within `wait`, if any.
async fn next(updates: &mut ResourcesUpdated, wait: Duration) -> Option<String> {
    tokio::time::timeout(wait, updates.next())
        .await
        .ok()
        .flatten()
}

/// Forgets what `updates` heard so far.
async fn drain(updates: &mut ResourcesUpdated) {
    while next(updates, Duration::from_millis(20)).await.is_some() {}
}

/// The next URI the gateway hears from its upstream within `wait`, if any.
async fn upstream_next(
    updates: &mut tokio::sync::broadcast::Receiver<String>,
    wait: Duration,
) -> Option<String> {
    loop {
        match tokio::time::timeout(wait, updates.recv()).await {
            Ok(Ok(uri)) => return Some(uri),
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(_)) | Err(_) => return None,
        }
    }
}

async fn upstream_drain(updates: &mut tokio::sync::broadcast::Receiver<String>) {
    while upstream_next(updates, Duration::from_millis(20))
        .await
        .is_some()
    {}
}

/// Turns server-everything's simulated updates on (once at once, then every 5 s, to the URIs
/// the gateway is subscribed to upstream).
async fn toggle(client: &Mcp) {
    let answer = client
        .call(TOGGLE, JsonObject::new(), &CallContext::new())
        .await
        .unwrap();
    assert!(answer.to_string().contains("tarted"), "{answer}");
}

/// Longer than server-everything's 5 s between updates.
const A_ROUND: Duration = Duration::from_secs(8);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sessions_unsubscribe_or_end_leaves_another_sessions_updates_coming() {
    let served = served("two", 0).await;
    let (a, mut a_updates) = session(&served, "a");
    let (b, mut b_updates) = session(&served, "b");
    a.subscribe_resource(ARCHITECTURE).await.unwrap();
    b.subscribe_resource(ARCHITECTURE).await.unwrap();
    toggle(&a).await;
    assert_eq!(
        next(&mut a_updates, A_ROUND).await.as_deref(),
        Some(ARCHITECTURE)
    );
    assert_eq!(
        next(&mut b_updates, A_ROUND).await.as_deref(),
        Some(ARCHITECTURE)
    );

    // a leaves: b still hears the upstream's updates, a does not.
    a.unsubscribe_resource(ARCHITECTURE).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    drain(&mut a_updates).await;
    drain(&mut b_updates).await;
    assert_eq!(
        next(&mut b_updates, A_ROUND).await.as_deref(),
        Some(ARCHITECTURE),
        "b's updates stopped when a unsubscribed"
    );
    assert_eq!(next(&mut a_updates, Duration::from_millis(100)).await, None);

    // b's session ends: no session is subscribed, so the upstream is not either.
    let mut upstream = served.resources.updated().unwrap();
    b.close().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    upstream_drain(&mut upstream).await;
    assert_eq!(
        upstream_next(&mut upstream, A_ROUND).await,
        None,
        "the upstream is still subscribed after the last session ended"
    );
    a.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_subscribing_and_unsubscribing_at_once_leave_the_upstream_right() {
    let served = served("race", 0).await;
    let mut upstream = served.resources.updated().unwrap();
    let sessions: Vec<Mcp> = (0..8)
        .map(|n| session(&served, &format!("s{n}")).0)
        .collect();
    toggle(&sessions[0]).await;
    // Each session subscribes and unsubscribes a few times, all at once; the odd ones end
    // subscribed.
    let racing = sessions.iter().enumerate().map(|(n, client)| async move {
        for _ in 0..4 {
            client.subscribe_resource(ARCHITECTURE).await.unwrap();
            client.unsubscribe_resource(ARCHITECTURE).await.unwrap();
        }
        if n % 2 == 1 {
            client.subscribe_resource(ARCHITECTURE).await.unwrap();
        }
    });
    futures_util::future::join_all(racing).await;
    upstream_drain(&mut upstream).await;
    assert_eq!(
        upstream_next(&mut upstream, A_ROUND).await.as_deref(),
        Some(ARCHITECTURE),
        "four sessions are subscribed, but the upstream is not"
    );

    // Two of the subscribed unsubscribe, two end: then none is, nor the upstream.
    for (n, client) in sessions.iter().enumerate().filter(|(n, _)| n % 2 == 1) {
        if n % 4 == 1 {
            client.unsubscribe_resource(ARCHITECTURE).await.unwrap();
        } else {
            client.close().await;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    upstream_drain(&mut upstream).await;
    assert_eq!(
        upstream_next(&mut upstream, A_ROUND).await,
        None,
        "the upstream is still subscribed after every session left"
    );
    for client in &sessions {
        client.close().await;
    }
}

/// A session client that reads its session's stream itself (the runtime's client does not
/// pass on list changes): what `initialize` answered, and the stream.
struct RawSession {
    capabilities: Value,
    stream: reqwest::Response,
}

const REVISION: &str = "2025-11-25";

impl RawSession {
    async fn open(url: &url::Url) -> Self {
        let http = reqwest::Client::new();
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": REVISION, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let answered = http
            .post(url.clone())
            .header("accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
            .await
            .unwrap();
        let id = answered.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let body = answered.text().await.unwrap();
        let answer: Value = body
            .lines()
            .find_map(|line| serde_json::from_str(line.strip_prefix("data:")?.trim()).ok())
            .unwrap_or_else(|| panic!("no answer to initialize: {body}"));
        let initialized = http
            .post(url.clone())
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &id)
            .header("mcp-protocol-version", REVISION)
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert!(initialized.status().is_success(), "{initialized:?}");
        let stream = http
            .get(url.clone())
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &id)
            .header("mcp-protocol-version", REVISION)
            .send()
            .await
            .unwrap();
        assert!(stream.status().is_success(), "{stream:?}");
        Self {
            capabilities: answer["result"]["capabilities"].clone(),
            stream,
        }
    }

    /// Reads the stream until it carries `method`, within `wait`.
    async fn hears(&mut self, method: &str, wait: Duration) -> bool {
        let mut read = String::new();
        let reading = async {
            while let Ok(Some(chunk)) = self.stream.chunk().await {
                read.push_str(&String::from_utf8_lossy(&chunk));
                if read.contains(method) {
                    return true;
                }
            }
            false
        };
        tokio::time::timeout(wait, reading).await.unwrap_or(false)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_of_the_resources_served_is_told_to_the_session_clients() {
    // Without a refresh, and deaf to what its source says, no change could be told:
    // listChanged is not advertised.
    let still = served("still", 0).await;
    let offer = Resources::offer(&still.resources);
    assert!(offer.resources && offer.prompts);
    assert!(!offer.resources_list_changed && !offer.prompts_list_changed);
    let raw = RawSession::open(&still.url).await;
    assert_eq!(raw.capabilities["resources"].get("listChanged"), None);
    drop(still);

    // Never refreshed: the change is told when the upstream says its resources changed
    // (server-everything's SDK server sends `notifications/resources/list_changed` as a
    // resource is registered).
    let served = served_hearing("changing", 0, true).await;
    let mut raw = RawSession::open(&served.url).await;
    assert_eq!(raw.capabilities["resources"]["listChanged"], true);
    assert_eq!(raw.capabilities["prompts"]["listChanged"], true);
    // server-everything's gzip tool adds a resource of its session (upstream, the gateway's).
    let (caller, _) = session(&served, "caller");
    let gzip = json!({"name": "note.txt.gz", "data": "data:text/plain;base64,aGVsbG8=",
        "outputType": "resourceLink"});
    caller
        .call(
            "everything__gzip-file-as-resource",
            gzip.as_object().cloned().unwrap(),
            &CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        raw.hears(
            "notifications/resources/list_changed",
            Duration::from_secs(10)
        )
        .await,
        "the session client was not told that the resources changed"
    );
    let listed = caller.list_resources().await.unwrap();
    assert!(
        listed
            .iter()
            .any(|resource| resource["uri"] == "demo://everything/resource/session/note.txt.gz"),
        "{listed:?}"
    );
    caller.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_prompts_and_completions_passed_to_an_upstream_are_counted() {
    let mut gateway = Gateway::new(config("metered", 0)).unwrap();
    let refresh = gateway.refresh().await;
    assert!(refresh.failures.is_empty(), "{:?}", refresh.failures);
    let resources = gateway.resources();
    resources.read_resource(ARCHITECTURE).await.unwrap();
    resources
        .read_resource("demo://everything/resource/static/document/no-such.md")
        .await
        .unwrap_err();
    resources
        .get_prompt("everything__simple-prompt", JsonObject::new())
        .await
        .unwrap();
    let completion = json!({
        "ref": {"type": "ref/prompt", "name": "everything__completable-prompt"},
        "argument": {"name": "department", "value": "E"},
    });
    resources
        .complete(completion.as_object().cloned().unwrap())
        .await
        .unwrap();
    let metrics = gateway.metrics().render();
    let requests = |method: &str, outcome: &str| {
        format!(
            r#"toolkit_gateway_upstream_requests_total{{source="everything",method="{method}",outcome="{outcome}"}} 1"#
        )
    };
    for line in [
        requests("resources/read", "ok"),
        requests("prompts/get", "ok"),
        requests("completion/complete", "ok"),
        r#"toolkit_gateway_upstream_request_duration_seconds_count{source="everything",method="resources/read"} 2"#.to_owned(),
    ] {
        assert!(metrics.contains(&line), "{line} is not in\n{metrics}");
    }
    // The failed read: counted under its reason, and as an upstream error.
    let failed = metrics
        .lines()
        .find(|line| {
            line.starts_with(
                r#"toolkit_gateway_upstream_requests_total{source="everything",method="resources/read",outcome="#,
            ) && !line.contains(r#"outcome="ok""#)
        })
        .unwrap_or_else(|| panic!("the failed read is not counted:\n{metrics}"));
    assert!(failed.ends_with(" 1"), "{failed}");
    assert!(
        metrics.contains(r#"toolkit_gateway_upstream_errors_total{source="everything""#),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_a_result_links_or_embeds_reads_back_through_the_gateway() {
    let served = served("links", 0).await;
    let (client, _) = session(&served, "links");
    let arguments = |value: Value| value.as_object().cloned().unwrap();
    let linked = client
        .call(
            "everything__get-resource-links",
            arguments(json!({"count": 1})),
            &CallContext::new(),
        )
        .await
        .unwrap();
    let link = linked
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no link in {linked}"));
    let embedded = client
        .call(
            "everything__get-resource-reference",
            arguments(json!({"resourceType": "Text", "resourceId": 1})),
            &CallContext::new(),
        )
        .await
        .unwrap();
    let resource = embedded
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "resource")
        .unwrap_or_else(|| panic!("no embedded resource in {embedded}"));
    for uri in [&link["uri"], &resource["resource"]["uri"]] {
        let uri = uri.as_str().unwrap();
        assert!(uri.starts_with("demo://everything/"), "{uri}");
        let read = client.read_resource(uri).await.unwrap();
        assert_eq!(read["contents"][0]["uri"], uri, "{read:?}");
    }
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_prompts_passed_to_an_upstream_are_audited_with_who_asked() {
    let mut config = config("audited", 0);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.jsonl");
    config.audit = Some(crate::config::AuditConfig {
        file: Some(file.clone()),
        max_bytes: 1 << 20,
        keep: 1,
        stdout: false,
        include_inputs: false,
    });
    let mut gateway = Gateway::new(config).unwrap();
    let refresh = gateway.refresh().await;
    assert!(refresh.failures.is_empty(), "{:?}", refresh.failures);
    let resources = gateway.resources();
    let asker = CallContext::new()
        .with_extension(toolkit_core::context::Principal::token("carol"))
        .with_extension(toolkit_core::context::Session::new("s-9"));
    resources
        .read_resource_for(ARCHITECTURE, &asker)
        .await
        .unwrap();
    let arguments = json!({"city": "a-city-never-recorded"});
    resources
        .get_prompt_for(
            "everything__args-prompt",
            arguments.as_object().cloned().unwrap(),
            &asker,
        )
        .await
        .unwrap();
    // Not routed (no such prompt is served): it reached no source, and is not recorded.
    resources
        .get_prompt_for("nowhere__prompt", JsonObject::new(), &asker)
        .await
        .unwrap_err();
    let audit = gateway.audit().unwrap();
    assert_eq!(audit.finish(Duration::from_secs(5)).await, 0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("a-city-never-recorded"), "{text}");
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{text}");
    assert_eq!(records[0]["kind"], "resource_read");
    // The URI at the source, as the prompt's name is.
    assert_eq!(
        records[0]["uri"],
        "demo://resource/static/document/architecture.md"
    );
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(records[1]["kind"], "prompt_get");
    assert_eq!(records[1]["prompt"], "args-prompt");
    assert_eq!(records[1]["outcome"], "ok");
    for record in &records {
        assert_eq!(record["principal"], "token:carol");
        assert_eq!(record["session"], "s-9");
        assert_eq!(record["source"], "everything");
        assert_eq!(record["decision"], "allow");
    }
}
