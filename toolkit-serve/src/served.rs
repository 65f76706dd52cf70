//! The toolkit a server serves now, and the handle that replaces it: [`ServedToolkit`].
//!
//! A server holds one [`ServedToolkit`]; every request reads the toolkit current when it arrives,
//! so a replacement takes effect for every later request, on every connection. Each replacement
//! is also announced: session clients hear `notifications/tools/list_changed`, and clients of the
//! stateless revision that listen (`subscriptions/listen` with `toolsListChanged`) hear it on
//! their subscription.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::Peer;
use tokio::sync::watch;

use super::views::{BuiltViews, Served, Views};
use toolkit_core::Toolkit;
use toolkit_core::context::Principal;

/// A cheap, cloneable handle on the toolkit a server serves.
///
/// ```
/// use toolkit_core::Toolkit;
/// use toolkit_serve::McpServer;
///
/// let server = McpServer::new(Toolkit::default());
/// let handle = server.toolkit_handle();
/// assert_eq!(handle.current().len(), 0);
/// // Every later request sees the new toolkit; connected clients hear `tools/list_changed`.
/// handle.replace(Toolkit::default());
/// ```
#[derive(Clone)]
pub struct ServedToolkit {
    inner: Arc<Shared>,
}

struct Shared {
    current: watch::Sender<Arc<Served>>,
    /// How long a `tools/list` answer stays fresh, in milliseconds (`u64::MAX`: not said).
    ttl_ms: AtomicU64,
    /// Whether a `tools/list` answer says `cacheScope: private` whoever is served.
    private: AtomicBool,
    /// The session clients that finished `initialize`, told of each replacement.
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

impl ServedToolkit {
    pub(crate) fn new(toolkit: Toolkit) -> Self {
        let (current, _) = watch::channel(Arc::new(Served::new(toolkit)));
        Self {
            inner: Arc::new(Shared {
                current,
                ttl_ms: AtomicU64::new(u64::MAX),
                private: AtomicBool::new(false),
                peers: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Says on each list the server answers (`tools/list`, and the resources, templates and
    /// prompts it serves beside) how long it stays fresh: `ttlMs` (the 2026-07-28 revision's
    /// caching hints, SEP-2549), with `cacheScope` `public`, or `private` while each person is
    /// served the toolkit of their view ([`ServedToolkit::replace_views`]), so that no cache
    /// shares one person's list with another. Without it, the lists say nothing (rmcp then
    /// answers a 2026-07-28 client `ttlMs: 0`, `private`: not to be cached).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolkit_core::Toolkit;
    /// use toolkit_serve::McpServer;
    ///
    /// let server = McpServer::new(Toolkit::default());
    /// server.toolkit_handle().cache_for(Duration::from_secs(60));
    /// ```
    pub fn cache_for(&self, ttl: Duration) {
        self.hint(ttl, false);
    }

    /// As [`ServedToolkit::cache_for`], with `cacheScope: private` whoever is served: for a list
    /// built from results their own servers said were private.
    pub fn cache_privately_for(&self, ttl: Duration) {
        self.hint(ttl, true);
    }

    fn hint(&self, ttl: Duration, private: bool) {
        let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX - 1);
        self.inner.private.store(private, Ordering::Relaxed);
        self.inner
            .ttl_ms
            .store(millis.min(u64::MAX - 1), Ordering::Relaxed);
    }

    /// The `ttlMs` of a `tools/list` answer, when one was said ([`ServedToolkit::cache_for`]).
    pub(crate) fn ttl_ms(&self) -> Option<u64> {
        Some(self.inner.ttl_ms.load(Ordering::Relaxed)).filter(|ttl| *ttl != u64::MAX)
    }

    /// Whether a `tools/list` answer is private: each person is served the toolkit of their
    /// view, or the host said so.
    pub(crate) fn is_personal(&self) -> bool {
        self.inner.private.load(Ordering::Relaxed) || self.served().views.is_some()
    }

    /// The toolkit served now.
    pub fn current(&self) -> Toolkit {
        self.served().toolkit.clone()
    }

    /// Serves `toolkit` from now on, to every connection, and tells connected clients that the
    /// list of tools changed (where their revision lets the server tell them).
    ///
    /// A request already running finishes with the toolkit it started with. Notifying needs a
    /// Tokio runtime; called outside one, the replacement still takes effect silently.
    pub fn replace(&self, toolkit: Toolkit) {
        self.publish(Served::new(toolkit));
    }

    /// Serves each person the toolkit of their view from now on ([`Views`]), to every
    /// connection, and tells connected clients that the list of tools changed, as
    /// [`ServedToolkit::replace`] does. [`ServedToolkit::current`] is then the toolkit of a
    /// server's one person without authentication ([`Principal::loopback`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolkit_core::{Toolkit, context::Principal};
    /// use toolkit_serve::{McpServer, Views};
    ///
    /// struct NobodySees;
    /// impl Views for NobodySees {
    ///     fn key(&self, _: &Principal) -> String { String::new() }
    ///     fn toolkit(&self, _: &str) -> Toolkit { Toolkit::default() }
    /// }
    ///
    /// let server = McpServer::new(Toolkit::default());
    /// server.toolkit_handle().replace_views(Arc::new(NobodySees));
    /// ```
    pub fn replace_views(&self, views: Arc<dyn Views>) {
        let views = BuiltViews::new(views);
        let mut served = Served::new(views.toolkit(&Principal::loopback()));
        served.views = Some(views);
        self.publish(served);
    }

    fn publish(&self, served: Served) {
        self.inner.current.send_replace(Arc::new(served));
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self
                .inner
                .peers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            peers.retain(|peer| !peer.is_transport_closed());
            peers.clone()
        };
        if peers.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::debug!("the toolkit was replaced outside a Tokio runtime: no client is told");
            return;
        };
        runtime.spawn(async move {
            for peer in peers {
                if let Err(error) = peer.notify_tool_list_changed().await {
                    tracing::debug!(%error, "a client could not be told that the tools changed");
                }
            }
        });
    }

    /// The toolkit served now, with its MCP listing.
    pub(crate) fn served(&self) -> Arc<Served> {
        Arc::clone(&self.inner.current.borrow())
    }

    /// The toolkit served now to `principal`: the toolkit of their view, when what people are
    /// shown depends on who they are.
    pub(crate) fn served_to(&self, principal: &Principal) -> Arc<Served> {
        let served = self.served();
        match &served.views {
            Some(views) => views.of(principal),
            None => served,
        }
    }

    /// A receiver that wakes at each replacement.
    pub(crate) fn changes(&self) -> watch::Receiver<Arc<Served>> {
        self.inner.current.subscribe()
    }

    /// Remembers a session client, to tell it of replacements.
    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>) {
        let mut peers = self
            .inner
            .peers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        peers.retain(|peer| !peer.is_transport_closed());
        peers.push(peer);
    }
}

impl fmt::Debug for ServedToolkit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServedToolkit")
            .field("tools", &self.served().listing.len())
            .finish_non_exhaustive()
    }
}
