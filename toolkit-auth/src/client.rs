//! [`OAuthClient`]: an MCP source's HTTP client that authorizes its requests.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue};
use reqwest::{Client, Request, Response, StatusCode, Url};

use super::AuthError;
use super::callback::AuthorizationCallback;
use super::challenge::Challenge;
use super::discovery::{self, Discovered, covers};
use super::fetch::AuthHttp;
use super::flow::{self, Ask, RefreshFailed};
use super::grant::{Grant, RegisteredClient, client_auth};
use super::machine::{self, MachineCredentials};
use super::policy::{UrlPolicy, is_loopback};
use super::registration::{self, ClientConfig};
use super::store::{Change, ChangeFn, MemoryStore, TokenStore, Updated};
use toolkit_core::{BoxFuture, Reason};
use toolkit_mcp::McpHttpClient;
use toolkit_mcp::transport_failure;

/// The limits of an [`OAuthClient`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthOptions {
    /// How long each request to a metadata, registration or token endpoint may take. 10 seconds
    /// by default.
    pub request_timeout: Duration,
    /// How long the user has to authorize (the [`AuthorizationCallback`]'s wait). 5 minutes by
    /// default.
    pub authorization_timeout: Duration,
    /// The most authorizations one request may start (the first one counted), so that a server
    /// that keeps asking for scopes it is never given is not asked forever. 3 by default. 0 for
    /// a host with no user to send anywhere (a gateway): kept tokens are sent and refreshed, and
    /// a 401 they do not cure is the answer.
    pub max_authorizations: usize,
    /// How long before it expires a token is refreshed (when there is a refresh token). 60
    /// seconds by default.
    pub refresh_margin: Duration,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(10),
            authorization_timeout: Duration::from_secs(300),
            max_authorizations: 3,
            refresh_margin: Duration::from_secs(60),
        }
    }
}

/// Builder methods: each sets one field, the others keep their [`Default`] values.
impl OAuthOptions {
    /// Sets [`request_timeout`](Self::request_timeout).
    #[must_use]
    pub fn request_timeout(mut self, request_timeout: Duration) -> Self {
        self.request_timeout = request_timeout;
        self
    }

    /// Sets [`authorization_timeout`](Self::authorization_timeout).
    #[must_use]
    pub fn authorization_timeout(mut self, authorization_timeout: Duration) -> Self {
        self.authorization_timeout = authorization_timeout;
        self
    }

    /// Sets [`max_authorizations`](Self::max_authorizations).
    #[must_use]
    pub fn max_authorizations(mut self, max_authorizations: usize) -> Self {
        self.max_authorizations = max_authorizations;
        self
    }

    /// Sets [`refresh_margin`](Self::refresh_margin).
    #[must_use]
    pub fn refresh_margin(mut self, refresh_margin: Duration) -> Self {
        self.refresh_margin = refresh_margin;
        self
    }
}

