//! OAuth 2 client credentials for an HTTP source: a token endpoint of the tests issues tokens
//! that expire, and an API that takes only the newest live one.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolkit_auth::ClientCredentials;
use toolkit_core::ToolSource;
use toolkit_core::{Reason, ToolDefinition};
use toolkit_http::{
    Credentials, HttpSource, Operation, RequestTemplate, SecurityScheme, client_builder,
};

use crate::support::object;

#[derive(Default)]
struct Issuer {
    issued: usize,
    /// The live token and when it dies.
    live: Option<(String, Instant)>,
    /// Token requests seen: their Authorization header and body.
    requests: Vec<(Option<String>, String)>,
    lifetime_seconds: u64,
}

type Shared = Arc<Mutex<Issuer>>;

async fn token(State(issuer): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let mut issuer = issuer.lock().unwrap();
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    issuer
        .requests
        .push((authorization, String::from_utf8_lossy(&body).into_owned()));
    issuer.issued += 1;
    let token = format!("cc-token-{}", issuer.issued);
    let lifetime = issuer.lifetime_seconds;
    issuer.live = Some((
        token.clone(),
        Instant::now() + Duration::from_secs(lifetime),
    ));
    axum::Json(json!({"access_token": token, "token_type": "Bearer", "expires_in": lifetime}))
        .into_response()
}

async fn api(State(issuer): State<Shared>, headers: HeaderMap) -> Response {
    let issuer = issuer.lock().unwrap();
    let sent = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match (&issuer.live, sent) {
        (Some((live, until)), Some(sent)) if live == sent && *until > Instant::now() => {
            axum::Json(json!({"ok": true})).into_response()
        }
        _ => StatusCode::UNAUTHORIZED.into_response(),
    }
}

async fn revoke(State(issuer): State<Shared>) -> Response {
    issuer.lock().unwrap().live = None;
    StatusCode::NO_CONTENT.into_response()
}

#[tokio::test]
async fn auth_client_credentials_tokens_are_fetched_kept_and_fetched_again() {
    let issuer: Shared = Arc::new(Mutex::new(Issuer {
        lifetime_seconds: 3600,
        ..Issuer::default()
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/token", axum::routing::post(token))
        .route("/api", axum::routing::get(api))
        .route("/revoke", axum::routing::post(revoke))
        .with_state(issuer.clone());
    tokio::spawn(async move {
        let _ = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            app,
        )
        .await;
    });

    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let operation = Operation::new(
        ToolDefinition::new("read", schema).unwrap(),
        RequestTemplate::new("GET", "/api"),
    );
    let schemes = std::collections::BTreeMap::from([(
        "oauth".to_owned(),
        SecurityScheme::OAuth2 {
            flows: std::collections::BTreeMap::new(),
        },
    )]);
    let requirements = std::collections::BTreeMap::from([(
        "read".to_owned(),
        vec![std::collections::BTreeMap::from([(
            "oauth".to_owned(),
            vec!["read".to_owned()],
        )])],
    )]);
    let tokens = ClientCredentials::new(
        format!("{base}/token").parse().unwrap(),
        "client-7",
        "client-secret-7",
    )
    .unwrap()
    .scopes(["read"]);
    let source = HttpSource::builder("api", base.clone(), client_builder().build().unwrap())
        .operation(operation)
        .security(
            schemes,
            requirements,
            Credentials::new().with_provider("oauth", tokens),
        )
        .build()
        .unwrap();

    // Fetched once, then kept.
    source
        .call("read", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    source
        .call("read", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    {
        let issuer = issuer.lock().unwrap();
        assert_eq!(issuer.issued, 1);
        let (authorization, body) = &issuer.requests[0];
        // HTTP Basic with the id and secret; the scope in the body; no secret in the body.
        assert_eq!(
            authorization.as_deref(),
            Some("Basic Y2xpZW50LTc6Y2xpZW50LXNlY3JldC03")
        );
        assert!(body.contains("grant_type=client_credentials"), "{body}");
        assert!(body.contains("scope=read"), "{body}");
        assert!(!body.contains("client-secret-7"), "{body}");
    }

    // The API refuses the token: one fresh token, one more try.
    reqwest::Client::new()
        .post(format!("{base}/revoke"))
        .send()
        .await
        .unwrap();
    source
        .call("read", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(issuer.lock().unwrap().issued, 2);

    // A token about to expire is fetched again before it is sent.
    issuer.lock().unwrap().lifetime_seconds = 10;
    reqwest::Client::new()
        .post(format!("{base}/revoke"))
        .send()
        .await
        .unwrap();
    source
        .call("read", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(issuer.lock().unwrap().issued, 3);
    source
        .call("read", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap();
    assert_eq!(
        issuer.lock().unwrap().issued,
        4,
        "a token with 10 s left is not kept"
    );

    // A token endpoint that is down: the call fails without a credential in its words.
    let down =
        ClientCredentials::new("http://127.0.0.1:1/token".parse().unwrap(), "c", "s3cr3t").unwrap();
    let schemes = std::collections::BTreeMap::from([(
        "oauth".to_owned(),
        SecurityScheme::OAuth2 {
            flows: std::collections::BTreeMap::new(),
        },
    )]);
    let requirements = std::collections::BTreeMap::from([(
        "read".to_owned(),
        vec![std::collections::BTreeMap::from([(
            "oauth".to_owned(),
            Vec::new(),
        )])],
    )]);
    let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    let source = HttpSource::builder("api", base, client_builder().build().unwrap())
        .operation(Operation::new(
            ToolDefinition::new("read", schema).unwrap(),
            RequestTemplate::new("GET", "/api"),
        ))
        .security(
            schemes,
            requirements,
            Credentials::new().with_provider("oauth", down),
        )
        .build()
        .unwrap();
    let error = source
        .call("read", object(json!({})), &toolkit_core::CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error.reason, Reason::Authentication { .. }),
        "{error:?}"
    );
    assert!(!format!("{error:?}").contains("s3cr3t"));
}
