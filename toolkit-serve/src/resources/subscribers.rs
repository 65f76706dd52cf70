//! Who is subscribed to each resource, across the sessions of one server: [`Subscribers`]. The
//! host is asked to subscribe to a URI (`resources/subscribe` upstream, for the gateway) when
//! the first session subscribes to it, and to unsubscribe only when the last one leaves (it
//! unsubscribes, or its session ends), so that one session's unsubscribe never silences
//! another's updates.
//!
//! The requests of one URI are served one at a time (a lock per URI, held while the host is
//! asked), so that sessions subscribing and unsubscribing at once leave the host subscribed
//! exactly when some session is; requests of different URIs do not wait for each other.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::resources::{Refusal, Resources};

/// One URI's subscribed sessions, by their ids.
type Sessions = Arc<tokio::sync::Mutex<HashSet<u64>>>;

/// The sessions subscribed to each URI, of one server (shared by its sessions' handlers).
#[derive(Debug, Default)]
pub(crate) struct Subscribers {
    uris: Mutex<HashMap<String, Sessions>>,
    next: AtomicU64,
}

impl Subscribers {
    /// A new session's id, distinct from every other of this server.
    pub(crate) fn session(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// `session` subscribes to `uri`: the host is asked first when no session was subscribed
    /// (its refusal is the session's, and the session is then not subscribed). `Ok(false)` when
    /// the session was subscribed already.
    pub(crate) async fn subscribe(
        &self,
        session: u64,
        uri: &str,
        host: &dyn Resources,
    ) -> Result<bool, Refusal> {
        let entry = self.entry(uri);
        let done = {
            let mut sessions = entry.lock().await;
            if sessions.contains(&session) {
                Ok(false)
            } else if sessions.is_empty() {
                host.subscribe(uri).await.map(|()| sessions.insert(session))
            } else {
                Ok(sessions.insert(session))
            }
        };
        self.tidy(uri, entry);
        done
    }

    /// `session` unsubscribes from `uri`: the host is asked to unsubscribe when it was the last
    /// session subscribed (a refusal of the host's is logged: the session is unsubscribed all the
    /// same). `false` when the session was not subscribed.
    pub(crate) async fn unsubscribe(&self, session: u64, uri: &str, host: &dyn Resources) -> bool {
        let Some(entry) = self.existing(uri) else {
            return false;
        };
        let left = {
            let mut sessions = entry.lock().await;
            let left = sessions.remove(&session);
            if left
                && sessions.is_empty()
                && let Err(refusal) = host.unsubscribe(uri).await
            {
                tracing::debug!(
                    ?refusal,
                    "the host refused to unsubscribe from a resource no session is subscribed to"
                );
            }
            left
        };
        self.tidy(uri, entry);
        left
    }

    /// `session` ended: unsubscribed from every URI it was subscribed to.
    pub(crate) async fn end(&self, session: u64, host: &dyn Resources) {
        let uris: Vec<String> = self.map().keys().cloned().collect();
        for uri in uris {
            self.unsubscribe(session, &uri, host).await;
        }
    }

    /// Whether `session` is surely subscribed to nothing (no URI is subscribed to, or none of
    /// them by it, as far as can be seen without waiting).
    pub(crate) fn holds_none(&self, session: u64) -> bool {
        self.map().values().all(|entry| {
            entry
                .try_lock()
                .is_ok_and(|sessions| !sessions.contains(&session))
        })
    }

    /// How many sessions are subscribed to `uri`.
    #[cfg(test)]
    pub(crate) async fn count(&self, uri: &str) -> usize {
        match self.existing(uri) {
            Some(entry) => entry.lock().await.len(),
            None => 0,
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Sessions>> {
        self.uris.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn entry(&self, uri: &str) -> Sessions {
        Arc::clone(self.map().entry(uri.to_owned()).or_default())
    }

    fn existing(&self, uri: &str) -> Option<Sessions> {
        self.map().get(uri).cloned()
    }

    /// Forgets `uri` when no session is subscribed to it and no request of it is under way (the
    /// map's lock held: a request takes its entry under it, so none can take this one meanwhile).
    fn tidy(&self, uri: &str, entry: Sessions) {
        let mut map = self.map();
        let unused = Arc::strong_count(&entry) == 2
            && entry.try_lock().is_ok_and(|sessions| sessions.is_empty());
        drop(entry);
        if unused {
            map.remove(uri);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::atomic::AtomicI64;

    use serde_json::Value;
    use toolkit_core::{BoxFuture, JsonObject};

    use super::*;
    use crate::resources::Offer;

    /// A host that counts how many times it is subscribed to each URI (never below 0, never
    /// above 1 when the calls are right), taking a little time to answer.
    #[derive(Debug, Default)]
    struct Counting {
        subscribed: Mutex<HashMap<String, i64>>,
        calls: AtomicI64,
    }

    impl Counting {
        fn state(&self, uri: &str) -> i64 {
            self.subscribed
                .lock()
                .unwrap()
                .get(uri)
                .copied()
                .unwrap_or(0)
        }

        fn change(&self, uri: &str, by: i64) {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let mut subscribed = self.subscribed.lock().unwrap();
            let state = subscribed.entry(uri.to_owned()).or_default();
            *state += by;
            assert!((0..=1).contains(state), "subscribed {state} times to {uri}");
        }
    }

    impl Resources for Counting {
        fn offer(&self) -> Offer {
            Offer::none().with_resources(true)
        }
        fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
            Box::pin(async { Ok(Vec::new()) })
        }
        fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
            Box::pin(async { Ok(Vec::new()) })
        }
        fn read_resource<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
            Box::pin(async { Err(Refusal::NotFound("none".into())) })
        }
        fn subscribe<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
            Box::pin(async move {
                if uri == "demo://refused" {
                    return Err(Refusal::NotFound("refused".into()));
                }
                tokio::task::yield_now().await;
                self.change(uri, 1);
                Ok(())
            })
        }
        fn unsubscribe<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
            Box::pin(async move {
                tokio::task::yield_now().await;
                self.change(uri, -1);
                Ok(())
            })
        }
        fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Value>, Refusal>> {
            Box::pin(async { Ok(Vec::new()) })
        }
        fn get_prompt<'a>(
            &'a self,
            _: &'a str,
            _: JsonObject,
        ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
            Box::pin(async { Err(Refusal::NotFound("none".into())) })
        }
        fn complete(&self, _: JsonObject) -> BoxFuture<'_, Result<JsonObject, Refusal>> {
            Box::pin(async { Err(Refusal::Unsupported("none".into())) })
        }
    }

    const URI: &str = "demo://one";

    #[tokio::test]
    async fn the_host_is_unsubscribed_only_when_the_last_session_leaves() {
        let host = Counting::default();
        let subscribers = Subscribers::default();
        let (a, b) = (subscribers.session(), subscribers.session());
        assert!(subscribers.subscribe(a, URI, &host).await.unwrap());
        assert!(subscribers.subscribe(b, URI, &host).await.unwrap());
        // Twice from one session: held once.
        assert!(!subscribers.subscribe(b, URI, &host).await.unwrap());
        assert_eq!(host.state(URI), 1);
        assert_eq!(host.calls.load(Ordering::Relaxed), 1);
        assert!(subscribers.unsubscribe(a, URI, &host).await);
        assert_eq!(host.state(URI), 1, "b still listens");
        assert!(!subscribers.unsubscribe(a, URI, &host).await);
        assert!(subscribers.unsubscribe(b, URI, &host).await);
        assert_eq!(host.state(URI), 0);
        assert!(subscribers.map().is_empty(), "the URI is forgotten");
        // A refusal of the host's is the session's, which is then not subscribed.
        assert!(
            subscribers
                .subscribe(a, "demo://refused", &host)
                .await
                .is_err()
        );
        assert_eq!(subscribers.count("demo://refused").await, 0);
        assert!(subscribers.map().is_empty());
        // A session that ends leaves every URI it held; the others keep theirs.
        subscribers.subscribe(a, URI, &host).await.unwrap();
        subscribers.subscribe(a, "demo://two", &host).await.unwrap();
        subscribers.subscribe(b, "demo://two", &host).await.unwrap();
        assert!(!subscribers.holds_none(a));
        subscribers.end(a, &host).await;
        assert!(subscribers.holds_none(a));
        assert_eq!((host.state(URI), host.state("demo://two")), (0, 1));
        subscribers.end(b, &host).await;
        assert_eq!(host.state("demo://two"), 0);
        assert!(subscribers.map().is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn many_sessions_at_once_leave_the_host_subscribed_exactly_when_one_is() {
        let host = Arc::new(Counting::default());
        let subscribers = Arc::new(Subscribers::default());
        for round in 0..20 {
            // Sessions 0..32 subscribe and unsubscribe at once, each a few times; the even ones
            // stay subscribed in odd rounds.
            let tasks: Vec<_> = (0..32_u64)
                .map(|session| {
                    let (host, subscribers) = (Arc::clone(&host), Arc::clone(&subscribers));
                    tokio::spawn(async move {
                        for _ in 0..3 {
                            subscribers
                                .subscribe(session, URI, host.as_ref())
                                .await
                                .unwrap();
                            tokio::task::yield_now().await;
                            subscribers.unsubscribe(session, URI, host.as_ref()).await;
                        }
                        if round % 2 == 1 && session % 2 == 0 {
                            subscribers
                                .subscribe(session, URI, host.as_ref())
                                .await
                                .unwrap();
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            let staying = if round % 2 == 1 { 16 } else { 0 };
            assert_eq!(subscribers.count(URI).await, staying, "round {round}");
            assert_eq!(host.state(URI), i64::from(staying > 0), "round {round}");
            for session in 0..32 {
                subscribers.unsubscribe(session, URI, host.as_ref()).await;
            }
            assert_eq!(host.state(URI), 0, "round {round}");
        }
        assert!(subscribers.map().is_empty());
    }
}