/// An MCP server's HTTP client that authorizes its requests the way the MCP authorization
/// specification has it (revisions 2025-06-18 and 2025-11-25, with the 2025-03-26 fallback):
/// give it to [`Mcp::http`](toolkit_mcp::Mcp::http) in place of a `reqwest::Client`.
///
/// Each request carries the token of the [`Grant`] kept for the server, if there is one (only
/// requests to the server's resource: its origin, under its path). When the server answers:
///
/// - **401**: with a refresh token not yet tried, the token is refreshed; else the client finds
///   the authorization server (protected resource metadata from the challenge's
///   `resource_metadata` or the well-known URLs, then the authorization server's metadata, RFC
///   8414 or OpenID; for a server without resource metadata, its own origin's metadata or
///   `/authorize`, `/token`, `/register`), gets a client identity (pre-registered, a Client ID
///   Metadata Document, or dynamic registration), sends the user to authorize through the
///   [`AuthorizationCallback`] with PKCE (S256), `state` and `resource`, exchanges the code,
///   keeps the grant in the [`TokenStore`], and sends the request again. Scopes asked for: the
///   challenge's `scope`, else the resource's `scopes_supported`, else none.
/// - **403 `insufficient_scope`**: authorizes again for the scopes asked before and those the
///   challenge names, if they are more than the token holds; else the 403 stands.
/// - A 401 to a token just issued stands, and one request starts at most
///   [`OAuthOptions::max_authorizations`] authorizations.
///
/// A request that cannot be authorized fails as [`Reason::Authentication`] (or
/// [`Reason::Unavailable`] when an authorization server cannot be reached), in words that name
/// no secret. One client serves one MCP server; one authorization at a time runs, and requests
/// that waited for it use its token.
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use toolkit_auth::{AuthorizationCallback, AuthError, FileStore, OAuthClient};
/// use toolkit_mcp::Mcp;
/// use toolkit_core::{BoxFuture, ToolSource};
///
/// /// Prints the URL and reads the redirect the user pastes back.
/// struct Paste;
/// impl AuthorizationCallback for Paste {
///     fn redirect_uri(&self) -> reqwest::Url {
///         "http://127.0.0.1:8976/callback".parse().expect("a URL")
///     }
///     fn authorize(&self, url: reqwest::Url) -> BoxFuture<'_, Result<reqwest::Url, AuthError>> {
///         Box::pin(async move {
///             eprintln!("Open {url} and paste the address you land on:");
///             let mut line = String::new();
///             std::io::stdin().read_line(&mut line).map_err(|_| AuthError::Refused("no answer".into()))?;
///             line.trim().parse().map_err(|_| AuthError::Refused("not a URL".into()))
///         })
///     }
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let url: reqwest::Url = "https://mcp.example.com/mcp".parse()?;
/// let client = OAuthClient::builder(url.clone(), Paste)
///     .store(FileStore::new("/home/me/.config/toolkit/tokens.json"))
///     .build()?;
/// let source = Mcp::http("tasks", url, client);
/// let tools = source.discover().await?; // authorizes first if the server asks
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

struct Inner {
    server: Url,
    /// The key of the server's grant in the store.
    key: String,
    http: Client,
    auth_http: AuthHttp,
    policy: UrlPolicy,
    callback: Arc<dyn AuthorizationCallback>,
    redirect_uri: Url,
    store: Arc<dyn TokenStore>,
    config: ClientConfig,
    /// A client with no user: the client credentials grant in place of the user's
    /// authorization.
    machine: Option<MachineCredentials>,
    options: OAuthOptions,
    /// The grant in use, once loaded from the store.
    current: Mutex<Option<Arc<Grant>>>,
    /// The store's grant as this client last read or wrote it: when the store holds another,
    /// another client (or process) changed it since.
    seen: Mutex<Option<Arc<Grant>>>,
    /// Whether a grant the store could not keep was logged (once per client).
    unsaved_logged: AtomicBool,
    /// Held while a grant is loaded, refreshed or got: one at a time. `true` once loaded.
    flow: tokio::sync::Mutex<bool>,
    /// Clients registered, by issuer.
    registered: Mutex<HashMap<String, RegisteredClient>>,
    /// The issuer the host's secrets went to first, when the host named none: the only one they
    /// go to after.
    secrets_issuer: Mutex<Option<String>>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // No URL (it may carry a secret in its query), no token.
        f.debug_struct("OAuthClient")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

/// Builds an [`OAuthClient`]; see [`OAuthClient::builder`].
pub struct OAuthClientBuilder {
    server: Url,
    callback: Arc<dyn AuthorizationCallback>,
    http: Option<Client>,
    store: Arc<dyn TokenStore>,
    config: ClientConfig,
    machine: Option<MachineCredentials>,
    options: OAuthOptions,
    /// The key of the server's grant in the store, when not the server's URL.
    key: Option<String>,
    /// Whether the redirect URI may be a web server's (`https`), not only a loopback one.
    hosted_redirect: bool,
}

impl fmt::Debug for OAuthClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClientBuilder")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// Starts a client for the MCP server at `server`, whose user authorizes through `callback`.
    /// By default: requests sent over a `reqwest::Client` that follows redirects within the
    /// first request's origin only (as `http::client_builder`'s), grants kept in a
    /// [`MemoryStore`], a client named `toolkit` registered dynamically.
    pub fn builder(server: Url, callback: impl AuthorizationCallback) -> OAuthClientBuilder {
        OAuthClientBuilder {
            server,
            callback: Arc::new(callback),
            http: None,
            store: Arc::new(MemoryStore::new()),
            config: ClientConfig {
                pre_registered: None,
                metadata_document: None,
                client_name: "toolkit".into(),
                issuer: None,
            },
            machine: None,
            options: OAuthOptions::default(),
            key: None,
            hosted_redirect: false,
        }
    }

