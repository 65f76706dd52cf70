//! What a server asks of the client (a request on one of its streams) and how it is answered:
//! `ping` with `{}`; `sampling/createMessage`, `elicitation/create` and `roots/list` by the
//! client of the served call that the server runs (see [`McpOptions::relay`](crate::McpOptions::relay)),
//! when it declared the capability; else an elicitation by the host's callback (or declined at
//! once when the host gave none); anything else refused with `-32601`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};

use std::sync::Arc;

use crate::McpOptions;
use crate::elicitation::{Elicitation, ElicitationAnswer, ElicitationRequest};
use crate::jsonrpc::{INVALID_PARAMS, METHOD_NOT_FOUND, ServerRequest};
use toolkit_core::CallContext;
use toolkit_core::context::{Clients, ELICITATION_CREATE, ROOTS_LIST, Relayed};

/// The client of the served call a request came on, when the source relays to it.
pub(crate) type Relay = Option<Arc<dyn toolkit_core::context::Relay>>;

/// Whether `relay` takes `method` (its client declared the capability): the request then waits
/// for the client, and is answered from a task of its own.
pub(crate) fn relays(relay: &Relay, method: &str) -> bool {
    relay.as_ref().is_some_and(|relay| relay.takes(method))
}

/// The relay of the call of `context`, when the source relays (`options.relay`) and a server
/// serves the call.
pub(crate) fn relay_of(options: &McpOptions, context: &CallContext) -> Relay {
    if !options.relay {
        return None;
    }
    context.relay().cloned()
}

/// The relays of the served calls in flight on one transport, for what a server asks on a stream
/// of no call (a session's standalone stream, stdio, the old transport's stream): it goes to the
/// call's client when exactly one such call is in flight — whose else could it be — and is
/// answered as without a client when there are several (it cannot be told whose it is). With
/// no call in flight, it goes to the serving server's one client when that client can be known
/// to own the connection ([`Clients::only`], given by [`McpOptions::clients`]). A call's client
/// always comes first: a question asked during one person's call never reaches another.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    calls: Mutex<Vec<(u64, Relay)>>,
    next: AtomicU64,
    /// The serving server's clients, asked when no served call is in flight.
    clients: Option<Arc<Clients>>,
}

/// A call in flight, until dropped.
pub(crate) struct Entered<'a> {
    in_flight: &'a InFlight,
    key: u64,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.in_flight
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(key, _)| *key != self.key);
    }
}

impl InFlight {
    /// The calls in flight on a transport of a source with `options`.
    pub(crate) fn new(options: &McpOptions) -> Self {
        Self {
            clients: options.clients.clone().filter(|_| options.relay),
            ..Self::default()
        }
    }

    /// A call with `relay` is in flight while the guard lives (nothing when it has none).
    pub(crate) fn enter(&self, relay: Relay) -> Option<Entered<'_>> {
        relay.as_ref()?;
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((key, relay));
        Some(Entered {
            in_flight: self,
            key,
        })
    }

    /// The relay of the one served call in flight, if exactly one is; none if several are;
    /// with none in flight, the serving server's one client, if it owns the connection.
    pub(crate) fn only(&self) -> Relay {
        match self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_slice()
        {
            [(_, relay)] => {
                return match (relay, &self.clients) {
                    (Some(call), Some(clients)) => Some(Arc::new(CallFirst {
                        call: Arc::clone(call),
                        clients: Arc::clone(clients),
                    })),
                    _ => relay.clone(),
                };
            }
            [] => {}
            _ => return None,
        }
        self.clients.as_ref().and_then(|clients| clients.only())
    }
}

/// The client of the one call in flight, asked first; for the roots only, when that call ended
/// before its client answered, the server's one client, if it owns the connection (then it is
/// the same person's: asking for roots twice changes nothing).
#[derive(Debug)]
struct CallFirst {
    call: Arc<dyn toolkit_core::context::Relay>,
    clients: Arc<Clients>,
}

impl toolkit_core::context::Relay for CallFirst {
    fn takes(&self, method: &str) -> bool {
        self.call.takes(method)
    }

    fn ask<'a>(
        &'a self,
        method: &'a str,
        params: Option<Value>,
    ) -> toolkit_core::BoxFuture<'a, Relayed> {
        Box::pin(async move {
            let again = (method == ROOTS_LIST).then(|| params.clone());
            match (self.call.ask(method, params).await, again) {
                (Relayed::Stopped, Some(params)) => match self.clients.only() {
                    Some(client) if client.takes(method) => client.ask(method, params).await,
                    _ => Relayed::Stopped,
                },
                (relayed, _) => relayed,
            }
        })
    }
}

