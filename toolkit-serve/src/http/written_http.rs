//! An HTTP answer served with what an upstream wrote: [`answers`], the layer around the
//! Streamable HTTP service, and [`AsWritten`], the slot of one HTTP request it reads.
//!
//! rmcp's Streamable HTTP service (3.11) takes only a `ServerHandler`, whose `tools/call` answer
//! is rmcp's typed `CallToolResult` (a block's `annotations.priority` is an `f32`; fields rmcp has
//! no type for are dropped), and it routes a session's `notifications/progress` to the call's
//! stream by rmcp's typed notification (`progress` an `f64`). So the handler answers with the
//! typed values and [`keep`](crate::stdio::written_result::keep)s what the upstream wrote in the slot of
//! the HTTP request the call came in; rmcp hands the handler that request's `Parts`, and with
//! them its extensions, where this layer put the slot. The layer then writes the kept JSON into
//! the answer on its way out: the result of each JSON-RPC response whose id has one, and the
//! params of each progress notification whose token has some (in order). For a host that gives
//! tasks, the layer also renames the requests of a session that speaks them before rmcp reads
//! them, and writes the `tasks` capability into its `initialize` answer (`tasks/sessions.rs`).
//!
//! Written by hand: nothing in rmcp, tower or axum rewrites the messages of an answer, and the SSE
//! crates at hand (`sse-stream`, `eventsource-stream`) read an event into its fields, which would
//! write every event again; here an event is cut out as its bytes, and one whose message is not
//! rewritten (every event but those, a keep-alive comment, a priming event) passes byte for byte,
//! its `id:` (resumability) and framing with it. A body that is neither JSON nor SSE, or that
//! does not parse, passes unchanged. A stream the client resumes (`Last-Event-ID`) is written
//! the same way: what rmcp replays of it as first sent, what follows from its call's slot
//! (`http/replays.rs`). The head of a POST's stream waits briefly for its first message, so that a fast
//! call is answered in one write (`http/first_message.rs`).

use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::{Request, State};
use axum::http::Method;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use futures_util::{Stream, StreamExt as _};
use toolkit_core::context::{Clients, Principal};

use crate::http::as_written::AsWritten;
use crate::http::direct_calls::DirectSessions;
use crate::http::replays::Replays;
use crate::http::session_owners::{SessionOwners, unknown_session};
use crate::tasks::sessions::{SESSION_ID, TaskSessions};

/// The header of a client resuming a stream.
const LAST_EVENT_ID: &str = "last-event-id";

/// The layer (`axum::middleware::from_fn_with_state`): answers a session's plain `tools/call`
/// itself ([`DirectSessions`]), renames the requests of a session that speaks tasks
/// ([`TaskSessions`]), gives the request an [`AsWritten`] slot, and serves the answer with
/// what its calls kept written in (`application/json` as a whole, `text/event-stream` event by
/// event, as it comes), and the `tasks` capability in the `initialize` answer of a client that
/// declared tasks.
pub(crate) async fn answers(
    State(layer): State<Arc<Answers>>,
    mut request: Request,
    next: Next,
) -> Response {
    let post = request.method() == Method::POST;
    let session = request
        .headers()
        .get(SESSION_ID)
        .and_then(|id| id.to_str().ok())
        .map(str::to_owned);
    // Who sent it: a session is bound to the principal that opened it (`http/session_owners.rs`).
    let principal = match request.extensions().get::<Principal>() {
        Some(principal) => principal.clone(),
        None => {
            request.extensions_mut().insert(Principal::loopback());
            Principal::loopback()
        }
    };
    if let Some(clients) = &layer.clients {
        clients.seen(&principal);
    }
    let mut opening = None;
    if let Some(session) = &session {
        if !layer.owners.admits(session, &principal) {
            tracing::info!(
                principal = %principal,
                "a request named a session of another principal: answered as an unknown one"
            );
            return unknown_session();
        }
    } else if post {
        match layer.owners.open(&principal) {
            Ok(room) => opening = Some(room),
            Err(full) => match opens_session(request, layer.max_body).await {
                Ok((_, true)) => {
                    tracing::info!(principal = %principal, ?full, "a session was refused: too many");
                    return full.response();
                }
                Ok((read, false)) => request = read,
                Err(refused) => return refused,
            },
        }
    }
    // A plain call of a session whose client can be sent nothing mid-call: answered here.
    if post
        && let Some(session) = &session
        && !layer.sessions.speaks_tasks(request.headers())
    {
        match layer.direct.serve(session, request, layer.max_body).await {
            Ok(answer) => return answer,
            Err(passed) => request = passed,
        }
    }
    let last_event_id = (request.method() == Method::GET)
        .then(|| request.headers().get(LAST_EVENT_ID))
        .flatten();
    let resumed = last_event_id.is_some();
    // The stream a resumed one continues: the part of the event id after its `/`.
    let resumed_stream = last_event_id
        .and_then(|id| id.to_str().ok())
        .and_then(|id| id.split_once('/'))
        .map(|(_, stream)| stream.to_owned());
    if request.method() == Method::DELETE
        && let Some(session) = &session
    {
        layer.replays.end(session);
    }
    let (mut request, pending) = match layer.sessions.incoming(request).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let kept = AsWritten::default();
    request.extensions_mut().insert(kept.clone());
    if let Some(opening) = &mut opening {
        opening.watch(&kept);
    }
    let response = next.run(request).await;
    let (ended, initialized) = {
        let mut held = kept.held();
        (held.ended.take(), held.initialized.take())
    };
    if let (Some(ended), Some(started)) = (&ended, response.headers().get(SESSION_ID))
        && let Ok(started) = started.to_str()
    {
        layer.replays.drop_at(started.to_owned(), ended.clone());
        if let Some(opening) = opening.take() {
            layer
                .owners
                .opened(opening, started, ended.clone(), initialized);
        }
    }
    // A request that opened no session frees the room it held.
    drop(opening);
    if let Some(dialect) = layer.sessions.answered(pending, response.headers(), ended) {
        kept.held().dialect = Some(dialect);
    }
    let kind = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|kind| kind.trim().to_ascii_lowercase());
    match kind.as_deref() {
        Some("text/event-stream") => {
            let (parts, body) = response.into_parts();
            // A resumed stream goes on with the events of the call it continues, from its slot.
            let kept = resumed_stream
                .as_deref()
                .zip(session.as_deref())
                .and_then(|(stream, session)| layer.replays.call_of(session, stream))
                .unwrap_or(kept);
            let replay = session.map(|session| Replay {
                layer: Arc::clone(&layer),
                session,
                resumed,
                stream: resumed_stream,
                known: resumed,
            });
            let events = Events::new(body, kept, replay);
            let body = if post {
                crate::http::first_message::held(events).await
            } else {
                Body::from_stream(events)
            };
            Response::from_parts(parts, body)
        }
        // rmcp answers with JSON only once the call is answered: what it kept is there.
        Some("application/json") if !kept.is_empty() => {
            let (mut parts, body) = response.into_parts();
            let bytes = match axum::body::to_bytes(body, usize::MAX).await {
                Ok(bytes) => bytes,
                Err(error) => {
                    // rmcp's JSON body is whole (it cannot fail): nothing was read to pass on.
                    tracing::debug!(%error, "an answer's JSON body could not be read");
                    return Response::from_parts(parts, Body::empty());
                }
            };
            match kept.rewritten(&bytes) {
                Some(written) => {
                    parts.headers.remove(CONTENT_LENGTH);
                    Response::from_parts(parts, Body::from(written))
                }
                None => Response::from_parts(parts, Body::from(bytes)),
            }
        }
        _ => response,
    }
}

