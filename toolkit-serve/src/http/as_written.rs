//! [`AsWritten`]: what the calls of one HTTP request kept as their upstreams wrote it, and how it is
//! written into the messages of the request's answer (`http/written_http.rs`).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use axum::http::request::Parts;
use rmcp::RoleServer;
use rmcp::model::RequestId;
use rmcp::service::RequestContext;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tasks::sessions::{SessionDialect, lock};
use toolkit_core::JsonObject;

/// What the calls of one HTTP request kept as their upstreams wrote it, to be served in the
/// request's answer (an extension of the request, shared with the answer's body).
#[derive(Clone, Debug, Default)]
pub(crate) struct AsWritten(Arc<Mutex<Held>>);

/// The contents of [`AsWritten`].
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// Each call's result as written, by its JSON-RPC request id (as JSON).
    results: HashMap<String, JsonObject>,
    /// Each progress notification's params as written, by progress token (as JSON), in order.
    pub(crate) progress: HashMap<String, VecDeque<JsonObject>>,
    /// The end of the session an `initialize` started (`http/session_end.rs`).
    pub(crate) ended: Option<CancellationToken>,
    /// Set once the client of the session an `initialize` started says it is ready
    /// (`notifications/initialized`; `http/session_owners.rs`).
    pub(crate) initialized: Option<Arc<AtomicBool>>,
    /// The dialect of a session that speaks tasks, whose `initialize` answer is to gain them
    /// (`tasks/sessions.rs`).
    pub(crate) dialect: Option<SessionDialect>,
    /// Whether a kept result was written into an answer: the call's answer was sent.
    answered: bool,
    /// Whether the answer (an `initialize` or `server/discover` of a host serving events) gains
    /// the events extension's capability at the top level too, as the design sketch's clients
    /// read it (the AI SDK, ChatGPT): rmcp's capabilities have no field for it.
    pub(crate) sketch_events: bool,
}

/// A [`AsWritten`] that does not keep it alive (the call's handler holds it until it has answered):
/// how a resumed stream finds the slot of the call it continues ([`Replays`](crate::http::replays)).
#[derive(Clone, Debug)]
pub(crate) struct WeakAsWritten(Weak<Mutex<Held>>);

impl WeakAsWritten {
    /// The slot, while its call still runs.
    pub(crate) fn upgrade(&self) -> Option<AsWritten> {
        self.0.upgrade().map(AsWritten)
    }

    /// Whether its call has ended.
    pub(crate) fn is_gone(&self) -> bool {
        self.0.strong_count() == 0
    }
}

impl AsWritten {
    /// This slot, not kept alive by what holds it.
    pub(crate) fn downgrade(&self) -> WeakAsWritten {
        WeakAsWritten(Arc::downgrade(&self.0))
    }

    /// The slot of the HTTP request a call came in, when it came over HTTP through the answers layer.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<&Self> {
        context.extensions.get::<Parts>()?.extensions.get::<Self>()
    }

    /// Keeps `result`, written for the client, to answer the request `id` with.
    pub(crate) fn result(&self, id: &RequestId, result: JsonObject) {
        if let Ok(id) = serde_json::to_string(id) {
            self.held().results.insert(id, result);
        }
    }

    /// Keeps `params` of a progress notification as written, to be sent in place of the typed
    /// notification that says the same.
    pub(crate) fn progress(&self, params: JsonObject) {
        if let Some(token) = params.get("progressToken").map(Value::to_string) {
            self.held()
                .progress
                .entry(token)
                .or_default()
                .push_back(params);
        }
    }

    /// Keeps the end of the session the request's `initialize` started, and the flag its client's
    /// `notifications/initialized` sets.
    pub(crate) fn session_end(&self, ended: CancellationToken, initialized: Arc<AtomicBool>) {
        let mut held = self.held();
        held.ended = Some(ended);
        held.initialized = Some(initialized);
    }

    /// The contents, locked.
    pub(crate) fn held(&self) -> MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a result kept here was written into an answer (the call's answer was sent).
    pub(crate) fn answered(&self) -> bool {
        self.held().answered
    }

    /// Whether nothing is kept (then nothing is to be rewritten).
    pub(crate) fn is_empty(&self) -> bool {
        let held = self.held();
        held.results.is_empty()
            && !held.sketch_events
            && held.progress.values().all(VecDeque::is_empty)
            && held
                .dialect
                .as_ref()
                .is_none_or(|dialect| !lock(dialect).waits())
    }

    /// `message` (one JSON-RPC message) with what was kept for it written in, or `None` when
    /// nothing was kept for it (or it is not JSON): then it passes as it is.
    pub(crate) fn rewritten(&self, message: &[u8]) -> Option<Vec<u8>> {
        let mut message: Value = serde_json::from_slice(message).ok()?;
        let mut held = self.held();
        let initialized = held.dialect.as_ref().is_some_and(|dialect| {
            let mut dialect = lock(dialect);
            dialect.waits() && {
                dialect.outgoing(&mut message);
                !dialect.waits()
            }
        });
        let declared = held.sketch_events && declare_events(&mut message);
        if declared {
            held.sketch_events = false;
        }
        let written = write_in(&mut held, message.as_object_mut()?);
        drop(held);
        if !(initialized || written || declared) {
            return None;
        }
        serde_json::to_vec(&message).ok()
    }
}

