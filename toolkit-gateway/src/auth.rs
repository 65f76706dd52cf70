//! Inbound authentication of the HTTP transport: the gateway as an OAuth 2.1 protected resource
//! (RFC 9728 metadata, RFC 6750 challenges, JWT access tokens checked against the issuer's JWKS),
//! or, for a small team, opaque tokens read from the environment and compared in constant time.
//!
//! A token is read from the `Authorization: Bearer` header only, is never logged (a refusal is
//! logged by its kind: "expired", "wrong audience"), and never reaches a source: the HTTP guard
//! removes the header before MCP sees the request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, StatusCode, header::AUTHORIZATION};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::sync::Mutex;
use toolkit_core::context::Principal;

use crate::config::{AuthConfig, AuthMode, ConfigError, read_env};

/// The longest token read, in bytes; a longer one is refused unread.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The largest JWKS document read, in bytes.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;

/// How long fetching the JWKS may take.
pub const JWKS_TIMEOUT: Duration = Duration::from_secs(5);

/// How long fetched keys are used before they are fetched again.
const JWKS_MAX_AGE: Duration = Duration::from_secs(3_600);

/// The least time between two fetches of the JWKS, whatever caused them (an unknown `kid`, keys
/// too old, none yet): a flood of made-up key ids costs the issuer one request a second at most.
const JWKS_MIN_REFETCH: Duration = Duration::from_secs(1);

/// The longest wait between fetches after failed ones (the wait doubles from
/// [`JWKS_MIN_REFETCH`] with each failure in a row): while the issuer is down, tokens the keys
/// held cannot check are refused at once.
const JWKS_MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The most tokens remembered as verified (see [`Verified`]); when full, the expired ones are
/// dropped, and all of them if none is.
const MAX_VERIFIED: usize = 10_000;

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

/// The authenticator in use, shared, and replaced when a reload changes `[serve.auth]`'s
/// settings: each request is checked by the one current when it arrives.
#[derive(Clone, Debug)]
pub(crate) struct CurrentAuth(Arc<std::sync::RwLock<Arc<Authenticator>>>);

impl CurrentAuth {
    pub(crate) fn new(authenticator: Authenticator) -> Self {
        Self(Arc::new(std::sync::RwLock::new(Arc::new(authenticator))))
    }

