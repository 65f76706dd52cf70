//! A scripted misbehaving server (axum on 127.0.0.1) for what no real server sends on purpose.
//! Each test gives the script: a function from a recorded request to a response.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub http_method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
    /// When the request came.
    pub at: std::time::Instant,
}

impl Recorded {
    /// The JSON-RPC method of the body.
    pub fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }

    pub fn id(&self) -> Value {
        self.body["id"].clone()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

type Script = Arc<dyn Fn(Recorded) -> Pin<Box<dyn Future<Output = Response> + Send>> + Send + Sync>;

#[derive(Clone)]
struct Shared {
    script: Script,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

/// A running scripted server.
pub struct Scripted {
    pub url: reqwest::Url,
    seen: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Scripted {
    /// Every request seen so far.
    pub fn seen(&self) -> Vec<Recorded> {
        self.seen.lock().expect("lock").clone()
    }

    /// The requests seen of JSON-RPC method `method`.
    pub fn seen_method(&self, method: &str) -> Vec<Recorded> {
        self.seen()
            .into_iter()
            .filter(|r| r.method() == method)
            .collect()
    }

    /// Waits (up to 5 s) until `check` holds of the requests seen.
    pub async fn wait_until(&self, check: impl Fn(&[Recorded]) -> bool) -> bool {
        for _ in 0..250 {
            if check(&self.seen()) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

async fn handle(
    State(shared): State<Shared>,
    uri: axum::http::Uri,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let recorded = Recorded {
        http_method: method,
        path: uri.path().to_owned(),
        headers,
        body,
        at: std::time::Instant::now(),
    };
    shared.seen.lock().expect("lock").push(recorded.clone());
    (shared.script)(recorded).await
}

/// Serves `script` at `/mcp` on 127.0.0.1.
pub async fn serve<F, Fut>(script: F) -> Scripted
where
    F: Fn(Recorded) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    let script: Script = Arc::new(move |recorded| Box::pin(script(recorded)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let shared = Shared {
        script,
        seen: seen.clone(),
    };
    let router = axum::Router::new()
        .route("/mcp", axum::routing::any(handle))
        .route("/mcp/{*rest}", axum::routing::any(handle))
        .with_state(shared);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
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
    Scripted {
        url: format!("http://{address}/mcp").parse().expect("url"),
        seen,
        task,
    }
}

/// A JSON response with status 200.
pub fn json_body(value: Value) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Body::from(value.to_string()))
        .expect("response")
}

/// An event-stream response with this raw body.
pub fn sse_body(raw: impl Into<String>) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from(raw.into()))
        .expect("response")
}

/// A response of `status` with `content_type` and `body`.
pub fn status(status: u16, content_type: &str, body: impl Into<String>) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).expect("status"))
        .header("content-type", content_type)
        .body(Body::from(body.into()))
        .expect("response")
}

/// A body of `chunks` followed by a stall forever.
pub fn then_stall(content_type: &str, chunks: Vec<String>) -> Response {
    let stream = futures_util::stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
    )
    .chain(futures_util::stream::pending());
    Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(Body::from_stream(stream))
        .expect("response")
}

/// A body of `chunks` whose connection then breaks.
pub fn then_break(content_type: &str, chunks: Vec<String>) -> Response {
    let stream = futures_util::stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
    )
    .chain(futures_util::stream::once(async {
        Err(std::io::Error::other("dropped on purpose"))
    }));
    Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(Body::from_stream(stream))
        .expect("response")
}

/// A JSON-RPC result for `request`.
pub fn result(request: &Recorded, result: Value) -> Response {
    json_body(json!({"jsonrpc": "2.0", "id": request.id(), "result": result}))
}

/// A JSON-RPC error for `request`, with HTTP `http_status`.
pub fn rpc_error(
    request: &Recorded,
    http_status: u16,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    status(
        http_status,
        "application/json",
        json!({"jsonrpc": "2.0", "id": request.id(), "error": error}).to_string(),
    )
}

/// The DiscoverResult of a stateless server.
pub fn discovered(request: &Recorded) -> Response {
    result(
        request,
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0, "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "0.0.1"}}
        }),
    )
}

/// An `initialize` result in `version`, with the session id `session`.
pub fn initialized(request: &Recorded, version: &str, session: Option<&str>) -> Response {
    let mut response = result(
        request,
        json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted", "version": "0.0.1"}}),
    );
    if let Some(session) = session {
        response
            .headers_mut()
            .insert("mcp-session-id", session.parse().expect("header"));
    }
    response
}

/// 202 Accepted, empty.
pub fn accepted() -> Response {
    Response::builder()
        .status(202)
        .body(Body::empty())
        .expect("response")
}

/// A tools/list result of `tools` and `next`.
pub fn tools_page(request: &Recorded, tools: Value, next: Option<&str>) -> Response {
    let mut page = json!({"tools": tools});
    if let Some(next) = next {
        page["nextCursor"] = json!(next);
    }
    result(request, page)
}

/// A tools/call result answering `text`.
pub fn text_result(request: &Recorded, text: &str) -> Response {
    result(
        request,
        json!({"content": [{"type": "text", "text": text}]}),
    )
}
