//! Who opened each HTTP session, and how many sessions each may hold: [`SessionOwners`].
//!
//! A session id is bound, when its `initialize` is answered, to the [`Principal`] whose request
//! opened it (the host puts the principal in the request's extensions; without one, the
//! request is [`Principal::loopback`]'s). A request of another principal naming the session —
//! `POST`, `GET` or `DELETE` — is answered exactly as an unknown session is (404): a session id
//! is no credential, and another person's is worth nothing. Sessions are bounded in all and per
//! principal (a request that would open one more is answered 503 or 429 with `Retry-After`,
//! before any session is made; a session counts until it ends, even one whose opening request
//! was dropped before its answer), and a session its client never uses again — it neither says
//! `notifications/initialized` nor sends another request — is closed after a short time rather
//! than rmcp's idle timeout.
//!
//! Written here: rmcp's session manager is told nothing of the request that opens a session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;
use toolkit_core::context::Principal;

use crate::http::as_written::AsWritten;

/// How many sessions are served, and for how long one whose client never says it is ready.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLimits {
    /// The most sessions open at once, of every principal (4,096 by default). One more is
    /// answered `503 Service Unavailable` with `Retry-After`.
    pub max_sessions: usize,
    /// The most sessions one principal may hold open at once (256 by default). One more is
    /// answered `429 Too Many Requests` with `Retry-After`.
    pub max_sessions_per_principal: usize,
    /// How long a session may go without its client's `notifications/initialized`, or any
    /// other request in it, before it is closed (30 seconds by default): a session nobody uses
    /// costs memory until then only.
    pub uninitialized_timeout: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: 4_096,
            max_sessions_per_principal: 256,
            uninitialized_timeout: Duration::from_secs(30),
        }
    }
}

/// What `Retry-After` says of a request refused for the sessions it would open: seconds.
const RETRY_AFTER_SECONDS: &str = "30";

/// The owner of each open session, and how many each principal holds.
pub(crate) struct SessionOwners {
    limits: SessionLimits,
    state: Mutex<State>,
    /// Where a session that never initialized is closed.
    manager: Arc<LocalSessionManager>,
}

/// An open session's owner, and whether its client has used it since `initialize`.
struct Owner {
    principal: Principal,
    used: Option<Arc<AtomicBool>>,
}

#[derive(Default)]
struct State {
    /// Each open session's owner.
    owners: HashMap<Arc<str>, Owner>,
    /// Sessions open, or being opened, by principal.
    held: HashMap<Principal, usize>,
    /// Sessions open, or being opened, in all.
    total: usize,
}

impl State {
    fn release(&mut self, principal: &Principal) {
        self.total = self.total.saturating_sub(1);
        if let Some(count) = self.held.get_mut(principal) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.held.remove(principal);
            }
        }
    }
}

/// Why a request may not open a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Full {
    /// Every session the server takes is open.
    Server,
    /// The principal holds every session it may.
    Principal,
}

impl Full {
    /// The answer: `503` or `429`, with `Retry-After` and a JSON-RPC error that says what to do.
    pub(crate) fn response(self) -> Response {
        let (status, message) = match self {
            Self::Server => (
                StatusCode::SERVICE_UNAVAILABLE,
                "The server holds as many sessions as it takes: retry later.",
            ),
            Self::Principal => (
                StatusCode::TOO_MANY_REQUESTS,
                "This client holds as many sessions as one may: end one (DELETE) or retry later.",
            ),
        };
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32000, "message": message},
        });
        let mut response = Response::new(Body::from(body.to_string()));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECONDS));
        response
    }
}

/// Room for one session a request may open, counted against the limits until it is bound to the
/// session it opened, or until the session it opened ends when its answer never went out, or
/// dropped (the request opened none).
pub(crate) struct Opening {
    owners: Arc<SessionOwners>,
    principal: Principal,
    /// Whether the room is still held (not yet handed to a session).
    held: bool,
    /// The request's slot, where the handler leaves the end of the session it made.
    kept: Option<AsWritten>,
}

impl Opening {
    /// Watches the request's slot: if the request made a session and its answer is dropped
    /// before the session is bound, the room is held until the session ends.
    pub(crate) fn watch(&mut self, kept: &AsWritten) {
        self.kept = Some(kept.clone());
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let (owners, principal) = (Arc::clone(&self.owners), self.principal.clone());
        let ended = self
            .kept
            .as_ref()
            .and_then(|kept| kept.held().ended.clone());
        match (ended, tokio::runtime::Handle::try_current()) {
            // A session was made and nobody was told its id: it counts until it ends.
            (Some(ended), Ok(runtime)) => {
                runtime.spawn(async move {
                    ended.cancelled().await;
                    owners.state().release(&principal);
                });
            }
            _ => owners.state().release(&principal),
        }
    }
}

/// The answer to a request that names a session of another principal: the one rmcp gives for
/// an unknown session.
pub(crate) fn unknown_session() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

