//! [`EventWebhooks`]: the webhook subscriptions the gateway holds at its MCP sources, for event
//! types a source delivers only that way (the events extension's `events/subscribe`, as the
//! servers ChatGPT subscribes to offer them), served to its own clients by poll and push.
//!
//! A person's first poll or stream of such a type with some arguments subscribes the gateway at
//! the source: the callback is `PUBLIC_URL/mcp-events/TOKEN` (a token of the subscription's, so
//! no one guesses another's), the signing secret fresh from the system, the source's verification
//! challenge answered. Each delivery is taken once it is signed with that secret within five
//! minutes of now, carries the subscription's id, is at most 256 KiB and fits its type's payload
//! schema ([`EventCheck`]); anything else is refused with nothing of it kept. Events are kept in
//! an [`EventLog`] per subscription for its person's polls and streams (cursors `SOURCE/N`).
//! The subscription is refreshed before its `refreshBefore`, and ended at the source once its
//! person has neither polled it for [`IDLE`] nor holds a stream of it. A person holds at most
//! [`MAX_PER_PERSON`], the gateway [`MAX_ALL`]; each person's are their own (two people asking
//! for the same events hold two subscriptions, and neither reads the other's).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolkit_core::JsonObject;
use toolkit_core::{Reason, ToolSourceError};
use toolkit_mcp::{EventCheck, EventType, Mcp};
use toolkit_serve::{EventFeed, Refusal};

use crate::event_errors::{RESOURCE_EXHAUSTED, refused};
use crate::event_log::EventLog;
use crate::standard_webhooks::{Receipt, key_of, new_secret, verified};

/// Where deliveries are received: `/mcp-events/TOKEN`.
pub(crate) const PATH: &str = "/mcp-events/";

/// The most bytes a delivery may have (the extension's limit for a body).
pub(crate) const MAX_BODY_BYTES: usize = 256 * 1024;

/// How many events each subscription keeps for polls.
const KEEP: usize = 256;

/// How long a subscription lives with no poll and no stream of its person's.
pub(crate) const IDLE: Duration = Duration::from_secs(600);

/// The lifetime asked of the source (it decides, and says when to refresh by).
const TTL: Duration = Duration::from_secs(3600);

/// The shortest wait before a refresh, whatever the source says (one saying a time past does
/// not make the gateway ask every second).
const MIN_REFRESH: Duration = Duration::from_secs(30);

/// The most webhook subscriptions one person holds at the sources.
pub const MAX_PER_PERSON: usize = 32;

/// The most webhook subscriptions the gateway holds at the sources in all.
pub const MAX_ALL: usize = 1024;

/// Every webhook subscription the gateway holds, by its token.
pub(crate) struct EventWebhooks {
    /// `PUBLIC_URL/mcp-events/`, when the gateway serves HTTP (a stdio gateway receives none).
    base: Option<String>,
    held: Arc<Mutex<HashMap<String, Arc<Subscription>>>>,
    /// How long a subscription lives unused ([`IDLE`]; shorter in tests).
    idle: Duration,
}

impl std::fmt::Debug for EventWebhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWebhooks")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// What makes two subscriptions one: whose, at which source, of which type, with what
/// arguments (as canonical JSON).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    person: String,
    source: String,
    event: String,
    arguments: String,
}

/// One webhook subscription at a source.
pub(crate) struct Subscription {
    key: Key,
    url: String,
    secret: String,
    signing_key: Vec<u8>,
    mcp: Arc<Mcp>,
    event: EventType,
    arguments: JsonObject,
    /// Its type's name as the gateway serves it.
    served: String,
    check: EventCheck,
    log: EventLog,
    /// Settled by the first asker's `events/subscribe` (the others wait for it).
    ready: tokio::sync::OnceCell<Result<(), Refusal>>,
    state: Mutex<State>,
}

/// What changes while a subscription lives.
struct State {
    /// Its id at the source, once subscribed.
    id: Option<String>,
    /// When its person last polled it or opened a stream.
    used: Instant,
    /// The streams of it held open.
    streams: usize,
}

