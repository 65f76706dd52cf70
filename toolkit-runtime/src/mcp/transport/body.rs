//! Reading a response body, as JSON or as an event stream (SSE), never past a size cap.

use std::fmt;

use bytes::Bytes;
use eventsource_stream::{Event, EventStreamError, Eventsource as _};
use futures_util::{Stream, StreamExt as _};
use reqwest::Response;
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

use super::Fault;
use super::status::transport_failure;
use crate::Reason;
use crate::mcp::jsonrpc::{Incoming, Outcome};

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

/// The events of an event-stream body, up to `limit` bytes in all. Comments, and events with
/// empty data (priming events), are left out by the parser.
pub(crate) fn events(
    response: Response,
    limit: usize,
) -> impl Stream<Item = Result<Event, Fault>> + Send + Unpin {
    parse_events(capped(response, limit))
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

/// The messages of one event's data: JSON, a message or a batch.
pub(crate) fn messages_of(data: &str) -> Result<Vec<Incoming>, Fault> {
    let value: Value = serde_json::from_str(data)
        .map_err(|_| Fault::Failed(Reason::invalid_response("an event whose data is not JSON")))?;
    Ok(Incoming::from_json(value))
}

/// Reads the answer to the request `id` from `response` (JSON or SSE), passing each request the
/// server makes on the way to `on_request`.
pub(crate) async fn answer(
    response: Response,
    id: u64,
    limit: usize,
    mut on_request: impl FnMut(Value, String),
) -> Result<Outcome, Fault> {
    let id = Value::from(id);
    match kind(&response) {
        Kind::Json => {
            let body = read_all(response, limit).await?;
            let value: Value = serde_json::from_slice(&body).map_err(|_| {
                Fault::Failed(Reason::invalid_response("an answer that is not JSON"))
            })?;
            let mut found = None;
            for message in Incoming::from_json(value) {
                match message {
                    Incoming::Response { id: got, outcome } if got == id => found = Some(outcome),
                    Incoming::Request { id, method } => on_request(id, method),
                    _ => {}
                }
            }
            found.ok_or_else(|| {
                Fault::Failed(Reason::invalid_response(
                    "a JSON answer that is no response to the request",
                ))
            })
        }
        Kind::EventStream => {
            let mut events = events(response, limit);
            while let Some(event) = events.next().await {
                let event = event?;
                // Priming events (`id:` with empty data) and other event types carry no message.
                if event.event != "message" || event.data.trim().is_empty() {
                    continue;
                }
                for message in messages_of(&event.data)? {
                    match message {
                        Incoming::Response { id: got, outcome } if got == id => return Ok(outcome),
                        Incoming::Request { id, method } => on_request(id, method),
                        _ => {}
                    }
                }
            }
            Err(Fault::Failed(Reason::unavailable(
                "the event stream ended before the answer came",
            )))
        }
        Kind::Other => Err(Fault::Failed(Reason::invalid_response(
            "an answer that is neither JSON nor an event stream",
        ))),
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
