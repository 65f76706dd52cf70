//! Integration tests of toolkit-auth, in one binary (one link) with a module per concern.
//!
//! The MCP authorization client (`OAuthClient`) against an MCP server and authorization server
//! of the tests on 127.0.0.1 that go wrong in every way the brief lists: each a clear
//! `Authentication` or `Unavailable` failure naming no secret, and nothing panics. (The good
//! paths are the official conformance suite's, in `tests/` of the workspace.) Beside it, in
//! modules of their own: an HTTP source's client credentials and a user's authorization, the
//! token stores, and a real authorization server (npm `oidc-provider`).
#![allow(clippy::unwrap_used, clippy::panic)]

mod authorization_code;
mod client_credentials;
mod fixture;
mod oidc_provider;
#[cfg(feature = "redis-store")]
mod redis_store;
mod store;
// Shared with toolkit-core's tests, where it lives.
#[path = "../../../toolkit-core/tests/core/support.rs"]
mod support;

use std::time::Duration;

use fixture::{Headless, Knobs, Never, Servers, start};
use serde_json::json;
use toolkit_auth::{
    AuthorizationCallback, FileStore, Grant, MemoryStore, OAuthClient, OAuthOptions, TokenStore,
};
use toolkit_core::{Reason, ToolSource, ToolSourceError};
use toolkit_mcp::{Mcp, McpOptions};

use crate::support::object;

/// Secrets the fixture hands out; none may appear in a failure.
const SECRETS: &[&str] = &[
    "access-token",
    "refresh-token",
    "the-code-value",
    "client-secret-value",
];

fn options() -> OAuthOptions {
    OAuthOptions::default()
        .request_timeout(Duration::from_millis(800))
        .authorization_timeout(Duration::from_millis(800))
}

fn client(servers: &Servers, callback: impl AuthorizationCallback) -> OAuthClient {
    OAuthClient::builder(servers.url.clone(), callback)
        .options(options())
        .build()
        .unwrap()
}

fn source(servers: &Servers, client: OAuthClient) -> Mcp {
    let options = McpOptions::default().timeout(Duration::from_secs(10));
    Mcp::http_with_options("guarded", servers.url.clone(), client, options)
}

/// Asserts `error` is a failure of `kind` that names no secret, in its description or in what
/// a model reads.
fn assert_clean(error: &ToolSourceError, authentication: bool) {
    match (&error.reason, authentication) {
        (Reason::Authentication { .. }, true) | (Reason::Unavailable { .. }, false) => {}
        (reason, _) => panic!("unexpected reason {reason:?}"),
    }
    let words = format!("{error} {:?} {:?}", error.reason, error.to_failure());
    for secret in SECRETS {
        assert!(!words.contains(secret), "{secret} in {words}");
    }
}

async fn discover(
    servers: &Servers,
    callback: impl AuthorizationCallback,
) -> Result<(), ToolSourceError> {
    source(servers, client(servers, callback))
        .discover()
        .await
        .map(|_| ())
}

