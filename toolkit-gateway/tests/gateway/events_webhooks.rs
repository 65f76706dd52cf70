//! Events an MCP source delivers only by webhook (SEP-3415's `events/subscribe`, as the servers
//! ChatGPT subscribes to deliver them), served through the gateway by poll and push. The source
//! is PyPI `mcp-webhook-events` 0.2.0 on the official Python SDK (`webhook_events_server.py`);
//! the gateway (`toolkit-gateway`, Streamable HTTP, two people by their tokens) subscribes at
//! it for each person's arguments, answers its verification challenge and takes its signed
//! deliveries. Nothing of alice's reaches bob; a forged, stale, replayed, oversized or
//! schema-breaking delivery is refused and nothing of it is kept. And the gateway delivers by
//! webhook to its own clients (`events/subscribe`): the Vercel AI SDK's client
//! (`events_subscriber.mjs`, npm `@ai-sdk/mcp`, which verifies each delivery as ChatGPT does)
//! subscribes, hears its event, refreshes and ends its subscription.
#![allow(clippy::panic)]

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::{CallContext, JsonObject, ToolSource};
use toolkit_mcp::{Delivery, EventOptions, EventType, Mcp};

use crate::support::{Killed, bearer_client, free_port, peer, root};

const ALICE: &str = "alice-events-token";
const BOB: &str = "bob-events-token";
const CAROL: &str = "carol-events-token";

fn object(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap()
}

/// Waits until something answers HTTP on 127.0.0.1:`port`.
async fn listening(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("nothing listens on {port}");
}

