//! A session's plain `tools/call` answered past rmcp's session worker (`http/direct_calls.rs`),
//! over HTTP on 127.0.0.1 with a raw keep-alive client: answered as JSON for a client that can be
//! sent nothing mid-call and as SSE by rmcp otherwise, two principals kept apart, a call stopped
//! by its client's `notifications/cancelled`, and the session's end.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolkit_core::context::Principal;
use toolkit_core::{
    Assembly, BoxFuture, CallContext, Decision, JsonObject, Member, ToolDefinition, ToolSource,
    ToolSourceError,
};
use toolkit_serve::{CancellationToken, HttpOptions, MCP_PATH, McpServer, bind_loopback};

/// Tools that answer who called them, and one that waits until it is dropped.
struct Who {
    dropped: mpsc::UnboundedSender<()>,
}

/// Tells the test when the waiting call's future is dropped.
struct OnDrop(mpsc::UnboundedSender<()>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

impl ToolSource for Who {
    fn name(&self) -> &str {
        "who"
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async { Ok(definitions()) })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        let principal = context
            .extension::<Principal>()
            .map(|principal| principal.name().to_owned());
        let dropped = OnDrop(self.dropped.clone());
        Box::pin(async move {
            if tool == "wait" {
                let _dropped = dropped;
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            Ok(json!({"principal": principal, "said": input.get("say")}))
        })
    }
}

fn definitions() -> Vec<ToolDefinition> {
    let schema = json!({"type": "object", "properties": {"say": {"type": "string"}}});
    ["whoami", "wait"]
        .into_iter()
        .map(|name| ToolDefinition::new(name, schema.as_object().cloned().unwrap()).unwrap())
        .collect()
}

/// Puts the principal the `x-user` header names in the request, as a host's authentication does.
async fn authenticated(mut request: Request, next: Next) -> axum::response::Response {
    let user = request
        .headers()
        .get("x-user")
        .and_then(|user| user.to_str().ok())
        .unwrap_or("nobody")
        .to_owned();
    request.extensions_mut().insert(Principal::token(&user));
    next.run(request).await
}

/// The server on 127.0.0.1, its URL, what tells of a dropped call, and its shutdown.
async fn serve() -> (String, mpsc::UnboundedReceiver<()>, CancellationToken) {
    serve_with(HttpOptions::default()).await
}

/// [`serve`] with `options`.
async fn serve_with(
    options: HttpOptions,
) -> (String, mpsc::UnboundedReceiver<()>, CancellationToken) {
    let (dropped, drops) = mpsc::unbounded_channel();
    let source = Who { dropped };
    let toolkit = Assembly::new()
        .toolkit(&[Member::new(Arc::new(source), definitions())], |_, _| {
            Decision::Allow
        })
        .unwrap();
    let shutdown = CancellationToken::new();
    let router = McpServer::new(toolkit)
        .http_options(options)
        .router(MCP_PATH, shutdown.clone())
        .layer(axum::middleware::from_fn(authenticated));
    let listener = bind_loopback(0).await.unwrap();
    let url = format!("http://{}{MCP_PATH}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, drops, shutdown)
}

/// One client's session, opened with the capabilities it declares.
struct Session {
    http: reqwest::Client,
    url: String,
    user: &'static str,
    id: String,
}

/// An answer: its content type and the JSON-RPC message in it.
struct Answer {
    status: u16,
    kind: String,
    message: Value,
}

impl Session {
    async fn open(url: &str, user: &'static str, capabilities: Value) -> Self {
        let http = reqwest::Client::new();
        let mut session = Self {
            http,
            url: url.to_owned(),
            user,
            id: String::new(),
        };
        let opened = session
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": capabilities,
                "clientInfo": {"name": "direct-calls-test", "version": "1"}}}),
            )
            .await;
        session.id = opened
            .headers()
            .get("mcp-session-id")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let _ = opened.bytes().await.unwrap();
        let ready = session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(ready.status(), 202);
        session
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("x-user", self.user)
            .json(&body);
        if !self.id.is_empty() {
            request = request.header("mcp-session-id", &self.id);
        }
        request.send().await.unwrap()
    }

    async fn call(&self, id: u64, params: Value) -> Answer {
        let response = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let status = response.status().as_u16();
        let kind = response
            .headers()
            .get("content-type")
            .map(|kind| kind.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = response.text().await.unwrap();
        let message = if kind.starts_with("text/event-stream") {
            body.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message.get("id").is_some())
                .unwrap_or(Value::Null)
        } else {
            serde_json::from_str(&body).unwrap_or(Value::Null)
        };
        Answer {
            status,
            kind,
            message,
        }
    }
}

