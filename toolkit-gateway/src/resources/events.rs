//! The gateway's MCP sources' events (SEP-3415, `io.modelcontextprotocol/events`), served as the
//! gateway's own: `events/list` lists every source's event types, each named under its source as
//! its prompts are (`clock__clock-tick`), as the policy lets the asker see them; `events/poll`
//! passes a poll to the source whose type it names. A cursor the gateway hands out is the
//! source's under the source's name (`clock/41`): one given back is passed to that source only,
//! and one of another source is refused. Each event's payload has been checked against its
//! type's schema by the gateway's client: one that breaks it reaches no client (and is logged).
//! `events/stream` opens the source's push subscription for as long as the client holds the
//! request, its notifications passed on as they come (the names and cursors served, a heartbeat
//! of the gateway's own every 15 s), at most [`MAX_STREAMS_PER_PERSON`] at once per person.
//! An event type a source delivers only by webhook is served by poll and push too: the gateway
//! holds a webhook subscription at the source per person and arguments (`event_webhooks.rs`).
//! Over HTTP every type is delivered by webhook to the gateway's own clients too
//! (`events/subscribe`, `event_deliveries.rs`), from the same stream a push subscription reads.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::{CallContext, Decision, JsonObject, Reason};
use toolkit_mcp::{Delivery, DeliveryMode, EventOptions, EventStream, EventType};
use toolkit_serve::{EventFeed, Refusal};

use super::{Upstream, Upstreams, cut, refusal};
use crate::event_errors::{NOT_FOUND, RESOURCE_EXHAUSTED, refused};
use crate::served_names::{served_prompt, upstream_prompt};