    /// Starts a client for the MCP server at `server` that has no user: it is authorized with
    /// the OAuth 2 client credentials grant (the MCP extension of SEP-1046) as `credentials`
    /// say, at the token endpoint discovery finds, asking for the same `resource` and scopes as
    /// a user's authorization would; a token that expires or is refused is asked for again.
    ///
    /// ```no_run
    /// use toolkit_auth::{MachineCredentials, OAuthClient};
    /// use toolkit_mcp::Mcp;
    ///
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let url: reqwest::Url = "https://mcp.example.com/mcp".parse()?;
    /// let secret = std::env::var("AGENT_SECRET")?;
    /// let client = OAuthClient::machine(url.clone(), MachineCredentials::secret("agent-7", secret))
    ///     .build()?;
    /// let source = Mcp::http("example", url, client);
    /// # Ok(()) }
    /// ```
    pub fn machine(server: Url, credentials: MachineCredentials) -> OAuthClientBuilder {
        let mut builder = Self::builder(server, NoUser);
        builder.machine = Some(credentials);
        builder
    }

    /// The grant in use, if any (loaded from the store at the first request).
    pub fn grant(&self) -> Option<Grant> {
        self.current().map(|grant| (*grant).clone())
    }

    /// Authorizes now, before any request to the server needs it (a command line's `login`):
    /// discovery as after a 401 without a challenge, then the user's authorization. Keeps the
    /// grant in the store.
    ///
    /// # Errors
    ///
    /// [`AuthError`] as for a request.
    pub async fn login(&self) -> Result<Grant, AuthError> {
        let mut loaded = self.inner.flow.lock().await;
        *loaded = true;
        let (grant, unwritten) = self.authorize(&Challenge::default(), None).await?;
        match unwritten {
            Some(error) => Err(error),
            None => Ok((*grant).clone()),
        }
    }

    /// Forgets the server's grant, here and in the store.
    ///
    /// # Errors
    ///
    /// [`AuthError::Store`] when the store fails.
    pub async fn logout(&self) -> Result<(), AuthError> {
        let mut loaded = self.inner.flow.lock().await;
        *loaded = true;
        *self
            .inner
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
        self.inner.store.remove(&self.inner.key).await?;
        self.set_seen(None);
        Ok(())
    }
}

impl OAuthClientBuilder {
    /// Sends the MCP requests over `client` (built by the host: proxy, user agent, TLS). It must
    /// carry no credential of its own.
    pub fn http(mut self, client: Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Keeps grants in `store`.
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Keeps grants in `store`, shared with other clients.
    pub fn shared_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// Authorizes as `client`, registered beforehand with the authorization server: no
    /// registration is made.
    pub fn pre_registered(mut self, client: RegisteredClient) -> Self {
        self.config.pre_registered = Some(client);
        self
    }

    /// The URL of this client's Client ID Metadata Document (an `https` URL with a path, whose
    /// document lists the redirect URI): the client id at authorization servers that support
    /// such documents, in place of registration.
    pub fn client_metadata_document(mut self, url: Url) -> Self {
        self.config.metadata_document = Some(url);
        self
    }

    /// The issuer of the authorization server the client's secrets are for (a
    /// [`pre_registered`](Self::pre_registered) client, [`OAuthClient::machine`]'s secret or
    /// key): an MCP server that names another gets an [`AuthError::Refused`] naming both, and
    /// none of them. Without it they are bound to the issuer of the grant in the store (the one
    /// `login` recorded), else to the first issuer they go to.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.config.issuer = Some(issuer.into());
        self
    }

