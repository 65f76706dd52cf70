//! [`Mcp`]'s events (SEP-3415, the `io.modelcontextprotocol/events` extension, Beta): what the
//! server lets a client subscribe to, and the events themselves, by poll and by push.
//!
//! - [`Mcp::list_events`] gives its event types (`events/list`): each an [`EventType`] with the
//!   JSON Schema of its subscription's arguments, the schema of its events' payloads, and the
//!   delivery modes it offers.
//! - [`Mcp::poll_events`] asks what happened since a cursor (`events/poll`): an [`EventBatch`],
//!   with the cursor to ask from next and `truncated` when the server skipped events (the cursor
//!   was older than it keeps).
//! - [`Mcp::stream_events`] holds an `events/stream` open and hands its deliveries over as they
//!   come ([`EventStream`], `events/stream.rs`): it connects again from its last cursor when the
//!   connection drops or falls silent, and keeps at most a bounded number of deliveries for a
//!   consumer that falls behind, the oldest dropped and the gap said.
//!
//! Every event's `data` is checked against its type's `payloadSchema` (located, every problem
//! at once, as a tool's input is), and the arguments of a subscription against its
//! `inputSchema` before anything is sent. An event that breaks its schema, or is no event, is
//! refused ([`RefusedEvent`]): it is never delivered, and nothing of its payload is kept.
//! Payloads are the server's words, untrusted as a tool's results are.
//!
//! - [`Mcp::subscribe_events`] asks for webhook delivery (`events/subscribe`): the server POSTs
//!   each event, signed, to a URL the caller receives at (`events/webhook.rs`); the caller
//!   reads each delivery with an [`EventCheck`] and refreshes the subscription before its
//!   [`WebhookGrant::refresh_before`].
//!
//! The events extension is declared under `capabilities.extensions`; a server of the design
//! sketch ChatGPT speaks declares a top-level `events` instead, and is taken as declaring it too.

mod stream;
mod webhook;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::jsonrpc::{self, RpcError};
use super::results::MAX_SERVER_WORDS;
use super::source::{Mcp, no_longer_spoken};
use super::transport::subscription::SUBSCRIPTION_ID;
use super::transport::{Fault, Request};
use toolkit_core::input::InputCheck;
use toolkit_core::{JsonObject, Reason, ToolSourceError};

pub use stream::{Delivery, EventStream};
pub use webhook::WebhookGrant;

/// The extension's identifier, under `capabilities.extensions`.
pub const EVENTS_EXTENSION: &str = "io.modelcontextprotocol/events";

/// The shortest wait between two polls that [`EventBatch::wait`] is asked to keep by default:
/// the floor the extension recommends, so that a server cannot make a client poll in a loop.
pub const MIN_POLL_WAIT: Duration = Duration::from_secs(1);

/// `NotFound`: an event type (or webhook subscription) the server does not have.
const NOT_FOUND: i64 = -32023;
/// `Forbidden`: the principal may not subscribe to this, or no longer may.
const FORBIDDEN: i64 = -32024;
/// `ResourceExhausted`: a limit or quota of the server was reached.
const RESOURCE_EXHAUSTED: i64 = -32025;
/// `Unsupported`: a mode or option the server does not offer here.
const UNSUPPORTED: i64 = -32026;
/// `CallbackEndpointError`: the server could not verify or reach a webhook's URL (`-32015` in
/// the design sketch ChatGPT's servers speak).
const CALLBACK_ENDPOINT_ERROR: [i64; 2] = [-32027, -32015];

/// How an event type's events reach a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryMode {
    /// `events/poll`: the client asks what happened since its cursor.
    Poll,
    /// `events/stream`: one long-lived request per subscription, its events as notifications.
    Push,
    /// `events/subscribe`: the server POSTs signed events to a URL the client gave.
    Webhook,
    /// A mode this client does not know (a newer revision's).
    #[serde(other)]
    Other,
}

impl DeliveryMode {
    /// Its name on the wire (`poll`, `push`, `webhook`), `other` for one this client does not
    /// know.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Poll => "poll",
            Self::Push => "push",
            Self::Webhook => "webhook",
            Self::Other => "other",
        }
    }
}