impl Upstreams {
    /// `upstream`'s event types, as last listed (listed now when never yet).
    pub(super) async fn event_types(upstream: &Upstream) -> Result<Arc<Vec<EventType>>, Refusal> {
        let kept = upstream
            .event_types
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(kept) = kept {
            return Ok(kept);
        }
        let listed = Arc::new(upstream.mcp.list_events().await.map_err(
            |error| match error.reason {
                Reason::Unsupported { .. } => Refusal::Unsupported(error.to_string()),
                _ => refusal(&error),
            },
        )?);
        *upstream
            .event_types
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&listed));
        Ok(listed)
    }

    /// The event type name `name` is served as, for `upstream`.
    fn served_event(upstream: &Upstream, name: &str) -> String {
        if upstream.prefixed {
            served_prompt(&upstream.name, name)
        } else {
            name.to_owned()
        }
    }

    /// Every source's event types the asker may see, named as served (a source that fails to
    /// list is left out, and logged).
    pub(super) async fn served_events(&self) -> Vec<Value> {
        let webhook = self.event_deliveries.serves();
        let mut served: Vec<Value> = self
            .inbox
            .event_types()
            .into_iter()
            .filter(|event| {
                event["name"]
                    .as_str()
                    .is_some_and(|name| self.may_receive(name))
            })
            .map(|mut event| {
                if webhook {
                    event["delivery"] = json!(["poll", "push", "webhook"]);
                }
                event
            })
            .collect();
        for upstream in self.upstreams().iter() {
            if !Self::has(upstream).events {
                continue;
            }
            let types = match Self::event_types(upstream).await {
                Ok(types) => types,
                Err(problem) => {
                    tracing::warn!(source = %upstream.name, "events/list failed: {problem:?}");
                    continue;
                }
            };
            for event in types.iter() {
                if !self.allowed(upstream, &event.name) {
                    continue;
                }
                let Some(delivery) = self.served_delivery(event) else {
                    continue;
                };
                let Ok(mut entry) = serde_json::to_value(event) else {
                    continue;
                };
                entry["name"] = Value::String(Self::served_event(upstream, &event.name));
                entry["delivery"] = json!(delivery);
                served.push(entry);
            }
        }
        served
    }

    /// How the gateway delivers `event`'s events: those of poll and push its source offers, or
    /// both when the source delivers it only by webhook and the gateway receives webhooks
    /// (`None`: not at all).
    fn served_delivery(&self, event: &EventType) -> Option<Vec<&'static str>> {
        let mut offered: Vec<&'static str> = [DeliveryMode::Poll, DeliveryMode::Push]
            .into_iter()
            .filter(|mode| event.offers(*mode))
            .map(DeliveryMode::as_str)
            .collect();
        if offered.is_empty() {
            if !(event.offers(DeliveryMode::Webhook) && self.event_webhooks.receives()) {
                return None;
            }
            offered = vec!["poll", "push"];
        }
        // Webhooks to the gateway's clients are fed by a push stream of the gateway's own.
        if self.event_deliveries.serves() && offered.contains(&"push") {
            offered.push("webhook");
        }
        Some(offered)
    }

    /// `events/subscribe` with `params` as the client wrote them: the events of a type served to
    /// the asker (and push-delivered), POSTed to the client's callback as they come.
    pub(super) async fn served_subscribe(
        &self,
        params: JsonObject,
        asker: &CallContext,
    ) -> Result<JsonObject, Refusal> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let served = self.received(&params).is_some()
            || match self.route_event(name).await {
                Ok((_, event)) => self
                    .served_delivery(&event)
                    .is_some_and(|modes| modes.contains(&"webhook")),
                Err(_) => false,
            };
        if !served {
            return Err(refused(
                NOT_FOUND,
                format!("No event type {} is served by webhook.", cut(name)),
                Some(json!({ "kind": "event" })),
            ));
        }
        let this = self.clone();
        // The stream is the person's, not the session's: it outlives the request's session.
        let opener = asker
            .principal()
            .cloned()
            .map_or_else(CallContext::new, |principal| {
                CallContext::new().with_extension(principal)
            });
        self.event_deliveries
            .subscribe(
                &params,
                authenticated(asker).as_deref(),
                move |stream| async move { this.served_stream(stream, &opener).await },
            )
            .await
    }

    /// Whether the gateway receives `event`'s events by a webhook subscription of its own.
    fn by_webhook(event: &EventType) -> bool {
        !event.offers(DeliveryMode::Poll)
            && !event.offers(DeliveryMode::Push)
            && event.offers(DeliveryMode::Webhook)
    }

    /// The asker's webhook subscription at `upstream` to `event` with `arguments`.
    async fn webhook_subscription(
        &self,
        asker: &CallContext,
        upstream: &Arc<Upstream>,
        event: &EventType,
        arguments: JsonObject,
    ) -> Result<Arc<crate::event_webhooks::Subscription>, Refusal> {
        self.event_webhooks
            .subscription(
                &person(asker),
                (&upstream.name, &upstream.mcp),
                (event, Self::served_event(upstream, &event.name)),
                arguments,
            )
            .await
    }

    /// The source an event type served as `served` is of, and its type there.
    async fn route_event(&self, served: &str) -> Result<(Arc<Upstream>, EventType), Refusal> {
        let upstreams = self.upstreams();
        let with_events = || {
            upstreams
                .iter()
                .filter(|upstream| Self::has(upstream).events)
        };
        let found = with_events()
            .filter(|upstream| upstream.prefixed)
            .find_map(|upstream| Some((upstream, upstream_prompt(&upstream.name, served)?)))
            .map(|(upstream, name)| (upstream, name.to_owned()))
            .or_else(|| {
                with_events()
                    .find(|upstream| !upstream.prefixed)
                    .map(|upstream| (upstream, served.to_owned()))
            });
        let unknown = || Refusal::NotFound(format!("No event type {} is served.", cut(served)));
        let (upstream, name) = found.ok_or_else(unknown)?;
        if !self.allowed(upstream, &name) {
            return Err(unknown());
        }
        let types = Self::event_types(upstream).await?;
        let event = types
            .iter()
            .find(|event| event.name == name)
            .cloned()
            .ok_or_else(unknown)?;
        Ok((Arc::clone(upstream), event))
    }

    /// The name of the webhook `params` name, when the gateway receives it itself.
    fn received(&self, params: &JsonObject) -> Option<String> {
        let name = params.get("name")?.as_str()?;
        (self.inbox.serves(name) && self.may_receive(name)).then(|| name.to_owned())
    }

    /// Whether the policy shows the asker the received webhook served as `served`
    /// (`SOURCE__NAME`), as it would a source's event type of that name.
    fn may_receive(&self, served: &str) -> bool {
        served.split_once("__").is_some_and(|(source, name)| {
            self.policy().decide_name(&self.view, source, name) != Decision::Block
        })
    }

    /// The source's type, the arguments, the cursor there and the options `params` (an
    /// `events/poll` or `events/stream`'s, as the client wrote them) name.
    async fn subscription(
        &self,
        params: &JsonObject,
    ) -> Result<
        (
            Arc<Upstream>,
            EventType,
            JsonObject,
            Option<String>,
            EventOptions,
        ),
        Refusal,
    > {
        let Some(Value::String(name)) = params.get("name") else {
            return Err(Refusal::InvalidParams("`name` must be a string.".into()));
        };
        let (upstream, event) = self.route_event(name).await?;
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => JsonObject::new(),
            Some(Value::Object(arguments)) => arguments.clone(),
            Some(_) => {
                return Err(Refusal::InvalidParams(
                    "`arguments` must be an object.".into(),
                ));
            }
        };
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(served)) => Some(upstream_cursor(&upstream.name, served)?),
            Some(_) => {
                return Err(Refusal::InvalidParams(
                    "`cursor` must be a string or null.".into(),
                ));
            }
        };
        let mut options = EventOptions::default();
        if let Some(age) = params.get("maxAgeMs").and_then(Value::as_u64) {
            options = options.max_age(Duration::from_millis(age));
        }
        if let Some(most) = params
            .get("maxEvents")
            .and_then(Value::as_u64)
            .and_then(|most| u32::try_from(most).ok())
        {
            options = options.max_events(most);
        }
        Ok((upstream, event, arguments, cursor, options))
    }

    /// `events/stream` with `params` as the client wrote them: the source's push subscription,
    /// passed on until the client lets go of the feed.
    pub(super) async fn served_stream(
        &self,
        params: JsonObject,
        asker: &CallContext,
    ) -> Result<EventFeed, Refusal> {
        if let Some(name) = self.received(&params) {
            return self.inbox.stream(&name, cursor_param(&params)?);
        }
        let session = asker.session().map(toolkit_core::context::Session::id);
        let held = self.streams.hold(&person(asker), session)?;
        let (upstream, event, arguments, cursor, options) = self.subscription(&params).await?;
        if Self::by_webhook(&event) {
            let subscription = self
                .webhook_subscription(asker, &upstream, &event, arguments)
                .await?;
            return subscription.stream(cursor.as_deref(), held);
        }
        let stream = upstream
            .mcp
            .stream_events(&event, arguments, cursor, options)
            .await
            .map_err(|error| refusal(&error))?;
        let (sender, feed) = tokio::sync::mpsc::channel(FEED);
        let served = Self::served_event(&upstream, &event.name);
        let heartbeat = self.streams.heartbeat;
        tokio::spawn(forward(
            stream,
            sender,
            (upstream.name.clone(), served),
            held,
            heartbeat,
        ));
        Ok(feed)
    }

    /// `events/poll` with `params` as the client wrote them, passed to the source whose type
    /// `name` is, its cursor and its events' served as the gateway's.
    pub(super) async fn served_poll(
        &self,
        params: JsonObject,
        asker: &CallContext,
    ) -> Result<JsonObject, Refusal> {
        if let Some(name) = self.received(&params) {
            return self.inbox.poll(&name, cursor_param(&params)?);
        }
        let (upstream, event, arguments, cursor, options) = self.subscription(&params).await?;
        if Self::by_webhook(&event) {
            return self
                .webhook_subscription(asker, &upstream, &event, arguments)
                .await?
                .poll(cursor.as_deref());
        }
        let batch = self
            .metrics
            .requested(
                &upstream.name,
                "events/poll",
                upstream
                    .mcp
                    .poll_events_with(&event, arguments, cursor.as_deref(), &options),
            )
            .await
            .map_err(|error| refusal(&error))?;
        for refused in &batch.refused {
            tracing::warn!(source = %upstream.name, event = %event.name, "an event left out: {refused}");
        }
        let served_name = Self::served_event(&upstream, &event.name);
        let events: Vec<Value> = batch
            .events
            .iter()
            .filter_map(|delivered| {
                let mut delivered = serde_json::to_value(delivered).ok()?;
                delivered["name"] = Value::String(served_name.clone());
                if let Some(Value::String(cursor)) = delivered.get_mut("cursor") {
                    *cursor = served_cursor(&upstream.name, cursor);
                }
                Some(delivered)
            })
            .collect();
        let mut result = json!({
            "events": events,
            "cursor": batch.cursor.as_deref().map(|cursor| served_cursor(&upstream.name, cursor)),
            "truncated": batch.truncated,
            "hasMore": batch.has_more,
            "resultType": "complete",
        });
        if let Some(wait) = batch.next_poll {
            result["nextPollMs"] = json!(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
        }
        match result {
            Value::Object(result) => Ok(result),
            _ => Err(Refusal::Failed("the poll's answer is no object".into())),
        }
    }
}

