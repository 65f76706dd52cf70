//! Credentials where an API's security schemes say: [`Credential`], [`CredentialProvider`] and
//! [`Credentials`], applied by an [`HttpSource`](super::HttpSource) given them with
//! [`security`](super::HttpSourceBuilder::security).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use reqwest::header::{AUTHORIZATION, COOKIE, HeaderName, HeaderValue};

use super::{KeyLocation, SecurityRequirement, SecurityScheme};
use toolkit_core::BoxFuture;

/// A credential the host gives for a scheme. Shown by no `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// An API key (sent as given), a bearer token, or the access token of an OAuth 2 or OpenID
    /// Connect scheme.
    Token(String),
    /// HTTP basic: a user (without `:`) and a password.
    Basic {
        /// The user.
        user: String,
        /// The password.
        password: String,
    },
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Token(_) => f.write_str("Token(…)"),
            Self::Basic { .. } => f.write_str("Basic(…)"),
        }
    }
}

/// Gives the credential of a scheme when a call needs it (so a token can be fetched or
/// refreshed meanwhile); `None` when the host has none for it.
pub trait CredentialProvider: Send + Sync + 'static {
    /// The credential of the scheme named `scheme`.
    fn credential<'a>(&'a self, scheme: &'a str) -> BoxFuture<'a, Option<Credential>>;

    /// The API refused (401 or 403) a call that carried the credential of `scheme`: `true` when
    /// the next [`credential`](CredentialProvider::credential) gives a fresh one (a token
    /// fetched again), so that the call is sent once more. By default `false`.
    fn refused<'a>(&'a self, scheme: &'a str) -> BoxFuture<'a, bool> {
        let _ = scheme;
        Box::pin(async { false })
    }
}

/// How the `client_id:client_secret` of an OAuth 2 client-credentials scheme becomes the provider
/// of its tokens, given the scheme's checked token URL, the id and the secret:
/// `toolkit_auth::ClientCredentials::flow()` is one. Kept apart so that
/// this crate fetches no token itself.
pub type ClientCredentialsFlow = Arc<
    dyn Fn(reqwest::Url, &str, &str) -> Result<Arc<dyn CredentialProvider>, String> + Send + Sync,
>;

/// Credentials by scheme name: fixed ones, and providers of their own (such as
/// `auth::ClientCredentials`, feature `auth`, which fetches OAuth 2 tokens).
///
/// ```
/// use toolkit_http::{Credential, Credentials};
///
/// let credentials = Credentials::new()
///     .with("api_key", Credential::Token(std::env::var("PETSTORE_KEY").unwrap_or_default()));
/// ```
#[derive(Clone, Default)]
pub struct Credentials {
    by_scheme: BTreeMap<String, Credential>,
    providers: BTreeMap<String, Arc<dyn CredentialProvider>>,
    /// Origins other than the API's whose `tokenUrl` the host allows a client secret to go to
    /// (see [`Credentials::allow_token_origin`]).
    pub(super) token_origins: Vec<String>,
    pub(super) client_credentials: Option<ClientCredentialsFlow>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("schemes", &self.by_scheme.keys().collect::<Vec<_>>())
            .field("providers", &self.providers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Credentials {
    /// No credentials.
    pub fn new() -> Self {
        Self::default()
    }

    /// These credentials and `credential` for the scheme `scheme`.
    #[must_use]
    pub fn with(mut self, scheme: impl Into<String>, credential: Credential) -> Self {
        self.by_scheme.insert(scheme.into(), credential);
        self
    }

    /// These credentials, allowing an OAuth 2 `tokenUrl` on `origin` (`https://auth.example.com`)
    /// to receive a client secret that [`with_text`](Self::with_text) reads after this: by
    /// default only a `tokenUrl` on the API's own origin does, so that a document cannot send
    /// the secret elsewhere.
    #[must_use]
    pub fn allow_token_origin(mut self, origin: impl Into<String>) -> Self {
        self.token_origins
            .push(origin.into().trim_end_matches('/').to_owned());
        self
    }

    /// These credentials, reading the `client_id:client_secret` of an OAuth 2 client-credentials
    /// scheme (in [`with_text`](Self::with_text)) with `flow`, which fetches and keeps its tokens.
    /// Without one, such a text is refused.
    #[must_use]
    pub fn with_client_credentials_flow(mut self, flow: ClientCredentialsFlow) -> Self {
        self.client_credentials = Some(flow);
        self
    }

    /// These credentials and `provider` (shared) for the scheme `scheme`.
    pub(super) fn with_shared_provider(
        mut self,
        scheme: &str,
        provider: Arc<dyn CredentialProvider>,
    ) -> Self {
        self.providers.insert(scheme.to_owned(), provider);
        self
    }

    /// These credentials and `provider` for the scheme `scheme`.
    #[must_use]
    pub fn with_provider(
        mut self,
        scheme: impl Into<String>,
        provider: impl CredentialProvider,
    ) -> Self {
        self.providers.insert(scheme.into(), Arc::new(provider));
        self
    }
}

impl CredentialProvider for Credentials {
    fn credential<'a>(&'a self, scheme: &'a str) -> BoxFuture<'a, Option<Credential>> {
        Box::pin(async move {
            match self.providers.get(scheme) {
                Some(provider) => provider.credential(scheme).await,
                None => self.by_scheme.get(scheme).cloned(),
            }
        })
    }

    fn refused<'a>(&'a self, scheme: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            match self.providers.get(scheme) {
                Some(provider) => provider.refused(scheme).await,
                None => false,
            }
        })
    }
}

/// What a source knows of its operations' security.
pub(crate) struct SourceSecurity {
    pub schemes: BTreeMap<String, SecurityScheme>,
    pub requirements: BTreeMap<String, Vec<SecurityRequirement>>,
    pub provider: Box<dyn CredentialProvider>,
}

