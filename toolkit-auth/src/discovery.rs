//! Finding the authorization server of an MCP server: protected resource metadata (RFC 9728),
//! then authorization server metadata (RFC 8414, then OpenID Connect Discovery); for a server
//! of 2025-03-26 that has no resource metadata, the metadata at its origin or the default
//! endpoints.
//!
//! Written here rather than taken from a crate: `oauth2` does no discovery, and `openidconnect`
//! reads only OpenID documents and none of RFC 9728.

use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;

use super::AuthError;
use super::authorization_server::AuthorizationServer;
use super::challenge::Challenge;
use super::fetch::{AuthHttp, Fetched};
use super::policy::UrlPolicy;

/// The revision whose discovery is the fallback, sent as `MCP-Protocol-Version`.
const LEGACY_REVISION: &str = "2025-03-26";

/// What discovery found.
#[derive(Clone, Debug)]
pub(crate) struct Discovered {
    /// The protected resource metadata's `resource`, verbatim: what `resource` says in the
    /// authorization and token requests. `None` for a server of 2025-03-26 (no such metadata).
    pub resource: Option<String>,
    /// The resource metadata's `scopes_supported`.
    pub scopes_supported: Option<Vec<String>>,
    /// The authorization server.
    pub server: AuthorizationServer,
}

