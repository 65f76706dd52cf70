//! What a GraphQL answer means to the model, once HTTP said it succeeded (a failing status is
//! read as any HTTP answer's, in [`answer`](super::answer)):
//!
//! | the answer's body | what the model reads |
//! | --- | --- |
//! | `data`, no `errors` | the `data` object |
//! | `errors` beside `data` that is not `null` (a partial result) | success: `{"data", "errors"}` as answered |
//! | `errors` with no `data`, or `data: null` | `CallFailedError` with the errors' messages, cut to 500 characters |
//! | anything else (no JSON object, neither `data` nor `errors`) | `InvalidResponseError` |
//!
//! `CallFailed` because the API ran the request and said it failed (a query or variables it
//! refused, a field that errored at its root): the model reads why and can ask otherwise, which
//! is not the case of `InvalidInput` (our input check) or `Unavailable` (try again).

use serde_json::Value;

use super::answer::MAX_ERROR_WORDS;
use toolkit_core::Reason;
use toolkit_core::text::cut_utf16;

/// The result of a GraphQL answer whose HTTP status was a success.
pub(crate) fn graphql_result(body: Value) -> Result<Value, Reason> {
    let Value::Object(mut body) = body else {
        return Err(Reason::invalid_response(
            "the GraphQL API answered something other than a JSON object",
        ));
    };
    let errors = body
        .get("errors")
        .and_then(Value::as_array)
        .filter(|errors| !errors.is_empty());
    let data = body.get("data").filter(|data| !data.is_null());
    match (data, errors) {
        (Some(_), Some(_)) => Ok(Value::Object(body)),
        (Some(_), None) => Ok(body.remove("data").unwrap_or(Value::Null)),
        (None, Some(errors)) => Err(Reason::call_failed(format!(
            "The GraphQL API answered errors: {}",
            cut_utf16(&messages(errors), MAX_ERROR_WORDS)
        ))),
        (None, None) => Err(Reason::invalid_response(
            "the GraphQL API answered neither data nor errors",
        )),
    }
}

/// The errors' messages, `; ` between them, each with the path it is about when it says one.
fn messages(errors: &[Value]) -> String {
    let mut text = String::new();
    for error in errors {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("an error with no message");
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(message);
        if let Some(path) = error.get("path").and_then(Value::as_array) {
            let path: Vec<String> = path
                .iter()
                .map(|step| match step {
                    Value::String(name) => name.clone(),
                    other => other.to_string(),
                })
                .collect();
            text.push_str(&format!(" (at {})", path.join(".")));
        }
    }
    text
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn data_alone_is_the_result() {
        assert_eq!(
            graphql_result(json!({"data": {"viewer": {"login": "a"}}})),
            Ok(json!({"viewer": {"login": "a"}}))
        );
    }

    #[test]
    fn errors_beside_data_are_a_success_carrying_both() {
        let body = json!({"data": {"a": 1, "b": null}, "errors": [{"message": "b failed", "path": ["b"]}]});
        assert_eq!(graphql_result(body.clone()), Ok(body));
    }

    #[test]
    fn errors_without_data_are_a_failure_the_model_reads() {
        for body in [
            json!({"errors": [{"message": "Cannot query field \"x\"."}, {"message": "boom", "path": ["a", 0]}]}),
            json!({"data": null, "errors": [{"message": "Cannot query field \"x\"."}, {"message": "boom", "path": ["a", 0]}]}),
        ] {
            let reason = graphql_result(body).unwrap_err();
            assert_eq!(reason.code(), Reason::call_failed("").code());
            assert_eq!(
                reason.model_message(),
                "The GraphQL API answered errors: Cannot query field \"x\".; boom (at a.0)"
            );
        }
        assert_eq!(
            graphql_result(json!([1])).unwrap_err().code(),
            Reason::invalid_response("").code()
        );
    }
}
