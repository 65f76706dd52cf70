//! Which of an operation's responses is its success answer, and the schema of that answer.
//!
//! The answer is the first success response, in the order of its status (`200` before `201`,
//! explicit codes before the `2XX` range), whose content has a JSON media type
//! (`application/json`, or one ending in `+json`, parameters ignored) with a `schema`. A
//! `default` response is never the answer: documents use it for errors. An operation whose
//! success answers have no JSON schema has no answer schema. A stream of JSON items
//! (`application/jsonl`, `application/x-ndjson`, `application/json-seq`) whose items OpenAPI
//! 3.2's `itemSchema` types is answered as the list of its items, which is what the HTTP
//! source returns for one.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::pointer;

/// The schema of the success answer of an operation whose `responses` are `responses`, or
/// `None` when it has none (no 2xx response with a JSON schema, or one whose reference leads
/// nowhere).
pub(crate) fn success_schema<'d>(
    document: &'d Value,
    responses: Option<&'d Value>,
) -> Option<Cow<'d, Value>> {
    let Value::Object(responses) = pointer::follow(document, responses?).ok()? else {
        return None;
    };
    let mut successes: Vec<(u16, &Value)> = responses
        .iter()
        .filter_map(|(status, response)| rank(status).map(|rank| (rank, response)))
        .collect();
    successes.sort_by_key(|(rank, _)| *rank);
    successes
        .into_iter()
        .find_map(|(_, response)| json_schema(document, response))
}

/// The `Accept` header of an operation whose `responses` are `responses`: the media types its
/// success responses list, `application/json` first, then the other JSON ones, then the rest,
/// each once, and `*/*;q=0.1` last (an answer in another type still reaches the model as text);
/// `None` when they list none.
pub(crate) fn accept(document: &Value, responses: Option<&Value>) -> Option<String> {
    let Value::Object(responses) = pointer::follow(document, responses?).ok()? else {
        return None;
    };
    let mut types: Vec<String> = Vec::new();
    for (_, response) in responses
        .iter()
        .filter(|(status, _)| rank(status).is_some())
    {
        let Ok(response) = pointer::follow(document, response) else {
            continue;
        };
        let Some(Value::Object(content)) = response.get("content") else {
            continue;
        };
        for media_type in content.keys() {
            let essence = essence(media_type);
            // A header carries visible ASCII only; a media type is a `type/subtype` token.
            let usable = essence.contains('/')
                && essence
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && !b",;\"\\".contains(&b));
            if usable && essence != "*/*" && !types.contains(&essence) {
                types.push(essence);
            }
        }
    }
    if types.is_empty() {
        return None;
    }
    // A stable sort keeps the document's order within each group.
    types.sort_by_key(|essence| match essence.as_str() {
        "application/json" => 0,
        json if is_json(json) => 1,
        _ => 2,
    });
    types.push("*/*;q=0.1".to_owned());
    Some(types.join(", "))
}

/// The order of a success status: its code for `200`–`299`, after them `2XX`; `None` for any
/// other status.
fn rank(status: &str) -> Option<u16> {
    if status.eq_ignore_ascii_case("2XX") {
        return Some(300);
    }
    let code: u16 = status.parse().ok()?;
    (200..300).contains(&code).then_some(code)
}

/// The schema of the first JSON media type of `response`'s content, else the list of the items
/// of its first typed stream of JSON items.
fn json_schema<'d>(document: &'d Value, response: &'d Value) -> Option<Cow<'d, Value>> {
    let response = pointer::follow(document, response).ok()?;
    let Some(Value::Object(content)) = response.get("content") else {
        return None;
    };
    content
        .iter()
        .filter(|(media_type, _)| is_json(media_type))
        .find_map(|(_, media)| media.get("schema"))
        .map(Cow::Borrowed)
        .or_else(|| {
            content
                .iter()
                .filter(|(media_type, _)| is_json_stream(media_type))
                .find_map(|(_, media)| media.get("itemSchema"))
                .map(|items| Cow::Owned(json!({ "type": "array", "items": items })))
        })
}

