//! The MCP authorization client against a real authorization server: npm `oidc-provider` 9.13
//! (installed by `scripts/install-test-peers`, configured by `scripts/oidc-provider.mjs`: dynamic
//! registration, resource indicators, JWT access tokens, PKCE, refresh tokens rotated at each
//! use, the grant revoked when one is used twice). `login` through its interactions (a scripted
//! user), then clients sharing one token file refresh the grant at once, and none loses it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use base64::Engine;
use futures_util::future::join_all;
use reqwest::Url;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use toolkit_auth::TokenStore;
use toolkit_auth::{AuthError, AuthorizationCallback, FileStore, OAuthClient, OAuthOptions};
use toolkit_core::{BoxFuture, ToolSource};
use toolkit_mcp::{Mcp, McpOptions};

/// `oidc-provider`, running; killed when dropped.
struct Provider {
    issuer: String,
    _child: tokio::process::Child,
}

async fn provider(resource: &str) -> Provider {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let peers = root.join("target/peers/oidc-provider");
    assert!(
        peers
            .join("node_modules/oidc-provider/package.json")
            .exists(),
        "{} is missing: run scripts/install-test-peers",
        peers.display()
    );
    // Without the trap handler, WebAssembly (Node's HTTP parser for `fetch`) reserves no 10 GB
    // of address space, so the provider runs under a cap of it (`ulimit -v`).
    let mut child = tokio::process::Command::new("node")
        .arg("--disable-wasm-trap-handler")
        .arg(root.join("scripts/oidc-provider.mjs"))
        .arg(&peers)
        .arg(resource)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let issuer = lines.next_line().await.unwrap().expect("the issuer");
    assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
    // Whatever else it prints is read (a closed pipe would end it).
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Provider {
        issuer,
        _child: child,
    }
}

/// The MCP server the tokens are for: its resource metadata names the provider; a request
/// needs a JWT for its audience that has not expired (the gateway's tests check signatures).
async fn mcp_server(issuer: Arc<Mutex<String>>) -> (Url, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url: Url = format!("{base}/mcp").parse().unwrap();
    let resource = url.to_string();
    let handle = move |uri: Uri, headers: HeaderMap, body: String| {
        let (issuer, resource, base) = (issuer.clone(), resource.clone(), base.clone());
        async move {
            let json = |status: u16, body: Value| {
                Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Body::from(body.to_string()))
                    .unwrap()
            };
            match uri.path() {
                "/.well-known/oauth-protected-resource/mcp" => json(
                    200,
                    json!({
                        "resource": resource,
                        "authorization_servers": [issuer.lock().unwrap().clone()],
                        "scopes_supported": ["tools"],
                    }),
                ),
                "/mcp" => {
                    if !carries_a_live_token(&headers, &resource) {
                        return Response::builder()
                            .status(StatusCode::UNAUTHORIZED)
                            .header(
                                "www-authenticate",
                                format!(
                                    r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
                                ),
                            )
                            .body(Body::empty())
                            .unwrap();
                    }
                    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    let result = match request["method"].as_str().unwrap_or_default() {
                        "initialize" => json!({
                            "protocolVersion": "2025-06-18",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "guarded", "version": "1"},
                        }),
                        "tools/list" => {
                            json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
                        }
                        _ => return Response::builder().status(202).body(Body::empty()).unwrap(),
                    };
                    json(
                        200,
                        json!({"jsonrpc": "2.0", "id": request["id"], "result": result}),
                    )
                }
                _ => Response::builder().status(404).body(Body::empty()).unwrap(),
            }
        }
    };
    let router = axum::Router::new().fallback(handle);
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (url, task)
}

/// Whether `headers` carry a JWT for `audience` that has not expired.
fn carries_a_live_token(headers: &HeaderMap, audience: &str) -> bool {
    let Some(token) = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let Some(payload) = token.split('.').nth(1) else {
        return false;
    };
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload) else {
        return false;
    };
    let claims: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    claims["aud"] == audience && claims["exp"].as_u64().is_some_and(|exp| exp > now)
}

/// A browser: follows the authorization's redirects through the provider's interactions (the
/// scripted user), keeping its cookies, until one lands on the redirect URI.
struct Browser;