impl SessionOwners {
    /// No session yet, under `limits`; sessions that never initialize are closed in `manager`.
    pub(crate) fn new(limits: SessionLimits, manager: Arc<LocalSessionManager>) -> Arc<Self> {
        Arc::new(Self {
            limits,
            state: Mutex::default(),
            manager,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `principal` may name `session`: it is theirs (then it counts as used), or no
    /// open session has that id (rmcp answers that one itself).
    pub(crate) fn admits(&self, session: &str, principal: &Principal) -> bool {
        match self.state().owners.get(session) {
            None => true,
            Some(owner) if owner.principal == *principal => {
                if let Some(used) = &owner.used {
                    used.store(true, Ordering::Release);
                }
                true
            }
            Some(_) => false,
        }
    }

    /// Room for a session `principal` may open with the request at hand, or which limit is
    /// reached.
    pub(crate) fn open(self: &Arc<Self>, principal: &Principal) -> Result<Opening, Full> {
        let mut state = self.state();
        if state.total >= self.limits.max_sessions {
            return Err(Full::Server);
        }
        let held = state.held.entry(principal.clone()).or_insert(0);
        if *held >= self.limits.max_sessions_per_principal {
            return Err(Full::Principal);
        }
        *held += 1;
        state.total += 1;
        Ok(Opening {
            owners: Arc::clone(self),
            principal: principal.clone(),
            held: true,
            kept: None,
        })
    }

    /// `opening`'s request opened `session`: it is its principal's until `ended` is cancelled,
    /// and closed if `used` is not set within the limit's time (by the client's
    /// `notifications/initialized`, or by another request of its owner in it).
    pub(crate) fn opened(
        self: &Arc<Self>,
        mut opening: Opening,
        session: &str,
        ended: CancellationToken,
        used: Option<Arc<AtomicBool>>,
    ) {
        let session: Arc<str> = Arc::from(session);
        opening.held = false;
        let principal = opening.principal.clone();
        self.state().owners.insert(
            Arc::clone(&session),
            Owner {
                principal: principal.clone(),
                used: used.clone(),
            },
        );
        let owners = Arc::clone(self);
        let timeout = self.limits.uninitialized_timeout;
        tokio::spawn(async move {
            let closed = async {
                tokio::time::sleep(timeout).await;
                if used.is_some_and(|used| !used.load(Ordering::Acquire)) {
                    tracing::debug!("a session whose client never said it was ready is closed");
                    if let Err(error) = owners.manager.close_session(&session).await {
                        tracing::debug!(%error, "a session could not be closed");
                    }
                }
                std::future::pending::<()>().await;
            };
            tokio::select! {
                () = ended.cancelled() => {}
                () = closed => {}
            }
            let mut state = owners.state();
            state.owners.remove(&session);
            state.release(&principal);
        });
    }

    /// How many sessions are open or being opened, in all and of `principal`.
    #[cfg(test)]
    pub(crate) fn counts(&self, principal: &Principal) -> (usize, usize) {
        let state = self.state();
        (state.total, state.held.get(principal).copied().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn owners(max: usize, per_principal: usize) -> Arc<SessionOwners> {
        SessionOwners::new(
            SessionLimits {
                max_sessions: max,
                max_sessions_per_principal: per_principal,
                uninitialized_timeout: Duration::from_secs(30),
            },
            Arc::default(),
        )
    }

    #[tokio::test]
    async fn a_session_is_its_openers_and_no_one_elses() {
        let owners = owners(8, 8);
        let (alice, bob) = (Principal::token("alice"), Principal::token("bob"));
        let opening = owners.open(&alice).unwrap();
        let ended = CancellationToken::new();
        owners.opened(opening, "s1", ended.clone(), None);
        assert!(owners.admits("s1", &alice));
        assert!(!owners.admits("s1", &bob), "bob names alice's session");
        assert!(owners.admits("unknown", &bob), "rmcp answers an unknown id");
        ended.cancel();
        for _ in 0..100 {
            if owners.counts(&alice) == (0, 0) {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(
            owners.counts(&alice),
            (0, 0),
            "forgotten at the session's end"
        );
        assert!(owners.admits("s1", &bob));
    }

    #[tokio::test]
    async fn the_limits_hold_per_principal_and_in_all_and_a_request_that_opened_nothing_frees_its_room()
     {
        let owners = owners(3, 2);
        let (alice, bob) = (Principal::token("alice"), Principal::token("bob"));
        let first = owners.open(&alice).unwrap();
        let second = owners.open(&alice).unwrap();
        assert_eq!(owners.open(&alice).err(), Some(Full::Principal));
        let third = owners.open(&bob).unwrap();
        assert_eq!(owners.open(&bob).err(), Some(Full::Server));
        drop(second);
        assert_eq!(owners.counts(&alice), (2, 1));
        let again = owners.open(&bob).unwrap();
        assert_eq!(owners.counts(&bob), (3, 2));
        drop((first, third, again));
        assert_eq!(owners.counts(&bob), (0, 0));
        let refused = Full::Principal.response();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.headers()[RETRY_AFTER], "30");
        assert_eq!(
            Full::Server.response().status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[test]
    fn principals_opening_at_once_never_pass_their_limits() {
        let owners = owners(40, 8);
        let principals: Vec<Principal> =
            (0..8).map(|n| Principal::token(&format!("p{n}"))).collect();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let kept = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for (index, principal) in principals.iter().enumerate() {
                let (owners, kept, runtime) = (&owners, &kept, &runtime);
                scope.spawn(move || {
                    for round in 0..200 {
                        match owners.open(principal) {
                            Ok(opening) if round % 3 == 0 => drop(opening),
                            Ok(opening) => {
                                let _entered = runtime.enter();
                                owners.opened(
                                    opening,
                                    &format!("{index}-{round}"),
                                    CancellationToken::new(),
                                    None,
                                );
                                kept.lock().unwrap().push(principal.clone());
                            }
                            Err(_) => {}
                        }
                        let (total, held) = owners.counts(principal);
                        assert!(total <= 40 && held <= 8, "{total} {held}");
                    }
                });
            }
        });
        let kept = kept.into_inner().unwrap();
        assert_eq!(
            kept.len(),
            40,
            "the server's limit filled, and never passed"
        );
        for principal in &principals {
            let opened = kept.iter().filter(|kept| *kept == principal).count();
            assert!(opened <= 8, "{principal}: {opened}");
        }
    }
}
