//! Input-required results of the stateless revision (2026-07-28, multi-round-trip requests): a
//! server that needs something of the client before a call can finish answers
//! `resultType: "input_required"` with `inputRequests` (each an `elicitation/create`,
//! `sampling/createMessage` or `roots/list` request, by a key of the server's) and/or a
//! `requestState`; the client answers each request and sends the call again with
//! `inputResponses` (the answers, by the same keys) and the `requestState` echoed as written.
//!
//! Each request is answered as the session revisions answer the same request sent on a call's
//! stream: by the client of the served call when the source relays to it and the client declared
//! the capability, else an elicitation by the host's callback
//! ([`McpOptions::elicitation`](super::McpOptions::elicitation)) or declined at once when there
//! is none. A sampling or roots request nobody can answer fails the call as unsupported (the
//! source did not declare the capability, so the server should not have asked). The stateless
//! requests declare the capabilities that can be answered this way ([`declared`]).

use serde_json::{Map, Value, json};

use crate::McpOptions;
use crate::elicitation::{ElicitationAnswer, ElicitationRequest};
use crate::transport::requests::{Relay, relay_of, relays};
use toolkit_core::context::{ELICITATION_CREATE, ROOTS_LIST, Relayed, SAMPLING_CREATE};
use toolkit_core::{CallContext, JsonObject, Reason};

/// The most requests one `input_required` result may ask at once; more is an invalid response,
/// so that a server cannot make the host ask its person a thousand questions.
pub(crate) const MAX_REQUESTS_PER_ROUND: usize = 16;

/// What an `input_required` result asks: the requests by key, and the state to send back.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Asked {
    /// `inputRequests` as the server wrote them (empty when it gave only a state).
    pub requests: JsonObject,
    /// `requestState`, to be echoed as written.
    pub request_state: Option<Value>,
}

/// Reads an `input_required` result.
pub(crate) fn asked(result: &JsonObject) -> Result<Asked, Reason> {
    let requests = match result.get("inputRequests") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(requests)) => requests.clone(),
        Some(_) => {
            return Err(Reason::invalid_response(
                "an input_required result whose inputRequests is no object",
            ));
        }
    };
    let request_state = result.get("requestState").filter(|state| !state.is_null());
    if requests.is_empty() && request_state.is_none() {
        return Err(Reason::invalid_response(
            "an input_required result that asks nothing and gives no requestState",
        ));
    }
    if requests.len() > MAX_REQUESTS_PER_ROUND {
        return Err(Reason::invalid_response(format!(
            "an input_required result with more than {MAX_REQUESTS_PER_ROUND} inputRequests"
        )));
    }
    Ok(Asked {
        requests,
        request_state: request_state.cloned(),
    })
}

/// The params a call is sent again with: `inputResponses` (when something was asked) and the
/// `requestState` as the server wrote it (when it gave one).
pub(crate) fn retried(params: &mut JsonObject, responses: Option<JsonObject>, asked: &Asked) {
    if let Some(responses) = responses {
        params.insert("inputResponses".into(), Value::Object(responses));
    }
    if let Some(state) = &asked.request_state {
        params.insert("requestState".into(), state.clone());
    }
}

/// `params` declaring, in their `_meta`, the client capabilities a request of the stateless
/// revision has: `elicitation` when the host answers elicitations or the served call's client
/// takes them, `sampling` and `roots` when the served call's client takes them.
pub(crate) fn declared(
    mut params: JsonObject,
    options: &McpOptions,
    context: &CallContext,
) -> JsonObject {
    let relay = relay_of(options, context);
    let mut capabilities = Map::new();
    if options.elicitation.is_some() || relays(&relay, ELICITATION_CREATE) {
        capabilities.insert("elicitation".into(), json!({ "form": {} }));
    }
    if relays(&relay, SAMPLING_CREATE) {
        capabilities.insert("sampling".into(), json!({}));
    }
    if relays(&relay, ROOTS_LIST) {
        capabilities.insert("roots".into(), json!({}));
    }
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            Value::Object(capabilities),
        );
    }
    params
}

/// The answers to what `asked` asks, by its keys (`None` when it asked nothing: only the state
/// goes back), the requests answered at once.
///
/// # Errors
///
/// The reason the call fails: a request that is not one of the three kinds, one nobody can
/// answer, one the served call's client refused, or the served call ended before its client
/// answered.
pub(crate) async fn answered(
    asked: &Asked,
    options: &McpOptions,
    context: &CallContext,
) -> Result<Option<JsonObject>, Reason> {
    if asked.requests.is_empty() {
        return Ok(None);
    }
    let relay = relay_of(options, context);
    let answers = futures_util::future::join_all(
        asked
            .requests
            .iter()
            .map(|(key, request)| async { (key.clone(), answer(request, options, &relay).await) }),
    )
    .await;
    let mut responses = Map::new();
    for (key, answer) in answers {
        responses.insert(key, answer?);
    }
    Ok(Some(responses))
}

