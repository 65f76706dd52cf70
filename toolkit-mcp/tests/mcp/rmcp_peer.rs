//! rmcp's server over Streamable HTTP on 127.0.0.1, stateless or with sessions.

use std::net::SocketAddr;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;

pub use super::peer_handler::Peer;

/// A running peer: its URL, and the task that serves it (aborted on drop).
pub struct Running {
    pub url: reqwest::Url,
    pub address: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `peer` at `/mcp` on 127.0.0.1; `sessions` keeps sessions for the session revisions,
/// `json` answers JSON rather than SSE where it can.
pub async fn serve(peer: Peer, sessions: bool, json: bool) -> Running {
    serve_at(
        peer,
        sessions,
        json,
        "127.0.0.1:0".parse().expect("address"),
    )
    .await
}

/// [`serve`] on `address`.
pub async fn serve_at(peer: Peer, sessions: bool, json: bool, address: SocketAddr) -> Running {
    serve_guarded(peer, sessions, json, address, Guard::Open).await
}

/// What stands before the peer, as a gateway would.
#[derive(Clone, Debug)]
pub enum Guard {
    /// Nothing: every request reaches the peer.
    Open,
    /// Only requests with `Authorization: Bearer <token>` reach the peer; others get 401.
    Token(String),
    /// Every request is answered with this status (401 refused, 503 down).
    Status(u16),
}

async fn guard(
    axum::extract::State(guard): axum::extract::State<Guard>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let status = match &guard {
        Guard::Open => None,
        Guard::Token(token) => {
            let expected = format!("Bearer {token}");
            let given = request
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok());
            (given != Some(expected.as_str())).then_some(401)
        }
        Guard::Status(status) => Some(*status),
    };
    match status {
        None => next.run(request).await,
        Some(status) => axum::response::Response::builder()
            .status(status)
            .body(axum::body::Body::from("refused by the gateway"))
            .expect("response"),
    }
}

/// [`serve_at`] behind `guard`.
pub async fn serve_guarded(
    peer: Peer,
    sessions: bool,
    json: bool,
    address: SocketAddr,
    gate: Guard,
) -> Running {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(sessions)
        .with_json_response(json)
        .with_sse_keep_alive(None);
    let service: StreamableHttpService<Peer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(peer.clone()), Default::default(), config);
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(gate, guard));
    // A port just given up may take a moment to be free again.
    let mut listener = tokio::net::TcpListener::bind(address).await;
    for _ in 0..100 {
        if listener.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        listener = tokio::net::TcpListener::bind(address).await;
    }
    let listener = listener.expect("bind");
    let address = listener.local_addr().expect("address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            router,
        )
        .await;
    });
    Running {
        url: format!("http://{address}/mcp").parse().expect("url"),
        address,
        task,
    }
}
