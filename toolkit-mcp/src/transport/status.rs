//! What an HTTP status says about a request, before its body is read.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use crate::jsonrpc::RpcError;
use toolkit_core::Reason;

pub(crate) use crate::request_failure::transport_failure;

/// The failure of a status that ends a request whatever its body says, or `None`.
///
/// 401 and 403 are the credentials refused; 408, 429 and 5xx the server unavailable (with
/// `Retry-After` kept).
pub(crate) fn failure_of(status: StatusCode, headers: &HeaderMap) -> Option<Reason> {
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        return Some(Reason::authentication(format!(
            "the server refused the client's credentials (HTTP {})",
            status.as_u16()
        )));
    }
    if status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error()
    {
        return Some(Reason::Unavailable {
            description: format!("the server is unavailable (HTTP {})", status.as_u16()),
            retry_after: retry_after(headers),
        });
    }
    None
}

/// `Retry-After` as a duration: seconds, or an HTTP date (a date passed is zero).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// What the body of a request refused with an HTTP status says.
#[derive(Debug, PartialEq)]
pub(crate) enum Refusal {
    /// A JSON-RPC error answering the request (its id is the request's): the server took the
    /// request and refused it.
    Answered(RpcError),
    /// Anything else — no body, no JSON, or an error with no id or another (`"id": null`): the
    /// server refused the request before taking it as a request of its revision and session (a
    /// session it no longer knows, a revision it no longer speaks), with the error it gave.
    Unanswered(Option<RpcError>),
}

/// What `body`, refusing the request `id`, says: decided by its structure, never its words.
pub(crate) fn refusal_of_body(body: &[u8], id: u64) -> Refusal {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Refusal::Unanswered(None);
    };
    let error = value.get("error").and_then(RpcError::from_value);
    match error {
        Some(error) if value.get("id") == Some(&serde_json::Value::from(id)) => {
            Refusal::Answered(error)
        }
        error => Refusal::Unanswered(error),
    }
}

/// Whether `url` has the origin (scheme, host, port) of `base`: an answer from anywhere else came
/// through a redirect, and is never read.
pub(crate) fn same_origin(url: &reqwest::Url, base: &reqwest::Url) -> bool {
    url.scheme() == base.scheme()
        && url.host() == base.host()
        && url.port_or_known_default() == base.port_or_known_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn statuses_map_to_reasons() {
        let none = HeaderMap::new();
        assert!(matches!(
            failure_of(StatusCode::UNAUTHORIZED, &none),
            Some(Reason::Authentication { .. })
        ));
        assert!(matches!(
            failure_of(StatusCode::FORBIDDEN, &none),
            Some(Reason::Authentication { .. })
        ));
        assert!(matches!(
            failure_of(StatusCode::BAD_GATEWAY, &none),
            Some(Reason::Unavailable { .. })
        ));
        assert!(failure_of(StatusCode::BAD_REQUEST, &none).is_none());
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(
            failure_of(StatusCode::TOO_MANY_REQUESTS, &headers),
            Some(Reason::Unavailable {
                description: "the server is unavailable (HTTP 429)".into(),
                retry_after: Some(Duration::from_secs(7)),
            })
        );
    }

    #[test]
    fn retry_after_reads_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn a_refusal_answers_the_request_only_with_its_id() {
        assert!(matches!(
            refusal_of_body(
                br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad session_id"}}"#,
                7
            ),
            Refusal::Answered(RpcError { code: -32602, .. })
        ));
        assert!(matches!(
            refusal_of_body(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#, 7),
            Refusal::Unanswered(Some(RpcError { code: -32000, .. }))
        ));
        assert!(matches!(
            refusal_of_body(br#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602}}"#, 7),
            Refusal::Unanswered(Some(_))
        ));
        assert_eq!(
            refusal_of_body(b"Session not found", 7),
            Refusal::Unanswered(None)
        );
        assert_eq!(refusal_of_body(b"", 7), Refusal::Unanswered(None));
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let base: reqwest::Url = "http://127.0.0.1:8080/mcp".parse().unwrap();
        let same: reqwest::Url = "http://127.0.0.1:8080/other?x=1".parse().unwrap();
        let port: reqwest::Url = "http://127.0.0.1:8081/mcp".parse().unwrap();
        let scheme: reqwest::Url = "https://127.0.0.1:8080/mcp".parse().unwrap();
        assert!(same_origin(&same, &base));
        assert!(!same_origin(&port, &base));
        assert!(!same_origin(&scheme, &base));
    }
}
