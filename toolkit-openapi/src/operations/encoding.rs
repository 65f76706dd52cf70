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
//! - A query value is written in its parameter's style (OpenAPI 3.1's table): `form` a key per
//!   list item, or the list joined by commas (`explode: false`); `spaceDelimited` and
//!   `pipeDelimited` the list joined by `%20` or `|`; each of those an object as its keys and
//!   values in turn. `deepObject` is a key per leaf, nested in brackets as Stripe and Rails read
//!   them: `metadata[key]=value`, a list of scalars as `expand[]=a&expand[]=b`, a list of objects
//!   indexed, `items[0][price]=p`; never deeper than [`MAX_DEEP_OBJECT_DEPTH`] brackets, and no key
//!   that is empty or holds a bracket. Every text the model gives is percent-encoded whole (all
//!   but RFC 3986's unreserved characters), so only the style's own `&`, `=`, delimiters and
//!   brackets are structure. A value the style cannot write (an object inside a delimited
//!   list) is refused, named, before anything is sent.
//!
//! Percent-encoding and form encoding are the `percent-encoding` and `url` crates'; only the
//! choice of what to refuse is written here.

use std::borrow::Cow;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::Value;

use super::operation::QueryStyle;
use toolkit_core::text::cut_for_echo;

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

/// The most brackets a `deepObject` value may nest below its parameter's name
/// (`a[b][c]` is two): Stripe's deepest forms need four.
pub const MAX_DEEP_OBJECT_DEPTH: usize = 8;

/// A key or value text of a query (or form body), percent-encoded whole.
pub(crate) fn query_text(text: &str) -> String {
    utf8_percent_encode(text, PATH_VALUE).to_string()
}

/// The pairs one query parameter adds, key and value each percent-encoded, in `style`
/// (`joined` for `form` with `explode: false`).
///
/// # Errors
///
/// A message for the model, naming `property`, when the style cannot write the value.
pub(crate) fn query_pairs(
    property: &str,
    name: &str,
    value: &Value,
    style: QueryStyle,
    joined: bool,
) -> Result<Vec<(String, String)>, String> {
    let key = query_text(name);
    let delimiter = match style {
        QueryStyle::DeepObject => {
            let mut pairs = Vec::new();
            deep_object(property, key, value, 0, &mut pairs)?;
            return Ok(pairs);
        }
        QueryStyle::Form if !joined => {
            return Ok(scalars(property, value)?
                .iter()
                .map(|text| (key.clone(), query_text(text)))
                .collect());
        }
        QueryStyle::Form => ",",
        QueryStyle::SpaceDelimited => "%20",
        QueryStyle::PipeDelimited => "|",
    };
    let cannot = || {
        format!(
            "The property {property:?} is sent as a {} list: its items (or an object's values) \
             are strings, numbers or booleans, not objects or lists.",
            style.as_str()
        )
    };
    let mut pieces = Vec::new();
    match value {
        Value::Array(items) => {
            for item in items {
                pieces.push(query_text(&scalar(item).ok_or_else(cannot)?));
            }
        }
        Value::Object(fields) => {
            for (field, item) in fields {
                if item.is_null() {
                    continue;
                }
                pieces.push(query_text(field));
                pieces.push(query_text(&scalar(item).ok_or_else(cannot)?));
            }
        }
        other => pieces.push(query_text(&scalar(other).ok_or_else(cannot)?)),
    }
    Ok(vec![(key, pieces.join(delimiter))])
}

