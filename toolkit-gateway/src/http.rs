//! The HTTP transport as a team runs it: MCP at `/mcp` behind a guard (authentication, refusal
//! while shutting down, calls in flight counted), `/healthz`, `/readyz`, `/metrics` (with a
//! token when `serve.metrics_token_env` names one), the protected resource metadata, the server
//! card (`server_card.rs`), and a graceful shutdown on SIGTERM or SIGINT.
//!
//! Every route answers only a `Host` the gateway is served as, but the probes: `/healthz` and
//! `/readyz` answer any `Host`, or none (HAProxy's plain `option httpchk` sends none, a
//! Kubernetes probe the pod's address), and to a `Host` not allowed say no more than up, or
//! ready or not.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, CONNECTION, CONTENT_TYPE, HOST, WWW_AUTHENTICATE};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::StreamExt as _;
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolkit_core::context::{Principal, SubjectToken};
use toolkit_serve::{AllowedHosts, McpServer, without_delay};

use crate::Readiness;
use crate::auth::CurrentAuth;
use crate::metrics::Metrics;
use crate::server_card::{self, ServerCard};

/// The path MCP is served at.
pub(crate) const MCP_PATH: &str = "/mcp";

/// How long connections may take to close once calls in flight are done or the grace period is
/// over (an idle SSE stream of a session client, say) before the process ends anyway.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// What the HTTP transport needs besides the MCP server.
pub(crate) struct Parts {
    pub(crate) auth: Option<CurrentAuth>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) readiness: Readiness,
    pub(crate) grace: Duration,
    /// The `Host` values every route takes (as `HttpOptions::allowed_hosts`: a name or address,
    /// with a port or without).
    pub(crate) allowed_hosts: Vec<String>,
    /// People's connections of their own accounts (`/connect/…`, `/oauth/callback`), when a
    /// source has `oauth.per_person`.
    pub(crate) connects: Option<Arc<crate::oauth_connect::Connects>>,
    /// The token `/metrics` asks for (`serve.metrics_token_env`), if any.
    pub(crate) metrics_token: Option<String>,
    /// The server card (`server_card.rs`).
    pub(crate) card: ServerCard,
    /// The webhooks the gateway receives itself (`webhook_inbox.rs`).
    pub(crate) inbox: Arc<crate::webhook_inbox::Inbox>,
    /// The webhook subscriptions it holds at its MCP sources (`event_webhooks.rs`).
    pub(crate) event_webhooks: Arc<crate::event_webhooks::EventWebhooks>,
}

/// The probes, answered whatever the `Host` (see the module's documentation).
const PROBES: [&str; 2] = ["/healthz", "/readyz"];

/// Whether a probe's request came with a `Host` the gateway is served as: only then does
/// `/readyz` say why it is ready or not.
#[derive(Clone, Copy, Debug)]
struct AllowedHost(bool);

/// The guard's state.
struct Admission {
    auth: Option<CurrentAuth>,
    metrics: Arc<Metrics>,
    stopping: CancellationToken,
    /// MCP POST requests whose answer has not been sent in full.
    in_flight: AtomicUsize,
}