/// One event type a server offers, as `events/list` gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventType {
    /// What a client subscribes to (`incident.created`).
    pub name: String,
    /// When the event fires, for a person or a model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The delivery modes it offers: any non-empty set of them.
    pub delivery: Vec<DeliveryMode>,
    /// The JSON Schema of a subscription's `arguments` (filters, transforms, settings); an
    /// object of any keys when the server gave none.
    #[serde(default = "any_object")]
    pub input_schema: JsonObject,
    /// The JSON Schema of each event's `data`.
    pub payload_schema: JsonObject,
    /// `_meta`, as the server wrote it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// `{"type": "object"}`.
fn any_object() -> JsonObject {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema
}

impl EventType {
    /// Whether it offers `mode`.
    pub fn offers(&self, mode: DeliveryMode) -> bool {
        self.delivery.contains(&mode)
    }

    /// Whether the entry is one a client can subscribe to: a name, and at least one delivery
    /// mode.
    ///
    /// # Errors
    ///
    /// The first problem, for a person.
    pub fn check(&self) -> Result<(), String> {
        if self.name.is_empty() {
            return Err("an event type without a name".to_owned());
        }
        if self.delivery.is_empty() {
            return Err(format!(
                "the event type {} offers no delivery mode",
                self.name
            ));
        }
        Ok(())
    }

    /// Whether `arguments` are what its `inputSchema` takes.
    ///
    /// # Errors
    ///
    /// Every problem, each with its JSON path, for the model that wrote them.
    pub fn check_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        let check = InputCheck::new(&self.input_schema);
        check
            .check(&Value::Object(arguments.clone()))
            .map_err(|invalid| {
                format!(
                    "the arguments do not fit the event type {}: {}",
                    self.name,
                    invalid.problems().join("; ")
                )
            })
    }

    /// Refuses a mode the type does not offer, saying which it does.
    fn offering(&self, mode: DeliveryMode) -> Result<(), Reason> {
        if self.offers(mode) {
            return Ok(());
        }
        let offered: Vec<&str> = self.delivery.iter().map(|mode| mode.as_str()).collect();
        Err(Reason::unsupported(format!(
            "the event type {} is not delivered by {}, only by {}",
            self.name,
            mode.as_str(),
            offered.join(", ")
        )))
    }
}

/// One event, as delivered (`EventOccurrence`): its `data` checked against its type's
/// `payloadSchema`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The server's stable identifier of the event (the upstream's, when it has one): the same
    /// event delivered twice (after a reconnection, by two paths) has the same.
    pub event_id: String,
    /// Its type's name.
    pub name: String,
    /// When it happened (ISO 8601), as the server wrote it.
    pub timestamp: String,
    /// Its payload, which fits its type's `payloadSchema`. The server's words: untrusted.
    pub data: JsonObject,
    /// The subscription's position after it (push; a poll's is its batch's): where to resume
    /// once it is handled. `None` for a type the server does not replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// `_meta`, as the server wrote it (the stream's subscription id left out).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// An event refused: it breaks its type's `payloadSchema`, or is no event. Only its id (when it
/// had one) and what was wrong are kept; it is never delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedEvent {
    /// Its `eventId`, when it had one.
    pub event_id: Option<String>,
    /// What was wrong, each problem with its JSON path in the payload.
    pub problem: String,
}

impl std::fmt::Display for RefusedEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.problem)
    }
}

/// What one `events/poll` gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventBatch {
    /// The events since the cursor asked from, in the server's order, each checked.
    pub events: Vec<Event>,
    /// The events of the batch that were refused (see [`RefusedEvent`]).
    pub refused: Vec<RefusedEvent>,
    /// Where to poll from next (what to keep); `None` for a type the server does not replay:
    /// poll from now each time.
    pub cursor: Option<String>,
    /// The server skipped events to answer: the cursor asked from was older than it keeps (or
    /// than `maxAgeMs`). A gap: what matters should be read again with tools.
    pub truncated: bool,
    /// More events wait beyond this batch: poll again at once.
    pub has_more: bool,
    /// How long the server asks to be left until the next poll (`nextPollMs`), when it said.
    pub next_poll: Option<Duration>,
}

impl EventBatch {
    /// How long to wait before the next poll: none when more events wait, else what the
    /// server asked, never less than `floor` (see [`MIN_POLL_WAIT`]).
    pub fn wait(&self, floor: Duration) -> Duration {
        if self.has_more {
            return Duration::ZERO;
        }
        self.next_poll.unwrap_or(floor).max(floor)
    }
}

