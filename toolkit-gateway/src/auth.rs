//! Inbound authentication of the HTTP transport: the gateway as an OAuth 2.1 protected resource
//! (RFC 9728 metadata, RFC 6750 challenges, JWT access tokens checked against the issuer's JWKS),
//! or, for a small team, opaque tokens read from the environment and compared in constant time.
//!
//! A token is read from the `Authorization: Bearer` header only, is never logged (a refusal is
//! logged by its kind: "expired", "wrong audience"), and never reaches a source: the HTTP guard
//! removes the header before MCP sees the request.

use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header::AUTHORIZATION};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::sync::{Mutex, RwLock};

use crate::config::{AuthConfig, AuthMode, ConfigError, read_env};

/// The longest token read, in bytes; a longer one is refused unread.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The largest JWKS document read, in bytes.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;

/// How long fetching the JWKS may take.
pub const JWKS_TIMEOUT: Duration = Duration::from_secs(5);

/// How long fetched keys are used before they are fetched again.
const JWKS_MAX_AGE: Duration = Duration::from_secs(3_600);

/// The least time between two fetches of the JWKS caused by an unknown `kid` (a flood of made-up
/// key ids costs the issuer one request a second at most).
const JWKS_MIN_REFETCH: Duration = Duration::from_secs(1);

/// The signature algorithms accepted: asymmetric only (an HMAC "signed" with the public key is
/// refused before any key is looked at).
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Checks the bearer token of each request, as `[serve.auth]` says.
pub struct Authenticator {
    kind: Kind,
    /// The protected resource metadata and where it is served (JWT mode).
    metadata: Option<Metadata>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.kind {
            Kind::Tokens(_) => "tokens",
            Kind::Jwt(_) => "jwt",
        };
        f.debug_struct("Authenticator")
            .field("mode", &mode)
            .finish_non_exhaustive()
    }
}

enum Kind {
    /// Each token's holder and the SHA-256 of the token (compared in constant time, lengths
    /// hidden).
    Tokens(Vec<(String, [u8; 32])>),
    Jwt(Box<Jwt>),
}

struct Jwt {
    issuer: String,
    audience: String,
    scopes: Vec<String>,
    leeway: u64,
    jwks: Jwks,
}

/// The protected resource metadata (RFC 9728) and its URL.
#[derive(Clone, Debug)]
pub struct Metadata {
    /// The paths it is served at: the resource's path form and the root form.
    pub paths: Vec<String>,
    /// Its absolute URL, named in every challenge.
    pub url: String,
    /// The document.
    pub document: Value,
}

/// Why a request is refused, as the client is told it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// 401, or 403 for a missing scope.
    pub status: StatusCode,
    /// The `WWW-Authenticate` value.
    pub challenge: String,
    /// `missing_token`, `invalid_token` or `insufficient_scope`: the response's `error` and the
    /// metrics' label.
    pub error: &'static str,
    /// What was wrong, for the log: a kind ("expired"), never a token or a claim's value.
    pub why: &'static str,
}

impl Authenticator {
    /// The authenticator `config` describes; tokens are read from their variables now.
    ///
    /// # Errors
    ///
    /// A variable is not set (named, its value never shown), or a URL is malformed.
    pub fn new(config: &AuthConfig) -> Result<Self, ConfigError> {
        match config.mode {
            AuthMode::Tokens => {
                let mut tokens = Vec::new();
                for token in &config.tokens {
                    let value = read_env("serve.auth", &token.env)?;
                    if value.is_empty() || value.len() > MAX_TOKEN_BYTES {
                        return Err(ConfigError(format!(
                            "serve.auth: the token of {:?} (variable {}) is empty or longer than {MAX_TOKEN_BYTES} bytes",
                            token.name, token.env
                        )));
                    }
                    tokens.push((token.name.clone(), digest(value.as_bytes())));
                }
                Ok(Self {
                    kind: Kind::Tokens(tokens),
                    metadata: None,
                })
            }
            AuthMode::Jwt => {
                let missing = |field: &str| {
                    ConfigError(format!(
                        "serve.auth.{field} is required with mode = \"jwt\""
                    ))
                };
                let resource = config.resource.clone().ok_or_else(|| missing("resource"))?;
                let issuer = config.issuer.clone().ok_or_else(|| missing("issuer"))?;
                let jwks_url = config
                    .jwks_url
                    .as_deref()
                    .ok_or_else(|| missing("jwks_url"))?
                    .parse::<reqwest::Url>()
                    .map_err(|_| ConfigError("serve.auth.jwks_url is no URL".to_owned()))?;
                let metadata = metadata(&resource, &issuer, &config.scopes)?;
                let jwks = Jwks::new(jwks_url, JWKS_TIMEOUT, MAX_JWKS_BYTES)?;
                Ok(Self {
                    kind: Kind::Jwt(Box::new(Jwt {
                        issuer,
                        audience: resource,
                        scopes: config.scopes.clone(),
                        leeway: config.leeway_seconds,
                        jwks,
                    })),
                    metadata: Some(metadata),
                })
            }
        }
    }