/// Counts a request in flight until its answer's body is sent or dropped.
struct Counted(Arc<Admission>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serves `server` on `listener` until `stop` completes; then takes no new request (a request on
/// a kept-alive connection is answered 503), lets the requests in flight finish for up to
/// `parts.grace`, ends the sessions and returns.
pub(crate) async fn serve(
    server: McpServer,
    listener: TcpListener,
    parts: Parts,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let sessions = CancellationToken::new();
    let stopping = CancellationToken::new();
    let guard = Arc::new(Admission {
        auth: parts.auth.clone(),
        metrics: Arc::clone(&parts.metrics),
        stopping: stopping.clone(),
        in_flight: AtomicUsize::new(0),
    });
    let mcp = server
        .router(MCP_PATH, sessions.clone())
        .layer(from_fn_with_state(Arc::clone(&guard), guarded));
    let metrics = Arc::clone(&parts.metrics);
    let readiness = parts.readiness.clone();
    // Kept as its SHA-256: compared in constant time, whatever the lengths.
    let metrics_token = parts
        .metrics_token
        .as_deref()
        .map(|token| <[u8; 32]>::from(Sha256::digest(token.as_bytes())));
    let mut app = axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move |request: Request| {
                let state = readiness.get();
                let detailed = request
                    .extensions()
                    .get::<AllowedHost>()
                    .is_some_and(|allowed| allowed.0);
                async move {
                    let status = if state.ready() {
                        StatusCode::OK
                    } else {
                        StatusCode::SERVICE_UNAVAILABLE
                    };
                    // To a `Host` not allowed (a balancer's check, a probe by address, a page
                    // that rebinds its name to the gateway): ready or not, nothing of the tools,
                    // the sources or the audit.
                    let body = if detailed {
                        json!({
                            "ready": state.ready(),
                            "catalog_loaded": state.loaded,
                            "tools": state.tools,
                            "unreachable_sources": state.unreachable,
                            "audit": state.audit,
                        })
                    } else {
                        json!({"ready": state.ready()})
                    };
                    (status, axum::Json(body))
                }
            }),
        )
        .route(
            "/metrics",
            get(move |headers: HeaderMap| {
                let text = metrics_token
                    .as_ref()
                    .is_none_or(|expected| presents(&headers, expected))
                    .then(|| metrics.render());
                async move {
                    let Some(text) = text else {
                        tracing::info!("/metrics refused: no valid token");
                        return (
                            StatusCode::UNAUTHORIZED,
                            [(WWW_AUTHENTICATE, "Bearer realm=\"metrics\"")],
                            "Unauthorized: /metrics needs its bearer token\n",
                        )
                            .into_response();
                    };
                    (
                        [(
                            CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        text,
                    )
                        .into_response()
                }
            }),
        );
    let card = Arc::new(
        parts.card.resource_metadata(
            parts
                .auth
                .as_ref()
                .and_then(|auth| auth.get().metadata().map(|metadata| metadata.url.clone())),
        ),
    );
    for path in [
        server_card::WELL_KNOWN_PATH.to_owned(),
        format!("{MCP_PATH}{}", server_card::ENDPOINT_SUFFIX),
    ] {
        let card = Arc::clone(&card);
        app = app.route(
            &path,
            get(move |request: Request| {
                let answer = card.answer(request_host(&request), request.headers());
                async move { answer }
            })
            .options(|| async { server_card::preflight() }),
        );
    }
    // Where the metadata is served follows from `resource`, which a reload keeps; what it says
    // is the current authenticator's.
    let paths = parts
        .auth
        .as_ref()
        .and_then(|auth| auth.get().metadata().map(|metadata| metadata.paths.clone()));
    if let (Some(auth), Some(paths)) = (&parts.auth, paths) {
        for path in &paths {
            let auth = auth.clone();
            app = app.route(
                path,
                get(move || async move {
                    let document = auth
                        .get()
                        .metadata()
                        .map(|metadata| metadata.document.clone());
                    axum::Json(document.unwrap_or_default())
                }),
            );
        }
    }
    // A webhook's sender is known by its delivery's signature, not by a token or a Host.
    if !parts.inbox.is_empty() {
        let inbox = Arc::clone(&parts.inbox);
        app = app.route(
            "/webhooks/{source}/{name}",
            axum::routing::post(
                move |axum::extract::Path((source, name)): axum::extract::Path<(
                    String,
                    String,
                )>,
                      headers: axum::http::HeaderMap,
                      body: axum::body::Bytes| {
                    let (status, words) = inbox.receive(&source, &name, &headers, &body);
                    async move {
                        let status = axum::http::StatusCode::from_u16(status)
                            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
                        (status, words).into_response()
                    }
                },
            )
            .layer(axum::extract::DefaultBodyLimit::max(
                crate::webhook_inbox::MAX_BODY_BYTES,
            )),
        );
    }
    // A source's deliveries to a webhook subscription, known by the subscription's token and
    // their signature.
    let event_webhooks = Arc::clone(&parts.event_webhooks);
    app = app.route(
        &format!("{}{{token}}", crate::event_webhooks::PATH),
        axum::routing::post(
            move |axum::extract::Path(token): axum::extract::Path<String>,
                  headers: axum::http::HeaderMap,
                  body: axum::body::Bytes| {
                let (status, body) = event_webhooks.receive(&token, &headers, &body);
                async move {
                    let status = axum::http::StatusCode::from_u16(status)
                        .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
                    if body.is_empty() {
                        status.into_response()
                    } else {
                        (
                            status,
                            [(axum::http::header::CONTENT_TYPE, "application/json")],
                            body,
                        )
                            .into_response()
                    }
                }
            },
        )
        .layer(axum::extract::DefaultBodyLimit::max(
            crate::event_webhooks::MAX_BODY_BYTES + 1,
        )),
    );
    if let Some(connects) = &parts.connects {
        let (page, back) = (Arc::clone(connects), Arc::clone(connects));
        app = app
            .route(
                &format!("{}{{nonce}}", crate::oauth_connect::CONNECT_PATH),
                get(
                    move |axum::extract::Path(nonce): axum::extract::Path<String>| {
                        let page = Arc::clone(&page);
                        async move { page.connect_page(&nonce).await }
                    },
                ),
            )
            .route(
                crate::oauth_connect::CALLBACK_PATH,
                get(move |uri: axum::http::Uri| {
                    let back = Arc::clone(&back);
                    async move { back.callback_page(uri.query()).await }
                }),
            );
    }
    // Every route, not only MCP's, answers only the hosts it is served as (the probes aside,
    // which then say no more than up or ready): a page of another name resolving to this address
    // (DNS rebinding) reads no tool name from `/readyz` or `/metrics`.
    let allowed = Arc::new(AllowedHosts::new(&parts.allowed_hosts));
    let app = app
        .merge(mcp)
        .layer(from_fn_with_state(allowed, host_checked));

    tokio::spawn({
        let stopping = stopping.clone();
        async move {
            stop.await;
            stopping.cancel();
        }
    });
    // Once stopping: calls in flight get the grace period, then the sessions end.
    tokio::spawn({
        let stopping = stopping.clone();
        let sessions = sessions.clone();
        let guard = Arc::clone(&guard);
        let grace = parts.grace;
        async move {
            stopping.cancelled().await;
            let waiting = guard.in_flight.load(Ordering::SeqCst);
            tracing::info!(
                in_flight = waiting,
                "shutting down: no new requests are taken"
            );
            let deadline = tokio::time::Instant::now() + grace;
            while guard.in_flight.load(Ordering::SeqCst) > 0
                && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let left = guard.in_flight.load(Ordering::SeqCst);
            if left > 0 {
                tracing::warn!(
                    in_flight = left,
                    "the grace period is over: requests still running are ended"
                );
            }
            sessions.cancel();
        }
    });
    // Its routes made once (`into_make_service`): `axum::serve` given the router itself makes
    // them again for every connection (`Router::with_state` in its `Service<IncomingStream>`, a
    // new route map each time), which a client opening a connection per call pays on every call.
    let app = app.into_make_service();
    let served = axum::serve(without_delay(listener), app)
        .with_graceful_shutdown({
            let stopping = stopping.clone();
            async move { stopping.cancelled().await }
        })
        .into_future();
    tokio::pin!(served);
    tokio::select! {
        result = &mut served => result.map_err(|error| format!("the HTTP server failed: {error}")),
        () = async {
            sessions.cancelled().await;
            tokio::time::sleep(CLOSE_TIMEOUT).await;
        } => {
            tracing::warn!("connections still open at shutdown are dropped");
            Ok(())
        }
    }
}

/// The `Host` a request names (its header, else its URI's authority).
fn request_host(request: &Request) -> Option<&str> {
    request
        .headers()
        .get(HOST)
        .and_then(|value| value.to_str().ok())
        .or_else(|| request.uri().authority().map(Authority::as_str))
}

/// Whether `headers` carry `Authorization: Bearer` and a token whose SHA-256 is `expected`
/// (one such header, compared in constant time).
fn presents(headers: &HeaderMap, expected: &[u8; 32]) -> bool {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return false;
    };
    let Some((scheme, token)) = value.to_str().ok().and_then(|value| value.split_once(' ')) else {
        return false;
    };
    let presented: [u8; 32] = Sha256::digest(token.trim().as_bytes()).into();
    scheme.eq_ignore_ascii_case("bearer") && bool::from(presented.ct_eq(expected))
}

/// Refuses (403) a request whose `Host` is not one of `allowed` (400 without one); a probe
/// ([`PROBES`]) is answered whatever its `Host`, told whether it is allowed ([`AllowedHost`]).
async fn host_checked(
    State(allowed): State<Arc<AllowedHosts>>,
    mut request: Request,
    next: Next,
) -> Response {
    let host = request_host(&request).and_then(|host| Authority::try_from(host).ok());
    let is_allowed = host.as_ref().is_some_and(|host| allowed.allows(host));
    if PROBES.contains(&request.uri().path()) {
        request.extensions_mut().insert(AllowedHost(is_allowed));
        return next.run(request).await;
    }
    match host {
        None => (StatusCode::BAD_REQUEST, "Bad Request: no valid Host header").into_response(),
        Some(host) if !is_allowed => {
            tracing::info!(host = %host, "request refused: Host not allowed (DNS rebinding?)");
            (
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            )
                .into_response()
        }
        Some(_) => next.run(request).await,
    }
}

/// The guard before MCP: refuses while stopping, checks the bearer token and removes it (no
/// source ever sees it), and counts each POST in flight until its answer is sent.
async fn guarded(
    State(guard): State<Arc<Admission>>,
    mut request: Request,
    next: Next,
) -> Response {
    if guard.stopping.is_cancelled() {
        guard.metrics.record_refused("shutting_down");
        let mut response = (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({"error": "shutting down"})),
        )
            .into_response();
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    // Who is behind the request travels with it: the session it opens is bound to them, and each
    // call they make carries them (`CallContext::principal`). Without authentication the gateway
    // listens for one person (on loopback, or behind a proxy that vouches for them).
    let auth = guard.auth.as_ref().map(CurrentAuth::get);
    let principal = match &auth {
        None => Principal::loopback(),
        Some(auth) => match auth.check(request.headers()).await {
            Ok(who) => {
                tracing::debug!(client = %who, "authenticated");
                // A JWT, checked: what a source acting on the person's behalf exchanges.
                if auth.is_jwt()
                    && let Some(token) = request
                        .headers()
                        .get(AUTHORIZATION)
                        .and_then(|value| value.to_str().ok())
                        .and_then(|value| value.get(7..))
                {
                    let token = SubjectToken::new(token.trim());
                    request.extensions_mut().insert(token);
                }
                who
            }
            Err(refusal) => {
                tracing::info!(error = refusal.error, why = refusal.why, "request refused");
                guard.metrics.record_refused(refusal.error);
                let mut response =
                    (refusal.status, axum::Json(json!({"error": refusal.error}))).into_response();
                if let Ok(value) = HeaderValue::from_str(&refusal.challenge) {
                    response.headers_mut().insert(WWW_AUTHENTICATE, value);
                }
                return response;
            }
        },
    };
    request.extensions_mut().insert(principal);
    request.headers_mut().remove(AUTHORIZATION);
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    guard.in_flight.fetch_add(1, Ordering::SeqCst);
    let counted = Counted(Arc::clone(&guard));
    let response = next.run(request).await;
    let (head, body) = response.into_parts();
    // A whole answer (JSON) keeps its size; a stream is passed on as the stream of its data.
    if http_body::Body::size_hint(&body).exact().is_some() {
        return Response::from_parts(
            head,
            Body::new(CountedBody {
                body,
                _counted: counted,
            }),
        );
    }
    let stream = body.into_data_stream().map(move |chunk| {
        let _ = &counted;
        chunk
    });
    Response::from_parts(head, Body::from_stream(stream))
}

/// A whole response body, its request counted in flight until the body is sent in full or
/// dropped; its size told on (a JSON answer keeps its `content-length`).
struct CountedBody {
    body: Body,
    _counted: Counted,
}

impl http_body::Body for CountedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn metrics_read_only_the_one_bearer_token_given() {
        let expected: [u8; 32] = Sha256::digest(b"s3cret").into();
        let with = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            }
            presents(&headers, &expected)
        };
        assert!(with(&["Bearer s3cret"]));
        assert!(with(&["bearer  s3cret"]));
        for refused in [
            &[][..],
            &["Bearer s3cre"],
            &["Bearer s3cretx"],
            &["Basic s3cret"],
            &["s3cret"],
            &["Bearer s3cret", "Bearer s3cret"],
        ] {
            assert!(!with(refused), "{refused:?}");
        }
    }
}