#[derive(Deserialize)]
struct ResourceMetadata {
    resource: String,
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct ServerMetadata {
    issuer: String,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
    registration_endpoint: Option<String>,
    response_types_supported: Option<Vec<String>>,
    code_challenge_methods_supported: Option<Vec<String>>,
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    client_id_metadata_document_supported: Option<bool>,
    authorization_response_iss_parameter_supported: Option<bool>,
}

/// `url` with `path` as its path, and no query or fragment.
fn at_path(url: &Url, path: &str) -> Url {
    let mut url = url.clone();
    url.set_path(path);
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// Where the protected resource metadata of `server` may be, in order: the challenge's
/// `resource_metadata`, the path-inserted well-known URL, the root one.
fn resource_metadata_urls(server: &Url, challenge: &Challenge) -> Vec<Url> {
    let mut urls = Vec::new();
    if let Some(named) = challenge
        .resource_metadata
        .as_deref()
        .and_then(|named| server.join(named).ok())
    {
        urls.push(named);
    }
    let path = server.path();
    if !path.is_empty() && path != "/" {
        urls.push(at_path(
            server,
            &format!("/.well-known/oauth-protected-resource{path}"),
        ));
    }
    urls.push(at_path(server, "/.well-known/oauth-protected-resource"));
    urls
}

/// Where the metadata of the authorization server `issuer` may be, in order (RFC 8414 §3.1, then
/// OpenID Connect Discovery with the path inserted, then appended).
fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            at_path(issuer, "/.well-known/oauth-authorization-server"),
            at_path(issuer, "/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            at_path(
                issuer,
                &format!("/.well-known/oauth-authorization-server{path}"),
            ),
            at_path(issuer, &format!("/.well-known/openid-configuration{path}")),
            at_path(issuer, &format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// Whether the resource `resource` covers the MCP server at `server`: the same origin, and the
/// server's path equal to the resource's or below it on a segment boundary.
pub(crate) fn covers(resource: &Url, server: &Url) -> bool {
    if resource.origin() != server.origin() {
        return false;
    }
    let base = resource.path().trim_end_matches('/');
    let path = server.path();
    base.is_empty() || path == base || path.starts_with(&format!("{base}/"))
}

/// Finds the authorization server of the MCP server at `server`, which answered `challenge`.
pub(crate) async fn discover(
    http: &AuthHttp,
    policy: &UrlPolicy,
    server: &Url,
    challenge: &Challenge,
) -> Result<Discovered, AuthError> {
    for url in resource_metadata_urls(server, challenge) {
        policy.check(&url, "protected resource metadata URL")?;
        let value = match http
            .get_json(&url, "protected resource metadata", None)
            .await?
        {
            Fetched::Found(value) => value,
            Fetched::Missing => continue,
        };
        let metadata = resource_metadata(value, server)?;
        let mut refusals = Vec::new();
        for issuer in &metadata.authorization_servers {
            match server_metadata(http, policy, issuer).await {
                Ok(Some(found)) => {
                    return Ok(Discovered {
                        resource: Some(metadata.resource),
                        scopes_supported: metadata.scopes_supported,
                        server: found,
                    });
                }
                Ok(None) => {}
                Err(error @ AuthError::Unavailable(_)) => return Err(error),
                Err(error) => refusals.push(error),
            }
        }
        return Err(refusals.into_iter().next().unwrap_or_else(|| {
            AuthError::refused("no authorization server of the resource has metadata")
        }));
    }
    legacy(http, policy, server).await
}

/// The protected resource metadata in `value`, checked against `server`.
fn resource_metadata(value: Value, server: &Url) -> Result<ResourceMetadata, AuthError> {
    let metadata: ResourceMetadata = serde_json::from_value(value)
        .map_err(|_| AuthError::refused("the protected resource metadata is malformed"))?;
    let resource = Url::parse(&metadata.resource).map_err(|_| {
        AuthError::refused("the protected resource metadata's resource is not a URL")
    })?;
    if !matches!(resource.scheme(), "http" | "https") || resource.fragment().is_some() {
        return Err(AuthError::refused(
            "the protected resource metadata's resource is not an http(s) URL without fragment",
        ));
    }
    if !covers(&resource, server) {
        return Err(AuthError::refused(
            "the protected resource metadata names another resource than the MCP server",
        ));
    }
    if metadata.authorization_servers.is_empty() {
        return Err(AuthError::refused(
            "the protected resource metadata names no authorization server",
        ));
    }
    Ok(metadata)
}

/// The metadata of the authorization server `issuer`, or `None` where none is found.
async fn server_metadata(
    http: &AuthHttp,
    policy: &UrlPolicy,
    issuer: &str,
) -> Result<Option<AuthorizationServer>, AuthError> {
    let issuer_url = policy.parse(issuer, "authorization server")?;
    for url in server_metadata_urls(&issuer_url) {
        let value = match http
            .get_json(&url, "authorization server metadata", None)
            .await?
        {
            Fetched::Found(value) => value,
            Fetched::Missing => continue,
        };
        let metadata: ServerMetadata = serde_json::from_value(value)
            .map_err(|_| AuthError::refused("the authorization server metadata is malformed"))?;
        // RFC 8414 §3.3: the issuer the document names is the one its URL was built from.
        if metadata.issuer != issuer {
            return Err(AuthError::refused(
                "the authorization server metadata names another issuer than the one it was found for",
            ));
        }
        if metadata
            .response_types_supported
            .as_ref()
            .is_some_and(|types| !types.iter().any(|t| t == "code"))
        {
            return Err(AuthError::refused(
                "the authorization server does not support the authorization code flow",
            ));
        }
        // 2025-11-25: without `code_challenge_methods_supported` naming S256, a client must
        // refuse to go on.
        if !metadata
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|methods| methods.iter().any(|m| m == "S256"))
        {
            return Err(AuthError::refused(
                "the authorization server does not say it supports PKCE with S256",
            ));
        }
        return Ok(Some(server_of(metadata, policy)?));
    }
    Ok(None)
}

fn server_of(
    metadata: ServerMetadata,
    policy: &UrlPolicy,
) -> Result<AuthorizationServer, AuthError> {
    let required = |value: Option<String>, what: &str| {
        value.ok_or_else(|| {
            AuthError::refused(format!("the authorization server metadata has no {what}"))
        })
    };
    let authorization_endpoint = metadata
        .authorization_endpoint
        .map(|url| policy.parse(&url, "authorization endpoint"))
        .transpose()?;
    let token_endpoint = policy.parse(
        &required(metadata.token_endpoint, "token endpoint")?,
        "token endpoint",
    )?;
    let registration_endpoint = metadata
        .registration_endpoint
        .map(|url| policy.parse(&url, "registration endpoint"))
        .transpose()?;
    Ok(AuthorizationServer {
        issuer: metadata.issuer,
        authorization_endpoint,
        token_endpoint,
        registration_endpoint,
        auth_methods: metadata.token_endpoint_auth_methods_supported,
        client_id_metadata_document_supported: metadata
            .client_id_metadata_document_supported
            .unwrap_or(false),
        iss_parameter_supported: metadata
            .authorization_response_iss_parameter_supported
            .unwrap_or(false),
    })
}

/// 2025-03-26: no resource metadata, so the MCP server's origin is the authorization server:
/// its RFC 8414 metadata if it has some, else `/authorize`, `/token` and `/register` there.
async fn legacy(
    http: &AuthHttp,
    policy: &UrlPolicy,
    server: &Url,
) -> Result<Discovered, AuthError> {
    let base = server.origin().ascii_serialization();
    let metadata_url = at_path(server, "/.well-known/oauth-authorization-server");
    policy.check(&metadata_url, "authorization server metadata URL")?;
    let found = http
        .get_json(
            &metadata_url,
            "authorization server metadata",
            Some(LEGACY_REVISION),
        )
        .await?;
    let server_found = match found {
        Fetched::Found(value) => {
            let metadata: ServerMetadata = serde_json::from_value(value).map_err(|_| {
                AuthError::refused("the authorization server metadata is malformed")
            })?;
            // The document was found at the MCP server's own origin, which is the authorization
            // server in this revision; some servers name a path of it as their issuer (the
            // conformance suite 0.1.16 names `<origin>/oauth`). An issuer on another origin is
            // refused.
            let issuer = Url::parse(&metadata.issuer).map_err(|_| {
                AuthError::refused("the authorization server metadata's issuer is not a URL")
            })?;
            if issuer.origin() != server.origin() {
                return Err(AuthError::refused(
                    "the authorization server metadata names an issuer on another origin than the MCP server's",
                ));
            }
            if metadata.issuer.trim_end_matches('/') != base {
                tracing::debug!(
                    "the 2025-03-26 metadata names a path of the server's origin as its issuer"
                );
            }
            server_of(metadata, policy)?
        }
        Fetched::Missing => AuthorizationServer {
            issuer: base.clone(),
            authorization_endpoint: Some(at_path(server, "/authorize")),
            token_endpoint: at_path(server, "/token"),
            registration_endpoint: Some(at_path(server, "/register")),
            auth_methods: None,
            client_id_metadata_document_supported: false,
            iss_parameter_supported: false,
        },
    };
    Ok(Discovered {
        resource: None,
        scopes_supported: None,
        server: server_found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("a URL")
    }

    #[test]
    fn resource_metadata_is_looked_for_in_order() {
        let challenge = Challenge {
            resource_metadata: Some("/custom/prm.json".into()),
            ..Challenge::default()
        };
        let urls = resource_metadata_urls(&url("https://h/public/mcp?x=1"), &challenge);
        let urls: Vec<&str> = urls.iter().map(Url::as_str).collect();
        assert_eq!(
            urls,
            [
                "https://h/custom/prm.json",
                "https://h/.well-known/oauth-protected-resource/public/mcp",
                "https://h/.well-known/oauth-protected-resource",
            ]
        );
        let root = resource_metadata_urls(&url("https://h"), &Challenge::default());
        assert_eq!(root.len(), 1);
    }

    #[test]
    fn server_metadata_is_looked_for_with_the_path_inserted_first() {
        let urls = server_metadata_urls(&url("https://as/tenant1/"));
        let urls: Vec<&str> = urls.iter().map(Url::as_str).collect();
        assert_eq!(
            urls,
            [
                "https://as/.well-known/oauth-authorization-server/tenant1",
                "https://as/.well-known/openid-configuration/tenant1",
                "https://as/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn a_resource_covers_paths_below_it_on_a_segment() {
        assert!(covers(&url("https://h/api"), &url("https://h/api/mcp")));
        assert!(covers(&url("https://h"), &url("https://h/mcp")));
        assert!(covers(&url("https://h/mcp"), &url("https://h/mcp")));
        assert!(!covers(&url("https://h/api"), &url("https://h/api123")));
        assert!(!covers(
            &url("https://evil.example.com/mcp"),
            &url("https://h/mcp")
        ));
        assert!(!covers(&url("http://h/mcp"), &url("https://h/mcp")));
    }
}