    /// The authenticator current now.
    pub(crate) fn get(&self) -> Arc<Authenticator> {
        Arc::clone(
            &self
                .0
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Checks each request with `authenticator` from now on.
    pub(crate) fn set(&self, authenticator: Authenticator) {
        *self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(authenticator);
    }
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
    Tokens(Vec<(Principal, [u8; 32])>),
    Jwt(Box<Jwt>),
}

struct Jwt {
    /// The issuer every token must name: with `sub`, who the token's holder is.
    issuer: String,
    scopes: Vec<String>,
    /// The `typ` values a token's header may have, lower-cased (any when empty).
    token_types: Vec<String>,
    /// The checks of each algorithm allowed, made once: issuer, audience, `exp`/`nbf` with the
    /// leeway.
    validations: Vec<(Algorithm, Validation)>,
    jwks: Jwks,
    /// The tokens whose signature and claims were checked, by SHA-256: a client sends the same
    /// access token with every request, and checking an ES256 signature costs far more than the
    /// rest of a request's authentication.
    verified: std::sync::Mutex<HashMap<[u8; 32], Verified>>,
}

/// A token found valid: whose it is, and until when it may be taken without checking it again.
struct Verified {
    holder: Principal,
    /// `exp` plus the leeway, in seconds since the epoch.
    until: u64,
    /// `nbf` less the leeway (0 without `nbf`).
    from: u64,
    /// The JWKS it was checked with ([`Jwks::generation`]): a token is checked again once the
    /// keys are fetched again (a key may have been withdrawn).
    generation: u64,
    /// When it was checked: remembered no longer than the keys are kept.
    at: Instant,
}

/// The claims read beyond those `jsonwebtoken` checks, and the rest of them, which the holder's
/// [`Principal`] carries for a policy to read.
#[derive(serde::Deserialize)]
struct Claims {
    scope: Option<Value>,
    scp: Option<Value>,
    sub: Option<Value>,
    exp: Option<Value>,
    nbf: Option<Value>,
    #[serde(flatten)]
    rest: serde_json::Map<String, Value>,
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
                    tokens.push((Principal::token(&token.name), digest(value.as_bytes())));
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
                let validations = ALGORITHMS
                    .iter()
                    .map(|&algorithm| {
                        let mut validation = Validation::new(algorithm);
                        validation.algorithms = vec![algorithm];
                        validation.set_issuer(&[&issuer]);
                        validation.set_audience(&[&resource]);
                        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
                        validation.validate_nbf = true;
                        validation.leeway = config.leeway_seconds;
                        (algorithm, validation)
                    })
                    .collect();
                Ok(Self {
                    kind: Kind::Jwt(Box::new(Jwt {
                        issuer: issuer.clone(),
                        scopes: config.scopes.clone(),
                        token_types: config
                            .token_types
                            .iter()
                            .map(|typ| typ.to_ascii_lowercase())
                            .collect(),
                        validations,
                        jwks,
                        verified: std::sync::Mutex::new(HashMap::new()),
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

    /// Checks the request's bearer token: who holds it (a token's name, or a JWT's issuer and
    /// `sub`, with its claims), or why the request is refused.
    ///
    /// # Errors
    ///
    /// The [`Refusal`] to answer with.
    pub async fn check(&self, headers: &HeaderMap) -> Result<Principal, Refusal> {
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

    /// Whether the tokens taken are JWTs (a person's token a source may exchange).
    pub fn is_jwt(&self) -> bool {
        matches!(self.kind, Kind::Jwt(_))
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
    async fn check(&self, token: &str) -> Result<Principal, (&'static str, &'static str)> {
        let digest = digest(token.as_bytes());
        if let Some(holder) = self.remembered(&digest) {
            return Ok(holder);
        }
        let generation = self.jwks.generation();
        let at = Instant::now();
        let (holder, claims) = self.verify(token).await?;
        let seconds = |claim: &Option<Value>| {
            claim
                .as_ref()
                .and_then(Value::as_f64)
                .map(|value| value.max(0.0) as u64)
        };
        // A token without a numeric `exp` cannot pass `verify`; it is never remembered anyway.
        if let Some(exp) = seconds(&claims.exp) {
            let leeway = self.leeway();
            let verified = Verified {
                holder: holder.clone(),
                until: exp.saturating_add(leeway),
                from: seconds(&claims.nbf).map_or(0, |nbf| nbf.saturating_sub(leeway)),
                generation,
                at,
            };
            let mut remembered = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
            if remembered.len() >= MAX_VERIFIED {
                let now = unix_now();
                remembered.retain(|_, known| known.until >= now);
                if remembered.len() >= MAX_VERIFIED {
                    remembered.clear();
                }
            }
            remembered.insert(digest, verified);
        }
        Ok(holder)
    }

    /// The leeway on `exp` and `nbf` (the same for every algorithm).
    fn leeway(&self) -> u64 {
        self.validations
            .first()
            .map_or(0, |(_, validation)| validation.leeway)
    }

    /// The holder of the token with SHA-256 `digest`, if it was found valid and still is: not
    /// expired (with the leeway), valid already, checked with the keys held now, within the
    /// hour.
    fn remembered(&self, digest: &[u8; 32]) -> Option<Principal> {
        let mut remembered = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        let known = remembered.get(digest)?;
        let now = unix_now();
        if known.from <= now
            && now <= known.until
            && known.generation == self.jwks.generation()
            && known.at.elapsed() < JWKS_MAX_AGE
        {
            return Some(known.holder.clone());
        }
        remembered.remove(digest);
        None
    }

    /// Checks `token` in full: its header, key, signature and claims.
    async fn verify(
        &self,
        token: &str,
    ) -> Result<(Principal, Claims), (&'static str, &'static str)> {
        let invalid = |why| ("invalid_token", why);
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed"))?;
        let validation = self
            .validations
            .iter()
            .find(|(algorithm, _)| *algorithm == header.alg)
            .map(|(_, validation)| validation)
            .ok_or(invalid("algorithm not allowed"))?;
        if !self.token_types.is_empty()
            && !header
                .typ
                .as_deref()
                .is_some_and(|typ| self.token_types.contains(&typ.to_ascii_lowercase()))
        {
            return Err(invalid("not an access token (typ)"));
        }
        let kid = header.kid.as_deref().ok_or(invalid("no kid"))?;
        let key = self.jwks.find(kid).await.ok_or(invalid("unknown kid"))?;
        if key
            .algorithm
            .is_some_and(|algorithm| algorithm != Some(header.alg))
        {
            return Err(invalid("the key is for another algorithm"));
        }
        let decoding = key.decoding.as_ref().ok_or(invalid("unusable key"))?;
        let data = jsonwebtoken::decode::<Claims>(token, decoding, validation)
            .map_err(|error| invalid(kind(error.kind())))?;
        let claims = data.claims;
        let granted: Vec<&str> = match (&claims.scope, &claims.scp) {
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
        // Without a subject, two holders could not be told apart: nothing of one may reach the
        // other, so such a token is refused (RFC 9068 §2.2 requires `sub`).
        let subject = match claims.sub.as_ref().and_then(Value::as_str) {
            Some(subject) if !subject.is_empty() && subject.len() <= 256 => subject,
            _ => return Err(invalid("no usable sub")),
        };
        let holder = Principal::jwt(&self.issuer, subject).with_claims(claims.rest.clone());
        Ok((holder, claims))
    }
}

/// Seconds since the epoch.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
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

/// One key of the issuer, made ready for checking signatures when the set is fetched (not at
/// each request).
struct Key {
    /// The key, or `None` when the JWK cannot be used (a token naming it is refused).
    decoding: Option<DecodingKey>,
    /// The algorithm the JWK is for (`alg`), if it says: `Some(None)` for one no token may be
    /// signed with (an encryption algorithm).
    algorithm: Option<Option<Algorithm>>,
}

impl Key {
    fn new(jwk: &Jwk) -> Self {
        Self {
            decoding: DecodingKey::from_jwk(jwk).ok(),
            algorithm: jwk
                .common
                .key_algorithm
                .map(|algorithm| format!("{algorithm:?}").parse::<Algorithm>().ok()),
        }
    }
}

/// The usable form of a JWKS: each key by its `kid`.
type KeysById = HashMap<String, Arc<Key>>;

/// The keys of a set by `kid` (the first of a `kid` named twice; a key without one cannot be
/// named by a token).
fn keys_by_id(set: &JwkSet) -> KeysById {
    let mut keys = HashMap::new();
    for jwk in &set.keys {
        if let Some(kid) = &jwk.common.key_id {
            keys.entry(kid.clone())
                .or_insert_with(|| Arc::new(Key::new(jwk)));
        }
    }
    keys
}

/// The issuer's keys: fetched when first needed, kept an hour, fetched again (at most once a
/// second) when a token names a key they do not hold.
struct Jwks {
    url: reqwest::Url,
    client: reqwest::Client,
    max_bytes: usize,
    /// The keys by `kid` and when they were fetched (a lock held for no `await`).
    keys: RwLock<Option<(KeysById, Instant)>>,
    /// When the last fetch started and how many failed in a row; held while fetching, so that
    /// one fetch runs at a time and the requests waiting meanwhile take its keys.
    fetching: Mutex<Fetches>,
    /// How many times the keys were fetched.
    fetched: AtomicU64,
}

/// The fetches of a JWKS so far.
#[derive(Default)]
struct Fetches {
    /// When the last one started.
    last: Option<Instant>,
    /// How many failed since the last that did not.
    failures: u32,
}

impl Fetches {
    /// Whether a fetch may start now: none yet, or the wait after the last is over.
    fn may_start(&self) -> bool {
        let wait = JWKS_MIN_REFETCH
            .saturating_mul(2u32.saturating_pow(self.failures.min(16)))
            .min(JWKS_MAX_BACKOFF);
        self.last.is_none_or(|at| at.elapsed() >= wait)
    }
}

impl Jwks {
    fn new(url: reqwest::Url, timeout: Duration, max_bytes: usize) -> Result<Self, ConfigError> {
        let client = toolkit_http::client_builder()
            .timeout(timeout)
            .build()
            .map_err(|error| ConfigError(format!("cannot build an HTTP client: {error}")))?;
        Ok(Self {
            url,
            client,
            max_bytes,
            keys: RwLock::new(None),
            fetching: Mutex::new(Fetches::default()),
            fetched: AtomicU64::new(0),
        })
    }

    /// Which fetch of the keys is held: a token checked with an earlier one is checked again.
    fn generation(&self) -> u64 {
        self.fetched.load(Ordering::SeqCst)
    }

    /// The key `kid` of the keys held: only while they are fresh, unless `stale_too`.
    fn cached(&self, kid: &str, stale_too: bool) -> Option<Arc<Key>> {
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let (keys, fetched) = keys.as_ref()?;
        if !stale_too && fetched.elapsed() > JWKS_MAX_AGE {
            return None;
        }
        keys.get(kid).cloned()
    }

    /// The key `kid`, fetching the set again when it is not known: one fetch at a time (the
    /// requests waiting meanwhile take its keys), no sooner than [`JWKS_MIN_REFETCH`] after the
    /// last, and backing off after failures; while no fetch may start or one failed, the keys
    /// held are used even if old, and a `kid` they lack is refused at once.
    async fn find(&self, kid: &str) -> Option<Arc<Key>> {
        if let Some(key) = self.cached(kid, false) {
            return Some(key);
        }
        let mut fetches = self.fetching.lock().await;
        // Another request may have fetched the key while this one waited.
        if let Some(key) = self.cached(kid, false) {
            return Some(key);
        }
        if !fetches.may_start() {
            return self.cached(kid, true);
        }
        fetches.last = Some(Instant::now());
        match self.fetch().await {
            Ok(set) => {
                fetches.failures = 0;
                let keys = keys_by_id(&set);
                let found = keys.get(kid).cloned();
                *self.keys.write().unwrap_or_else(PoisonError::into_inner) =
                    Some((keys, Instant::now()));
                self.fetched.fetch_add(1, Ordering::SeqCst);
                found
            }
            Err(problem) => {
                fetches.failures = fetches.failures.saturating_add(1);
                tracing::warn!(
                    failures = fetches.failures,
                    "the issuer's JWKS could not be fetched: {problem}"
                );
                self.cached(kid, true)
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
    use crate::config::default_token_types;

    async fn issuer(app: axum::Router) -> reqwest::Url {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(toolkit_serve::without_delay(listener), app).await });
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

    /// A JWT authenticator of an issuer on 127.0.0.1 serving the keys in `keys`, with no leeway,
    /// taking the `typ`s `token_types`.
    async fn jwt_issuer(
        keys: Arc<std::sync::Mutex<Vec<Jwk>>>,
        token_types: &[&str],
    ) -> (Authenticator, jsonwebtoken::EncodingKey, String) {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let signing = jsonwebtoken::EncodingKey::from_ec_der(pair.to_pkcs8v1().unwrap().as_ref());
        let mut jwk = Jwk::from_encoding_key(&signing, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some("k1".to_owned());
        keys.lock().unwrap().push(jwk);
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let set = JwkSet {
                    keys: keys.lock().unwrap().clone(),
                };
                async move { axum::Json(set) }
            }),
        );
        let url = issuer(app).await;
        let origin = url.origin().ascii_serialization();
        let config = AuthConfig {
            mode: AuthMode::Jwt,
            resource: Some("http://127.0.0.1:1/mcp".to_owned()),
            issuer: Some(origin.clone()),
            jwks_url: Some(url.to_string()),
            scopes: Vec::new(),
            leeway_seconds: 0,
            token_types: token_types.iter().map(|typ| (*typ).to_owned()).collect(),
            tokens: Vec::new(),
        };
        (Authenticator::new(&config).unwrap(), signing, origin)
    }

    fn bearer_of(
        signing: &jsonwebtoken::EncodingKey,
        kid: &str,
        origin: &str,
        exp: u64,
    ) -> HeaderMap {
        typed_bearer_of(signing, kid, origin, exp, Some("at+jwt"))
    }

    fn typed_bearer_of(
        signing: &jsonwebtoken::EncodingKey,
        kid: &str,
        origin: &str,
        exp: u64,
        typ: Option<&str>,
    ) -> HeaderMap {
        let mut header = jsonwebtoken::Header::new(Algorithm::ES256);
        header.kid = Some(kid.to_owned());
        header.typ = typ.map(str::to_owned);
        let claims =
            json!({"iss": origin, "aud": "http://127.0.0.1:1/mcp", "sub": "a", "exp": exp});
        let token = jsonwebtoken::encode(&header, &claims, signing).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
        headers
    }

    #[tokio::test]
    async fn a_remembered_token_is_refused_once_expired() {
        let keys = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (auth, signing, origin) = jwt_issuer(keys, &["at+jwt"]).await;
        let headers = bearer_of(&signing, "k1", &origin, unix_now() + 1);
        let holder = auth.check(&headers).await.unwrap();
        assert_eq!(holder.id(), format!("jwt:{origin}#a"));
        assert_eq!(holder.claims()["aud"], "http://127.0.0.1:1/mcp");
        assert_eq!(auth.check(&headers).await.unwrap(), holder, "remembered");
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        let refusal = auth.check(&headers).await.unwrap_err();
        assert_eq!((refusal.error, refusal.why), ("invalid_token", "expired"));
    }

    #[tokio::test]
    async fn a_remembered_token_is_checked_again_once_the_keys_are_fetched_again() {
        let keys = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (auth, signing, origin) = jwt_issuer(Arc::clone(&keys), &["at+jwt"]).await;
        let headers = bearer_of(&signing, "k1", &origin, unix_now() + 600);
        assert!(auth.check(&headers).await.is_ok());
        // The issuer withdraws k1; a token naming another key makes the gateway fetch the set.
        keys.lock().unwrap().clear();
        tokio::time::sleep(JWKS_MIN_REFETCH + Duration::from_millis(100)).await;
        let other = bearer_of(&signing, "k2", &origin, unix_now() + 600);
        assert_eq!(auth.check(&other).await.unwrap_err().why, "unknown kid");
        assert_eq!(auth.check(&headers).await.unwrap_err().why, "unknown kid");
    }

    #[tokio::test]
    async fn an_id_token_is_refused_by_default_and_taken_when_its_typ_is_configured() {
        let defaults = default_token_types();
        let defaults: Vec<&str> = defaults.iter().map(String::as_str).collect();
        let keys = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (auth, signing, origin) = jwt_issuer(keys, &defaults).await;
        let exp = unix_now() + 600;
        for typ in ["at+jwt", "application/at+JWT"] {
            let access = typed_bearer_of(&signing, "k1", &origin, exp, Some(typ));
            assert!(auth.check(&access).await.is_ok(), "{typ}");
        }
        for typ in [Some("JWT"), None] {
            let id_token = typed_bearer_of(&signing, "k1", &origin, exp, typ);
            let refusal = auth.check(&id_token).await.unwrap_err();
            assert_eq!(refusal.status, StatusCode::UNAUTHORIZED);
            assert_eq!(refusal.why, "not an access token (typ)");
            assert!(refusal.challenge.contains("invalid_token"));
        }
        let keys = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (auth, signing, origin) = jwt_issuer(keys, &["at+jwt", "JWT"]).await;
        let id_typed = typed_bearer_of(&signing, "k1", &origin, exp, Some("JWT"));
        assert!(auth.check(&id_typed).await.is_ok());
    }

    #[tokio::test]
    async fn while_the_issuer_is_slow_or_down_unknown_tokens_share_one_fetch_then_back_off() {
        let hits = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&hits);
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    "{\"keys\": []}"
                }
            }),
        );
        let jwks = Jwks::new(issuer(app).await, Duration::from_millis(300), 1024).unwrap();
        // 8 made-up key ids at once: one fetch, which all of them wait for.
        let finds = (0..8).map(|n| {
            let jwks = &jwks;
            async move { jwks.find(&format!("made-up-{n}")).await.is_none() }
        });
        assert!(
            futures_util::future::join_all(finds)
                .await
                .into_iter()
                .all(|none| none)
        );
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        // Then refused at once, with no fetch, while the backoff lasts.
        for n in 0..8 {
            assert!(jwks.find(&format!("again-{n}")).await.is_none());
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        let fetches = jwks.fetching.lock().await;
        assert_eq!(fetches.failures, 1);
        assert!(!fetches.may_start());

        // A down issuer (nothing listens): the same.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/jwks", closed.local_addr().unwrap());
        drop(closed);
        let jwks = Jwks::new(url.parse().unwrap(), Duration::from_millis(300), 1024).unwrap();
        let finds = (0..8).map(|n| {
            let jwks = &jwks;
            async move { jwks.find(&format!("made-up-{n}")).await.is_none() }
        });
        assert!(
            futures_util::future::join_all(finds)
                .await
                .into_iter()
                .all(|none| none)
        );
        assert_eq!(jwks.fetching.lock().await.failures, 1);
    }

    #[test]
    fn the_wait_between_fetches_doubles_with_failures_up_to_a_minute() {
        let at = |failures| Fetches {
            last: Instant::now().checked_sub(Duration::from_secs(3)),
            failures,
        };
        assert!(at(0).may_start() && at(1).may_start());
        assert!(!at(2).may_start() && !at(40).may_start());
        assert!(Fetches::default().may_start());
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