impl EventWebhooks {
    /// The subscriptions of a gateway served at `origin` (none: it receives no webhooks).
    pub(crate) fn new(origin: Option<&url::Url>) -> Self {
        Self {
            base: origin.map(|origin| format!("{}{}", origin.as_str().trim_end_matches('/'), PATH)),
            held: Arc::default(),
            idle: IDLE,
        }
    }

    /// Whether it can receive deliveries (the gateway serves HTTP).
    pub(crate) fn receives(&self) -> bool {
        self.base.is_some()
    }

    /// `person`'s subscription to `event` of `source` (served as `served`) with `arguments`:
    /// the one held, or one made now at the source.
    pub(crate) async fn subscription(
        &self,
        person: &str,
        (source, mcp): (&str, &Arc<Mcp>),
        (event, served): (&EventType, String),
        arguments: JsonObject,
    ) -> Result<Arc<Subscription>, Refusal> {
        let Some(base) = &self.base else {
            return Err(Refusal::Unsupported(format!(
                "{} is delivered only by webhook, which a gateway served over stdio cannot receive.",
                toolkit_serve::failure::echo(&served)
            )));
        };
        let key = Key {
            person: person.to_owned(),
            source: source.to_owned(),
            event: event.name.clone(),
            arguments: canonical(&Value::Object(arguments.clone())),
        };
        let subscription = {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            match held.values().find(|held| held.key == key) {
                // Marked used while the map is locked: its keeper, which decides idleness under
                // the same lock, cannot end it now.
                Some(found) => {
                    found.lock().used = Instant::now();
                    Arc::clone(found)
                }
                None => {
                    let persons = held.values().filter(|held| held.key.person == person);
                    if persons.count() >= MAX_PER_PERSON || held.len() >= MAX_ALL {
                        return Err(refused(
                            RESOURCE_EXHAUSTED,
                            format!(
                                "At most {MAX_PER_PERSON} webhook subscriptions are held per \
                                 person ({MAX_ALL} in all); poll fewer event types or arguments."
                            ),
                            Some(json!({ "limit": "subscriptions", "max": MAX_PER_PERSON })),
                        ));
                    }
                    let (Some(token), Some(secret)) =
                        (toolkit_core::random::hex_128(), new_secret())
                    else {
                        return Err(Refusal::Failed(
                            "The system gave no randomness for a webhook's secret.".into(),
                        ));
                    };
                    let made = Arc::new(Subscription {
                        url: format!("{base}{token}"),
                        signing_key: key_of(&secret),
                        secret,
                        mcp: Arc::clone(mcp),
                        check: EventCheck::of(event),
                        event: event.clone(),
                        arguments,
                        log: EventLog::new(KEEP, format!("{source}/")),
                        served,
                        key,
                        ready: tokio::sync::OnceCell::new(),
                        state: Mutex::new(State {
                            id: None,
                            used: Instant::now(),
                            streams: 0,
                        }),
                    });
                    held.insert(token, Arc::clone(&made));
                    made
                }
            }
        };
        // Should this request be given up while the first subscribe runs, the subscription is
        // forgotten (no keeper would ever end it).
        let pending = Pending {
            held: &self.held,
            subscription: &subscription,
            settled: false,
        };
        let ready = subscription
            .ready
            .get_or_init(|| self.subscribe(&subscription))
            .await;
        pending.settle();
        if let Err(refused) = ready {
            return Err(refused.clone());
        }
        Ok(subscription)
    }

    /// Subscribes `subscription` at its source and keeps it (refreshed, ended when idle); one
    /// refused is forgotten.
    async fn subscribe(&self, subscription: &Arc<Subscription>) -> Result<(), Refusal> {
        match subscription.subscribe_at_source().await {
            Ok(refresh) => {
                tokio::spawn(keep(
                    Arc::clone(subscription),
                    Arc::clone(&self.held),
                    (refresh, self.idle),
                ));
                Ok(())
            }
            Err(error) => {
                tracing::warn!(source = %subscription.key.source, event = %subscription.event.name, "a webhook subscription refused: {error}");
                forget(&self.held, subscription);
                Err(refusal(&error))
            }
        }
    }