    /// The protected resource metadata, in JWT mode.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_ref()
    }

    /// Checks the request's bearer token: who holds it (a token's name, or a JWT's `sub`), or
    /// why the request is refused.
    ///
    /// # Errors
    ///
    /// The [`Refusal`] to answer with.
    pub async fn check(&self, headers: &HeaderMap) -> Result<String, Refusal> {
        let token = bearer(headers).map_err(|(error, why)| self.refusal(error, why))?;
        match &self.kind {
            Kind::Tokens(tokens) => {
                let presented = digest(token.as_bytes());
                let mut holder = None;
                // Every token is compared, whichever matches.
                for (name, expected) in tokens {
                    if bool::from(presented.ct_eq(expected)) {
                        holder = Some(name.clone());
                    }
                }
                holder.ok_or_else(|| self.refusal("invalid_token", "unknown token"))
            }
            Kind::Jwt(jwt) => jwt
                .check(token)
                .await
                .map_err(|(error, why)| self.refusal(error, why)),
        }
    }

    fn refusal(&self, error: &'static str, why: &'static str) -> Refusal {
        let mut parts = Vec::new();
        let mut status = StatusCode::UNAUTHORIZED;
        match error {
            "missing_token" => {}
            "insufficient_scope" => {
                status = StatusCode::FORBIDDEN;
                parts.push("error=\"insufficient_scope\"".to_owned());
                if let Kind::Jwt(jwt) = &self.kind {
                    parts.push(format!("scope=\"{}\"", jwt.scopes.join(" ")));
                }
            }
            _ => parts.push(format!("error=\"{error}\"")),
        }
        match &self.metadata {
            Some(metadata) => parts.push(format!("resource_metadata=\"{}\"", metadata.url)),
            None => parts.push("realm=\"toolkit-gateway\"".to_owned()),
        }
        Refusal {
            status,
            challenge: format!("Bearer {}", parts.join(", ")),
            error,
            why,
        }
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The one `Authorization: Bearer` token of the request, or why there is none usable.
fn bearer(headers: &HeaderMap) -> Result<&str, (&'static str, &'static str)> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let value = values
        .next()
        .ok_or(("missing_token", "no Authorization header"))?;
    if values.next().is_some() {
        return Err(("invalid_request", "several Authorization headers"));
    }
    if value.len() > MAX_TOKEN_BYTES + "Bearer ".len() {
        return Err(("invalid_token", "token too long"));
    }
    let value = value.to_str().map_err(|_| ("invalid_token", "not ASCII"))?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or(("invalid_request", "not a Bearer credential"))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(("missing_token", "not a Bearer credential"));
    }
    let token = token.trim_start_matches(' ');
    // RFC 6750's b64token.
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    if token.is_empty() || !token.chars().all(allowed) {
        return Err(("invalid_token", "malformed token"));
    }
    Ok(token)
}

