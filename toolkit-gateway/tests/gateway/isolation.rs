//! Two people in front of one gateway, as a team runs it: `toolkit-gateway` over Streamable
//! HTTP with JWTs of a real authorization server (npm `oidc-provider`, `scripts/oidc-provider.mjs`:
//! alice and bob are two clients it registers, each with a token of the client credentials
//! grant), in front of npm `@modelcontextprotocol/server-everything`, whose tools ask their
//! client for a completion (sampling), a form (elicitation) and its roots. The clients are the
//! TypeScript SDK's (`team_client.cjs`): alice in an ordinary session, bob in one that never
//! says `notifications/initialized`; and the Python SDK's (`team_client.py`) for carol, stateless
//! (2026-07-28, no session). Nothing of one reaches the other: bob cannot use alice's
//! session id, what server-everything asks during bob's call goes to bob's client alone, and
//! one person cannot hold more sessions than the gateway gives each. And a policy that names
//! people (a group in the token's `groups` claim) shows each person their own tools, resources
//! and prompts, and lets each call only those.
#![allow(clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Killed, peer, provider, root};

/// A client the provider registers by dynamic registration for `grant_types`, holding `groups`
/// (its tokens' `groups` claim): its id and secret.
async fn register(
    http: &reqwest::Client,
    issuer: &str,
    (name, groups): (&str, &[&str]),
    grant_types: &[&str],
) -> (String, String) {
    let registered: Value = http
        .post(format!("{issuer}/reg"))
        .json(&json!({
            "client_name": name,
            "groups": groups,
            "grant_types": grant_types,
            "response_types": [],
            "redirect_uris": [],
            "token_endpoint_auth_method": "client_secret_basic",
            "scope": "tools",
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (
        registered["client_id"].as_str().unwrap().to_owned(),
        registered["client_secret"].as_str().unwrap().to_owned(),
    )
}

/// A person: a client the provider registers by dynamic registration, and its access token for
/// `resource` (client credentials; the token's `sub` is the client's id).
async fn person(
    http: &reqwest::Client,
    issuer: &str,
    who: (&str, &[&str]),
    resource: &str,
) -> String {
    let (id, secret) = register(http, issuer, who, &["client_credentials"]).await;
    let (id, secret) = (id.as_str(), secret.as_str());
    let token: Value = http
        .post(format!("{issuer}/token"))
        .basic_auth(id, Some(secret))
        .header("content-type", "application/x-www-form-urlencoded")
        // The resource is `http://127.0.0.1:PORT/mcp`: its `:` and `/` written as form-encoded.
        .body(format!(
            "grant_type=client_credentials&scope=tools&resource={}",
            resource.replace(':', "%3A").replace('/', "%2F")
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    token["access_token"].as_str().unwrap().to_owned()
}

/// The gateway on `port`, taking the provider's JWTs, in front of server-everything under a
/// policy allowing everything, or of what `policy_and_sources` says (with `env` set).
fn gateway(
    name: &str,
    port: u16,
    issuer: &str,
    (extra, policy_and_sources, env): (&str, Option<&str>, &[(&str, &str)]),
) -> Killed {
    let dir = std::env::temp_dir().join(format!("toolkit-isolation-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let everything =
        peer("mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let everyone = format!(
        "[policy]\ndefault = \"allow\"\n\n\
         [[sources]]\nname = \"everything\"\ncommand = [\"node\", \"{everything}\", \"stdio\"]\n"
    );
    let config = format!(
        "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n{extra}\n\
         [serve.auth]\nmode = \"jwt\"\nresource = \"http://127.0.0.1:{port}/mcp\"\n\
         issuer = \"{issuer}\"\njwks_url = \"{issuer}/jwks\"\nscopes = [\"tools\"]\n\n\
         [catalog]\nfile = \"{}\"\nrefresh_seconds = 0\n\n{}",
        dir.join("catalog.json").display(),
        policy_and_sources.unwrap_or(&everyone),
    );
    let path = dir.join("toolkit.toml");
    std::fs::write(&path, config).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(&path)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    Killed(child)
}

/// Waits until the gateway on `port` is ready.
async fn ready(http: &reqwest::Client, port: u16) {
    for _ in 0..300 {
        if let Ok(response) = http
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
            && response.status().is_success()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the gateway on {port} never got ready");
}

/// One person's TypeScript SDK client (`team_client.cjs`), driven line by line.
struct TeamClient {
    _child: Killed,
    input: ChildStdin,
    output: std::io::Lines<BufReader<ChildStdout>>,
    /// The session id the gateway gave it.
    session: Option<String>,
}

impl TeamClient {
    fn start(port: u16, name: &str, token: &str, skip_initialized: bool) -> Self {
        let mut child = Command::new("node")
            .arg(root().join("toolkit-gateway/tests/gateway/team_client.cjs"))
            .env("NODE_PATH", peer("mcp-npm/node_modules"))
            .env("MCP_URL", format!("http://127.0.0.1:{port}/mcp"))
            .env("TOKEN", token)
            .env("NAME", name)
            .env("SKIP_INITIALIZED", if skip_initialized { "1" } else { "0" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
        let first: Value = serde_json::from_str(&output.next().unwrap().unwrap()).unwrap();
        assert!(first.get("error").is_none(), "{name}: {first}");
        Self {
            _child: Killed(child),
            input,
            output,
            session: first["session"].as_str().map(str::to_owned),
        }
    }

    fn line(&mut self, line: &str) -> Value {
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
        serde_json::from_str(&self.output.next().unwrap().unwrap()).unwrap()
    }

    /// The result of calling `tool` (or the error the SDK threw), as its text.
    fn call(&mut self, tool: &str, arguments: Value) -> String {
        self.line(&json!({"tool": tool, "arguments": arguments}).to_string())
            .to_string()
    }

    /// Every request the gateway made of this client.
    fn asked(mut self) -> Vec<Value> {
        self.line("end")["asked"].as_array().cloned().unwrap()
    }
}

/// A raw request to the gateway with `token`, naming `session`: its status.
async fn status_of(
    http: &reqwest::Client,
    method: reqwest::Method,
    port: u16,
    token: &str,
    session: &str,
) -> u16 {
    let mut request = http
        .request(method.clone(), format!("http://127.0.0.1:{port}/mcp"))
        .bearer_auth(token)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("accept", "application/json, text/event-stream");
    if method == reqwest::Method::POST {
        request = request.json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    }
    request.send().await.unwrap().status().as_u16()
}

/// A team: the provider, a gateway (`[serve]` lines `extra` added, the policy and sources
/// `policy_and_sources` says, else server-everything for everyone) ready on a port of its own,
/// and a token for each of `people` (a name, and the groups its tokens carry).
struct Team {
    http: reqwest::Client,
    port: u16,
    tokens: Vec<String>,
    _running: (Killed, Killed),
}

async fn team(
    name: &str,
    gateway_config: (&str, Option<&str>),
    people: &[(&str, &[&str])],
) -> Team {
    let http = reqwest::Client::new();
    let port = crate::support::free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (issuer, provider) = provider(&resource);
    let mut tokens = Vec::new();
    for person_of_team in people {
        tokens.push(person(&http, &issuer, *person_of_team, &resource).await);
    }
    let gateway = gateway(
        name,
        port,
        &issuer,
        (gateway_config.0, gateway_config.1, &[]),
    );
    ready(&http, port).await;
    Team {
        http,
        port,
        tokens,
        _running: (provider, gateway),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_share_a_gateway_and_nothing_of_one_reaches_the_other() {
    let team = team(
        "two",
        ("", None),
        &[("alice", &[]), ("bob", &[]), ("carol", &[])],
    )
    .await;
    let (http, port) = (&team.http, team.port);
    let [alice_token, bob_token, carol_token] = team.tokens.clone().try_into().unwrap();

    let alice =
        tokio::task::spawn_blocking(move || TeamClient::start(port, "alice", &alice_token, false));
    let alice = alice.await.unwrap();
    let alice_session = alice.session.clone().expect("alice's session id");

    // Bob, with his own valid token, names alice's session: it is no session of his.
    for method in [
        reqwest::Method::POST,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    ] {
        let status = status_of(http, method.clone(), port, &bob_token, &alice_session).await;
        assert_eq!(status, 404, "bob's {method} in alice's session");
    }

    // Bob's client skips `notifications/initialized`: what the upstream asks during his calls
    // is still his, and alice's client is asked nothing.
    let token = bob_token.clone();
    let (mut bob, alice) = tokio::task::spawn_blocking(move || {
        let mut bob = TeamClient::start(port, "bob", &token, true);
        let sampled = bob.call(
            "everything__trigger-sampling-request",
            json!({"prompt": "hello", "maxTokens": 10}),
        );
        assert!(sampled.contains("sampled by bob"), "{sampled}");
        let roots = bob.call("everything__get-roots-list", json!({}));
        assert!(roots.contains("bob's home"), "{roots}");
        assert!(!roots.contains("alice"), "{roots}");
        let elicited = bob.call("everything__trigger-elicitation-request", json!({}));
        assert!(!elicited.contains("error"), "{elicited}");
        (bob, alice)
    })
    .await
    .unwrap();
    let _ = &mut bob;

    // Carol's client keeps no session at all (the stateless revision). The gateway cannot ask
    // her client during her call yet (that takes the revision's input-required results), so the
    // upstream's question is refused: what matters here is that no one else answers it.
    let carol = Command::new(peer("mcp-python/bin/python"))
        .arg(root().join("toolkit-gateway/tests/gateway/team_client.py"))
        .args([
            &format!("http://127.0.0.1:{port}/mcp"),
            carol_token.as_str(),
            "carol",
            "everything__trigger-sampling-request",
            r#"{"prompt": "hey", "maxTokens": 10}"#,
        ])
        .output()
        .unwrap();
    let carol: Value = serde_json::from_slice(&carol.stdout).unwrap_or_else(|_| {
        panic!(
            "{}\n{}",
            String::from_utf8_lossy(&carol.stdout),
            String::from_utf8_lossy(&carol.stderr)
        )
    });
    assert_eq!(carol["protocolVersion"], "2026-07-28", "{carol}");
    let answered = carol["result"].to_string();
    assert!(!answered.contains("sampled by"), "{carol}");
    assert!(answered.contains("-32601"), "refused, not guessed: {carol}");

    // Alice's session outlived bob's attempts: her own calls work, her own client answers them.
    let mut alice = alice;
    let sampled = tokio::task::spawn_blocking(move || {
        let sampled = alice.call(
            "everything__trigger-sampling-request",
            json!({"prompt": "hi", "maxTokens": 10}),
        );
        (sampled, alice)
    })
    .await
    .unwrap();
    let (sampled, alice) = sampled;
    assert!(sampled.contains("sampled by alice"), "{sampled}");

    let (alice_asked, bob_asked) =
        tokio::task::spawn_blocking(move || (alice.asked(), bob.asked()))
            .await
            .unwrap();
    let methods = |asked: &[Value]| -> Vec<String> {
        asked
            .iter()
            .map(|request| request["method"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(
        methods(&alice_asked),
        ["sampling/createMessage"],
        "alice was asked only for her own call: {alice_asked:?}"
    );
    let bob_methods = methods(&bob_asked);
    for method in ["sampling/createMessage", "roots/list", "elicitation/create"] {
        assert!(
            bob_methods.iter().any(|asked| asked == method),
            "{bob_asked:?}"
        );
    }
    // A relayed completion asks for no other server's context.
    for request in alice_asked.iter().chain(&bob_asked) {
        if request["method"] == "sampling/createMessage" {
            let context = &request["params"]["includeContext"];
            assert!(context.is_null() || context == "none", "{request}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_person_holds_no_more_sessions_than_the_gateway_gives_each() {
    let team = team(
        "cap",
        ("max_sessions_per_principal = 2\n", None),
        &[("alice", &[]), ("bob", &[])],
    )
    .await;
    let (http, port) = (&team.http, team.port);
    let [alice_token, bob_token] = team.tokens.clone().try_into().unwrap();

    let initialize = |token: &str| {
        http.post(format!("http://127.0.0.1:{port}/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}}),
            )
            .send()
    };
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let response = initialize(&alice_token).await.unwrap();
        assert_eq!(response.status(), 200);
        sessions.push(
            response.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
    }
    let refused = initialize(&alice_token).await.unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "30");
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("end one (DELETE)"),
        "{body}"
    );
    // Alice at her limit starves no one: bob opens his.
    assert_eq!(initialize(&bob_token).await.unwrap().status(), 200);
    // Alice ends one session, and may open another.
    let ended = http
        .delete(format!("http://127.0.0.1:{port}/mcp"))
        .bearer_auth(&alice_token)
        .header("mcp-session-id", &sessions[0])
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    let mut again = 0;
    for _ in 0..50 {
        again = initialize(&alice_token).await.unwrap().status().as_u16();
        if again == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(again, 200, "room again once a session ended");
}

/// The gateway's own MCP client with `token`.
fn client(port: u16, token: &str) -> toolkit_mcp::Mcp {
    crate::support::bearer_client(port, Some(token))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_person_sees_and_calls_what_the_policy_gives_their_groups() {
    use toolkit_core::ToolSource;

    let files = std::env::temp_dir().join(format!("toolkit-policy-files-{}", std::process::id()));
    std::fs::create_dir_all(&files).unwrap();
    let filesystem =
        peer("mcp-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let everything =
        peer("mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    // Read-only tools of the files for everyone; everything for admins; the rest for no one.
    let policy = format!(
        "[policy]\ndefault = \"block\"\n\n\
         [[policy.rules]]\nsource = \"files\"\nread_only = true\ndecision = \"allow\"\n\n\
         [[policy.rules]]\ngroups = [\"admins\"]\ndecision = \"allow\"\n\n\
         [[sources]]\nname = \"files\"\ncommand = [\"node\", \"{filesystem}\", \"{}\"]\n\n\
         [[sources]]\nname = \"everything\"\ncommand = [\"node\", \"{everything}\", \"stdio\"]\n",
        files.display()
    );
    let team = team(
        "policy",
        ("", Some(&policy)),
        &[("alice", &["staff", "admins"]), ("bob", &["staff"])],
    )
    .await;
    let (alice, bob) = (
        client(team.port, &team.tokens[0]),
        client(team.port, &team.tokens[1]),
    );
    let names = |tools: Vec<toolkit_core::ToolDefinition>| -> Vec<String> {
        tools.iter().map(|tool| tool.name().to_owned()).collect()
    };
    let alices = names(alice.discover().await.unwrap());
    let bobs = names(bob.discover().await.unwrap());
    assert!(
        alices.iter().any(|name| name == "files__write_file"),
        "{alices:?}"
    );
    assert!(
        alices.iter().any(|name| name.starts_with("everything__")),
        "{alices:?}"
    );
    assert!(
        bobs.iter().any(|name| name == "files__read_text_file"),
        "{bobs:?}"
    );
    assert!(
        bobs.iter().all(|name| name.starts_with("files__")
            && !["files__write_file", "files__edit_file", "files__move_file"]
                .contains(&name.as_str())),
        "bob sees the read-only tools of the files only: {bobs:?}"
    );

    // What bob is not shown, he cannot call: it is an unknown tool to him, and nothing is written.
    let input = |path: &str| {
        json!({"path": files.join(path).to_string_lossy(), "content": "hello"})
            .as_object()
            .cloned()
            .unwrap()
    };
    let context = toolkit_core::CallContext::new();
    let refused = bob
        .call("files__write_file", input("bob.txt"), &context)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("Unknown tool"), "{refused}");
    assert!(!files.join("bob.txt").exists());
    alice
        .call("files__write_file", input("alice.txt"), &context)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(files.join("alice.txt")).unwrap(),
        "hello"
    );
    let read = bob
        .call(
            "files__read_text_file",
            json!({"path": files.join("alice.txt").to_string_lossy()})
                .as_object()
                .cloned()
                .unwrap(),
            &context,
        )
        .await
        .unwrap();
    assert!(read.to_string().contains("hello"), "{read}");

    // Resources and prompts (server-everything's) are alice's alone.
    let alice_resources = alice.list_resources().await.unwrap();
    assert!(!alice_resources.is_empty());
    assert!(bob.list_resources().await.unwrap_or_default().is_empty());
    assert!(!alice.list_prompts().await.unwrap().is_empty());
    assert!(bob.list_prompts().await.unwrap_or_default().is_empty());
    let uri = alice_resources[0]["uri"].as_str().unwrap();
    let read = alice.read_resource(uri).await;
    assert!(read.is_ok(), "{uri}: {read:?}");
    assert!(
        bob.read_resource(uri).await.is_err(),
        "bob reads no resource of everything"
    );
    let _ = std::fs::remove_dir_all(&files);
}

/// An API on 127.0.0.1 that records the `Authorization` of each request (`GET /pets`): its base
/// URL and what it saw.
async fn recording_api() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let recorded = std::sync::Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/pets",
        axum::routing::get(move |headers: axum::http::HeaderMap| async move {
            let authorization = headers
                .get("authorization")
                .and_then(|value| value.to_str().ok())
                .unwrap_or("none")
                .to_owned();
            recorded.lock().unwrap().push(authorization);
            axum::Json(json!([{"id": 1, "name": "Rex"}]))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_persons_calls_carry_a_token_exchanged_for_theirs() {
    use toolkit_core::ToolSource;

    let http = reqwest::Client::new();
    let port = crate::support::free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (issuer, _provider) = provider(&resource);
    let alice_token = person(&http, &issuer, ("alice", &[]), &resource).await;
    let bob_token = person(&http, &issuer, ("bob", &[]), &resource).await;
    // The gateway's own client at the provider, which exchanges people's tokens (RFC 8693).
    let exchange = "urn:ietf:params:oauth:grant-type:token-exchange";
    let (gateway_id, gateway_secret) =
        register(&http, &issuer, ("gateway", &[]), &[exchange]).await;
    let (api, seen) = recording_api().await;
    let dir = std::env::temp_dir().join(format!("toolkit-on-behalf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let document = json!({
        "openapi": "3.1.0",
        "info": { "title": "pets", "version": "1" },
        "components": { "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } } },
        "security": [{ "bearer": [] }],
        "paths": { "/pets": { "get": { "operationId": "list_pets",
            "responses": { "200": { "description": "ok" } } } } }
    });
    std::fs::write(dir.join("pets.json"), document.to_string()).unwrap();
    let source = |name: &str, secret_env: &str| {
        format!(
            "[[sources]]\nname = \"{name}\"\nopenapi = \"{}\"\nbase_url = \"{api}\"\n\
             on_behalf_of = {{ token_endpoint = \"{issuer}/token\", client_id = \"{gateway_id}\", \
             client_secret_env = \"{secret_env}\", audience = \"https://pets.example\", \
             scheme = \"bearer\" }}\n\n",
            dir.join("pets.json").display()
        )
    };
    let sources = format!(
        "[policy]\ndefault = \"allow\"\n\n{}{}",
        source("pets", "GATEWAY_EXCHANGE_SECRET"),
        source("refused", "WRONG_EXCHANGE_SECRET")
    );
    let _gateway = gateway(
        "on-behalf",
        port,
        &issuer,
        (
            "",
            Some(&sources),
            &[
                ("GATEWAY_EXCHANGE_SECRET", gateway_secret.as_str()),
                ("WRONG_EXCHANGE_SECRET", "not-the-secret"),
            ],
        ),
    );
    ready(&http, port).await;
    let (alice, bob) = (client(port, &alice_token), client(port, &bob_token));
    let context = toolkit_core::CallContext::new();
    let input = || json!({}).as_object().cloned().unwrap();
    for (who, times) in [(&alice, 3), (&bob, 2)] {
        for _ in 0..times {
            let answer = who
                .call("pets__list_pets", input(), &context)
                .await
                .unwrap();
            assert_eq!(answer[0]["name"], "Rex", "{answer}");
        }
    }
    let carried = seen.lock().unwrap().clone();
    assert_eq!(carried.len(), 5, "{carried:?}");
    // Each person's calls carried one token of their own (exchanged once, then kept), never their
    // token for the gateway, never the other's.
    assert!(
        carried[..3].iter().all(|token| *token == carried[0]),
        "{carried:?}"
    );
    assert!(
        carried[3..].iter().all(|token| *token == carried[3]),
        "{carried:?}"
    );
    assert_ne!(carried[0], carried[3]);
    for token in &carried {
        assert!(token.starts_with("Bearer "), "{token}");
        assert!(!token.contains(&alice_token) && !token.contains(&bob_token));
    }
    let exchanges: Value = http
        .get(format!("{issuer}/exchanges"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        exchanges.as_object().unwrap().values().collect::<Vec<_>>(),
        [&json!(1), &json!(1)],
        "one exchange per person: {exchanges}"
    );

    // An exchange the authorization server refuses: the model reads that no token was given, and
    // nothing reaches the API.
    let refused = alice
        .call("refused__list_pets", input(), &context)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("did not give a token"), "{refused}");
    assert!(!refused.contains("not-the-secret") && !refused.contains(&alice_token));
    assert_eq!(seen.lock().unwrap().len(), 5);
    let _ = std::fs::remove_dir_all(&dir);
}
