//! The old HTTP+SSE transport of revision 2024-11-05, deprecated since 2025-03-26 but still
//! served: the client GETs an event stream whose first event (`endpoint`) names the URL to POST
//! each message to, and every answer comes back as a `message` event on that stream.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_util::StreamExt as _;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::body::{self, Kind};
use super::channel::{Pending, Waiting, received};
use super::requests;
use super::shared::Shared;
use super::spawn_bounded;
use super::status;
use super::{Agreed, Fault, Request};
use crate::changes::says_a_list_changed;
use crate::jsonrpc::{self, Incoming, Outcome};
use crate::negotiation;
use crate::revision::{self, Revision};
use toolkit_core::Reason;

/// A connection over the old transport: the stream being read, and where to post.
pub(crate) struct LegacySse {
    shared: Arc<Shared>,
    endpoint: Url,
    pending: Arc<Pending>,
    reader: JoinHandle<()>,
}

impl std::fmt::Debug for LegacySse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySse").finish_non_exhaustive()
    }
}

impl LegacySse {
    /// Opens the event stream, reads the endpoint, and begins a session with `initialize`.
    pub(crate) async fn connect(shared: Arc<Shared>) -> Result<(Self, Agreed), Fault> {
        let response = shared
            .send(
                shared
                    .client
                    .get(shared.url.clone())
                    .header(ACCEPT, "text/event-stream"),
            )
            .await?;
        if !status::same_origin(response.url(), &shared.url) {
            return Err(Fault::Elsewhere);
        }
        if let Some(reason) = status::failure_of(response.status(), response.headers()) {
            return Err(reason.into());
        }
        if !response.status().is_success() || body::kind(&response) != Kind::EventStream {
            return Err(Reason::invalid_response(
                "the server speaks no MCP transport this client knows",
            )
            .into());
        }
        let mut events = body::events_per_event(response, shared.options.max_response_bytes);
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event == "endpoint" => break event.data,
                Some(Ok(_)) => {}
                Some(Err(fault)) => return Err(fault),
                None => {
                    return Err(Reason::invalid_response(
                        "the event stream ended before naming its endpoint",
                    )
                    .into());
                }
            }
        };
        let endpoint = shared
            .url
            .join(endpoint.trim())
            .map_err(|_| Reason::invalid_response("an endpoint event that is no URL"))?;
        if endpoint.origin() != shared.url.origin() {
            return Err(Reason::invalid_response(
                "the server named an endpoint on another origin, which this client does not post to",
            )
            .into());
        }
        let pending = Arc::new(Pending::new());
        let reader = tokio::spawn(read_stream(
            events,
            pending.clone(),
            shared.clone(),
            endpoint.clone(),
        ));
        let legacy = Self {
            shared,
            endpoint,
            pending,
            reader,
        };
        let version = revision::SESSION_REVISIONS[0];
        let provisional = Agreed {
            revision: Revision::Session { version },
            server_info: None,
            capabilities: None,
        };
        let initialize = Request::new(
            "initialize",
            revision::initialize_params(version, &legacy.shared.options),
        );
        let settled =
            negotiation::after_initialize(legacy.request(&initialize, &provisional).await?)?;
        legacy
            .post(&jsonrpc::notification(
                "notifications/initialized",
                Map::new(),
            ))
            .await?;
        Ok((legacy, settled))
    }

    /// Posts one message to the endpoint; the answer, if any, comes on the stream.
    pub(crate) async fn post(&self, message: &Value) -> Result<(), Fault> {
        let response = self
            .shared
            .send(
                self.shared
                    .client
                    .post(self.endpoint.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .json(message),
            )
            .await?;
        // The endpoint's origin was checked; a redirect from it to another is refused too.
        if !status::same_origin(response.url(), &self.shared.url) {
            return Err(Fault::Elsewhere);
        }
        if let Some(reason) = status::failure_of(response.status(), response.headers()) {
            return Err(reason.into());
        }
        if !response.status().is_success() {
            return Err(Reason::invalid_response(format!(
                "the endpoint refused a message (HTTP {})",
                response.status().as_u16()
            ))
            .into());
        }
        Ok(())
    }

    /// Sends `request` and waits for its answer on the stream.
    pub(crate) async fn request(
        &self,
        request: &Request,
        _settled: &Agreed,
    ) -> Result<Outcome, Fault> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let receiver = self.pending.wait_for(id)?;
        let shared = self.shared.clone();
        let endpoint = self.endpoint.clone();
        let mut waiting = Waiting {
            pending: &self.pending,
            id,
            done: false,
            on_cancel: move |id| {
                let builder = shared
                    .client
                    .post(endpoint.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .json(&jsonrpc::cancelled(id));
                let shared = shared.clone();
                spawn_bounded(shared.options.timeout, async move {
                    let _ = shared.send(builder).await;
                });
            },
        };
        let message = jsonrpc::request(id, request.method, request.params.clone());
        let sent = self.post(&message).await;
        if let Err(fault) = sent {
            waiting.done = true;
            self.pending.forget(id);
            return Err(fault);
        }
        let answer = received(receiver).await;
        waiting.done = true;
        answer
    }
}

impl LegacySse {
    /// Whether the stream has ended (a new connection is needed).
    pub(crate) fn is_closed(&self) -> bool {
        self.pending.is_closed()
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        // Closing the stream ends the session.
        self.reader.abort();
        self.pending.close("the source was dropped");
    }
}

/// Reads the stream: answers go to whoever waits for them, a server's requests are answered.
async fn read_stream(
    mut events: impl futures_util::Stream<Item = Result<eventsource_stream::Event, Fault>> + Unpin,
    pending: Arc<Pending>,
    shared: Arc<Shared>,
    endpoint: Url,
) {
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(fault) => {
                // An event too large to read belongs to a request we cannot tell: fail those
                // waiting rather than leave them to the timeout.
                pending.fail_all(&fault);
                break;
            }
        };
        if event.event != "message" || event.data.trim().is_empty() {
            continue;
        }
        let Ok(messages) = body::messages_of(&event.data, &shared.progress) else {
            tracing::debug!("the old HTTP+SSE stream carried an event that is not JSON");
            continue;
        };
        for message in messages {
            match message {
                Incoming::Response { id, outcome } => pending.answer(&id, Ok(outcome)),
                Incoming::Request(request) => {
                    let Ok(permit) = shared.answering.clone().try_acquire_owned() else {
                        tracing::debug!(method = %request.method, "too many answers to the server in flight; one is dropped");
                        continue;
                    };
                    let sender = shared.clone();
                    let endpoint = endpoint.clone();
                    // Asked of no call: the client of the one served call in flight, if any.
                    let relay = shared.in_flight.only();
                    spawn_bounded(shared.options.timeout, async move {
                        let _permit = permit;
                        let elicitation = sender.options.elicitation.clone();
                        let Some(answer) = requests::answer(request, elicitation, relay).await
                        else {
                            return;
                        };
                        let builder = sender
                            .client
                            .post(endpoint)
                            .header(CONTENT_TYPE, "application/json")
                            .json(&answer);
                        let _ = sender.send(builder).await;
                    });
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
                Incoming::Notification { .. } => {}
            }
        }
    }
    pending.close("the server closed the event stream");
}