/// How many notifications wait for a slow client before the forwarding waits (the source's
/// stream keeps its own bounded buffer behind it, dropping its oldest with `truncated`).
const FEED: usize = 64;

/// The most push subscriptions one person holds open at once.
pub const MAX_STREAMS_PER_PERSON: usize = 32;

/// The most push subscriptions one MCP session holds open at once (a client of a revision
/// without sessions is bounded by its person's cap alone).
pub const MAX_STREAMS_PER_SESSION: usize = 16;

/// How often the gateway tells a push subscription's client it is alive.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// The push subscriptions held open, counted per person and per session, and how often their
/// clients are told the gateway is alive.
#[derive(Clone, Debug)]
pub(crate) struct Streams {
    held: Arc<std::sync::Mutex<std::collections::HashMap<Holder, usize>>>,
    heartbeat: Duration,
}

impl Default for Streams {
    fn default() -> Self {
        Self {
            held: Arc::default(),
            heartbeat: HEARTBEAT,
        }
    }
}

/// Who a push subscription is counted against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Holder {
    Person(String),
    Session(String),
}

impl Holder {
    fn cap(&self) -> usize {
        match self {
            Self::Person(_) => MAX_STREAMS_PER_PERSON,
            Self::Session(_) => MAX_STREAMS_PER_SESSION,
        }
    }
}

