//! A session's `tools/call` answered past rmcp's session worker: [`DirectSessions`].
//!
//! Through rmcp's Streamable HTTP service (3.11) a session's request is parsed into rmcp's types,
//! handed over four channels (the HTTP service, the session worker, the service loop, the
//! handler's task), answered as an SSE stream and read back by the answers layer to write the
//! upstream's result in (`http/written_http.rs`). That path is the gateway's latency: its own
//! work is a few microseconds of a call's hundreds (`docs/performance.md`).
//!
//! Here a `tools/call` of a session that can need nothing of that path is read once, called with
//! the session's own [`ToolCalls`] (the same code rmcp's handler calls), and answered as one
//! `application/json` body, the upstream's result as its server wrote it. A session qualifies
//! when its client, at `notifications/initialized`, speaks a session revision and declared none
//! of what a call may send it on the call's own stream: `sampling`, `elicitation`, `roots`
//! (what an upstream asks mid-call rides that stream) nor tasks. A call qualifies when it gives
//! no progress token (progress rides the call's stream too), is not a task, names no protocol
//! version of its own, and its request carries no header rmcp checks against the body
//! (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) nor a protocol version other than the session's;
//! its `Host` is one the server allows (against DNS rebinding, as rmcp checks it), and it has no
//! `Origin`. Every other request, and any body this module cannot read, goes on to rmcp
//! unchanged, to be answered or refused there.
//!
//! What rmcp's path does besides is done here too: a session rmcp no longer holds (deleted,
//! expired) is left to rmcp, which answers 404; the call stops when its client cancels it
//! (`notifications/cancelled` naming it, read here before rmcp reads it) or drops its request, or
//! when the session ends, and is then answered with an empty event stream, as rmcp drops the
//! answer of a cancelled request; logs go to the session's standalone stream as rmcp sends them;
//! the result is shaped for the client's revision as rmcp shapes it; and rmcp's session worker,
//! which closes a session it hears nothing of for a while (five minutes by default), is told of
//! the session's use when a call starts and when it ends, at most five times in that while.
//!
//! Written by hand: rmcp has no way to answer a session's request without its worker, and
//! nothing else serves MCP sessions over axum.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse as _, Response};
use rmcp::model::{
    CallToolRequestParams, CustomResult, Extensions, ProtocolVersion, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{Peer, RoleServer};
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio_util::sync::CancellationToken;
use toolkit_core::JsonObject;

use crate::allowed_host::AllowedHosts;
use crate::http::session_end::forget_at_end;
use crate::tool_calls::{Answered, ToolCalls, written_for};

/// The sessions whose calls are answered here, by session id.
pub(crate) struct DirectSessions {
    sessions: Arc<Mutex<HashMap<String, Arc<DirectSession>>>>,
    /// Where a session's worker is told of its use.
    manager: Arc<LocalSessionManager>,
    /// How often, at most, a session's worker is told of its use, in milliseconds: a fifth of
    /// the time after which it closes a session it hears nothing of (never, without one).
    touch_every: u64,
    /// The `Host` values served here (every one when empty), as rmcp is configured.
    allowed_hosts: AllowedHosts,
    /// The instant `DirectSession::touched` counts from.
    epoch: Instant,
}

/// One session served here.
struct DirectSession {
    id: String,
    calls: ToolCalls,
    /// The session's client, for the logs a call tells it (and its revision).
    peer: Peer<RoleServer>,
    /// The revision the session speaks.
    version: String,
    /// Cancelled when the session ends.
    ended: CancellationToken,
    /// The calls running here, by their JSON-RPC id: each one's number (a client may reuse an
    /// id) and what stops it.
    running: Mutex<HashMap<RequestId, (u64, CancellationToken)>>,
    /// The number of the next call.
    calls_made: AtomicU64,
    /// When the session's worker was last told of its use (since `epoch`), in milliseconds.
    touched: AtomicU64,
}

impl std::fmt::Debug for DirectSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectSessions")
            .field("sessions", &self.sessions().len())
            .finish_non_exhaustive()
    }
}

