//! How a value the model gives is written into a request: the rules that keep it in its place.
//!
//! - A value is a string, a number or a boolean; a query takes a list of them (a key per
//!   value), a header a list joined by commas, a path one value only.
//! - A path value is percent-encoded (everything but RFC 3986's unreserved characters, so `/`,
//!   `?`, `#` and `%` are encoded) and may not be empty, `.` or `..`, nor hold a `.` or `..`
//!   segment once percent-decoded (`%2e%2e`, `..%2F..`): URL normalization on either side would
//!   turn it into another operation.
//! - A header value holds no control character (CR, LF, NUL, …), which could add a header, and
//!   only ASCII, which is all a header carries as text.
//!
//! Percent-encoding and form encoding are the `percent-encoding` and `url` crates'; only the
//! choice of what to refuse is written here.

use std::borrow::Cow;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::Value;

use crate::text::cut_for_echo;

/// Everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`).
const PATH_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a path template's literal text keeps as it is: unreserved characters, `/` and the
/// sub-delimiters RFC 3986 allows in a segment. Everything else (space, `%`, `?`, `#`, …) is
/// encoded.
pub(crate) const PATH_LITERAL: &AsciiSet = &PATH_VALUE
    .remove(b'/')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// A scalar as the text a request carries: a string as it is, a number in JSON's form, a boolean
/// as `true` or `false`; `None` for null, a list or an object.
pub(crate) fn scalar(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(text) => Some(Cow::Borrowed(text)),
        Value::Number(number) => Some(Cow::Owned(number.to_string())),
        Value::Bool(true) => Some(Cow::Borrowed("true")),
        Value::Bool(false) => Some(Cow::Borrowed("false")),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The scalars of a value that may be a list: one for a scalar, each item for a list.
///
/// # Errors
///
/// A message for the model when the value or an item is no scalar.
pub(crate) fn scalars<'a>(property: &str, value: &'a Value) -> Result<Vec<Cow<'a, str>>, String> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|item| scalar(item).ok_or_else(|| not_scalar(property, true)))
            .collect(),
        other => scalar(other)
            .map(|text| vec![text])
            .ok_or_else(|| not_scalar(property, true)),
    }
}

/// The message for a value that is not a string, number or boolean (or a list of them).
pub(crate) fn not_scalar(property: &str, list_allowed: bool) -> String {
    if list_allowed {
        format!("The property {property:?} takes a string, a number, a boolean, or a list of them.")
    } else {
        format!("The property {property:?} takes a string, a number or a boolean.")
    }
}

/// A path value, percent-encoded for one segment.
///
/// # Errors
///
/// A message for the model when the value is no scalar, is empty, `.` or `..`, or holds a `.`
/// or `..` segment once percent-decoded.
pub(crate) fn path_segment(property: &str, value: &Value) -> Result<String, String> {
    let text = scalar(value).ok_or_else(|| not_scalar(property, false))?;
    let decoded = percent_decode_str(&text).decode_utf8_lossy();
    let is_dot = |piece: &str| piece == "." || piece == "..";
    if text.is_empty() || decoded.is_empty() {
        return Err(format!("The property {property:?} may not be empty."));
    }
    if is_dot(&text) || decoded.split(['/', '\\']).any(is_dot) {
        return Err(format!(
            "The property {property:?} may not be {:?}: a path value may not be or hold `.` or `..`.",
            cut_for_echo(&text)
        ));
    }
    Ok(utf8_percent_encode(&text, PATH_VALUE).to_string())
}

/// A header value: the scalar, or the items of a list joined by commas.
///
/// # Errors
///
/// A message for the model when the value is no scalar or list of them, or holds a character a
/// header cannot carry (a control character such as CR, LF or NUL, or anything beyond ASCII).
pub(crate) fn header_value(property: &str, value: &Value) -> Result<String, String> {
    let joined = scalars(property, value)?.join(",");
    if let Some(bad) = joined.chars().find(|c| c.is_control() || !c.is_ascii()) {
        let what = if bad.is_control() {
            "a control character"
        } else {
            "a character beyond ASCII"
        };
        return Err(format!(
            "The property {property:?} goes into a header, which cannot hold {what} ({:?}).",
            bad
        ));
    }
    Ok(joined)
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_path_value_is_encoded_whole() {
        assert_eq!(
            path_segment("p", &json!("a/b?c#d%e f")).as_deref(),
            Ok("a%2Fb%3Fc%23d%25e%20f")
        );
        assert_eq!(path_segment("p", &json!(12.5)).as_deref(), Ok("12.5"));
        assert_eq!(path_segment("p", &json!(false)).as_deref(), Ok("false"));
        assert_eq!(
            path_segment("p", &json!("ünï")).as_deref(),
            Ok("%C3%BCn%C3%AF")
        );
    }

    #[test]
    fn dot_segments_are_refused_before_and_after_decoding() {
        for value in [
            "", ".", "..", "%2e%2e", "%2E.", "..%2F..", "a/../b", "a\\..", "%2e",
        ] {
            assert!(path_segment("p", &json!(value)).is_err(), "{value}");
        }
        for value in ["...", "a.b", ".hidden", "src/main.rs"] {
            assert!(path_segment("p", &json!(value)).is_ok(), "{value}");
        }
    }

    #[test]
    fn a_path_takes_no_list_object_or_null() {
        for value in [json!(["a"]), json!({"a": 1}), json!(null)] {
            assert!(path_segment("p", &value).is_err());
        }
    }

    #[test]
    fn header_values_that_could_add_a_header_are_refused() {
        for value in [
            "a\r\nX-Evil: 1",
            "a\nb",
            "a\0b",
            "a\u{7f}",
            "tab\there",
            "é",
        ] {
            assert!(header_value("h", &json!(value)).is_err(), "{value:?}");
        }
        assert_eq!(
            header_value("h", &json!(["a", 1, true])).as_deref(),
            Ok("a,1,true")
        );
    }
}