/// The state of [`answers`]: who owns each session, the sessions that speak tasks, and the
/// events rewritten per session for a resumed stream.
pub(crate) struct Answers {
    /// Each session's principal, and the sessions' limits.
    pub(crate) owners: Arc<SessionOwners>,
    /// The clients of the server's sessions, told who used the server.
    pub(crate) clients: Option<Arc<Clients>>,
    /// The largest request body read.
    pub(crate) max_body: usize,
    /// The dialects of the sessions whose clients declared tasks.
    pub(crate) sessions: TaskSessions,
    /// The events rewritten, to be replayed as written.
    pub(crate) replays: Replays,
    /// The sessions whose plain calls are answered here.
    pub(crate) direct: Arc<DirectSessions>,
}

/// Whether the request, read whole, is an `initialize` (it would open a session), and the
/// request again; `Err` with the answer when its body is over `limit` bytes.
async fn opens_session(request: Request, limit: usize) -> Result<(Request, bool), Response> {
    /// The one member read of a message.
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|error| {
        tracing::debug!(%error, "a request body could not be read");
        (
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large",
        )
            .into_response()
    })?;
    let opens = serde_json::from_slice::<Method<'_>>(&bytes)
        .is_ok_and(|message| message.method.as_deref() == Some("initialize"));
    Ok((Request::from_parts(parts, Body::from(bytes)), opens))
}

/// The session of an event stream: its rewritten events are kept, or, for a stream the client
/// resumed (`Last-Event-ID`), the events rmcp replays are sent as first written.
struct Replay {
    layer: Arc<Answers>,
    session: String,
    /// The stream is one the client resumed.
    resumed: bool,
    /// The id of the call's stream (an event id's part after its `/`), once known.
    stream: Option<String>,
    /// The stream's call is known to [`Replays`] (a resumed stream's, or once the stream's first
    /// event named it).
    known: bool,
}

/// An SSE body with what was kept written into its events' messages.
struct Events {
    /// The body as rmcp wrote it.
    body: BodyDataStream,
    /// Bytes read and not yet passed on: the start of an event.
    buffer: Vec<u8>,
    /// How far `buffer` was searched for an event's end (a line's start).
    searched: usize,
    /// What the request's calls kept.
    kept: AsWritten,
    /// The stream's session, if it has one.
    replay: Option<Replay>,
    /// The events rewritten and sent, by id: handed to [`Replays`] if the stream ends, or is
    /// dropped, before its call's answer was sent (the client may resume it).
    sent: Vec<(String, Bytes)>,
    /// Whether the body has ended.
    ended: bool,
}

impl Events {
    /// The events of `body`, with what `kept` holds written into them, those rewritten kept for
    /// the `replay` of a resumed stream (or, in one, what was kept sent in their place).
    fn new(body: Body, kept: AsWritten, replay: Option<Replay>) -> Self {
        Self {
            body: body.into_data_stream(),
            buffer: Vec::new(),
            searched: 0,
            kept,
            replay,
            sent: Vec::new(),
            ended: false,
        }
    }

