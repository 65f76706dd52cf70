//! [`ClientCredentials`]: OAuth 2 client credentials (RFC 6749 §4.4) for an API's security
//! scheme: a token fetched from the token URL, kept until shortly before it expires, fetched
//! again when the API refuses it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{AuthType, ClientId, ClientSecret, Scope, TokenResponse, TokenUrl};
use reqwest::Url;

use super::fetch::AuthHttp;
use super::grant::now;
use super::{AuthError, Secret};
use toolkit_core::BoxFuture;
use toolkit_http::{ClientCredentialsFlow, Credential, CredentialProvider};

/// How long before its expiry a token is fetched again.
const MARGIN: Duration = Duration::from_secs(30);

/// Gives the bearer token of an OAuth 2 client credentials flow to an
/// [`HttpSource`](toolkit_http::HttpSource) (through
/// [`Credentials::with_provider`](toolkit_http::Credentials::with_provider)): fetched at the first
/// call, kept until 30 s before it expires, fetched again then or when the API refuses it (the
/// call is then sent once more). The client authenticates with HTTP Basic unless told
/// otherwise.
///
/// ```no_run
/// use toolkit_auth::ClientCredentials;
/// use toolkit_http::Credentials;
///
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let tokens = ClientCredentials::new(
///     "https://auth.example.com/oauth/token".parse()?,
///     std::env::var("CLIENT_ID")?,
///     std::env::var("CLIENT_SECRET")?,
/// )?
/// .scopes(["read"]);
/// let credentials = Credentials::new().with_provider("oauth", tokens);
/// # Ok(()) }
/// ```
pub struct ClientCredentials {
    token_url: Url,
    client_id: String,
    client_secret: Secret,
    in_body: bool,
    scopes: Vec<String>,
    http: AuthHttp,
    /// The token and when it expires.
    cached: tokio::sync::Mutex<Option<(Secret, Option<u64>)>>,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// The flow that reads the `client_id:client_secret` text of an OAuth 2 client-credentials
    /// scheme into tokens fetched by a [`ClientCredentials`], for
    /// [`Credentials::with_client_credentials_flow`](toolkit_http::Credentials::with_client_credentials_flow).
    ///
    /// ```
    /// use toolkit_auth::ClientCredentials;
    /// use toolkit_http::Credentials;
    ///
    /// let credentials = Credentials::new().with_client_credentials_flow(ClientCredentials::flow());
    /// ```
    pub fn flow() -> ClientCredentialsFlow {
        Arc::new(|token_url, client_id, client_secret| {
            Self::new(token_url, client_id, client_secret)
                .map(|tokens| Arc::new(tokens) as Arc<dyn CredentialProvider>)
                .map_err(|error| error.to_string())
        })
    }

    /// Tokens from `token_url` (an `https` URL, or `http` on loopback) for the client
    /// `client_id` with `client_secret`.
    ///
    /// # Errors
    ///
    /// [`AuthError::Refused`] for another token URL; [`AuthError::Unavailable`] when the HTTP
    /// client cannot be built.
    pub fn new(
        token_url: Url,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<Self, AuthError> {
        super::policy::UrlPolicy::for_server(&token_url).check(&token_url, "token URL")?;
        Ok(Self {
            token_url,
            client_id: client_id.into(),
            client_secret: Secret::new(client_secret),
            in_body: false,
            scopes: Vec::new(),
            http: AuthHttp::new(Duration::from_secs(10))?,
            cached: tokio::sync::Mutex::new(None),
        })
    }

    /// Asks for `scopes` (none by default).
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sends the client's id and secret in the request body (`client_secret_post`) rather than
    /// in HTTP Basic.
    #[must_use]
    pub fn secret_in_body(mut self) -> Self {
        self.in_body = true;
        self
    }

    /// A token: the kept one while it lives, else a new one.
    pub async fn token(&self) -> Result<Secret, AuthError> {
        let mut cached = self.cached.lock().await;
        if let Some((token, expires)) = cached.as_ref()
            && expires.is_none_or(|at| at > now().saturating_add(MARGIN.as_secs()))
        {
            return Ok(token.clone());
        }
        let oauth = BasicClient::new(ClientId::new(self.client_id.clone()))
            .set_client_secret(ClientSecret::new(self.client_secret.expose().to_owned()))
            .set_token_uri(TokenUrl::from_url(self.token_url.clone()))
            .set_auth_type(if self.in_body {
                AuthType::RequestBody
            } else {
                AuthType::BasicAuth
            });
        let call = super::flow::owned_call(&self.http);
        let tokens = oauth
            .exchange_client_credentials()
            .add_scopes(self.scopes.iter().cloned().map(Scope::new))
            .request_async(&call)
            .await
            .map_err(|error| match error {
                oauth2::RequestTokenError::Request(request_failure) => {
                    AuthError::unavailable(request_failure.0)
                }
                oauth2::RequestTokenError::ServerResponse(answer) => AuthError::refused(format!(
                    "the token endpoint refused the client: {}",
                    super::error::server_words(answer.error().as_ref(), 64)
                )),
                _ => {
                    AuthError::refused("the token endpoint answered something that is not a token")
                }
            })?;
        if !tokens.token_type().as_ref().eq_ignore_ascii_case("bearer") {
            return Err(AuthError::refused(
                "the token endpoint issued no bearer token",
            ));
        }
        let token = Secret::new(tokens.access_token().secret().clone());
        let expires = tokens
            .expires_in()
            .map(|within| now().saturating_add(within.as_secs()));
        *cached = Some((token.clone(), expires));
        Ok(token)
    }
}

impl CredentialProvider for ClientCredentials {
    fn credential<'a>(&'a self, _scheme: &'a str) -> BoxFuture<'a, Option<Credential>> {
        Box::pin(async move {
            match self.token().await {
                Ok(token) => Some(Credential::Token(token.expose().to_owned())),
                Err(error) => {
                    tracing::warn!(%error, "no client credentials token");
                    None
                }
            }
        })
    }

    fn refused<'a>(&'a self, _scheme: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            *self.cached.lock().await = None;
            true
        })
    }
}
