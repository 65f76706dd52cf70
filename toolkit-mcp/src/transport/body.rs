//! Reading a response body, as JSON or as an event stream (SSE), never past a size cap.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{Event, EventStreamError, Eventsource as _};
use futures_util::{FutureExt as _, Stream, StreamExt as _};
use reqwest::Response;
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

use super::Fault;
use super::status::transport_failure;
use crate::jsonrpc::{Incoming, Outcome, ServerRequest};
use toolkit_core::progress::Routes;
use toolkit_core::{CallContext, Reason};

/// How a body is written, by its `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `application/json`: one message (or a batch).
    Json,
    /// `text/event-stream`: messages as events.
    EventStream,
    /// Anything else: not MCP.
    Other,
}

/// The kind of `response`'s body.
pub(crate) fn kind(response: &Response) -> Kind {
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    match essence {
        "application/json" => Kind::Json,
        "text/event-stream" => Kind::EventStream,
        _ => Kind::Other,
    }
}

/// Why a capped body stream stopped.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// More bytes than the cap.
    TooLarge,
    /// The connection failed.
    Transport(reqwest::Error),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge => f.write_str("the answer is larger than the cap"),
            Self::Transport(error) => write!(f, "{error}"),
        }
    }
}

impl From<BodyError> for Fault {
    fn from(error: BodyError) -> Self {
        match error {
            BodyError::TooLarge => Fault::TooLarge,
            BodyError::Transport(error) => Fault::Failed(transport_failure(error)),
        }
    }
}

/// The body's chunks, ending with [`BodyError::TooLarge`] once more than `limit` bytes came.
pub(crate) fn capped(
    response: Response,
    limit: usize,
) -> impl Stream<Item = Result<Bytes, BodyError>> + Send + Unpin {
    let mut seen: usize = 0;
    let mut over = false;
    response.bytes_stream().map(move |chunk| {
        if over {
            return Err(BodyError::TooLarge);
        }
        let chunk = chunk.map_err(BodyError::Transport)?;
        seen = seen.saturating_add(chunk.len());
        if seen > limit {
            over = true;
            return Err(BodyError::TooLarge);
        }
        Ok(chunk)
    })
}

/// The whole body, up to `limit` bytes.
pub(crate) async fn read_all(response: Response, limit: usize) -> Result<Vec<u8>, Fault> {
    let mut body = Vec::new();
    let mut chunks = capped(response, limit);
    while let Some(chunk) = chunks.next().await {
        body.extend_from_slice(&chunk?);
    }
    Ok(body)
}

/// The events of a long-lived event stream (the old HTTP+SSE transport), up to `limit` bytes per
/// event: the count starts again at each blank line, which dispatches an event.
pub(crate) fn events_per_event(
    response: Response,
    limit: usize,
) -> impl Stream<Item = Result<Event, Fault>> + Send + Unpin {
    let mut counter = EventBytes::new(limit);
    let chunks = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(BodyError::Transport)?;
        counter.take(&chunk)?;
        Ok(chunk)
    });
    parse_events(chunks)
}

/// Counts the bytes of an event stream since the last dispatched event, across chunks.
///
/// A line ends with CRLF, LF or CR, and an empty line dispatches the event, so a blank line is
/// any of `\n\n`, `\r\r`, `\r\n\r\n` (or a mix), split across chunks anywhere.
#[derive(Debug)]
pub(crate) struct EventBytes {
    limit: usize,
    /// Bytes since the last dispatch.
    seen: usize,
    /// Whether the line being read is still empty.
    line_empty: bool,
    /// Whether the last byte was a CR (an LF right after it ends no other line).
    after_cr: bool,
}

impl EventBytes {
    /// A counter of at most `limit` bytes per event, at the start of a stream.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            seen: 0,
            line_empty: true,
            after_cr: false,
        }
    }

    /// Counts `chunk`; fails once an event has more than `limit` bytes.
    pub(crate) fn take(&mut self, chunk: &[u8]) -> Result<(), BodyError> {
        for byte in chunk {
            self.seen = self.seen.saturating_add(1);
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    if self.line_empty {
                        self.seen = 0;
                    }
                    self.line_empty = true;
                    self.after_cr = *byte == b'\r';
                }
                _ => {
                    self.line_empty = false;
                    self.after_cr = false;
                }
            }
            if self.seen > self.limit {
                self.seen = 0;
                return Err(BodyError::TooLarge);
            }
        }
        Ok(())
    }
}

