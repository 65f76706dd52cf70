//! A client's identity at an authorization server (MCP 2025-11-25, in order): pre-registered, a
//! Client ID Metadata Document, dynamic client registration (RFC 7591).
//!
//! Dynamic registration is written here: `oauth2` has none, and it is one JSON POST.

use reqwest::Url;
use serde_json::{Value, json};

use super::authorization_server::AuthorizationServer;
use super::error::server_words;
use super::fetch::AuthHttp;
use super::grant::RegisteredClient;
use super::policy::is_loopback;
use super::{AuthError, Secret};

/// What a host says about its client.
#[derive(Clone, Debug)]
pub(crate) struct ClientConfig {
    pub pre_registered: Option<RegisteredClient>,
    pub metadata_document: Option<Url>,
    pub client_name: String,
    /// The authorization server the host's secrets (a pre-registered client, a client secret, a
    /// private key) are for, if the host said.
    pub issuer: Option<String>,
}

/// Checks that `found`, the issuer discovery found, is `bound`, the one the client's secrets are
/// for (the host's, or the one recorded at the first authorization): no secret goes to another.
pub(crate) fn check_issuer(bound: Option<&str>, found: &str) -> Result<(), AuthError> {
    let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
    match bound {
        Some(bound) if !same(bound, found) => Err(AuthError::refused(format!(
            "the client's credentials are for the authorization server {bound}, but the MCP \
             server names {found}: they are not sent there"
        ))),
        _ => Ok(()),
    }
}

/// The client to authorize as at `server`.
pub(crate) async fn client_for(
    http: &AuthHttp,
    server: &AuthorizationServer,
    config: &ClientConfig,
    redirect_uri: &Url,
) -> Result<RegisteredClient, AuthError> {
    if let Some(client) = &config.pre_registered {
        return Ok(client.clone());
    }
    if let Some(document) = &config.metadata_document
        && server.client_id_metadata_document_supported
    {
        return Ok(RegisteredClient {
            client_id: document.as_str().to_owned(),
            client_secret: None,
            auth_method: Some("none".into()),
        });
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(AuthError::refused(
            "the authorization server has no dynamic registration, and no client is configured for it",
        ));
    };
    let method = match &server.auth_methods {
        None => "none",
        Some(methods) if methods.iter().any(|m| m == "none") => "none",
        Some(methods) if methods.iter().any(|m| m == "client_secret_basic") => {
            "client_secret_basic"
        }
        Some(methods) if methods.iter().any(|m| m == "client_secret_post") => "client_secret_post",
        Some(_) => "none",
    };
    let body = json!({
        "client_name": config.client_name,
        "redirect_uris": [redirect_uri.as_str()],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        // A loopback redirect is a native application's (RFC 8252); any other a web server's.
        "application_type": if is_loopback(redirect_uri) { "native" } else { "web" },
    });
    let (status, answer) = http
        .post_json(endpoint, &body, "registration endpoint")
        .await?;
    if !status.is_success() {
        let error = answer.get("error").and_then(Value::as_str).unwrap_or("");
        return Err(AuthError::refused(format!(
            "the authorization server refused to register the client (HTTP {}{}{})",
            status.as_u16(),
            if error.is_empty() { "" } else { ": " },
            server_words(error, 64)
        )));
    }
    let client_id = answer
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| AuthError::refused("the registration's answer has no client_id"))?;
    Ok(RegisteredClient {
        client_id: client_id.to_owned(),
        client_secret: answer
            .get("client_secret")
            .and_then(Value::as_str)
            .filter(|secret| !secret.is_empty())
            .map(Secret::new),
        auth_method: answer
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::grant::{ClientAuth, client_auth};

    fn client(secret: bool, method: Option<&str>) -> RegisteredClient {
        RegisteredClient {
            client_id: "c".into(),
            client_secret: secret.then(|| Secret::new("s")),
            auth_method: method.map(str::to_owned),
        }
    }

    fn methods(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn secrets_go_only_to_their_issuer() {
        assert!(check_issuer(None, "https://a.example").is_ok());
        assert!(check_issuer(Some("https://a.example/"), "https://a.example").is_ok());
        let refused = check_issuer(Some("https://a.example"), "https://b.example")
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("https://a.example") && refused.contains("https://b.example"),
            "{refused}"
        );
    }

    #[test]
    fn the_method_follows_what_the_server_lists() {
        let none = methods(&["none"]);
        let post = methods(&["client_secret_post"]);
        let basic = methods(&["client_secret_basic"]);
        assert_eq!(
            client_auth(&client(true, None), Some(&none)),
            ClientAuth::None
        );
        assert_eq!(
            client_auth(&client(true, None), Some(&post)),
            ClientAuth::ClientSecretPost
        );
        assert_eq!(
            client_auth(&client(true, Some("client_secret_post")), Some(&basic)),
            ClientAuth::ClientSecretBasic
        );
        assert_eq!(
            client_auth(&client(true, None), None),
            ClientAuth::ClientSecretBasic
        );
        assert_eq!(client_auth(&client(false, None), None), ClientAuth::None);
        assert_eq!(
            client_auth(
                &client(true, Some("client_secret_post")),
                Some(&methods(&["client_secret_basic", "client_secret_post"]))
            ),
            ClientAuth::ClientSecretPost
        );
    }
}