#[tokio::test]
async fn auth_a_good_server_is_authorized_once_and_its_token_used() {
    let servers = start(Knobs::default()).await;
    let oauth = client(&servers, Headless);
    let mcp = source(&servers, oauth.clone());
    assert_eq!(mcp.discover().await.unwrap().len(), 1);
    mcp.call("echo", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(servers.issued(), 1);
    assert_eq!(servers.seen("/register").len(), 1);
    // client_secret_post as the server lists: the secret in the body, no Basic header.
    let token_request = &servers.seen("/token")[0];
    assert!(
        token_request
            .body
            .contains("client_secret=client-secret-value")
    );
    assert!(token_request.headers.get("authorization").is_none());
    assert!(token_request.body.contains("resource="));
    // The grant's Debug shows no secret.
    let grant = oauth.grant().unwrap();
    let shown = format!("{grant:?} {oauth:?}");
    for secret in SECRETS {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}

#[tokio::test]
async fn auth_malformed_metadata_is_refused() {
    for (resource, server) in [
        (Some("not json at all"), None),
        (Some(r#"{"resource": 5}"#), None),
        (Some(r#"["a list"]"#), None),
        (
            Some(r#"{"resource": "http://127.0.0.1:1/mcp", "authorization_servers": []}"#),
            None,
        ),
        (None, Some(r#"{"issuer": 7}"#)),
        (None, Some("<html>metadata</html>")),
    ] {
        let servers = start(Knobs {
            resource_metadata: resource.map(str::to_owned),
            server_metadata: server.map(str::to_owned),
            ..Knobs::default()
        })
        .await;
        let error = discover(&servers, Headless).await.unwrap_err();
        assert_clean(&error, true);
        assert!(servers.seen("/authorize").is_empty());
    }
}

#[tokio::test]
async fn auth_metadata_that_names_another_resource_or_lacks_pkce_is_refused() {
    let servers = start(Knobs {
        resource_metadata: Some(
            r#"{"resource": "https://evil.example.com/mcp", "authorization_servers": ["https://evil.example.com"]}"#.into(),
        ),
        ..Knobs::default()
    })
    .await;
    assert_clean(&discover(&servers, Headless).await.unwrap_err(), true);
    assert!(servers.seen("/authorize").is_empty());

    let servers = start(Knobs::default()).await;
    let no_pkce = json!({
        "issuer": servers.base,
        "authorization_endpoint": format!("{}/authorize", servers.base),
        "token_endpoint": format!("{}/token", servers.base),
        "response_types_supported": ["code"],
    });
    let servers = start(Knobs {
        server_metadata: Some(
            no_pkce
                .to_string()
                .replace(&servers.base, "http://127.0.0.1:1"),
        ),
        ..Knobs::default()
    })
    .await;
    assert_clean(&discover(&servers, Headless).await.unwrap_err(), true);
    assert!(servers.seen("/authorize").is_empty());
}

#[tokio::test]
async fn auth_an_authorization_server_on_another_origin_than_its_metadata_claims_is_refused() {
    // The metadata fetched from this origin says its issuer is another one.
    let servers = start(Knobs {
        server_metadata: Some(
            json!({
                "issuer": "http://127.0.0.1:1",
                "authorization_endpoint": "http://127.0.0.1:1/authorize",
                "token_endpoint": "http://127.0.0.1:1/token",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            })
            .to_string(),
        ),
        ..Knobs::default()
    })
    .await;
    let error = discover(&servers, Headless).await.unwrap_err();
    assert_clean(&error, true);
    assert!(error.to_string().contains("another issuer"), "{error}");
}

#[tokio::test]
async fn auth_a_token_endpoint_answering_html_or_500_fails_clearly() {
    let servers = start(Knobs {
        token_answer: Some((200, "text/html", "<html><body>Sign in</body></html>".into())),
        ..Knobs::default()
    })
    .await;
    assert_clean(&discover(&servers, Headless).await.unwrap_err(), true);

    let servers = start(Knobs {
        token_answer: Some((500, "text/html", "<html>Internal error</html>".into())),
        ..Knobs::default()
    })
    .await;
    assert_clean(&discover(&servers, Headless).await.unwrap_err(), false);

    let servers = start(Knobs {
        token_answer: Some((
            400,
            "application/json",
            r#"{"error": "invalid_client", "error_description": "client-secret-value is wrong"}"#
                .into(),
        )),
        ..Knobs::default()
    })
    .await;
    let error = discover(&servers, Headless).await.unwrap_err();
    assert_clean(&error, true);
    assert!(error.to_string().contains("invalid_client"), "{error}");
}

#[tokio::test]
async fn auth_a_redirect_with_a_wrong_state_is_refused_before_any_token_request() {
    let servers = start(Knobs {
        wrong_state: true,
        ..Knobs::default()
    })
    .await;
    let error = discover(&servers, Headless).await.unwrap_err();
    assert_clean(&error, true);
    assert!(error.to_string().contains("state"), "{error}");
    assert!(servers.seen("/token").is_empty());
}

#[tokio::test]
async fn auth_a_huge_or_broken_challenge_is_read_as_none_and_the_well_known_metadata_used() {
    for challenge in [
        format!(
            r#"Bearer scope="{}", resource_metadata="http://127.0.0.1:1/x""#,
            "a ".repeat(5 * 1024)
        ),
        r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:1/never-closed"#
            .to_owned(),
        "\"\"\"=,=,".to_owned(),
    ] {
        let servers = start(Knobs {
            challenge: Some(challenge),
            ..Knobs::default()
        })
        .await;
        discover(&servers, Headless).await.unwrap();
        assert_eq!(
            servers
                .seen("/.well-known/oauth-protected-resource/mcp")
                .len(),
            1
        );
    }
}

#[tokio::test]
async fn auth_a_token_expiring_mid_use_is_refreshed_or_authorized_again() {
    // With refresh tokens: refreshed once, no second authorization.
    let servers = start(Knobs {
        lifetime: Some(Duration::from_secs(1)),
        refresh_tokens: true,
        ..Knobs::default()
    })
    .await;
    let oauth = OAuthClient::builder(servers.url.clone(), Headless)
        .options(options().refresh_margin(Duration::ZERO))
        .build()
        .unwrap();
    let mcp = source(&servers, oauth);
    mcp.discover().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    mcp.call("echo", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    let grants: Vec<String> = servers
        .seen("/token")
        .iter()
        .map(|s| {
            if s.body.contains("grant_type=refresh_token") {
                "refresh"
            } else {
                "code"
            }
            .to_owned()
        })
        .collect();
    assert_eq!(grants, ["code", "refresh"]);
    assert_eq!(servers.seen("/authorize").len(), 1);

    // Without: authorized again.
    let servers = start(Knobs {
        lifetime: Some(Duration::from_secs(1)),
        ..Knobs::default()
    })
    .await;
    let mcp = source(&servers, client(&servers, Headless));
    mcp.discover().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    mcp.call("echo", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(servers.seen("/authorize").len(), 2);

    // A refresh the server fails: unavailable.
    let servers = start(Knobs {
        lifetime: Some(Duration::from_secs(1)),
        refresh_tokens: true,
        refresh_fails: true,
        ..Knobs::default()
    })
    .await;
    let mcp = source(&servers, client(&servers, Headless));
    mcp.discover().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_clean(
        &mcp.call("echo", object(json!({})), &toolkit_core::CallContext::new())
            .await
            .unwrap_err(),
        false,
    );
}

#[tokio::test]
async fn auth_a_token_endpoint_that_never_answers_hits_the_request_timeout() {
    let servers = start(Knobs {
        token_stalls: true,
        ..Knobs::default()
    })
    .await;
    let started = std::time::Instant::now();
    assert_clean(&discover(&servers, Headless).await.unwrap_err(), false);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn auth_a_user_who_never_comes_back_hits_the_authorization_timeout() {
    let servers = start(Knobs::default()).await;
    let started = std::time::Instant::now();
    let error = discover(&servers, Never).await.unwrap_err();
    assert_clean(&error, true);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(servers.seen("/token").is_empty());
}

#[tokio::test]
async fn auth_metadata_over_the_size_cap_is_refused() {
    let padding = "x".repeat(toolkit_auth::MAX_METADATA_BYTES);
    let servers = start(Knobs::default()).await;
    let huge = json!({
        "resource": format!("{}/mcp", servers.base),
        "authorization_servers": [servers.base],
        "padding": padding,
    });
    drop(servers);
    let servers = start(Knobs {
        resource_metadata: Some(huge.to_string()),
        ..Knobs::default()
    })
    .await;
    let error = discover(&servers, Headless).await.unwrap_err();
    assert_clean(&error, true);
    assert!(error.to_string().contains("bytes"), "{error}");
}

#[test]
fn auth_a_redirect_uri_off_loopback_is_refused() {
    struct Remote;
    impl AuthorizationCallback for Remote {
        fn redirect_uri(&self) -> reqwest::Url {
            "https://app.example.com/callback".parse().unwrap()
        }
        fn authorize(
            &self,
            _: reqwest::Url,
        ) -> toolkit_core::BoxFuture<'_, Result<reqwest::Url, toolkit_auth::AuthError>> {
            Box::pin(std::future::pending())
        }
    }
    let built =
        OAuthClient::builder("https://mcp.example.com/mcp".parse().unwrap(), Remote).build();
    assert!(built.is_err());
}

#[tokio::test]
async fn auth_the_file_store_is_owner_only_and_refuses_a_file_others_read() {
    use std::os::unix::fs::PermissionsExt;
    let folder = std::env::temp_dir().join(format!("toolkit-auth-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let path = folder.join("nested/tokens.json");
    let servers = start(Knobs::default()).await;
    let oauth = OAuthClient::builder(servers.url.clone(), Headless)
        .store(FileStore::new(&path))
        .options(options())
        .build()
        .unwrap();
    source(&servers, oauth).discover().await.unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let folder_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(folder_mode & 0o777, 0o700);

    // A later client reads the grant back and authorizes no more.
    let store = FileStore::new(&path);
    let grant: Grant = store.load(servers.url.as_str()).await.unwrap().unwrap();
    assert!(grant.access_token.expose().starts_with("access-token-"));
    let oauth = OAuthClient::builder(servers.url.clone(), Never)
        .store(FileStore::new(&path))
        .options(options())
        .build()
        .unwrap();
    source(&servers, oauth).discover().await.unwrap();
    assert_eq!(servers.seen("/authorize").len(), 1);

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(store.load(servers.url.as_str()).await.is_err());
    let _ = std::fs::remove_dir_all(&folder);

    // The memory store keeps grants apart by server.
    let memory = MemoryStore::new();
    memory.save("a", &grant).await.unwrap();
    assert!(memory.load("b").await.unwrap().is_none());
    memory.remove("a").await.unwrap();
    assert!(memory.load("a").await.unwrap().is_none());
}

#[tokio::test]
async fn auth_login_ahead_through_a_loopback_listener_then_requests_need_no_user() {
    use toolkit_auth::{LoopbackCallback, MAX_CALLBACK_REQUEST_BYTES};
    let servers = start(Knobs::default()).await;
    // The "browser": first a stray request, one over the size cap and a forged redirect, then
    // the authorization URL, whose redirect lands on the listener.
    let callback = LoopbackCallback::bind(0, |url| {
        let url = url.clone();
        tokio::spawn(async move {
            let redirect = {
                let http = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .unwrap();
                let answer = http.get(url.clone()).send().await.unwrap();
                let location = answer.headers()["location"].to_str().unwrap().to_owned();
                url.join(&location).unwrap()
            };
            let browser = reqwest::Client::new();
            let mut stray = redirect.clone();
            stray.set_path("/favicon.ico");
            assert_eq!(browser.get(stray).send().await.unwrap().status(), 404);
            let mut huge = redirect.clone();
            huge.set_query(Some(&"x".repeat(MAX_CALLBACK_REQUEST_BYTES)));
            let _ = browser.get(huge).send().await;
            // A forged redirect with another state: an error page, and the wait goes on.
            let mut forged = redirect.clone();
            forged.set_query(Some("code=forged&state=wrong"));
            let refused = browser.get(forged).send().await.unwrap();
            assert_eq!(refused.status(), 400);
            assert!(
                refused
                    .text()
                    .await
                    .unwrap()
                    .contains("not the authorization")
            );
            let landed = browser.get(redirect).send().await.unwrap();
            assert_eq!(landed.status(), 200);
        });
        Ok(())
    })
    .await
    .unwrap();
    assert!(
        callback
            .redirect_uri()
            .as_str()
            .starts_with("http://127.0.0.1:")
    );
    let oauth = OAuthClient::builder(servers.url.clone(), callback)
        .options(options().authorization_timeout(Duration::from_secs(5)))
        .build()
        .unwrap();
    let grant = oauth.login().await.unwrap();
    assert!(grant.resource.unwrap().ends_with("/mcp"));
    let mcp = source(&servers, oauth.clone());
    mcp.discover().await.unwrap();
    assert_eq!(servers.seen("/authorize").len(), 1);
    oauth.logout().await.unwrap();
    assert!(oauth.grant().is_none());
}

#[tokio::test]
async fn auth_secrets_go_only_to_the_issuer_they_are_for() {
    use toolkit_auth::{ClientAuth, MachineCredentials, RegisteredClient, Secret};
    let servers = start(Knobs::default()).await;
    // A machine client whose secret is for another authorization server than the one this MCP
    // server names: refused, naming both, and the token endpoint never hears of it.
    let oauth = OAuthClient::machine(
        servers.url.clone(),
        MachineCredentials::secret("agent-7", "client-secret-value"),
    )
    .issuer("https://auth.example.com")
    .options(options())
    .build()
    .unwrap();
    let error = source(&servers, oauth).discover().await.unwrap_err();
    assert_clean(&error, true);
    let words = error.to_string();
    assert!(
        words.contains("https://auth.example.com") && words.contains(&servers.base),
        "{words}"
    );
    assert!(servers.seen("/token").is_empty());

    // A pre-registered client with no issuer configured: bound to the issuer of the grant in the
    // store (the one `login` recorded), so a server that now names another gets nothing.
    let store = MemoryStore::new();
    let recorded = Grant {
        issuer: "https://auth.example.com".into(),
        token_endpoint: "https://auth.example.com/token".into(),
        resource: None,
        client: RegisteredClient::new("agent-7", Some(Secret::new("client-secret-value"))),
        client_auth: ClientAuth::ClientSecretBasic,
        access_token: Secret::new("access-token-stale"),
        refresh_token: None,
        expires_at: None,
        scopes: Vec::new(),
        granted: None,
    };
    store.save(servers.url.as_str(), &recorded).await.unwrap();
    let oauth = OAuthClient::builder(servers.url.clone(), Headless)
        .pre_registered(RegisteredClient::new(
            "agent-7",
            Some(Secret::new("client-secret-value")),
        ))
        .store(store)
        .options(options())
        .build()
        .unwrap();
    let error = source(&servers, oauth).discover().await.unwrap_err();
    assert_clean(&error, true);
    assert!(
        error.to_string().contains("https://auth.example.com"),
        "{error}"
    );
    assert!(servers.seen("/token").is_empty() && servers.seen("/authorize").is_empty());

    // Configured for this server's issuer: authorized as usual.
    let oauth = OAuthClient::machine(
        servers.url.clone(),
        MachineCredentials::secret("agent-7", "client-secret-value"),
    )
    .issuer(servers.base.clone())
    .options(options())
    .build()
    .unwrap();
    source(&servers, oauth).discover().await.unwrap();
    assert_eq!(servers.seen("/token").len(), 1);
}
