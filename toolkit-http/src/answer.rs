//! What an HTTP answer means to the model: a status mapped to a [`Reason`], `Retry-After` read,
//! and a body read chunk by chunk up to a cap.
//!
//! | status | what the model reads |
//! | --- | --- |
//! | 2xx | the body as JSON, else as text, else `null` when there is none |
//! | 401, 403 | `AuthenticationError` (the host has to connect again) |
//! | 408, 429, 5xx | `UnavailableError`, retryable, with `Retry-After` as the retry-after; the body is not read |
//! | other 4xx | `CallFailedError` with the API's own words, cut to 500 characters |
//! | 1xx, 3xx | `CallFailedError`: a redirect the client did not follow (see [`client`](super::client)) |

use std::time::{Duration, SystemTime};

use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use reqwest::{Response, StatusCode};
use serde_json::Value;

use toolkit_core::Reason;
use toolkit_core::text::cut_utf16;

/// The most characters of an API's own words a model reads of a failed call.
pub const MAX_ERROR_WORDS: usize = 500;

/// A body read up to a cap, or the fact that it was longer.
pub(crate) enum Capped {
    /// The whole body.
    Whole(Vec<u8>),
    /// The body had more characters than the cap, or more bytes than `4 × cap` (what that many
    /// characters take in UTF-8 at most); reading stopped at the chunk that passed it, with what
    /// was read up to there.
    TooLong(Vec<u8>),
}

/// Reads `response`'s body, stopping as soon as it holds more than `cap` characters or more than
/// `4 × cap` bytes.
///
/// Characters are counted as UTF-8 lead bytes (every byte that is not `0b10xxxxxx`), so the count
/// is exact for UTF-8 text; the byte bound holds for any body, bytes that are no text included
/// (a body of continuation bytes alone counts no character), so at most `4 × cap` bytes and one
/// chunk are ever held.
pub(crate) async fn read_capped(
    mut response: Response,
    cap: usize,
) -> Result<Capped, reqwest::Error> {
    let max_bytes = cap.saturating_mul(4);
    let mut body = Vec::new();
    let mut characters = 0usize;
    while let Some(chunk) = response.chunk().await? {
        characters += chunk.iter().filter(|byte| (**byte & 0xC0) != 0x80).count();
        body.extend_from_slice(&chunk);
        if characters > cap || body.len() > max_bytes {
            return Ok(Capped::TooLong(body));
        }
    }
    Ok(Capped::Whole(body))
}

/// Whether `headers` declare a body longer than `cap` characters can be (`4 × cap` bytes), so
/// that it need not be read at all.
pub(crate) fn declared_too_long(headers: &HeaderMap, cap: usize) -> bool {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
        .is_some_and(|length| length > (cap as u64).saturating_mul(4))
}

/// A successful body as the model reads it: JSON, else text, else `null` when empty.
///
/// # Errors
///
/// A message for the model when the body is neither JSON nor UTF-8 text.
pub(crate) fn success_value(body: Vec<u8>, content_type: Option<&str>) -> Result<Value, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    if let Ok(value) = serde_json::from_slice(&body) {
        return Ok(value);
    }
    if let Some(items) = content_type
        .filter(|t| is_json_stream(t))
        .and_then(|_| json_items(&body))
    {
        return Ok(Value::Array(items));
    }
    let length = body.len();
    String::from_utf8(body).map(Value::String).map_err(|_| {
        format!(
            "The operation answered {length} bytes of binary content ({}), which a tool cannot return.",
            content_type.unwrap_or("of no stated type")
        )
    })
}

/// Whether a media type is a stream of JSON items (JSON Lines, NDJSON, RFC 7464's JSON text
/// sequences), which a tool returns as the list of its items.
fn is_json_stream(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    [
        "application/jsonl",
        "application/x-ndjson",
        "application/json-seq",
        "application/x-jsonlines",
        "application/jsonlines",
    ]
    .iter()
    .any(|stream| essence.eq_ignore_ascii_case(stream))
}

