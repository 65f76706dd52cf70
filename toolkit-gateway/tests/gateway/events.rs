//! Events (SEP-3415, `io.modelcontextprotocol/events`): the runtime's MCP client lists a
//! server's event types and receives its events by poll and by push, over stdio and over
//! Streamable HTTP, in the stateless revision 2026-07-28. The server is `events_server.py`
//! (plain Python, a fixture of our own: no release of server-everything or FastMCP in the
//! registries serves events yet), which serves them as server-everything does: `clock-tick`
//! (replayable, only its last ticks kept), `custom-event` (push only, raised by a tool) and
//! `bad-event` (one payload breaking its schema). A stream outlives the server's process
//! (killed in the middle, started again by the transport; over HTTP, a server gone and back)
//! and a connection gone silent, resuming from its cursor each time.
#![allow(clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use toolkit_core::{CallContext, JsonObject, Reason, ToolSource};
use toolkit_mcp::{
    Delivery, DeliveryMode, EventOptions, EventStream, EventType, Mcp, StdioCommand,
};

/// How long a tick of the fixture's clock is.
const TICK_MS: u64 = 100;

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// The fixture over stdio, its clock started `ticks_ago` ticks ago (the same clock each time the
/// transport starts it again).
fn server(ticks_ago: u64) -> Arc<Mcp> {
    let command = StdioCommand::new("python3")
        .arg(crate::support::root().join("toolkit-gateway/tests/gateway/events_server.py"))
        .env("EVENTS_TICK_MS", TICK_MS.to_string())
        .env("EVENTS_RETAIN", "10")
        .env("EVENTS_HEARTBEAT_MS", "200")
        .env(
            "EVENTS_EPOCH_MS",
            (now_ms() - ticks_ago * TICK_MS).to_string(),
        );
    Arc::new(Mcp::stdio("events", command))
}

fn object(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap()
}

async fn event_type(mcp: &Mcp, name: &str) -> EventType {
    let types = mcp.list_events().await.unwrap();
    types
        .into_iter()
        .find(|event| event.name == name)
        .unwrap_or_else(|| panic!("no event type {name}"))
}

/// The next delivery of `stream`, within 10 seconds.
async fn next(stream: &mut EventStream) -> Delivery {
    match tokio::time::timeout(Duration::from_secs(10), stream.next()).await {
        Ok(Some(Ok(delivery))) => delivery,
        Ok(other) => panic!("the stream ended: {other:?}"),
        Err(_) => panic!("no delivery within 10 seconds"),
    }
}

/// The tick of a clock-tick delivery, if it is an event.
fn tick(delivery: &Delivery) -> Option<u64> {
    match delivery {
        Delivery::Event(event) => {
            let tick = event.data["tick"].as_u64().unwrap();
            assert_eq!(event.cursor, Some(tick.to_string()), "{event:?}");
            Some(tick)
        }
        _ => None,
    }
}

async fn call(mcp: &Mcp, tool: &str, input: Value) -> Value {
    mcp.call(tool, object(input), &CallContext::new())
        .await
        .unwrap()
}