/// The metadata of `resource` (RFC 9728): where it is served and what it says.
fn metadata(resource: &str, issuer: &str, scopes: &[String]) -> Result<Metadata, ConfigError> {
    let url = url::Url::parse(resource)
        .map_err(|_| ConfigError("serve.auth.resource is no URL".to_owned()))?;
    let path = url.path().trim_end_matches('/');
    let root = "/.well-known/oauth-protected-resource";
    let served = format!("{root}{path}");
    let origin = url.origin().ascii_serialization();
    let mut paths = vec![served.clone()];
    if served != root {
        paths.push(root.to_owned());
    }
    let mut document = json!({
        "resource": resource,
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
        "resource_name": "toolkit-gateway",
    });
    if !scopes.is_empty() {
        document["scopes_supported"] = json!(scopes);
    }
    Ok(Metadata {
        paths,
        url: format!("{origin}{served}"),
        document,
    })
}

impl Jwt {
    async fn check(&self, token: &str) -> Result<String, (&'static str, &'static str)> {
        let invalid = |why| ("invalid_token", why);
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed"))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(invalid("algorithm not allowed"));
        }
        let kid = header.kid.as_deref().ok_or(invalid("no kid"))?;
        let jwk = self.jwks.find(kid).await.ok_or(invalid("unknown kid"))?;
        if jwk
            .common
            .key_algorithm
            .is_some_and(|algorithm| format!("{algorithm:?}") != format!("{:?}", header.alg))
        {
            return Err(invalid("the key is for another algorithm"));
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| invalid("unusable key"))?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway;
        let data = jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key, &validation)
            .map_err(|error| invalid(kind(error.kind())))?;
        let claims = data.claims;
        let granted: Vec<&str> = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(scope)), _) => scope.split(' ').collect(),
            (_, Some(Value::Array(scp))) => scp.iter().filter_map(Value::as_str).collect(),
            (_, Some(Value::String(scp))) => scp.split(' ').collect(),
            _ => Vec::new(),
        };
        if !self
            .scopes
            .iter()
            .all(|needed| granted.contains(&needed.as_str()))
        {
            return Err(("insufficient_scope", "a scope missing"));
        }
        Ok(claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or("(no sub)")
            .chars()
            .take(128)
            .collect())
    }
}

/// A JWT failure's kind, for the log.
fn kind(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "expired",
        ErrorKind::ImmatureSignature => "not yet valid",
        ErrorKind::InvalidAudience => "wrong audience",
        ErrorKind::InvalidIssuer => "wrong issuer",
        ErrorKind::InvalidSignature => "bad signature",
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => "algorithm not allowed",
        ErrorKind::MissingRequiredClaim(_) => "a required claim missing",
        ErrorKind::InvalidKeyFormat | ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidRsaKey(_) => {
            "unusable key"
        }
        _ => "malformed",
    }
}

/// The issuer's keys: fetched when first needed, kept an hour, fetched again (at most once a
/// second) when a token names a key they do not hold.
struct Jwks {
    url: reqwest::Url,
    client: reqwest::Client,
    max_bytes: usize,
    keys: RwLock<Option<(JwkSet, Instant)>>,
    /// When the last fetch started; held while fetching, so that one fetch runs at a time.
    fetching: Mutex<Option<Instant>>,
}

impl Jwks {
    fn new(url: reqwest::Url, timeout: Duration, max_bytes: usize) -> Result<Self, ConfigError> {
        let client = toolkit_runtime::http::client_builder()
            .timeout(timeout)
            .build()
            .map_err(|error| ConfigError(format!("cannot build an HTTP client: {error}")))?;
        Ok(Self {
            url,
            client,
            max_bytes,
            keys: RwLock::new(None),
            fetching: Mutex::new(None),
        })
    }

    async fn cached(&self, kid: &str) -> Option<jsonwebtoken::jwk::Jwk> {
        let keys = self.keys.read().await;
        let (set, fetched) = keys.as_ref()?;
        if fetched.elapsed() > JWKS_MAX_AGE {
            return None;
        }
        set.find(kid).cloned()
    }

