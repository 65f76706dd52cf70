//! [`MachineCredentials`]: an [`OAuthClient`](super::OAuthClient) with no user, authorized with
//! the OAuth 2 client credentials grant (the MCP extension of SEP-1046): the client's secret
//! (HTTP basic or in the body, as the server advertises) or a JWT it signs with its private key
//! (`private_key_jwt`, RFC 7523), at the token endpoint discovery found.

use std::fmt;
use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use oauth2::basic::BasicClient;
use oauth2::{AuthType, ClientId, ClientSecret, CsrfToken, Scope, TokenResponse, TokenUrl};
use serde::Serialize;

use super::authorization_server::AuthorizationServer;
use super::error::server_words;
use super::fetch::AuthHttp;
use super::grant::{ClientAuth, Grant, RegisteredClient, now};
use super::{AuthError, Secret};

/// How long a signed client assertion is good for.
const ASSERTION_LIFETIME: Duration = Duration::from_secs(300);

/// The `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How a client with no user proves who it is at the token endpoint. Shown by no `Debug` output
/// but for the client id.
///
/// ```
/// use toolkit_auth::MachineCredentials;
///
/// let credentials = MachineCredentials::secret("agent-7", std::env::var("AGENT_SECRET").unwrap_or_default());
/// ```
#[derive(Clone)]
pub enum MachineCredentials {
    /// A client secret, sent with HTTP basic (`client_secret_basic`) unless the server lists only
    /// `client_secret_post`.
    Secret {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: Secret,
    },
    /// A private key whose signed JWT is the client's assertion (`private_key_jwt`): `iss` and
    /// `sub` the client id, `aud` the authorization server's issuer, five minutes of life.
    PrivateKeyJwt {
        /// The client id.
        client_id: String,
        /// The private key, PEM (PKCS#8 for EC keys, PKCS#1 or PKCS#8 for RSA).
        private_key_pem: Secret,
        /// The signing algorithm the server accepts: `ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`…
        algorithm: String,
    },
}

impl fmt::Debug for MachineCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, client_id) = match self {
            Self::Secret { client_id, .. } => ("Secret", client_id),
            Self::PrivateKeyJwt { client_id, .. } => ("PrivateKeyJwt", client_id),
        };
        f.debug_struct(kind)
            .field("client_id", client_id)
            .finish_non_exhaustive()
    }
}

impl MachineCredentials {
    /// A client secret.
    pub fn secret(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self::Secret {
            client_id: client_id.into(),
            client_secret: Secret::new(client_secret),
        }
    }

    /// A private key (PEM) signing with `algorithm` (`ES256`, `RS256`, …).
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        private_key_pem: impl Into<String>,
        algorithm: impl Into<String>,
    ) -> Self {
        Self::PrivateKeyJwt {
            client_id: client_id.into(),
            private_key_pem: Secret::new(private_key_pem),
            algorithm: algorithm.into(),
        }
    }

    fn client_id(&self) -> &str {
        match self {
            Self::Secret { client_id, .. } | Self::PrivateKeyJwt { client_id, .. } => client_id,
        }
    }
}

/// The claims of a client assertion.
#[derive(Serialize)]
struct Assertion<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

