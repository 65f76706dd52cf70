//! Push delivery: [`Mcp::stream_events`] holds one `events/stream` request open per
//! subscription, and [`EventStream`] hands its deliveries over as they come.
//!
//! The server confirms the subscription with `notifications/events/active` (its cursor, and
//! `truncated` when it skipped events to start there), then sends each event as
//! `notifications/events/event` (with the cursor after it), a `notifications/events/heartbeat`
//! (its cursor) while nothing happens, `notifications/events/error` for a failure it recovers
//! from, and `notifications/events/terminated` when the subscription ends. Each names the
//! request in `_meta["io.modelcontextprotocol/subscriptionId"]`; the transport passes them on as
//! it reads them (`transport/subscription.rs`).
//!
//! A connection that drops, that the server closes, or that stays silent past
//! [`heartbeat_timeout`](EventOptions::heartbeat_timeout) is connected again from the last cursor
//! heard (over stdio, the server's process is started again for it), after a wait that doubles
//! while connections fail to open. What the consumer has not taken yet is kept up to
//! [`max_buffered`](EventOptions::max_buffered) deliveries and
//! [`max_buffered_bytes`](EventOptions::max_buffered_bytes): past them the oldest are dropped,
//! and the next delivery taken says how many ([`Delivery::Truncated`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{Event, EventCheck, EventOptions, EventType, RefusedEvent, cursor_of, refusal};
use crate::jsonrpc::RpcError;
use crate::results::MAX_SERVER_WORDS;
use crate::source::{Mcp, json_length};
use crate::transport::subscription::Heard;
use crate::transport::{Fault, Reply, Request};
use toolkit_core::{CallContext, JsonObject, Reason, ToolSourceError};

use super::DeliveryMode;

const ACTIVE: &str = "notifications/events/active";
const EVENT: &str = "notifications/events/event";
const HEARTBEAT: &str = "notifications/events/heartbeat";
const ERROR: &str = "notifications/events/error";
const TERMINATED: &str = "notifications/events/terminated";

/// What counts against the byte cap for a delivery that carries no payload.
const SMALL: usize = 64;

/// One thing a push subscription delivers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Delivery {
    /// The subscription is open (again, after each reconnection): the position delivery starts
    /// from, and whether the server skipped events to start there (`truncated`: the cursor was
    /// older than it keeps, or than `max_age`): a gap.
    Active {
        /// Where delivery starts; `None` for a type the server does not replay.
        cursor: Option<String>,
        /// Whether events were skipped.
        truncated: bool,
    },
    /// An event, its payload checked against its type's schema.
    Event(Event),
    /// This stream dropped its `dropped` oldest deliveries, its consumer having fallen more than
    /// its cap behind: a gap, as `truncated` is.
    Truncated {
        /// How many deliveries were dropped.
        dropped: usize,
    },
    /// An event refused (it breaks its schema, or is no event): never delivered.
    Refused(RefusedEvent),
    /// A failure the server says it recovers from (`notifications/events/error`): the
    /// subscription goes on. Its words, cut.
    Error(String),
}

