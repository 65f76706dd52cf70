//! Streamable HTTP: one POST per request to the server's one endpoint, answered as JSON or as an
//! event stream; the stateless revision when the server speaks it, a session otherwise, and the
//! old HTTP+SSE transport of 2024-11-05 for servers that speak only that.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Response, StatusCode, Url};
use serde_json::Map;

use super::body::{self, Answered, Kind, Resumption};
use super::legacy_sse::LegacySse;
use super::requests;
use super::shared::{
    MCP_PROTOCOL_VERSION, MCP_SESSION_ID, Shared, answer_server_request, headers_for,
};
use super::standalone::Standalone;
use super::status::{self, Refusal};
use super::{Agreed, Fault, MAX_ANSWERS_IN_FLIGHT, Reply, Request, Transport, spawn_bounded};
use crate::jsonrpc::{self, Outcome, RpcError, ServerRequest};
use crate::negotiation::{self, Next};
use crate::revision::{self, Revision};
use crate::{McpHttpClient, McpOptions};
use toolkit_core::{BoxFuture, CallContext, JsonObject, Reason};

const LAST_EVENT_ID: &str = "last-event-id";
/// The most bytes of a refusal's body read to find a JSON-RPC error in it.
const MAX_REFUSAL_BYTES: usize = 64 * 1024;
/// How long ending a session (DELETE) may take once the source is dropped.
const END_SESSION_WAIT: Duration = Duration::from_secs(5);
/// The most times the stream of one answer is resumed (each after the server's `retry`).
const MAX_RESUMPTIONS: usize = 5;
/// How long to wait before resuming a stream whose server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// How this transport speaks to its server, once settled.
#[derive(Clone, Debug)]
enum Link {
    /// Streamable HTTP, stateless or in a session (`session` is the `Mcp-Session-Id`, if the
    /// server gave one).
    Streamable {
        settled: Agreed,
        session: Option<String>,
    },
    /// The old HTTP+SSE transport.
    Legacy(Arc<LegacySse>, Agreed),
}

/// The Streamable HTTP transport (with the old HTTP+SSE one behind it).
pub(crate) struct StreamableHttp {
    shared: Arc<Shared>,
    /// Held while the link is being settled, so that one request settles it for all.
    settling: tokio::sync::Mutex<()>,
    /// The link, with its generation (which negotiation made it), once settled.
    link: Mutex<Option<(u64, Link)>>,
    /// The generation of the last link stored.
    generation: AtomicU64,
    /// The reader of the session's standalone stream (or of the stateless revision's
    /// subscription), while one is open.
    standalone: Mutex<Option<Standalone>>,
}

impl std::fmt::Debug for StreamableHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL is left out: it may carry a secret in its query.
        f.debug_struct("StreamableHttp").finish_non_exhaustive()
    }
}

/// What one POST came to.
enum Posted {
    /// The server answered (a result or a JSON-RPC error).
    Answer(Outcome),
    /// The server refused the request with an HTTP status before taking it as a request of the
    /// link's revision and session — 404 or another 4xx that answers no request (see
    /// [`Refusal`]): a session it no longer knows, or a revision it no longer speaks (it was
    /// redeployed). Negotiated again, once.
    Refused {
        status: StatusCode,
        error: Option<RpcError>,
    },
}

/// What sending a request on a link came to.
enum Sent {
    /// The answer.
    Done(Reply),
    /// The link is stale (see [`Posted::Refused`], and `-32022`: the server does not speak the
    /// revision settled); what to give when it still is after negotiating again.
    Stale(Result<Reply, Fault>),
}

impl StreamableHttp {
    pub(crate) fn new(sender: Arc<dyn McpHttpClient>, url: Url, options: McpOptions) -> Self {
        Self {
            shared: Arc::new(Shared {
                client: sender.client().clone(),
                sender,
                url,
                in_flight: requests::InFlight::new(&options),
                options,
                next_id: AtomicU64::new(1),
                answering: Arc::new(tokio::sync::Semaphore::new(MAX_ANSWERS_IN_FLIGHT)),
                changes: crate::changes::Changes::default(),
                progress: toolkit_core::progress::Routes::default(),
            }),
            settling: tokio::sync::Mutex::new(()),
            link: Mutex::new(None),
            generation: AtomicU64::new(0),
            standalone: Mutex::new(None),
        }
    }

