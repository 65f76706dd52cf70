//! The longest URI the server takes: [`MAX_URI_BYTES`]. A longer one is refused wherever a URI
//! enters the server (`resources/read`, `resources/subscribe`, `resources/unsubscribe`, a
//! completion's `ref/resource`, the `resourceSubscriptions` of a `subscriptions/listen`), before
//! the host is asked or anything is kept of it, so that no client makes the server hold or pass
//! on URIs of megabytes.

use rmcp::ErrorData;

/// How many bytes a URI may have (a longer one is refused).
pub const MAX_URI_BYTES: usize = 4096;

/// `Ok` for a URI of at most [`MAX_URI_BYTES`]; else the `-32602` refusal that says its length.
pub(crate) fn checked(uri: &str) -> Result<(), ErrorData> {
    if uri.len() <= MAX_URI_BYTES {
        return Ok(());
    }
    Err(ErrorData::invalid_params(
        format!(
            "The URI is {} bytes long; a URI may have at most {MAX_URI_BYTES} bytes here.",
            uri.len()
        ),
        None,
    ))
}

/// Whether `uri` is within [`MAX_URI_BYTES`].
pub(crate) fn fits(uri: &str) -> bool {
    uri.len() <= MAX_URI_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_over_the_bound_is_refused_saying_its_length() {
        assert!(checked(&"a".repeat(MAX_URI_BYTES)).is_ok());
        let refused = checked(&"a".repeat(MAX_URI_BYTES + 1)).err();
        let words = refused.map(|error| error.message.into_owned());
        assert!(
            words
                .as_deref()
                .is_some_and(|words| words.contains("4097 bytes")),
            "{words:?}"
        );
    }
}
