//! The standalone event stream of a session (a GET on the endpoint): where a server of the
//! session revisions sends what belongs to no request of ours — its own requests (an
//! elicitation, a ping) and `notifications/tools/list_changed`.
//!
//! Opened once a session is begun, and waited for (briefly) so that what the server sends right
//! after is heard; a server that has no such stream (405, or anything but an event stream) is
//! left alone. A stream the server ends is opened again after its `retry`, from its last event
//! id, a bounded number of times in a row.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, HeaderValue};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::Agreed;
use super::body;
use super::shared::{Shared, answer_server_request};
use crate::changes::says_a_list_changed;
use crate::jsonrpc::Incoming;

/// How long setting up a session waits for the server to open the stream.
pub(crate) const OPEN_WAIT: Duration = Duration::from_secs(2);
/// The most times in a row the stream is opened again when it ends without an event.
const MAX_REOPENS: usize = 5;
/// How long to wait before opening it again when the server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The longest `retry` taken from the server.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// The stream's reader, stopped when this is dropped (the session ended or was replaced).
#[derive(Debug)]
pub(crate) struct Standalone {
    reader: AbortHandle,
}

impl Drop for Standalone {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Standalone {
    /// The reader `reader` (another stream read in the background: a subscription).
    pub(crate) fn of(reader: AbortHandle) -> Self {
        Self { reader }
    }

    /// Opens the session's stream and reads it in the background; waits up to [`OPEN_WAIT`]
    /// for the server to answer the GET. `None` outside a runtime.
    pub(crate) async fn open(
        shared: Arc<Shared>,
        settled: Agreed,
        session: Option<String>,
    ) -> Option<Self> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let (opened, answered) = oneshot::channel();
        let reader = runtime.spawn(read(shared, settled, session, opened));
        // Whether it opened or not, the session goes on.
        let _ = tokio::time::timeout(OPEN_WAIT, answered).await;
        Some(Self {
            reader: reader.abort_handle(),
        })
    }
}

/// Opens the stream (telling `opened` once the server answered), reads it, and opens it again
/// while the server keeps taking it.
async fn read(
    shared: Arc<Shared>,
    settled: Agreed,
    session: Option<String>,
    opened: oneshot::Sender<()>,
) {
    let mut opened = Some(opened);
    let mut last_event_id: Option<String> = None;
    let mut retry = DEFAULT_RETRY;
    let mut empty_in_a_row = 0;
    loop {
        let response = get(
            &shared,
            &settled,
            session.as_deref(),
            last_event_id.as_deref(),
        )
        .await;
        if let Some(opened) = opened.take() {
            let _ = opened.send(());
        }
        let Some(response) = response else {
            return;
        };
        let mut events = body::events_per_event(response, shared.options.max_response_bytes);
        let mut heard = false;
        while let Some(event) = events.next().await {
            let Ok(event) = event else {
                // An event past the cap, or a broken connection: opened again below.
                break;
            };
            if !event.id.is_empty() {
                last_event_id = Some(event.id.clone());
            }
            if let Some(wait) = event.retry {
                retry = wait.min(MAX_RETRY);
            }
            if event.event != "message" || event.data.trim().is_empty() {
                continue;
            }
            heard = true;
            let Ok(messages) = body::messages_of(&event.data, &shared.progress) else {
                tracing::debug!("the standalone stream carried an event that is not JSON");
                continue;
            };
            for message in messages {
                match message {
                    Incoming::Request(request) => {
                        // Asked of no call: the client of the one served call in flight, if any.
                        let relay = shared.in_flight.only();
                        answer_server_request(&shared, &settled, session.clone(), request, relay);
                    }
                    Incoming::Notification { method, .. } if says_a_list_changed(&method) => {
                        shared.changes.tell();
                    }
                    Incoming::Notification { method, params }
                        if method == crate::resources_updated::RESOURCES_UPDATED =>
                    {
                        shared.changes.resource_updated(params.as_ref());
                    }
                    Incoming::Notification { method, params }
                        if method == crate::task_statuses::TASK_STATUS =>
                    {
                        shared.changes.task_status(params.as_ref());
                    }
                    // Answers belong on the streams of their requests; progress and logs were
                    // passed on when read.
                    _ => {}
                }
            }
        }
        empty_in_a_row = if heard { 0 } else { empty_in_a_row + 1 };
        if empty_in_a_row >= MAX_REOPENS {
            tracing::debug!("the standalone stream keeps ending without an event; left closed");
            return;
        }
        tokio::time::sleep(retry).await;
    }
}

/// The GET that opens the stream; `None` when the server has none for us.
async fn get(
    shared: &Shared,
    settled: &Agreed,
    session: Option<&str>,
    last_event_id: Option<&str>,
) -> Option<reqwest::Response> {
    let mut builder = shared
        .client
        .get(shared.url.clone())
        .header(ACCEPT, "text/event-stream")
        .header("mcp-protocol-version", settled.revision.version());
    if let Some(session) = session.and_then(|session| HeaderValue::from_str(session).ok()) {
        builder = builder.header("mcp-session-id", session);
    }
    if let Some(id) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        builder = builder.header("last-event-id", id);
    }
    shared.open_event_stream(builder, "standalone").await
}
