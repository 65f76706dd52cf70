//! What an upstream server asks while a served call runs it, passed to the client of that call:
//! [`Relay`].
//!
//! A server that serves a toolkit (the gateway) puts an `Arc<dyn Relay>` in each call's
//! [`CallContext`](crate::CallContext) ([`CallContext::with_extension`](crate::CallContext::with_extension));
//! an MCP source whose options say so (`McpOptions::relay`) declares the capabilities to its
//! server and passes each such request to the relay, which asks the client that made the call
//! and gives back its answer as the client wrote it. The source knows nothing of the server.

use std::fmt;

use serde_json::Value;

use crate::BoxFuture;

/// The method of a sampling request.
pub const SAMPLING_CREATE: &str = "sampling/createMessage";
/// The method of an elicitation.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// The method that asks the client for its roots.
pub const ROOTS_LIST: &str = "roots/list";
/// The notification that what a URL elicitation sent the user to is done.
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// One served call's way to its client.
pub trait Relay: Send + Sync + fmt::Debug {
    /// Whether the call's client takes `method` (it declared the capability the method needs).
    fn takes(&self, method: &str) -> bool;

    /// Sends `method` with `params` to the call's client and waits for its answer, or for the
    /// call to end.
    fn ask<'a>(&'a self, method: &'a str, params: Option<Value>) -> BoxFuture<'a, Relayed>;

    /// Whether the call's client takes an elicitation in URL mode (it declared
    /// `elicitation.url`, MCP 2025-11-25). None by default.
    fn takes_url_elicitation(&self) -> bool {
        false
    }

    /// Sends the notification `method` with `params` to the call's client, if it is still there
    /// (`notifications/elicitation/complete` once what a URL elicitation sent the user to is
    /// done). Sends nothing by default.
    fn notify<'a>(&'a self, method: &'a str, params: Option<Value>) -> BoxFuture<'a, ()> {
        let _ = (method, params);
        Box::pin(async {})
    }
}

/// What became of a request relayed.
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub enum Relayed {
    /// The client's result, as it wrote it.
    Answer(Value),
    /// The client's JSON-RPC error, as it wrote it (`{code, message, data?}`).
    Refused(Value),
    /// The call ended (or the client went away) before the client answered.
    Stopped,
}
