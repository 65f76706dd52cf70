//! What an authorization server is known by: its issuer and endpoints, from its metadata or
//! from an OpenAPI document's flow.

use reqwest::Url;

/// An authorization server, from its metadata.
#[derive(Clone, Debug)]
pub(crate) struct AuthorizationServer {
    pub issuer: String,
    /// Absent for a server that offers no grant through the user (client credentials only).
    pub authorization_endpoint: Option<Url>,
    pub token_endpoint: Url,
    // Read by MCP's client registration (feature `mcp`).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub registration_endpoint: Option<Url>,
    /// `token_endpoint_auth_methods_supported` (absent: `client_secret_basic` only).
    pub auth_methods: Option<Vec<String>>,
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub client_id_metadata_document_supported: bool,
    pub iss_parameter_supported: bool,
}