impl DirectSessions {
    /// No session yet; sessions' workers are in `manager`; requests taken from the hosts
    /// `allowed_hosts` names (any, when empty).
    pub(crate) fn new(manager: Arc<LocalSessionManager>, allowed_hosts: AllowedHosts) -> Arc<Self> {
        let touch_every = manager.session_config.keep_alive.map_or(u64::MAX, |idle| {
            u64::try_from(idle.as_millis() / 5).unwrap_or(u64::MAX)
        });
        Arc::new(Self {
            sessions: Arc::default(),
            manager,
            touch_every,
            allowed_hosts,
            epoch: Instant::now(),
        })
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<DirectSession>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers the calls of `session` here from now until `ended`, when its client (behind
    /// `peer`, initialized) can be sent nothing on a call's stream; else leaves it to rmcp.
    pub(crate) fn join(
        &self,
        session: &str,
        calls: ToolCalls,
        peer: Peer<RoleServer>,
        ended: CancellationToken,
    ) {
        let Some(info) = peer.peer_info() else {
            return;
        };
        let capabilities = &info.capabilities;
        let version = info.protocol_version.as_str().to_owned();
        let askable = capabilities.sampling.is_some()
            || capabilities.elicitation.is_some()
            || capabilities.roots.is_some()
            || capabilities.supports_tasks();
        if askable || version.as_str() >= ProtocolVersion::V_2026_07_28.as_str() {
            return;
        }
        let joined = Arc::new(DirectSession {
            id: session.to_owned(),
            calls,
            peer,
            version,
            ended: ended.clone(),
            running: Mutex::default(),
            calls_made: AtomicU64::new(0),
            touched: AtomicU64::new(self.now()),
        });
        self.sessions().insert(session.to_owned(), joined);
        forget_at_end(&self.sessions, session.to_owned(), ended);
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Answers `request`, a POST naming `session`, when it is a call served here; else gives it
    /// back for rmcp (its body read into memory, up to `max_body` bytes, when it was read).
    pub(crate) async fn serve(
        &self,
        session: &str,
        request: Request,
        max_body: usize,
    ) -> Result<Response, Request> {
        let Some(direct) = self.sessions().get(session).cloned() else {
            return Err(request);
        };
        if direct.ended.is_cancelled()
            || direct.peer.is_transport_closed()
            || !plain(request.headers(), &direct.version)
            || !host_served_here(request.headers(), &self.allowed_hosts)
            || !self.manager.sessions.read().await.contains_key(session)
        {
            return Err(request);
        }
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, max_body).await {
            Ok(bytes) => bytes,
            Err(error) => {
                tracing::debug!(%error, "a request body could not be read");
                // As rmcp answers: over the cap 413, a body that broke off 500.
                let over = std::error::Error::source(&error)
                    .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
                return Ok(if over {
                    (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response()
                } else {
                    (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "The request's body could not be read",
                    )
                        .into_response()
                });
            }
        };
        let Some((id, params)) = call_in(&bytes) else {
            if memchr::memmem::find(&bytes, b"notifications/cancelled").is_some() {
                direct.cancel(&bytes);
            }
            return Err(Request::from_parts(parts, Body::from(bytes)));
        };
        self.touch(&direct);
        let mut extensions = Extensions::new();
        extensions.insert(parts);
        let running = direct.run(id.clone());
        let mut context = RequestContext::new(id.clone(), direct.peer.clone());
        context.ct = running.token.clone();
        context.meta = params.meta.clone().unwrap_or_default();
        context.extensions = extensions;
        let answered = direct.calls.call(params, &context).await;
        let cancelled = running.token.is_cancelled();
        drop(running);
        self.touch(&direct);
        if cancelled {
            return Ok(dropped_answer());
        }
        Ok(answer(id, answered))
    }

    /// Tells the session's worker that `direct` is in use, when it was last told a while ago.
    fn touch(&self, direct: &Arc<DirectSession>) {
        let now = self.now();
        let last = direct.touched.load(Ordering::Relaxed);
        if now.saturating_sub(last) < self.touch_every
            || direct
                .touched
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let (manager, id) = (Arc::clone(&self.manager), direct.id.clone());
        tokio::spawn(async move {
            let handle = manager.sessions.read().await.get(id.as_str()).cloned();
            if let Some(handle) = handle {
                // Closing a stream that was never opened: an event the worker counts as use,
                // and nothing else.
                if let Err(error) = handle.close_request_wise_channel(u64::MAX).await {
                    tracing::debug!(%error, "a session's worker could not be told of its use");
                }
            }
        });
    }
}

impl DirectSession {
    /// Marks the call `id` running until the mark is dropped.
    fn run(self: &Arc<Self>, id: RequestId) -> Running {
        let token = self.ended.child_token();
        let number = self.calls_made.fetch_add(1, Ordering::Relaxed);
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), (number, token.clone()));
        Running {
            session: Arc::clone(self),
            id,
            number,
            token,
        }
    }

    /// Stops the call a `notifications/cancelled` in `body` names, if it runs here.
    fn cancel(&self, body: &[u8]) {
        #[derive(Deserialize)]
        struct Cancelled {
            method: String,
            params: CancelledParams,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct CancelledParams {
            request_id: RequestId,
        }
        let Ok(cancelled) = serde_json::from_slice::<Cancelled>(body) else {
            return;
        };
        if cancelled.method != "notifications/cancelled" {
            return;
        }
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, token)) = running.get(&cancelled.params.request_id) {
            token.cancel();
        }
    }
}

