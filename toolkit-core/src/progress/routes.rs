//! The calls of one connection waiting for progress, by token: [`Routes`] and [`Registration`].
//!
//! A call that asks its server for progress registers with the routes of the connection it is
//! sent on, and gets a token of 128 random bits to send as `_meta.progressToken`. What that
//! connection reads is delivered through the same routes, and only there: a server that forges
//! the token of a call sent on another connection (a call to another source, or another
//! person's) reaches no call, tells no host, and keeps no call alive past its timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use serde_json::Value;

use super::{MAX_MESSAGE_LENGTH, Progress, ProgressSink};
use crate::text::cut_utf16;

/// What is told of each report on a call's progress, whoever else is (an MCP source that lets
/// a call live on while its server reports).
#[doc(hidden)]
pub type Heard = Arc<dyn Fn() + Send + Sync>;

/// Where the progress of a call with a token goes: the host's callback (if it asked), the tool's
/// name, and what is told of each report.
struct Route {
    sink: Option<ProgressSink>,
    tool: String,
    heard: Option<Heard>,
}

type Map = HashMap<String, Route>;

/// The calls sent on one connection (one transport of one source) that wait for progress, by
/// token; progress read on that connection is delivered here, and nowhere else.
///
/// Clones share the routes.
#[derive(Clone, Default)]
#[doc(hidden)]
pub struct Routes(Arc<Mutex<Map>>);

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("calls", &self.len())
            .finish()
    }
}

impl Routes {
    /// A token for a call of the tool `tool` sent on this connection, when its host asked for
    /// progress (`sink`) or `heard` wants to be told of each report; `None` otherwise, or when
    /// the system has no randomness to give (then the call asks for no progress).
    pub fn register(
        &self,
        sink: Option<ProgressSink>,
        tool: &str,
        heard: Option<Heard>,
    ) -> Option<Registration> {
        if sink.is_none() && heard.is_none() {
            return None;
        }
        let token = random_token()?;
        let route = Route {
            sink,
            tool: tool.to_owned(),
            heard,
        };
        lock(&self.0).insert(token.clone(), route);
        Some(Registration {
            token,
            routes: Arc::downgrade(&self.0),
        })
    }

    /// Passes on the params of a `notifications/progress` read on this connection to the call
    /// whose token they name; a token of no call of this connection in flight, or params that
    /// are not progress, are let go.
    pub fn deliver(&self, params: Option<&Value>) {
        let Some(params) = params.and_then(Value::as_object) else {
            return;
        };
        let Some(token) = params.get("progressToken").and_then(Value::as_str) else {
            return;
        };
        // The callbacks run outside the lock: one may start another call.
        let Some((sink, tool, heard)) = lock(&self.0)
            .get(token)
            .map(|route| (route.sink.clone(), route.tool.clone(), route.heard.clone()))
        else {
            return;
        };
        // The numbers as written: a JSON number is finite, and an integer stays one.
        let number = |key: &str| match params.get(key) {
            Some(Value::Number(number)) => Some(number.clone()),
            _ => None,
        };
        let Some(progress) = number("progress") else {
            return;
        };
        if let Some(heard) = heard {
            heard();
        }
        if let Some(sink) = sink {
            sink(Progress::Reported {
                tool,
                progress,
                total: number("total"),
                message: params
                    .get("message")
                    .and_then(Value::as_str)
                    .map(|message| cut_utf16(message, MAX_MESSAGE_LENGTH)),
            });
        }
    }

    /// How many calls wait for progress on this connection.
    pub fn len(&self) -> usize {
        lock(&self.0).len()
    }