/// One push subscription held, given back when dropped.
pub(crate) struct Held {
    streams: Streams,
    holders: Vec<Holder>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self
            .streams
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for holder in &self.holders {
            if let Some(count) = held.get_mut(holder) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    held.remove(holder);
                }
            }
        }
    }
}

impl Streams {
    /// One more subscription of `person`'s, in `session` when it has one; refused past
    /// [`MAX_STREAMS_PER_PERSON`] or [`MAX_STREAMS_PER_SESSION`], nothing counted then.
    fn hold(&self, person: &str, session: Option<&str>) -> Result<Held, Refusal> {
        let holders: Vec<Holder> = std::iter::once(Holder::Person(person.to_owned()))
            .chain(session.map(|id| Holder::Session(id.to_owned())))
            .collect();
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        for holder in &holders {
            if held.get(holder).copied().unwrap_or(0) >= holder.cap() {
                let whose = match holder {
                    Holder::Person(_) => "per person",
                    Holder::Session(_) => "per session",
                };
                return Err(refused(
                    RESOURCE_EXHAUSTED,
                    format!(
                        "At most {} event streams are held open at once {whose}; close one first.",
                        holder.cap()
                    ),
                    Some(json!({ "limit": "streams", "max": holder.cap() })),
                ));
            }
        }
        for holder in &holders {
            *held.entry(holder.clone()).or_default() += 1;
        }
        Ok(Held {
            streams: self.clone(),
            holders,
        })
    }

