//! The clients of a server's sessions, for what an upstream asks outside any served call:
//! [`Clients`].
//!
//! An upstream may ask its client for the roots (`roots/list`) when no call of it runs: once it
//! starts, and again after the client said its roots changed. A server that serves a toolkit
//! (the gateway) adds the client of each of its sessions while the session lasts
//! ([`Clients::join`]) and tells of a client's `notifications/roots/list_changed`
//! ([`Clients::roots_changed`]); an MCP source given the same [`Clients`]
//! (`McpOptions::clients`) asks what its server asks outside a call of the one client there is,
//! when there is exactly one — whose else could it be — and answers as for a client without
//! the capability when there are several or none.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::Relay;

/// What is told when a client's roots changed.
type Listener = Arc<dyn Fn() + Send + Sync>;

/// The clients of a server's sessions.
///
/// ```
/// use std::sync::Arc;
/// use toolkit_core::context::Clients;
///
/// let clients = Arc::new(Clients::default());
/// let told = Arc::new(std::sync::atomic::AtomicBool::new(false));
/// let heard = Arc::clone(&told);
/// clients.on_roots_changed(move || heard.store(true, std::sync::atomic::Ordering::Relaxed));
/// clients.roots_changed();
/// assert!(told.load(std::sync::atomic::Ordering::Relaxed));
/// assert!(clients.only().is_none());
/// ```
#[derive(Default)]
pub struct Clients {
    joined: Mutex<Vec<(u64, Arc<dyn Relay>)>>,
    next: AtomicU64,
    listeners: Mutex<Vec<Listener>>,
}

impl fmt::Debug for Clients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joined = self.joined.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Clients")
            .field("joined", &joined.len())
            .finish_non_exhaustive()
    }
}

/// The same clients, not equal ones: two are equal when they are one.
impl PartialEq for Clients {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for Clients {}

/// A session's client among the [`Clients`], until dropped.
#[derive(Debug)]
pub struct Joined {
    clients: Arc<Clients>,
    key: u64,
}

impl Drop for Joined {
    fn drop(&mut self) {
        self.clients
            .joined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(key, _)| *key != self.key);
    }
}

impl Clients {
    /// Adds the client that `relay` asks, while the returned guard lives (its session).
    #[must_use = "the client leaves when the guard is dropped"]
    pub fn join(self: &Arc<Self>, relay: Arc<dyn Relay>) -> Joined {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.joined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((key, relay));
        Joined {
            clients: Arc::clone(self),
            key,
        }
    }

    /// The one client there is, if exactly one session's is joined.
    pub fn only(&self) -> Option<Arc<dyn Relay>> {
        match self
            .joined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_slice()
        {
            [(_, relay)] => Some(Arc::clone(relay)),
            _ => None,
        }
    }

    /// Calls `listener` each time a client says its roots changed ([`Clients::roots_changed`]).
    pub fn on_roots_changed(&self, listener: impl Fn() + Send + Sync + 'static) {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::new(listener));
    }

    /// A client said its roots changed (`notifications/roots/list_changed`): every listener is
    /// told.
    pub fn roots_changed(&self) {
        // Told unlocked: a listener may add another.
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for listener in &listeners {
            listener();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::BoxFuture;
    use crate::context::Relayed;
    use serde_json::Value;

    #[derive(Debug)]
    struct Named(&'static str);

    impl Relay for Named {
        fn takes(&self, _method: &str) -> bool {
            true
        }

        fn ask<'a>(&'a self, _method: &'a str, _params: Option<Value>) -> BoxFuture<'a, Relayed> {
            Box::pin(async { Relayed::Answer(Value::from(self.0)) })
        }
    }

    fn name_of(relay: &Arc<dyn Relay>) -> String {
        format!("{relay:?}")
    }

    #[test]
    fn the_only_client_is_the_one_joined_while_it_is_alone() {
        let clients = Arc::new(Clients::default());
        assert!(clients.only().is_none());
        let first = clients.join(Arc::new(Named("first")));
        assert_eq!(name_of(&clients.only().unwrap()), r#"Named("first")"#);
        let second = clients.join(Arc::new(Named("second")));
        assert!(clients.only().is_none(), "two clients: whose would it be");
        drop(first);
        assert_eq!(name_of(&clients.only().unwrap()), r#"Named("second")"#);
        drop(second);
        assert!(clients.only().is_none());
    }

    #[test]
    fn sessions_that_come_and_go_at_once_leave_none_behind() {
        let clients = Arc::new(Clients::default());
        std::thread::scope(|scope| {
            for _ in 0..16 {
                scope.spawn(|| {
                    for _ in 0..200 {
                        let joined = clients.join(Arc::new(Named("racer")));
                        let _ = clients.only();
                        drop(joined);
                    }
                });
            }
        });
        assert!(clients.only().is_none());
        assert_eq!(clients.joined.lock().unwrap().len(), 0);
    }
}
