//! The headers that mirror a tool's parameters (`x-mcp-header`, revision 2026-07-28), and the
//! base64 sentinel that keeps every header value one header.
//!
//! A server of the stateless revision may mark a property of a tool's input schema with
//! `"x-mcp-header": "Region"`; a call that gives the property also sends it as the header
//! `Mcp-Param-Region`, so that a load balancer can route on it. The rules here follow the
//! specification (`server/tools.mdx` §x-mcp-header) except where seed 000 says otherwise: a mark
//! on a `number` is allowed.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use toolkit_core::JsonObject;
use toolkit_core::mcp::HeaderMark;

/// The `Mcp-Param-*` headers of a call of a tool with `marks` and `input`, in the order of the
/// marks. A parameter the input leaves out (or gives as `null`) sends no header.
pub(crate) fn param_headers(marks: &[HeaderMark], input: &JsonObject) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    for mark in marks {
        let Some(value) = lookup(input, &mark.path) else {
            continue;
        };
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Bool(flag) => flag.to_string(),
            Value::Number(number) => number.to_string(),
            // The input was checked against the schema, which allows no such value here; a
            // header cannot hold one anyway.
            Value::Null | Value::Array(_) | Value::Object(_) => continue,
        };
        headers.push((format!("Mcp-Param-{}", mark.header), encode_value(&text)));
    }
    headers
}

fn lookup<'a>(input: &'a JsonObject, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut object = input;
    for name in parents {
        object = object.get(name)?.as_object()?;
    }
    object.get(last).filter(|value| !value.is_null())
}

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// `value` as a header value: as it is when a header can hold it, else its UTF-8 in base64
/// between `=?base64?` and `?=`. A value is sent encoded when it has a character outside
/// printable ASCII (0x20-0x7E, so no CR, LF or TAB), begins or ends with a space, or already
/// looks like the sentinel; the empty string is sent empty.
///
/// ```text
/// "eu-west-1" -> "eu-west-1"
/// "Zürich"    -> "=?base64?WsO8cmljaA==?="
/// ```
pub(crate) fn encode_value(value: &str) -> String {
    let unsafe_char = value.bytes().any(|byte| !(0x20..=0x7E).contains(&byte));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    if unsafe_char || padded || looks_encoded {
        format!("{SENTINEL_START}{}{SENTINEL_END}", STANDARD.encode(value))
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn schema(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn values_become_headers_and_absent_ones_none() {
        let found = toolkit_core::mcp::header_marks(&schema(json!({"properties": {
            "s": {"type": "string", "x-mcp-header": "S"},
            "i": {"type": "integer", "x-mcp-header": "I"},
            "b": {"type": "boolean", "x-mcp-header": "B"},
            "n": {"type": "string", "x-mcp-header": "N"},
            "o": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}}
        }})))
        .unwrap();
        let input =
            schema(json!({"s": "Zürich", "i": 42, "b": true, "n": null, "o": {"deep": " x"}}));
        let headers = param_headers(&found, &input);
        // In the order of the schema's properties.
        assert_eq!(
            headers,
            [
                (
                    "Mcp-Param-S".to_owned(),
                    "=?base64?WsO8cmljaA==?=".to_owned()
                ),
                ("Mcp-Param-I".to_owned(), "42".to_owned()),
                ("Mcp-Param-B".to_owned(), "true".to_owned()),
                ("Mcp-Param-Deep".to_owned(), "=?base64?IHg=?=".to_owned()),
            ]
        );
    }

    #[test]
    fn the_sentinel_encodes_what_a_header_cannot_hold() {
        assert_eq!(encode_value("eu-west-1"), "eu-west-1");
        assert_eq!(encode_value(" ünï "), "=?base64?IMO8bsOvIA==?=");
        assert_eq!(
            encode_value("a\r\nX-Injected: 1"),
            "=?base64?YQ0KWC1JbmplY3RlZDogMQ==?="
        );
        assert_eq!(
            encode_value("tab\there"),
            format!("=?base64?{}?=", STANDARD.encode("tab\there"))
        );
        assert_eq!(
            encode_value("=?base64?abc?="),
            format!("=?base64?{}?=", STANDARD.encode("=?base64?abc?="))
        );
        assert_eq!(encode_value(""), "");
    }
}
