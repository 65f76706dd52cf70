//! What the HTTP transports (Streamable HTTP, the old HTTP+SSE one, the standalone stream and
//! `subscriptions/listen`) and their spawned tasks share: [`Shared`], the headers of a POST, and
//! the answer to a request the server makes.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Client, Response, StatusCode, Url};

use super::body::{self, Kind};
use super::status::{self, transport_failure};
use super::{Agreed, requests, spawn_bounded};
use crate::headers::encode_value;
use crate::jsonrpc::ServerRequest;
use crate::revision::Revision;
use crate::{McpHttpClient, McpOptions};
use toolkit_core::Reason;

pub(crate) const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
pub(crate) const MCP_SESSION_ID: &str = "mcp-session-id";
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";

/// What the transport's spawned tasks (ping answers, cancellations) share with it.
pub(crate) struct Shared {
    /// What requests are built with (`sender`'s client).
    pub client: Client,
    /// What requests are sent through: the host's client, or one that authenticates them.
    pub sender: Arc<dyn McpHttpClient>,
    pub url: Url,
    pub options: McpOptions,
    pub next_id: AtomicU64,
    /// Room for answers to the server's requests in flight ([`MAX_ANSWERS_IN_FLIGHT`]).
    pub answering: Arc<tokio::sync::Semaphore>,
    /// Told of each `notifications/tools/list_changed` heard on the old transport's stream.
    pub changes: crate::changes::Changes,
    /// The served calls in flight, for what the server asks on a stream of no call.
    pub in_flight: requests::InFlight,
    /// The calls sent to this server that wait for progress: what its streams carry of progress
    /// goes to them only.
    pub progress: toolkit_core::progress::Routes,
}

/// `builder` with the headers every POST of `settled`'s revision carries.
pub(crate) fn headers_for(
    builder: reqwest::RequestBuilder,
    settled: &Agreed,
    session: Option<&str>,
    method: &str,
    name: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut builder = builder
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header(MCP_PROTOCOL_VERSION, settled.revision.version());
    match settled.revision {
        Revision::Modern => {
            builder = builder.header(MCP_METHOD, method);
            if let Some(name) = name {
                builder = builder.header(MCP_NAME, encode_value(name));
            }
        }
        Revision::Session { .. } => {
            if let Some(session) = session {
                builder = builder.header(MCP_SESSION_ID, session);
            }
        }
    }
    builder
}

impl Shared {
    /// Builds the request of `builder` and sends it through the sender (which may put
    /// credentials on it, and get them first).
    pub(crate) async fn send(&self, builder: reqwest::RequestBuilder) -> Result<Response, Reason> {
        let request = builder.build().map_err(transport_failure)?;
        self.sender.send(request).await
    }

    /// Sends `builder`, a request that opens a long-lived event stream (the standalone GET, the
    /// `subscriptions/listen` POST), and gives the response if it is one: from the server's own
    /// origin, `200` and `text/event-stream`. `None` otherwise; `stream` names it in the log.
    pub(crate) async fn open_event_stream(
        &self,
        builder: reqwest::RequestBuilder,
        stream: &'static str,
    ) -> Option<Response> {
        let response = self.send(builder).await.ok()?;
        if !status::same_origin(response.url(), &self.url) {
            tracing::debug!(stream, "redirected to another origin; not read");
            return None;
        }
        if response.status() != StatusCode::OK || body::kind(&response) != Kind::EventStream {
            tracing::debug!(
                stream,
                status = response.status().as_u16(),
                "the server opens no such stream"
            );
            return None;
        }
        Some(response)
    }
}

/// Answers a request the server made on a response stream (or the standalone one), as a new
/// POST in the background — unless the revision has the server send none (the stateless one),
/// or as many answers as may be are in flight. `relay` is the client of the served call whose
/// stream carried it, if any.
pub(crate) fn answer_server_request(
    shared: &Arc<Shared>,
    settled: &Agreed,
    session: Option<String>,
    request: ServerRequest,
    relay: requests::Relay,
) {
    let method = request.method.clone();
    if settled.revision == Revision::Modern {
        tracing::debug!(
            method,
            "the server sent a request, which the stateless revision has none of; left unanswered"
        );
        return;
    }
    let Ok(permit) = shared.answering.clone().try_acquire_owned() else {
        tracing::debug!(
            method,
            "too many answers to the server in flight; one is dropped"
        );
        return;
    };
    let elicitation = shared.options.elicitation.clone();
    let settled = settled.clone();
    let wait = shared.options.timeout;
    let shared = shared.clone();
    spawn_bounded(wait, async move {
        let _permit = permit;
        let Some(answer) = requests::answer(request, elicitation, relay).await else {
            return;
        };
        let builder = headers_for(
            shared.client.post(shared.url.clone()),
            &settled,
            session.as_deref(),
            &method,
            None,
        )
        .json(&answer);
        let _ = shared.send(builder).await;
    });
}