/// A grant from the token endpoint of `server` for `credentials`, with `resource` (RFC 8707)
/// and `scopes`.
pub(crate) async fn grant(
    http: &AuthHttp,
    credentials: &MachineCredentials,
    server: &AuthorizationServer,
    resource: Option<&str>,
    scopes: &[String],
) -> Result<Grant, AuthError> {
    let client_id = credentials.client_id();
    let mut oauth = BasicClient::new(ClientId::new(client_id.to_owned()))
        .set_token_uri(TokenUrl::from_url(server.token_endpoint.clone()));
    let mut client_auth = ClientAuth::None;
    let mut assertion = None;
    match credentials {
        MachineCredentials::Secret { client_secret, .. } => {
            let post_only = server.auth_methods.as_deref().is_some_and(|methods| {
                methods.iter().any(|m| m == "client_secret_post")
                    && !methods.iter().any(|m| m == "client_secret_basic")
            });
            let (auth_type, method) = if post_only {
                (AuthType::RequestBody, ClientAuth::ClientSecretPost)
            } else {
                (AuthType::BasicAuth, ClientAuth::ClientSecretBasic)
            };
            client_auth = method;
            oauth = oauth
                .set_client_secret(ClientSecret::new(client_secret.expose().to_owned()))
                .set_auth_type(auth_type);
        }
        MachineCredentials::PrivateKeyJwt {
            private_key_pem,
            algorithm,
            ..
        } => {
            oauth = oauth.set_auth_type(AuthType::RequestBody);
            assertion = Some(sign(client_id, &server.issuer, private_key_pem, algorithm)?);
        }
    }
    let mut request = oauth
        .exchange_client_credentials()
        .add_scopes(scopes.iter().cloned().map(Scope::new));
    if let Some(assertion) = assertion {
        request = request
            .add_extra_param("client_assertion_type", JWT_BEARER)
            .add_extra_param("client_assertion", assertion);
    }
    if let Some(resource) = resource {
        request = request.add_extra_param("resource", resource.to_owned());
    }
    let call = super::flow::owned_call(http);
    let tokens = request
        .request_async(&call)
        .await
        .map_err(|error| match error {
            oauth2::RequestTokenError::Request(request_failure) => {
                AuthError::unavailable(request_failure.0)
            }
            oauth2::RequestTokenError::ServerResponse(answer) => AuthError::refused(format!(
                "the token endpoint refused the client: {}",
                server_words(answer.error().as_ref(), 64)
            )),
            _ => AuthError::refused("the token endpoint answered something that is not a token"),
        })?;
    if !tokens.token_type().as_ref().eq_ignore_ascii_case("bearer")
        || tokens.access_token().secret().is_empty()
    {
        return Err(AuthError::refused(
            "the token endpoint issued no bearer token",
        ));
    }
    Ok(Grant {
        issuer: server.issuer.clone(),
        token_endpoint: server.token_endpoint.as_str().to_owned(),
        resource: resource.map(str::to_owned),
        // No secret: a grant that has no refresh token never needs it again, and a stored grant
        // keeps no secret it does not need (a new token is asked for with the credentials the
        // client was given).
        client: RegisteredClient::new(client_id, None),
        client_auth,
        access_token: Secret::new(tokens.access_token().secret().clone()),
        // A client that can always ask again keeps no refresh token (RFC 6749 §4.4.3).
        refresh_token: None,
        expires_at: tokens
            .expires_in()
            .map(|within| now().saturating_add(within.as_secs())),
        scopes: scopes.to_vec(),
        granted: tokens
            .scopes()
            .map(|scopes| scopes.iter().map(|scope| scope.to_string()).collect()),
    })
}

/// The client assertion: a JWT `client_id` signs for `audience` with its key.
fn sign(
    client_id: &str,
    audience: &str,
    private_key_pem: &Secret,
    algorithm: &str,
) -> Result<String, AuthError> {
    let algorithm: Algorithm = algorithm.parse().map_err(|_| {
        AuthError::refused("the client assertion's signing algorithm is not one JWT names")
    })?;
    let pem = private_key_pem.expose().as_bytes();
    let key = match algorithm {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem),
        _ => {
            return Err(AuthError::refused(
                "a client assertion is signed with a private key (EC, RSA or EdDSA)",
            ));
        }
    }
    .map_err(|_| {
        AuthError::refused("the client's private key is not a PEM key of its algorithm")
    })?;
    let issued = now();
    let claims = Assertion {
        iss: client_id,
        sub: client_id,
        aud: audience,
        iat: issued,
        exp: issued.saturating_add(ASSERTION_LIFETIME.as_secs()),
        jti: CsrfToken::new_random().secret().clone(),
    };
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &key)
        .map_err(|_| AuthError::refused("the client assertion could not be signed"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn debug_shows_the_client_id_only() {
        let shown = format!(
            "{:?} {:?}",
            MachineCredentials::secret("agent", "s3cret"),
            MachineCredentials::private_key_jwt("agent", "-----BEGIN KEY-----", "ES256")
        );
        assert!(shown.contains("agent") && !shown.contains("s3cret") && !shown.contains("BEGIN"));
    }

    #[test]
    fn bad_keys_and_algorithms_are_refused_naming_no_key() {
        let key = Secret::new("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----");
        for algorithm in ["ES256", "RS256", "HS256", "none", "XX1"] {
            let error = sign("agent", "https://auth.example.com", &key, algorithm).unwrap_err();
            assert!(!error.to_string().contains("not a key"), "{error}");
        }
    }
}