/// The options of a subscription: how far back it may replay, and for a stream, its bounds.
///
/// ```
/// use std::time::Duration;
/// use toolkit_mcp::EventOptions;
///
/// let options = EventOptions::default()
///     .max_age(Duration::from_secs(300))
///     .max_buffered(64);
/// assert_eq!(options.max_buffered, 64);
/// assert_eq!(options.heartbeat_timeout, Duration::from_secs(60));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EventOptions {
    /// Replay no event older than this (`maxAgeMs`), when a cursor is given; the server says
    /// `truncated` when that skips some. None by default.
    pub max_age: Option<Duration>,
    /// Poll: at most this many events in one batch (`maxEvents`); the server's default when
    /// `None` (the default).
    pub max_events: Option<u32>,
    /// Push: the most deliveries kept for a consumer that has not taken them; past it the
    /// oldest are dropped and [`Delivery::Truncated`] says how many. 256 by default.
    pub max_buffered: usize,
    /// Push: the most bytes of payloads kept so (a delivery larger on its own is dropped the
    /// same way). 8 MiB by default.
    pub max_buffered_bytes: usize,
    /// Push: how long a stream may be silent (no event, no heartbeat) before it is taken for
    /// dead and connected again from its cursor. Servers send a heartbeat at least every 30
    /// seconds; 60 seconds by default.
    pub heartbeat_timeout: Duration,
    /// Push: the wait before connecting again, doubled after each connection that did not
    /// open, up to [`max_reconnect_wait`](Self::max_reconnect_wait). 1 second by default.
    pub reconnect_wait: Duration,
    /// Push: the longest wait before connecting again. 30 seconds by default.
    pub max_reconnect_wait: Duration,
    /// Push: how many connections in a row may fail to open (no `active`) before the stream
    /// ends as unavailable. 8 by default.
    pub max_failed_connects: usize,
}

impl Default for EventOptions {
    fn default() -> Self {
        Self {
            max_age: None,
            max_events: None,
            max_buffered: 256,
            max_buffered_bytes: 8 * 1024 * 1024,
            heartbeat_timeout: Duration::from_secs(60),
            reconnect_wait: Duration::from_secs(1),
            max_reconnect_wait: Duration::from_secs(30),
            max_failed_connects: 8,
        }
    }
}

/// Builder methods: each sets one field, the others keep their [`Default`] values.
impl EventOptions {
    /// Sets [`max_age`](Self::max_age).
    #[must_use]
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = Some(max_age);
        self
    }

    /// Sets [`max_events`](Self::max_events).
    #[must_use]
    pub fn max_events(mut self, max_events: u32) -> Self {
        self.max_events = Some(max_events);
        self
    }

    /// Sets [`max_buffered`](Self::max_buffered) (at least 1).
    #[must_use]
    pub fn max_buffered(mut self, max_buffered: usize) -> Self {
        self.max_buffered = max_buffered.max(1);
        self
    }

    /// Sets [`max_buffered_bytes`](Self::max_buffered_bytes).
    #[must_use]
    pub fn max_buffered_bytes(mut self, max_buffered_bytes: usize) -> Self {
        self.max_buffered_bytes = max_buffered_bytes;
        self
    }

    /// Sets [`heartbeat_timeout`](Self::heartbeat_timeout).
    #[must_use]
    pub fn heartbeat_timeout(mut self, heartbeat_timeout: Duration) -> Self {
        self.heartbeat_timeout = heartbeat_timeout;
        self
    }

    /// Sets [`reconnect_wait`](Self::reconnect_wait).
    #[must_use]
    pub fn reconnect_wait(mut self, reconnect_wait: Duration) -> Self {
        self.reconnect_wait = reconnect_wait;
        self
    }

    /// Sets [`max_reconnect_wait`](Self::max_reconnect_wait).
    #[must_use]
    pub fn max_reconnect_wait(mut self, max_reconnect_wait: Duration) -> Self {
        self.max_reconnect_wait = max_reconnect_wait;
        self
    }

    /// Sets [`max_failed_connects`](Self::max_failed_connects) (at least 1).
    #[must_use]
    pub fn max_failed_connects(mut self, max_failed_connects: usize) -> Self {
        self.max_failed_connects = max_failed_connects.max(1);
        self
    }

    /// The params of a subscription to `event` with `arguments` from `cursor` (`null`: from
    /// now), as `events/poll` and `events/stream` take them.
    fn params(&self, event: &str, arguments: &JsonObject, cursor: Option<&str>) -> JsonObject {
        let mut params = Map::new();
        params.insert("name".into(), json!(event));
        params.insert("arguments".into(), Value::Object(arguments.clone()));
        params.insert("cursor".into(), cursor.map_or(Value::Null, |c| json!(c)));
        if let Some(max_age) = self.max_age {
            let millis = u64::try_from(max_age.as_millis()).unwrap_or(u64::MAX);
            params.insert("maxAgeMs".into(), json!(millis));
        }
        params
    }
}