#[tokio::test]
async fn direct_a_plain_clients_call_is_json_and_one_that_can_be_asked_is_rmcps_sse() {
    let (url, _drops, shutdown) = serve().await;
    let plain = Session::open(&url, "alice", json!({})).await;
    let answer = plain
        .call(
            1,
            json!({"name": "who__whoami", "arguments": {"say": "hi"}}),
        )
        .await;
    assert_eq!(answer.kind, "application/json");
    assert_eq!(answer.message["id"], 1, "{}", answer.message);
    let result = &answer.message["result"];
    assert_eq!(
        result["structuredContent"],
        json!({"principal": "alice", "said": "hi"})
    );
    assert_eq!(result.get("resultType"), None, "a session revision's shape");
    // A call that wants progress, and an unknown tool's error, the same way either path.
    let progress = plain
        .call(
            2,
            json!({"name": "who__whoami", "arguments": {}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    assert!(progress.kind.starts_with("text/event-stream"));
    assert_eq!(
        progress.message["result"]["structuredContent"]["principal"],
        "alice"
    );
    let unknown = plain.call(3, json!({"name": "nothing"})).await;
    assert_eq!(unknown.kind, "application/json");
    assert_eq!(unknown.message["error"]["code"], -32602);
    assert_eq!(unknown.message["id"], 3);
    // Another path than the MCP endpoint's finds nothing, whatever it carries.
    let elsewhere = plain
        .http
        .post(url.replace("/mcp", "/other"))
        .header("accept", "application/json, text/event-stream")
        .header("x-user", "alice")
        .header("mcp-session-id", &plain.id)
        .json(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "who__whoami", "arguments": {}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404);
    // A Host the server does not take (DNS rebinding), or an Origin: refused as rmcp refuses them.
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "who__whoami", "arguments": {}}});
    for (header, value) in [("host", "evil.example"), ("origin", "http://evil.example")] {
        let refused = plain
            .http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("x-user", "alice")
            .header("mcp-session-id", &plain.id)
            .header(header, value)
            .json(&call)
            .send()
            .await
            .unwrap();
        let status = refused.status().as_u16();
        assert!(
            status == 403 || (header == "origin" && status == 200),
            "{header}: {status}"
        );
        if status == 200 {
            let kind = refused.headers()["content-type"]
                .to_str()
                .unwrap()
                .to_owned();
            assert!(
                kind.starts_with("text/event-stream"),
                "an Origin goes to rmcp: {kind}"
            );
        }
    }
    // A body over the cap (4 MiB): 413, and nothing runs.
    let huge = "x".repeat(5 * 1024 * 1024);
    let over = plain
        .call(
            6,
            json!({"name": "who__whoami", "arguments": {"say": huge}}),
        )
        .await;
    assert_eq!(over.status, 413);
    // A client an upstream could ask something mid-call: rmcp's path, on the call's stream.
    let askable = Session::open(&url, "alice", json!({"elicitation": {}})).await;
    let answer = askable
        .call(4, json!({"name": "who__whoami", "arguments": {}}))
        .await;
    assert!(
        answer.kind.starts_with("text/event-stream"),
        "{}",
        answer.kind
    );
    assert_eq!(
        answer.message["result"]["structuredContent"]["principal"],
        "alice"
    );
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_two_principals_calls_stay_apart() {
    let (url, _drops, shutdown) = serve().await;
    let alice = Session::open(&url, "alice", json!({})).await;
    let bob = Session::open(&url, "bob", json!({})).await;
    // Both at once, many times: each reads only their own.
    let calls = (0..20u64).map(|n| {
        let (alice, bob) = (&alice, &bob);
        async move {
            let (a, b) = tokio::join!(
                alice.call(
                    n,
                    json!({"name": "who__whoami", "arguments": {"say": format!("a{n}")}})
                ),
                bob.call(
                    n,
                    json!({"name": "who__whoami", "arguments": {"say": format!("b{n}")}})
                ),
            );
            for (answer, who, said) in [(a, "alice", format!("a{n}")), (b, "bob", format!("b{n}"))]
            {
                let content = &answer.message["result"]["structuredContent"];
                assert_eq!(content["principal"], who);
                assert_eq!(content["said"], said.as_str());
            }
        }
    });
    futures_util::future::join_all(calls).await;
    // Bob naming Alice's session is answered as an unknown session, and nothing runs.
    let stolen = Session {
        http: reqwest::Client::new(),
        url: url.clone(),
        user: "bob",
        id: alice.id.clone(),
    };
    let answer = stolen
        .call(99, json!({"name": "who__whoami", "arguments": {}}))
        .await;
    assert_eq!(answer.status, 404);
    shutdown.cancel();
}

#[tokio::test]
async fn direct_a_call_its_client_cancels_stops_and_the_session_end_stops_the_rest() {
    let (url, mut drops, shutdown) = serve().await;
    let session = Arc::new(Session::open(&url, "alice", json!({})).await);
    let waiting = {
        let session = Arc::clone(&session);
        tokio::spawn(async move {
            session
                .call(7, json!({"name": "who__wait", "arguments": {}}))
                .await
        })
    };
    // Until the call runs, a cancellation names nothing; sent until the tool is dropped.
    let stopped = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let cancelled = session
                .post(
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "no longer needed"}}),
                )
                .await;
            assert_eq!(cancelled.status(), 202);
            if tokio::time::timeout(Duration::from_millis(50), drops.recv())
                .await
                .is_ok()
            {
                break;
            }
        }
    })
    .await;
    assert!(stopped.is_ok(), "the cancelled call was not stopped");
    let answer = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .unwrap()
        .unwrap();
    // As rmcp drops a cancelled request's answer: a stream that ends with no message.
    assert_eq!(answer.status, 200);
    assert_eq!(answer.kind, "text/event-stream");
    assert_eq!(answer.message, Value::Null);
    // Another call waits; the session is deleted: the call stops with it.
    let waiting = {
        let session = Arc::clone(&session);
        tokio::spawn(async move {
            session
                .call(8, json!({"name": "who__wait", "arguments": {}}))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let deleted = session
        .http
        .delete(&url)
        .header("mcp-session-id", &session.id)
        .header("x-user", "alice")
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    tokio::time::timeout(Duration::from_secs(10), drops.recv())
        .await
        .expect("the ended session's call was stopped");
    let _ = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .unwrap();
    // The ended session is unknown, and its calls go nowhere.
    let after = session
        .call(9, json!({"name": "who__whoami", "arguments": {}}))
        .await;
    assert_eq!(after.status, 404);
    shutdown.cancel();
}

#[tokio::test]
async fn direct_a_session_used_by_direct_calls_alone_outlives_the_idle_timeout_and_an_idle_one_does_not()
 {
    let mut options = HttpOptions::default();
    options.session_idle_timeout = Duration::from_secs(1);
    let (url, _drops, shutdown) = serve_with(options).await;
    let busy = Session::open(&url, "alice", json!({})).await;
    let idle = Session::open(&url, "alice", json!({})).await;
    // Only direct calls for two and a half idle timeouts.
    for n in 0..25 {
        let answer = busy
            .call(n, json!({"name": "who__whoami", "arguments": {}}))
            .await;
        assert_eq!(answer.kind, "application/json");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // rmcp's worker heard of the session's use: a request it answers itself still finds it.
    let listed = busy
        .post(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
        .await;
    assert_eq!(listed.status(), 200);
    // The session nobody used was closed: its calls find no session.
    let gone = idle
        .call(1, json!({"name": "who__whoami", "arguments": {}}))
        .await;
    assert_eq!(gone.status, 404);
    shutdown.cancel();
}
