//! The gateway's MCP Server Card (SEP-2127): a small JSON document saying what the gateway is
//! and where its MCP endpoint is, for registries and clients that look before they connect.
//!
//! The card has the shape of the extension's schema (`schema.ts` of
//! `modelcontextprotocol/experimental-ext-server-card`, `$schema` `…/schemas/v1/…`): `name`
//! (reverse DNS, one `/`), `version`, `description`, `title`, and one `remotes` entry, the
//! Streamable HTTP endpoint, with the `Authorization` header it needs when `[serve.auth]` is
//! set. What the schema has no field for goes under `_meta`, namespaced `toolkit-gateway/`: the
//! capabilities served (as `ServerCapabilities` writes them) and how a client authenticates
//! (`required`, `schemes`, and in JWT mode the protected resource metadata's URL).
//!
//! What is public, and why: no tool, resource or prompt is named, nor any source, nor how many
//! there are. The schema leaves the primitives to the protocol's own listing; with
//! `[serve.auth]` each person may be shown other tools (rules naming people), so no one list
//! is true for every reader; and the card is served to any origin (`Access-Control-Allow-Origin:
//! *`, as the extension asks), so a gateway without authentication, listening on the person's own
//! machine, would tell every web page they open what it reaches. The kinds of primitives served
//! (tools, resources, prompts, completions, tasks) are what a client needs to know before
//! connecting, and say nothing of the sources behind them.
//!
//! It is served at `/.well-known/mcp/server-card.json` (where implementations and registries
//! look today) and at `/mcp/server-card` (the MCP endpoint's URL and `/server-card`, the
//! location the extension reserves), as `application/json`, or as
//! `application/mcp-server-card+json` to a client that asks for that type, with an `ETag`
//! (`If-None-Match` answered 304) and `Cache-Control: public, max-age=300` (the capabilities
//! follow the sources: an MCP source heard after the start adds resources or prompts).

use std::sync::Arc;

