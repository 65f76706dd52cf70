//! An API's security, as data: its [`SecurityScheme`]s and each operation's
//! [`SecurityRequirement`]s, as the OpenAPI reader reads them (no executor needed). The
//! credentials that meet them are applied by an `HttpSource` (feature `http`, `credentials.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where an API key goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyLocation {
    /// A request header of the scheme's name.
    Header,
    /// A query parameter of the scheme's name.
    Query,
    /// A cookie of the scheme's name.
    Cookie,
}

/// An OAuth 2 flow of a scheme: its URLs as the document writes them (maybe relative to the
/// server's URL) and its scopes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthFlow {
    /// `authorizationUrl` (authorization code and implicit flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<String>,
    /// `tokenUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// `refreshUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// The scopes' names.
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// A security scheme of a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SecurityScheme {
    /// An API key in a header, the query or a cookie, sent as given.
    ApiKey {
        /// The header, query parameter or cookie name.
        name: String,
        /// Where it goes.
        #[serde(rename = "in")]
        location: KeyLocation,
    },
    /// HTTP authentication: `Authorization: <Scheme> <credential>` (`basic`: base64 of
    /// `user:password`; `bearer`: a token).
    Http {
        /// The scheme, lower-cased (`basic`, `bearer`, …).
        scheme: String,
    },
    /// OAuth 2: a token got through one of the flows, sent as a bearer token.
    #[serde(rename = "oauth2")]
    OAuth2 {
        /// The flows the document names, by name (`clientCredentials`, `authorizationCode`,
        /// `implicit`, `password`).
        flows: BTreeMap<String, OAuthFlow>,
    },
    /// OpenID Connect: a token got through the provider the discovery URL names, sent as a
    /// bearer token.
    OpenIdConnect {
        /// `openIdConnectUrl`.
        url: String,
    },
    /// A client certificate on the TLS connection (the host's client carries it).
    MutualTls,
}

/// One way of meeting an operation's security: every named scheme, with the scopes of the OAuth
/// ones. An empty requirement means no credential is needed.
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;