/// The events of an event-stream body, up to `limit` bytes in all, and what the stream says of
/// its resumption (kept up to date as it is read). Comments, and events with empty data (priming
/// events), are left out by the parser; their `id` and `retry` fields are not.
pub(crate) fn events(
    response: Response,
    limit: usize,
) -> (
    impl Stream<Item = Result<Event, Fault>> + Send + Unpin,
    Arc<Mutex<Resumption>>,
) {
    let resumption = Arc::new(Mutex::new(Resumption::default()));
    let mut fields = Fields::new(resumption.clone());
    let chunks = capped(response, limit).map(move |chunk| {
        if let Ok(chunk) = &chunk {
            fields.take(chunk);
        }
        chunk
    });
    (parse_events(chunks), resumption)
}

/// What an event stream said of how to resume it: the id of its last event and the time to wait
/// before reconnecting (its `retry` field).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Resumption {
    /// The last event id, once an event with an `id` field was dispatched.
    pub last_event_id: Option<String>,
    /// The reconnection time the server asked for.
    pub retry: Option<Duration>,
}

impl Resumption {
    /// This, updated with what a later stream said.
    pub(crate) fn then(self, later: Self) -> Self {
        Self {
            last_event_id: later.last_event_id.or(self.last_event_id),
            retry: later.retry.or(self.retry),
        }
    }
}

/// The longest line read for an `id` or `retry` field (a longer one is neither).
const MAX_FIELD_LINE: usize = 1024;

/// Reads the `id` and `retry` fields of an event stream as its bytes pass, across chunks (the
/// event parser drops both with an event whose data is empty: a priming event).
struct Fields {
    line: Vec<u8>,
    too_long: bool,
    after_cr: bool,
    /// The `id` of the event being read, set as the last event id when it is dispatched.
    id: Option<String>,
    resumption: Arc<Mutex<Resumption>>,
}

impl Fields {
    fn new(resumption: Arc<Mutex<Resumption>>) -> Self {
        Self {
            line: Vec::new(),
            too_long: false,
            after_cr: false,
            id: None,
            resumption,
        }
    }

    fn take(&mut self, chunk: &[u8]) {
        for byte in chunk {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    self.after_cr = *byte == b'\r';
                    self.end_line();
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() < MAX_FIELD_LINE {
                        self.line.push(*byte);
                    } else {
                        self.too_long = true;
                    }
                }
            }
        }
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let too_long = std::mem::replace(&mut self.too_long, false);
        if line.is_empty() {
            // A blank line dispatches the event, and with it its id.
            if let Some(id) = self.id.take() {
                self.resumption
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .last_event_id = Some(id);
            }
            return;
        }
        if too_long {
            return;
        }
        let Ok(line) = std::str::from_utf8(&line) else {
            return;
        };
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit()) => {
                if let Ok(millis) = value.parse::<u64>() {
                    self.resumption
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .retry = Some(Duration::from_millis(millis));
                }
            }
            _ => {}
        }
    }
}

fn parse_events(
    chunks: impl Stream<Item = Result<Bytes, BodyError>> + Send + Unpin,
) -> impl Stream<Item = Result<Event, Fault>> + Send + Unpin {
    chunks.eventsource().map(|event| {
        event.map_err(|error| match error {
            EventStreamError::Transport(error) => Fault::from(error),
            EventStreamError::Utf8(_) => Fault::Failed(Reason::invalid_response(
                "an event stream that is not UTF-8",
            )),
            EventStreamError::Parser(_) => Fault::Failed(Reason::invalid_response(
                "an event stream that could not be read",
            )),
        })
    })
}

/// The failure of an event stream that ended before the answer came.
pub(crate) fn ended_early() -> Fault {
    Fault::Failed(Reason::unavailable(
        "the event stream ended before the answer came",
    ))
}

