//! `toolkit-gateway` over HTTP as a team runs it: health, readiness and metrics, a graceful
//! shutdown on SIGTERM, and inbound authentication (opaque tokens, and JWTs of a test issuer of
//! ours on 127.0.0.1 whose keys are made here).
#![allow(clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::Query;
use axum::http::HeaderMap;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::process::Child;
use toolkit_core::ToolSource;
use toolkit_mcp::Mcp;

use crate::support::free_port;

const API: &str = r#"{
  "openapi": "3.1.0",
  "info": {"title": "Team", "version": "1"},
  "paths": {
    "/pets": {"get": {"operationId": "list_pets", "responses": {"200": {"description": "ok"}}}},
    "/slow": {"get": {"operationId": "slow",
      "parameters": [{"name": "ms", "in": "query", "required": true, "schema": {"type": "integer"}}],
      "responses": {"200": {"description": "ok"}}}},
    "/broken": {"get": {"operationId": "broken", "responses": {"200": {"description": "ok"}}}}
  }
}"#;

/// What the fixture API saw: how many slow calls started, and every `Authorization` header.
#[derive(Default)]
struct Seen {
    slow_started: AtomicUsize,
    authorization: Mutex<Vec<String>>,
}

/// The API the gateway's one source calls, on 127.0.0.1.
async fn api(seen: Arc<Seen>) -> String {
    let record = |seen: &Seen, headers: &HeaderMap| {
        if let Some(value) = headers.get("authorization") {
            let value = value.to_str().unwrap_or("?").to_owned();
            seen.authorization.lock().unwrap().push(value);
        }
    };
    let (pets, slow) = (Arc::clone(&seen), Arc::clone(&seen));
    let app = axum::Router::new()
        .route(
            "/v1/pets",
            get(move |headers: HeaderMap| async move {
                record(&pets, &headers);
                axum::Json(json!([{"id": 1, "name": "Rex"}]))
            }),
        )
        .route(
            "/v1/slow",
            get(
                move |headers: HeaderMap, Query(query): Query<Vec<(String, u64)>>| async move {
                    record(&slow, &headers);
                    slow.slow_started.fetch_add(1, Ordering::SeqCst);
                    let ms = query.first().map_or(0, |(_, ms)| *ms);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    axum::Json(json!({"done": true}))
                },
            ),
        )
        .route(
            "/v1/broken",
            get(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "no") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
    base
}

/// A directory with the API document and a configuration serving it over HTTP on `address`,
/// with `serve_extra` in `[serve]` and `more` at the end.
fn workspace(name: &str, address: &str, base_url: &str, serve_extra: &str, more: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-team-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("api.json"), API).unwrap();
    let config = format!(
        r#"[serve]
transport = "http"
address = "{address}"
{serve_extra}

[catalog]
refresh_seconds = 0

[policy]
default = "allow"

[[sources]]
name = "api"
openapi = "api.json"
base_url = "{base_url}"
{more}"#
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    dir
}

/// Starts the gateway of `dir` (stderr kept, `RUST_LOG=debug`, JSON logs) and waits for `/healthz`.
async fn start(dir: &Path, port: u16, env: &[(&str, &str)]) -> Child {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"));
    command
        .args(["--log-format", "json", "--config"])
        .arg(dir.join("toolkit.toml"))
        .env("RUST_LOG", "debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let health = format!("http://127.0.0.1:{port}/healthz");
    for _ in 0..200 {
        if let Ok(response) = reqwest::get(&health).await
            && response.status() == 200
        {
            return child;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let output = child.wait_with_output().await.unwrap();
            panic!(
                "the gateway exited with {status}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the gateway did not become healthy");
}

/// Sends SIGTERM to `child` and returns its exit code and stderr.
pub(crate) async fn terminate(child: Child) -> (Option<i32>, String) {
    let pid = child.id().unwrap().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("the gateway did not stop after SIGTERM")
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn client(port: u16, token: Option<&str>) -> Mcp {
    crate::support::bearer_client(port, token)
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_metrics_are_served_and_count_the_calls() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let dir = workspace("ops", &format!("127.0.0.1:{port}"), &base, "", "");
    let child = start(&dir, port, &[]).await;
    let ready = reqwest::get(format!("http://127.0.0.1:{port}/readyz"))
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["ready"], true, "{ready}");
    assert_eq!(ready["tools"], 3, "{ready}");

    let gateway = client(port, None);
    gateway
        .call(
            "api__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    gateway
        .call(
            "api__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        gateway
            .call(
                "api__broken",
                object(json!({})),
                &toolkit_core::CallContext::new()
            )
            .await
            .is_err()
    );

    let metrics = reqwest::get(format!("http://127.0.0.1:{port}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for expected in [
        r#"toolkit_gateway_tool_calls_total{source="api",tool="list_pets",outcome="ok"} 2"#,
        r#"toolkit_gateway_tool_call_duration_seconds_count{source="api",tool="list_pets"} 2"#,
        r#"toolkit_gateway_tool_call_duration_seconds_bucket{le="#,
        r#"toolkit_gateway_catalog_refreshes_total{outcome="complete"} 1"#,
        "toolkit_gateway_tool_calls_in_flight 0",
    ] {
        assert!(metrics.contains(expected), "{expected} not in\n{metrics}");
    }
    let broken = metrics
        .lines()
        .find(|line| {
            line.starts_with(r#"toolkit_gateway_tool_calls_total{source="api",tool="broken""#)
        })
        .unwrap_or_else(|| panic!("no call of broken in\n{metrics}"));
    assert!(!broken.contains(r#"outcome="ok""#), "{broken}");
    assert!(
        metrics.contains(r#"toolkit_gateway_upstream_errors_total{source="api",reason="#),
        "{metrics}"
    );
    // A page of another name that resolves to the gateway (DNS rebinding) reads nothing: every
    // route but the probes checks the Host, and the probes tell it only up, or ready.
    let http = reqwest::Client::new();
    for path in ["/readyz", "/metrics", "/healthz", "/mcp"] {
        let rebound = http
            .get(format!("http://127.0.0.1:{port}{path}"))
            .header("host", format!("attacker.example:{port}"))
            .send()
            .await
            .unwrap();
        let probe = matches!(path, "/readyz" | "/healthz");
        assert_eq!(rebound.status(), if probe { 200 } else { 403 }, "{path}");
        assert!(!rebound.text().await.unwrap().contains("tool"), "{path}");
    }
    let own = http
        .get(format!("http://127.0.0.1:{port}/readyz"))
        .header("host", format!("localhost:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    for line in stderr.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|_| panic!("a log line that is not JSON: {line}"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_ready_while_every_source_is_unreachable() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let down = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("toolkit-team-{}-unready", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n[catalog]\nrefresh_seconds = 0\n\
         [policy]\ndefault = \"allow\"\n[[sources]]\nname = \"down\"\nurl = \"{down}\"\ntimeout_seconds = 2\n"
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    let child = start(&dir, port, &[]).await;
    let ready = reqwest::get(format!("http://127.0.0.1:{port}/readyz"))
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["catalog_loaded"], true, "{ready}");
    assert_eq!(ready["unreachable_sources"], json!(["down"]), "{ready}");
    let (code, _) = terminate(child).await;
    assert_eq!(code, Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_call_in_flight_finish_refuses_the_next_and_exits_0() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let dir = workspace("sigterm", &format!("127.0.0.1:{port}"), &base, "", "");
    let child = start(&dir, port, &[]).await;
    let gateway = client(port, None);
    gateway.discover().await.unwrap();
    let in_flight = tokio::spawn(async move {
        gateway
            .call(
                "api__slow",
                object(json!({"ms": 1500})),
                &toolkit_core::CallContext::new(),
            )
            .await
    });
    while seen.slow_started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pid = child.id().unwrap().to_string();
    let stopping = tokio::spawn(terminate(child));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let late = client(port, None)
        .call(
            "api__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await;
    assert!(late.is_err(), "a call after SIGTERM was served: {late:?}");
    let answer = in_flight.await.unwrap().unwrap();
    assert_eq!(answer["done"], true, "{answer}");
    let (code, stderr) = stopping.await.unwrap();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("shutting down"), "{stderr}");
    assert!(!pid.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_longer_than_the_grace_period_is_ended_and_the_exit_is_0() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let dir = workspace(
        "grace",
        &format!("127.0.0.1:{port}"),
        &base,
        "shutdown_grace_seconds = 1",
        "",
    );
    let child = start(&dir, port, &[]).await;
    let gateway = client(port, None);
    let in_flight = tokio::spawn(async move {
        gateway
            .call(
                "api__slow",
                object(json!({"ms": 20000})),
                &toolkit_core::CallContext::new(),
            )
            .await
    });
    while seen.slow_started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let start = Instant::now();
    let (code, stderr) = terminate(child).await;
    let took = start.elapsed();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert!(stderr.contains("the grace period is over"), "{stderr}");
    assert!(in_flight.await.unwrap().is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_from_the_environment_open_a_non_loopback_address() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let secret = "team-token-0123456789abcdef";
    let dir = workspace(
        "tokens",
        &format!("0.0.0.0:{port}"),
        &base,
        "[serve.auth]\nmode = \"tokens\"\ntokens = [{ name = \"ci\", env = \"TEAM_TOKEN_CI\" }]",
        "",
    );
    let child = start(&dir, port, &[("TEAM_TOKEN_CI", secret)]).await;
    let served = client(port, Some(secret))
        .call(
            "api__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(served[0]["name"], "Rex", "{served}");
    let url = format!("http://127.0.0.1:{port}/mcp");
    for (token, error) in [
        (None, None),
        (Some("team-token-0123456789abcdeX"), Some("invalid_token")),
        (Some("team-token"), Some("invalid_token")),
    ] {
        let (status, challenge) = initialize(&url, token).await;
        assert_eq!(status, 401, "{token:?}");
        let expected = match error {
            Some(error) => format!("Bearer error=\"{error}\", realm=\"toolkit-gateway\""),
            None => "Bearer realm=\"toolkit-gateway\"".to_owned(),
        };
        assert_eq!(challenge.as_deref(), Some(expected.as_str()), "{token:?}");
    }
    assert!(seen.authorization.lock().unwrap().is_empty());
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("team-token"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unset_token_variable_exits_1_naming_it() {
    let port = free_port();
    let dir = workspace(
        "tokens-unset",
        &format!("0.0.0.0:{port}"),
        "http://127.0.0.1:9/v1",
        "[serve.auth]\nmode = \"tokens\"\ntokens = [{ name = \"ci\", env = \"TEAM_TOKEN_UNSET_16\" }]",
        "",
    );
    let config = dir.join("toolkit.toml");
    let (code, _, stderr) = crate::support::run(&["--config", config.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("TEAM_TOKEN_UNSET_16"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// POSTs an `initialize` with `token`: the status and the `WWW-Authenticate` header.
async fn initialize(url: &str, token: Option<&str>) -> (u16, Option<String>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request.send().await.unwrap();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned());
    (response.status().as_u16(), challenge)
}

/// A signing key of the test issuer: P-256, made now, and its public JWK named `kid`.
fn key(kid: &str) -> (EncodingKey, Jwk) {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    let der = pair.to_pkcs8v1().unwrap();
    let encoding = EncodingKey::from_ec_der(der.as_ref());
    let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    (encoding, jwk)
}

/// The test issuer: its JWKS at `/jwks` (the keys in `keys`), counting the fetches.
async fn issuer(keys: Arc<Mutex<Vec<Jwk>>>, fetches: Arc<AtomicUsize>) -> String {
    let app = axum::Router::new().route(
        "/jwks",
        get(move || async move {
            fetches.fetch_add(1, Ordering::SeqCst);
            let set = JwkSet {
                keys: keys.lock().unwrap().clone(),
            };
            axum::Json(set)
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
    origin
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An access token (`typ` `at+jwt`, RFC 9068) signed with `key`.
fn sign(key: &EncodingKey, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_access_tokens_are_checked_against_the_issuers_jwks() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let (signing, jwk) = key("k1");
    let keys = Arc::new(Mutex::new(vec![jwk.clone()]));
    let fetches = Arc::new(AtomicUsize::new(0));
    let issuer = issuer(Arc::clone(&keys), Arc::clone(&fetches)).await;
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = format!(
        "[serve.auth]\nmode = \"jwt\"\nresource = \"{resource}\"\nissuer = \"{issuer}\"\n\
         jwks_url = \"{issuer}/jwks\"\nscopes = [\"tools\"]\nleeway_seconds = 30"
    );
    let dir = workspace("jwt", &format!("127.0.0.1:{port}"), &base, &auth, "");
    let child = start(&dir, port, &[]).await;
    let claims = |change: Value| {
        let mut claims = json!({"iss": issuer, "aud": resource, "sub": "agent-7",
            "exp": now() + 300, "iat": now(), "scope": "tools other"});
        for (name, value) in change.as_object().unwrap() {
            claims[name] = value.clone();
        }
        claims
    };
    let metadata_url = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");

    // Valid: served, and the token never reaches the source.
    let valid = sign(&signing, "k1", &claims(json!({})));
    let served = client(port, Some(&valid))
        .call(
            "api__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(served[0]["name"], "Rex", "{served}");
    assert!(seen.authorization.lock().unwrap().is_empty());

    // The protected resource metadata.
    let metadata: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], resource.as_str());
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    assert_eq!(metadata["scopes_supported"], json!(["tools"]));

    let (other, _) = key("k1");
    let public_point = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&jwk).unwrap());
    let hs256 = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".to_owned());
        let secret = EncodingKey::from_secret(public_point.as_bytes()).unwrap();
        jsonwebtoken::encode(&header, &claims(json!({})), &secret).unwrap()
    };
    let alg_none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT","kid":"k1"}"#),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims(json!({}))).unwrap())
    );
    let id_token = {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".to_owned());
        jsonwebtoken::encode(&header, &claims(json!({})), &signing).unwrap()
    };
    let huge = sign(
        &signing,
        "k1",
        &claims(json!({"padding": "p".repeat(64 * 1024)})),
    );
    assert!(huge.len() > 64 * 1024);
    let invalid = format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata_url}\"");
    let cases: Vec<(&str, Option<String>, u16, String)> = vec![
        (
            "none",
            None,
            401,
            format!("Bearer resource_metadata=\"{metadata_url}\""),
        ),
        (
            "expired",
            Some(sign(&signing, "k1", &claims(json!({"exp": now() - 120})))),
            401,
            invalid.clone(),
        ),
        (
            "not yet valid",
            Some(sign(&signing, "k1", &claims(json!({"nbf": now() + 120})))),
            401,
            invalid.clone(),
        ),
        (
            "wrong audience",
            Some(sign(
                &signing,
                "k1",
                &claims(json!({"aud": "http://127.0.0.1:1/mcp"})),
            )),
            401,
            invalid.clone(),
        ),
        (
            "wrong issuer",
            Some(sign(
                &signing,
                "k1",
                &claims(json!({"iss": "http://127.0.0.1:1"})),
            )),
            401,
            invalid.clone(),
        ),
        (
            "no exp",
            Some(sign(&signing, "k1", &claims(json!({"exp": null})))),
            401,
            invalid.clone(),
        ),
        (
            "unknown kid",
            Some(sign(&signing, "k9", &claims(json!({})))),
            401,
            invalid.clone(),
        ),
        (
            "another key under k1",
            Some(sign(&other, "k1", &claims(json!({})))),
            401,
            invalid.clone(),
        ),
        ("alg none", Some(alg_none), 401, invalid.clone()),
        (
            "an ID token (typ JWT)",
            Some(id_token),
            401,
            invalid.clone(),
        ),
        (
            "HS256 with the public key",
            Some(hs256),
            401,
            invalid.clone(),
        ),
        ("64 KB", Some(huge), 401, invalid.clone()),
        (
            "no scope",
            Some(sign(&signing, "k1", &claims(json!({"scope": "other"})))),
            403,
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"tools\", resource_metadata=\"{metadata_url}\""
            ),
        ),
    ];
    let mut tokens = vec![valid.clone()];
    for (case, token, status, challenge) in &cases {
        let (got, header) = initialize(&resource, token.as_deref()).await;
        assert_eq!(got, *status, "{case}");
        assert_eq!(header.as_deref(), Some(challenge.as_str()), "{case}");
        tokens.extend(token.clone());
    }

    // A key the issuer adds later is fetched when a token names it.
    let before = fetches.load(Ordering::SeqCst);
    let (rotated, rotated_jwk) = key("k2");
    keys.lock().unwrap().push(rotated_jwk);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let token = sign(&rotated, "k2", &claims(json!({})));
    let (status, _) = initialize(&resource, Some(&token)).await;
    assert_eq!(status, 200);
    assert_eq!(fetches.load(Ordering::SeqCst), before + 1);
    // Known keys are not fetched again.
    let (status, _) = initialize(&resource, Some(&valid)).await;
    assert_eq!(status, 200);
    assert_eq!(fetches.load(Ordering::SeqCst), before + 1);
    tokens.push(token);

    assert!(seen.authorization.lock().unwrap().is_empty());
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("\"why\":\"expired\""), "{stderr}");
    assert!(stderr.contains("\"why\":\"wrong audience\""), "{stderr}");
    // No token, nor any part of one, in any log line.
    for token in &tokens {
        for part in token.split('.').filter(|part| part.len() >= 12) {
            assert!(!stderr.contains(part), "a token's part is logged: {part}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_still_open_after_the_grace_period_is_dropped_and_the_exit_is_0() {
    use tokio::io::AsyncWriteExt;
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let dir = workspace(
        "close",
        &format!("127.0.0.1:{port}"),
        &base,
        "shutdown_grace_seconds = 1",
        "",
    );
    let child = start(&dir, port, &[]).await;
    // A request whose body never ends: in flight through the grace period, and still open after.
    let mut stalled = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stalled
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let start = Instant::now();
    let (code, stderr) = terminate(child).await;
    let took = start.elapsed();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(took >= Duration::from_millis(2900), "{took:?}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert!(
        stderr.contains("connections still open at shutdown are dropped"),
        "{stderr}"
    );
    drop(stalled);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes a token store (owner-only, as `toolkit-gen login` writes it) holding `token` for the
/// MCP server at `url`.
fn token_store(path: &Path, url: &str, token: &str) {
    let grant = json!({
        "issuer": "http://127.0.0.1:9",
        "token_endpoint": "http://127.0.0.1:9/token",
        "client": { "client_id": "toolkit-gen" },
        "client_auth": "none",
        "access_token": token,
    });
    let text = json!({ "grants": { url: grant } }).to_string();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    std::io::Write::write_all(&mut options.open(path).unwrap(), text.as_bytes()).unwrap();
}

/// A gateway whose source is another gateway behind a token: the token `login` kept is sent;
/// a refused one makes the source's tools absent (the log says to run `login`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_source_sends_the_tokens_login_kept() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let up_port = free_port();
    let up = workspace(
        "oauth-upstream",
        &format!("127.0.0.1:{up_port}"),
        &base,
        "[serve.auth]\nmode = \"tokens\"\ntokens = [{ name = \"down\", env = \"UP_TOKEN\" }]",
        "",
    );
    let secret = "upstream-token-0123456789abcdef";
    let upstream = start(&up, up_port, &[("UP_TOKEN", secret)]).await;
    let up_url = format!("http://127.0.0.1:{up_port}/mcp");
    for (name, token, served) in [
        ("oauth-kept", secret, true),
        ("oauth-refused", "upstream-token-0123456789abcdeX", false),
    ] {
        let port = free_port();
        let dir = workspace(
            name,
            &format!("127.0.0.1:{port}"),
            &base,
            "",
            &format!(
                "[[sources]]\nname = \"up\"\nurl = \"{up_url}\"\noauth = {{ token_store = \"tokens.json\" }}\n"
            ),
        );
        token_store(&dir.join("tokens.json"), &up_url, token);
        let child = start(&dir, port, &[]).await;
        let tools = client(port, None).discover().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        assert!(names.contains(&"api__list_pets"), "{names:?}");
        assert_eq!(names.contains(&"up__api__list_pets"), served, "{names:?}");
        if served {
            let answer = client(port, None)
                .call(
                    "up__api__list_pets",
                    object(json!({})),
                    &toolkit_core::CallContext::new(),
                )
                .await
                .unwrap();
            assert_eq!(answer[0]["name"], "Rex", "{answer}");
        }
        let (code, stderr) = terminate(child).await;
        assert_eq!(code, Some(0), "{stderr}");
        assert!(!stderr.contains("upstream-token"), "{stderr}");
        assert!(stderr.contains("toolkit-gen login --mcp-url"), "{stderr}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let (code, stderr) = terminate(upstream).await;
    assert_eq!(code, Some(0), "{stderr}");
    std::fs::remove_dir_all(&up).unwrap();
}

/// The gateway runs with transparent huge pages off (mimalloc would otherwise back its segments
/// with 2 MiB pages, resident whole: a third of its memory; docs/performance.md).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_runs_without_transparent_huge_pages() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let dir = workspace("no-huge-pages", &format!("127.0.0.1:{port}"), &base, "", "");
    let child = start(&dir, port, &[]).await;
    let pid = child.id().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(status.contains("THP_enabled:\t0"), "{status}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Replicas on several machines share a Redis token store: the grant `login` put there is sent
/// upstream, the URL (with its password) comes from the environment and no log line shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_source_sends_the_tokens_kept_in_redis() {
    use toolkit_auth::{Grant, RedisStore, TokenStore as _};
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let up_port = free_port();
    let up = workspace(
        "redis-upstream",
        &format!("127.0.0.1:{up_port}"),
        &base,
        "[serve.auth]\nmode = \"tokens\"\ntokens = [{ name = \"down\", env = \"UP_TOKEN\" }]",
        "",
    );
    let secret = "upstream-token-0123456789abcdef";
    let upstream = start(&up, up_port, &[("UP_TOKEN", secret)]).await;
    let up_url = format!("http://127.0.0.1:{up_port}/mcp");
    let redis_port = free_port();
    let _redis = crate::support::Redis::start(redis_port, Some("redis-pass-0123"));
    let redis_url = format!("redis://:redis-pass-0123@127.0.0.1:{redis_port}/0");
    let grant: Grant = serde_json::from_value(json!({
        "issuer": "http://127.0.0.1:9",
        "token_endpoint": "http://127.0.0.1:9/token",
        "client": { "client_id": "toolkit-gen" },
        "client_auth": "none",
        "access_token": secret,
    }))
    .unwrap();
    RedisStore::new(&redis_url)
        .unwrap()
        .key_prefix("team:")
        .save(&up_url, &grant)
        .await
        .unwrap();
    let port = free_port();
    let dir = workspace(
        "redis-kept",
        &format!("127.0.0.1:{port}"),
        &base,
        "",
        &format!(
            "[[sources]]\nname = \"up\"\nurl = \"{up_url}\"\n\
             oauth = {{ token_store = {{ redis_url_env = \"TOKENS_REDIS\", key_prefix = \"team:\" }} }}\n"
        ),
    );
    let child = start(&dir, port, &[("TOKENS_REDIS", &redis_url)]).await;
    let answer = client(port, None)
        .call(
            "up__api__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["name"], "Rex", "{answer}");
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("upstream-token"), "{stderr}");
    assert!(!stderr.contains("redis-pass"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
    let (code, stderr) = terminate(upstream).await;
    assert_eq!(code, Some(0), "{stderr}");
    std::fs::remove_dir_all(&up).unwrap();
}

/// An OpenAPI source's `credentials` name the document's schemes: each operation carries the
/// credential of its requirement, read from the variable, and no log line shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openapi_sources_credentials_go_where_its_schemes_say() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let dir = workspace(
        "openapi-credentials",
        &format!("127.0.0.1:{port}"),
        &base,
        "",
        "\n[[sources]]\nname = \"secured\"\nopenapi = \"secured.json\"\n\
         base_url = \"BASE\"\ncredentials = { bearer = \"SECURED_TOKEN\" }\n"
            .replace("BASE", &base)
            .as_str(),
    );
    let secured = json!({
        "openapi": "3.1.0",
        "info": { "title": "secured", "version": "1" },
        "components": { "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } } },
        "security": [{ "bearer": [] }],
        "paths": { "/pets": { "get": { "operationId": "list_pets",
            "responses": { "200": { "description": "ok" } } } } }
    });
    std::fs::write(dir.join("secured.json"), secured.to_string()).unwrap();
    let token = "secured-token-0123456789";
    let child = start(&dir, port, &[("SECURED_TOKEN", token)]).await;
    let answer = client(port, None)
        .call(
            "secured__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(answer[0]["name"], "Rex", "{answer}");
    client(port, None)
        .call(
            "api__list_pets",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    // The secured source's call carried the token; the other source's carried none.
    assert_eq!(
        *seen.authorization.lock().unwrap(),
        vec![format!("Bearer {token}")]
    );
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains(token), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Keeps `value` as `principal`'s bearer credential for the source `secured` of the gateway in
/// `dir` (none: forgets theirs), in its sealed secrets file, as `toolkit-gen secrets set` and
/// `remove` do (the command line's tests run those).
async fn keep(dir: &Path, principal: &str, value: Option<&str>) {
    use toolkit_gateway::config::Config;
    use toolkit_gateway::person_secrets::{PersonSecrets, SealingKey};
    let config = Config::load(&dir.join("toolkit.toml")).unwrap();
    let source = config
        .sources
        .iter()
        .find(|source| source.name == "secured");
    let per_person = source
        .and_then(|source| source.per_person.as_ref())
        .unwrap();
    let key = SealingKey::from_base64(SECRETS_KEY).unwrap();
    let secrets = PersonSecrets::open(&per_person.secrets, key).unwrap();
    let entry = value.map(|value| [("bearer".to_owned(), value.to_owned())].into());
    secrets.set(principal, "secured", entry).await.unwrap();
}

/// The key that seals the test's secrets file (base64 of 32 bytes).
const SECRETS_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_persons_calls_carry_their_own_upstream_credential_and_no_one_elses() {
    let seen = Arc::new(Seen::default());
    let base = api(Arc::clone(&seen)).await;
    let port = free_port();
    let dir = workspace(
        "per-person",
        &format!("127.0.0.1:{port}"),
        &base,
        "[serve.auth]\nmode = \"tokens\"\ntokens = [{ name = \"alice\", env = \"TEAM_ALICE\" }, \
         { name = \"bob\", env = \"TEAM_BOB\" }, { name = \"carol\", env = \"TEAM_CAROL\" }]",
        "\n[[sources]]\nname = \"secured\"\nopenapi = \"secured.json\"\nbase_url = \"BASE\"\n\
         per_person = { secrets = \"people.secrets\", key_env = \"TEAM_SECRETS_KEY\" }\n"
            .replace("BASE", &base)
            .as_str(),
    );
    let secured = json!({
        "openapi": "3.1.0",
        "info": { "title": "secured", "version": "1" },
        "components": { "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } } },
        "security": [{ "bearer": [] }],
        "paths": { "/pets": { "get": { "operationId": "list_pets",
            "responses": { "200": { "description": "ok" } } } } }
    });
    std::fs::write(dir.join("secured.json"), secured.to_string()).unwrap();
    for person in ["alice", "bob"] {
        let secret = format!("{person}-upstream-secret");
        keep(&dir, &format!("token:{person}"), Some(&secret)).await;
    }
    assert!(
        !std::fs::read_to_string(dir.join("people.secrets"))
            .unwrap()
            .contains("secret")
    );

    let tokens = [
        ("TEAM_ALICE", "alice-gateway-token-0001"),
        ("TEAM_BOB", "bob-gateway-token-00002"),
        ("TEAM_CAROL", "carol-gateway-token-003"),
        ("TEAM_SECRETS_KEY", SECRETS_KEY),
        // Read only at the end: debug logs of many calls would fill the pipe and stall the
        // gateway's one thread.
        ("RUST_LOG", "warn"),
    ];
    let child = start(&dir, port, &tokens).await;
    let (alice, bob, carol) = (
        client(port, Some(tokens[0].1)),
        client(port, Some(tokens[1].1)),
        client(port, Some(tokens[2].1)),
    );
    let context = toolkit_core::CallContext::new();
    // Many calls of both at once: each carries its own person's credential.
    let calls = (0..40).map(|call| {
        let (who, context) = (if call % 2 == 0 { &alice } else { &bob }, &context);
        async move {
            who.call("secured__list_pets", object(json!({})), context)
                .await
        }
    });
    for answer in futures_util::future::join_all(calls).await {
        assert_eq!(answer.unwrap()[0]["name"], "Rex");
    }
    let carried = seen.authorization.lock().unwrap().clone();
    let count = |value: &str| carried.iter().filter(|seen| *seen == value).count();
    assert_eq!(count("Bearer alice-upstream-secret"), 20, "{carried:?}");
    assert_eq!(count("Bearer bob-upstream-secret"), 20, "{carried:?}");
    assert_eq!(carried.len(), 40, "{carried:?}");

    // Carol has connected nothing: she is told so, and nothing reaches the API for her.
    let refused = carol
        .call("secured__list_pets", object(json!({})), &context)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("connect it first"), "{refused}");
    assert!(!refused.contains("upstream-secret"), "{refused}");
    assert_eq!(seen.authorization.lock().unwrap().len(), 40);

    // Bob's credential removed while the gateway runs: his next call is refused, alice's goes on.
    keep(&dir, "token:bob", None).await;
    let refused = bob
        .call("secured__list_pets", object(json!({})), &context)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("connect it first"), "{refused}");
    alice
        .call("secured__list_pets", object(json!({})), &context)
        .await
        .unwrap();
    let (code, stderr) = terminate(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("upstream-secret"), "{stderr}");

    // A secrets file others may read stops the start, naming it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("people.secrets");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(dir.join("toolkit.toml"))
            .envs(tokens)
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("people.secrets") && stderr.contains("chmod 600"),
            "{stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
