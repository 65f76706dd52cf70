//! [`Grant`]: what an authorization gave, as a [`TokenStore`](super::TokenStore) keeps it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::Secret;

/// How a client authenticates at the token endpoint (RFC 7591 names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuth {
    /// A public client: `client_id` in the body, no secret.
    None,
    /// `Authorization: Basic` with the id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the body.
    ClientSecretPost,
}

/// A client's identity at an authorization server: pre-registered, a Client ID Metadata
/// Document's URL, or what dynamic registration gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredClient {
    /// The client id.
    pub client_id: String,
    /// The client secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// The token endpoint authentication method the registration named, if it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<String>,
}

impl RegisteredClient {
    /// A client pre-registered at the authorization server as `client_id` (with `client_secret`
    /// for a confidential client).
    pub fn new(client_id: impl Into<String>, client_secret: Option<Secret>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret,
            auth_method: None,
        }
    }
}

/// What an authorization gave for one MCP server: the tokens, and all a refresh needs (the
/// token endpoint, the client, the resource), so that a stored grant is refreshed without
/// discovery.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The authorization server's issuer.
    pub issuer: String,
    /// Its token endpoint.
    pub token_endpoint: String,
    /// The `resource` the tokens were asked for (RFC 8707); `None` for a server of 2025-03-26.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The client the tokens were issued to.
    pub client: RegisteredClient,
    /// How the client authenticates at the token endpoint.
    pub client_auth: ClientAuth,
    /// The access token.
    pub access_token: Secret,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// When the access token expires, in seconds since the Unix epoch, if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes asked for.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The scopes granted, when the server said (else those asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted: Option<Vec<String>>,
}

/// Seconds since the Unix epoch, now.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|since| since.as_secs())
        .unwrap_or(0)
}

impl Grant {
    /// Whether the access token expires within `margin` (or has).
    pub fn expires_within(&self, margin: Duration) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now().saturating_add(margin.as_secs()))
    }

    /// The scopes the token holds: those granted, or else those asked for.
    pub fn holds(&self) -> &[String] {
        self.granted.as_deref().unwrap_or(&self.scopes)
    }
}

/// How `client` authenticates at `server`'s token endpoint: the method its registration named if
/// the server lists it, else Basic, else the body, else none (what the server lists; a server
/// that lists nothing takes `client_secret_basic`).
pub(crate) fn client_auth(client: &RegisteredClient, methods: Option<&[String]>) -> ClientAuth {
    let listed = |name: &str| match methods {
        None => name == "client_secret_basic",
        Some(methods) => methods.iter().any(|m| m == name),
    };
    let has_secret = client.client_secret.is_some();
    let named = match client.auth_method.as_deref() {
        Some("none") => Some(ClientAuth::None),
        Some("client_secret_basic") if has_secret => Some(ClientAuth::ClientSecretBasic),
        Some("client_secret_post") if has_secret => Some(ClientAuth::ClientSecretPost),
        _ => None,
    };
    if let (Some(method), Some(name)) = (named, client.auth_method.as_deref())
        && listed(name)
    {
        return method;
    }
    if has_secret && listed("client_secret_basic") {
        ClientAuth::ClientSecretBasic
    } else if has_secret && listed("client_secret_post") {
        ClientAuth::ClientSecretPost
    } else if !has_secret || listed("none") {
        ClientAuth::None
    } else {
        ClientAuth::ClientSecretBasic
    }
}
