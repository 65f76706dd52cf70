//! Reading a document's text, JSON or YAML, into the JSON the reader takes:
//! [`decode_document`].
//!
//! YAML is read by `serde_yaml_ng` (the maintained fork of `serde_yaml`), with merge keys
//! (`<<`) applied and every mapping key made a string as JSON has them: `200:` is `"200"`,
//! `true:` is `"true"`, `~:` is `"null"`.

use std::fmt;

use serde_json::{Map, Number, Value};
use serde_yaml_ng::Value as Yaml;

/// A document's text that is neither JSON nor YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// The document `text` holds: JSON when it starts with `{`, YAML otherwise.
///
/// ```
/// let document = toolkit_openapi::decode_document("openapi: 3.0.3\npaths:\n  /a:\n    get:\n      responses:\n        200: {description: ok}\n")?;
/// assert!(document["paths"]["/a"]["get"]["responses"]["200"].is_object());
/// # Ok::<(), toolkit_openapi::DecodeError>(())
/// ```
///
/// # Errors
///
/// [`DecodeError`] with the parser's words and where it stopped.
pub fn decode_document(text: &str) -> Result<Value, DecodeError> {
    let text = text.trim_start_matches('\u{feff}');
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|error| DecodeError {
            message: format!("the document is not JSON: {error}"),
        });
    }
    let mut yaml: Yaml = serde_yaml_ng::from_str(text).map_err(|error| DecodeError {
        message: format!("the document is neither JSON nor YAML: {error}"),
    })?;
    yaml.apply_merge().map_err(|error| DecodeError {
        message: format!("the document's YAML merge keys cannot be applied: {error}"),
    })?;
    Ok(to_json(yaml))
}

/// YAML as JSON. The YAML parser limits nesting, so the recursion is bounded.
fn to_json(yaml: Yaml) -> Value {
    match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(value) => Value::Bool(value),
        Yaml::Number(number) => {
            if let Some(integer) = number.as_i64() {
                Value::Number(integer.into())
            } else if let Some(integer) = number.as_u64() {
                Value::Number(integer.into())
            } else {
                // `.inf` and `.nan` have no JSON form: kept as the text YAML wrote.
                number
                    .as_f64()
                    .and_then(Number::from_f64)
                    .map_or_else(|| Value::String(number.to_string()), Value::Number)
            }
        }
        Yaml::String(text) => Value::String(text),
        Yaml::Sequence(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Mapping(mapping) => {
            let mut object = Map::new();
            for (key, value) in mapping {
                object.insert(key_text(key), to_json(value));
            }
            Value::Object(object)
        }
        Yaml::Tagged(tagged) => to_json(tagged.value),
    }
}

/// A mapping key as the string JSON needs.
fn key_text(key: Yaml) -> String {
    match key {
        Yaml::String(text) => text,
        Yaml::Null => "null".to_owned(),
        Yaml::Bool(value) => value.to_string(),
        Yaml::Number(number) => number.to_string(),
        Yaml::Tagged(tagged) => key_text(tagged.value),
        // A list or a mapping as a key: its JSON text, which no document means as a name.
        other => to_json(other).to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_become_strings() {
        let document = decode_document("200: a\ntrue: b\n~: c\n1.5: d\n").unwrap();
        assert_eq!(
            document,
            json!({"200": "a", "true": "b", "null": "c", "1.5": "d"})
        );
    }

    #[test]
    fn merge_keys_are_applied() {
        let document = decode_document("base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n").unwrap();
        assert_eq!(document["derived"], json!({"x": 1, "y": 2}));
    }

    #[test]
    fn aliases_that_would_expand_without_end_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..12 {
            let previous = level - 1;
            text.push_str(&format!(
                "a{level}: &a{level} [*a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}, *a{previous}]\n"
            ));
        }
        assert!(decode_document(&text).is_err());
    }

    #[test]
    fn bad_text_is_an_error_not_a_panic() {
        assert!(decode_document("{").is_err());
        assert!(decode_document("a: [").is_err());
        assert!(decode_document(&"[".repeat(100_000)).is_err());
    }
}