use axum::http::header::{
    ACCEPT, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE,
    CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use toolkit_serve::Resources;

use crate::config::{AuthMode, Serve};
use toolkit_serve::MCP_PATH;

/// Where implementations and registries look for a server's card today.
pub(crate) const WELL_KNOWN_PATH: &str = "/.well-known/mcp/server-card.json";

/// The location SEP-2127 reserves, after the MCP endpoint's path: `/mcp/server-card`.
pub(crate) const ENDPOINT_SUFFIX: &str = "/server-card";

/// The schema the card conforms to.
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// The card's own media type, served to a client that asks for it.
const MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// How long a cache may keep the card: five minutes, as the capabilities may change.
const CACHE: &str = "public, max-age=300";

/// What the card says the gateway does, in the schema's 100 characters.
const DESCRIPTION: &str =
    "An MCP gateway: the tools, resources and prompts of its sources, served under one policy.";

/// The longest `name` the schema takes.
const MAX_NAME: usize = 200;

/// What the card is made from: what the configuration says, and the resources and prompts the
/// sources have as they are now.
pub(crate) struct ServerCard {
    /// The server's name (`serve.name`), as `serverInfo` gives it.
    title: String,
    /// The MCP endpoint's URL as configured (`[serve.auth] resource`, else `public_url` and
    /// `/mcp`); without one, it is made from the request's `Host`.
    endpoint: Option<String>,
    /// How clients authenticate, when `[serve.auth]` is set.
    auth: Option<AuthMode>,
    /// The protected resource metadata's URL (JWT mode).
    resource_metadata: Option<String>,
    /// What the sources have beside tools, asked at each request.
    resources: Arc<dyn Resources>,
}

impl ServerCard {
    /// The card of the gateway `serve` configures, whose sources have `resources`.
    pub(crate) fn new(serve: &Serve, resources: Arc<dyn Resources>) -> Self {
        let resource = serve.auth.as_ref().and_then(|auth| auth.resource.clone());
        let public = serve
            .public_url
            .as_ref()
            .and_then(|_| serve.public_origin().ok())
            .map(|origin| format!("{}{}", origin.as_str().trim_end_matches('/'), MCP_PATH));
        Self {
            title: serve.name.clone(),
            endpoint: resource.or(public),
            auth: serve.auth.as_ref().map(|auth| auth.mode),
            resource_metadata: None,
            resources,
        }
    }

    /// The card naming `url` as the protected resource metadata's.
    pub(crate) fn resource_metadata(mut self, url: Option<String>) -> Self {
        self.resource_metadata = url;
        self
    }

    /// The card, for a request that reached the gateway as `host`.
    pub(crate) fn document(&self, host: Option<&str>) -> Value {
        let endpoint = self
            .endpoint
            .clone()
            .unwrap_or_else(|| format!("http://{}{MCP_PATH}", host.unwrap_or("localhost")));
        let mut remote = json!({"type": "streamable-http", "url": endpoint});
        let mut meta = Map::new();
        meta.insert(
            "toolkit-gateway/capabilities".to_owned(),
            self.capabilities(),
        );
        match self.auth {
            Some(mode) => {
                let (token, schemes) = match mode {
                    AuthMode::Jwt => (
                        "An OAuth access token for this endpoint, from the authorization server \
                         its protected resource metadata names.",
                        json!(["bearer", "oauth2"]),
                    ),
                    AuthMode::Tokens => {
                        ("A token the gateway's operator issued.", json!(["bearer"]))
                    }
                };
                remote["headers"] = json!([{
                    "name": "Authorization",
                    "description": "Bearer token.",
                    "isRequired": true,
                    "isSecret": true,
                    "value": "Bearer {token}",
                    "variables": {
                        "token": {"description": token, "isRequired": true, "isSecret": true}
                    }
                }]);
                let mut authentication = json!({"required": true, "schemes": schemes});
                if let Some(url) = &self.resource_metadata {
                    authentication["resourceMetadata"] = json!(url);
                }
                meta.insert("toolkit-gateway/authentication".to_owned(), authentication);
            }
            None => {
                meta.insert(
                    "toolkit-gateway/authentication".to_owned(),
                    json!({"required": false}),
                );
            }
        }
        let mut card = json!({
            "$schema": SCHEMA,
            "name": card_name(&self.title, &endpoint),
            "version": env!("CARGO_PKG_VERSION"),
            "description": DESCRIPTION,
            "remotes": [remote],
            "_meta": meta,
        });
        // The schema's title is 1 to 100 characters.
        if !self.title.is_empty() {
            card["title"] = json!(self.title.chars().take(100).collect::<String>());
        }
        card
    }

    /// The capabilities the gateway serves, as its `initialize` answer writes them: tools (their
    /// list may change), logging, and what its sources have; tasks for a client that drives
    /// them (MCP 2025-11-25).
    fn capabilities(&self) -> Value {
        let offer = self.resources.offer();
        let mut capabilities = json!({
            "tools": {"listChanged": true},
            "logging": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        });
        if offer.resources {
            capabilities["resources"] = json!({
                "subscribe": offer.subscribe,
                "listChanged": offer.resources_list_changed,
            });
        }
        if offer.prompts {
            capabilities["prompts"] = json!({"listChanged": offer.prompts_list_changed});
        }
        if offer.completions {
            capabilities["completions"] = json!({});
        }
        capabilities
    }

    /// The answer to a `GET` of the card with `headers`, for a request that reached the gateway
    /// as `host`.
    pub(crate) fn answer(&self, host: Option<&str>, headers: &HeaderMap) -> Response {
        let media = if asks_for_card_type(headers) {
            MEDIA_TYPE
        } else {
            "application/json"
        };
        let body = self.document(host).to_string();
        let mut digest = Sha256::new();
        digest.update(media.as_bytes());
        digest.update([0]);
        digest.update(body.as_bytes());
        let digest = digest.finalize();
        let tag = format!(
            "\"{}\"",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..16])
        );
        let unchanged = headers
            .get_all(IF_NONE_MATCH)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(|candidate| candidate.trim().trim_start_matches("W/"))
            .any(|candidate| candidate == tag || candidate == "*");
        let mut response = if unchanged {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            let mut response = body.into_response();
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(media));
            response
        };
        let headers = response.headers_mut();
        if let Ok(tag) = HeaderValue::from_str(&tag) {
            headers.insert(ETAG, tag);
        }
        headers.insert(CACHE_CONTROL, HeaderValue::from_static(CACHE));
        headers.insert(VARY, HeaderValue::from_static("Accept"));
        headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(
            ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("ETag"),
        );
        response
    }
}