    /// Hands the events sent to [`Replays`] when the stream stopped short of its call's answer
    /// (lost by the client, or ended by rmcp for a stream the client resumed elsewhere); one
    /// that carried the answer is not resumed, and keeps nothing.
    fn hand_over(&mut self) {
        let sent = std::mem::take(&mut self.sent);
        if let Some(replay) = &self.replay
            && replay.stream.is_some()
            && !self.kept.answered()
        {
            for (id, written) in sent {
                replay.layer.replays.keep(&replay.session, &id, written);
            }
        }
    }

    /// `events` (whole SSE events) as they are to be sent.
    fn written(&mut self, events: Vec<u8>) -> Bytes {
        if let Some(replay) = &mut self.replay
            && !replay.known
        {
            // The stream's first event names it: its call can be found when the client resumes.
            let mut stream = None;
            each_event(&events, |event| {
                if stream.is_none() {
                    stream = event_id(event)
                        .and_then(|id| id.split_once('/'))
                        .map(|(_, stream)| stream.to_owned());
                }
            });
            if let Some(stream) = stream {
                replay
                    .layer
                    .replays
                    .call(&replay.session, &stream, &self.kept);
                replay.stream = Some(stream);
            }
            // A stream whose first events name no call (a standalone one) is not looked for.
            replay.known = true;
        }
        let mut rewritten = Vec::new();
        let out = match &self.replay {
            Some(replay) if replay.resumed => {
                replayed_events(&events, replay, &self.kept, &mut rewritten)
            }
            _ if self.kept.is_empty() => events,
            _ => rewritten_events(&events, &self.kept, &mut rewritten),
        };
        let out = Bytes::from(out);
        if self.replay.is_some() {
            self.sent.extend(
                rewritten
                    .into_iter()
                    .map(|(id, range)| (id, out.slice(range))),
            );
        }
        out
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        self.hand_over();
    }
}

impl Stream for Events {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let ended = self.ended;
            let (end, searched) = events_end(&self.buffer, self.searched, ended);
            self.searched = searched;
            if let Some(end) = end {
                let rest = self.buffer.split_off(end);
                let events = std::mem::replace(&mut self.buffer, rest);
                self.searched -= end;
                return Poll::Ready(Some(Ok(self.written(events))));
            }
            if ended {
                // What is left is no whole event: it passes as it is.
                let rest = std::mem::take(&mut self.buffer);
                return Poll::Ready((!rest.is_empty()).then(|| Ok(Bytes::from(rest))));
            }
            match self.body.poll_next_unpin(cx) {
                // Whole events with nothing kept (every answer of a tool of no MCP source):
                // passed on as they came, unbuffered.
                Poll::Ready(Some(Ok(chunk)))
                    if self.buffer.is_empty()
                        && chunk.ends_with(b"\n\n")
                        && self.kept.is_empty()
                        && self
                            .replay
                            .as_ref()
                            .is_none_or(|replay| replay.known && !replay.resumed) =>
                {
                    return Poll::Ready(Some(Ok(chunk)));
                }
                Poll::Ready(Some(Ok(chunk))) => self.buffer.extend_from_slice(&chunk),
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error))),
                Poll::Ready(None) => {
                    self.ended = true;
                    self.hand_over();
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// The lines of `bytes`, each with its line ending (`\r\n`, `\n` or `\r`) and whether it has one;
/// a `\r` at the very end counts as an ending only once the body has `ended` (a `\n` may follow).
fn lines(bytes: &[u8], ended: bool) -> impl Iterator<Item = (&[u8], bool)> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(at) = rest.iter().position(|&byte| byte == b'\n' || byte == b'\r') else {
            let line = rest;
            rest = &[];
            return Some((line, false));
        };
        let length = match (rest[at], rest.get(at + 1)) {
            (b'\r', Some(b'\n')) => at + 2,
            (b'\r', None) if !ended => {
                let line = rest;
                rest = &[];
                return Some((line, false));
            }
            _ => at + 1,
        };
        let (line, after) = rest.split_at(length);
        rest = after;
        Some((line, true))
    })
}

/// Where the last whole event of `bytes` ends (after its blank line), if one does from `from` (a
/// line's start) on; and where the last whole line ends, to search on from.
fn events_end(bytes: &[u8], from: usize, ended: bool) -> (Option<usize>, usize) {
    let mut at = from;
    let mut end = None;
    for (line, whole) in lines(bytes.get(from..).unwrap_or_default(), ended) {
        if !whole {
            break;
        }
        at += line.len();
        if is_blank(line) {
            end = Some(at);
        }
    }
    (end, at)
}

/// Whether `line` (with its ending) is blank: the end of an event.
fn is_blank(line: &[u8]) -> bool {
    matches!(line, [b'\n'] | [b'\r'] | [b'\r', b'\n'])
}

/// `line` without its line ending.
fn content(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The value of `line` when it is a `data` field (one leading space taken off).
fn data(line: &[u8]) -> Option<&[u8]> {
    let line = content(line);
    if line == b"data" {
        return Some(&[]);
    }
    let value = line.strip_prefix(b"data:")?;
    Some(value.strip_prefix(b" ").unwrap_or(value))
}

/// The events of `events` (whole SSE events), each as its lines.
fn each_event(events: &[u8], mut each: impl FnMut(&[&[u8]])) {
    let mut event = Vec::new();
    for (line, _) in lines(events, true) {
        event.push(line);
        if is_blank(line) {
            each(&event);
            event.clear();
        }
    }
    if !event.is_empty() {
        each(&event);
    }
}

/// The value of an event's `id` field, if it has one.
fn event_id<'a>(lines: &[&'a [u8]]) -> Option<&'a str> {
    lines.iter().rev().find_map(|line| {
        let value = content(line).strip_prefix(b"id:")?;
        std::str::from_utf8(value.strip_prefix(b" ").unwrap_or(value)).ok()
    })
}