    /// The `client_name` registered (`toolkit` by default).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.config.client_name = name.into();
        self
    }

    /// Keeps the server's grant in the store under `key` in place of the server's URL: one
    /// grant per person of a gateway (`source#person`), each client reading and refreshing its
    /// own.
    pub fn store_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Takes a redirect URI that is a web server's of the host (a gateway's
    /// `https://gateway.example.com/oauth/callback`, where its users' browsers come back): any
    /// `https` URL, besides an `http` one on loopback. The host's callback receives the redirect
    /// there.
    pub fn hosted_redirect(mut self) -> Self {
        self.hosted_redirect = true;
        self
    }

    /// The limits.
    pub fn options(mut self, options: OAuthOptions) -> Self {
        self.options = options;
        self
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// [`AuthError::Refused`] when the callback's redirect URI is not on loopback (nor `https`
    /// with [`hosted_redirect`](Self::hosted_redirect)), the server
    /// URL is not http(s), or a Client ID Metadata Document's URL is not an `https` URL with a
    /// path; [`AuthError::Unavailable`] when an HTTP client cannot be built.
    pub fn build(self) -> Result<OAuthClient, AuthError> {
        let redirect_uri = self.callback.redirect_uri();
        let hosted = self.hosted_redirect && redirect_uri.scheme() == "https";
        if !hosted && (redirect_uri.scheme() != "http" || !is_loopback(&redirect_uri)) {
            return Err(AuthError::refused(
                "the redirect URI must be an http URL on loopback (127.0.0.1, [::1] or localhost)",
            ));
        }
        if !matches!(self.server.scheme(), "http" | "https") {
            return Err(AuthError::refused("the MCP server's URL is not http(s)"));
        }
        if let Some(document) = &self.config.metadata_document
            && (document.scheme() != "https" || matches!(document.path(), "" | "/"))
        {
            return Err(AuthError::refused(
                "a Client ID Metadata Document's URL must be https, with a path",
            ));
        }
        let http = match self.http {
            Some(http) => http,
            None => Client::builder()
                .redirect(toolkit_http::same_origin_redirects())
                .build()
                .map_err(|_| AuthError::unavailable("the HTTP client could not be built"))?,
        };
        Ok(OAuthClient {
            inner: Arc::new(Inner {
                key: self.key.unwrap_or_else(|| self.server.as_str().to_owned()),
                policy: UrlPolicy::for_server(&self.server),
                auth_http: AuthHttp::new(self.options.request_timeout)?,
                server: self.server,
                http,
                callback: self.callback,
                redirect_uri,
                store: self.store,
                config: self.config,
                machine: self.machine,
                options: self.options,
                current: Mutex::new(None),
                seen: Mutex::new(None),
                unsaved_logged: AtomicBool::new(false),
                flow: tokio::sync::Mutex::new(false),
                registered: Mutex::new(HashMap::new()),
                secrets_issuer: Mutex::new(None),
            }),
        })
    }
}