/// Whether a media type is a stream of JSON items, one a line or record, parameters ignored.
pub(crate) fn is_json_stream(media_type: &str) -> bool {
    matches!(
        essence(media_type).as_str(),
        "application/jsonl"
            | "application/x-ndjson"
            | "application/json-seq"
            | "application/x-jsonlines"
            | "application/jsonlines"
    )
}

/// Whether a media type is JSON: `application/json` or `*/*+json`, parameters ignored.
fn is_json(media_type: &str) -> bool {
    let essence = essence(media_type);
    essence == "application/json" || essence.ends_with("+json")
}

/// A media type without its parameters, in lower case.
fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_first_success_with_a_json_schema_is_the_answer() {
        let document = json!({"components": {"responses": {"Pets": {
            "content": {"application/vnd.api+json; charset=utf-8": {"schema": {"type": "array"}}}
        }}}});
        let responses = json!({
            "default": {"content": {"application/json": {"schema": {"type": "string"}}}},
            "2XX": {"content": {"application/json": {"schema": {"type": "boolean"}}}},
            "202": {"$ref": "#/components/responses/Pets"},
            "201": {"content": {"text/plain": {"schema": {"type": "string"}}}},
            "204": {"description": "nothing"},
            "404": {"content": {"application/json": {"schema": {"type": "object"}}}}
        });
        assert_eq!(
            success_schema(&document, Some(&responses)),
            Some(Cow::Owned(json!({"type": "array"})))
        );
        let only_range =
            json!({"2XX": {"content": {"application/json": {"schema": {"type": "boolean"}}}}});
        assert_eq!(
            success_schema(&document, Some(&only_range)),
            Some(Cow::Owned(json!({"type": "boolean"})))
        );
    }

    #[test]
    fn a_typed_stream_of_json_items_is_answered_as_their_list() {
        let responses = json!({"200": {"content": {
            "text/plain": {},
            "application/jsonl": {"itemSchema": {"$ref": "#/components/schemas/Event"}}
        }}});
        assert_eq!(
            success_schema(&json!({}), Some(&responses)),
            Some(Cow::Owned(json!({
                "type": "array", "items": {"$ref": "#/components/schemas/Event"}
            })))
        );
        let untyped = json!({"200": {"content": {"application/x-ndjson": {}}}});
        assert_eq!(success_schema(&json!({}), Some(&untyped)), None);
    }

    #[test]
    fn accept_names_the_success_media_types_json_first() {
        let document = json!({"components": {"responses": {"Image": {
            "content": {"image/png": {}, "application/problem+json": {}}
        }}}});
        let responses = json!({
            "200": {"content": {"text/plain": {}, "application/JSON; charset=utf-8": {}}},
            "201": {"$ref": "#/components/responses/Image"},
            "204": {"description": "nothing"},
            "default": {"content": {"application/xml": {}}},
            "404": {"content": {"text/html": {}}}
        });
        assert_eq!(
            accept(&document, Some(&responses)).as_deref(),
            Some("application/json, application/problem+json, text/plain, image/png, */*;q=0.1")
        );
        for none in [
            json!({"204": {"description": "nothing"}}),
            json!({"200": {"content": {"*/*": {}}}}),
            json!({"200": {"content": {"bad\r\nX-Evil: 1": {}}}}),
            json!({"default": {"content": {"application/json": {}}}}),
        ] {
            assert_eq!(accept(&document, Some(&none)), None, "{none}");
        }
    }

    #[test]
    fn no_json_success_is_no_answer() {
        let document = json!({});
        for responses in [
            json!({"default": {"content": {"application/json": {"schema": {}}}}}),
            json!({"200": {"content": {"application/xml": {"schema": {}}}}}),
            json!({"200": {"content": {"application/json": {}}}}),
            json!({"200": {"$ref": "#/components/responses/Missing"}}),
            json!({"299x": {"content": {"application/json": {"schema": {}}}}}),
            json!([]),
        ] {
            assert_eq!(success_schema(&document, Some(&responses)), None);
        }
        assert_eq!(success_schema(&document, None), None);
    }
}