    /// Whether no call waits for progress on this connection.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A call's progress token, routed to its host while this lives.
#[derive(Debug)]
#[doc(hidden)]
pub struct Registration {
    token: String,
    routes: Weak<Mutex<Map>>,
}

impl Registration {
    /// The token to send as `_meta.progressToken`.
    pub fn token(&self) -> &str {
        &self.token
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(routes) = self.routes.upgrade() {
            lock(&routes).remove(&self.token);
        }
    }
}

fn lock(routes: &Mutex<Map>) -> MutexGuard<'_, Map> {
    routes.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `toolkit-` and 128 random bits in hex, fresh from the system for each call; `None` when the
/// system has none to give (the call then asks for no progress).
fn random_token() -> Option<String> {
    crate::random::hex_128().map(|hex| format!("toolkit-{hex}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashSet;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    /// Routes, and a sink that keeps what it is told.
    fn recorded() -> (ProgressSink, Arc<Mutex<Vec<Progress>>>) {
        let told: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let sink = Arc::clone(&told);
        (
            Arc::new(move |event| sink.lock().unwrap().push(event)),
            told,
        )
    }

    #[test]
    fn tokens_carry_128_random_bits_each() {
        let routes = Routes::default();
        let heard: Heard = Arc::new(|| {});
        let mut seen = HashSet::new();
        let mut halves = HashSet::new();
        for _ in 0..1_000 {
            let registration = routes
                .register(None, "tool", Some(Arc::clone(&heard)))
                .unwrap();
            let token = registration.token();
            let random = token.strip_prefix("toolkit-").unwrap();
            assert_eq!(random.len(), 32, "{token}");
            assert!(
                random.bytes().all(|byte| byte.is_ascii_hexdigit()),
                "{token}"
            );
            // No part is shared between calls (a key of the process, a count): each half of
            // the random bits differs from every other call's.
            assert!(halves.insert(random[..16].to_owned()), "{token}");
            assert!(halves.insert(random[16..].to_owned()), "{token}");
            assert!(seen.insert(token.to_owned()));
        }
    }

    #[test]
    fn progress_reaches_the_call_of_its_own_connection_only() {
        let (sink, told) = recorded();
        let mine = Routes::default();
        let other = Routes::default();
        let heard = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&heard);
        let registration = mine
            .register(
                Some(sink),
                "slow",
                Some(Arc::new(move || {
                    count.fetch_add(1, Ordering::Relaxed);
                })),
            )
            .unwrap();
        let params =
            json!({"progressToken": registration.token(), "progress": 1, "message": "1 of 2"});
        // Another connection read it (its server forged the token): no one is told.
        other.deliver(Some(&params));
        assert!(told.lock().unwrap().is_empty());
        assert_eq!(heard.load(Ordering::Relaxed), 0);
        // The call's own connection read it.
        mine.deliver(Some(&params));
        assert_eq!(heard.load(Ordering::Relaxed), 1);
        assert_eq!(
            *told.lock().unwrap(),
            [Progress::Reported {
                tool: "slow".to_owned(),
                progress: 1.into(),
                total: None,
                message: Some("1 of 2".to_owned()),
            }]
        );
        drop(registration);
        assert!(mine.is_empty());
        mine.deliver(Some(&params));
        assert_eq!(told.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_call_with_no_one_to_tell_asks_for_no_progress() {
        assert!(Routes::default().register(None, "t", None).is_none());
    }

    #[test]
    fn what_is_not_progress_is_let_go() {
        let (sink, told) = recorded();
        let routes = Routes::default();
        let registration = routes.register(Some(sink), "t", None).unwrap();
        let token = registration.token();
        for params in [
            json!(null),
            json!([token]),
            json!({"progressToken": token}),
            json!({"progressToken": token, "progress": "1"}),
            json!({"progressToken": 1, "progress": 1}),
        ] {
            routes.deliver(Some(&params));
        }
        routes.deliver(None);
        assert!(told.lock().unwrap().is_empty());
    }

    /// Eight threads register calls, deliver progress to their own calls and to the others'
    /// (on the connection they were sent on, and forged on another), and drop them, all at once:
    /// each report reaches the call it names, none comes through the other connection, and no
    /// route is left.
    #[test]
    fn routes_raced_by_many_threads_deliver_to_the_right_call_and_leak_nothing() {
        const THREADS: usize = 8;
        const CALLS: usize = 200;
        let routes = Routes::default();
        let forged = Routes::default();
        // The tokens of calls in flight, as another server could learn them.
        let live: Arc<Mutex<Vec<String>>> = Arc::default();
        let wrong = Arc::new(AtomicUsize::new(0));
        let delivered = Arc::new(AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let (routes, forged, live) = (&routes, &forged, &live);
                let (wrong, delivered) = (Arc::clone(&wrong), Arc::clone(&delivered));
                scope.spawn(move || {
                    for call in 0..CALLS {
                        let tool = format!("t{thread}-{call}");
                        let (wrong, delivered) = (Arc::clone(&wrong), Arc::clone(&delivered));
                        let mine = tool.clone();
                        let sink: ProgressSink = Arc::new(move |event| match event {
                            Progress::Reported { tool, .. } if tool == mine => {
                                delivered.fetch_add(1, Ordering::Relaxed);
                            }
                            _ => {
                                wrong.fetch_add(1, Ordering::Relaxed);
                            }
                        });
                        let registration = routes.register(Some(sink), &tool, None).unwrap();
                        let token = registration.token().to_owned();
                        live.lock().unwrap().push(token.clone());
                        let others: Vec<String> = live.lock().unwrap().clone();
                        for other in others.iter().rev().take(4) {
                            let params = json!({"progressToken": other, "progress": call});
                            forged.deliver(Some(&params));
                            routes.deliver(Some(&params));
                        }
                        routes.deliver(Some(&json!({"progressToken": token, "progress": 1})));
                        live.lock().unwrap().retain(|live| *live != token);
                        drop(registration);
                    }
                });
            }
        });
        assert_eq!(wrong.load(Ordering::Relaxed), 0);
        // Each call heard at least its own report.
        assert!(delivered.load(Ordering::Relaxed) >= THREADS * CALLS);
        assert!(routes.is_empty(), "{routes:?}");
        assert!(forged.is_empty());
    }

    #[test]
    fn a_registration_outliving_its_routes_lets_go_quietly() {
        let routes = Routes::default();
        let registration = routes.register(None, "t", Some(Arc::new(|| {}))).unwrap();
        drop(routes);
        drop(registration);
    }
}