/// Union of `a` and `b`, in order, without repeats.
fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut all = a.to_vec();
    for scope in b {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

impl OAuthClient {
    fn current(&self) -> Option<Arc<Grant>> {
        self.inner
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_current(&self, grant: Option<Arc<Grant>>) {
        *self
            .inner
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = grant;
    }

    fn set_seen(&self, grant: Option<Arc<Grant>>) {
        *self
            .inner
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = grant;
    }

    /// Logs, the first time, that a grant is kept in memory only.
    fn unsaved(&self, error: &AuthError) {
        if !self.inner.unsaved_logged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                %error,
                "the token store cannot keep the grant; it is used from memory meanwhile (and lost when the process ends)"
            );
        }
    }

    /// Loads the stored grant, the first time.
    async fn load(&self) -> Result<(), AuthError> {
        let mut loaded = self.inner.flow.lock().await;
        if !*loaded {
            let grant = self.inner.store.load(&self.inner.key).await?.map(Arc::new);
            self.set_seen(grant.clone());
            self.set_current(grant);
            *loaded = true;
        }
        Ok(())
    }

    /// Whether a token of `grant` may go with a request to `url`: the server's origin, under the
    /// resource the token is for.
    fn may_carry(&self, grant: &Grant, url: &Url) -> bool {
        if url.origin() != self.inner.server.origin() {
            return false;
        }
        match grant.resource.as_deref().map(Url::parse) {
            Some(Ok(resource)) => covers(&resource, url),
            Some(Err(_)) => false,
            None => true,
        }
    }

    /// Puts the current token on `request`; the grant it came from.
    fn attach(&self, request: &mut Request) -> Result<Option<Arc<Grant>>, Reason> {
        let Some(grant) = self.current() else {
            return Ok(None);
        };
        if !self.may_carry(&grant, request.url()) {
            return Ok(None);
        }
        let mut value = HeaderValue::from_str(&format!("Bearer {}", grant.access_token.expose()))
            .map_err(|_| {
            Reason::authentication("the access token cannot be sent in a header")
        })?;
        value.set_sensitive(true);
        request.headers_mut().insert(AUTHORIZATION, value);
        Ok(Some(grant))
    }

    /// Whether the grant in use is another than `sent` (another request got a new one).
    fn changed_since(&self, sent: Option<&Arc<Grant>>) -> bool {
        match (self.current(), sent) {
            (Some(now), Some(sent)) => !Arc::ptr_eq(&now, sent),
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// Refreshes `grant`; `Ok(false)` when its refresh token is no longer good (it is forgotten).
    ///
    /// The store's grant is read again first, with every other writer kept out until the
    /// refreshed grant is kept ([`TokenStore::update`]): when another client or process changed
    /// it since this one read it (refreshed it, logged in again, or out), that grant is used and
    /// none refreshed, so a rotated refresh token is never sent twice; only the grant whose
    /// refresh token is refused is forgotten. A refreshed grant the store cannot keep is used
    /// from memory.
    async fn refresh(&self, grant: &Grant) -> Result<bool, AuthError> {
        let seen = self
            .inner
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let refused = AtomicBool::new(false);
        let http = &self.inner.auth_http;
        let refused_flag = &refused;
        let change: ChangeFn<'_> = Box::new(move |stored: Option<Grant>| {
            Box::pin(async move {
                let unchanged =
                    stored.as_ref() == Some(grant) || stored.as_ref() == seen.as_deref();
                if !unchanged {
                    tracing::debug!("the stored grant changed since it was read; it is used");
                    return Ok(Change::Keep);
                }
                match flow::refresh(http, grant).await {
                    Ok(refreshed) => Ok(Change::Save(refreshed)),
                    Err(RefreshFailed::Expired) => {
                        refused_flag.store(true, Ordering::Relaxed);
                        let same_token = stored.as_ref().map(|stored| &stored.refresh_token)
                            == Some(&grant.refresh_token);
                        Ok(if same_token {
                            Change::Remove
                        } else {
                            Change::Keep
                        })
                    }
                    Err(RefreshFailed::Failed(error)) => Err(error),
                }
            })
        });
        let Updated {
            grant: now,
            unwritten,
        } = self.inner.store.update(&self.inner.key, change).await?;
        let now = now.map(Arc::new);
        match &unwritten {
            Some(error) => self.unsaved(error),
            None => self.set_seen(now.clone()),
        }
        if refused.into_inner() {
            tracing::debug!("the refresh token was refused; authorizing again");
            self.set_current(None);
            return Ok(false);
        }
        let good = now.is_some();
        self.set_current(now);
        if good {
            tracing::debug!("refreshed the access token");
        }
        Ok(good)
    }

    /// The client identity at the authorization server of `discovered`.
    async fn client_for(&self, discovered: &Discovered) -> Result<RegisteredClient, AuthError> {
        let issuer = &discovered.server.issuer;
        if let Some(client) = self
            .inner
            .registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(issuer)
        {
            return Ok(client.clone());
        }
        if let Some(grant) = self.current().filter(|grant| &grant.issuer == issuer) {
            return Ok(grant.client.clone());
        }
        let client = registration::client_for(
            &self.inner.auth_http,
            &discovered.server,
            &self.inner.config,
            &self.inner.redirect_uri,
        )
        .await?;
        self.inner
            .registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(issuer.clone(), client.clone());
        Ok(client)
    }

    /// Runs an authorization after `challenge`, for `scopes` if given (else as the challenge and
    /// the resource say), and keeps its grant.
    async fn authorize(
        &self,
        challenge: &Challenge,
        scopes: Option<Vec<String>>,
    ) -> Result<(Arc<Grant>, Option<AuthError>), AuthError> {
        let discovered = discovery::discover(
            &self.inner.auth_http,
            &self.inner.policy,
            &self.inner.server,
            challenge,
        )
        .await?;
        self.check_secrets_issuer(&discovered.server.issuer)?;
        let scopes = scopes
            .or_else(|| challenge.scope.clone())
            .or_else(|| discovered.scopes_supported.clone())
            .unwrap_or_default();
        if let Some(machine) = &self.inner.machine {
            let grant = machine::grant(
                &self.inner.auth_http,
                machine,
                &discovered.server,
                discovered.resource.as_deref(),
                &scopes,
            )
            .await?;
            return Ok(self.keep(grant).await);
        }
        let client = self.client_for(&discovered).await?;
        let client_auth = client_auth(&client, discovered.server.auth_methods.as_deref());
        let ask = Ask {
            server: &discovered.server,
            client: &client,
            client_auth,
            redirect_uri: &self.inner.redirect_uri,
            resource: discovered.resource.as_deref(),
            scopes: &scopes,
        };
        tracing::debug!(scopes = %scopes.join(" "), "authorizing");
        let grant = flow::authorize(
            &self.inner.auth_http,
            &ask,
            self.inner.callback.as_ref(),
            self.inner.options.authorization_timeout,
        )
        .await?;
        Ok(self.keep(grant).await)
    }

    /// Refuses `issuer` when the host's secrets (a machine client's, a pre-registered client)
    /// are bound to another: the host's issuer, else the stored grant's, else the first they
    /// went to.
    fn check_secrets_issuer(&self, issuer: &str) -> Result<(), AuthError> {
        if self.inner.machine.is_none() && self.inner.config.pre_registered.is_none() {
            return Ok(());
        }
        let mut first = self
            .inner
            .secrets_issuer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let bound = self
            .inner
            .config
            .issuer
            .clone()
            .or_else(|| self.current().map(|grant| grant.issuer.clone()))
            .or_else(|| first.clone());
        registration::check_issuer(bound.as_deref(), issuer)?;
        first.get_or_insert_with(|| issuer.to_owned());
        Ok(())
    }

    /// Puts `grant` in use, and keeps it in the store; why the store could not keep it, if it
    /// could not.
    async fn keep(&self, grant: Grant) -> (Arc<Grant>, Option<AuthError>) {
        let grant = Arc::new(grant);
        self.set_current(Some(grant.clone()));
        match self.inner.store.save(&self.inner.key, &grant).await {
            Ok(()) => {
                self.set_seen(Some(grant.clone()));
                (grant, None)
            }
            Err(error) => (grant, Some(error)),
        }
    }

    async fn send_now(&self, request: Request) -> Result<Response, Reason> {
        self.load().await?;
        let Some(template) = request.try_clone() else {
            // A body that cannot be sent twice: sent once, with whatever token there is.
            let mut request = request;
            self.attach(&mut request)?;
            return self
                .inner
                .http
                .execute(request)
                .await
                .map_err(transport_failure);
        };
        let mut first = Some(request);
        let mut authorizations = 0;
        let mut refreshed = false;
        let mut fresh = false;
        // Bounds the loop whatever happens: each round is a refresh, an authorization, or a
        // token another request got.
        for _ in 0..(2 * self.inner.options.max_authorizations + 4) {
            let mut attempt = match first.take() {
                Some(request) => request,
                None => template
                    .try_clone()
                    .ok_or_else(|| Reason::unknown("the request could not be sent again"))?,
            };
            if let Some(grant) = self.current()
                && !refreshed
                && grant.refresh_token.is_some()
                && grant.expires_within(self.inner.options.refresh_margin)
            {
                let _flow = self.inner.flow.lock().await;
                if !self.changed_since(Some(&grant)) {
                    refreshed = true;
                    match self.refresh(&grant).await {
                        Ok(_) => {}
                        // Ahead of expiry, the token still serves while the server is down.
                        Err(error) if !grant.expires_within(Duration::ZERO) => {
                            tracing::debug!(%error, "a refresh ahead of expiry failed; the token is used meanwhile");
                        }
                        Err(error) => return Err(error.into()),
                    }
                }
            }
            let sent = self.attach(&mut attempt)?;
            let response = self
                .inner
                .http
                .execute(attempt)
                .await
                .map_err(transport_failure)?;
            let status = response.status();
            if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
                return Ok(response);
            }
            let challenge = Challenge::of(response.headers());
            if status == StatusCode::FORBIDDEN && !challenge.insufficient_scope() {
                return Ok(response);
            }
            let _flow = self.inner.flow.lock().await;
            if self.changed_since(sent.as_ref()) {
                continue;
            }
            let scopes = if status == StatusCode::UNAUTHORIZED {
                if fresh {
                    // A token just issued is refused: another authorization would loop.
                    return Ok(response);
                }
                if let Some(grant) = &sent
                    && grant.refresh_token.is_some()
                    && !refreshed
                {
                    refreshed = true;
                    if self.refresh(grant).await? {
                        continue;
                    }
                }
                sent.as_ref().map(|grant| {
                    union(
                        &grant.scopes,
                        challenge.scope.as_deref().unwrap_or_default(),
                    )
                })
            } else {
                // 403 insufficient_scope: ask again for what was asked and what is missing.
                let asked = sent
                    .as_ref()
                    .map(|grant| grant.scopes.clone())
                    .unwrap_or_default();
                let wanted = union(&asked, challenge.scope.as_deref().unwrap_or_default());
                let held = sent
                    .as_ref()
                    .map(|grant| grant.holds().to_vec())
                    .unwrap_or_default();
                if sent.is_some() && wanted.iter().all(|scope| held.contains(scope)) {
                    tracing::debug!(
                        "the server asks for scopes the token holds; a new authorization cannot help"
                    );
                    return Ok(response);
                }
                Some(wanted)
            };
            if authorizations >= self.inner.options.max_authorizations {
                tracing::debug!("stopped after {authorizations} authorizations for one request");
                return Ok(response);
            }
            authorizations += 1;
            let (_, unwritten) = self
                .authorize(&challenge, scopes.filter(|s| !s.is_empty()))
                .await?;
            if let Some(error) = unwritten {
                self.unsaved(&error);
            }
            fresh = true;
        }
        Err(Reason::authentication(
            "the server kept refusing the client's credentials",
        ))
    }
}

/// The callback of a client with no user ([`OAuthClient::machine`]): never asked, as the
/// client credentials grant takes the user's authorization's place.
struct NoUser;

impl AuthorizationCallback for NoUser {
    fn redirect_uri(&self) -> Url {
        // Registered nowhere and sent nowhere: a machine client uses no redirect.
        Url::parse("http://127.0.0.1/callback").unwrap_or_else(|_| unreachable!())
    }

    fn authorize(&self, _: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async {
            Err(AuthError::refused(
                "a client with no user cannot be sent to an authorization page",
            ))
        })
    }
}

impl McpHttpClient for OAuthClient {
    fn client(&self) -> &Client {
        &self.inner.http
    }

    fn send(&self, request: Request) -> BoxFuture<'_, Result<Response, Reason>> {
        Box::pin(self.send_now(request))
    }
}