/// The messages of one event's data: JSON, a message or a batch, read on the connection of
/// `progress`.
pub(crate) fn messages_of(data: &str, progress: &Routes) -> Result<Vec<Incoming>, Fault> {
    let value: Value = serde_json::from_str(data)
        .map_err(|_| Fault::Failed(Reason::invalid_response("an event whose data is not JSON")))?;
    Ok(Incoming::from_json(value, progress))
}

/// What reading a response for an answer came to.
#[derive(Debug)]
pub(crate) enum Answered {
    /// The answer.
    Outcome(Outcome),
    /// An event stream ended (or broke) before the answer, having given an event id to resume
    /// it from.
    Ended(Resumption),
}

/// How long the rest of a stream whose answer came is read in the background.
const FINISH_WAIT: Duration = Duration::from_secs(2);

/// Reads what is left of an event stream whose answer came — its end, which a server sends right
/// after the answer — so that the connection goes back to the client's pool for the next request
/// instead of being closed (a new connection per call otherwise). At once when the end is already
/// there, else in the background for at most [`FINISH_WAIT`] (and the answer's byte cap).
fn finish<S>(mut rest: S)
where
    S: Stream + Send + Unpin + 'static,
{
    loop {
        match rest.next().now_or_never() {
            Some(Some(_)) => {}
            Some(None) => return,
            None => break,
        }
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let _ =
                tokio::time::timeout(FINISH_WAIT, async { while rest.next().await.is_some() {} })
                    .await;
        });
    }
}

/// Reads the answer to the request `id` from `response` (JSON or SSE), passing each request the
/// server makes on the way to `on_request`, each log it writes to the host of the call of
/// `context` (the stream is the call's own), and its progress to the calls of `progress` (those
/// of the connection it came on).
pub(crate) async fn answer(
    response: Response,
    id: u64,
    limit: usize,
    context: &CallContext,
    progress: &Routes,
    mut on_request: impl FnMut(ServerRequest),
) -> Result<Answered, Fault> {
    let id = Value::from(id);
    match kind(&response) {
        Kind::Json => {
            let body = read_all(response, limit).await?;
            let value: Value = serde_json::from_slice(&body).map_err(|_| {
                Fault::Failed(Reason::invalid_response("an answer that is not JSON"))
            })?;
            let mut found = None;
            for message in Incoming::from_json(value, progress) {
                match message {
                    Incoming::Response { id: got, outcome } if got == id => found = Some(outcome),
                    Incoming::Request(request) => on_request(request),
                    Incoming::Notification { method, params } => {
                        logged(context, &id, &method, params);
                    }
                    Incoming::Response { .. } => {}
                }
            }
            found.map(Answered::Outcome).ok_or_else(|| {
                Fault::Failed(Reason::invalid_response(
                    "a JSON answer that is no response to the request",
                ))
            })
        }
        Kind::EventStream => {
            let (mut events, resumption) = events(response, limit);
            let resumable = || {
                let resumption = resumption
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                resumption.last_event_id.is_some().then_some(resumption)
            };
            while let Some(event) = events.next().await {
                let event = match event {
                    Ok(event) => event,
                    // A connection that broke after an event id can be resumed from it.
                    Err(fault @ Fault::Failed(Reason::Unavailable { .. })) => {
                        return resumable().map(Answered::Ended).ok_or(fault);
                    }
                    Err(fault) => return Err(fault),
                };
                // Priming events (`id:` with empty data) and other event types carry no message.
                if event.event != "message" || event.data.trim().is_empty() {
                    continue;
                }
                for message in messages_of(&event.data, progress)? {
                    match message {
                        Incoming::Response { id: got, outcome } if got == id => {
                            finish(events);
                            return Ok(Answered::Outcome(outcome));
                        }
                        Incoming::Request(request) => on_request(request),
                        Incoming::Notification { method, params } => {
                            logged(context, &id, &method, params);
                        }
                        Incoming::Response { .. } => {}
                    }
                }
            }
            match resumable() {
                Some(resumption) => Ok(Answered::Ended(resumption)),
                None => Err(ended_early()),
            }
        }
        Kind::Other => Err(Fault::Failed(Reason::invalid_response(
            "an answer that is neither JSON nor an event stream",
        ))),
    }
}