/// The pairs of a `deepObject` value below `key` (already encoded), `depth` brackets in.
///
/// # Errors
///
/// A message naming `property` for a value nested deeper than [`MAX_DEEP_OBJECT_DEPTH`], an
/// object key that is empty or holds a bracket (it would read as other nesting), or an empty
/// list or object below the top (it would be sent as nothing).
pub(crate) fn deep_object(
    property: &str,
    key: String,
    value: &Value,
    depth: usize,
    pairs: &mut Vec<(String, String)>,
) -> Result<(), String> {
    let deeper = || {
        if depth >= MAX_DEEP_OBJECT_DEPTH {
            Err(format!(
                "The property {property:?} nests deeper than {MAX_DEEP_OBJECT_DEPTH} levels, \
                 more than a request carries."
            ))
        } else {
            Ok(())
        }
    };
    // An empty list or object below the top would be no pair at all: the API would read the
    // key as absent, so the model's value would be lost unseen.
    let empty = match value {
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    };
    if empty && depth > 0 {
        return Err(format!(
            "The property {property:?} holds an empty list or object at {:?}, which a \
             deepObject query cannot carry: leave it out or give it a value.",
            cut_for_echo(&key)
        ));
    }
    match value {
        Value::Null => {}
        Value::Array(items) => {
            deeper()?;
            for (index, item) in items.iter().enumerate() {
                match scalar(item) {
                    Some(text) => pairs.push((format!("{key}[]"), query_text(&text))),
                    None if item.is_null() => {}
                    None => {
                        deep_object(property, format!("{key}[{index}]"), item, depth + 1, pairs)?
                    }
                }
            }
        }
        Value::Object(fields) => {
            deeper()?;
            for (field, item) in fields {
                if field.is_empty() || field.contains(['[', ']']) {
                    return Err(format!(
                        "The property {property:?} has the key {:?}: a key of a nested value \
                         may not be empty or hold a bracket.",
                        cut_for_echo(field)
                    ));
                }
                let nested = format!("{key}[{}]", query_text(field));
                deep_object(property, nested, item, depth + 1, pairs)?;
            }
        }
        scalar_value => {
            if let Some(text) = scalar(scalar_value) {
                pairs.push((key, query_text(&text)));
            }
        }
    }
    Ok(())
}

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