    fn current(&self) -> Option<(u64, Link)> {
        self.link
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stores `link` as a new generation.
    fn store(&self, link: Link) -> (u64, Link) {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        *self.link.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((generation, link.clone()));
        (generation, link)
    }

    /// The link with its generation, settling it first if no request has yet.
    async fn link(&self) -> Result<(u64, Link), Fault> {
        let usable = |(_, link): &(u64, Link)| !matches!(link, Link::Legacy(legacy, _) if legacy.is_closed());
        if let Some(current) = self.current().filter(usable) {
            return Ok(current);
        }
        let _settling = self.settling.lock().await;
        if let Some(current) = self.current().filter(usable) {
            return Ok(current);
        }
        let link = self.negotiate().await?;
        Ok(self.store(link))
    }

    /// Negotiates again, unless another request already did since the link of generation
    /// `stale` was found stale.
    async fn renegotiate(&self, stale: u64) -> Result<(u64, Link), Fault> {
        let _settling = self.settling.lock().await;
        if let Some(current) = self.current()
            && current.0 != stale
        {
            return Ok(current);
        }
        let link = self.negotiate().await?;
        Ok(self.store(link))
    }

    /// Finds out how to speak to the server: `server/discover`, then `initialize`, then the old
    /// HTTP+SSE transport.
    async fn negotiate(&self) -> Result<Link, Fault> {
        let discover = Request::new("server/discover", Map::new());
        let modern = Agreed {
            revision: Revision::Modern,
            server_info: None,
            capabilities: None,
        };
        let next = match self.post(&modern, None, &discover).await {
            Ok(Posted::Answer(Ok(result))) => negotiation::after_discovered(&result)?,
            Ok(
                Posted::Answer(Err(error))
                | Posted::Refused {
                    error: Some(error), ..
                },
            ) => negotiation::after_refusal(&error)?,
            Ok(Posted::Refused { error: None, .. }) => negotiation::after_silence(),
            Err(fault @ (Fault::TooLarge | Fault::Elsewhere)) => return Err(fault),
            Err(Fault::Failed(
                reason @ (Reason::Authentication { .. } | Reason::Unavailable { .. }),
            )) => return Err(reason.into()),
            // Anything else that is not an answer (an empty 400, an HTML 404, a 405): a server of
            // the session revisions, or of the old transport.
            Err(Fault::Failed(_)) => negotiation::after_silence(),
        };
        let version = match next {
            Next::Modern(settled) => {
                // The revision's change notifications come on a subscription of their own.
                let listening = super::listen::listen(self.shared.clone(), settled.clone());
                *self
                    .standalone
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = listening;
                return Ok(Link::Streamable {
                    settled,
                    session: None,
                });
            }
            Next::Initialize(version) => version,
        };
        match self.initialize(version).await {
            Ok((settled, session)) => {
                let standalone =
                    Standalone::open(self.shared.clone(), settled.clone(), session.clone()).await;
                // The stream of a session before it (if any) is closed.
                *self
                    .standalone
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = standalone;
                Ok(Link::Streamable { settled, session })
            }
            Err(Fault::Failed(Reason::InvalidResponse { description })) => {
                tracing::debug!(%description, "initialize over Streamable HTTP failed; trying the old HTTP+SSE transport");
                match LegacySse::connect(self.shared.clone()).await {
                    Ok((legacy, settled)) => Ok(Link::Legacy(Arc::new(legacy), settled)),
                    // The server refused the client, or went away: say that.
                    Err(Fault::Failed(
                        reason @ (Reason::Authentication { .. } | Reason::Unavailable { .. }),
                    )) => Err(reason.into()),
                    Err(legacy_fault) => {
                        tracing::debug!(?legacy_fault, "the old HTTP+SSE transport failed too");
                        Err(Fault::Failed(Reason::InvalidResponse { description }))
                    }
                }
            }
            Err(fault) => Err(fault),
        }
    }

    /// Begins a session with `initialize` in `version`, and says `notifications/initialized`.
    async fn initialize(&self, version: &'static str) -> Result<(Agreed, Option<String>), Fault> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let message = jsonrpc::request(
            id,
            "initialize",
            revision::initialize_params(version, &self.shared.options),
        );
        let response = self
            .shared
            .send(
                self.shared
                    .client
                    .post(self.shared.url.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, "application/json, text/event-stream")
                    .json(&message),
            )
            .await?;
        let session = match response.headers().get(MCP_SESSION_ID) {
            None => None,
            Some(value) => {
                let text = value.to_str().ok().filter(|text| {
                    !text.is_empty() && text.bytes().all(|byte| (0x21..=0x7E).contains(&byte))
                });
                Some(
                    text.ok_or_else(|| {
                        Reason::invalid_response(
                            "a session id with characters a session id cannot have",
                        )
                    })?
                    .to_owned(),
                )
            }
        };
        let provisional = Agreed {
            revision: Revision::Session { version },
            server_info: None,
            capabilities: None,
        };
        let outcome = match self
            .read(
                response,
                id,
                &provisional,
                session.as_deref(),
                &CallContext::new(),
            )
            .await?
        {
            Posted::Answer(outcome) => outcome,
            Posted::Refused {
                error: Some(error), ..
            } => Err(error),
            Posted::Refused {
                status,
                error: None,
            } => return Err(without_error(status).into()),
        };
        let settled = negotiation::after_initialize(outcome)?;
        self.notify(
            &settled,
            session.as_deref(),
            "notifications/initialized",
            Map::new(),
        )
        .await?;
        Ok((settled, session))
    }

