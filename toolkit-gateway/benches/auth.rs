//! What authentication adds to a request: a JWT (ES256) checked with the issuer's JWKS cached —
//! a token seen before (remembered), and tokens never seen (checked in full) — and an opaque
//! token compared with ten.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use axum::http::HeaderMap;
use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use toolkit_gateway::auth::Authenticator;
use toolkit_gateway::config::{AuthConfig, AuthMode, NamedToken};

fn auth(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    let signing = EncodingKey::from_ec_der(pair.to_pkcs8v1().unwrap().as_ref());
    let mut jwk = Jwk::from_encoding_key(&signing, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some("k1".to_owned());
    let set = JwkSet { keys: vec![jwk] };
    let origin = runtime.block_on(async move {
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || async move { axum::Json(set) }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
        origin
    });
    let resource = "http://127.0.0.1:8808/mcp";
    let config = AuthConfig {
        mode: AuthMode::Jwt,
        resource: Some(resource.to_owned()),
        issuer: Some(origin.clone()),
        jwks_url: Some(format!("{origin}/jwks")),
        scopes: vec!["tools".to_owned()],
        leeway_seconds: 30,
        token_types: vec!["at+jwt".to_owned()],
        tokens: Vec::new(),
    };
    let jwt = Authenticator::new(&config).unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".to_owned());
    header.typ = Some("at+jwt".to_owned());
    let claims = serde_json::json!({"iss": origin, "aud": resource, "sub": "bench",
        "exp": now + 3600, "scope": "tools"});
    let token = jsonwebtoken::encode(&header, &claims, &signing).unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    // The first check fetches the JWKS; the ones measured use the cache.
    runtime.block_on(jwt.check(&headers)).unwrap();
    // A client sends the same token with each request: checked in full once, then remembered.
    c.bench_function("jwt ES256, JWKS cached, token seen before", |b| {
        b.iter(|| runtime.block_on(jwt.check(black_box(&headers))).unwrap());
    });
    // Tokens never seen: more than the gateway remembers (10,000), each checked in full
    // (header, key, ES256 signature, claims).
    let fresh: Vec<HeaderMap> = (0..12_000)
        .map(|i| {
            let claims = serde_json::json!({"iss": origin, "aud": resource, "sub": "bench",
                "exp": now + 3600, "scope": "tools", "jti": i});
            let token = jsonwebtoken::encode(&header, &claims, &signing).unwrap();
            let mut headers = HeaderMap::new();
            headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
            headers
        })
        .collect();
    let mut next = fresh.iter().cycle();
    c.bench_function("jwt ES256, JWKS cached, token never seen", |b| {
        b.iter(|| {
            let headers = next.next().unwrap();
            runtime.block_on(jwt.check(black_box(headers))).unwrap()
        });
    });

    // Ten tokens, all read from PATH (a variable that is set; setting one is unsafe): the
    // presented token matches none, and each is compared all the same.
    let value = "a-team-token-of-some-length-0123456789";
    let config = AuthConfig {
        mode: AuthMode::Tokens,
        resource: None,
        issuer: None,
        jwks_url: None,
        scopes: Vec::new(),
        leeway_seconds: 30,
        token_types: Vec::new(),
        tokens: (0..10)
            .map(|i| NamedToken {
                name: format!("client-{i}"),
                env: "PATH".to_owned(),
            })
            .collect(),
    };
    let tokens = Authenticator::new(&config).unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("authorization", format!("Bearer {value}").parse().unwrap());
    c.bench_function("opaque, 10 tokens", |b| {
        b.iter(|| {
            let _ = runtime.block_on(tokens.check(black_box(&headers)));
        });
    });
}

criterion_group!(benches, auth);
criterion_main!(benches);
