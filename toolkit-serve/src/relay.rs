//! The relay of a served call to its client over rmcp (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`): [`ClientRelay`], the server's [`Relay`](toolkit_core::context::Relay).
//!
//! A served call puts its [`ClientRelay`] in its [`CallContext`](toolkit_core::CallContext); an MCP
//! source whose options say so (`McpOptions::relay`) declares the capabilities to its server, and
//! passes each request the server makes on the call's own stream to the relay (one it makes on a
//! stream of no call — a session's standalone stream, stdio — to the relay of the one served call
//! in flight on that source, if only one is), which sends it to the client that made the call (on
//! that call's stream) and gives back the client's answer as the client wrote it. Asked outside
//! any call, it goes to the one session's client there is ([`ClientRelay::for_session`], joined
//! to the server's [`Clients`](toolkit_core::context::Clients)). A client that
//! did not declare the capability is not asked: the source answers as for a client without it.
//! A sampling request's `includeContext` is rewritten to `"none"` on the way
//! (`sampling_context.rs`). The relay stops when the call ends (answered, cancelled or dropped):
//! a question still open is cancelled at the client and left unanswered upstream, whose call is
//! cancelled too.

use rmcp::model::{CustomRequest, GetExtensions as _, RequestId, ServerRequest};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use toolkit_core::BoxFuture;
use toolkit_core::context::{ELICITATION_CREATE, ROOTS_LIST, Relay, Relayed, SAMPLING_CREATE};

use crate::sampling_context;

/// One served call's way to its client.
#[derive(Debug)]
pub(crate) struct ClientRelay {
    peer: Peer<RoleServer>,
    /// The client's request of the call: what is asked rides its stream (none for a session's
    /// relay: what is asked outside any call rides the session's own stream).
    call: Option<RequestId>,
    /// Cancelled when the call ends.
    stop: CancellationToken,
    sampling: bool,
    elicitation: bool,
    /// Whether the client takes elicitations in URL mode.
    url_elicitation: bool,
    roots: bool,
}

impl ClientRelay {
    /// The relay of the call `call` of the client behind `peer`, stopped by `stop`.
    pub(crate) fn new(peer: Peer<RoleServer>, call: RequestId, stop: CancellationToken) -> Self {
        Self::on(peer, Some(call), stop)
    }

    /// The relay of the session of the client behind `peer`, outside any call, stopped by
    /// `stop` (the session's end).
    pub(crate) fn for_session(peer: Peer<RoleServer>, stop: CancellationToken) -> Self {
        Self::on(peer, None, stop)
    }

    fn on(peer: Peer<RoleServer>, call: Option<RequestId>, stop: CancellationToken) -> Self {
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
        let sampling = capabilities
            .as_ref()
            .is_some_and(|capabilities| capabilities.sampling.is_some());
        let elicitation = capabilities
            .as_ref()
            .is_some_and(|capabilities| capabilities.elicitation.is_some());
        let url_elicitation = capabilities
            .as_ref()
            .and_then(|capabilities| capabilities.elicitation.as_ref())
            .is_some_and(|elicitation| elicitation.url.is_some());
        let roots = capabilities
            .as_ref()
            .is_some_and(|capabilities| capabilities.roots.is_some());
        Self {
            url_elicitation,
            peer,
            call,
            stop,
            sampling,
            elicitation,
            roots,
        }
    }

    /// Sends `method` with `params` to the call's client and waits for its answer, or for the
    /// call to end.
    async fn asked(&self, method: &str, params: Option<Value>) -> Relayed {
        // A sampling request gets no context of other sources or sessions.
        let params = sampling_context::without_context(method, params);
        let mut request = CustomRequest::new(method, params);
        // On the stream of the call that asked, also from a task that is not the handler's.
        if let Some(call) = &self.call {
            request
                .extensions_mut()
                .insert(OriginatingRequestId(call.clone()));
        }
        let sent = tokio::select! {
            () = self.stop.cancelled() => return Relayed::Stopped,
            sent = self.peer.send_cancellable_request(
                ServerRequest::CustomRequest(request),
                PeerRequestOptions::no_options(),
            ) => sent,
        };
        let handle = match sent {
            Ok(handle) => handle,
            Err(error) => return refused(&error),
        };
        let id = handle.id.clone();
        tokio::select! {
            () = self.stop.cancelled() => {
                let cancelled = rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("the call ended".to_owned()),
                );
                let _ = self.peer.notify_cancelled(cancelled).await;
                Relayed::Stopped
            }
            answered = handle.await_response() => match answered {
                Ok(result) => match serde_json::to_value(result) {
                    Ok(result) => Relayed::Answer(result),
                    Err(_) => Relayed::Stopped,
                },
                Err(error) => refused(&error),
            },
        }
    }
}

impl Relay for ClientRelay {
    fn takes(&self, method: &str) -> bool {
        match method {
            SAMPLING_CREATE => self.sampling,
            ELICITATION_CREATE => self.elicitation,
            ROOTS_LIST => self.roots,
            _ => false,
        }
    }

    fn ask<'a>(&'a self, method: &'a str, params: Option<Value>) -> BoxFuture<'a, Relayed> {
        Box::pin(self.asked(method, params))
    }

    fn takes_url_elicitation(&self) -> bool {
        self.url_elicitation
    }

    fn notify<'a>(&'a self, method: &'a str, params: Option<Value>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if self.stop.is_cancelled() {
                return;
            }
            let notification = rmcp::model::CustomNotification::new(method, params);
            let _ = self
                .peer
                .send_notification(rmcp::model::ServerNotification::CustomNotification(
                    notification,
                ))
                .await;
        })
    }
}

/// A failure to ask the client, as what the upstream is answered: the client's own error as it
/// wrote it; a client gone, as the call's end.
fn refused(error: &rmcp::ServiceError) -> Relayed {
    match error {
        rmcp::ServiceError::McpError(error) => match serde_json::to_value(error) {
            Ok(error) => Relayed::Refused(error),
            Err(_) => Relayed::Stopped,
        },
        _ => Relayed::Stopped,
    }
}
