//! [`AuthorizationCode`]: an API's OAuth 2 authorization code scheme, or its OpenID Connect
//! scheme, for an [`HttpSource`](toolkit_http::HttpSource) — the user's authorization got through
//! the same machinery as an MCP server's (PKCE S256, `state`, the issuer checked), kept in a
//! [`TokenStore`], refreshed before it expires.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use serde::Deserialize;

use super::AuthError;
use super::authorization_server::AuthorizationServer;
use super::callback::AuthorizationCallback;
use super::fetch::{AuthHttp, Fetched};
use super::flow::{self, Ask, RefreshFailed};
use super::grant::{Grant, RegisteredClient, client_auth};
use super::policy::UrlPolicy;
use super::store::{MemoryStore, TokenStore};
use toolkit_core::BoxFuture;
use toolkit_http::{Credential, CredentialProvider};

/// How long before its expiry a token is refreshed.
const MARGIN: Duration = Duration::from_secs(60);

/// How long a user has to authorize.
const AUTHORIZATION_WAIT: Duration = Duration::from_secs(300);

/// Where the authorization server is: the document's flow URLs, or an OpenID Connect discovery
/// document read at the first call.
#[derive(Clone, Debug)]
enum Endpoints {
    Known(Box<AuthorizationServer>),
    Discover(Url),
}

/// Gives an [`HttpSource`](toolkit_http::HttpSource) the bearer token of a user's authorization
/// (through [`Credentials::with_provider`](toolkit_http::Credentials::with_provider)): at the
/// first call the user is sent through the [`AuthorizationCallback`] (the authorization code
/// flow with PKCE); the grant is kept in the [`TokenStore`], refreshed within a minute of its
/// expiry, and got again when the API refuses it. The client is registered ahead at the API's
/// authorization server (OpenAPI documents name no registration).
///
/// ```no_run
/// use toolkit_auth::{AuthorizationCode, FileStore, LoopbackCallback, RegisteredClient};
/// use toolkit_http::Credentials;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let callback = LoopbackCallback::bind(0, |url| {
///     eprintln!("Open {url} to authorize");
///     Ok(())
/// })
/// .await?;
/// let user = AuthorizationCode::new(
///     "https://auth.example.com/authorize".parse()?,
///     "https://auth.example.com/token".parse()?,
///     RegisteredClient::new("my-app", None),
///     callback,
/// )?
/// .scopes(["read:pets"])
/// .store(FileStore::new("tokens.json"));
/// let credentials = Credentials::new().with_provider("petstore_auth", user);
/// # Ok(()) }
/// ```
pub struct AuthorizationCode {
    endpoints: tokio::sync::Mutex<Endpoints>,
    client: RegisteredClient,
    scopes: Vec<String>,
    callback: Arc<dyn AuthorizationCallback>,
    store: Arc<dyn TokenStore>,
    http: AuthHttp,
    /// The grant in use, loaded from the store at the first call.
    current: tokio::sync::Mutex<Option<Grant>>,
}