/// A path value in RFC 6570's reserved expansion (`{+name}`): segments joined by `/`.
///
/// RFC 6570 keeps reserved characters and percent-escapes as the value writes them; here a
/// value may change nothing but its own segments, so only `/` between segments and the
/// characters a segment holds literally (unreserved, sub-delimiters, `:` and `@`) are kept,
/// and everything else is percent-encoded, `%` included (an escape the value wrote, `%2F..`,
/// stays text and can never decode to a separator).
///
/// # Errors
///
/// A message for the model when the value is no scalar, is empty, holds an empty, `.` or `..`
/// segment (leading, trailing or doubled `/` included; `\` counts as a separator for this, as
/// some servers read it as one), or holds `?` or `#`, which would begin a query or a fragment.
pub(crate) fn reserved_path(property: &str, value: &Value) -> Result<String, String> {
    let text = scalar(value).ok_or_else(|| not_scalar(property, false))?;
    if text.is_empty() {
        return Err(format!("The property {property:?} may not be empty."));
    }
    if text.contains(['?', '#']) {
        return Err(format!(
            "The property {property:?} may not hold `?` or `#`: it is a path of segments joined by `/` ({:?}).",
            cut_for_echo(&text)
        ));
    }
    let bad = |segment: &str| segment.is_empty() || segment == "." || segment == "..";
    if text.split('/').any(bad)
        || text
            .split(['/', '\\'])
            .any(|segment| segment == "." || segment == "..")
    {
        return Err(format!(
            "The property {property:?} may not be {:?}: its segments between `/` may not be empty, `.` or `..`.",
            cut_for_echo(&text)
        ));
    }
    Ok(utf8_percent_encode(&text, PATH_LITERAL).to_string())
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

    /// The query a parameter `color` adds, as the request writes it.
    fn query(style: QueryStyle, joined: bool, value: &Value) -> Result<String, String> {
        let pairs = query_pairs("color", "color", value, style, joined)?;
        Ok(pairs
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join("&"))
    }

    /// OpenAPI 3.1's table of style examples (§ 4.8.12.4.2, "Style Examples"), every cell it
    /// defines for a query, but form's exploded object, whose keys would spread over the query
    /// (the reader skips such a parameter).
    #[test]
    fn query_styles_write_openapi_s_table() {
        let string = json!("blue");
        let array = json!(["blue", "black", "brown"]);
        let object = json!({"R": 100, "G": 200, "B": 150});
        let cases = [
            (QueryStyle::Form, true, &string, "color=blue"),
            (QueryStyle::Form, true, &array, "color=blue,black,brown"),
            (QueryStyle::Form, true, &object, "color=R,100,G,200,B,150"),
            (QueryStyle::Form, false, &string, "color=blue"),
            (
                QueryStyle::Form,
                false,
                &array,
                "color=blue&color=black&color=brown",
            ),
            (
                QueryStyle::SpaceDelimited,
                true,
                &array,
                "color=blue%20black%20brown",
            ),
            (
                QueryStyle::SpaceDelimited,
                true,
                &object,
                "color=R%20100%20G%20200%20B%20150",
            ),
            (
                QueryStyle::PipeDelimited,
                true,
                &array,
                "color=blue|black|brown",
            ),
            (
                QueryStyle::PipeDelimited,
                true,
                &object,
                "color=R|100|G|200|B|150",
            ),
            (
                QueryStyle::DeepObject,
                false,
                &object,
                "color[R]=100&color[G]=200&color[B]=150",
            ),
        ];
        for (style, joined, value, expected) in cases {
            assert_eq!(
                query(style, joined, value).as_deref(),
                Ok(expected),
                "{style:?} joined={joined} {value}"
            );
        }
        // An empty list, joined, is the key with no value.
        assert_eq!(
            query(QueryStyle::Form, true, &json!([])).as_deref(),
            Ok("color=")
        );
    }

    #[test]
    fn a_delimiter_or_bracket_the_model_writes_is_text_not_structure() {
        assert_eq!(
            query(QueryStyle::PipeDelimited, true, &json!(["a|b", "c"])).as_deref(),
            Ok("color=a%7Cb|c")
        );
        assert_eq!(
            query(QueryStyle::Form, true, &json!(["a,b", "c&d=e"])).as_deref(),
            Ok("color=a%2Cb,c%26d%3De")
        );
        assert_eq!(
            query(QueryStyle::DeepObject, false, &json!({"a b": "1&x=2"})).as_deref(),
            Ok("color[a%20b]=1%26x%3D2")
        );
    }

    /// Nested as Stripe and Rails read it: lists of scalars with `[]`, lists of objects indexed,
    /// a scalar as the key itself, nulls left out.
    #[test]
    fn a_deep_object_nests_as_stripe_reads_it() {
        let cases = [
            (json!(["a", "b"]), "color[]=a&color[]=b"),
            (json!({"key": "value"}), "color[key]=value"),
            (json!({"gte": 1, "lt": null}), "color[gte]=1"),
            (json!(7), "color=7"),
            (
                json!([{"price": "p", "quantity": 2}, {"price": "q", "tax": ["t1"]}]),
                "color[0][price]=p&color[0][quantity]=2&color[1][price]=q&color[1][tax][]=t1",
            ),
            (
                json!({"recurring": {"interval": "month"}}),
                "color[recurring][interval]=month",
            ),
            (json!({"key": ""}), "color[key]="),
            // Empty at the top, as `form` writes it: nothing, as if left out.
            (json!([]), ""),
            (json!({}), ""),
        ];
        for (value, expected) in cases {
            assert_eq!(
                query(QueryStyle::DeepObject, false, &value).as_deref(),
                Ok(expected),
                "{value}"
            );
        }
    }

    #[test]
    fn a_value_the_style_cannot_write_is_refused_with_the_parameter_s_name() {
        let refused = [
            (QueryStyle::PipeDelimited, true, json!([{"a": 1}])),
            (QueryStyle::SpaceDelimited, true, json!([["a"]])),
            (QueryStyle::Form, true, json!({"a": {"b": 1}})),
            (QueryStyle::Form, false, json!({"a": 1})),
            (QueryStyle::DeepObject, false, json!({"a]": 1})),
            (QueryStyle::DeepObject, false, json!({"": 1})),
            (QueryStyle::DeepObject, false, json!({"a": {"b[c": 1}})),
            (QueryStyle::DeepObject, false, json!({"metadata": {}})),
            (QueryStyle::DeepObject, false, json!([{"tax": []}])),
        ];
        for (style, joined, value) in refused {
            let error = query(style, joined, &value).unwrap_err();
            assert!(error.contains("\"color\""), "{error}");
        }
    }

    #[test]
    fn a_deep_object_nested_beyond_the_bound_is_refused() {
        let nested = |depth: usize| {
            let mut value = json!("leaf");
            for _ in 0..depth {
                value = json!({ "a": value });
            }
            value
        };
        assert!(
            query(
                QueryStyle::DeepObject,
                false,
                &nested(MAX_DEEP_OBJECT_DEPTH)
            )
            .is_ok()
        );
        let error = query(
            QueryStyle::DeepObject,
            false,
            &nested(MAX_DEEP_OBJECT_DEPTH + 1),
        )
        .unwrap_err();
        assert_eq!(
            error,
            "The property \"color\" nests deeper than 8 levels, more than a request carries."
        );
        let mut list = json!("leaf");
        for _ in 0..=MAX_DEEP_OBJECT_DEPTH {
            list = json!([list]);
        }
        assert!(query(QueryStyle::DeepObject, false, &list).is_err());
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