/// The answer to `request` (a whole JSON-RPC response), asking the served call's client or the
/// host where it must; `None` when it is left unanswered (the served call ended before its
/// client answered: the server's call is cancelled too).
pub(crate) async fn answer(
    request: ServerRequest,
    elicitation: Option<Elicitation>,
    relay: Relay,
) -> Option<Value> {
    if let Some(relay) = relay.filter(|relay| relay.takes(&request.method)) {
        let ServerRequest { id, method, params } = request;
        return match relay.ask(&method, params).await {
            Relayed::Answer(result) => {
                Some(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
            }
            Relayed::Refused(error) => Some(json!({ "jsonrpc": "2.0", "id": id, "error": error })),
            _ => None,
        };
    }
    let ServerRequest { id, method, params } = request;
    let result = match method.as_str() {
        "ping" => json!({}),
        ELICITATION_CREATE => {
            let params = match params {
                Some(Value::Object(params)) => params,
                _ => {
                    return Some(json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": { "code": INVALID_PARAMS, "message": "elicitation/create needs params" },
                    }));
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
            return Some(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": { "code": METHOD_NOT_FOUND, "message": "Method not found" },
            }));
        }
    };
    Some(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use toolkit_core::context::Principal;

    fn request(method: &str, params: Option<Value>) -> ServerRequest {
        ServerRequest {
            id: json!(7),
            method: method.to_owned(),
            params,
        }
    }

    #[derive(Debug)]
    struct Named(&'static str);

    impl toolkit_core::context::Relay for Named {
        fn takes(&self, _method: &str) -> bool {
            true
        }

        fn ask<'a>(
            &'a self,
            _method: &'a str,
            _params: Option<Value>,
        ) -> toolkit_core::BoxFuture<'a, Relayed> {
            // A call that ended before its client answered.
            if self.0 == "ended" {
                return Box::pin(async { Relayed::Stopped });
            }
            Box::pin(async { Relayed::Answer(json!(self.0)) })
        }
    }

    /// Who answers `relay`'s `roots/list`, as `Named("who")` (`Named("stopped")` for no one).
    fn named(relay: &Relay) -> Option<String> {
        use futures_util::FutureExt as _;
        relay
            .as_ref()
            .map(|relay| match relay.ask(ROOTS_LIST, None).now_or_never() {
                Some(Relayed::Answer(Value::String(name))) => format!("Named({name:?})"),
                _ => r#"Named("stopped")"#.to_owned(),
            })
    }

    #[test]
    fn asked_on_no_call_the_call_in_flight_comes_before_the_one_session_client() {
        let call: Relay = Some(Arc::new(Named("call")));
        let clients = Arc::new(Clients::default());
        let relaying = McpOptions::default()
            .relay(true)
            .clients(Arc::clone(&clients));

        let without = InFlight::new(&McpOptions::default().relay(true));
        assert_eq!(named(&without.only()), None);
        let _entered = without.enter(call.clone());
        assert_eq!(named(&without.only()).as_deref(), Some(r#"Named("call")"#));

        let in_flight = InFlight::new(&relaying);
        assert_eq!(named(&in_flight.only()), None, "no client, no call");
        let entered = in_flight.enter(call.clone());
        assert_eq!(
            named(&in_flight.only()).as_deref(),
            Some(r#"Named("call")"#)
        );
        let session = clients.join(Arc::new(Named("session")), Principal::loopback());
        assert_eq!(
            named(&in_flight.only()).as_deref(),
            Some(r#"Named("call")"#),
            "the call's own client, not the session's"
        );
        let second = in_flight.enter(call.clone());
        assert_eq!(named(&in_flight.only()), None, "two calls, whose is it");
        drop((entered, second));
        assert_eq!(
            named(&in_flight.only()).as_deref(),
            Some(r#"Named("session")"#)
        );
        let other = clients.join(Arc::new(Named("other")), Principal::loopback());
        assert_eq!(
            named(&in_flight.only()),
            None,
            "two clients, whose would it be"
        );
        drop((session, other));

        // The roots asked during a call that ends first: the one session's client, the same
        // person's, answers them.
        let session = clients.join(Arc::new(Named("session")), Principal::loopback());
        let ended = in_flight.enter(Some(Arc::new(Named("ended"))));
        assert_eq!(
            named(&in_flight.only()).as_deref(),
            Some(r#"Named("session")"#)
        );
        clients.seen(&Principal::token("bob"));
        assert_eq!(
            named(&in_flight.only()).as_deref(),
            Some(r#"Named("stopped")"#),
            "another person used the server: not asked"
        );
        drop((ended, session));

        // A source that does not relay asks no client of the server.
        let _joined = clients.join(Arc::new(Named("session")), Principal::loopback());
        let silent = InFlight::new(&McpOptions::default().clients(clients));
        assert_eq!(named(&silent.only()), None);
    }

    #[tokio::test]
    async fn ping_is_answered_and_other_methods_refused() {
        assert_eq!(
            answer(request("ping", None), None, None).await,
            Some(json!({"jsonrpc": "2.0", "id": 7, "result": {}}))
        );
        let refused = answer(
            request("sampling/createMessage", Some(json!({}))),
            None,
            None,
        )
        .await
        .unwrap();
        assert_eq!(refused["error"]["code"], json!(METHOD_NOT_FOUND));
    }

    #[tokio::test]
    async fn an_elicitation_goes_to_the_host_or_is_declined() {
        let params = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"}}}});
        let declined = answer(
            request(ELICITATION_CREATE, Some(params.clone())),
            None,
            None,
        )
        .await
        .unwrap();
        assert_eq!(declined["result"], json!({"action": "decline"}));
        let host = Elicitation::new(|request: ElicitationRequest| async move {
            ElicitationAnswer::Accept(request.defaults())
        });
        let accepted = answer(request(ELICITATION_CREATE, Some(params)), Some(host), None)
            .await
            .unwrap();
        assert_eq!(
            accepted["result"],
            json!({"action": "accept", "content": {"name": "Ada"}})
        );
        let bad = answer(request(ELICITATION_CREATE, None), None, None)
            .await
            .unwrap();
        assert_eq!(bad["error"]["code"], json!(INVALID_PARAMS));
    }
}
