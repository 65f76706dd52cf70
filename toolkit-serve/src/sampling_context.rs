//! The context a relayed `sampling/createMessage` may ask for, taken away: an upstream that asks
//! `includeContext = "allServers"` would have the client add what *other* sources returned (and
//! `"thisServer"`, what the client holds of this server, which serves every source and, behind a
//! gateway, other sessions). Every relay to a client passes [`without_context`], so the upstream
//! gets a completion of what it sent and nothing more.

use serde_json::Value;
use toolkit_core::context::SAMPLING_CREATE;

/// The key of a sampling request's context.
const INCLUDE_CONTEXT: &str = "includeContext";

/// `params` of a request `method` sent to a client, with a sampling request's `includeContext`
/// (whatever it says) rewritten to `"none"`; any other request as it was. A request that says
/// none is left saying none: the absence means `"none"` already.
pub(crate) fn without_context(method: &str, mut params: Option<Value>) -> Option<Value> {
    if method == SAMPLING_CREATE
        && let Some(Value::Object(params)) = params.as_mut()
        && let Some(context) = params.get_mut(INCLUDE_CONTEXT)
    {
        *context = Value::String("none".to_owned());
    }
    params
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_context_a_sampling_request_asks_for_becomes_none() {
        for asked in [
            json!("allServers"),
            json!("thisServer"),
            json!("none"),
            json!({"odd": true}),
            Value::Null,
        ] {
            let params = json!({"messages": [], "maxTokens": 9, "includeContext": asked});
            assert_eq!(
                without_context(SAMPLING_CREATE, Some(params)),
                Some(json!({"messages": [], "maxTokens": 9, "includeContext": "none"})),
            );
        }
    }

    #[test]
    fn other_requests_and_requests_without_a_context_pass_as_written() {
        let unasked = json!({"messages": [], "maxTokens": 9});
        assert_eq!(
            without_context(SAMPLING_CREATE, Some(unasked.clone())),
            Some(unasked)
        );
        let elicitation = json!({"message": "Go?", "includeContext": "allServers"});
        assert_eq!(
            without_context("elicitation/create", Some(elicitation.clone())),
            Some(elicitation)
        );
        assert_eq!(without_context(SAMPLING_CREATE, None), None);
        assert_eq!(
            without_context(SAMPLING_CREATE, Some(json!([1]))),
            Some(json!([1]))
        );
    }
}