fn fast() -> EventOptions {
    EventOptions::default()
        .reconnect_wait(Duration::from_millis(100))
        .heartbeat_timeout(Duration::from_secs(5))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_types_are_listed_with_their_delivery_modes_and_schemas() {
    let mcp = server(0);
    assert!(mcp.has_events().await.unwrap());
    let types = mcp.list_events().await.unwrap();
    let names: Vec<&str> = types.iter().map(|event| event.name.as_str()).collect();
    assert_eq!(names, ["clock-tick", "custom-event", "bad-event"]);
    let clock = &types[0];
    assert_eq!(clock.delivery, [DeliveryMode::Poll, DeliveryMode::Push]);
    assert_eq!(
        clock.payload_schema["required"],
        json!(["tick", "at"]),
        "{clock:?}"
    );
    assert_eq!(
        clock.input_schema["properties"]["every"]["minimum"],
        json!(1)
    );
    assert!(clock.description.contains("Replayable"), "{clock:?}");
    assert_eq!(types[1].delivery, [DeliveryMode::Push]);

    // A type the server does not have is refused by it, by its code (NotFound).
    let mut unknown = clock.clone();
    unknown.name = "no-such-event".into();
    let refused = mcp
        .poll_events(&unknown, JsonObject::new(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(refused.reason, Reason::NotFound { .. }),
        "{refused}"
    );
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_resumes_from_its_cursor_and_an_old_cursor_is_truncated() {
    let mcp = server(60);
    let clock = event_type(&mcp, "clock-tick").await;

    // No cursor: from now, no events.
    let first = mcp
        .poll_events(&clock, JsonObject::new(), None)
        .await
        .unwrap();
    assert!(first.events.is_empty() && !first.truncated, "{first:?}");
    assert_eq!(first.next_poll, Some(Duration::from_millis(TICK_MS)));
    let start: u64 = first.cursor.as_deref().unwrap().parse().unwrap();

    // From it: each tick since, once, in order, and the cursor of the last.
    tokio::time::sleep(Duration::from_millis(4 * TICK_MS)).await;
    let second = mcp
        .poll_events(&clock, JsonObject::new(), first.cursor.as_deref())
        .await
        .unwrap();
    let ticks: Vec<u64> = second
        .events
        .iter()
        .map(|event| event.data["tick"].as_u64().unwrap())
        .collect();
    assert!(ticks.len() >= 3, "{second:?}");
    assert_eq!(
        ticks,
        (start + 1..=start + ticks.len() as u64).collect::<Vec<_>>()
    );
    assert!(!second.truncated && second.refused.is_empty(), "{second:?}");
    assert_eq!(second.cursor, Some(ticks[ticks.len() - 1].to_string()));
    assert_eq!(second.events[0].event_id, format!("tick-{}", start + 1));

    // Resumed from that cursor: nothing delivered twice, nothing skipped.
    tokio::time::sleep(Duration::from_millis(2 * TICK_MS)).await;
    let third = mcp
        .poll_events(&clock, JsonObject::new(), second.cursor.as_deref())
        .await
        .unwrap();
    let next_tick = third.events[0].data["tick"].as_u64().unwrap();
    assert_eq!(next_tick, ticks[ticks.len() - 1] + 1, "{third:?}");

    // A cursor older than the server keeps (its last 10 ticks): the gap said, delivery from
    // the oldest kept.
    let old = mcp
        .poll_events(&clock, JsonObject::new(), Some("3"))
        .await
        .unwrap();
    assert!(old.truncated, "{old:?}");
    assert!(!old.events.is_empty() && old.events.len() <= 10, "{old:?}");
    let oldest_kept = old.events[0].data["tick"].as_u64().unwrap();
    assert!(oldest_kept > 50, "{old:?}");

    // Arguments the inputSchema does not take are refused before anything is sent.
    let wrong = mcp
        .poll_events(&clock, object(json!({"every": "2", "bogus": 1})), None)
        .await
        .unwrap_err();
    let said = wrong.to_string();
    assert!(
        matches!(wrong.reason, Reason::InvalidInput { .. }),
        "{said}"
    );
    assert!(said.contains("unknown property \"bogus\""), "{said}");
    assert!(said.contains("/every"), "{said}");
    // A push-only type is not polled.
    let custom = event_type(&mcp, "custom-event").await;
    let push_only = mcp
        .poll_events(&custom, JsonObject::new(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(push_only.reason, Reason::Unsupported { .. })
            && push_only.to_string().contains("not delivered by poll"),
        "{push_only}"
    );
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_stream_receives_an_event_a_tool_raises() {
    let mcp = server(0);
    let custom = event_type(&mcp, "custom-event").await;
    let mut stream = mcp
        .stream_events(&custom, JsonObject::new(), None, fast())
        .await
        .unwrap();
    assert_eq!(
        next(&mut stream).await,
        Delivery::Active {
            cursor: None,
            truncated: false
        }
    );
    let said = call(&mcp, "trigger-event", json!({"message": "deploy finished"})).await;
    assert_eq!(
        said,
        json!([{"type": "text", "text": "raised 1 custom-event on 1 stream(s)"}])
    );
    match next(&mut stream).await {
        Delivery::Event(event) => {
            assert_eq!(event.name, "custom-event");
            assert_eq!(event.data["message"], "deploy finished");
            assert!(event.event_id.starts_with("custom-"), "{event:?}");
            assert_eq!(event.cursor, None, "no replay: no cursor");
            assert_eq!(event.meta, None, "the subscription id is the transport's");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(stream.cursor(), None);

    // The server ends the subscription (access revoked): the stream ends with its reason.
    call(&mcp, "terminate-streams", json!({})).await;
    let ended = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap();
    match ended {
        Some(Err(error)) => {
            assert!(
                matches!(error.reason, Reason::Authentication { .. }),
                "{error}"
            );
            assert!(error.to_string().contains("terminated"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(stream.next().await.is_none());
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_stream_resumes_from_its_cursor_when_the_server_process_is_killed() {
    let mcp = server(0);
    let clock = event_type(&mcp, "clock-tick").await;
    let start = mcp
        .poll_events(&clock, JsonObject::new(), None)
        .await
        .unwrap()
        .cursor
        .unwrap();
    assert_eq!(mcp.connection(), 1);
    let mut stream = mcp
        .stream_events(&clock, JsonObject::new(), Some(start.clone()), fast())
        .await
        .unwrap();
    assert_eq!(
        next(&mut stream).await,
        Delivery::Active {
            cursor: Some(start.clone()),
            truncated: false
        }
    );
    let mut ticks = Vec::new();
    while ticks.len() < 3 {
        ticks.extend(tick(&next(&mut stream).await));
    }
    // The process exits in the middle of the stream, as a crash.
    call(&mcp, "exit-after", json!({"events": 2})).await;
    let mut resumed_from = None;
    while resumed_from.is_none() || ticks.len() < 12 {
        let delivery = next(&mut stream).await;
        match &delivery {
            Delivery::Active { cursor, truncated } => {
                assert!(!truncated, "resumed within what the server keeps");
                resumed_from = Some((cursor.clone(), ticks.len()));
            }
            other => ticks.extend(tick(other)),
        }
    }
    let start: u64 = start.parse().unwrap();
    assert_eq!(
        ticks,
        (start + 1..=start + ticks.len() as u64).collect::<Vec<_>>(),
        "every tick once, in order, across the restart"
    );
    let (cursor, at) = resumed_from.unwrap();
    assert_eq!(
        cursor,
        Some(ticks[at - 1].to_string()),
        "connected again from the last cursor heard"
    );
    assert_eq!(mcp.connection(), 2, "the process was started again");
    drop(stream);
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_stream_gone_silent_is_connected_again_from_its_cursor() {
    let mcp = server(0);
    let clock = event_type(&mcp, "clock-tick").await;
    let options = fast().heartbeat_timeout(Duration::from_millis(800));
    let mut stream = mcp
        .stream_events(&clock, JsonObject::new(), None, options)
        .await
        .unwrap();
    assert!(matches!(next(&mut stream).await, Delivery::Active { .. }));
    let mut ticks = Vec::new();
    while ticks.len() < 2 {
        ticks.extend(tick(&next(&mut stream).await));
    }
    // The stream stops saying anything, heartbeats included, without closing.
    call(&mcp, "freeze-streams", json!({})).await;
    let mut active_again = false;
    while !active_again || ticks.len() < 8 {
        match next(&mut stream).await {
            Delivery::Active { .. } => active_again = true,
            other => ticks.extend(tick(&other)),
        }
    }
    let first = ticks[0];
    assert_eq!(
        ticks,
        (first..first + ticks.len() as u64).collect::<Vec<_>>(),
        "every tick once, in order, across the reconnection"
    );
    assert_eq!(mcp.connection(), 1, "the same process, a new request");
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_breaking_its_payload_schema_is_refused_and_not_delivered() {
    let mcp = server(0);
    let bad = event_type(&mcp, "bad-event").await;

    let first = mcp
        .poll_events(&bad, JsonObject::new(), None)
        .await
        .unwrap();
    let batch = mcp
        .poll_events(&bad, JsonObject::new(), first.cursor.as_deref())
        .await
        .unwrap();
    let delivered: Vec<&str> = batch.events.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(delivered, ["bad-2"], "{batch:?}");
    assert_eq!(batch.refused.len(), 1, "{batch:?}");
    let refused = &batch.refused[0];
    assert_eq!(refused.event_id.as_deref(), Some("bad-1"));
    assert!(
        refused.problem.contains("breaks its payloadSchema")
            && refused
                .problem
                .contains("expected integer, got a string at /level"),
        "{refused}"
    );
    assert!(
        !refused.problem.contains("high"),
        "nothing of its payload is kept: {refused}"
    );
    assert_eq!(batch.cursor.as_deref(), Some("2"));

    let mut stream = mcp
        .stream_events(&bad, JsonObject::new(), None, fast())
        .await
        .unwrap();
    assert!(matches!(next(&mut stream).await, Delivery::Active { .. }));
    match next(&mut stream).await {
        Delivery::Refused(refused) => {
            assert_eq!(refused.event_id.as_deref(), Some("bad-1"));
            assert!(refused.problem.contains("/level"), "{refused}");
        }
        other => panic!("{other:?}"),
    }
    match next(&mut stream).await {
        Delivery::Event(event) => {
            assert_eq!(event.event_id, "bad-2");
            assert_eq!(event.data["level"], 2);
        }
        other => panic!("{other:?}"),
    }
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_falls_behind_loses_the_oldest_deliveries_and_is_told() {
    let mcp = server(0);
    let custom = event_type(&mcp, "custom-event").await;
    let mut stream = mcp
        .stream_events(&custom, JsonObject::new(), None, fast().max_buffered(4))
        .await
        .unwrap();
    assert!(matches!(next(&mut stream).await, Delivery::Active { .. }));
    // Twenty events, none taken: the server writes them all before it answers the call.
    call(
        &mcp,
        "trigger-event",
        json!({"message": "burst", "count": 20}),
    )
    .await;
    assert_eq!(next(&mut stream).await, Delivery::Truncated { dropped: 16 });
    let mut kept = Vec::new();
    for _ in 0..4 {
        match next(&mut stream).await {
            Delivery::Event(event) => kept.push(event.data["seq"].as_u64().unwrap()),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(kept, [16, 17, 18, 19], "the newest kept, in order");
    // The stream goes on: the next event is delivered as usual.
    call(&mcp, "trigger-event", json!({"message": "after"})).await;
    match next(&mut stream).await {
        Delivery::Event(event) => assert_eq!(event.data["message"], "after"),
        other => panic!("{other:?}"),
    }
    mcp.close().await;
}

/// The fixture over Streamable HTTP on `port`, its clock started at `epoch_ms`; killed when
/// dropped.
fn http_server(port: u16, epoch_ms: u64) -> crate::support::Killed {
    let child = std::process::Command::new("python3")
        .arg(crate::support::root().join("toolkit-gateway/tests/gateway/events_server.py"))
        .args(["--http", &port.to_string()])
        .env("EVENTS_TICK_MS", TICK_MS.to_string())
        .env("EVENTS_HEARTBEAT_MS", "200")
        .env("EVENTS_EPOCH_MS", epoch_ms.to_string())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the fixture did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    crate::support::Killed(child)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_streamable_http_a_push_stream_outlives_its_server_and_resumes_from_its_cursor() {
    let port = crate::support::free_port();
    let epoch = now_ms();
    let fixture = http_server(port, epoch);
    let url = format!("http://127.0.0.1:{port}/mcp").parse().unwrap();
    let mcp = Arc::new(Mcp::http("events", url, reqwest::Client::new()));
    assert!(mcp.has_events().await.unwrap());

    // An event a tool raises reaches the stream of another request.
    let custom = event_type(&mcp, "custom-event").await;
    let mut raised = mcp
        .stream_events(&custom, JsonObject::new(), None, fast())
        .await
        .unwrap();
    assert!(matches!(next(&mut raised).await, Delivery::Active { .. }));
    call(&mcp, "trigger-event", json!({"message": "over http"})).await;
    match next(&mut raised).await {
        Delivery::Event(event) => assert_eq!(event.data["message"], "over http"),
        other => panic!("{other:?}"),
    }
    drop(raised);

    let clock = event_type(&mcp, "clock-tick").await;
    let mut stream = mcp
        .stream_events(&clock, JsonObject::new(), None, fast())
        .await
        .unwrap();
    assert!(matches!(next(&mut stream).await, Delivery::Active { .. }));
    let mut ticks = Vec::new();
    while ticks.len() < 3 {
        ticks.extend(tick(&next(&mut stream).await));
    }
    // The server goes away in the middle of the stream, and comes back on the same port.
    drop(fixture);
    let _fixture = http_server(port, epoch);
    let mut resumed = false;
    while !resumed || ticks.len() < 10 {
        match next(&mut stream).await {
            Delivery::Active { truncated, .. } => {
                assert!(!truncated);
                resumed = true;
            }
            other => ticks.extend(tick(&other)),
        }
    }
    let first = ticks[0];
    assert_eq!(
        ticks,
        (first..first + ticks.len() as u64).collect::<Vec<_>>(),
        "every tick once, in order, across the server's restart"
    );
}

/// The gateway (`toolkit-gateway --config`, stdio) in front of the fixture as sources `clock`
/// and `other`, its clock started `ticks_ago` ticks ago.
fn gateway(dir: &std::path::Path, ticks_ago: u64) -> Mcp {
    let script = crate::support::root().join("toolkit-gateway/tests/gateway/events_server.py");
    let source = |name: &str| {
        format!(
            "\n[[sources]]\nname = \"{name}\"\ncommand = [\"python3\", \"{}\"]\n\
             env = {{ EVENTS_TICK_MS = \"EVENTS_TICK_MS\", EVENTS_RETAIN = \"EVENTS_RETAIN\", \
             EVENTS_EPOCH_MS = \"EVENTS_EPOCH_MS\" }}\n",
            script.display()
        )
    };
    let config = dir.join("toolkit.toml");
    std::fs::write(
        &config,
        format!(
            "[catalog]\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\nrules = [\
             {{ source = \"other\", tool = \"bad-event\", decision = \"block\" }}]\n{}{}",
            source("clock"),
            source("other")
        ),
    )
    .unwrap();
    Mcp::stdio(
        "gateway",
        StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(config)
            .env("EVENTS_TICK_MS", TICK_MS.to_string())
            .env("EVENTS_RETAIN", "10")
            .env(
                "EVENTS_EPOCH_MS",
                (now_ms() - ticks_ago * TICK_MS).to_string(),
            ),
    )
}

/// A policy rule naming a source's event type (not a tool) is not reported as matching nothing
/// at the start; one naming nothing at all is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_naming_an_event_type_is_not_reported_dead() {
    let dir = std::env::temp_dir().join(format!("toolkit-events-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    drop(gateway(&dir, 0));
    let config = dir.join("toolkit.toml");
    let written = std::fs::read_to_string(&config).unwrap().replace(
        "rules = [",
        "rules = [{ source = \"clock\", tool = \"no-such-thing\", decision = \"block\" }, ",
    );
    std::fs::write(&config, written).unwrap();
    let script = crate::support::root().join("toolkit-gateway/tests/gateway/events_server.py");
    assert!(script.exists());
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(&config)
            .env("EVENTS_TICK_MS", TICK_MS.to_string())
            .env("EVENTS_RETAIN", "10")
            .env("EVENTS_EPOCH_MS", now_ms().to_string())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(r#"policy rule { source = "clock", tool = "no-such-thing", decision = "block" } matches no tool, prompt or event type"#),
        "{stderr}"
    );
    assert!(!stderr.contains("bad-event"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Through the gateway: every source's event types under its name (the policy's block applied),
/// a poll resuming from the cursor the gateway handed out, `truncated` for an old one, a cursor
/// of another source refused, and an event breaking its schema reaching no client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_its_sources_events_under_their_names_and_cursors() {
    let dir = std::env::temp_dir().join(format!("toolkit-events-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gateway = gateway(&dir, 30);
    assert!(gateway.has_events().await.unwrap());
    let names: Vec<String> = gateway
        .list_events()
        .await
        .unwrap()
        .into_iter()
        .map(|event| event.name)
        .collect();
    assert_eq!(
        names,
        [
            "clock__clock-tick",
            "clock__custom-event",
            "clock__bad-event",
            "other__clock-tick",
            "other__custom-event",
        ],
        "every source's types under its name, the blocked one left out"
    );
    let clock = event_type(&gateway, "clock__clock-tick").await;
    let start = gateway
        .poll_events(&clock, JsonObject::new(), None)
        .await
        .unwrap();
    assert!(start.events.is_empty(), "{start:?}");
    let cursor = start.cursor.clone().unwrap();
    assert!(cursor.starts_with("clock/"), "{cursor}");
    tokio::time::sleep(Duration::from_millis(3 * TICK_MS + 50)).await;
    let next = gateway
        .poll_events(&clock, JsonObject::new(), Some(&cursor))
        .await
        .unwrap();
    assert!(next.events.len() >= 2, "{next:?}");
    assert!(!next.truncated);
    let first: u64 = cursor.trim_start_matches("clock/").parse().unwrap();
    for (index, event) in next.events.iter().enumerate() {
        assert_eq!(event.name, "clock__clock-tick");
        assert_eq!(
            event.data["tick"],
            json!(first + 1 + index as u64),
            "{event:?}"
        );
    }
    assert!(next.cursor.as_deref().unwrap().starts_with("clock/"));

    // An old cursor: the source skipped what it no longer keeps, and says so.
    let old = gateway
        .poll_events(&clock, JsonObject::new(), Some("clock/1"))
        .await
        .unwrap();
    assert!(old.truncated, "{old:?}");
    // A cursor of another source's subscription is refused.
    let other = event_type(&gateway, "other__clock-tick").await;
    let refused = gateway
        .poll_events(&other, JsonObject::new(), Some(&cursor))
        .await
        .unwrap_err();
    assert!(
        matches!(refused.reason, Reason::InvalidInput { .. }),
        "{refused:?}"
    );
    assert!(
        refused
            .to_string()
            .contains("is not one of \"other\"'s subscriptions"),
        "{refused}"
    );

    // The event that breaks its schema was refused by the gateway's client: no client gets it.
    let bad = event_type(&gateway, "clock__bad-event").await;
    let polled = gateway
        .poll_events(&bad, JsonObject::new(), Some("clock/0"))
        .await
        .unwrap();
    assert!(polled.refused.is_empty(), "{polled:?}");
    assert_eq!(polled.events.len(), 1, "{polled:?}");
    gateway.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Push through the gateway: the source's stream passed on, its type's name and its cursors
/// served, a custom event raised through the gateway's own tool reaching the subscriber.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_passes_a_sources_push_stream_on() {
    let dir = std::env::temp_dir().join(format!("toolkit-events-push-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gateway = Arc::new(gateway(&dir, 30));
    let clock = event_type(&gateway, "clock__clock-tick").await;
    let mut ticks = gateway
        .stream_events(&clock, JsonObject::new(), None, EventOptions::default())
        .await
        .unwrap();
    match next(&mut ticks).await {
        Delivery::Active { cursor, truncated } => {
            assert!(cursor.unwrap().starts_with("clock/"));
            assert!(!truncated);
        }
        other => panic!("{other:?}"),
    }
    let mut seen = Vec::new();
    while seen.len() < 3 {
        if let Delivery::Event(event) = next(&mut ticks).await {
            assert_eq!(event.name, "clock__clock-tick");
            let tick = event.data["tick"].as_u64().unwrap();
            assert_eq!(event.cursor, Some(format!("clock/{tick}")), "{event:?}");
            seen.push(tick);
        }
    }
    assert!(
        seen.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "{seen:?}"
    );
    drop(ticks);

    let custom = event_type(&gateway, "other__custom-event").await;
    let mut customs = gateway
        .stream_events(&custom, JsonObject::new(), None, EventOptions::default())
        .await
        .unwrap();
    assert!(matches!(next(&mut customs).await, Delivery::Active { .. }));
    let raised = gateway
        .call(
            "other__trigger-event",
            object(json!({ "message": "through the gateway" })),
            &CallContext::new(),
        )
        .await;
    assert!(raised.is_ok(), "{raised:?}");
    loop {
        if let Delivery::Event(event) = next(&mut customs).await {
            assert_eq!(event.name, "other__custom-event");
            assert_eq!(event.data["message"], "through the gateway", "{event:?}");
            break;
        }
    }
    drop(customs);
    gateway.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// One person holds at most 32 push streams through the gateway at once: the next is refused,
/// saying so, and one closed makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_holds_at_most_32_streams_through_the_gateway() {
    let dir = std::env::temp_dir().join(format!("toolkit-events-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gateway = Arc::new(gateway(&dir, 30));
    let clock = event_type(&gateway, "clock__clock-tick").await;
    let mut open = Vec::new();
    for _ in 0..32 {
        let mut stream = gateway
            .stream_events(&clock, JsonObject::new(), None, EventOptions::default())
            .await
            .unwrap();
        assert!(matches!(next(&mut stream).await, Delivery::Active { .. }));
        open.push(stream);
    }
    let mut over = gateway
        .stream_events(&clock, JsonObject::new(), None, EventOptions::default())
        .await
        .unwrap();
    let refused = tokio::time::timeout(Duration::from_secs(10), over.next())
        .await
        .unwrap();
    match refused {
        Some(Err(error)) => assert!(
            error.to_string().contains("At most 32 event streams"),
            "{error}"
        ),
        other => panic!("the 33rd stream was not refused: {other:?}"),
    }
    drop(over);
    drop(open.pop());
    // The gateway hears the client let go of one; then a new one is taken.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut again = gateway
            .stream_events(&clock, JsonObject::new(), None, EventOptions::default())
            .await
            .unwrap();
        match tokio::time::timeout(Duration::from_secs(10), again.next()).await {
            Ok(Some(Ok(Delivery::Active { .. }))) => break,
            other => assert!(
                std::time::Instant::now() < deadline,
                "no room made: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(open);
    gateway.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// An OpenAPI 3.1 document whose API sends one webhook, `orderPlaced`.
const SHOP: &str = r##"{
  "openapi": "3.1.0",
  "info": { "title": "Shop", "version": "1" },
  "paths": { "/orders": { "get": { "operationId": "listOrders",
    "responses": { "200": { "description": "the orders" } } } } },
  "webhooks": { "orderPlaced": { "post": {
    "summary": "An order was placed.",
    "requestBody": { "content": { "application/json": { "schema": {
      "$ref": "#/components/schemas/Order" } } } },
    "responses": { "200": { "description": "taken" } } } },
    "orderRefunded": { "post": {
    "summary": "An order was refunded.",
    "requestBody": { "content": { "application/json": { "schema": {
      "$ref": "#/components/schemas/Order" } } } },
    "responses": { "200": { "description": "taken" } } } } },
  "components": { "schemas": { "Order": { "type": "object",
    "properties": { "id": { "type": "string" }, "total": { "type": "number" } },
    "required": ["id"] } } }
}"##;

/// The secret the shop signs its deliveries with (the Standard Webhooks specification's
/// example).
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// A delivery of `body` to the gateway on `port`, signed (or not) as Standard Webhooks sign,
/// with `id` and `timestamp`: its status.
async fn deliver(
    http: &reqwest::Client,
    port: u16,
    (id, timestamp): (&str, u64),
    body: &str,
    signed: bool,
) -> u16 {
    use base64::Engine as _;
    let key = base64::engine::general_purpose::STANDARD
        .decode(SECRET.trim_start_matches("whsec_"))
        .unwrap();
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key);
    let tag = aws_lc_rs::hmac::sign(&key, format!("{id}.{timestamp}.{body}").as_bytes());
    let signature = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    );
    let mut request = http
        .post(format!("http://127.0.0.1:{port}/webhooks/shop/orderPlaced"))
        .header("content-type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", timestamp.to_string())
        .body(body.to_owned());
    if signed {
        request = request.header("webhook-signature", signature);
    }
    request
        .send()
        .await
        .map_or(0, |answer| answer.status().as_u16())
}

/// The gateway receives an API's webhooks itself (its OpenAPI document's `webhooks`, signed as
/// Standard Webhooks sign) and serves them as events by poll and push: a delivery signed with the
/// secret is taken once however often it is sent; an unsigned one, one signed otherwise, a stale
/// one and one whose payload breaks its schema are refused and never reach a client; a poll from
/// a cursor older than what is kept says `truncated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_receives_signed_webhooks_and_serves_them_as_events() {
    let dir = std::env::temp_dir().join(format!("toolkit-webhooks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("shop.json"), SHOP).unwrap();
    let port = crate::support::free_port();
    std::fs::write(
        dir.join("toolkit.toml"),
        format!(
            "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\n[catalog]\n\
             refresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\nrules = [{{ source = \"shop\", tool = \"orderRefunded\", decision = \"block\" }}]\n\n[[sources]]\nname = \"shop\"\nopenapi = \"shop.json\"\n\
             base_url = \"http://127.0.0.1:9\"\nwebhooks = {{ secret_env = \"SHOP_SECRET\", keep = 3 }}\n"
        ),
    )
    .unwrap();
    let mut gateway = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(dir.join("toolkit.toml"))
        .env("SHOP_SECRET", SECRET)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let client = Arc::new(crate::support::bearer_client(port, None));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while client.has_events().await.is_err() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A webhook the policy blocks is neither listed nor polled.
    let listed: Vec<String> = client
        .list_events()
        .await
        .unwrap()
        .into_iter()
        .map(|event| event.name)
        .collect();
    assert_eq!(listed, ["shop__orderPlaced"]);
    let order = event_type(&client, "shop__orderPlaced").await;
    let blocked = EventType {
        name: "shop__orderRefunded".into(),
        ..order.clone()
    };
    let refused = client
        .poll_events(&blocked, JsonObject::new(), None)
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("No event type \"shop__orderRefunded\" is served"),
        "{refused:?}"
    );
    assert_eq!(order.payload_schema["$ref"], "#/$defs/Order");
    let start = client
        .poll_events(&order, JsonObject::new(), None)
        .await
        .unwrap();
    let cursor = start.cursor.unwrap();
    let mut pushed = client
        .stream_events(&order, JsonObject::new(), None, EventOptions::default())
        .await
        .unwrap();
    assert!(matches!(next(&mut pushed).await, Delivery::Active { .. }));

    let http = reqwest::Client::new();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let order_body = r#"{"id":"o-1","total":12.5}"#;
    assert_eq!(
        deliver(&http, port, ("msg_1", now), order_body, true).await,
        204
    );
    assert_eq!(
        deliver(&http, port, ("msg_1", now), order_body, true).await,
        200,
        "taken once"
    );
    assert_eq!(
        deliver(&http, port, ("msg_2", now), order_body, false).await,
        401
    );
    assert_eq!(
        deliver(&http, port, ("msg_3", now - 3600), order_body, true).await,
        401,
        "an hour old"
    );
    assert_eq!(
        deliver(&http, port, ("msg_4", now), r#"{"total":"lots"}"#, true).await,
        400,
        "no id, and a total that is no number"
    );
    // A body over 1 MiB, signed: refused before it is read.
    let big = format!(r#"{{"id":"{}"}}"#, "x".repeat(1024 * 1024));
    assert_eq!(
        deliver(&http, port, ("msg_big", now), &big, true).await,
        413
    );
    // Signed by another secret: the body changed after signing.
    let tampered = http
        .post(format!("http://127.0.0.1:{port}/webhooks/shop/orderPlaced"))
        .header("webhook-id", "msg_5")
        .header("webhook-timestamp", now.to_string())
        .header(
            "webhook-signature",
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
        )
        .body(order_body)
        .send()
        .await
        .unwrap();
    assert_eq!(tampered.status().as_u16(), 401);

    let polled = client
        .poll_events(&order, JsonObject::new(), Some(&cursor))
        .await
        .unwrap();
    assert_eq!(polled.events.len(), 1, "{polled:?}");
    assert_eq!(polled.events[0].event_id, "msg_1");
    assert_eq!(polled.events[0].name, "shop__orderPlaced");
    assert_eq!(polled.events[0].data["id"], "o-1");
    match next(&mut pushed).await {
        Delivery::Event(event) => assert_eq!(event.event_id, "msg_1"),
        other => panic!("{other:?}"),
    }
    // Four more: only the last 3 are kept, so the first cursor is past what is kept.
    for index in 6..10 {
        let body = format!(r#"{{"id":"o-{index}"}}"#);
        let id = format!("msg_{index}");
        assert_eq!(deliver(&http, port, (&id, now), &body, true).await, 204);
    }
    let late = client
        .poll_events(&order, JsonObject::new(), Some(&cursor))
        .await
        .unwrap();
    assert!(late.truncated, "{late:?}");
    assert_eq!(late.events.len(), 3, "{late:?}");
    let _ = gateway.kill().await;
    let _ = std::fs::remove_dir_all(&dir);
}