    /// The key `kid`, fetching the set again when it is not known.
    async fn find(&self, kid: &str) -> Option<jsonwebtoken::jwk::Jwk> {
        if let Some(jwk) = self.cached(kid).await {
            return Some(jwk);
        }
        let mut last = self.fetching.lock().await;
        // Another request may have fetched the key while this one waited.
        if let Some(jwk) = self.cached(kid).await {
            return Some(jwk);
        }
        let stale = self
            .keys
            .read()
            .await
            .as_ref()
            .is_none_or(|(_, fetched)| fetched.elapsed() > JWKS_MAX_AGE);
        if !stale && last.is_some_and(|at| at.elapsed() < JWKS_MIN_REFETCH) {
            return None;
        }
        *last = Some(Instant::now());
        match self.fetch().await {
            Ok(set) => {
                let found = set.find(kid).cloned();
                *self.keys.write().await = Some((set, Instant::now()));
                found
            }
            Err(problem) => {
                tracing::warn!("the issuer's JWKS could not be fetched: {problem}");
                None
            }
        }
    }

    async fn fetch(&self) -> Result<JwkSet, String> {
        let mut response = self
            .client
            .get(self.url.clone())
            .send()
            .await
            .map_err(|error| describe(&error))?;
        if !response.status().is_success() {
            return Err(format!("answered {}", response.status().as_u16()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| describe(&error))? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(format!("larger than {} bytes", self.max_bytes));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|_| "not a JWK Set".to_owned())
    }
}

/// A fetch failure without its URL.
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else {
        "the request failed".to_owned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn issuer(app: axum::Router) -> reqwest::Url {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url.parse().unwrap()
    }

    #[tokio::test]
    async fn a_jwks_fetch_is_given_up_at_its_timeout() {
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "{\"keys\": []}"
            }),
        );
        let jwks = Jwks::new(issuer(app).await, Duration::from_millis(300), 1024).unwrap();
        let start = Instant::now();
        assert_eq!(jwks.fetch().await.unwrap_err(), "timed out");
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(jwks.find("any").await.is_none());
    }

    #[tokio::test]
    async fn a_jwks_larger_than_the_cap_is_refused() {
        let big = format!("{{\"keys\": [], \"pad\": \"{}\"}}", "x".repeat(4096));
        let app =
            axum::Router::new().route("/jwks", axum::routing::get(move || async move { big }));
        let jwks = Jwks::new(issuer(app).await, Duration::from_secs(5), 1024).unwrap();
        assert_eq!(jwks.fetch().await.unwrap_err(), "larger than 1024 bytes");
    }

    #[test]
    fn the_metadata_is_served_at_the_path_form_and_the_root() {
        let metadata = metadata(
            "https://gw.example:8443/team/mcp",
            "https://as.example",
            &["tools".to_owned()],
        )
        .unwrap();
        assert_eq!(
            metadata.url,
            "https://gw.example:8443/.well-known/oauth-protected-resource/team/mcp"
        );
        assert_eq!(
            metadata.paths,
            [
                "/.well-known/oauth-protected-resource/team/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            metadata.document["resource"],
            "https://gw.example:8443/team/mcp"
        );
        assert_eq!(metadata.document["scopes_supported"], json!(["tools"]));
    }

    #[test]
    fn a_bearer_token_is_taken_from_one_header_of_the_bearer_scheme_only() {
        let headers = |values: &[&str]| {
            let mut map = HeaderMap::new();
            for value in values {
                map.append(AUTHORIZATION, value.parse().unwrap());
            }
            map
        };
        assert_eq!(
            bearer(&headers(&["Bearer abc.def-_~+/="])),
            Ok("abc.def-_~+/=")
        );
        assert_eq!(bearer(&headers(&["bearer abc"])), Ok("abc"));
        assert_eq!(bearer(&headers(&[])).unwrap_err().0, "missing_token");
        assert_eq!(
            bearer(&headers(&["Basic abc"])).unwrap_err().0,
            "missing_token"
        );
        assert_eq!(
            bearer(&headers(&["Bearer a", "Bearer b"])).unwrap_err().0,
            "invalid_request"
        );
        assert_eq!(
            bearer(&headers(&["Bearer a b"])).unwrap_err().0,
            "invalid_token"
        );
        let long = format!("Bearer {}", "a".repeat(MAX_TOKEN_BYTES + 1));
        assert_eq!(bearer(&headers(&[&long])).unwrap_err().1, "token too long");
    }
}