/// An event type's events as they are read: the type's name and its payload schema, compiled
/// once. What a webhook receives is read with it as a poll's events are.
pub struct EventCheck {
    name: String,
    payload: InputCheck,
}

impl std::fmt::Debug for EventCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventCheck")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl EventCheck {
    /// The check of `event`'s occurrences.
    pub fn of(event: &EventType) -> Self {
        Self {
            name: event.name.clone(),
            payload: InputCheck::new(&event.payload_schema),
        }
    }

    /// Reads one occurrence of the type: an [`Event`] whose `data` fits the schema, or what is
    /// wrong with it.
    ///
    /// # Errors
    ///
    /// [`RefusedEvent`], saying what is wrong: no `data`, a `data` outside the payload schema,
    /// no event's shape, another type's name.
    pub fn read(&self, occurrence: &Value) -> Result<Event, RefusedEvent> {
        let event_id = occurrence
            .get("eventId")
            .and_then(Value::as_str)
            .map(|id| toolkit_core::text::cut_utf16(id, MAX_SERVER_WORDS));
        let refused = |problem: String| RefusedEvent {
            event_id: event_id.clone(),
            problem,
        };
        let shown = event_id.as_deref().unwrap_or("without an eventId");
        let name = &self.name;
        let data = occurrence.get("data").ok_or_else(|| {
            refused(format!(
                "the event {shown} of {name} has no `data`: it is no event"
            ))
        })?;
        self.payload.check(data).map_err(|invalid| {
            refused(format!(
                "the event {shown} of {name} breaks its payloadSchema: {}",
                invalid.problems().join("; ")
            ))
        })?;
        let mut event = Event::deserialize(occurrence).map_err(|error| {
            let error = toolkit_core::text::cut_utf16(&error.to_string(), MAX_SERVER_WORDS);
            refused(format!("the event {shown} of {name} is no event: {error}"))
        })?;
        if event.name != self.name {
            let other = toolkit_core::text::cut_utf16(&event.name, MAX_SERVER_WORDS);
            return Err(refused(format!(
                "the event {shown} is of type {other:?}, delivered for {name}"
            )));
        }
        if let Some(meta) = &mut event.meta {
            meta.remove(SUBSCRIPTION_ID);
            if meta.is_empty() {
                event.meta = None;
            }
        }
        Ok(event)
    }
}

/// The cursor a result or a notification gives: a string, or none (`null` or absent alike).
pub(crate) fn cursor_of(object: Option<&Value>) -> Option<String> {
    object?.get("cursor")?.as_str().map(str::to_owned)
}

/// The reason of an `error` the server gave for `what` (an answer to `events/poll` or
/// `events/stream`, or a stream's `terminated`), decided by its code; its words are passed on,
/// cut, never read.
pub(crate) fn refusal(what: &str, error: &RpcError) -> Reason {
    let words = toolkit_core::text::cut_utf16(&error.message, MAX_SERVER_WORDS);
    match error.code {
        jsonrpc::METHOD_NOT_FOUND => Reason::unsupported(format!(
            "the server does not answer {what} (it is no method of it)"
        )),
        jsonrpc::INVALID_PARAMS => Reason::invalid_input(format!(
            "the server refused the arguments of {what}: {words}"
        )),
        NOT_FOUND => Reason::not_found(format!(
            "the server has no such event type ({what}: {words})"
        )),
        FORBIDDEN => Reason::authentication(format!(
            "the server does not let this client subscribe ({what}: {words})"
        )),
        RESOURCE_EXHAUSTED => Reason::unavailable(format!(
            "the server has no room for the subscription now ({what}: {words})"
        )),
        UNSUPPORTED => Reason::unsupported(format!("the server does not offer {what}: {words}")),
        code if CALLBACK_ENDPOINT_ERROR.contains(&code) => {
            let why = error
                .data
                .as_ref()
                .and_then(|data| data.get("reason"))
                .and_then(Value::as_str)
                .map(|why| toolkit_core::text::cut_utf16(why, 64));
            Reason::unavailable(format!(
                "the server could not verify or reach the webhook's URL ({what}: {words}{})",
                why.map(|why| format!(", {why}")).unwrap_or_default()
            ))
        }
        jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => no_longer_spoken(),
        code => Reason::unknown(format!("the server failed {what} ({code}: {words})")),
    }
}

