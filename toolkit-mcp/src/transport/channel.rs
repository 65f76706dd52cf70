//! Requests waiting for their answers on a channel that carries many (a process's stdout, the
//! event stream of the old HTTP+SSE transport): each waits by its id, and a channel that ends
//! fails them all.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::oneshot;

use super::Fault;
use crate::jsonrpc::Outcome;
use toolkit_core::Reason;

/// What a waiting request is given.
pub(crate) type Answer = Result<Outcome, Fault>;

/// The requests waiting on one channel.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    waiting: Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>,
}

impl Pending {
    /// An open channel with nothing waiting.
    pub(crate) fn new() -> Self {
        Self {
            waiting: Mutex::new(Some(HashMap::new())),
        }
    }

    /// Waits for the answer to `id`; fails at once when the channel has ended.
    pub(crate) fn wait_for(&self, id: u64) -> Result<oneshot::Receiver<Answer>, Fault> {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(waiting) = waiting.as_mut() else {
            return Err(Reason::unavailable("the connection to the server has ended").into());
        };
        let (sender, receiver) = oneshot::channel();
        waiting.insert(id, sender);
        Ok(receiver)
    }

    /// Gives `answer` to the request `id`, if one waits for it.
    pub(crate) fn answer(&self, id: &Value, answer: Answer) {
        let Some(id) = id.as_u64() else { return };
        let sender = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
            .and_then(|waiting| waiting.remove(&id));
        if let Some(sender) = sender {
            let _ = sender.send(answer);
        }
    }

    /// Stops waiting for `id` (its caller went away).
    pub(crate) fn forget(&self, id: u64) {
        if let Some(waiting) = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            waiting.remove(&id);
        }
    }

    /// Fails every waiting request with `fault`, and keeps the channel open.
    pub(crate) fn fail_all(&self, fault: &Fault) {
        let senders: Vec<_> = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
            .map(|waiting| waiting.drain().map(|(_, sender)| sender).collect())
            .unwrap_or_default();
        for sender in senders {
            let _ = sender.send(Err(fault.clone()));
        }
    }

    /// Ends the channel: every waiting request fails, and so does every later one.
    pub(crate) fn close(&self, why: &str) {
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        for (_, sender) in waiting.into_iter().flatten() {
            let _ = sender.send(Err(Reason::unavailable(why.to_owned()).into()));
        }
    }

    /// Whether the channel has ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }
}

/// Waits for `receiver`; a sender dropped without an answer is a channel that ended.
pub(crate) async fn received(receiver: oneshot::Receiver<Answer>) -> Answer {
    receiver.await.unwrap_or_else(|_| {
        Err(Reason::unavailable("the connection to the server has ended").into())
    })
}

/// Stops waiting for a request whose future is dropped, and runs `on_cancel` for it.
pub(crate) struct Waiting<'a, F: FnMut(u64)> {
    pub pending: &'a Pending,
    pub id: u64,
    pub done: bool,
    pub on_cancel: F,
}

impl<F: FnMut(u64)> Drop for Waiting<'_, F> {
    fn drop(&mut self) {
        if !self.done {
            self.pending.forget(self.id);
            (self.on_cancel)(self.id);
        }
    }
}