/// The answer to a browser's preflight (`OPTIONS`) of the card: any origin may `GET` it.
pub(crate) fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET"),
    );
    headers.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, If-None-Match"),
    );
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    response
}

/// Whether the request's `Accept` names the card's own media type.
fn asks_for_card_type(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|range| range.split(';').next())
        .any(|range| range.trim().eq_ignore_ascii_case(MEDIA_TYPE))
}

/// The card's `name`: `serve.name` when it is one already (`namespace/server`), else the
/// endpoint's host in reverse DNS (`com.example.tools`; an address as it is) and `serve.name`,
/// each character the schema does not take as `-`.
fn card_name(title: &str, endpoint: &str) -> String {
    let namespace_char = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '-';
    let server_char = |c: char| namespace_char(c) || c == '_';
    if let Some((namespace, server)) = title.split_once('/')
        && !namespace.is_empty()
        && !server.is_empty()
        && namespace.chars().all(namespace_char)
        && server.chars().all(server_char)
        && title.len() <= MAX_NAME
    {
        return title.to_owned();
    }
    let namespace = match url::Url::parse(endpoint).ok().and_then(|url| {
        url.host().map(|host| match host {
            url::Host::Domain(name) => name.rsplit('.').collect::<Vec<_>>().join("."),
            url::Host::Ipv4(address) => address.to_string(),
            url::Host::Ipv6(address) => address.to_string(),
        })
    }) {
        Some(host) if !host.is_empty() => host,
        _ => "localhost".to_owned(),
    };
    let clean = |text: &str, keep: &dyn Fn(char) -> bool, most: usize| -> String {
        text.chars()
            .map(|c| if keep(c) { c } else { '-' })
            .take(most)
            .collect()
    };
    let server = match clean(title, &server_char, MAX_NAME / 2) {
        server if server.is_empty() => "toolkit-gateway".to_owned(),
        server => server,
    };
    format!(
        "{}/{server}",
        clean(&namespace, &namespace_char, MAX_NAME / 2 - 1)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_the_endpoints_host_reversed_and_the_servers_name() {
        let name = |title: &str, endpoint: &str| card_name(title, endpoint);
        assert_eq!(
            name("toolkit-gateway", "https://tools.example.com/mcp"),
            "com.example.tools/toolkit-gateway"
        );
        assert_eq!(
            name("toolkit-gateway", "http://127.0.0.1:8808/mcp"),
            "127.0.0.1/toolkit-gateway"
        );
        assert_eq!(name("Our tools!", "http://[::1]:80/mcp"), "--1/Our-tools-");
        assert_eq!(
            name("com.example/tools", "http://localhost/mcp"),
            "com.example/tools"
        );
        assert_eq!(name("", "not a url"), "localhost/toolkit-gateway");
        let long = "x".repeat(500);
        assert!(name(&long, "http://localhost/mcp").len() <= MAX_NAME);
    }

    #[test]
    fn the_description_fits_the_schema() {
        assert!((1..=100).contains(&DESCRIPTION.chars().count()));
    }

    #[test]
    fn the_card_type_is_served_to_a_client_that_asks_for_it() {
        let mut headers = HeaderMap::new();
        assert!(!asks_for_card_type(&headers));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("text/html, application/mcp-server-card+json;q=0.9"),
        );
        assert!(asks_for_card_type(&headers));
    }
}