/// The source on a free port (its store in `dir`), and the gateway in front of it.
async fn start(dir: &std::path::Path) -> (u16, Killed, Killed) {
    let source_port = free_port();
    let source = Killed(
        Command::new(peer("webhook-events-python/bin/python"))
            .arg(root().join("toolkit-gateway/tests/gateway/webhook_events_server.py"))
            .arg(source_port.to_string())
            .arg(dir.join("events.sqlite3"))
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    listening(source_port).await;
    let port = free_port();
    let config = dir.join("toolkit.toml");
    std::fs::write(
        &config,
        format!(
            "[catalog]\nfile = \"{}\"\nrefresh_seconds = 0\n\n\
             [policy]\ndefault = \"allow\"\nrules = [{{ source = \"tickets\", tool = \"ticket.updated\", \
             principal = \"carol\", decision = \"block\" }}]\n\n[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\
             event_callback_hosts = [\"127.0.0.1\"]\n\n\
             [serve.auth]\nmode = \"tokens\"\ntokens = [{{ name = \"alice\", env = \"ALICE_TOKEN\" }}, \
             {{ name = \"bob\", env = \"BOB_TOKEN\" }}, {{ name = \"carol\", env = \"CAROL_TOKEN\" }}]\n\n\
             [[sources]]\nname = \"tickets\"\nurl = \"http://127.0.0.1:{source_port}/mcp\"\n",
            dir.join("catalog.json").display()
        ),
    )
    .unwrap();
    let gateway = Killed(
        Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(&config)
            .env("ALICE_TOKEN", ALICE)
            .env("BOB_TOKEN", BOB)
            .env("CAROL_TOKEN", CAROL)
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    listening(port).await;
    (port, source, gateway)
}

async fn ticket_type(mcp: &Mcp) -> EventType {
    mcp.list_events()
        .await
        .unwrap()
        .into_iter()
        .find(|event| event.name == "tickets__ticket.updated")
        .unwrap()
}

/// Changes a ticket through the gateway's tool: the source delivers its event at once.
async fn update(mcp: &Mcp, queue: &str, ticket: &str) -> String {
    let answer = mcp
        .call(
            "tickets__update_ticket",
            object(json!({ "queue": queue, "ticket": ticket, "status": "closed" })),
            &CallContext::new(),
        )
        .await
        .unwrap();
    answer.to_string()
}

/// A delivery POSTed to `url`, signed with `secret` (none: unsigned) at `timestamp`.
async fn forge(
    url: &str,
    (secret, subscription): (Option<&str>, &str),
    (id, timestamp): (&str, u64),
    body: &str,
) -> u16 {
    use base64::Engine as _;
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("x-mcp-subscription-id", subscription)
        .body(body.to_owned());
    if let Some(secret) = secret {
        let key = base64::engine::general_purpose::STANDARD
            .decode(secret.trim_start_matches("whsec_"))
            .unwrap();
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key);
        let tag = aws_lc_rs::hmac::sign(&key, format!("{id}.{timestamp}.{body}").as_bytes());
        let signature = base64::engine::general_purpose::STANDARD.encode(tag.as_ref());
        request = request.header("webhook-signature", format!("v1,{signature}"));
    }
    request.send().await.unwrap().status().as_u16()
}

/// The subscriptions the source's `subscriptions` tool answered (one text item each).
fn subscriptions(answer: &Value) -> Vec<Value> {
    let Value::Array(items) = answer else {
        panic!("{answer}");
    };
    items
        .iter()
        .map(|item| serde_json::from_str(item["text"].as_str().unwrap()).unwrap())
        .collect()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Two people poll and stream a webhook-only event type through the gateway, each with their
/// own arguments: the gateway subscribes at the source for each, and each reads their own
/// events only, by poll and by push.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_a_source_delivers_only_by_webhook_are_polled_and_pushed_through_the_gateway() {
    let dir = std::env::temp_dir().join(format!("toolkit-event-webhooks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (port, _source, _gateway) = start(&dir).await;
    let (alice, bob) = (
        std::sync::Arc::new(bearer_client(port, Some(ALICE))),
        std::sync::Arc::new(bearer_client(port, Some(BOB))),
    );
    let tickets = ticket_type(&alice).await;
    assert_eq!(
        tickets
            .delivery
            .iter()
            .map(|mode| mode.as_str())
            .collect::<Vec<_>>(),
        ["poll", "push", "webhook"],
        "served by poll and push (and webhook, as every type of an HTTP gateway), though the \
         source offers webhooks only"
    );
    let support = object(json!({ "queue": "support" }));
    // Carol's view blocks the type: she is not shown it, and her poll of it is refused before
    // anything is subscribed for her.
    let carol = bearer_client(port, Some(CAROL));
    let carols: Vec<String> = carol
        .list_events()
        .await
        .unwrap()
        .into_iter()
        .map(|event| event.name)
        .collect();
    assert!(carols.is_empty(), "{carols:?}");
    let refused = carol
        .poll_events(&tickets, support.clone(), None)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("No event type"), "{refused}");
    let billing = object(json!({ "queue": "billing" }));
    // The first poll subscribes at the source (its challenge answered): from now, no events.
    let start_alice = alice
        .poll_events(&tickets, support.clone(), None)
        .await
        .unwrap();
    assert!(start_alice.events.is_empty(), "{start_alice:?}");
    let start_bob = bob
        .poll_events(&tickets, billing.clone(), None)
        .await
        .unwrap();
    let said = update(&alice, "support", "T-1").await;
    assert!(said.contains("delivered 1"), "{said}");
    let said = update(&bob, "billing", "T-2").await;
    assert!(said.contains("delivered 1"), "{said}");

    let alices = alice
        .poll_events(&tickets, support.clone(), start_alice.cursor.as_deref())
        .await
        .unwrap();
    assert_eq!(alices.events.len(), 1, "{alices:?}");
    let event = &alices.events[0];
    assert_eq!(event.name, "tickets__ticket.updated");
    assert_eq!(event.data["ticket"], "T-1");
    assert!(event.cursor.as_deref().unwrap().starts_with("tickets/"));
    let bobs = bob
        .poll_events(&tickets, billing.clone(), start_bob.cursor.as_deref())
        .await
        .unwrap();
    assert_eq!(bobs.events.len(), 1, "{bobs:?}");
    assert_eq!(
        bobs.events[0].data["ticket"], "T-2",
        "bob reads his own only"
    );

    // Bob asking for alice's arguments holds a subscription of his own: her events before it
    // are not his to read.
    let bob_support = bob
        .poll_events(&tickets, support.clone(), Some("tickets/00000000.0"))
        .await
        .unwrap();
    assert!(bob_support.events.is_empty(), "{bob_support:?}");

    // Push: alice's stream hears the next change of her queue as it is delivered.
    let mut stream = alice
        .stream_events(&tickets, support.clone(), None, EventOptions::default())
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap();
    assert!(
        matches!(first, Some(Ok(Delivery::Active { .. }))),
        "{first:?}"
    );
    update(&bob, "support", "T-3").await;
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .unwrap()
        {
            Some(Ok(Delivery::Event(event))) => {
                assert_eq!(event.data["ticket"], "T-3");
                break;
            }
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    drop(stream);

    // What the source holds: one subscription per person and arguments, each at a callback of
    // its own.
    let held = alice
        .call(
            "tickets__subscriptions",
            JsonObject::new(),
            &CallContext::new(),
        )
        .await
        .unwrap();
    let held = subscriptions(&held);
    assert_eq!(held.len(), 3, "{held:?}");
    let mut urls: Vec<&str> = held
        .iter()
        .map(|sub| sub["url"].as_str().unwrap())
        .collect();
    urls.sort_unstable();
    urls.dedup();
    assert_eq!(urls.len(), 3);
    for url in &urls {
        assert!(
            url.starts_with(&format!("http://127.0.0.1:{port}/mcp-events/")),
            "{url}"
        );
    }

    // Deliveries forged at alice's callback. One signed with her subscription's secret and id
    // is taken (once); every other is refused, and nothing of it reaches her.
    let (mine, bobs) = (&held[0], &held[1]);
    let text = |sub: &Value, key: &str| sub[key].as_str().unwrap().to_owned();
    let (url, secret, id) = (text(mine, "url"), text(mine, "secret"), text(mine, "id"));
    let body = |event: &str, data: Value| {
        json!({ "eventId": event, "name": "ticket.updated", "timestamp": "2026-12-07T10:00:00Z",
                "data": data, "cursor": null })
        .to_string()
    };
    let good = body(
        "evt_forged",
        json!({ "queue": "support", "ticket": "T-9", "status": "open" }),
    );
    let signed = (Some(secret.as_str()), id.as_str());
    let before = alice
        .poll_events(&tickets, support.clone(), alices.cursor.as_deref())
        .await
        .unwrap();
    assert_eq!(forge(&url, signed, ("evt_forged", now()), &good).await, 204);
    assert_eq!(
        forge(&url, signed, ("evt_forged", now()), &good).await,
        200,
        "a retry"
    );
    let forged = alice
        .poll_events(&tickets, support.clone(), before.cursor.as_deref())
        .await
        .unwrap();
    assert_eq!(forged.events.len(), 1, "taken once: {forged:?}");
    assert_eq!(forged.events[0].data["ticket"], "T-9");

    let other = body(
        "evt_other",
        json!({ "queue": "support", "ticket": "T-0", "status": "x" }),
    );
    let unsigned = (None, id.as_str());
    assert_eq!(
        forge(&url, unsigned, ("evt_other", now()), &other).await,
        401
    );
    let bobs_secret = (Some(bobs["secret"].as_str().unwrap()), id.as_str());
    assert_eq!(
        forge(&url, bobs_secret, ("evt_other", now()), &other).await,
        401
    );
    assert_eq!(
        forge(&url, signed, ("evt_other", now() - 600), &other).await,
        401,
        "stale"
    );
    let bobs_id = (Some(secret.as_str()), bobs["id"].as_str().unwrap());
    assert_eq!(
        forge(&url, bobs_id, ("evt_other", now()), &other).await,
        401
    );
    let broken = body("evt_broken", json!({ "queue": "support", "ticket": 7 }));
    assert_eq!(
        forge(&url, signed, ("evt_broken", now()), &broken).await,
        400
    );
    let huge = body(
        "evt_huge",
        json!({ "queue": "support", "ticket": "x".repeat(300 * 1024), "status": "s" }),
    );
    assert_eq!(forge(&url, signed, ("evt_huge", now()), &huge).await, 413);
    let gone = format!("http://127.0.0.1:{port}/mcp-events/{}", "0".repeat(32));
    assert_eq!(
        forge(&gone, signed, ("evt_other", now()), &other).await,
        410
    );
    let after = alice
        .poll_events(&tickets, support.clone(), forged.cursor.as_deref())
        .await
        .unwrap();
    assert!(after.events.is_empty() && !after.truncated, "{after:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The AI SDK's client subscribes by webhook through the gateway (its challenge answered by its
/// own receiver), hears the event of its queue and not bob's, refreshes and ends the
/// subscription; bob's callbacks that would reach a private address or go over plain http are
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ai_sdks_client_subscribes_by_webhook_through_the_gateway() {
    use std::io::BufRead as _;
    let dir = std::env::temp_dir().join(format!("toolkit-event-deliveries-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (port, _source, _gateway) = start(&dir).await;
    let bob = std::sync::Arc::new(bearer_client(port, Some(BOB)));
    let mut node = Killed(
        Command::new("node")
            .arg(root().join("toolkit-gateway/tests/gateway/events_subscriber.mjs"))
            .arg(format!("http://127.0.0.1:{port}/mcp"))
            .args([
                ALICE,
                "tickets__ticket.updated",
                r#"{"queue":"support"}"#,
                "1",
            ])
            .env(
                "SDK_MODULES",
                root().join("target/peers/ai-sdk-npm/node_modules"),
            )
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (lines, said) = std::sync::mpsc::channel::<Value>();
    let stdout = node.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let _ = lines.send(serde_json::from_str(&line).unwrap_or(Value::String(line)));
        }
    });
    let next = || {
        let line = said.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(line.get("error").is_none(), "{line}");
        line
    };
    let listed = next();
    assert_eq!(
        listed["listed"],
        json!(["tickets__ticket.updated"]),
        "{listed}"
    );
    let subscribed = next();
    let id = subscribed["subscribed"]["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("sub_"), "{subscribed}");
    assert!(
        subscribed["subscribed"]["refreshBefore"].is_string(),
        "{subscribed}"
    );

    // Bob's queue changes first: nothing of it reaches alice's callback; then hers does.
    update(&bob, "billing", "T-6").await;
    update(&bob, "support", "T-7").await;
    let heard = next();
    assert_eq!(heard["event"]["name"], "tickets__ticket.updated", "{heard}");
    assert_eq!(heard["event"]["data"]["ticket"], "T-7", "{heard}");
    let refreshed = next();
    assert_eq!(
        refreshed["refreshed"]["id"],
        id.as_str(),
        "the same subscription: {refreshed}"
    );
    assert_eq!(next()["unsubscribed"], true);

    // Bob's callbacks that would reach a private address, or go over plain http to a host not
    // trusted, are refused before anything is delivered.
    let tickets = ticket_type(&bob).await;
    let billing = object(json!({ "queue": "billing" }));
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let private = bob
        .subscribe_events(
            &tickets,
            billing.clone(),
            ("https://10.0.0.1:9/hook", secret),
            None,
            None,
        )
        .await
        .unwrap_err();
    assert!(
        private.to_string().contains("could not verify or reach"),
        "{private}"
    );
    let plain = bob
        .subscribe_events(
            &tickets,
            billing,
            ("http://example.com/hook", secret),
            None,
            None,
        )
        .await
        .unwrap_err();
    assert!(plain.to_string().contains("must be https"), "{plain}");
    let _ = std::fs::remove_dir_all(&dir);
}
