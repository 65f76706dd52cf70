//! What a server asks of the client (a request on one of its streams) and how it is answered:
//! `ping` with `{}`, `elicitation/create` by the host's callback (or declined at once when the
//! host gave none), anything else refused with `-32601`.

use serde_json::{Value, json};

use crate::mcp::elicitation::{Elicitation, ElicitationAnswer, ElicitationRequest};
use crate::mcp::jsonrpc::{INVALID_PARAMS, METHOD_NOT_FOUND, ServerRequest};

/// The method of an elicitation.
pub(crate) const ELICITATION_CREATE: &str = "elicitation/create";

/// The answer to `request` (a whole JSON-RPC response), asking the host where it must.
pub(crate) async fn answer(request: ServerRequest, elicitation: Option<Elicitation>) -> Value {
    let ServerRequest { id, method, params } = request;
    let result = match method.as_str() {
        "ping" => json!({}),
        ELICITATION_CREATE => {
            let params = match params {
                Some(Value::Object(params)) => params,
                _ => {
                    return json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": { "code": INVALID_PARAMS, "message": "elicitation/create needs params" },
                    });
                }
            };
            let answer = match elicitation {
                Some(callback) => callback.ask(ElicitationRequest::new(params)).await,
                // No one to ask: the spec's answer for a question the user does not take.
                None => ElicitationAnswer::Decline,
            };
            Value::Object(answer.to_result())
        }
        _ => {
            tracing::debug!(method, "refused a request of the server");
            return json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": { "code": METHOD_NOT_FOUND, "message": "Method not found" },
            });
        }
    };
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn request(method: &str, params: Option<Value>) -> ServerRequest {
        ServerRequest {
            id: json!(7),
            method: method.to_owned(),
            params,
        }
    }

    #[tokio::test]
    async fn ping_is_answered_and_other_methods_refused() {
        assert_eq!(
            answer(request("ping", None), None).await,
            json!({"jsonrpc": "2.0", "id": 7, "result": {}})
        );
        let refused = answer(request("sampling/createMessage", Some(json!({}))), None).await;
        assert_eq!(refused["error"]["code"], json!(METHOD_NOT_FOUND));
    }

    #[tokio::test]
    async fn an_elicitation_goes_to_the_host_or_is_declined() {
        let params = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"}}}});
        let declined = answer(request(ELICITATION_CREATE, Some(params.clone())), None).await;
        assert_eq!(declined["result"], json!({"action": "decline"}));
        let host = Elicitation::new(|request: ElicitationRequest| async move {
            ElicitationAnswer::Accept(request.defaults())
        });
        let accepted = answer(request(ELICITATION_CREATE, Some(params)), Some(host)).await;
        assert_eq!(
            accepted["result"],
            json!({"action": "accept", "content": {"name": "Ada"}})
        );
        let bad = answer(request(ELICITATION_CREATE, None), None).await;
        assert_eq!(bad["error"]["code"], json!(INVALID_PARAMS));
    }
}