    /// Takes a delivery to the subscription of `token`: what to answer its sender (a JSON body).
    pub(crate) fn receive(
        &self,
        token: &str,
        headers: &axum::http::HeaderMap,
        body: &[u8],
    ) -> Receipt {
        let found = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(token)
            .cloned();
        // 410: the sender drops a subscription the gateway no longer holds.
        let Some(subscription) = found else {
            return (410, said("No subscription is received here."));
        };
        if body.len() > MAX_BODY_BYTES {
            return (
                413,
                said(&format!("A delivery has at most {MAX_BODY_BYTES} bytes.")),
            );
        }
        let id = match verified(&subscription.signing_key, headers, body) {
            Ok(id) => id,
            Err((status, words)) => return (status, said(&words)),
        };
        let Ok(delivered) = serde_json::from_slice::<Value>(body) else {
            return (400, said("The delivery's body is not JSON."));
        };
        let known = subscription.lock().id.clone();
        let named = headers
            .get("x-mcp-subscription-id")
            .and_then(|value| value.to_str().ok());
        if delivered["type"] == "verification" {
            return match delivered["challenge"].as_str() {
                Some(challenge) => (200, json!({ "challenge": challenge }).to_string()),
                None => (400, said("A verification without a challenge.")),
            };
        }
        match (known.as_deref(), named) {
            (Some(known), Some(named)) if known == named => {}
            (None, _) => return (503, said("The subscription is not made yet.")),
            _ => return (401, said("The delivery names another subscription.")),
        }
        match delivered["type"].as_str() {
            Some("gap") => {
                subscription.log.skip();
                return (204, String::new());
            }
            Some("terminated") => {
                tracing::warn!(source = %subscription.key.source, event = %subscription.event.name, "the source ended a webhook subscription");
                forget(&self.held, &subscription);
                return (204, String::new());
            }
            _ => {}
        }
        let event = match subscription.check.read(&delivered) {
            Ok(event) => event,
            Err(refused) => {
                tracing::warn!(source = %subscription.key.source, "an event left out: {refused}");
                return (400, said(&refused.to_string()));
            }
        };
        let taken = subscription.log.take(id, |cursor| {
            let mut served = serde_json::to_value(&event).unwrap_or(Value::Null);
            served["name"] = Value::String(subscription.served.clone());
            served["cursor"] = Value::String(cursor);
            served
        });
        (if taken { 204 } else { 200 }, String::new())
    }

    /// How many subscriptions it holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Subscription {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `events/subscribe` at the source (made, or refreshed): how long until it is refreshed.
    async fn subscribe_at_source(&self) -> Result<Duration, ToolSourceError> {
        let grant = self
            .mcp
            .subscribe_events(
                &self.event,
                self.arguments.clone(),
                (&self.url, &self.secret),
                None,
                Some(TTL),
            )
            .await?;
        if grant.truncated {
            self.log.skip();
        }
        let refresh = grant
            .refresh_in()
            .map_or(TTL, |left| left.mul_f32(0.8))
            .max(MIN_REFRESH);
        self.lock().id = Some(grant.id);
        Ok(refresh)
    }

    /// `events/poll` from `cursor` (the number after the source's name).
    pub(crate) fn poll(&self, cursor: Option<&str>) -> Result<JsonObject, Refusal> {
        self.log.poll(cursor)
    }

    /// `events/stream` from `cursor`, the subscription kept (and `guard`, the caller's hold on
    /// a stream slot) while the client holds it.
    pub(crate) fn stream(
        self: &Arc<Self>,
        cursor: Option<&str>,
        guard: impl Send + 'static,
    ) -> Result<EventFeed, Refusal> {
        let mut inner = self.log.stream(cursor)?;
        let (sender, feed) = tokio::sync::mpsc::channel(1);
        let held = Arc::clone(self);
        held.lock().streams += 1;
        tokio::spawn(async move {
            let _guard = guard;
            loop {
                let next = tokio::select! {
                    () = sender.closed() => break,
                    next = inner.recv() => next,
                };
                let Some(message) = next else { break };
                if sender.send(message).await.is_err() {
                    break;
                }
            }
            let mut state = held.lock();
            state.streams -= 1;
            state.used = Instant::now();
        });
        Ok(feed)
    }
}