/// A push subscription's deliveries, from [`Mcp::stream_events`]. Dropping it ends the
/// subscription (over stdio, the server is told with `notifications/cancelled`).
pub struct EventStream {
    shared: Arc<Shared>,
    task: tokio::task::AbortHandle,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("cursor", &self.cursor())
            .finish_non_exhaustive()
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl EventStream {
    /// The next delivery, waiting for one; `Some(Err(..))` once when the subscription ended (the
    /// server terminated or refused it, or it could not be connected again), then `None`.
    pub async fn next(&mut self) -> Option<Result<Delivery, ToolSourceError>> {
        loop {
            {
                let mut state = self.shared.lock();
                if state.dropped > 0 {
                    let dropped = std::mem::take(&mut state.dropped);
                    return Some(Ok(Delivery::Truncated { dropped }));
                }
                if let Some((delivery, size)) = state.items.pop_front() {
                    state.bytes = state.bytes.saturating_sub(size);
                    return Some(Ok(delivery));
                }
                if state.ended {
                    return state.end.take().map(Err);
                }
            }
            self.shared.wake.notified().await;
        }
    }

    /// The subscription's position: the cursor of the last event or heartbeat heard (what it
    /// connects again from). It may be ahead of deliveries not yet taken: to persist a position
    /// once its event is handled, keep the event's own [`cursor`](Event::cursor).
    pub fn cursor(&self) -> Option<String> {
        self.shared.lock().cursor.clone()
    }
}

/// What the stream's task, the transport's reader and the consumer share.
struct Shared {
    state: Mutex<State>,
    /// Wakes the consumer.
    wake: Notify,
    /// Wakes the task: the server terminated the subscription.
    stop: Notify,
    max_buffered: usize,
    max_buffered_bytes: usize,
}

struct State {
    items: VecDeque<(Delivery, usize)>,
    bytes: usize,
    /// Deliveries dropped since the consumer last took one.
    dropped: usize,
    cursor: Option<String>,
    /// Which connection is current: what an earlier one's reader still says is not heard.
    attempt: u64,
    /// Whether the current connection was confirmed (`active`).
    active: bool,
    /// When the current connection last said anything.
    heard_at: Instant,
    /// The server's `terminated`, once said.
    terminated: Option<RpcError>,
    /// Whether the subscription is over, and why when it failed.
    ended: bool,
    end: Option<ToolSourceError>,
}

impl Shared {
    /// A subscription's state from `cursor`, its connection attempts counted from `attempt`,
    /// bounded by `max_buffered` deliveries and `max_buffered_bytes`.
    fn new(
        cursor: Option<String>,
        attempt: u64,
        max_buffered: usize,
        max_buffered_bytes: usize,
    ) -> Self {
        Self {
            state: Mutex::new(State {
                items: VecDeque::new(),
                bytes: 0,
                dropped: 0,
                cursor,
                attempt,
                active: false,
                heard_at: Instant::now(),
                terminated: None,
                ended: false,
                end: None,
            }),
            wake: Notify::new(),
            stop: Notify::new(),
            max_buffered,
            max_buffered_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `delivery` for the consumer, dropping the oldest past the caps.
    fn keep(&self, state: &mut State, delivery: Delivery) {
        let size = match &delivery {
            Delivery::Event(event) => json_length(&event.data).saturating_add(SMALL),
            _ => SMALL,
        };
        if size > self.max_buffered_bytes {
            state.dropped += 1;
            return;
        }
        while !state.items.is_empty()
            && (state.items.len() >= self.max_buffered
                || state.bytes.saturating_add(size) > self.max_buffered_bytes)
        {
            if let Some((_, dropped)) = state.items.pop_front() {
                state.bytes = state.bytes.saturating_sub(dropped);
                state.dropped += 1;
            }
        }
        state.bytes = state.bytes.saturating_add(size);
        state.items.push_back((delivery, size));
    }

    /// What the connection `attempt` heard: a notification of the subscription.
    fn heard(&self, attempt: u64, checked: &EventCheck, method: &str, params: Option<&Value>) {
        let mut state = self.lock();
        if state.attempt != attempt || state.terminated.is_some() {
            return;
        }
        state.heard_at = Instant::now();
        match method {
            ACTIVE => {
                let cursor = cursor_of(params);
                let truncated = params
                    .and_then(|params| params.get("truncated"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                state.active = true;
                state.cursor.clone_from(&cursor);
                self.keep(&mut state, Delivery::Active { cursor, truncated });
            }
            EVENT => match params.map(|params| checked.read(params)) {
                Some(Ok(event)) => {
                    state.cursor.clone_from(&event.cursor);
                    self.keep(&mut state, Delivery::Event(event));
                }
                Some(Err(refused)) => {
                    tracing::warn!("an event refused: {refused}");
                    self.keep(&mut state, Delivery::Refused(refused));
                }
                None => {}
            },
            HEARTBEAT => state.cursor = cursor_of(params),
            ERROR => {
                let said = error_of(params).map_or_else(
                    || "the server reported a failure it recovers from".to_owned(),
                    |error| format!("{} ({})", error.message, error.code),
                );
                self.keep(
                    &mut state,
                    Delivery::Error(toolkit_core::text::cut_utf16(&said, MAX_SERVER_WORDS)),
                );
            }
            TERMINATED => {
                state.terminated = Some(error_of(params).unwrap_or(RpcError {
                    code: 0,
                    message: "terminated".into(),
                    data: None,
                }));
                self.stop.notify_one();
            }
            // A frame of a newer revision: skipped.
            _ => return,
        }
        drop(state);
        self.wake.notify_one();
    }

    /// Ends the subscription, with `end` when it failed.
    fn finish(&self, end: Option<ToolSourceError>) {
        let mut state = self.lock();
        state.ended = true;
        state.end = end;
        drop(state);
        self.wake.notify_one();
    }

    /// Returns once the current connection has been silent for `timeout`.
    async fn silent(&self, timeout: Duration) {
        loop {
            let deadline = self.lock().heard_at + timeout;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// The `error` of a `notifications/events/error` or `terminated`.
fn error_of(params: Option<&Value>) -> Option<RpcError> {
    RpcError::from_value(params?.get("error")?)
}

/// How one connection ended.
enum Ended {
    Replied(Result<Reply, Fault>),
    Silent,
    Terminated,
}

impl Mcp {
    /// Subscribes to `event` with `arguments` by push (`events/stream`), from `cursor` (`None`:
    /// from now), and hands its deliveries over as they come (see [`EventStream`]): connected
    /// again from its last cursor whenever the connection drops or falls silent, its
    /// deliveries kept within `options`' caps for a consumer that falls behind.
    ///
    /// # Errors
    ///
    /// Arguments that do not fit the type's `inputSchema` are
    /// [`InvalidInput`](Reason::InvalidInput), unsent; a type that does not offer push, a
    /// server without the extension, or a call outside a Tokio runtime,
    /// [`Unsupported`](Reason::Unsupported). What the server says once the stream runs (a
    /// refusal, a termination) ends the stream, as its last delivery.
    pub async fn stream_events(
        self: &Arc<Self>,
        event: &EventType,
        arguments: JsonObject,
        cursor: Option<String>,
        options: EventOptions,
    ) -> Result<EventStream, ToolSourceError> {
        self.events_declared().await?;
        event
            .offering(DeliveryMode::Push)
            .map_err(|reason| self.error(reason))?;
        event
            .check_arguments(&arguments)
            .map_err(|problem| self.error(Reason::invalid_input(problem)))?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            self.error(Reason::unsupported(
                "an event stream needs a Tokio runtime to run in",
            ))
        })?;
        let shared = Arc::new(Shared::new(
            cursor,
            0,
            options.max_buffered.max(1),
            options.max_buffered_bytes,
        ));
        let subscription = Subscription {
            mcp: self.clone(),
            shared: shared.clone(),
            checked: Arc::new(EventCheck::of(event)),
            name: event.name.clone(),
            arguments,
            options,
        };
        let task = runtime.spawn(subscription.run());
        Ok(EventStream {
            shared,
            task: task.abort_handle(),
        })
    }
}

/// One push subscription, run by its task.
struct Subscription {
    mcp: Arc<Mcp>,
    shared: Arc<Shared>,
    checked: Arc<EventCheck>,
    name: String,
    arguments: JsonObject,
    options: EventOptions,
}

impl Subscription {
    /// Connects, reads, and connects again from the last cursor, until the subscription ends.
    async fn run(self) {
        let mut wait = self.options.reconnect_wait;
        let mut failed_in_a_row = 0;
        loop {
            let (ended, active) = self.connect().await;
            if let Some(end) = self.end_of(ended) {
                self.shared.finish(Some(end));
                return;
            }
            if active {
                failed_in_a_row = 0;
                wait = self.options.reconnect_wait;
            } else {
                failed_in_a_row += 1;
                if failed_in_a_row >= self.options.max_failed_connects {
                    let end = self.mcp.error(Reason::unavailable(format!(
                        "the server did not open events/stream for {} in {failed_in_a_row} tries in a row",
                        self.name
                    )));
                    self.shared.finish(Some(end));
                    return;
                }
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(self.options.max_reconnect_wait.max(wait));
        }
    }

    /// One connection: `events/stream` from the current cursor, held until it ends; says how,
    /// and whether the server confirmed it.
    async fn connect(&self) -> (Ended, bool) {
        let (attempt, cursor) = {
            let mut state = self.shared.lock();
            state.attempt += 1;
            state.active = false;
            state.heard_at = Instant::now();
            (state.attempt, state.cursor.clone())
        };
        let params = self
            .options
            .params(&self.name, &self.arguments, cursor.as_deref());
        let heard = {
            let shared = self.shared.clone();
            let checked = self.checked.clone();
            Heard::new(move |method, params| shared.heard(attempt, &checked, method, params))
        };
        let mut request = Request::new("events/stream", params);
        request.context = CallContext::new().with_extension(heard);
        let ended = tokio::select! {
            reply = self.mcp.send(request) => Ended::Replied(reply),
            () = self.shared.silent(self.options.heartbeat_timeout) => Ended::Silent,
            () = self.shared.stop.notified() => Ended::Terminated,
        };
        let active = self.shared.lock().active;
        (ended, active)
    }

    /// The failure that ends the subscription after a connection ended so; `None` when it is
    /// connected again.
    fn end_of(&self, ended: Ended) -> Option<ToolSourceError> {
        let name = &self.name;
        let reason = match ended {
            Ended::Terminated => {
                let error = self.shared.lock().terminated.clone()?;
                let what = format!("the subscription to {name} (the server terminated it)");
                refusal(&what, &error)
            }
            Ended::Replied(Ok(Reply {
                outcome: Err(error),
                ..
            })) => refusal(&format!("events/stream for {name}"), &error),
            Ended::Replied(Ok(Reply { outcome: Ok(_), .. })) => {
                tracing::debug!(event = %name, "the server closed events/stream; connecting again");
                return None;
            }
            Ended::Replied(Err(Fault::TooLarge)) => Reason::invalid_response(format!(
                "the server sent an event of {name} larger than {} bytes",
                self.mcp.options.max_response_bytes
            )),
            Ended::Replied(Err(Fault::Elsewhere)) => Fault::elsewhere_reason(),
            Ended::Replied(Err(Fault::Failed(
                reason @ (Reason::Authentication { .. } | Reason::Unsupported { .. }),
            ))) => reason,
            Ended::Replied(Err(Fault::Failed(reason))) => {
                tracing::debug!(event = %name, reason = reason.description(), "events/stream dropped; connecting again");
                return None;
            }
            Ended::Silent => {
                tracing::debug!(event = %name, "events/stream fell silent; connecting again");
                return None;
            }
        };
        Some(self.mcp.error(reason))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use serde_json::json;

    use super::*;

    fn shared(max_buffered: usize, max_buffered_bytes: usize) -> Shared {
        Shared::new(None, 1, max_buffered, max_buffered_bytes)
    }

    fn tick() -> EventCheck {
        EventCheck::of(
            &serde_json::from_value(json!({
                "name": "tick", "delivery": ["push"],
                "payloadSchema": {"type": "object", "required": ["n"]}
            }))
            .unwrap(),
        )
    }

    fn event(n: u64) -> Value {
        json!({"eventId": format!("t{n}"), "name": "tick", "timestamp": "t",
               "data": {"n": n}, "cursor": n.to_string()})
    }

    #[tokio::test]
    async fn the_oldest_deliveries_past_the_cap_are_dropped_and_the_gap_said() {
        let shared = Arc::new(shared(3, 1 << 20));
        let checked = tick();
        for n in 1..=5 {
            shared.heard(1, &checked, EVENT, Some(&event(n)));
        }
        // What an earlier connection's reader says is not heard.
        shared.heard(0, &checked, EVENT, Some(&event(99)));
        assert_eq!(shared.lock().cursor.as_deref(), Some("5"));
        let mut stream = EventStream {
            shared: shared.clone(),
            task: tokio::spawn(async {}).abort_handle(),
        };
        assert_eq!(
            stream.next().await.unwrap().unwrap(),
            Delivery::Truncated { dropped: 2 }
        );
        for n in 3..=5 {
            match stream.next().await.unwrap().unwrap() {
                Delivery::Event(event) => assert_eq!(event.cursor, Some(n.to_string())),
                other => panic!("{other:?}"),
            }
        }
        shared.finish(None);
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn frames_are_read_into_deliveries_and_the_cursor() {
        let shared = Arc::new(shared(16, 1 << 20));
        let checked = tick();
        shared.heard(
            1,
            &checked,
            ACTIVE,
            Some(&json!({"cursor": "4", "truncated": true})),
        );
        shared.heard(
            1,
            &checked,
            EVENT,
            Some(&json!({"eventId": "x", "name": "tick",
            "timestamp": "t", "data": {}})),
        );
        shared.heard(1, &checked, HEARTBEAT, Some(&json!({"cursor": "9"})));
        shared.heard(
            1,
            &checked,
            ERROR,
            Some(&json!({"error": {"code": -32603, "message": "upstream 503"}})),
        );
        shared.heard(
            1,
            &checked,
            "notifications/events/new_in_2027",
            Some(&json!({})),
        );
        assert_eq!(shared.lock().cursor.as_deref(), Some("9"));
        let mut stream = EventStream {
            shared: shared.clone(),
            task: tokio::spawn(async {}).abort_handle(),
        };
        assert_eq!(
            stream.next().await.unwrap().unwrap(),
            Delivery::Active {
                cursor: Some("4".into()),
                truncated: true
            }
        );
        match stream.next().await.unwrap().unwrap() {
            Delivery::Refused(refused) => {
                assert!(
                    refused.problem.contains("missing required property \"n\""),
                    "{refused}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            stream.next().await.unwrap().unwrap(),
            Delivery::Error("upstream 503 (-32603)".into())
        );
        shared.heard(
            1,
            &checked,
            TERMINATED,
            Some(&json!({"error": {"code": -32024, "message": "Forbidden"}})),
        );
        assert_eq!(
            shared.lock().terminated.as_ref().map(|e| e.code),
            Some(-32024)
        );
        // Nothing is heard after the termination.
        shared.heard(1, &checked, EVENT, Some(&event(10)));
        assert!(shared.lock().items.is_empty());
    }

    #[test]
    fn a_delivery_larger_than_the_byte_cap_is_dropped_alone() {
        let shared = shared(16, 200);
        let mut state = shared.lock();
        let big: Event = serde_json::from_value(json!({"eventId": "b", "name": "tick",
            "timestamp": "t", "data": {"text": "x".repeat(500)}}))
        .unwrap();
        shared.keep(&mut state, Delivery::Error("small".into()));
        shared.keep(&mut state, Delivery::Event(big));
        assert_eq!((state.items.len(), state.dropped), (1, 1));
    }
}
