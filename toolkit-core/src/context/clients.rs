//! The clients of a server's sessions, for what an upstream asks outside any served call:
//! [`Clients`].
//!
//! An upstream may ask its client for the roots (`roots/list`) when no call of it runs: once it
//! starts, and again after the client said its roots changed. A server that serves a toolkit
//! (the gateway) adds the client of each of its sessions while the session lasts
//! ([`Clients::join`]) and tells of a client's `notifications/roots/list_changed`
//! ([`Clients::roots_changed`]); an MCP source given the same [`Clients`]
//! (`McpOptions::clients`) asks what its server asks outside a call of the one client there is,
//! when it can be known to own the upstream connection — exactly one session's client is
//! joined, and no other person ([`Principal`]) used the server lately, in a session or
//! without one ([`Clients::seen`]) — and answers as for a client without the capability
//! otherwise: an upstream shared by two people asks neither for their roots. A server that
//! authenticates people makes its clients [`Clients::shared`]: there, no client answers outside a
//! call, since an upstream keeps what it was told (server-everything keeps the roots it was
//! given) past the moment a second person arrives.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Principal, Relay};

/// How long a person who used the server counts as one of its users: as long as an idle
/// session lives.
const LATELY: Duration = Duration::from_secs(300);

/// The most people remembered as users; more at once, and the server counts as shared until
/// they are forgotten.
const MAX_SEEN: usize = 1_024;

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
    joined: Mutex<Vec<Member>>,
    next: AtomicU64,
    listeners: Mutex<Vec<Listener>>,
    /// Who used the server lately, and when last.
    seen: Mutex<Seen>,
    /// Whether people share the server ([`Clients::shared`]): then no client is the only one.
    shared: bool,
}

/// A session's client: its key, its relay, its person.
type Member = (u64, Arc<dyn Relay>, Principal);

#[derive(Default)]
struct Seen {
    last: HashMap<Principal, Instant>,
    /// Until when the server counts as shared though the people are forgotten (too many).
    crowded_until: Option<Instant>,
}

impl Seen {
    /// Whether only `principal` used the server lately, if anyone did.
    fn only(&mut self, principal: &Principal, now: Instant) -> bool {
        if self.crowded_until.is_some_and(|until| now < until) {
            return false;
        }
        self.last
            .retain(|_, at| now.saturating_duration_since(*at) < LATELY);
        self.last.keys().all(|seen| seen == principal)
    }
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
            .retain(|(key, _, _)| *key != self.key);
    }
}

impl Clients {
    /// The clients of a server that people share (one that authenticates them): an upstream
    /// connection serves them all, so nothing it asks outside a served call is put to any one
    /// client ([`Clients::only`] is always `None`), however few use the server now — what it
    /// was told would stay with it for the next person. A client's roots changing is still told.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolkit_core::context::Clients;
    ///
    /// // A gateway whose people sign in: each session's client joins it as it starts
    /// // (`Clients::join`), and no upstream's question outside a call reaches any of them
    /// // (the unit test `a_shared_servers_one_client_is_never_the_only_one` joins one).
    /// let clients = Arc::new(Clients::shared());
    /// # drop(clients);
    /// ```
    pub fn shared() -> Self {
        Self {
            shared: true,
            ..Self::default()
        }
    }

    /// Adds the client that `relay` asks, of `principal`'s session, while the returned guard
    /// lives (its session).
    #[must_use = "the client leaves when the guard is dropped"]
    pub fn join(self: &Arc<Self>, relay: Arc<dyn Relay>, principal: Principal) -> Joined {
        self.seen(&principal);
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.joined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((key, relay, principal));
        Joined {
            clients: Arc::clone(self),
            key,
        }
    }

