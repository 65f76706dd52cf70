//! An MCP server and its authorization server on 127.0.0.1 (one axum server, one origin), with
//! knobs for each way one can go wrong.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use reqwest::Url;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use toolkit_auth::{AuthError, AuthorizationCallback};
use toolkit_core::BoxFuture;

/// What the servers do that they should not (all off: a good server).
#[derive(Clone, Default)]
pub struct Knobs {
    /// The body of the resource metadata, in place of a good one.
    pub resource_metadata: Option<String>,
    /// The body of the authorization server metadata, in place of a good one.
    pub server_metadata: Option<String>,
    /// The token endpoint's answer (status, content type, body), in place of tokens.
    pub token_answer: Option<(u16, &'static str, String)>,
    /// The token endpoint never answers.
    pub token_stalls: bool,
    /// `WWW-Authenticate` of a 401, in place of a good one.
    pub challenge: Option<String>,
    /// The `state` the authorization endpoint sends back, in place of the one it got.
    pub wrong_state: bool,
    /// Access tokens live this long (1 hour if unset).
    pub lifetime: Option<Duration>,
    /// Refresh tokens are issued.
    pub refresh_tokens: bool,
    /// Refreshes are answered 500.
    pub refresh_fails: bool,
    /// Refresh tokens rotate: each is good once (the refresh takes 100 ms), and one used again
    /// revokes every token (`invalid_grant`), as `oidc-provider` does.
    pub rotation: bool,
}

/// A request as the servers saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
}

#[derive(Default)]
struct Tokens {
    /// Access tokens and when they expire.
    access: HashMap<String, Instant>,
    /// Refresh tokens, and whether each is still good.
    refresh: HashMap<String, bool>,
    issued: usize,
    /// How many refresh tokens were used again.
    reused: usize,
}

#[derive(Clone)]
struct Shared {
    knobs: Knobs,
    base: Arc<Mutex<String>>,
    tokens: Arc<Mutex<Tokens>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// The running servers.
pub struct Servers {
    pub url: Url,
    pub base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    tokens: Arc<Mutex<Tokens>>,
    task: JoinHandle<()>,
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Servers {
    pub fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }

    /// How many access tokens were issued.
    pub fn issued(&self) -> usize {
        self.tokens.lock().unwrap().issued
    }

    /// How many refresh tokens were used again (with [`Knobs::rotation`]).
    pub fn reused(&self) -> usize {
        self.tokens.lock().unwrap().reused
    }

    /// Whether `token` is a refresh token still good.
    pub fn refresh_is_good(&self, token: &str) -> bool {
        self.tokens.lock().unwrap().refresh.get(token) == Some(&true)
    }
}

fn json_response(status: u16, body: Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn raw(status: u16, content_type: &str, body: String) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap()
}

fn form(body: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect()
}

async fn handle(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = String::from_utf8_lossy(&body).into_owned();
    let path = uri.path().to_owned();
    shared.seen.lock().unwrap().push(Seen {
        path: path.clone(),
        headers: headers.clone(),
        body: body.clone(),
    });
    let base = shared.base.lock().unwrap().clone();
    let knobs = &shared.knobs;
    match path.as_str() {
        "/.well-known/oauth-protected-resource/mcp" => match &knobs.resource_metadata {
            Some(text) => raw(200, "application/json", text.clone()),
            None => json_response(
                200,
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base], "scopes_supported": ["tools"]}),
            ),
        },
        "/.well-known/oauth-authorization-server" => match &knobs.server_metadata {
            Some(text) => raw(200, "application/json", text.clone()),
            None => json_response(
                200,
                json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                }),
            ),
        },
        "/register" => json_response(
            201,
            json!({"client_id": "client-1", "client_secret": "client-secret-value"}),
        ),
        "/authorize" => {
            let query: HashMap<String, String> = uri
                .query()
                .map(|q| {
                    url::form_urlencoded::parse(q.as_bytes())
                        .into_owned()
                        .collect()
                })
                .unwrap_or_default();
            let Some(redirect) = query.get("redirect_uri").and_then(|r| Url::parse(r).ok()) else {
                return raw(400, "text/plain", "no redirect_uri".into());
            };
            let mut redirect = redirect;
            let state = if knobs.wrong_state {
                "not-the-state".to_owned()
            } else {
                query.get("state").cloned().unwrap_or_default()
            };
            redirect
                .query_pairs_mut()
                .append_pair("code", "the-code-value")
                .append_pair("state", &state);
            Response::builder()
                .status(302)
                .header("location", redirect.as_str())
                .body(Body::empty())
                .unwrap()
        }
        "/token" => {
            if knobs.token_stalls {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            let fields = form(&body);
            let refreshing = fields.get("grant_type").map(String::as_str) == Some("refresh_token");
            if refreshing && knobs.refresh_fails {
                return raw(500, "text/html", "<html>down</html>".into());
            }
            if let Some((status, content_type, text)) = &knobs.token_answer {
                return raw(*status, content_type, text.clone());
            }
            if refreshing && knobs.rotation {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let presented = fields.get("refresh_token").cloned().unwrap_or_default();
                let mut tokens = shared.tokens.lock().unwrap();
                match tokens.refresh.get_mut(&presented) {
                    Some(good) if *good => *good = false,
                    _ => {
                        tokens.reused += 1;
                        tokens.access.clear();
                        tokens.refresh.values_mut().for_each(|good| *good = false);
                        return json_response(400, json!({"error": "invalid_grant"}));
                    }
                }
            }
            let mut tokens = shared.tokens.lock().unwrap();
            tokens.issued += 1;
            let token = format!("access-token-{}", tokens.issued);
            let lifetime = knobs.lifetime.unwrap_or(Duration::from_secs(3600));
            tokens
                .access
                .insert(token.clone(), Instant::now() + lifetime);
            let mut answer = json!({
                "access_token": token,
                "token_type": "bearer",
                "expires_in": lifetime.as_secs(),
            });
            if knobs.refresh_tokens {
                let refresh = format!("refresh-token-{}", tokens.issued);
                tokens.refresh.insert(refresh.clone(), true);
                answer["refresh_token"] = json!(refresh);
            }
            json_response(200, answer)
        }
        "/mcp" => mcp(&shared, &headers, &body, &base),
        _ => raw(404, "text/plain", "not found".into()),
    }
}