/// Keeps `subscription` at its source: refreshed `refresh` from now and again before each
/// grant ends, ended there once its person has let it go for `idle_for` (or the source refuses a
/// refresh).
async fn keep(
    subscription: Arc<Subscription>,
    held: Arc<Mutex<HashMap<String, Arc<Subscription>>>>,
    (refresh, idle_for): (Duration, Duration),
) {
    let mut refresh_at = Instant::now() + refresh;
    loop {
        // While a stream holds it, it cannot fall idle before IDLE from now.
        let idle_at = {
            let state = subscription.lock();
            if state.streams > 0 {
                Instant::now() + idle_for
            } else {
                state.used + idle_for
            }
        };
        tokio::time::sleep_until(refresh_at.min(idle_at).into()).await;
        if !holds(&held, &subscription) {
            // The source ended it, or a refresh was refused: nothing to keep.
            return;
        }
        let idle = {
            // Decided with the map locked: a request finding it marks it used under the lock.
            let mut all = held.lock().unwrap_or_else(PoisonError::into_inner);
            let state = subscription.lock();
            let idle = state.streams == 0 && state.used.elapsed() >= idle_for;
            drop(state);
            if idle {
                all.retain(|_, kept| !Arc::ptr_eq(kept, &subscription));
            }
            idle
        };
        if idle {
            subscription.log.close();
            let ended = subscription
                .mcp
                .unsubscribe_events(
                    &subscription.event,
                    &subscription.arguments,
                    &subscription.url,
                )
                .await;
            if let Err(error) = ended {
                tracing::info!(source = %subscription.key.source, "an idle webhook subscription not ended at the source: {error}");
            }
            return;
        }
        if Instant::now() < refresh_at {
            continue;
        }
        match subscription.subscribe_at_source().await {
            Ok(next) => refresh_at = Instant::now() + next,
            Err(error) if matches!(error.reason, Reason::Unavailable { .. }) => {
                tracing::warn!(source = %subscription.key.source, "a webhook subscription not refreshed, tried again in 30 s: {error}");
                refresh_at = Instant::now() + Duration::from_secs(30);
            }
            Err(error) => {
                tracing::warn!(source = %subscription.key.source, "a webhook subscription ended, its refresh refused: {error}");
                forget(&held, &subscription);
                return;
            }
        }
    }
}

/// Drops `subscription` from `held`: its deliveries are answered 410 from now, its streams told
/// `terminated`.
fn forget(held: &Mutex<HashMap<String, Arc<Subscription>>>, subscription: &Arc<Subscription>) {
    held.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|_, kept| !Arc::ptr_eq(kept, subscription));
    subscription.log.close();
}

/// Whether `held` still holds `subscription`.
fn holds(
    held: &Mutex<HashMap<String, Arc<Subscription>>>,
    subscription: &Arc<Subscription>,
) -> bool {
    held.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .values()
        .any(|kept| Arc::ptr_eq(kept, subscription))
}

/// A subscription whose first `events/subscribe` is under way: forgotten when dropped unsettled.
struct Pending<'a> {
    held: &'a Mutex<HashMap<String, Arc<Subscription>>>,
    subscription: &'a Arc<Subscription>,
    settled: bool,
}

impl Pending<'_> {
    /// The first subscribe has answered (kept, or refused and forgotten already).
    fn settle(mut self) {
        self.settled = true;
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.settled && !self.subscription.ready.initialized() {
            forget(self.held, self.subscription);
        }
    }
}

/// What a source's failure to subscribe tells the client.
fn refusal(error: &ToolSourceError) -> Refusal {
    let words = error.to_string();
    match error.reason {
        Reason::InvalidInput { .. } => Refusal::InvalidParams(words),
        Reason::Unsupported { .. } => Refusal::Unsupported(words),
        Reason::NotFound { .. } => Refusal::NotFound(words),
        _ => Refusal::Failed(words),
    }
}