/// `events` (whole SSE events) with what was kept written into their messages; the id and place
/// in the output of each event rewritten go onto `rewritten`.
fn rewritten_events(
    events: &[u8],
    kept: &AsWritten,
    rewritten: &mut Vec<(String, Range<usize>)>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(events.len());
    each_event(events, |event| {
        let start = out.len();
        if rewrite_event(event, kept, &mut out)
            && let Some(id) = event_id(event)
        {
            rewritten.push((id.to_owned(), start..out.len()));
        }
    });
    out
}

/// `events` (whole SSE events) of a resumed stream: each one sent before as it was first
/// written, the others as [`rewritten_events`] writes them.
fn replayed_events(
    events: &[u8],
    replay: &Replay,
    kept: &AsWritten,
    rewritten: &mut Vec<(String, Range<usize>)>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(events.len());
    each_event(events, |event| {
        let id = event_id(event);
        let sent = id.and_then(|id| replay.layer.replays.written(&replay.session, id));
        let start = out.len();
        match sent {
            Some(sent) => out.extend_from_slice(&sent),
            None if !rewrite_event(event, kept, &mut out) => return,
            None => {}
        }
        if let Some(id) = id {
            rewritten.push((id.to_owned(), start..out.len()));
        }
    });
    out
}

/// One event's `lines` onto `out`: as they are, or with their data lines made one line of the
/// rewritten message (in the first one's place, with its line ending); whether it was rewritten.
fn rewrite_event(lines: &[&[u8]], kept: &AsWritten, out: &mut Vec<u8>) -> bool {
    let mut message = Vec::new();
    let mut first = None;
    for (index, line) in lines.iter().enumerate() {
        if let Some(value) = data(line) {
            if first.is_some() {
                message.push(b'\n');
            }
            message.extend_from_slice(value);
            first.get_or_insert(index);
        }
    }
    let written = first.and_then(|first| Some((first, kept.rewritten(&message)?)));
    let Some((first, written)) = written else {
        lines.iter().for_each(|line| out.extend_from_slice(line));
        return false;
    };
    for (index, line) in lines.iter().enumerate() {
        if index == first {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(&written);
            out.extend_from_slice(&line[content(line).len()..]);
        } else if data(line).is_none() {
            out.extend_from_slice(line);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use rmcp::model::RequestId;
    use serde_json::{Value, json};
    use toolkit_core::JsonObject;

    use super::*;
    use crate::allowed_host::AllowedHosts;

    fn kept() -> AsWritten {
        let kept = AsWritten::default();
        let result =
            json!({"content": [{"type": "text", "text": "a", "annotations": {"priority": 1}}]});
        kept.result(&RequestId::Number(3), result.as_object().cloned().unwrap());
        kept.progress(
            json!({"progressToken": "t", "progress": 1})
                .as_object()
                .cloned()
                .unwrap(),
        );
        kept
    }

    /// An event stream: comments, a priming event, a progress notification and a result kept
    /// for, one of each not kept for, data that is no JSON, a last event cut short.
    const EVENTS: &str = concat!(
        ": keep-alive\n\n",
        "data:\nid: 0\nretry: 3000\n\n",
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1.0}}\nid: 1\n\n",
        "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\r\ndata: \"result\":{\"content\":[]}}\r\nid: 2\r\n\r\n",
        "data: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\nid: 3\n\n",
        "data: not json\n\n",
        "data: {\"half",
    );

    /// [`EVENTS`] with what [`as_written`] holds written in.
    const REWRITTEN: &str = concat!(
        ": keep-alive\n\n",
        "data:\nid: 0\nretry: 3000\n\n",
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\nid: 1\n\n",
        "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"annotations\":{\"priority\":1}}]}}\r\nid: 2\r\n\r\n",
        "data: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\nid: 3\n\n",
        "data: not json\n\n",
        "data: {\"half",
    );

    #[test]
    fn an_event_stream_is_rewritten_where_something_was_kept_and_else_passes_byte_for_byte() {
        let out = rewritten_events(EVENTS.as_bytes(), &kept(), &mut Vec::new());
        assert_eq!(String::from_utf8(out).unwrap(), REWRITTEN);
        let untouched = rewritten_events(EVENTS.as_bytes(), &AsWritten::default(), &mut Vec::new());
        assert_eq!(String::from_utf8(untouched).unwrap(), EVENTS);
    }

    /// What [`Events`] passes on of `chunks`.
    async fn streamed(chunks: Vec<Vec<u8>>, kept: AsWritten) -> Vec<u8> {
        let body = Body::from_stream(futures_util::stream::iter(
            chunks.into_iter().map(Ok::<_, std::convert::Infallible>),
        ));
        let events = Events::new(body, kept, None);
        let chunks: Vec<Result<Bytes, axum::Error>> = events.collect().await;
        chunks
            .into_iter()
            .flat_map(|chunk| chunk.unwrap())
            .collect()
    }

    #[tokio::test]
    async fn a_stream_keeps_its_rewritten_events_only_if_it_stops_short_of_its_answer() {
        const PROGRESS: &str = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1.0}}\nid: 1/5\n\n";
        const ANSWER: &str =
            "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\nid: 2/5\n\n";
        // Read to its answer; ended by rmcp before it (resumed elsewhere); dropped by the client
        // after its first event.
        for (chunks, read, kept_after) in [
            (vec![PROGRESS, ANSWER], usize::MAX, false),
            (vec![PROGRESS], usize::MAX, true),
            (vec![PROGRESS, ANSWER], 1, true),
        ] {
            let layer = Arc::new(Answers {
                owners: SessionOwners::new(Default::default(), Arc::default()),
                clients: None,
                max_body: 1024,
                sessions: TaskSessions::new(false, 1024),
                replays: Replays::default(),
                direct: DirectSessions::new(Arc::default(), AllowedHosts::default()),
            });
            let replay = Replay {
                layer: Arc::clone(&layer),
                session: "s".to_owned(),
                resumed: false,
                stream: None,
                known: false,
            };
            let body =
                Body::from_stream(futures_util::stream::iter(chunks.into_iter().map(
                    |chunk| Ok::<_, std::convert::Infallible>(chunk.as_bytes().to_vec()),
                )));
            let mut events = Events::new(body, kept(), Some(replay));
            let mut taken = 0;
            while taken < read && events.next().await.is_some() {
                taken += 1;
            }
            drop(events);
            let progress = layer.replays.written("s", "1/5");
            assert_eq!(progress.is_some(), kept_after, "{read} read");
            if let Some(progress) = progress {
                assert!(
                    std::str::from_utf8(&progress)
                        .unwrap()
                        .contains(r#""progress":1}"#),
                    "kept as written: {progress:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn an_event_stream_cut_anywhere_is_rewritten_the_same() {
        let bytes = EVENTS.as_bytes();
        for at in 0..=bytes.len() {
            for third in [at, (at + bytes.len()) / 2] {
                let chunks = vec![
                    bytes[..at].to_vec(),
                    bytes[at..third].to_vec(),
                    bytes[third..].to_vec(),
                ];
                let out = streamed(chunks.clone(), kept()).await;
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    REWRITTEN,
                    "cut at {at}, {third}"
                );
                let untouched = streamed(chunks, AsWritten::default()).await;
                assert_eq!(untouched, bytes, "cut at {at}, {third}");
            }
        }
    }

    #[test]
    fn an_event_ends_after_its_blank_line_whatever_the_line_endings() {
        assert_eq!(events_end(b"data: x\n\ndata: y", 0, false), (Some(9), 9));
        assert_eq!(events_end(b"data: x\r\n\r\n", 0, false), (Some(11), 11));
        assert_eq!(events_end(b"data: x\r\r", 0, false), (None, 8));
        assert_eq!(events_end(b"data: x\r\r", 8, true), (Some(9), 9));
        assert_eq!(events_end(b"data: x\n", 0, true), (None, 8));
        assert_eq!(events_end(b"", 0, true), (None, 0));
    }

    #[test]
    fn progress_is_rewritten_only_where_the_kept_params_say_what_was_sent() {
        let kept = kept();
        let other = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2.0}}"#;
        assert_eq!(kept.rewritten(other), None);
        assert!(
            kept.held().progress["\"t\""].is_empty(),
            "the unsent one is dropped"
        );
        assert_eq!(kept.rewritten(b"\xff not json"), None);
        assert_eq!(kept.rewritten(b"[1]"), None);
    }

    /// The result the upstream of [`Upstream`] writes: a block's `priority` of `1`, fields rmcp
    /// has no type for, an integer beyond `f64`.
    fn upstream_result() -> Value {
        json!({
            "content": [{
                "type": "text", "text": "big",
                "annotations": {"priority": 1, "audience": ["user"]},
                "x-unknown": {"kept": true}
            }],
            "structuredContent": {"id": 12_345_678_901_234_567_890_u64, "count": 1},
            "x-beside": [1, 2]
        })
    }

    /// A source standing for an MCP upstream: its tool `big` reports progress `1` of `2` and
    /// `12345678901234567890`, and gives [`upstream_result`] as written; `held` does the same,
    /// waiting for [`RELEASE`] after its first progress.
    struct Upstream;

    impl toolkit_core::ToolSource for Upstream {
        fn name(&self) -> &str {
            "up"
        }

        fn discover(
            &self,
        ) -> toolkit_core::BoxFuture<
            '_,
            Result<Vec<toolkit_core::ToolDefinition>, toolkit_core::ToolSourceError>,
        > {
            Box::pin(async { Ok(definitions()) })
        }

        fn call<'a>(
            &'a self,
            tool: &'a str,
            input: JsonObject,
            context: &'a toolkit_core::CallContext,
        ) -> toolkit_core::BoxFuture<'a, Result<Value, toolkit_core::ToolSourceError>> {
            Box::pin(async move { self.call_outcome(tool, input, context).await.answer })
        }

        fn call_outcome<'a>(
            &'a self,
            tool: &'a str,
            _input: JsonObject,
            context: &'a toolkit_core::CallContext,
        ) -> toolkit_core::BoxFuture<'a, toolkit_core::Outcome<toolkit_core::ToolSourceError>>
        {
            Box::pin(async move {
                // The routes of the connection to the upstream this stands for.
                let routes = toolkit_core::progress::Routes::default();
                let registration = routes.register(context.progress_sink().cloned(), tool, None);
                if let Some(registration) = &registration {
                    let token = registration.token();
                    routes.deliver(Some(
                        &json!({"progressToken": token, "progress": 1, "total": 2}),
                    ));
                    if tool == "held" {
                        RELEASE.notified().await;
                    }
                    routes.deliver(Some(&json!({
                        "progressToken": token,
                        "progress": 12_345_678_901_234_567_890_u64,
                        "message": "far"
                    })));
                }
                let result = upstream_result();
                toolkit_core::Outcome {
                    answer: Ok(result["structuredContent"].clone()),
                    written: result.as_object().cloned(),
                }
            })
        }
    }

    /// What lets a call of `held` go on past its first progress.
    static RELEASE: tokio::sync::Notify = tokio::sync::Notify::const_new();

    fn definitions() -> Vec<toolkit_core::ToolDefinition> {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        ["big", "held"]
            .into_iter()
            .map(|name| toolkit_core::ToolDefinition::new(name, schema.clone()).unwrap())
            .collect()
    }

    /// A toolkit of [`Upstream`].
    fn toolkit() -> toolkit_core::Toolkit {
        toolkit_core::Toolkit::from_source(
            Arc::new(Upstream),
            definitions(),
            &toolkit_core::ToolkitOptions::default(),
        )
        .unwrap()
    }

    /// The Streamable HTTP endpoint of a server of [`Upstream`], `json` answers where it can.
    fn router(json: bool) -> axum::Router {
        router_with(crate::HttpOptions {
            json_response: json,
            ..crate::HttpOptions::default()
        })
    }

    /// The Streamable HTTP endpoint of a server of [`Upstream`], served with `options`.
    fn router_with(options: crate::HttpOptions) -> axum::Router {
        crate::McpServer::new(toolkit())
            .http_options(options)
            .router(crate::MCP_PATH, crate::CancellationToken::new())
    }

    /// One POST of `body` with `headers`: the answer's head and its body, read to its end.
    async fn post(
        router: &mut axum::Router,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> (axum::http::response::Parts, String) {
        // A router is always ready (axum's `Router::poll_ready`).
        use tower_service::Service;
        let mut request = axum::http::Request::post("http://localhost/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Body::from(body.to_string())).unwrap();
        let response = Service::<Request>::call(router, request).await.unwrap();
        let (parts, body) = response.into_parts();
        let read = axum::body::to_bytes(body, usize::MAX);
        let bytes = tokio::time::timeout(std::time::Duration::from_secs(10), read)
            .await
            .unwrap()
            .unwrap();
        (parts, String::from_utf8(bytes.to_vec()).unwrap())
    }

    /// The messages of an answer: its JSON, or each SSE event's data.
    fn messages(parts: &axum::http::response::Parts, body: &str) -> Vec<Value> {
        if parts.headers[CONTENT_TYPE] == "application/json" {
            return vec![serde_json::from_str(body).unwrap()];
        }
        body.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter(|data| !data.is_empty())
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }

    /// A `tools/call` of `big` with the progress token `p`.
    fn call(id: u64, meta: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "big", "arguments": {}, "_meta": meta}})
    }

    /// A session over HTTP (2025-11-25): the session's `Mcp-Session-Id`, initialized.
    async fn session(router: &mut axum::Router) -> String {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}
        }});
        let (parts, _) = post(router, &[], &initialize).await;
        let session = parts.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let (parts, _) = post(router, &headers, &initialized).await;
        assert_eq!(parts.status, 202);
        session
    }

    /// A session whose client never says `notifications/initialized` is closed once the limit's
    /// time is over (then answered as an unknown one); a session that said it lives on.
    #[tokio::test]
    async fn a_session_whose_client_never_says_it_is_ready_is_closed_early() {
        let mut options = crate::HttpOptions::default();
        options.session_limits.uninitialized_timeout = std::time::Duration::from_millis(200);
        let mut router = router_with(options);
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "silent", "version": "1"}
        }});
        let (parts, _) = post(&mut router, &[], &initialize).await;
        let silent = parts.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let (parts, _) = post(&mut router, &[], &initialize).await;
        let busy = parts.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let ready = session(&mut router).await;
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let status = |session: String| {
            let mut router = router.clone();
            let list = list.clone();
            async move {
                let headers = [
                    ("mcp-session-id", session.as_str()),
                    ("mcp-protocol-version", "2025-11-25"),
                ];
                post(&mut router, &headers, &list).await.0.status
            }
        };
        // A client that never says `notifications/initialized` but uses its session keeps it.
        assert_eq!(status(busy.clone()).await, 200);
        // Asking whether the silent session lives would use it: it is asked once, well after
        // its time (200 ms).
        tokio::time::sleep(std::time::Duration::from_millis(1_000)).await;
        let closed = status(silent).await == 404;
        assert!(closed, "the silent session was never closed");
        assert_eq!(status(ready).await, 200, "the ready one lives on");
        assert_eq!(status(busy).await, 200, "the used one lives on");
    }

    /// Past the server's limit an `initialize` is answered 503 with `Retry-After`, a request
    /// that opens no session passes, and a session ended (`DELETE`) makes room again.
    #[tokio::test]
    async fn the_session_limit_refuses_an_initialize_only_and_frees_room_at_a_sessions_end() {
        let mut options = crate::HttpOptions::default();
        options.session_limits.max_sessions = 1;
        options.session_limits.max_sessions_per_principal = 1;
        let mut router = router_with(options);
        let first = session(&mut router).await;
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "second", "version": "1"}
        }});
        let (parts, body) = post(&mut router, &[], &initialize).await;
        assert_eq!(parts.status, 503, "{body}");
        assert_eq!(parts.headers["retry-after"], "30");
        assert!(body.contains("retry later"), "{body}");
        // A stateless request opens no session: it passes at the limit.
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}});
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ];
        let (parts, body) = post(&mut router, &headers, &list).await;
        assert_eq!(parts.status, 200, "{body}");
        assert!(body.contains("\"big\""), "{body}");
        // The first session ends: room again.
        {
            use tower_service::Service;
            let request = axum::http::Request::delete("http://localhost/mcp")
                .header("host", "localhost")
                .header("mcp-session-id", first.as_str())
                .header("mcp-protocol-version", "2025-11-25")
                .body(Body::empty())
                .unwrap();
            let response = Service::<Request>::call(&mut router, request)
                .await
                .unwrap();
            assert!(response.status().is_success(), "{}", response.status());
        }
        let mut status = 0;
        for _ in 0..100 {
            status = post(&mut router, &[], &initialize).await.0.status.as_u16();
            if status == 200 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(status, 200, "room once the first session ended");
    }

    /// A progress token longer than 256 bytes of JSON is refused with -32602 before the call
    /// runs (each report would carry a copy, and the answer keep one per report); one of 256
    /// bytes is told.
    #[tokio::test]
    async fn a_progress_token_past_256_bytes_of_json_is_refused() {
        let mut router = router(false);
        let session = session(&mut router).await;
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        // 254 characters and two quotes: 256 bytes.
        for (id, length, refused) in [(1, 254, false), (2, 255, true), (3, 1 << 20, true)] {
            let token = "p".repeat(length);
            let (parts, body) = post(
                &mut router,
                &headers,
                &call(id, json!({"progressToken": token})),
            )
            .await;
            let messages = messages(&parts, &body);
            let answer = messages.iter().find(|message| message["id"] == id).unwrap();
            let told = messages
                .iter()
                .filter(|message| message["method"] == "notifications/progress")
                .count();
            if refused {
                assert_eq!(answer["error"]["code"], -32602, "{answer}");
                assert_eq!(
                    answer["error"]["message"],
                    "The progress token is longer than 256 bytes of JSON."
                );
                assert_eq!(told, 0);
                assert!(body.len() < 1_024, "{}", body.len());
            } else {
                assert_eq!(answer["result"], upstream_result(), "{answer}");
                assert_eq!(told, 2, "{body}");
            }
        }
    }

    /// Over stdio too: a call with a 1 MiB progress token is refused, and nothing the server
    /// writes carries the token.
    #[tokio::test]
    async fn over_stdio_a_progress_token_past_256_bytes_is_refused() {
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
        let (client, served) = tokio::io::duplex(1 << 22);
        let (read, write) = tokio::io::split(served);
        let serving = tokio::spawn(crate::McpServer::new(toolkit()).serve_io(read, write));
        let (read, mut write) = tokio::io::split(client);
        let mut lines = tokio::io::BufReader::new(read).lines();
        let long = "p".repeat(1 << 20);
        let messages = [
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call(1, json!({"progressToken": long})),
            call(2, json!({"progressToken": "short"})),
        ];
        for message in messages {
            write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        let mut answers = std::collections::HashMap::new();
        let mut told = Vec::new();
        while answers.len() < 3 {
            let line = lines.next_line().await.unwrap().unwrap();
            assert!(line.len() < 4_096, "{}", line.len());
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "notifications/progress" {
                told.push(message["params"]["progressToken"].clone());
            } else if let Some(id) = message["id"].as_u64() {
                answers.insert(id, message);
            }
        }
        assert_eq!(answers[&1]["error"]["code"], -32602, "{}", answers[&1]);
        assert_eq!(answers[&2]["result"], upstream_result());
        assert_eq!(told, [json!("short"), json!("short")]);
        // The client's end closed: serving ends.
        write.shutdown().await.unwrap();
        serving.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_session_over_http_is_answered_with_the_result_and_progress_as_written() {
        let mut router = router(false);
        let session = session(&mut router).await;
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let (parts, body) = post(
            &mut router,
            &headers,
            &call(1, json!({"progressToken": "p"})),
        )
        .await;
        assert_eq!(parts.headers[CONTENT_TYPE], "text/event-stream");
        assert!(body.contains(r#""priority":1,"#), "{body}");
        assert!(body.contains("12345678901234567890"), "{body}");
        assert!(!body.contains("1.0"), "{body}");
        let messages = messages(&parts, &body);
        let progress: Vec<&Value> = messages
            .iter()
            .filter(|message| message["method"] == "notifications/progress")
            .map(|message| &message["params"])
            .collect();
        assert_eq!(
            progress,
            [
                &json!({"progressToken": "p", "progress": 1, "total": 2}),
                &json!({"progressToken": "p", "progress": 12_345_678_901_234_567_890_u64, "message": "far"}),
            ],
            "{body}"
        );
        let answer = messages.iter().find(|message| message["id"] == 1).unwrap();
        assert_eq!(answer["result"], upstream_result(), "{body}");
        // Every event keeps its id (resumability).
        let events: Vec<&str> = body
            .split("\n\n")
            .filter(|event| !event.is_empty())
            .collect();
        assert_eq!(events.len(), 4, "{body}");
        assert!(
            events.iter().all(|event| event.contains("\nid: ")),
            "{body}"
        );
    }

    /// A `GET` of the session's stream with `headers`: its body, read to its end.
    async fn get(router: &mut axum::Router, headers: &[(&str, &str)]) -> String {
        use tower_service::Service;
        let mut request = axum::http::Request::get("http://localhost/mcp")
            .header("host", "localhost")
            .header("accept", "text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Body::empty()).unwrap();
        let response = Service::<Request>::call(router, request).await.unwrap();
        assert_eq!(response.status(), 200);
        let read = axum::body::to_bytes(response.into_body(), usize::MAX);
        let bytes = tokio::time::timeout(std::time::Duration::from_secs(10), read)
            .await
            .unwrap()
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_stream_resumed_after_its_connection_was_lost_goes_on_as_written() {
        use tower_service::Service;
        let mut router = router(false);
        let session = session(&mut router).await;
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let mut request = axum::http::Request::post("http://localhost/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                          "params": {"name": "held", "arguments": {}, "_meta": {"progressToken": "p"}}});
        let request = request.body(Body::from(call.to_string())).unwrap();
        let response = Service::<Request>::call(&mut router, request)
            .await
            .unwrap();
        // The client reads up to the call's first progress, and loses the connection.
        let mut body = response.into_body().into_data_stream();
        let mut first = String::new();
        while !first.contains("notifications/progress") {
            let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            first.push_str(std::str::from_utf8(&chunk).unwrap());
        }
        drop(body);
        assert!(first.contains(r#""progress":1,"total":2"#), "{first}");
        let last = first
            .lines()
            .filter_map(|line| line.strip_prefix("id: "))
            .next_back()
            .unwrap()
            .to_owned();
        let resuming = [
            ("mcp-session-id".to_owned(), session.clone()),
            ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()),
            ("last-event-id".to_owned(), last),
        ];
        let resume = {
            let mut router = router.clone();
            async move {
                let headers: Vec<(&str, &str)> = resuming
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.as_str()))
                    .collect();
                get(&mut router, &headers).await
            }
        };
        // The call goes on once the client has resumed (rmcp forgets a call's stream once the
        // call has answered).
        let resumed = tokio::spawn(resume);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        RELEASE.notify_one();
        let resumed = resumed.await.unwrap();
        let messages: Vec<Value> = resumed
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter(|data| !data.is_empty())
            .map(|data| serde_json::from_str(data).unwrap())
            .collect();
        let answer = messages.iter().find(|message| message["id"] == 7);
        assert_eq!(
            answer.map(|answer| &answer["result"]),
            Some(&upstream_result()),
            "{resumed}"
        );
        assert!(resumed.contains(r#""priority":1,"#), "{resumed}");
        assert!(
            resumed.contains(r#""progress":12345678901234567890,"message":"far""#),
            "{resumed}"
        );
        assert!(!resumed.contains("1.0"), "{resumed}");
    }

    #[tokio::test]
    async fn a_stateless_client_over_http_is_answered_with_the_result_as_written() {
        let meta = json!({
            "progressToken": "p",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "big"),
        ];
        let mut expected = upstream_result();
        expected["resultType"] = json!("complete");
        for json in [false, true] {
            let mut router = router(json);
            let (parts, body) = post(&mut router, &headers, &call(5, meta.clone())).await;
            assert_eq!(parts.status, 200, "{body}");
            let messages = messages(&parts, &body);
            let answer = messages.iter().find(|message| message["id"] == 5).unwrap();
            assert_eq!(answer["result"], expected, "json answers {json}: {body}");
            assert!(!body.contains("1.0"), "{body}");
        }
    }

    /// A host that answers every task request (with an empty list).
    #[derive(Debug)]
    struct AnsweringTasks;

    impl crate::Tasks for AnsweringTasks {
        fn call<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: JsonObject,
            _: JsonObject,
            _: &'a toolkit_core::CallContext,
        ) -> toolkit_core::BoxFuture<'a, Result<JsonObject, crate::Refusal>> {
            Box::pin(async { Err(crate::Refusal::Failed("no call here".into())) })
        }

        fn request<'a>(
            &'a self,
            _: &'a str,
            _: JsonObject,
            _: &'a toolkit_core::CallContext,
        ) -> toolkit_core::BoxFuture<'a, Result<JsonObject, crate::Refusal>> {
            Box::pin(async { Ok(json!({"tasks": []}).as_object().cloned().unwrap()) })
        }
    }

    #[tokio::test]
    async fn renamed_task_methods_a_client_writes_itself_are_not_served_over_http() {
        let mut router = crate::McpServer::new(toolkit_core::Toolkit::default())
            .tasks(Arc::new(AnsweringTasks))
            .router(crate::MCP_PATH, crate::CancellationToken::new());
        let list = |id: u64, meta: Value| {
            json!({"jsonrpc": "2.0", "id": id, "method": "toolkit-tasks:tasks/list",
                   "params": {"_meta": meta}})
        };
        // A stateless request.
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"tasks": {}}
        });
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "toolkit-tasks:tasks/list"),
        ];
        let (parts, body) = post(&mut router, &headers, &list(1, meta)).await;
        let answer = messages(&parts, &body).into_iter().find(|m| m["id"] == 1);
        let answer = answer.unwrap_or(Value::Null);
        assert!(answer["result"].is_null(), "served statelessly: {body}");
        assert_eq!(answer["error"]["code"], -32601, "{body}");
        // A session whose client declared no tasks.
        let session = session(&mut router).await;
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let (parts, body) = post(&mut router, &headers, &list(2, json!({}))).await;
        let answer = messages(&parts, &body).into_iter().find(|m| m["id"] == 2);
        let answer = answer.unwrap_or(Value::Null);
        assert_eq!(answer["error"]["code"], -32601, "{body}");
    }
}