/// A call running here, forgotten when dropped (answered, or its request dropped).
struct Running {
    session: Arc<DirectSession>,
    id: RequestId,
    /// Which call of that id: a later one with the same id keeps its entry.
    number: u64,
    token: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self
            .session
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if running
            .get(&self.id)
            .is_some_and(|(number, _)| *number == self.number)
        {
            running.remove(&self.id);
        }
    }
}

/// Whether a request's headers leave rmcp nothing to check of it but what is checked here: it
/// takes JSON and SSE, sends JSON, names the session's revision or none, and carries no header
/// rmcp checks against the body.
fn plain(headers: &HeaderMap, version: &str) -> bool {
    // A quoted parameter (where a comma or semicolon may hide) is left to rmcp to read.
    let accepts = |kind: &str| {
        headers.get_all(ACCEPT).iter().any(|value| {
            value.to_str().is_ok_and(|value| {
                !value.contains('"')
                    && value.split(',').any(|media| {
                        let mut parts = media.split(';');
                        let essence = parts.next().unwrap_or_default().trim();
                        essence.eq_ignore_ascii_case(kind) && parts.all(weighs_more_than_zero)
                    })
            })
        })
    };
    let sends_json = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default().trim();
            essence.eq_ignore_ascii_case("application/json")
        });
    let checked_against_body = headers.keys().any(|name| {
        let name = name.as_str();
        name.starts_with("mcp-") && name != "mcp-session-id" && name != "mcp-protocol-version"
    });
    let other_version = headers
        .get("mcp-protocol-version")
        .is_some_and(|named| named.as_bytes() != version.as_bytes());
    // What the SDKs' clients send, read at once; any other `Accept` is read range by range.
    let mut accept = headers.get_all(ACCEPT).iter();
    let takes_both = match (accept.next(), accept.next()) {
        (Some(only), None) if only.as_bytes() == b"application/json, text/event-stream" => true,
        _ => accepts("application/json") && accepts("text/event-stream"),
    };
    takes_both && sends_json && !checked_against_body && !other_version
}

