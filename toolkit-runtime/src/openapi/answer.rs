//! Which of an operation's responses is its success answer, and the schema of that answer.
//!
//! The answer is the first success response, in the order of its status (`200` before `201`,
//! explicit codes before the `2XX` range), whose content has a JSON media type
//! (`application/json`, or one ending in `+json`, parameters ignored) with a `schema`. A
//! `default` response is never the answer: documents use it for errors. An operation whose
//! success answers have no JSON schema has no answer schema.

use serde_json::Value;

use super::pointer;

/// The schema of the success answer of an operation whose `responses` are `responses`, or
/// `None` when it has none (no 2xx response with a JSON schema, or one whose reference leads
/// nowhere).
pub(crate) fn success_schema<'d>(
    document: &'d Value,
    responses: Option<&'d Value>,
) -> Option<&'d Value> {
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

/// The order of a success status: its code for `200`–`299`, after them `2XX`; `None` for any
/// other status.
fn rank(status: &str) -> Option<u16> {
    if status.eq_ignore_ascii_case("2XX") {
        return Some(300);
    }
    let code: u16 = status.parse().ok()?;
    (200..300).contains(&code).then_some(code)
}

/// The schema of the first JSON media type of `response`'s content.
fn json_schema<'d>(document: &'d Value, response: &'d Value) -> Option<&'d Value> {
    let response = pointer::follow(document, response).ok()?;
    let Some(Value::Object(content)) = response.get("content") else {
        return None;
    };
    content
        .iter()
        .filter(|(media_type, _)| is_json(media_type))
        .find_map(|(_, media)| media.get("schema"))
}

/// Whether a media type is JSON: `application/json` or `*/*+json`, parameters ignored.
fn is_json(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
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
            Some(&json!({"type": "array"}))
        );
        let only_range =
            json!({"2XX": {"content": {"application/json": {"schema": {"type": "boolean"}}}}});
        assert_eq!(
            success_schema(&document, Some(&only_range)),
            Some(&json!({"type": "boolean"}))
        );
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