impl AuthorizationCallback for Browser {
    fn redirect_uri(&self) -> Url {
        "http://127.0.0.1:9/callback".parse().unwrap()
    }

    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let mut cookies = BTreeMap::new();
            let mut at = url;
            for _ in 0..10 {
                let cookie = cookies
                    .iter()
                    .map(|(name, value)| format!("{name}={value}"))
                    .collect::<Vec<_>>()
                    .join("; ");
                let answer = http
                    .get(at.clone())
                    .header("cookie", cookie)
                    .send()
                    .await
                    .map_err(|error| AuthError::Unavailable(format!("{at}: {error:?}")))?;
                for set in answer.headers().get_all("set-cookie") {
                    let pair = set
                        .to_str()
                        .unwrap_or_default()
                        .split(';')
                        .next()
                        .unwrap_or_default();
                    if let Some((name, value)) = pair.split_once('=') {
                        cookies.insert(name.to_owned(), value.to_owned());
                    }
                }
                let Some(location) = answer
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                else {
                    let status = answer.status();
                    let text = answer.text().await.unwrap_or_default();
                    return Err(AuthError::Refused(format!("{status}: {text}")));
                };
                at = at.join(location).unwrap();
                if at.as_str().starts_with("http://127.0.0.1:9/callback") {
                    return Ok(at);
                }
            }
            Err(AuthError::Refused("too many redirects".into()))
        })
    }
}

fn source(url: &Url, client: OAuthClient) -> Mcp {
    let options = McpOptions::default().timeout(Duration::from_secs(20));
    Mcp::http_with_options("guarded", url.clone(), client, options)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_oidc_provider_login_then_shared_refreshes_with_rotation_keep_the_grant() {
    let issuer = Arc::new(Mutex::new(String::new()));
    let (url, _server) = mcp_server(issuer.clone()).await;
    let provider = provider(url.as_str()).await;
    *issuer.lock().unwrap() = provider.issuer.clone();
    let folder = std::env::temp_dir().join(format!("toolkit-oidc-provider-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let path = folder.join("tokens.json");
    let options = OAuthOptions::default()
        .request_timeout(Duration::from_secs(10))
        .authorization_timeout(Duration::from_secs(20));

    // `login`: registration, PKCE, the user's consent, a JWT for the MCP server and a refresh
    // token, kept in an owner-only file.
    let login = OAuthClient::builder(url.clone(), Browser)
        .store(FileStore::new(&path))
        .options(options.clone())
        .build()
        .unwrap();
    let grant = login.login().await.unwrap();
    assert_eq!(grant.issuer, provider.issuer);
    let first_refresh = grant.refresh_token.clone().expect("a refresh token");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    // Six clients over the file (as a gateway's sources and command lines), each refreshing
    // before its first request (every token expires within the margin): oidc-provider revokes
    // the grant if a rotated refresh token comes back, so one sent twice fails them all.
    let sharing = options
        .clone()
        .refresh_margin(Duration::from_secs(7200))
        .max_authorizations(0);
    let clients: Vec<OAuthClient> = (0..6)
        .map(|_| {
            OAuthClient::builder(url.clone(), Browser)
                .store(FileStore::new(&path))
                .options(sharing.clone())
                .build()
                .unwrap()
        })
        .collect();
    let sources: Vec<Mcp> = clients.iter().map(|c| source(&url, c.clone())).collect();
    let listed = join_all(sources.iter().map(|source| source.discover())).await;
    for result in listed {
        if let Err(error) = result {
            panic!("a client lost the grant: {error}");
        }
    }
    let kept = FileStore::new(&path)
        .load(url.as_str())
        .await
        .unwrap()
        .expect("the grant is kept");
    assert_ne!(kept.refresh_token, Some(first_refresh), "rotated");

    // The kept refresh token is still good: one more client refreshes with it.
    let later = OAuthClient::builder(url.clone(), Browser)
        .store(FileStore::new(&path))
        .options(sharing)
        .build()
        .unwrap();
    source(&url, later.clone()).discover().await.unwrap();
    assert_ne!(later.grant().unwrap().refresh_token, kept.refresh_token);
    let _ = std::fs::remove_dir_all(&folder);
}