/// Whether a media range's parameter leaves it acceptable: anything but a weight of zero (`q=0`,
/// `q=0.000`), as rmcp reads it (a weight that does not parse is ignored).
fn weighs_more_than_zero(parameter: &str) -> bool {
    let Some((name, weight)) = parameter.split_once('=') else {
        return true;
    };
    if !name.trim().eq_ignore_ascii_case("q") {
        return true;
    }
    let weight = weight.trim();
    let (whole, fraction) = weight.split_once('.').unwrap_or((weight, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|digit| digit.is_ascii_digit()) {
        return true;
    }
    whole != "0" || fraction.bytes().any(|digit| digit != b'0')
}

/// Whether a request's `Host` is one of `allowed` (any, when it is empty, as rmcp takes it) and
/// it names no `Origin`; a request whose `Host` is missing or does not parse is left to rmcp to
/// refuse.
fn host_served_here(headers: &HeaderMap, allowed: &AllowedHosts) -> bool {
    if headers.contains_key(ORIGIN) {
        return false;
    }
    let Some(host) = headers
        .get(HOST)
        .and_then(|host| host.to_str().ok())
        .and_then(|host| Authority::try_from(host).ok())
    else {
        return false;
    };
    allowed.is_empty() || allowed.allows(&host)
}

/// A JSON-RPC request as read here: a `tools/call`'s, whose params are read only when it is one.
#[derive(Deserialize)]
struct Incoming<'a> {
    jsonrpc: &'a str,
    id: RequestId,
    method: &'a str,
    #[serde(borrow)]
    params: Option<&'a serde_json::value::RawValue>,
}

/// A `tools/call`'s params, with what sends a call to rmcp's path.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallParams {
    name: String,
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta")]
    meta: Option<JsonObject>,
    task: Option<IgnoredAny>,
    input_responses: Option<IgnoredAny>,
    request_state: Option<IgnoredAny>,
}

/// The id and params of the `tools/call` `body` holds, when it is one served here: no task, no
/// progress token, no revision of its own in `_meta`.
fn call_in(body: &Bytes) -> Option<(RequestId, CallToolRequestParams)> {
    memchr::memmem::find(body, b"tools/call")?;
    let incoming: Incoming<'_> = serde_json::from_slice(body).ok()?;
    if incoming.jsonrpc != "2.0" || incoming.method != "tools/call" {
        return None;
    }
    let params: CallParams = serde_json::from_str(incoming.params?.get()).ok()?;
    if params.task.is_some() || params.input_responses.is_some() || params.request_state.is_some() {
        return None;
    }
    if let Some(meta) = &params.meta
        && meta
            .keys()
            .any(|key| key == "progressToken" || key.starts_with("io.modelcontextprotocol/"))
    {
        return None;
    }
    let mut call = CallToolRequestParams::new(params.name);
    call.arguments = params.arguments;
    call.meta = params.meta.map(RequestMetaObject::from);
    Some((incoming.id, call))
}

/// The HTTP answer of a call that was cancelled (by its client, or as its session ended): an
/// event stream that ends with no message, as rmcp's stream of a cancelled request ends.
fn dropped_answer() -> Response {
    let mut response = Response::new(Body::empty());
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    response
}