/// The MCP server: every request needs a live token.
fn mcp(shared: &Shared, headers: &HeaderMap, body: &str, base: &str) -> Response {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let live = token.is_some_and(|token| {
        shared
            .tokens
            .lock()
            .unwrap()
            .access
            .get(token)
            .is_some_and(|expires| *expires > Instant::now())
    });
    if !live {
        let challenge = shared.knobs.challenge.clone().unwrap_or_else(|| {
            format!(
                r#"Bearer error="invalid_token", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
            )
        });
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header("www-authenticate", challenge)
            .body(Body::empty())
            .unwrap();
    }
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let id = request["id"].clone();
    let result = match request["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fixture", "version": "1"},
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "echoed"}]}),
        method if method.starts_with("notifications/") => {
            return Response::builder().status(202).body(Body::empty()).unwrap();
        }
        _ => {
            return json_response(
                200,
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
            );
        }
    };
    json_response(200, json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Starts the servers with `knobs`.
pub async fn start(knobs: Knobs) -> Servers {
    let shared = Shared {
        knobs,
        base: Arc::new(Mutex::new(String::new())),
        tokens: Arc::new(Mutex::new(Tokens::default())),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let base = format!("http://{address}");
    *shared.base.lock().unwrap() = base.clone();
    let seen = shared.seen.clone();
    let tokens = shared.tokens.clone();
    let router = axum::Router::new().fallback(handle).with_state(shared);
    let task = tokio::spawn(async move {
        let _ = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            router,
        )
        .await;
    });
    Servers {
        url: format!("{base}/mcp").parse().unwrap(),
        base,
        seen,
        tokens,
        task,
    }
}

/// Follows the authorization URL without a browser (the endpoint redirects at once).
pub struct Headless;

impl AuthorizationCallback for Headless {
    fn redirect_uri(&self) -> Url {
        "http://127.0.0.1:9/callback".parse().unwrap()
    }

    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let response = http
                .get(url.clone())
                .send()
                .await
                .map_err(|_| AuthError::Unavailable("unreachable".into()))?;
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| AuthError::Refused("no redirect".into()))?;
            url.join(location)
                .map_err(|_| AuthError::Refused("bad redirect".into()))
        })
    }
}

/// A user who never comes back.
pub struct Never;

impl AuthorizationCallback for Never {
    fn redirect_uri(&self) -> Url {
        "http://127.0.0.1:9/callback".parse().unwrap()
    }

    fn authorize(&self, _url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(std::future::pending())
    }
}