    /// Sends a notification; the server's answer (202, usually) is not read beyond its status.
    async fn notify(
        &self,
        settled: &Agreed,
        session: Option<&str>,
        method: &'static str,
        params: JsonObject,
    ) -> Result<(), Fault> {
        let message = jsonrpc::notification(method, params);
        let builder = headers_for(
            self.shared.client.post(self.shared.url.clone()),
            settled,
            session,
            method,
            None,
        )
        .json(&message);
        let response = self.shared.send(builder).await?;
        if !status::same_origin(response.url(), &self.shared.url) {
            return Err(Fault::Elsewhere);
        }
        if let Some(reason) = status::failure_of(response.status(), response.headers()) {
            return Err(reason.into());
        }
        Ok(())
    }

    /// Posts `request` and reads its answer.
    async fn post(
        &self,
        settled: &Agreed,
        session: Option<&str>,
        request: &Request,
    ) -> Result<Posted, Fault> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let params = match settled.revision {
            Revision::Modern => revision::with_modern_meta(crate::input_required::declared(
                request.params.clone(),
                &self.shared.options,
                &request.context,
            )),
            Revision::Session { .. } => request.params.clone(),
        };
        let message = jsonrpc::request(id, request.method, params);
        let mut builder = headers_for(
            self.shared.client.post(self.shared.url.clone()),
            settled,
            session,
            request.method,
            request.name.as_deref(),
        );
        if settled.revision == Revision::Modern {
            for (name, value) in &request.param_headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
        }
        // A call dropped before its answer tells a session server so (the stateless revision
        // has no such notification: closing the connection is its cancellation).
        let mut guard = CancelOnDrop {
            shared: self.shared.clone(),
            settled: settled.clone(),
            session: session.map(str::to_owned),
            id,
            armed: settled.revision.cancels_by_notification(),
        };
        let response = self.shared.send(builder.json(&message)).await?;
        let posted = self
            .read(response, id, settled, session, &request.context)
            .await;
        guard.armed = false;
        posted
    }

    /// Reads the answer to request `id`, made for the call of `context`, from `response`.
    async fn read(
        &self,
        response: Response,
        id: u64,
        settled: &Agreed,
        session: Option<&str>,
        context: &CallContext,
    ) -> Result<Posted, Fault> {
        if !status::same_origin(response.url(), &self.shared.url) {
            // Never read: another site's words must not reach the model.
            return Err(Fault::Elsewhere);
        }
        let status = response.status();
        if let Some(reason) = status::failure_of(status, response.headers()) {
            return Err(reason.into());
        }
        if !status.is_success() {
            let body = body::read_all(response, MAX_REFUSAL_BYTES)
                .await
                .unwrap_or_default();
            return Ok(match status::refusal_of_body(&body, id) {
                Refusal::Answered(error) => Posted::Answer(Err(error)),
                Refusal::Unanswered(error) => Posted::Refused { status, error },
            });
        }
        if status != StatusCode::OK || body::kind(&response) == Kind::Other {
            return Err(Reason::invalid_response(format!(
                "HTTP {} without a JSON or event-stream answer",
                status.as_u16()
            ))
            .into());
        }
        let limit = self.shared.options.max_response_bytes;
        let mut on_request = {
            let shared = self.shared.clone();
            let settled = settled.clone();
            let session = session.map(str::to_owned);
            // What the server asks on the call's own stream goes to the call's client.
            let relay = requests::relay_of(&shared.options, context);
            move |asked: ServerRequest| {
                answer_server_request(&shared, &settled, session.clone(), asked, relay.clone());
            }
        };
        let mut resumption = match body::answer(
            response,
            id,
            limit,
            context,
            &self.shared.progress,
            &mut on_request,
        )
        .await?
        {
            Answered::Outcome(outcome) => return Ok(Posted::Answer(outcome)),
            // The stateless revision resumes no stream: its server answers on the POST's own.
            Answered::Ended(_) if settled.revision == Revision::Modern => {
                return Err(body::ended_early());
            }
            Answered::Ended(resumption) => resumption,
        };
        // A stream closed before its answer, after giving an event id: resumed by GET from that
        // id, after the server's `retry`, a bounded number of times.
        for _ in 0..MAX_RESUMPTIONS {
            tokio::time::sleep(resumption.retry.unwrap_or(DEFAULT_RETRY)).await;
            let response = self.resume(settled, session, &resumption).await?;
            match body::answer(
                response,
                id,
                limit,
                context,
                &self.shared.progress,
                &mut on_request,
            )
            .await?
            {
                Answered::Outcome(outcome) => return Ok(Posted::Answer(outcome)),
                Answered::Ended(later) => resumption = resumption.then(later),
            }
        }
        Err(body::ended_early())
    }

    /// GETs the event stream of a session again from the last event id of `resumption`.
    async fn resume(
        &self,
        settled: &Agreed,
        session: Option<&str>,
        resumption: &Resumption,
    ) -> Result<Response, Fault> {
        let mut builder = self
            .shared
            .client
            .get(self.shared.url.clone())
            .header(ACCEPT, "text/event-stream")
            .header(MCP_PROTOCOL_VERSION, settled.revision.version());
        if let Some(session) = session {
            builder = builder.header(MCP_SESSION_ID, session);
        }
        // An id that cannot be a header value is not sent (the server resumes from its start).
        if let Some(id) = resumption
            .last_event_id
            .as_deref()
            .and_then(|id| HeaderValue::from_str(id).ok())
        {
            builder = builder.header(LAST_EVENT_ID, id);
        }
        // Through the sender, as every request: it carries the credentials an OAuth client adds.
        let response = self.shared.send(builder).await?;
        if !status::same_origin(response.url(), &self.shared.url) {
            return Err(Fault::Elsewhere);
        }
        let status = response.status();
        if let Some(reason) = status::failure_of(status, response.headers()) {
            return Err(reason.into());
        }
        if status != StatusCode::OK || body::kind(&response) != Kind::EventStream {
            return Err(Reason::unavailable(format!(
                "the event stream ended before the answer came, and resuming it was refused (HTTP {})",
                status.as_u16()
            ))
            .into());
        }
        Ok(response)
    }

    /// Sends `request` on the settled link. A link the server no longer takes (a session it
    /// ended, a revision it no longer speaks since it was redeployed) is dropped, negotiated
    /// again from the start once, and the request sent once more.
    async fn send(&self, request: Request) -> Result<Reply, Fault> {
        // A served call's client is asked what the server asks on a stream of no call, while
        // it is the one in flight.
        // A task's `tasks/result` is where its server asks what the call needs.
        let _in_flight = if matches!(request.method, "tools/call" | "tasks/result") {
            self.shared
                .in_flight
                .enter(requests::relay_of(&self.shared.options, &request.context))
        } else {
            None
        };
        let (generation, link) = self.link().await?;
        match self.send_on(link, &request).await? {
            Sent::Done(reply) => Ok(reply),
            Sent::Stale(_) => {
                tracing::debug!(
                    "the server no longer takes the link negotiated with it; negotiating again"
                );
                let (_, link) = self.renegotiate(generation).await?;
                match self.send_on(link, &request).await? {
                    Sent::Done(reply) => Ok(reply),
                    Sent::Stale(last) => last,
                }
            }
        }
    }

    /// Sends `request` on `link`.
    async fn send_on(&self, link: Link, request: &Request) -> Result<Sent, Fault> {
        let (settled, session) = match link {
            Link::Legacy(legacy, settled) => {
                let outcome = legacy.request(request, &settled).await?;
                return Ok(answered(outcome, settled.revision));
            }
            Link::Streamable { settled, session } => (settled, session),
        };
        Ok(
            match self.post(&settled, session.as_deref(), request).await? {
                Posted::Answer(outcome) => answered(outcome, settled.revision),
                Posted::Refused { status, error } => Sent::Stale(match error {
                    _ if session.is_some() && status == StatusCode::NOT_FOUND => Err(
                        Reason::unavailable("the server ended a session it had just begun").into(),
                    ),
                    Some(error) => Ok(Reply {
                        outcome: Err(error),
                        revision: settled.revision,
                    }),
                    None => Err(without_error(status).into()),
                }),
            },
        )
    }
}

