//! One token store shared by several `toolkit-gen` processes (command lines, gateways on one
//! machine): they refresh one grant against an authorization server that rotates refresh
//! tokens and revokes them all when one is used twice (as npm `oidc-provider` does), and none
//! loses it; with the store in a file, and in Redis.
#![allow(clippy::panic)]

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use toolkit_runtime::auth::{Grant, RedisStore, TokenStore as _};

use crate::support::{Redis, free_port};

/// The tokens the fixture issued: good or spent, and how many refresh tokens came back spent.
#[derive(Default)]
struct Tokens {
    access: HashMap<String, bool>,
    refresh: HashMap<String, bool>,
    issued: usize,
    refreshes: usize,
    reused: usize,
}

/// An MCP server and its token endpoint on 127.0.0.1: each refresh token is good once (a
/// refresh takes 300 ms, so that processes overlap), one used again revokes every token.
async fn handle(
    tokens: Arc<Mutex<Tokens>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = String::from_utf8_lossy(&body).into_owned();
    match uri.path() {
        "/token" => {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let form = reqwest::Url::parse(&format!("http://form/?{body}")).unwrap();
            let fields: HashMap<String, String> = form.query_pairs().into_owned().collect();
            let presented = fields.get("refresh_token").cloned().unwrap_or_default();
            let mut tokens = tokens.lock().unwrap();
            tokens.refreshes += 1;
            match tokens.refresh.get_mut(&presented) {
                Some(good) if *good => *good = false,
                _ => {
                    tokens.reused += 1;
                    tokens.access.values_mut().for_each(|good| *good = false);
                    tokens.refresh.values_mut().for_each(|good| *good = false);
                    let refused = json!({"error": "invalid_grant"});
                    return (StatusCode::BAD_REQUEST, axum::Json(refused)).into_response();
                }
            }
            tokens.issued += 1;
            let (access, refresh) = (
                format!("access-{}", tokens.issued),
                format!("refresh-{}", tokens.issued),
            );
            tokens.access.insert(access.clone(), true);
            tokens.refresh.insert(refresh.clone(), true);
            axum::Json(json!({
                "access_token": access, "token_type": "Bearer", "expires_in": 3600,
                "refresh_token": refresh,
            }))
            .into_response()
        }
        "/mcp" if method == Method::GET => StatusCode::METHOD_NOT_ALLOWED.into_response(),
        "/mcp" => {
            let token = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default();
            if tokens.lock().unwrap().access.get(token) != Some(&true) {
                return (
                    StatusCode::UNAUTHORIZED,
                    [("www-authenticate", r#"Bearer error="invalid_token""#)],
                )
                    .into_response();
            }
            let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let result = match request["method"].as_str().unwrap_or_default() {
                "initialize" => json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "rotating", "version": "1"},
                }),
                "tools/list" => {
                    json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
                }
                _ => return StatusCode::ACCEPTED.into_response(),
            };
            axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
                .into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

#[test]
fn processes_sharing_a_token_store_refresh_a_rotating_grant_without_losing_it() {
    processes_refresh_one_grant(false);
}

/// The same with the store in Redis (a `redis-server` of the test's own), as replicas on
/// several machines share it.
#[test]
fn processes_sharing_a_redis_token_store_refresh_a_rotating_grant_without_losing_it() {
    processes_refresh_one_grant(true);
}

fn processes_refresh_one_grant(in_redis: bool) {
    const PROCESSES: usize = 4;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let tokens = Arc::new(Mutex::new(Tokens::default()));
    let base = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shared = tokens.clone();
        let router = axum::Router::new().fallback(move |method, uri, headers, body| {
            handle(shared.clone(), method, uri, headers, body)
        });
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        base
    });
    tokens
        .lock()
        .unwrap()
        .refresh
        .insert("refresh-0".into(), true);
    let folder = std::env::temp_dir().join(format!(
        "toolkit-gen-store-{}-{in_redis}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    // A grant `login` kept, its access token expired.
    let url = format!("{base}/mcp");
    let grant = json!({
        "issuer": base, "token_endpoint": format!("{base}/token"),
        "client": {"client_id": "cli"}, "client_auth": "none",
        "access_token": "access-0", "refresh_token": "refresh-0", "expires_at": 1,
        "scopes": ["tools"],
    });
    let redis_port = free_port();
    let _redis = in_redis.then(|| Redis::start(redis_port, None));
    let redis_url = format!("redis://127.0.0.1:{redis_port}/0");
    let store = if in_redis {
        let grant: Grant = serde_json::from_value(grant).unwrap();
        runtime
            .block_on(RedisStore::new(&redis_url).unwrap().save(&url, &grant))
            .unwrap();
        std::path::PathBuf::from(&redis_url)
    } else {
        let store = folder.join("tokens.json");
        let kept = json!({"grants": {url.clone(): grant}});
        std::fs::write(&store, kept.to_string()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
        store
    };

    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
                .args(["execute", "--mcp-url", &url, "--token-store"])
                .arg(&store)
                .args(["--code", "-"])
                .env("BROWSER", "")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(b"1").unwrap();
            child
        })
        .collect();
    let mut failed = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        if !output.status.success() {
            failed.push(String::from_utf8_lossy(&output.stderr).into_owned());
        }
    }
    let tokens = tokens.lock().unwrap();
    assert!(failed.is_empty(), "processes failed: {failed:#?}");
    assert_eq!(tokens.reused, 0, "a rotated refresh token was sent again");
    assert_eq!(
        tokens.refreshes, 1,
        "the others used the grant the first refreshed"
    );
    let kept: Value = if in_redis {
        let grant = runtime
            .block_on(RedisStore::new(&redis_url).unwrap().load(&url))
            .unwrap();
        json!({"grants": {url.clone(): serde_json::to_value(grant).unwrap()}})
    } else {
        serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap()
    };
    let refresh = kept["grants"][&url]["refresh_token"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        tokens.refresh.get(refresh),
        Some(&true),
        "the kept refresh token: {kept}"
    );
    let _ = std::fs::remove_dir_all(&folder);
}
