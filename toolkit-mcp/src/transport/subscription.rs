//! Requests that stay open and carry notifications of their own (the events extension's
//! `events/stream`): every notification of such a stream names its request in
//! `params._meta["io.modelcontextprotocol/subscriptionId"]`, the convention the 2026-07-28
//! revision gives subscription streams.
//!
//! The request's context carries a [`Heard`]; the transport gives it each notification that
//! names the request, and nothing else: on stdio, where every stream shares the server's stdout,
//! through [`Streams`] (by the request's id); over HTTP, where the request's own response stream
//! carries them, as that stream is read (`body.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// The `_meta` key that names a notification's subscription request.
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// What is called with a notification's method and params.
type Hear = dyn Fn(&str, Option<&Value>) + Send + Sync;

/// Where the notifications of one long-lived request go: called with each one's method and
/// params, on the task that reads the server (so it must not block).
#[derive(Clone)]
pub(crate) struct Heard(Arc<Hear>);

impl Heard {
    pub(crate) fn new(heard: impl Fn(&str, Option<&Value>) + Send + Sync + 'static) -> Self {
        Self(Arc::new(heard))
    }

    /// Gives it the notification `method` with `params` when they name the request `id`.
    pub(crate) fn hear_if_named(&self, id: &Value, method: &str, params: Option<&Value>) {
        if named(params).is_some_and(|named| Some(named) == id.as_u64()) {
            (self.0)(method, params);
        }
    }
}

/// The request id a notification's params name, when they name one (a number, or a string of
/// one, as the request was sent with a number).
fn named(params: Option<&Value>) -> Option<u64> {
    match params?.get("_meta")?.get(SUBSCRIPTION_ID)? {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => text.parse().ok(),
        _ => None,
    }
}

/// The long-lived requests of one connection that wait for their notifications, by id.
#[derive(Default)]
pub(crate) struct Streams(Mutex<HashMap<u64, Heard>>);

impl Streams {
    /// Routes the notifications that name `id` to `heard` until the guard is dropped.
    pub(crate) fn open(self: &Arc<Self>, id: u64, heard: Heard) -> Open {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, heard);
        Open {
            streams: self.clone(),
            id,
        }
    }

    /// Gives the notification `method` with `params` to the request it names, if one waits.
    pub(crate) fn deliver(&self, method: &str, params: Option<&Value>) {
        let Some(id) = named(params) else { return };
        let heard = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned();
        if let Some(heard) = heard {
            (heard.0)(method, params);
        }
    }
}

/// A route of [`Streams`], removed when dropped (the request answered or given up).
pub(crate) struct Open {
    streams: Arc<Streams>,
    id: u64,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.streams
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_notifications_that_name_an_open_request_reach_it() {
        let streams = Arc::new(Streams::default());
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        let open = streams.open(
            7,
            Heard::new(move |_, _| {
                counted.fetch_add(1, Ordering::Relaxed);
            }),
        );
        let naming = |id: Value| json!({"_meta": {SUBSCRIPTION_ID: id}});
        streams.deliver("notifications/events/event", Some(&naming(json!(7))));
        streams.deliver("notifications/events/event", Some(&naming(json!("7"))));
        streams.deliver("notifications/events/event", Some(&naming(json!(8))));
        streams.deliver("notifications/events/event", Some(&json!({})));
        streams.deliver("notifications/events/event", None);
        assert_eq!(count.load(Ordering::Relaxed), 2);
        drop(open);
        streams.deliver("notifications/events/event", Some(&naming(json!(7))));
        assert_eq!(count.load(Ordering::Relaxed), 2);
    }
}