impl Mcp {
    /// Whether the server declared the events extension (in `capabilities.extensions`, or as
    /// the design sketch's top-level `events`).
    ///
    /// # Errors
    ///
    /// As [`Mcp::capabilities`].
    pub async fn has_events(&self) -> Result<bool, ToolSourceError> {
        Ok(self.capabilities().await?.is_some_and(|capabilities| {
            capabilities
                .pointer(&format!(
                    "/extensions/{}",
                    EVENTS_EXTENSION.replace('/', "~1")
                ))
                .or_else(|| capabilities.get("events"))
                .is_some_and(Value::is_object)
        }))
    }

    /// The event types the server offers (every page of `events/list`). An entry a client
    /// cannot subscribe to (not an event type's shape, no delivery mode, a name listed before)
    /// is left out, and logged.
    ///
    /// # Errors
    ///
    /// [`Unsupported`](Reason::Unsupported) when the server did not declare the extension;
    /// else as [`Mcp::list_resources`].
    pub async fn list_events(&self) -> Result<Vec<EventType>, ToolSourceError> {
        self.events_declared().await?;
        let listed = self.every_page("events/list", "events").await?;
        let mut types: Vec<EventType> = Vec::with_capacity(listed.len());
        for entry in listed {
            let read = serde_json::from_value::<EventType>(entry)
                .map_err(|error| format!("an events/list entry is not an event type: {error}"))
                .and_then(|read| read.check().map(|()| read))
                .and_then(|read| {
                    if types.iter().any(|listed| listed.name == read.name) {
                        Err(format!("the event type {} is listed twice", read.name))
                    } else {
                        Ok(read)
                    }
                });
            match read {
                Ok(read) => types.push(read),
                Err(problem) => {
                    let problem = toolkit_core::text::cut_utf16(&problem, MAX_SERVER_WORDS);
                    tracing::warn!(source = %toolkit_core::ToolSource::name(self), "an event type left out: {problem}");
                }
            }
        }
        Ok(types)
    }

    /// What happened to `event` since `cursor` (`events/poll`), for a subscription with
    /// `arguments`: `None` starts from now (no events, a cursor to poll from next).
    ///
    /// # Errors
    ///
    /// As [`Mcp::poll_events_with`].
    pub async fn poll_events(
        &self,
        event: &EventType,
        arguments: JsonObject,
        cursor: Option<&str>,
    ) -> Result<EventBatch, ToolSourceError> {
        self.poll_events_with(event, arguments, cursor, &EventOptions::default())
            .await
    }

    /// [`Mcp::poll_events`] with `options` (`max_age`, `max_events`).
    ///
    /// # Errors
    ///
    /// Arguments that do not fit the type's `inputSchema` are
    /// [`InvalidInput`](Reason::InvalidInput), unsent; a type that does not offer poll, or a
    /// server without the extension, [`Unsupported`](Reason::Unsupported); the server's
    /// refusals by their code (`NotFound`, `Forbidden` as
    /// [`Authentication`](Reason::Authentication), `InvalidParams` as
    /// [`InvalidInput`](Reason::InvalidInput)); an answer that is no poll result
    /// [`InvalidResponse`](Reason::InvalidResponse); else as a call fails. An event that breaks
    /// its schema fails nothing: it is in [`EventBatch::refused`].
    pub async fn poll_events_with(
        &self,
        event: &EventType,
        arguments: JsonObject,
        cursor: Option<&str>,
        options: &EventOptions,
    ) -> Result<EventBatch, ToolSourceError> {
        self.events_declared().await?;
        event
            .offering(DeliveryMode::Poll)
            .map_err(|reason| self.error(reason))?;
        event
            .check_arguments(&arguments)
            .map_err(|problem| self.error(Reason::invalid_input(problem)))?;
        let mut params = options.params(&event.name, &arguments, cursor);
        if let Some(max_events) = options.max_events {
            params.insert("maxEvents".into(), json!(max_events));
        }
        let result = self.ask_events("events/poll", params).await?;
        self.batch(&EventCheck::of(event), &result)
            .map_err(|reason| self.error(reason))
    }