    /// How many subscriptions are held in all (each counted once, against its person).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(holder, _)| matches!(holder, Holder::Person(_)))
            .map(|(_, count)| count)
            .sum()
    }
}

/// Passes `stream`'s deliveries to `sender` as notifications, the type named `served` and the
/// cursors served under `source`, with a heartbeat every `heartbeat`, until the client lets go
/// (`sender` closed: the source's subscription ends with `stream`) or the source ends it (told as
/// `terminated`).
async fn forward(
    mut stream: EventStream,
    sender: tokio::sync::mpsc::Sender<(String, JsonObject)>,
    (source, served): (String, String),
    held: Held,
    heartbeat: Duration,
) {
    let _held = held;
    let cursor_of = |cursor: Option<&str>| {
        cursor.map_or(Value::Null, |cursor| {
            Value::String(served_cursor(&source, cursor))
        })
    };
    let mut beats = tokio::time::interval_at(tokio::time::Instant::now() + heartbeat, heartbeat);
    loop {
        let told = tokio::select! {
            () = sender.closed() => return,
            _ = beats.tick() => Some((
                "notifications/events/heartbeat",
                json!({ "cursor": cursor_of(stream.cursor().as_deref()) }),
            )),
            next = stream.next() => match next {
                Some(Ok(Delivery::Active { cursor, truncated })) => Some((
                    "notifications/events/active",
                    json!({ "cursor": cursor_of(cursor.as_deref()), "truncated": truncated }),
                )),
                Some(Ok(Delivery::Event(event))) => {
                    let mut event = serde_json::to_value(&event).unwrap_or(Value::Null);
                    event["name"] = Value::String(served.clone());
                    if let Some(Value::String(cursor)) = event.get_mut("cursor") {
                        *cursor = served_cursor(&source, cursor);
                    }
                    Some(("notifications/events/event", event))
                }
                Some(Ok(Delivery::Truncated { dropped })) => {
                    tracing::warn!(%source, event = %served, dropped, "a slow client's events dropped");
                    Some((
                        "notifications/events/active",
                        json!({ "cursor": cursor_of(stream.cursor().as_deref()), "truncated": true }),
                    ))
                }
                Some(Ok(Delivery::Refused(refused))) => {
                    tracing::warn!(%source, event = %served, "an event left out: {refused}");
                    None
                }
                Some(Ok(Delivery::Error(words))) => Some((
                    "notifications/events/error",
                    json!({ "error": { "code": -32603, "message": words } }),
                )),
                Some(Ok(_)) => None,
                Some(Err(error)) => {
                    let ended = json!({ "error": { "code": -32603, "message": error.to_string() } });
                    if let Value::Object(ended) = ended {
                        let _ = sender.send(("notifications/events/terminated".to_owned(), ended)).await;
                    }
                    return;
                }
                None => return,
            },
        };
        if let Some((method, Value::Object(params))) = told
            && sender.send((method.to_owned(), params)).await.is_err()
        {
            return;
        }
    }
}

/// Who `asker` is when they authenticated (not the one person of a gateway without
/// authentication).
pub(super) fn authenticated(asker: &CallContext) -> Option<String> {
    asker
        .principal()
        .filter(|principal| **principal != toolkit_core::context::Principal::loopback())
        .map(|principal| principal.id().to_owned())
}

/// Who `asker` is, as the caps and subscriptions count people.
fn person(asker: &CallContext) -> String {
    asker.principal().map_or_else(
        || "loopback".to_owned(),
        |principal| principal.id().to_owned(),
    )
}

