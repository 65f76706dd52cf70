//! The HTTP requests of an authorization (metadata, registration, token requests): no
//! redirects followed, a time limit and a size cap on every answer.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Client, Response, StatusCode, Url};
use serde_json::Value;

use super::AuthError;

/// The most bytes of an answer of an authorization server or metadata endpoint read: 64 KiB.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

/// What an authorization's requests go through.
#[derive(Clone, Debug)]
pub(crate) struct AuthHttp {
    client: Client,
}

/// A metadata document's fetch: found, or not there (a 4xx: try the next place).
pub(crate) enum Fetched {
    Found(Value),
    Missing,
}

impl AuthHttp {
    /// Requests that take at most `timeout` each. Redirects are not followed: a metadata or token
    /// endpoint that redirects is read as answering what it answered.
    pub(crate) fn new(timeout: Duration) -> Result<Self, AuthError> {
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .build()
            .map_err(|_| {
                AuthError::unavailable("the HTTP client of the authorization could not be built")
            })?;
        Ok(Self { client })
    }

    /// GETs the JSON document at `url`. `what` names it in failures.
    pub(crate) async fn get_json(
        &self,
        url: &Url,
        what: &str,
        protocol_version: Option<&str>,
    ) -> Result<Fetched, AuthError> {
        let mut builder = self
            .client
            .get(url.clone())
            .header(ACCEPT, "application/json");
        if let Some(version) = protocol_version {
            builder = builder.header("mcp-protocol-version", version);
        }
        let response = builder
            .send()
            .await
            .map_err(|error| unreachable(what, &error))?;
        let status = response.status();
        if status.is_client_error() {
            return Ok(Fetched::Missing);
        }
        if status.is_server_error() {
            return Err(AuthError::unavailable(format!(
                "the {what} failed (HTTP {})",
                status.as_u16()
            )));
        }
        if status != StatusCode::OK {
            return Err(AuthError::refused(format!(
                "the {what} answered HTTP {} instead of a document",
                status.as_u16()
            )));
        }
        let body = read_capped(response, what).await?;
        let value: Value = serde_json::from_slice(&body)
            .map_err(|_| AuthError::refused(format!("the {what} is not JSON")))?;
        if !value.is_object() {
            return Err(AuthError::refused(format!(
                "the {what} is not a JSON object"
            )));
        }
        Ok(Fetched::Found(value))
    }

    #[cfg(feature = "mcp")]
    /// POSTs `body` as JSON to `url`; the status and the JSON answer.
    pub(crate) async fn post_json(
        &self,
        url: &Url,
        body: &Value,
        what: &str,
    ) -> Result<(StatusCode, Value), AuthError> {
        let response = self
            .client
            .post(url.clone())
            .header(ACCEPT, "application/json")
            .json(body)
            .send()
            .await
            .map_err(|error| unreachable(what, &error))?;
        let status = response.status();
        if status.is_server_error() {
            return Err(AuthError::unavailable(format!(
                "the {what} failed (HTTP {})",
                status.as_u16()
            )));
        }
        let body = read_capped(response, what).await?;
        let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        Ok((status, value))
    }

    /// Sends a request the `oauth2` crate made (a token request) and gives its answer; a 5xx or
    /// no answer is an error of its own, so that it reads as unavailable.
    pub(crate) async fn oauth2(
        &self,
        request: oauth2::HttpRequest,
    ) -> Result<oauth2::HttpResponse, Unreached> {
        let request = reqwest::Request::try_from(request)
            .map_err(|_| Unreached("the token request could not be built".into()))?;
        let response = self.client.execute(request).await.map_err(|error| {
            Unreached(
                unreachable("token endpoint", &error)
                    .description()
                    .to_owned(),
            )
        })?;
        let status = response.status();
        if status.is_server_error() {
            return Err(Unreached(format!(
                "the token endpoint failed (HTTP {})",
                status.as_u16()
            )));
        }
        let content_type = response.headers().get(CONTENT_TYPE).cloned();
        let body = read_capped(response, "token endpoint")
            .await
            .map_err(|error| Unreached(error.description().to_owned()))?;
        let mut answer = oauth2::HttpResponse::new(body);
        *answer.status_mut() = status;
        if let Some(content_type) = content_type {
            answer.headers_mut().insert(CONTENT_TYPE, content_type);
        } else {
            answer.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
        }
        Ok(answer)
    }
}

/// A token endpoint that could not be reached or failed (read as unavailable).
#[derive(Debug)]
pub(crate) struct Unreached(pub String);

impl std::fmt::Display for Unreached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unreached {}

fn unreachable(what: &str, error: &reqwest::Error) -> AuthError {
    if error.is_timeout() {
        AuthError::unavailable(format!("the {what} did not answer in time"))
    } else {
        AuthError::unavailable(format!("the {what} could not be reached"))
    }
}

/// The body of `response`, refused past [`MAX_METADATA_BYTES`] (read chunk by chunk, never
/// past the cap).
async fn read_capped(mut response: Response, what: &str) -> Result<Vec<u8>, AuthError> {
    let too_large = || {
        AuthError::refused(format!(
            "the {what} answered more than {MAX_METADATA_BYTES} bytes"
        ))
    };
    if response
        .content_length()
        .is_some_and(|length| length > MAX_METADATA_BYTES as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_METADATA_BYTES {
                    return Err(too_large());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(error) => return Err(unreachable(what, &error)),
        }
    }
}