/// An answer: stale when it is `-32022` (the server does not speak the revision settled).
fn answered(outcome: Outcome, revision: Revision) -> Sent {
    let stale =
        matches!(&outcome, Err(error) if error.code == jsonrpc::UNSUPPORTED_PROTOCOL_VERSION);
    let reply = Reply { outcome, revision };
    if stale {
        Sent::Stale(Ok(reply))
    } else {
        Sent::Done(reply)
    }
}

/// The reason of a refusal with `status` and no JSON-RPC error.
fn without_error(status: StatusCode) -> Reason {
    Reason::invalid_response(format!("HTTP {} without a JSON-RPC error", status.as_u16()))
}

/// Sends `notifications/cancelled` for a request whose future is dropped before its answer.
struct CancelOnDrop {
    shared: Arc<Shared>,
    settled: Agreed,
    session: Option<String>,
    id: u64,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let message = jsonrpc::cancelled(self.id);
        let builder = headers_for(
            self.shared.client.post(self.shared.url.clone()),
            &self.settled,
            self.session.as_deref(),
            "notifications/cancelled",
            None,
        )
        .json(&message);
        let shared = self.shared.clone();
        spawn_bounded(END_SESSION_WAIT, async move {
            let _ = shared.send(builder).await;
        });
    }
}