/// The HTTP answer of the call `id`: its JSON-RPC response, shaped for a session revision as
/// rmcp shapes it (no `resultType: "complete"`, structured content an object).
fn answer(id: RequestId, answered: Result<Answered, rmcp::ErrorData>) -> Response {
    let typed = |result| {
        let mut result = ServerResult::CallToolResult(result);
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
        result
    };
    let message = match answered {
        Ok(Answered::Typed(result)) => ServerJsonRpcMessage::response(typed(result), id),
        Ok(Answered::Written { typed: read, json }) => {
            let result = match written_for(json, false) {
                Some(json) => ServerResult::CustomResult(CustomResult(json.into())),
                None => typed(read),
            };
            ServerJsonRpcMessage::response(result, id)
        }
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => {
            let mut response = Response::new(Body::from(body));
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        Err(error) => {
            tracing::error!(%error, "a call's answer could not be written");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    const BOTH: (&str, &str) = ("accept", "application/json, text/event-stream");
    const JSON: (&str, &str) = ("content-type", "application/json");

    #[test]
    fn only_a_plain_request_is_answered_here() {
        assert!(plain(&headers(&[BOTH, JSON]), "2025-06-18"));
        let split = [
            ("accept", "application/json"),
            ("accept", "text/event-stream;q=0.9"),
            JSON,
        ];
        assert!(plain(&headers(&split), "2025-06-18"));
        assert!(!plain(
            &headers(&[("accept", "application/json"), JSON]),
            "2025-06-18"
        ));
        assert!(!plain(
            &headers(&[BOTH, ("content-type", "text/plain")]),
            "2025-06-18"
        ));
        let named = [BOTH, JSON, ("mcp-protocol-version", "2025-06-18")];
        assert!(plain(&headers(&named), "2025-06-18"));
        assert!(!plain(&headers(&named), "2025-03-26"));
        assert!(!plain(
            &headers(&[BOTH, JSON, ("mcp-method", "tools/call")]),
            "2025-06-18"
        ));
        let refused = [("accept", "application/json;q=0, text/event-stream"), JSON];
        assert!(!plain(&headers(&refused), "2025-06-18"));
        let weighed = [
            ("accept", "application/json;q=0.5, text/event-stream;q=x"),
            JSON,
        ];
        assert!(plain(&headers(&weighed), "2025-06-18"));
        let quoted = [
            ("accept", r#"application/json;p="a,b", text/event-stream"#),
            JSON,
        ];
        assert!(!plain(&headers(&quoted), "2025-06-18"));
    }

    #[test]
    fn only_an_allowed_host_without_an_origin_is_served_here() {
        let allowed = AllowedHosts::new(&[
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "[::1]:8080".to_owned(),
        ]);
        for (host, served) in [
            ("127.0.0.1:3000", true),
            ("LOCALHOST", true),
            ("[::1]:8080", true),
            ("[::1]:8081", false),
            ("evil.example", false),
            ("127.0.0.1.evil.example:80", false),
            ("not a host", false),
        ] {
            let mut request = HeaderMap::new();
            request.insert(HOST, HeaderValue::from_str(host).unwrap());
            assert_eq!(host_served_here(&request, &allowed), served, "{host}");
            assert!(host_served_here(&request, &AllowedHosts::default()) || host == "not a host");
            request.insert(ORIGIN, HeaderValue::from_static("http://localhost"));
            assert!(
                !host_served_here(&request, &allowed),
                "{host} with an origin"
            );
        }
        assert!(!host_served_here(&HeaderMap::new(), &allowed));
    }

    fn read(body: &str) -> Option<(RequestId, CallToolRequestParams)> {
        call_in(&Bytes::copy_from_slice(body.as_bytes()))
    }

    #[test]
    fn a_call_with_progress_a_task_or_a_revision_of_its_own_goes_to_rmcp() {
        let (id, call) = read(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":{"trace":1}}}"#,
        )
        .unwrap();
        assert_eq!(id, RequestId::Number(7));
        assert_eq!(call.name, "echo");
        assert_eq!(call.arguments.unwrap()["a"], 1);
        for params in [
            r#"{"name":"echo","_meta":{"progressToken":1}}"#,
            r#"{"name":"echo","task":{"ttl":1000}}"#,
            r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            r#"{"name":"echo","requestState":"x"}"#,
            r#"{"arguments":{}}"#,
        ] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
            assert!(read(&body).is_none(), "{params}");
        }
        assert!(read(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_none());
        assert!(
            read(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}]"#)
                .is_none()
        );
        assert!(read(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#).is_none());
        assert!(read("tools/call").is_none());
    }
}