    /// `principal` used the server (a call, in a session or without one). When they are new
    /// beside a client that may have been asked for its roots, the listeners are told the roots
    /// changed, so that an upstream asks again — and, the server now shared, is answered as by
    /// a client without roots.
    pub fn seen(&self, principal: &Principal) {
        let now = Instant::now();
        let new = {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            let new = seen.last.insert(principal.clone(), now).is_none();
            if seen.last.len() > MAX_SEEN {
                seen.last.clear();
                seen.crowded_until = Some(now + LATELY);
            }
            new
        };
        let beside_another = new
            && self
                .joined
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(|(_, _, joined)| joined != principal);
        if beside_another {
            self.roots_changed();
        }
    }

    /// The one client there is, if it can be known to own an upstream connection: exactly one
    /// session's client is joined, no other person used the server lately, and the server is not
    /// [`Clients::shared`].
    pub fn only(&self) -> Option<Arc<dyn Relay>> {
        if self.shared {
            return None;
        }
        let (relay, principal) = match self
            .joined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_slice()
        {
            [(_, relay, principal)] => (Arc::clone(relay), principal.clone()),
            _ => return None,
        };
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .only(&principal, Instant::now())
            .then_some(relay)
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
        let first = clients.join(Arc::new(Named("first")), Principal::loopback());
        assert_eq!(name_of(&clients.only().unwrap()), r#"Named("first")"#);
        let second = clients.join(Arc::new(Named("second")), Principal::loopback());
        assert!(clients.only().is_none(), "two clients: whose would it be");
        drop(first);
        assert_eq!(name_of(&clients.only().unwrap()), r#"Named("second")"#);
        drop(second);
        assert!(clients.only().is_none());
    }

    #[test]
    fn a_shared_servers_one_client_is_never_the_only_one() {
        let shared = Arc::new(Clients::shared());
        let _alone = shared.join(Arc::new(Named("alice")), Principal::token("alice"));
        assert!(shared.only().is_none(), "an upstream would keep her answer");
        let private = Arc::new(Clients::default());
        let _alone = private.join(Arc::new(Named("alice")), Principal::token("alice"));
        assert!(private.only().is_some());
    }

    #[test]
    fn the_one_client_is_asked_only_while_no_one_else_used_the_server() {
        let clients = Arc::new(Clients::default());
        let told = Arc::new(AtomicU64::new(0));
        let heard = Arc::clone(&told);
        clients.on_roots_changed(move || {
            heard.fetch_add(1, Ordering::Relaxed);
        });
        let (alice, bob) = (Principal::token("alice"), Principal::token("bob"));
        let _session = clients.join(Arc::new(Named("alice's")), alice.clone());
        clients.seen(&alice);
        assert_eq!(name_of(&clients.only().unwrap()), r#"Named("alice's")"#);
        assert_eq!(told.load(Ordering::Relaxed), 0);
        // Bob calls without a session (a stateless client, or one that never said it was
        // ready): the upstream is shared now, and is told to ask again.
        clients.seen(&bob);
        assert!(
            clients.only().is_none(),
            "bob's upstream asks alice nothing"
        );
        assert_eq!(told.load(Ordering::Relaxed), 1);
        clients.seen(&bob);
        assert_eq!(
            told.load(Ordering::Relaxed),
            1,
            "told once, when bob is new"
        );
    }

    #[test]
    fn too_many_people_at_once_count_as_a_shared_server() {
        let clients = Arc::new(Clients::default());
        let alice = Principal::token("alice");
        let _session = clients.join(Arc::new(Named("alice's")), alice.clone());
        for n in 0..=MAX_SEEN {
            clients.seen(&Principal::token(&format!("p{n}")));
        }
        assert!(clients.seen.lock().unwrap().last.len() <= MAX_SEEN);
        clients.seen(&alice);
        assert!(clients.only().is_none());
    }

    #[test]
    fn sessions_that_come_and_go_at_once_leave_none_behind() {
        let clients = Arc::new(Clients::default());
        std::thread::scope(|scope| {
            for _ in 0..16 {
                scope.spawn(|| {
                    for _ in 0..200 {
                        let joined = clients.join(Arc::new(Named("racer")), Principal::loopback());
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