/// The answer to one input request.
async fn answer(request: &Value, options: &McpOptions, relay: &Relay) -> Result<Value, Reason> {
    let method = request.get("method").and_then(Value::as_str);
    let Some(method @ (ELICITATION_CREATE | SAMPLING_CREATE | ROOTS_LIST)) = method else {
        return Err(Reason::invalid_response(
            "an input_required result asks for something other than elicitation/create, sampling/createMessage or roots/list",
        ));
    };
    let params = request.get("params").cloned();
    if let Some(relay) = relay.as_ref().filter(|relay| relay.takes(method)) {
        return match relay.ask(method, params).await {
            Relayed::Answer(result) => Ok(result),
            Relayed::Refused(error) => {
                let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
                Err(Reason::call_failed(format!(
                    "The client refused the server's {method} ({code}), which the tool needs."
                )))
            }
            _ => Err(Reason::unavailable(
                "the call ended before its client answered what the server asked",
            )),
        };
    }
    if method != ELICITATION_CREATE {
        return Err(Reason::unsupported(format!(
            "the server asks the client for {method}, which this client does not give"
        )));
    }
    let Some(Value::Object(params)) = params else {
        return Err(Reason::invalid_response(
            "an input_required result asks elicitation/create without params",
        ));
    };
    let answer = match &options.elicitation {
        Some(callback) => callback.ask(ElicitationRequest::new(params)).await,
        // No one to ask: the spec's answer for a question the user does not take.
        None => ElicitationAnswer::Decline,
    };
    Ok(Value::Object(answer.to_result()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Elicitation;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_result_must_ask_something_and_not_too_much() {
        assert!(asked(&object(json!({"resultType": "input_required"}))).is_err());
        assert!(asked(&object(json!({"inputRequests": []}))).is_err());
        let many: Map<String, Value> = (0..=MAX_REQUESTS_PER_ROUND)
            .map(|n| (n.to_string(), json!({"method": ELICITATION_CREATE})))
            .collect();
        let error = asked(&object(json!({ "inputRequests": many }))).unwrap_err();
        assert!(format!("{error:?}").contains("more than 16"), "{error:?}");
        let state = asked(&object(json!({"requestState": "s"}))).unwrap();
        assert_eq!(state.request_state, Some(json!("s")));
        assert!(state.requests.is_empty());
    }

    #[tokio::test]
    async fn elicitations_go_to_the_host_or_are_declined_and_sampling_is_unsupported() {
        let asked = asked(&object(json!({
            "inputRequests": {"who": {"method": ELICITATION_CREATE, "params": {"message": "m",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}}}}}},
            "requestState": "s",
        })))
        .unwrap();
        let declined = answered(&asked, &McpOptions::default(), &CallContext::new())
            .await
            .unwrap();
        assert_eq!(
            Value::Object(declined.unwrap()),
            json!({"who": {"action": "decline"}})
        );
        let host =
            McpOptions::default().elicitation(Elicitation::new(
                |request: ElicitationRequest| async move {
                    ElicitationAnswer::Accept(request.defaults())
                },
            ));
        let accepted = answered(&asked, &host, &CallContext::new()).await.unwrap();
        assert_eq!(
            Value::Object(accepted.unwrap()),
            json!({"who": {"action": "accept", "content": {"name": "Ada"}}})
        );
        let sampling = super::asked(&object(
            json!({"inputRequests": {"m": {"method": SAMPLING_CREATE, "params": {}}}}),
        ))
        .unwrap();
        let refused = answered(&sampling, &host, &CallContext::new())
            .await
            .unwrap_err();
        assert!(matches!(refused, Reason::Unsupported { .. }), "{refused:?}");
        let other =
            super::asked(&object(json!({"inputRequests": {"p": {"method": "ping"}}}))).unwrap();
        assert!(matches!(
            answered(&other, &host, &CallContext::new()).await,
            Err(Reason::InvalidResponse { .. })
        ));
    }

    #[test]
    fn capabilities_are_declared_for_what_can_be_answered() {
        let none = declared(Map::new(), &McpOptions::default(), &CallContext::new());
        assert_eq!(
            none["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        let host = McpOptions::default()
            .elicitation(Elicitation::new(|_| async { ElicitationAnswer::Cancel }));
        let mut params = Map::new();
        params.insert("_meta".into(), json!({"progressToken": 1}));
        let params = declared(params, &host, &CallContext::new());
        assert_eq!(params["_meta"]["progressToken"], json!(1));
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"elicitation": {"form": {}}})
        );
    }
}