/// What a call's credentials did to its request.
#[derive(Default)]
pub(crate) struct Applied {
    /// The values sent, to keep out of any words a model reads.
    pub secrets: Vec<String>,
    /// Whether one is in the URL (so no failure names the URL).
    pub in_url: bool,
    /// The schemes whose credentials it carries.
    pub schemes: Vec<String>,
}

impl SourceSecurity {
    /// Puts on `request` the credentials of the first requirement of `operation` the provider
    /// meets (an empty one, `{}`, is met with none); nothing when the operation has none.
    ///
    /// # Errors
    ///
    /// A description naming the schemes, when the provider meets none of the requirements: the
    /// request is not sent.
    pub(crate) async fn apply(
        &self,
        operation: &str,
        request: &mut reqwest::Request,
    ) -> Result<Applied, String> {
        let mut applied = Applied::default();
        let Some(requirements) = self.requirements.get(operation) else {
            return Ok(applied);
        };
        if requirements.is_empty() {
            return Ok(applied);
        }
        'requirements: for requirement in requirements {
            let mut chosen = Vec::new();
            for scheme_name in requirement.keys() {
                let Some(scheme) = self.schemes.get(scheme_name) else {
                    continue 'requirements;
                };
                if *scheme == SecurityScheme::MutualTls {
                    // The host's client carries the certificate.
                    continue;
                }
                match self.provider.credential(scheme_name).await {
                    Some(credential) if fits(scheme, &credential) => {
                        chosen.push((scheme_name, scheme, credential));
                    }
                    _ => continue 'requirements,
                }
            }
            for (name, scheme, credential) in chosen {
                put(scheme, &credential, request, &mut applied);
                applied.schemes.push(name.clone());
            }
            return Ok(applied);
        }
        let wanted: Vec<String> = requirements
            .iter()
            .map(|requirement| {
                requirement
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(" and ")
            })
            .collect();
        Err(format!(
            "the operation needs a credential of the security scheme {}, and the host configured \
             none for it: nothing was sent",
            wanted.join(", or ")
        ))
    }

    /// Tells the provider the API refused `applied`'s credentials: whether any is fresh now.
    pub(crate) async fn refused(&self, applied: &Applied) -> bool {
        let mut fresh = false;
        for scheme in &applied.schemes {
            fresh |= self.provider.refused(scheme).await;
        }
        fresh
    }
}

fn fits(scheme: &SecurityScheme, credential: &Credential) -> bool {
    match (scheme, credential) {
        (SecurityScheme::Http { scheme }, Credential::Basic { user, .. }) => {
            scheme == "basic" && !user.contains(':')
        }
        (SecurityScheme::Http { scheme }, Credential::Token(_)) => scheme != "basic",
        (_, Credential::Token(_)) => true,
        (_, Credential::Basic { .. }) => false,
    }
}

fn sensitive(text: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(text).ok()?;
    value.set_sensitive(true);
    Some(value)
}

fn put(
    scheme: &SecurityScheme,
    credential: &Credential,
    request: &mut reqwest::Request,
    applied: &mut Applied,
) {
    let headers_failed = || tracing::warn!("a credential cannot be sent in a header; left out");
    match (scheme, credential) {
        (SecurityScheme::ApiKey { name, location }, Credential::Token(key)) => {
            applied.secrets.push(key.clone());
            match location {
                KeyLocation::Header => {
                    match (HeaderName::from_bytes(name.as_bytes()), sensitive(key)) {
                        (Ok(header), Some(value)) => {
                            request.headers_mut().insert(header, value);
                        }
                        _ => headers_failed(),
                    }
                }
                KeyLocation::Query => {
                    applied.in_url = true;
                    request.url_mut().query_pairs_mut().append_pair(name, key);
                }
                KeyLocation::Cookie => {
                    let pair = format!("{name}={key}");
                    let cookie = match request.headers().get(COOKIE).and_then(|v| v.to_str().ok()) {
                        Some(existing) if !existing.is_empty() => format!("{existing}; {pair}"),
                        _ => pair,
                    };
                    match sensitive(&cookie) {
                        Some(value) => {
                            request.headers_mut().insert(COOKIE, value);
                        }
                        None => headers_failed(),
                    }
                }
            }
        }
        (SecurityScheme::Http { .. }, Credential::Basic { user, password }) => {
            applied.secrets.push(password.clone());
            let encoded = BASE64.encode(format!("{user}:{password}").as_bytes());
            applied.secrets.push(encoded.clone());
            match sensitive(&format!("Basic {encoded}")) {
                Some(value) => {
                    request.headers_mut().insert(AUTHORIZATION, value);
                }
                None => headers_failed(),
            }
        }
        (scheme, Credential::Token(token)) => {
            applied.secrets.push(token.clone());
            let prefix = match scheme {
                SecurityScheme::Http { scheme } if scheme != "bearer" => {
                    let mut chars = scheme.chars();
                    chars
                        .next()
                        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                        .unwrap_or_default()
                }
                _ => "Bearer".to_owned(),
            };
            match sensitive(&format!("{prefix} {token}")) {
                Some(value) => {
                    request.headers_mut().insert(AUTHORIZATION, value);
                }
                None => headers_failed(),
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_do_not_show_in_debug() {
        let credentials = Credentials::new()
            .with("k", Credential::Token("s3cr3t".into()))
            .with(
                "b",
                Credential::Basic {
                    user: "u".into(),
                    password: "pw-s3cr3t".into(),
                },
            );
        let shown = format!("{credentials:?} {:?}", Credential::Token("s3cr3t".into()));
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
}