/// Adds `events: {}` beside the events extension in the capabilities of `message`, an
/// `initialize` or `server/discover` answer: whether it did.
fn declare_events(message: &mut Value) -> bool {
    let Some(Value::Object(capabilities)) = message.pointer_mut("/result/capabilities") else {
        return false;
    };
    let extended = capabilities
        .get("extensions")
        .and_then(|extensions| extensions.get(crate::resources::EVENTS_EXTENSION))
        .is_some();
    if extended {
        capabilities.insert("events".into(), Value::Object(JsonObject::new()));
    }
    extended
}

/// Writes into `message` what `held` kept for it: whether it kept anything.
fn write_in(held: &mut Held, message: &mut JsonObject) -> bool {
    if message.contains_key("result") {
        let written = message
            .get("id")
            .and_then(|id| held.results.remove(&id.to_string()));
        let Some(written) = written else {
            return false;
        };
        message.insert("result".to_owned(), Value::Object(written));
        held.answered = true;
        return true;
    }
    if message.get("method").and_then(Value::as_str) != Some("notifications/progress") {
        return false;
    }
    let Some(sent) = message.get("params").and_then(Value::as_object) else {
        return false;
    };
    let Some(queue) = sent
        .get("progressToken")
        .and_then(|token| held.progress.get_mut(&token.to_string()))
    else {
        return false;
    };
    // The first kept that says what was sent; one before it never reached this answer.
    let Some(written) =
        std::iter::from_fn(|| queue.pop_front()).find(|kept| same_fields(kept, sent))
    else {
        return false;
    };
    message.insert("params".to_owned(), Value::Object(written));
    true
}

/// Whether `written` and `typed` say the same, numbers compared as `f64` (as rmcp's types hold
/// them).
fn same(written: &Value, typed: &Value) -> bool {
    match (written, typed) {
        (Value::Number(written), Value::Number(typed)) => written.as_f64() == typed.as_f64(),
        (Value::Object(written), Value::Object(typed)) => same_fields(written, typed),
        (Value::Array(written), Value::Array(typed)) => {
            written.len() == typed.len()
                && written
                    .iter()
                    .zip(typed)
                    .all(|(one, other)| same(one, other))
        }
        (written, typed) => written == typed,
    }
}

/// Whether the objects `written` and `typed` have the same fields saying the same ([`same`]).
fn same_fields(written: &JsonObject, typed: &JsonObject) -> bool {
    written.len() == typed.len()
        && written
            .iter()
            .all(|(key, value)| typed.get(key).is_some_and(|other| same(value, other)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An `initialize` or `server/discover` answer of a host serving events gains `events: {}`
    /// beside the extension, once; any other answer passes as it is.
    #[test]
    fn the_answer_that_declares_events_declares_them_at_the_top_level_too() {
        let kept = AsWritten::default();
        assert!(kept.is_empty());
        kept.held().sketch_events = true;
        assert!(!kept.is_empty());
        let other = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}).to_string();
        assert_eq!(kept.rewritten(other.as_bytes()), None);
        let discovered = json!({"jsonrpc": "2.0", "id": 2, "result": {"capabilities": {
            "extensions": {"io.modelcontextprotocol/events": {}}, "tools": {}}}});
        let written = kept.rewritten(discovered.to_string().as_bytes()).unwrap();
        let written: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(written["result"]["capabilities"]["events"], json!({}));
        assert!(kept.is_empty(), "written once");
    }
}
