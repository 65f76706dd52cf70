//! People connecting their own accounts to an upstream MCP server through the gateway
//! (`oauth = { per_person = true }`), against a real authorization server: npm `oidc-provider`
//! (`scripts/oidc-provider.mjs`, whose scripted user signs in and consents) in front of the MCP
//! server its tokens are for (the fixture of `toolkit-runtime-tests`' `oidc_provider.rs`, here in
//! process, answering `tools/call` too and recording the token each call carried). The gateway
//! takes alice's and bob's opaque tokens; its tools are listed with the source's own grant
//! (`toolkit-gen login`, `BROWSER` a `curl` that keeps cookies). Alice's first call asks her
//! client (the TypeScript SDK's, `connect_client.cjs`, declaring URL-mode elicitation) to open
//! the gateway's connect page; the test follows it as her browser would (connect page →
//! authorization server → the gateway's callback); the call goes on with her own grant, and so do
//! the next ones, while bob, who has none, is asked himself; a client without URL elicitation is
//! failed with the link; a forged `state` is refused; `toolkit-gen connections` lists alice alone
//! and revokes her grant, after which her next call asks her again.
#![allow(clippy::panic)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};

use crate::support::{Killed, peer, provider, root};

/// The MCP server the tokens are for: its resource metadata names the provider; a request needs
/// a JWT for its audience that has not expired; tool `echo` answers, and the token of each call
/// is recorded in `seen`.
async fn mcp_server(issuer: Arc<Mutex<String>>, seen: Arc<Mutex<Vec<String>>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let resource = format!("{base}/mcp");
    let answer = resource.clone();
    let handle = move |uri: Uri, headers: HeaderMap, body: String| {
        let (issuer, resource, base, seen) =
            (issuer.clone(), resource.clone(), base.clone(), seen.clone());
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
                    let Some(token) = live_token(&headers, &resource) else {
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
                    };
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
                        "tools/call" => {
                            seen.lock().unwrap().push(token);
                            json!({"content": [{"type": "text", "text": "echoed"}]})
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
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    answer
}

/// The bearer token of `headers`, if it is a JWT for `audience` that has not expired.
fn live_token(headers: &HeaderMap, audience: &str) -> Option<String> {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))?;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (claims["aud"] == audience && claims["exp"].as_u64().is_some_and(|exp| exp > now))
        .then(|| token.to_owned())
}

/// A browser: follows `url`'s redirects (keeping cookies) until a page answers; its status and
/// text.
async fn browse(url: &str) -> (u16, String) {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut cookies = BTreeMap::new();
    let mut at: reqwest::Url = url.parse().unwrap();
    for _ in 0..15 {
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
            .unwrap();
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
            let status = answer.status().as_u16();
            return (status, answer.text().await.unwrap_or_default());
        };
        at = at.join(location).unwrap();
    }
    panic!("too many redirects from {url}");
}

/// One person's TypeScript SDK client (`connect_client.cjs`), driven line by line.
struct ConnectClient {
    _child: Killed,
    input: ChildStdin,
    output: std::io::Lines<BufReader<ChildStdout>>,
}

