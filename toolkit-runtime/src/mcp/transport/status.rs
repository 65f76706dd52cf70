//! What an HTTP status says about a request, before its body is read.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use crate::Reason;
use crate::mcp::jsonrpc::RpcError;

/// A reqwest failure as the reason a source fails with. Connection refused or reset, a body cut
/// short and timeouts all mean the server cannot be reached now. The description leaves out the
/// URL.
pub(crate) fn transport_failure(error: reqwest::Error) -> Reason {
    let error = error.without_url();
    if error.is_builder() {
        Reason::unknown(format!("the request could not be built: {error}"))
    } else {
        Reason::unavailable(format!("the server could not be reached: {error}"))
    }
}

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

/// The JSON-RPC error of a body such as `{"jsonrpc":"2.0","id":null,"error":{..}}`, or `None`.
pub(crate) fn error_of_body(body: &[u8]) -> Option<RpcError> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    RpcError::from_value(value.get("error")?)
}

/// Whether a refused request that carried a session id says the session is gone: 404, as the
/// specification has it, or 400 naming the session, as `server-everything` answers ("Bad
/// Request: No valid session ID provided").
pub(crate) fn session_gone(status: StatusCode, body: &[u8]) -> bool {
    if status == StatusCode::NOT_FOUND {
        return true;
    }
    status == StatusCode::BAD_REQUEST
        && String::from_utf8_lossy(body)
            .to_ascii_lowercase()
            .contains("session")
}

#[cfg(test)]
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
    fn a_dead_session_is_told_by_404_or_a_400_naming_it() {
        assert!(session_gone(StatusCode::NOT_FOUND, b""));
        assert!(session_gone(
            StatusCode::BAD_REQUEST,
            br#"{"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#
        ));
        assert!(!session_gone(
            StatusCode::BAD_REQUEST,
            br#"{"error":{"code":-32602}}"#
        ));
    }
}