impl StreamableHttp {
    /// The DELETE that ends the session of `link`, if it has one.
    fn end_session(&self, link: Option<(u64, Link)>) -> Option<reqwest::RequestBuilder> {
        let Some((
            _,
            Link::Streamable {
                settled,
                session: Some(session),
            },
        )) = link
        else {
            return None;
        };
        let mut builder = self
            .shared
            .client
            .delete(self.shared.url.clone())
            .header(MCP_PROTOCOL_VERSION, settled.revision.version());
        if let Ok(value) = HeaderValue::from_str(&session) {
            builder = builder.header(HeaderName::from_static(MCP_SESSION_ID), value);
        }
        Some(builder)
    }
}

impl Drop for StreamableHttp {
    /// Ends the session, if there is one: a DELETE, once, in the background, bounded.
    fn drop(&mut self) {
        let link = self
            .link
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(builder) = self.end_session(link) {
            let shared = self.shared.clone();
            spawn_bounded(END_SESSION_WAIT, async move {
                let _ = shared.send(builder).await;
            });
        }
    }
}

impl Transport for StreamableHttp {
    fn request(&self, request: Request) -> BoxFuture<'_, Result<Reply, Fault>> {
        Box::pin(self.send(request))
    }

    fn settle(&self) -> BoxFuture<'_, Result<Agreed, Fault>> {
        Box::pin(async {
            Ok(match self.link().await?.1 {
                Link::Streamable { settled, .. } | Link::Legacy(_, settled) => settled,
            })
        })
    }

    fn marks_apply(&self, revision: &Revision) -> bool {
        *revision == Revision::Modern
    }

    fn connection(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    fn progress(&self) -> &toolkit_core::progress::Routes {
        &self.shared.progress
    }

    fn tools_changed(&self) -> Option<crate::ToolsChanged> {
        Some(self.shared.changes.subscribe())
    }

    fn resources_updated(&self) -> Option<crate::ResourcesUpdated> {
        Some(self.shared.changes.resources())
    }

    fn notify(&self, method: &'static str) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let told = match self.current() {
                Some((_, Link::Streamable { settled, session }))
                    if settled.revision != Revision::Modern =>
                {
                    self.notify(&settled, session.as_deref(), method, Map::new())
                        .await
                }
                Some((_, Link::Legacy(legacy, _))) => {
                    legacy
                        .post(&jsonrpc::notification(method, Map::new()))
                        .await
                }
                _ => Ok(()),
            };
            if told.is_err() {
                tracing::debug!(method, "the HTTP server could not be told");
            }
        })
    }

    fn task_statuses(&self) -> Option<crate::TaskStatuses> {
        Some(self.shared.changes.task_statuses())
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {
            let _settling = self.settling.lock().await;
            self.standalone
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let link = self
                .link
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(builder) = self.end_session(link) {
                let _ = tokio::time::timeout(END_SESSION_WAIT, self.shared.send(builder)).await;
            }
        })
    }
}