impl ConnectClient {
    fn start(port: u16, token: &str, url_elicitation: bool) -> Self {
        let mut child = Command::new("node")
            .arg(root().join("toolkit-cli/tests/cli/connect_client.cjs"))
            .env("NODE_PATH", peer("mcp-npm/node_modules"))
            .env("MCP_URL", format!("http://127.0.0.1:{port}/mcp"))
            .env("TOKEN", token)
            .env("URL_ELICITATION", if url_elicitation { "1" } else { "0" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
        let first: Value = serde_json::from_str(&output.next().unwrap().unwrap()).unwrap();
        assert!(first.get("error").is_none(), "{first}");
        Self {
            _child: Killed(child),
            input,
            output,
        }
    }

    /// Calls `guarded__echo`.
    fn call(&mut self) {
        let line = json!({"tool": "guarded__echo", "arguments": {}}).to_string();
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
    }

    /// The next line the client prints.
    async fn next(&mut self) -> Value {
        let line = tokio::task::block_in_place(|| self.output.next().unwrap().unwrap());
        serde_json::from_str(&line).unwrap()
    }
}

/// Runs `toolkit-gen` with `args`: whether it succeeded, its stdout and stderr.
async fn toolkit_gen(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The grant kept under `key` in the token file at `path`.
fn grant(path: &Path, key: &str) -> Value {
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    kept["grants"][key].clone()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_person_connects_their_own_account_through_the_gateway() {
    let dir = std::env::temp_dir().join(format!("toolkit-connect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (issuer, seen) = (Arc::new(Mutex::new(String::new())), Arc::default());
    let upstream = mcp_server(Arc::clone(&issuer), Arc::clone(&seen)).await;
    let (provider_issuer, _provider) = provider(&upstream);
    *issuer.lock().unwrap() = provider_issuer.clone();
    let tokens = dir.join("tokens.json");
    let tokens_text = tokens.to_string_lossy().into_owned();

    // The source's own grant, which lists its tools: `toolkit-gen login`, its browser a curl
    // keeping cookies through the provider's interactions.
    let browser = format!(
        "curl --silent --location --output /dev/null --cookie-jar {}",
        dir.join("cookies").display()
    );
    let (ok, stdout, stderr) = toolkit_gen(
        &[
            "login",
            "--mcp-url",
            &upstream,
            "--token-store",
            &tokens_text,
        ],
        &[("BROWSER", &browser)],
    )
    .await;
    assert!(ok, "{stdout}{stderr}");

    let port = free_port();
    let config = format!(
        "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\n\
         [serve.auth]\nmode = \"tokens\"\n\
         tokens = [{{ name = \"alice\", env = \"TOKEN_ALICE\" }}, {{ name = \"bob\", env = \"TOKEN_BOB\" }}]\n\n\
         [policy]\ndefault = \"allow\"\n\n\
         [catalog]\nfile = \"{catalog}\"\nrefresh_seconds = 0\n\n\
         [[sources]]\nname = \"guarded\"\nurl = \"{upstream}\"\n\
         oauth = {{ token_store = \"{tokens_text}\", per_person = true }}\n",
        catalog = dir.join("catalog.json").display(),
    );
    let config_path = dir.join("toolkit.toml");
    std::fs::write(&config_path, config).unwrap();
    let config_text = config_path.to_string_lossy().into_owned();
    let (alice_token, bob_token) = ("alice-secret-token-1", "bob-secret-token-2");
    let _gateway = Killed(
        Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
            .args(["serve", "--config", &config_text])
            .env("TOKEN_ALICE", alice_token)
            .env("TOKEN_BOB", bob_token)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let http = reqwest::Client::new();
    let mut ready = false;
    for _ in 0..300 {
        if let Ok(answer) = http
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
            && answer.status().is_success()
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "the gateway never got ready");

    // Alice's first call: her client is asked to open the gateway's connect page.
    let mut alice = ConnectClient::start(port, alice_token, true);
    alice.call();
    let asked = alice.next().await;
    let link = asked["open"].as_str().unwrap_or_default().to_owned();
    assert!(
        link.starts_with(&format!("http://127.0.0.1:{port}/connect/")),
        "{asked}"
    );
    assert_eq!(asked["params"]["mode"], "url", "{asked}");
    let elicitation = asked["params"]["elicitationId"].clone();
    assert!(elicitation.is_string(), "{asked}");

    // A callback whose state matches no pending connection is refused, and so is a link that
    // is not one.
    let (status, _) = browse(&format!(
        "http://127.0.0.1:{port}/oauth/callback?code=stolen&state=forged"
    ))
    .await;
    assert_eq!(status, 400);
    let (status, _) = browse(&format!(
        "http://127.0.0.1:{port}/connect/00000000000000000000000000000000"
    ))
    .await;
    assert_eq!(status, 404);

    // Her browser: the connect page, the authorization server (she signs in), the callback.
    let (status, page) = browse(&link).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Connected"), "{page}");
    let done = alice.next().await;
    assert_eq!(done["result"]["content"][0]["text"], "echoed", "{done}");
    assert_eq!(done["completed"][0]["elicitationId"], elicitation, "{done}");
    let alice_grant = grant(&tokens, "guarded#token:alice");
    let shared_grant = grant(&tokens, &upstream);
    let alice_access = alice_grant["access_token"].as_str().unwrap().to_owned();
    assert_ne!(alice_grant["access_token"], shared_grant["access_token"]);
    assert_eq!(seen.lock().unwrap().last(), Some(&alice_access));
    // The link was used: it leads nowhere now.
    let (status, _) = browse(&link).await;
    assert_eq!(status, 404);

    // Her next calls go straight on, with her own grant.
    alice.call();
    let again = alice.next().await;
    assert_eq!(again["result"]["content"][0]["text"], "echoed", "{again}");
    assert_eq!(seen.lock().unwrap().last(), Some(&alice_access));

    // Bob has no grant: he is asked himself (a link of his own), and his call does not reach
    // the upstream.
    let calls = seen.lock().unwrap().len();
    let mut bob = ConnectClient::start(port, bob_token, true);
    bob.call();
    let bob_asked = bob.next().await;
    let bob_link = bob_asked["open"].as_str().unwrap_or_default().to_owned();
    assert!(bob_link.contains("/connect/"), "{bob_asked}");
    assert_ne!(bob_link, link);
    drop(bob);
    // A client of bob's without URL elicitation: the failure carries his link.
    let mut bob_plain = ConnectClient::start(port, bob_token, false);
    bob_plain.call();
    let failed = bob_plain.next().await.to_string();
    assert!(failed.contains(&bob_link), "{failed}");
    assert!(failed.contains("has not connected"), "{failed}");
    assert!(!failed.contains(&alice_access));
    assert_eq!(seen.lock().unwrap().len(), calls);

    // `connections list` shows alice alone, and no token.
    let (ok, listed, stderr) = toolkit_gen(
        &[
            "connections",
            "list",
            "--config",
            &config_text,
            "--source",
            "guarded",
        ],
        &[],
    )
    .await;
    assert!(ok, "{listed}{stderr}");
    assert!(listed.starts_with("token:alice\t"), "{listed}");
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(listed.contains(&provider_issuer), "{listed}");
    assert!(!listed.contains(&alice_access));
    if let Some(refresh) = alice_grant["refresh_token"].as_str() {
        assert!(!listed.contains(refresh));
    }

    // `revoke` forgets her grant: her next call asks her again.
    let (ok, revoked, stderr) = toolkit_gen(
        &[
            "connections",
            "revoke",
            "--config",
            &config_text,
            "--source",
            "guarded",
            "--principal",
            "token:alice",
        ],
        &[],
    )
    .await;
    assert!(ok, "{revoked}{stderr}");
    assert!(grant(&tokens, "guarded#token:alice").is_null());
    let (ok, listed, _) = toolkit_gen(
        &[
            "connections",
            "list",
            "--config",
            &config_text,
            "--source",
            "guarded",
        ],
        &[],
    )
    .await;
    assert!(ok && listed.is_empty(), "{listed}");
    alice.call();
    let asked_again = alice.next().await;
    let new_link = asked_again["open"].as_str().unwrap_or_default();
    assert!(new_link.contains("/connect/"), "{asked_again}");
    assert_ne!(new_link, link);
    drop(alice);
    drop(bob_plain);
    let _ = std::fs::remove_dir_all(&dir);
}