    /// Reads a poll result, each event checked by `checked`.
    fn batch(&self, checked: &EventCheck, result: &JsonObject) -> Result<EventBatch, Reason> {
        let Some(Value::Array(events)) = result.get("events") else {
            return Err(Reason::invalid_response(
                "an events/poll result without an `events` array",
            ));
        };
        let cursor = match result.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor.clone()),
            Some(_) => {
                return Err(Reason::invalid_response(
                    "an events/poll result whose cursor is no string",
                ));
            }
        };
        let flag = |key: &str| result.get(key).and_then(Value::as_bool).unwrap_or(false);
        let mut batch = EventBatch {
            cursor,
            truncated: flag("truncated"),
            has_more: flag("hasMore"),
            next_poll: result
                .get("nextPollMs")
                .and_then(Value::as_u64)
                .map(Duration::from_millis),
            ..EventBatch::default()
        };
        for occurrence in events {
            match checked.read(occurrence) {
                Ok(event) => batch.events.push(event),
                Err(refused) => {
                    tracing::warn!(source = %toolkit_core::ToolSource::name(self), "an event refused: {refused}");
                    batch.refused.push(refused);
                }
            }
        }
        Ok(batch)
    }

    /// Sends `method` with `params` within the timeout, and gives its result: a JSON-RPC error
    /// is the reason [`refusal`] says.
    pub(crate) async fn ask_events(
        &self,
        method: &'static str,
        params: JsonObject,
    ) -> Result<JsonObject, ToolSourceError> {
        self.bounded(async {
            let reply = self
                .send(Request::new(method, params))
                .await
                .map_err(|fault| match fault {
                    Fault::TooLarge => self.error(Reason::invalid_response(format!(
                        "the server answered {method} with more than {} bytes (ask for fewer events)",
                        self.options.max_response_bytes
                    ))),
                    fault => self.list_fault(fault),
                })?;
            let result = reply
                .outcome
                .map_err(|error| self.error(refusal(method, &error)))?;
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => Ok(result),
                Some(other) => {
                    let other = toolkit_core::text::cut_utf16(other, MAX_SERVER_WORDS);
                    Err(self.error(Reason::unsupported(format!(
                        "the server answered {method} with a result of type {other:?}, which this client does not take here"
                    ))))
                }
            }
        })
        .await
    }

    /// Refuses when the server did not declare the extension.
    pub(crate) async fn events_declared(&self) -> Result<(), ToolSourceError> {
        if self.has_events().await? {
            Ok(())
        } else {
            Err(self.error(Reason::unsupported(
                "the server offers no events (it did not declare the events extension)",
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    fn alert() -> EventType {
        serde_json::from_value(json!({
            "name": "alert",
            "delivery": ["poll", "push", "carrier-pigeon"],
            "inputSchema": {
                "type": "object",
                "properties": {"service": {"type": "string"}},
                "additionalProperties": false
            },
            "payloadSchema": {
                "type": "object",
                "properties": {"level": {"type": "integer"}},
                "required": ["level"]
            }
        }))
        .unwrap_or_else(|_| EventType {
            name: String::new(),
            description: String::new(),
            delivery: vec![],
            input_schema: Map::new(),
            payload_schema: Map::new(),
            meta: None,
        })
    }

    #[test]
    fn an_event_type_is_read_with_its_modes_and_schemas() {
        let alert = alert();
        assert_eq!(alert.check(), Ok(()));
        assert_eq!(
            alert.delivery,
            [DeliveryMode::Poll, DeliveryMode::Push, DeliveryMode::Other]
        );
        assert!(alert.offers(DeliveryMode::Push) && !alert.offers(DeliveryMode::Webhook));
        let refused = alert.offering(DeliveryMode::Webhook).err();
        assert!(
            refused.is_some_and(|reason| reason.description().contains("only by poll, push")),
            "{alert:?}"
        );
        assert!(
            alert
                .check_arguments(&object(json!({"service": "db"})))
                .is_ok()
        );
        let problem = alert
            .check_arguments(&object(json!({"service": 3, "other": true})))
            .err()
            .unwrap_or_default();
        assert!(
            problem.contains("expected string, got an integer at /service"),
            "{problem}"
        );
        assert!(problem.contains("unknown property \"other\""), "{problem}");
        // Without an inputSchema, any object is taken.
        let bare: Result<EventType, _> =
            serde_json::from_value(json!({"name": "x", "delivery": ["push"], "payloadSchema": {}}));
        assert!(bare.is_ok_and(|bare| bare.input_schema == any_object()));
        let silent: Result<EventType, _> =
            serde_json::from_value(json!({"name": "x", "delivery": [], "payloadSchema": {}}));
        assert!(silent.is_ok_and(|silent| silent.check().is_err()));
    }

    #[test]
    fn an_occurrence_is_delivered_only_when_its_payload_fits() {
        let checked = EventCheck::of(&alert());
        let good = json!({
            "eventId": "e1", "name": "alert", "timestamp": "2026-12-01T00:00:00Z",
            "data": {"level": 2}, "cursor": "7",
            "_meta": {SUBSCRIPTION_ID: 4, "trace": "t"}
        });
        let event = checked.read(&good);
        assert_eq!(
            event,
            Ok(Event {
                event_id: "e1".into(),
                name: "alert".into(),
                timestamp: "2026-12-01T00:00:00Z".into(),
                data: object(json!({"level": 2})),
                cursor: Some("7".into()),
                meta: Some(object(json!({"trace": "t"}))),
            })
        );
        let bad =
            json!({"eventId": "e2", "name": "alert", "timestamp": "t", "data": {"level": "high"}});
        let refused = checked.read(&bad).err();
        let problem = refused.map(|refused| (refused.event_id, refused.problem));
        assert!(
            problem
                .as_ref()
                .is_some_and(|(id, problem)| id.as_deref() == Some("e2")
                    && problem.contains("breaks its payloadSchema")
                    && problem.contains("expected integer, got a string at /level")),
            "{problem:?}"
        );
        for (occurrence, expected) in [
            (
                json!({"eventId": "e3", "name": "alert", "timestamp": "t"}),
                "has no `data`",
            ),
            (
                json!({"name": "alert", "data": {"level": 1}}),
                "is no event",
            ),
            (
                json!({"eventId": "e4", "name": "other", "timestamp": "t", "data": {"level": 1}}),
                "delivered for alert",
            ),
        ] {
            let problem = checked
                .read(&occurrence)
                .err()
                .map(|refused| refused.problem);
            assert!(
                problem
                    .as_deref()
                    .is_some_and(|problem| problem.contains(expected)),
                "{problem:?}"
            );
        }
    }

    #[test]
    fn a_refusal_is_read_by_its_code() {
        let error = |code| RpcError {
            code,
            message: "no".into(),
            data: None,
        };
        assert!(matches!(
            refusal("events/poll", &error(-32023)),
            Reason::NotFound { .. }
        ));
        assert!(matches!(
            refusal("events/poll", &error(-32024)),
            Reason::Authentication { .. }
        ));
        assert!(matches!(
            refusal("events/poll", &error(-32025)),
            Reason::Unavailable { .. }
        ));
        assert!(matches!(
            refusal("events/poll", &error(-32026)),
            Reason::Unsupported { .. }
        ));
        assert!(matches!(
            refusal("events/poll", &error(-32602)),
            Reason::InvalidInput { .. }
        ));
        assert!(matches!(
            refusal("events/poll", &error(-1)),
            Reason::Unknown { .. }
        ));
    }

    #[test]
    fn a_batch_waits_as_the_server_asks_never_under_the_floor() {
        let mut batch = EventBatch {
            next_poll: Some(Duration::from_millis(10)),
            ..EventBatch::default()
        };
        assert_eq!(batch.wait(MIN_POLL_WAIT), MIN_POLL_WAIT);
        batch.next_poll = Some(Duration::from_secs(30));
        assert_eq!(batch.wait(MIN_POLL_WAIT), Duration::from_secs(30));
        batch.has_more = true;
        assert_eq!(batch.wait(MIN_POLL_WAIT), Duration::ZERO);
        assert_eq!(EventBatch::default().wait(MIN_POLL_WAIT), MIN_POLL_WAIT);
    }
}