/// `words` as a JSON body.
fn said(words: &str) -> String {
    json!({ "error": words }).to_string()
}

/// `value` written with every object's keys sorted: equal arguments are equal text.
pub(crate) fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(object) => {
                let mut keys: Vec<&String> = object.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|key| (key.clone(), sorted(&object[key])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_one_key_whatever_the_order_of_their_members() {
        assert_eq!(
            canonical(&json!({ "b": 1, "a": { "d": [1, { "f": 2, "e": 3 }], "c": null } })),
            r#"{"a":{"c":null,"d":[1,{"e":3,"f":2}]},"b":1}"#
        );
    }

    #[test]
    fn a_delivery_to_a_subscription_not_held_is_answered_410() {
        let webhooks = EventWebhooks::new(None);
        assert!(!webhooks.receives());
        let (status, _) = webhooks.receive("nope", &axum::http::HeaderMap::new(), b"{}");
        assert_eq!(status, 410);
        assert_eq!(webhooks.len(), 0);
    }

    /// The subscriptions the source (`webhook_events_server.py`) holds, by its `subscriptions`
    /// tool.
    async fn held_at(source: &Mcp) -> usize {
        use toolkit_core::ToolSource as _;
        let answer = source
            .call(
                "subscriptions",
                JsonObject::new(),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        answer.as_array().map_or(0, Vec::len)
    }

    /// A subscription its person lets go (no poll, no stream) is ended after the idle time, here
    /// and at the source (PyPI `mcp-webhook-events`, installed by `scripts/install-test-peers`),
    /// its verification answered and its deliveries received meanwhile.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_subscription_let_go_is_ended_here_and_at_the_source() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let python = root.join("target/peers/webhook-events-python/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run scripts/install-test-peers",
            python.display()
        );
        let store =
            std::env::temp_dir().join(format!("toolkit-idle-{}.sqlite3", std::process::id()));
        let _ = std::fs::remove_file(&store);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port();
        let mut source = std::process::Command::new(python)
            .arg(root.join("toolkit-gateway/tests/gateway/webhook_events_server.py"))
            .arg(port.to_string())
            .arg(&store)
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The gateway's receiving end, on a port of its own.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin =
            url::Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
        let mut webhooks = EventWebhooks::new(Some(&origin));
        webhooks.idle = Duration::from_millis(500);
        let webhooks = Arc::new(webhooks);
        let receiving = Arc::clone(&webhooks);
        let app = axum::Router::new().route(
            &format!("{PATH}{{token}}"),
            axum::routing::post(
                move |axum::extract::Path(token): axum::extract::Path<String>,
                      headers: axum::http::HeaderMap,
                      body: axum::body::Bytes| {
                    let (status, body) = receiving.receive(&token, &headers, &body);
                    async move { (axum::http::StatusCode::from_u16(status).unwrap(), body) }
                },
            ),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });

        let mcp = Arc::new(Mcp::http(
            "tickets",
            format!("http://127.0.0.1:{port}/mcp").parse().unwrap(),
            reqwest::Client::new(),
        ));
        let event = mcp
            .list_events()
            .await
            .unwrap()
            .into_iter()
            .find(|event| event.name == "ticket.updated")
            .unwrap();
        let arguments = json!({ "queue": "support" }).as_object().cloned().unwrap();
        let held = webhooks
            .subscription(
                "token:alice",
                ("tickets", &mcp),
                (&event, "tickets__ticket.updated".into()),
                arguments,
            )
            .await
            .unwrap();
        assert_eq!((webhooks.len(), held_at(&mcp).await), (1, 1));
        assert!(held.poll(None).is_ok());
        drop(held);
        let mut ended = false;
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if webhooks.len() == 0 && held_at(&mcp).await == 0 {
                ended = true;
                break;
            }
        }
        let _ = source.kill();
        let _ = source.wait();
        let _ = std::fs::remove_file(&store);
        assert!(ended, "not ended: {} here", webhooks.len());
    }
}