/// A log the server wrote on the stream of the call of `context`, told to its host; or a
/// notification of the long-lived request `id` (`events/stream`), given to where its context says.
fn logged(context: &CallContext, id: &Value, method: &str, params: Option<Value>) {
    if method == "notifications/message" {
        context.report(|tool| toolkit_core::progress::logged(tool, params.as_ref()));
    } else if let Some(heard) = context.extension::<super::subscription::Heard>() {
        heard.hear_if_named(id, method, params.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks` to a counter of `limit`, saying which chunk failed, if any.
    fn failing_chunk(limit: usize, chunks: &[&[u8]]) -> Option<usize> {
        let mut counter = EventBytes::new(limit);
        chunks.iter().position(|chunk| counter.take(chunk).is_err())
    }

    #[test]
    fn every_blank_line_form_starts_the_count_again() {
        for blank in ["\n\n", "\r\r", "\r\n\r\n", "\n\r\n", "\r\n\n"] {
            let event = format!("data: {}{blank}", "x".repeat(40));
            let stream = event.repeat(100);
            assert_eq!(failing_chunk(64, &[stream.as_bytes()]), None, "{blank:?}");
        }
        // One event longer than the cap fails, whatever its line ends.
        let long = format!(
            "data: {}\r\ndata: {}\r\n\r\n",
            "x".repeat(40),
            "y".repeat(40)
        );
        assert_eq!(failing_chunk(64, &[long.as_bytes()]), Some(0));
    }

    #[test]
    fn ids_and_retry_are_read_from_priming_events_across_chunks() {
        let resumption = Arc::new(Mutex::new(Resumption::default()));
        let mut fields = Fields::new(resumption.clone());
        fields.take(b"id: event-1\r\nretry: 5");
        fields.take(b"00\r\ndata: \r");
        assert_eq!(
            resumption.lock().map(|r| r.clone()).unwrap_or_default(),
            Resumption {
                last_event_id: None,
                retry: Some(Duration::from_millis(500)),
            },
            "the id is the last event id only once its event is dispatched"
        );
        fields.take(b"\n\r\n: comment\nid:event-2\nretry: soon\ndata: x\n\n");
        assert_eq!(
            resumption.lock().map(|r| r.clone()).unwrap_or_default(),
            Resumption {
                last_event_id: Some("event-2".into()),
                retry: Some(Duration::from_millis(500)),
            }
        );
    }

    #[test]
    fn a_field_line_past_its_cap_is_no_field() {
        let resumption = Arc::new(Mutex::new(Resumption::default()));
        let mut fields = Fields::new(resumption.clone());
        let long = format!("id: {}\ndata: x\n\n", "i".repeat(MAX_FIELD_LINE));
        fields.take(long.as_bytes());
        fields.take(b"retry: 0000000000000000000000000000000000000000000000000000000099999999999999999999\n\n");
        assert_eq!(
            resumption.lock().map(|r| r.clone()).unwrap_or_default(),
            Resumption::default()
        );
        fields.take(b"id: short\n\n");
        assert_eq!(
            resumption
                .lock()
                .map(|r| r.last_event_id.clone())
                .unwrap_or_default(),
            Some("short".to_owned())
        );
    }

    #[test]
    fn a_blank_line_split_across_chunks_is_seen() {
        let body = "x".repeat(50);
        let first = format!("data: {body}\r\n");
        let second = format!("\r\ndata: {body}\r");
        let third = format!("\n\r\ndata: {body}\r\n\r\n");
        let chunks = [
            first.as_bytes(),
            second.as_bytes(),
            third.as_bytes(),
            b"\r" as &[u8],
        ];
        assert_eq!(failing_chunk(64, &chunks), None);
        // A CR then an LF in the next chunk is one line end, not a blank line.
        let split = [
            b"data: aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r" as &[u8],
            b"\ndata: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n",
        ];
        assert_eq!(failing_chunk(64, &split), Some(1));
    }
}