/// The items of a stream of JSON items, one a line or record (a record separator, 0x1E, starts
/// each of a JSON text sequence's); `None` when one is no JSON.
fn json_items(body: &[u8]) -> Option<Vec<Value>> {
    body.split(|byte| *byte == b'\n' || *byte == 0x1e)
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .map(|line| serde_json::from_slice(line).ok())
        .collect()
}

/// The reason for an answer that is no success, or `None` for a 2xx.
pub(crate) fn failure_status(status: StatusCode, headers: &HeaderMap) -> Option<Failing> {
    let code = status.as_u16();
    if status.is_success() {
        None
    } else if code == 401 || code == 403 {
        Some(Failing::Now(Reason::authentication(format!(
            "the API answered {status}"
        ))))
    } else if code == 408 || code == 429 || status.is_server_error() {
        Some(Failing::Now(Reason::Unavailable {
            description: format!("the API answered {status}"),
            retry_after: retry_after(headers, SystemTime::now()),
        }))
    } else if status.is_client_error() {
        Some(Failing::WithWords(status))
    } else {
        Some(Failing::Now(Reason::call_failed(format!(
            "The API answered {status}, a redirect the source does not follow."
        ))))
    }
}

/// How an answer that is no success fails.
pub(crate) enum Failing {
    /// With this reason, without reading the body.
    Now(Reason),
    /// With the API's own words: read the body for [`call_failed`].
    WithWords(StatusCode),
}

/// The reason of a 4xx that is not about credentials: the status and the API's own words, cut.
pub(crate) fn call_failed(status: StatusCode, words: &str) -> Reason {
    let words = words.trim();
    if words.is_empty() {
        Reason::call_failed(format!("The API answered {status}."))
    } else {
        Reason::call_failed(format!(
            "The API answered {status}: {}",
            cut_utf16(words, MAX_ERROR_WORDS)
        ))
    }
}

/// The content type of an answer, for messages.
pub(crate) fn content_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// `Retry-After` as a duration from `now`: seconds, or an HTTP date (a date past is zero).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    fn headers(retry: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(retry) {
            headers.insert(RETRY_AFTER, value);
        }
        headers
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        assert_eq!(
            retry_after(&headers("120"), now),
            Some(Duration::from_secs(120))
        );
        // 21 Oct 2015 07:28:00 GMT is 1,445,412,480 s after the epoch.
        assert_eq!(
            retry_after(&headers("Wed, 21 Oct 2015 07:30:00 GMT"), now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            retry_after(&headers("Wed, 21 Oct 2015 07:00:00 GMT"), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&headers("-5"), now), None);
    }

    #[test]
    fn a_success_is_json_else_text_else_null() {
        assert_eq!(
            success_value(b"{\"a\":1}".to_vec(), None),
            Ok(serde_json::json!({"a": 1}))
        );
        assert_eq!(
            success_value(b"plain".to_vec(), None),
            Ok(Value::String("plain".into()))
        );
        assert_eq!(success_value(Vec::new(), None), Ok(Value::Null));
        assert!(success_value(vec![0xff, 0xfe], Some("image/png")).is_err());
    }

    #[test]
    fn a_stream_of_json_items_is_their_list() {
        let lines = b"{\"a\": 1}\n{\"a\": 2}\n\n".to_vec();
        assert_eq!(
            success_value(lines.clone(), Some("application/jsonl; charset=utf-8")),
            Ok(serde_json::json!([{"a": 1}, {"a": 2}]))
        );
        let sequence = b"\x1e{\"a\": 1}\n\x1e[2]\n".to_vec();
        assert_eq!(
            success_value(sequence, Some("application/json-seq")),
            Ok(serde_json::json!([{"a": 1}, [2]]))
        );
        // Lines of another type stay text.
        assert_eq!(
            success_value(lines, Some("text/plain")),
            Ok(Value::String("{\"a\": 1}\n{\"a\": 2}\n\n".to_owned()))
        );
    }

    #[test]
    fn the_api_words_are_cut_to_500_characters() {
        let reason = call_failed(StatusCode::NOT_FOUND, &"é".repeat(2_000));
        let message = reason.model_message();
        assert!(message.starts_with("The API answered 404 Not Found: "));
        assert_eq!(
            message.chars().filter(|c| *c == 'é').count(),
            MAX_ERROR_WORDS
        );
    }
}