impl fmt::Debug for AuthorizationCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationCode")
            .field("client_id", &self.client.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// The path a discovery document is at under its issuer (OpenID Connect Discovery §4).
const OPENID_CONFIGURATION: &str = "/.well-known/openid-configuration";

/// Whether `issuer`, as a discovery document at `url` names it, is the issuer it was fetched for
/// (OpenID Connect Discovery §4.3): `url` less the well-known path (a trailing `/` aside), or, for
/// a document at another path, an issuer of the same origin.
fn issuer_fits(url: &Url, issuer: &str) -> bool {
    let mut expected = url.clone();
    expected.set_query(None);
    expected.set_fragment(None);
    match expected.as_str().strip_suffix(OPENID_CONFIGURATION) {
        Some(prefix) => prefix.trim_end_matches('/') == issuer.trim_end_matches('/'),
        None => Url::parse(issuer).is_ok_and(|issuer| issuer.origin() == url.origin()),
    }
}

/// The part of an OpenID Connect discovery document the flow needs.
#[derive(Deserialize)]
struct OpenIdConfiguration {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    authorization_response_iss_parameter_supported: Option<bool>,
}

impl AuthorizationCode {
    /// A user's authorization at `authorization_url` with tokens from `token_url` (an OpenAPI
    /// scheme's `authorizationCode` flow: `https` URLs, or `http` on loopback), for `client`.
    ///
    /// # Errors
    ///
    /// [`AuthError::Refused`] for a URL that is not `https` (or `http` on loopback);
    /// [`AuthError::Unavailable`] when the HTTP client cannot be built.
    pub fn new(
        authorization_url: Url,
        token_url: Url,
        client: RegisteredClient,
        callback: impl AuthorizationCallback,
    ) -> Result<Self, AuthError> {
        let policy = UrlPolicy::for_server(&token_url);
        policy.check(&authorization_url, "authorization URL")?;
        policy.check(&token_url, "token URL")?;
        Self::with(
            Endpoints::Known(Box::new(AuthorizationServer {
                // Not known without metadata: the redirect's `iss`, if any, is not checked.
                issuer: String::new(),
                authorization_endpoint: Some(authorization_url),
                token_endpoint: token_url,
                registration_endpoint: None,
                auth_methods: None,
                client_id_metadata_document_supported: false,
                iss_parameter_supported: false,
            })),
            client,
            callback,
        )
    }

    /// A user's authorization at the OpenID Connect provider whose discovery document is at
    /// `discovery_url` (an OpenAPI `openIdConnect` scheme's `openIdConnectUrl`), read at the
    /// first call; its issuer is checked against the authorization's answer.
    ///
    /// # Errors
    ///
    /// As [`AuthorizationCode::new`].
    pub fn open_id_connect(
        discovery_url: Url,
        client: RegisteredClient,
        callback: impl AuthorizationCallback,
    ) -> Result<Self, AuthError> {
        UrlPolicy::for_server(&discovery_url).check(&discovery_url, "discovery URL")?;
        Self::with(Endpoints::Discover(discovery_url), client, callback)
    }

    fn with(
        endpoints: Endpoints,
        client: RegisteredClient,
        callback: impl AuthorizationCallback,
    ) -> Result<Self, AuthError> {
        Ok(Self {
            endpoints: tokio::sync::Mutex::new(endpoints),
            client,
            scopes: Vec::new(),
            callback: Arc::new(callback),
            store: Arc::new(MemoryStore::new()),
            http: AuthHttp::new(Duration::from_secs(10))?,
            current: tokio::sync::Mutex::new(None),
        })
    }

    /// Asks for `scopes` (none by default).
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Keeps the grant in `store` (a [`MemoryStore`] by default).
    #[must_use]
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The authorization server: as given, or discovered (once).
    async fn server(&self) -> Result<AuthorizationServer, AuthError> {
        let mut endpoints = self.endpoints.lock().await;
        let url = match &*endpoints {
            Endpoints::Known(server) => return Ok((**server).clone()),
            Endpoints::Discover(url) => url.clone(),
        };
        let policy = UrlPolicy::for_server(&url);
        let Fetched::Found(document) = self
            .http
            .get_json(&url, "OpenID Connect discovery document", None)
            .await?
        else {
            return Err(AuthError::refused(
                "the OpenID Connect discovery document is not there",
            ));
        };
        let found: OpenIdConfiguration = serde_json::from_value(document).map_err(|_| {
            AuthError::refused("the OpenID Connect discovery document is malformed")
        })?;
        if !issuer_fits(&url, &found.issuer) {
            return Err(AuthError::refused(format!(
                "the OpenID Connect discovery document at {} names another issuer ({}) than the \
                 one it was fetched for",
                url.origin().ascii_serialization(),
                super::error::server_words(&found.issuer, 200)
            )));
        }
        let server = AuthorizationServer {
            authorization_endpoint: Some(
                policy.parse(&found.authorization_endpoint, "authorization endpoint")?,
            ),
            token_endpoint: policy.parse(&found.token_endpoint, "token endpoint")?,
            issuer: found.issuer,
            registration_endpoint: None,
            auth_methods: found.token_endpoint_auth_methods_supported,
            client_id_metadata_document_supported: false,
            iss_parameter_supported: found
                .authorization_response_iss_parameter_supported
                .unwrap_or(false),
        };
        *endpoints = Endpoints::Known(Box::new(server.clone()));
        Ok(server)
    }

    /// The key of the grant in the store: the client at the token endpoint.
    fn key(server: &AuthorizationServer, client: &RegisteredClient) -> String {
        format!("{} {}", server.token_endpoint, client.client_id)
    }

    /// A live token: the kept one, refreshed near its expiry, else a new authorization.
    pub async fn token(&self) -> Result<super::Secret, AuthError> {
        let server = self.server().await?;
        let key = Self::key(&server, &self.client);
        let mut current = self.current.lock().await;
        if current.is_none() {
            *current = self.store.load(&key).await?;
        }
        if let Some(grant) = current.as_ref() {
            if !grant.expires_within(MARGIN) {
                return Ok(grant.access_token.clone());
            }
            match flow::refresh(&self.http, grant).await {
                Ok(refreshed) => {
                    self.store.save(&key, &refreshed).await?;
                    let token = refreshed.access_token.clone();
                    *current = Some(refreshed);
                    return Ok(token);
                }
                Err(RefreshFailed::Expired) => {}
                Err(RefreshFailed::Failed(error)) => return Err(error),
            }
        }
        let client_auth = client_auth(&self.client, server.auth_methods.as_deref());
        let redirect_uri = self.callback.redirect_uri();
        let ask = Ask {
            server: &server,
            client: &self.client,
            client_auth,
            redirect_uri: &redirect_uri,
            resource: None,
            scopes: &self.scopes,
        };
        let grant =
            flow::authorize(&self.http, &ask, self.callback.as_ref(), AUTHORIZATION_WAIT).await?;
        self.store.save(&key, &grant).await?;
        let token = grant.access_token.clone();
        *current = Some(grant);
        Ok(token)
    }
}

impl CredentialProvider for AuthorizationCode {
    fn credential<'a>(&'a self, _scheme: &'a str) -> BoxFuture<'a, Option<Credential>> {
        Box::pin(async move {
            match self.token().await {
                Ok(token) => Some(Credential::Token(token.expose().to_owned())),
                Err(error) => {
                    tracing::warn!(%error, "no token of the user's authorization");
                    None
                }
            }
        })
    }

    /// The API refused the token: the next call refreshes it, or authorizes again.
    fn refused<'a>(&'a self, _scheme: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let mut current = self.current.lock().await;
            let Some(grant) = current.as_mut() else {
                return false;
            };
            // Read as expired: a refresh token is tried first.
            grant.expires_at = Some(0);
            true
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discovery_document_must_name_the_issuer_it_was_fetched_for() {
        let at = |text: &str| Url::parse(text).unwrap_or_else(|_| unreachable!());
        let url = at("https://id.example.com/tenant/.well-known/openid-configuration");
        assert!(issuer_fits(&url, "https://id.example.com/tenant"));
        assert!(issuer_fits(&url, "https://id.example.com/tenant/"));
        assert!(!issuer_fits(&url, "https://id.example.com"));
        assert!(!issuer_fits(&url, "https://evil.example.com/tenant"));
        let elsewhere = at("https://id.example.com/discovery.json");
        assert!(issuer_fits(&elsewhere, "https://id.example.com/x"));
        assert!(!issuer_fits(&elsewhere, "https://evil.example.com"));
    }
}
