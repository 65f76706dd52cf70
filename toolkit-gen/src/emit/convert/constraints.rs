//! What a field's documentation says of its schema beyond the description: the `default`, the
//! bounds (`minimum`/`maximum` and their exclusive forms, `minLength`/`maxLength`, `pattern`,
//! `minItems`/`maxItems`), so that a Rust user sees what the server will refuse.

use serde_json::{Map, Value};

/// The longest `default` or `pattern` written out; a longer one is left out (a whole example
/// object is no help in a field's documentation).
const LONGEST: usize = 120;

/// `text` as inline code, fenced with enough backticks for the backticks it holds.
fn code(text: &str) -> String {
    let mut run = 0;
    let mut longest = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    if longest == 0 {
        return format!("`{text}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}

/// A number of the schema, as written (`1`, `0.5`).
fn number(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key)
        .filter(|value| value.is_number())
        .map(Value::to_string)
}

/// A count of the schema (`minLength`, `maxItems`).
fn count(map: &Map<String, Value>, key: &str) -> Option<u64> {
    map.get(key).and_then(Value::as_u64)
}

/// The bound `key` (`minimum`/`maximum`), exclusive in the 3.0 way (`exclusiveMinimum: true`
/// beside it) or the 3.1/JSON Schema way (`exclusiveMinimum: 5` in its place).
fn bound(map: &Map<String, Value>, key: &str, exclusive: &str) -> Option<(String, bool)> {
    if let Some(value) = number(map, exclusive) {
        return Some((value, true));
    }
    let value = number(map, key)?;
    Some((value, map.get(exclusive) == Some(&Value::Bool(true))))
}

/// The sentence of `schema`'s default and bounds (`Default: `10`. At least 1, at most 100.`),
/// `None` when it has none. `shape` is the schema the value's type comes from (a reference's
/// target), read for what `schema` does not say itself.
pub(super) fn describe(schema: &Value, shape: &Value) -> Option<String> {
    let own = schema.as_object()?;
    let empty = Map::new();
    let target = shape.as_object().unwrap_or(&empty);
    let map =
        |key: &str| -> &Map<String, Value> { if own.contains_key(key) { own } else { target } };
    let mut sentences = Vec::new();
    if let Some(default) = map("default").get("default") {
        let text = default.to_string();
        if text.len() <= LONGEST {
            sentences.push(format!("Default: {}.", code(&text)));
        }
    }
    let mut bounds = Vec::new();
    match bound(map("minimum"), "minimum", "exclusiveMinimum")
        .or_else(|| bound(map("exclusiveMinimum"), "minimum", "exclusiveMinimum"))
    {
        Some((value, true)) => bounds.push(format!("more than {value}")),
        Some((value, false)) => bounds.push(format!("at least {value}")),
        None => {}
    }
    match bound(map("maximum"), "maximum", "exclusiveMaximum")
        .or_else(|| bound(map("exclusiveMaximum"), "maximum", "exclusiveMaximum"))
    {
        Some((value, true)) => bounds.push(format!("less than {value}")),
        Some((value, false)) => bounds.push(format!("at most {value}")),
        None => {}
    }
    for (key, what, unit) in [
        ("minLength", "at least", "character"),
        ("maxLength", "at most", "character"),
        ("minItems", "at least", "item"),
        ("maxItems", "at most", "item"),
    ] {
        if let Some(n) = count(map(key), key) {
            let plural = if n == 1 { "" } else { "s" };
            bounds.push(format!("{what} {n} {unit}{plural}"));
        }
    }
    if let Some(pattern) = map("pattern").get("pattern").and_then(Value::as_str)
        && pattern.len() <= LONGEST
        && !pattern.contains(['\n', '\r'])
    {
        bounds.push(format!("matching {}", code(pattern)));
    }
    if let Some(first) = bounds.first_mut() {
        first.replace_range(..1, &first[..1].to_uppercase());
        sentences.push(format!("{}.", bounds.join(", ")));
    }
    (!sentences.is_empty()).then(|| sentences.join(" "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::describe;

    fn of(schema: serde_json::Value) -> Option<String> {
        describe(&schema, &json!({}))
    }

    #[test]
    fn defaults_and_bounds_are_said() {
        assert_eq!(
            of(json!({ "type": "integer", "default": 10, "minimum": 1, "maximum": 100 })),
            Some("Default: `10`. At least 1, at most 100.".to_owned())
        );
        assert_eq!(
            of(json!({ "minLength": 3, "maxLength": 5, "pattern": "^a`b$" })),
            Some("At least 3 characters, at most 5 characters, matching `` ^a`b$ ``.".to_owned())
        );
        assert_eq!(
            of(json!({ "minItems": 1, "maxItems": 2, "default": ["x"] })),
            Some("Default: `[\"x\"]`. At least 1 item, at most 2 items.".to_owned())
        );
        assert_eq!(of(json!({ "type": "string" })), None);
    }

    #[test]
    fn exclusive_bounds_of_both_dialects() {
        // OpenAPI 3.0: a boolean beside the bound.
        assert_eq!(
            of(json!({ "minimum": 0, "exclusiveMinimum": true, "maximum": 1 })),
            Some("More than 0, at most 1.".to_owned())
        );
        // OpenAPI 3.1 / JSON Schema: the bound itself.
        assert_eq!(
            of(json!({ "exclusiveMinimum": 0, "exclusiveMaximum": 1.5 })),
            Some("More than 0, less than 1.5.".to_owned())
        );
    }

    #[test]
    fn a_reference_target_says_what_the_property_does_not() {
        assert_eq!(
            describe(
                &json!({ "$ref": "#/x", "default": 5 }),
                &json!({ "type": "integer", "maximum": 9, "default": 1 })
            ),
            Some("Default: `5`. At most 9.".to_owned())
        );
    }

    #[test]
    fn long_defaults_and_patterns_are_left_out() {
        let long = "a".repeat(200);
        assert_eq!(of(json!({ "default": long, "pattern": long })), None);
    }
}
