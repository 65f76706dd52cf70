//! A user's authorization for an HTTP source's OAuth 2 `authorizationCode` and `openIdConnect`
//! schemes, against the authorization server of the fixture: the API is the fixture's MCP
//! endpoint, called as an HTTP operation (a JSON-RPC body), which takes only live tokens.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use toolkit_auth::{AuthorizationCode, MemoryStore, RegisteredClient};
use toolkit_core::{Reason, ToolDefinition, ToolSource};
use toolkit_http::{
    BodyEncoding, Credentials, HttpSource, Operation, RequestTemplate, SecurityScheme,
    client_builder,
};

use super::fixture::{self, Headless, Knobs};
use crate::support::object;

/// The fixture's MCP endpoint as one operation, `list`, needing the scheme `user`.
fn source(base: &str, user: AuthorizationCode) -> HttpSource {
    let schema = json!({"type": "object", "properties": {"rpc": {"type": "object"}}})
        .as_object()
        .cloned()
        .unwrap();
    let operation = Operation::new(
        ToolDefinition::new("list", schema).unwrap(),
        RequestTemplate::new("POST", "/mcp").body("rpc", BodyEncoding::Json),
    );
    let schemes = BTreeMap::from([(
        "user".to_owned(),
        SecurityScheme::OAuth2 {
            flows: BTreeMap::new(),
        },
    )]);
    let requirements = BTreeMap::from([(
        "list".to_owned(),
        vec![BTreeMap::from([(
            "user".to_owned(),
            vec!["read".to_owned()],
        )])],
    )]);
    HttpSource::builder("api", base, client_builder().build().unwrap())
        .operation(operation)
        .security(
            schemes,
            requirements,
            Credentials::new().with_provider("user", user),
        )
        .build()
        .unwrap()
}

/// A user's authorization at the fixture `base` for `client`, its redirect followed headless.
fn user(base: &str, client: RegisteredClient) -> AuthorizationCode {
    AuthorizationCode::new(
        format!("{base}/authorize").parse().unwrap(),
        format!("{base}/token").parse().unwrap(),
        client,
        Headless,
    )
    .unwrap()
}

fn rpc() -> serde_json::Map<String, serde_json::Value> {
    object(json!({"rpc": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}))
}

#[tokio::test]
async fn auth_code_a_users_authorization_is_got_kept_and_refreshed() {
    let servers = fixture::start(Knobs {
        refresh_tokens: true,
        // Within the refresh margin (60 s): each call after the first refreshes.
        lifetime: Some(Duration::from_secs(30)),
        ..Knobs::default()
    })
    .await;
    let base = servers.base.clone();
    let user = user(&base, RegisteredClient::new("app-1", None))
        .scopes(["read"])
        .store(MemoryStore::new());
    let source = source(&base, user);
    let answer = source
        .call("list", rpc(), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(answer["result"]["tools"][0]["name"], "echo", "{answer}");
    assert_eq!(servers.seen("/authorize").len(), 1);
    // The code exchanged with its PKCE verifier, for the public client.
    let exchanged = servers.seen("/token");
    assert!(exchanged[0].body.contains("grant_type=authorization_code"));
    assert!(exchanged[0].body.contains("code_verifier="));
    assert!(exchanged[0].body.contains("client_id=app-1"));

    // The token expires within the margin: refreshed, not authorized again.
    source
        .call("list", rpc(), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(servers.seen("/authorize").len(), 1);
    let tokens = servers.seen("/token");
    assert_eq!(tokens.len(), 2);
    assert!(tokens[1].body.contains("grant_type=refresh_token"));
}

#[tokio::test]
async fn auth_code_open_id_connect_discovers_its_endpoints() {
    let servers = fixture::start(Knobs::default()).await;
    let base = servers.base.clone();
    // The fixture's RFC 8414 document has the fields of an OpenID Connect discovery document.
    let user = AuthorizationCode::open_id_connect(
        format!("{base}/.well-known/oauth-authorization-server")
            .parse()
            .unwrap(),
        RegisteredClient::new("app-2", None),
        Headless,
    )
    .unwrap();
    let source = source(&base, user);
    source
        .call("list", rpc(), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    source
        .call("list", rpc(), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(
        servers
            .seen("/.well-known/oauth-authorization-server")
            .len(),
        1,
        "discovered once"
    );
    assert_eq!(servers.seen("/authorize").len(), 1, "authorized once");
}

#[tokio::test]
async fn auth_code_a_redirect_with_another_state_is_an_authentication_failure() {
    let servers = fixture::start(Knobs {
        wrong_state: true,
        ..Knobs::default()
    })
    .await;
    let base = servers.base.clone();
    let user = AuthorizationCode::new(
        format!("{base}/authorize").parse().unwrap(),
        format!("{base}/token").parse().unwrap(),
        RegisteredClient::new("app-3", Some(toolkit_auth::Secret::new("app-secret-3"))),
        Headless,
    )
    .unwrap();
    let error = source(&base, user)
        .call("list", rpc(), &toolkit_core::CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error.reason, Reason::Authentication { .. }),
        "{error:?}"
    );
    assert!(servers.seen("/token").is_empty(), "no code was exchanged");
    assert!(!format!("{error:?}").contains("app-secret-3"));
}

#[test]
fn auth_code_urls_off_https_are_refused() {
    let refused = AuthorizationCode::new(
        "http://auth.example.com/authorize".parse().unwrap(),
        "https://auth.example.com/token".parse().unwrap(),
        RegisteredClient::new("app", None),
        Headless,
    );
    assert!(refused.is_err());
    assert!(
        AuthorizationCode::open_id_connect(
            "http://id.example.com/.well-known/openid-configuration"
                .parse()
                .unwrap(),
            RegisteredClient::new("app", None),
            Headless,
        )
        .is_err()
    );
}
