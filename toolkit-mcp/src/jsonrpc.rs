//! JSON-RPC 2.0 messages as MCP uses them: what the client sends, and how a message from the
//! server is read.
//!
//! Written over `serde_json::Value` rather than typed structs: a server's message is judged field
//! by field (a response with an unexpected extra field is still a response), and nothing here may
//! panic or refuse a message for a detail that does not matter.

use serde_json::{Map, Value, json};

use toolkit_core::JsonObject;
use toolkit_core::progress::Routes;

/// `-32601`: the method does not exist.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// `-32602`: the params are not what the method takes (also MCP's "unknown tool").
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// `-32020`: the request's headers are missing or differ from its body (2026-07-28).
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// `-32021`: the server needs a client capability we did not declare (2026-07-28).
pub(crate) const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022`: the server does not speak the protocol version asked for (2026-07-28).
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error object a server answered with.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    /// Reads an `error` member; `None` when it is not a JSON-RPC error object.
    pub(crate) fn from_value(value: &Value) -> Option<Self> {
        let object = value.as_object()?;
        let code = object.get("code")?.as_i64()?;
        let message = object
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Some(Self {
            code,
            message,
            data: object.get("data").cloned(),
        })
    }
}

/// The answer to a request: its result object, or the error the server gave.
pub(crate) type Outcome = Result<JsonObject, RpcError>;

/// A request a server made of the client.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ServerRequest {
    /// Its id, as the server wrote it (a number or a string).
    pub id: Value,
    /// Its method.
    pub method: String,
    /// Its params, when it had any.
    pub params: Option<Value>,
}

/// One message read from a server.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A response to one of our requests.
    Response { id: Value, outcome: Outcome },
    /// A request the server makes of us (see `transport::requests` for how it is answered).
    Request(ServerRequest),
    /// A notification (progress, logs, list changes), by its method, with its params: progress
    /// is passed on when read to the host of the call whose token it names, among the calls of
    /// the connection that read it.
    Notification {
        method: String,
        params: Option<Value>,
    },
}

impl Incoming {
    /// Reads one message that the connection of `progress` read (its progress goes to its own
    /// calls only); `None` when the value is no JSON-RPC message.
    pub(crate) fn from_value(value: Value, progress: &Routes) -> Option<Self> {
        let Value::Object(mut object) = value else {
            return None;
        };
        let method = match object.get("method") {
            Some(Value::String(method)) => Some(method.clone()),
            Some(_) => return None,
            None => None,
        };
        let id = object.remove("id");
        match (method, id) {
            (Some(method), Some(id)) if !id.is_null() => Some(Self::Request(ServerRequest {
                id,
                method,
                params: object.remove("params"),
            })),
            (Some(method), _) => {
                // Progress goes to the host of the call whose token it names, among the calls
                // sent on the connection that read it: a server cannot report on another's.
                if method == "notifications/progress" {
                    progress.deliver(object.get("params"));
                }
                Some(Self::Notification {
                    method,
                    params: object.remove("params"),
                })
            }
            (None, Some(id)) => {
                if let Some(error) = object.get("error") {
                    let error = RpcError::from_value(error)?;
                    Some(Self::Response {
                        id,
                        outcome: Err(error),
                    })
                } else {
                    match object.remove("result") {
                        Some(Value::Object(result)) => Some(Self::Response {
                            id,
                            outcome: Ok(result),
                        }),
                        _ => None,
                    }
                }
            }
            (None, None) => None,
        }
    }

    /// Reads a message or (as 2025-03-26 allowed) a batch of them that the connection of
    /// `progress` read; anything unreadable is left out.
    pub(crate) fn from_json(value: Value, progress: &Routes) -> Vec<Self> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .filter_map(|item| Self::from_value(item, progress))
                .collect(),
            other => Self::from_value(other, progress).into_iter().collect(),
        }
    }
}

/// A request: `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`.
pub(crate) fn request(id: u64, method: &str, params: JsonObject) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// [`request`] written as one line of JSON, without building it as a [`Value`] first (a call's
/// request to a stdio server is written so).
pub(crate) fn request_line(id: u64, method: &str, params: &JsonObject) -> String {
    #[derive(serde::Serialize)]
    struct Request<'a> {
        jsonrpc: &'static str,
        id: u64,
        method: &'a str,
        params: &'a JsonObject,
    }
    line(&Request {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// `message` as one line of JSON, through `serde_json`'s writer rather than `Display`'s
/// formatter (about twice the instructions). JSON values and structs of them always write, every
/// key being a string: the empty string of a failure cannot occur.
pub(crate) fn line(message: &impl serde::Serialize) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

/// A notification: `{"jsonrpc":"2.0","method":method,"params":params}`.
pub(crate) fn notification(method: &str, params: JsonObject) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// `notifications/cancelled` for the request `id`.
pub(crate) fn cancelled(id: u64) -> Value {
    let mut params = Map::new();
    params.insert("requestId".into(), json!(id));
    params.insert(
        "reason".into(),
        json!("The client no longer waits for the answer."),
    );
    notification("notifications/cancelled", params)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn read(value: Value) -> Option<Incoming> {
        Incoming::from_value(value, &Routes::default())
    }

    #[test]
    fn reads_responses_requests_and_notifications() {
        let response = read(json!({"jsonrpc":"2.0","id":3,"result":{"a":1}}));
        assert!(matches!(
            response,
            Some(Incoming::Response { outcome: Ok(_), .. })
        ));
        let error = read(json!({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}));
        match error {
            Some(Incoming::Response {
                outcome: Err(e), ..
            }) => assert_eq!(e.code, -32601),
            other => panic!("{other:?}"),
        }
        let ping = read(json!({"jsonrpc":"2.0","id":"p","method":"ping"}));
        assert!(matches!(ping, Some(Incoming::Request(_))));
        let note = read(json!({"jsonrpc":"2.0","method":"notifications/progress"}));
        assert!(matches!(note, Some(Incoming::Notification { .. })));
    }

    #[test]
    fn garbage_is_no_message() {
        for value in [
            json!(1),
            json!({"id": 1}),
            json!({"id":1,"result":5}),
            json!({"method": 3}),
        ] {
            assert!(read(value).is_none());
        }
        assert_eq!(
            Incoming::from_json(json!([{"id":1,"result":{}}, 7]), &Routes::default()).len(),
            1
        );
    }
}