/// The `cursor` of `params`, a string or null.
fn cursor_param(params: &JsonObject) -> Result<Option<&str>, Refusal> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(cursor)) => Ok(Some(cursor)),
        Some(_) => Err(Refusal::InvalidParams(
            "`cursor` must be a string or null.".into(),
        )),
    }
}

/// A cursor of `source`'s as the gateway hands it out.
fn served_cursor(source: &str, cursor: &str) -> String {
    format!("{source}/{cursor}")
}

/// The cursor of `source`'s a served cursor stands for; refused when it is another source's.
fn upstream_cursor(source: &str, served: &str) -> Result<String, Refusal> {
    served
        .strip_prefix(source)
        .and_then(|rest| rest.strip_prefix('/'))
        .map(str::to_owned)
        .ok_or_else(|| {
            Refusal::InvalidParams(format!(
                "The cursor {} is not one of {}'s subscriptions: poll from null to start anew.",
                cut(served),
                cut(source)
            ))
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_goes_back_to_its_own_source_only() {
        let served = served_cursor("clock", "41");
        assert_eq!(served, "clock/41");
        assert_eq!(upstream_cursor("clock", &served), Ok("41".to_owned()));
        assert!(matches!(
            upstream_cursor("other", &served),
            Err(Refusal::InvalidParams(words)) if words.contains("is not one of \"other\"'s")
        ));
        assert!(upstream_cursor("clo", &served).is_err());
    }

    #[test]
    fn a_sessions_streams_are_capped_below_its_persons() {
        let streams = Streams::default();
        let mut held: Vec<Held> = (0..MAX_STREAMS_PER_SESSION)
            .map(|_| streams.hold("alice", Some("s1")).unwrap())
            .collect();
        let refused = streams.hold("alice", Some("s1")).err().unwrap();
        assert!(
            matches!(&refused, Refusal::Coded { message, .. } if message.contains("16 event streams are held open at once per session")),
            "{refused:?}"
        );
        // Another session of hers, and another person, are not starved by it.
        held.extend(
            (0..MAX_STREAMS_PER_SESSION).map(|_| streams.hold("alice", Some("s2")).unwrap()),
        );
        let refused = streams.hold("alice", None).err().unwrap();
        assert!(
            matches!(&refused, Refusal::Coded { message, .. } if message.contains("32 event streams are held open at once per person")),
            "{refused:?}"
        );
        let bob = streams.hold("bob", Some("s3")).unwrap();
        assert_eq!(streams.held(), 33);
        drop(bob);
        held.clear();
        assert_eq!(streams.held(), 0);
        assert!(
            streams.held.lock().unwrap().is_empty(),
            "nothing left counted"
        );
    }

    /// Holds taken and given back from many threads at once: never more than a cap held, and
    /// every count back at zero at the end.
    #[test]
    fn streams_held_and_let_go_at_once_keep_their_counts() {
        let streams = Streams::default();
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let streams = streams.clone();
                let most = Arc::clone(&most);
                scope.spawn(move || {
                    let person = if thread % 2 == 0 { "alice" } else { "bob" };
                    let mut held = Vec::new();
                    for round in 0..2_000 {
                        if round % 3 == 2 {
                            held.clear();
                        }
                        if let Ok(one) = streams.hold(person, None) {
                            held.push(one);
                        }
                        let now = streams
                            .held
                            .lock()
                            .unwrap()
                            .get(&Holder::Person(person.to_owned()))
                            .copied()
                            .unwrap_or(0);
                        most.fetch_max(now, std::sync::atomic::Ordering::Relaxed);
                    }
                });
            }
        });
        assert!(most.load(std::sync::atomic::Ordering::Relaxed) <= MAX_STREAMS_PER_PERSON);
        assert_eq!(streams.held(), 0);
        assert!(streams.held.lock().unwrap().is_empty());
    }

    /// `events_server.py` (the gateway tests' fixture) as the source `name`, over stdio.
    fn events_server(name: &str) -> Arc<toolkit_mcp::Mcp> {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/events_server.py");
        Arc::new(toolkit_mcp::Mcp::stdio(
            name,
            toolkit_mcp::StdioCommand::new("python3").arg(script),
        ))
    }

    fn allow_all() -> crate::policy::Policy {
        crate::policy::Policy::new(&crate::config::PolicyConfig {
            default: Decision::Allow,
            groups_claim: "groups".into(),
            rules: Vec::new(),
        })
        .unwrap()
    }

    /// The names of the event types `upstreams` serve.
    async fn served_names(upstreams: &super::Upstreams) -> Vec<String> {
        upstreams
            .served_events()
            .await
            .iter()
            .filter_map(|event| event["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// A push stream through the gateway with no event for a while is told the gateway is alive
    /// at each heartbeat (here every 200 ms), with the cursor it would resume from.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_quiet_stream_hears_the_heartbeat() {
        let mut upstreams = super::Upstreams::new(
            vec![("clock".into(), true, events_server("clock"))],
            allow_all(),
        );
        upstreams.streams.heartbeat = Duration::from_millis(200);
        let params = json!({ "name": "clock__custom-event" });
        let mut feed = upstreams
            .served_stream(params.as_object().cloned().unwrap(), &CallContext::new())
            .await
            .unwrap();
        let mut told = Vec::new();
        while told.len() < 3 {
            let (method, params) = tokio::time::timeout(Duration::from_secs(10), feed.recv())
                .await
                .unwrap()
                .unwrap();
            told.push((method, params));
        }
        assert_eq!(told[0].0, "notifications/events/active");
        for (method, params) in &told[1..] {
            assert_eq!(method, "notifications/events/heartbeat");
            assert!(params.contains_key("cursor"), "{params:?}");
        }
    }

    /// Reloads replacing the sources while clients list and poll events at once: every answer
    /// is of the sources of one moment or the next, never a failure, and the last replacement
    /// is what is served.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sources_replaced_while_events_are_listed_and_polled() {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/events_server.py");
        let source = |name: &str| {
            Arc::new(toolkit_mcp::Mcp::stdio(
                name,
                toolkit_mcp::StdioCommand::new("python3").arg(&script),
            ))
        };
        let (clock, other) = (source("clock"), source("other"));
        let policy = crate::policy::Policy::new(&crate::config::PolicyConfig {
            default: Decision::Allow,
            groups_claim: "groups".into(),
            rules: Vec::new(),
        })
        .unwrap();
        let upstreams =
            super::Upstreams::new(vec![("clock".into(), true, Arc::clone(&clock))], policy);
        let one = || vec![("clock".to_owned(), true, Arc::clone(&clock))];
        let both = || {
            vec![
                ("clock".to_owned(), true, Arc::clone(&clock)),
                ("other".to_owned(), true, Arc::clone(&other)),
            ]
        };
        let reloading = {
            let upstreams = upstreams.clone();
            let (one, both) = (one(), both());
            tokio::spawn(async move {
                for round in 0..20 {
                    let next = if round % 2 == 0 {
                        both.clone()
                    } else {
                        one.clone()
                    };
                    upstreams.replace(next).await;
                    tokio::task::yield_now().await;
                }
            })
        };
        let asking = (0..4).map(|_| {
            let upstreams = upstreams.clone();
            tokio::spawn(async move {
                for _ in 0..20 {
                    let names = served_names(&upstreams).await;
                    assert!(names.contains(&"clock__clock-tick".to_owned()), "{names:?}");
                    let params = json!({ "name": "clock__clock-tick" });
                    let polled = upstreams
                        .served_poll(params.as_object().cloned().unwrap(), &CallContext::new())
                        .await;
                    assert!(polled.is_ok(), "{polled:?}");
                }
            })
        });
        for asked in futures_util::future::join_all(asking).await {
            asked.unwrap();
        }
        reloading.await.unwrap();
        upstreams.replace(both()).await;
        let names = served_names(&upstreams).await;
        assert!(names.contains(&"other__clock-tick".to_owned()), "{names:?}");
    }
}
