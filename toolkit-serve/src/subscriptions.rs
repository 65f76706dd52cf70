//! One session's resource subscriptions (`resources/subscribe`): the URIs its client subscribed
//! to, and the task that tells it of each one the host says changed
//! (`notifications/resources/updated`, from [`Resources::updated`](super::Resources::updated));
//! and `subscriptions/listen` of the stateless revision (2026-07-28): `toolsListChanged`,
//! `resourcesListChanged` and `promptsListChanged` when the host can tell them
//! (`list_changes.rs`), and `resourceSubscriptions` when the host offers `subscribe` (at most
//! [`MAX_SUBSCRIPTIONS`] URIs, subscribed while the listen lasts).
//!
//! Whether the host itself is subscribed is the server's to say ([`Subscribers`]): a session
//! that unsubscribes, or ends, leaves the host subscribed while another session is.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext};
use rmcp::{ErrorData, RoleServer};
use tokio_util::sync::CancellationToken;

use super::list_changes::{self, ListChanged};
use super::resources::{self, Hosted};
use super::served::ServedToolkit;
use super::subscribers::Subscribers;

/// How many URIs one session may be subscribed to at once (a subscription past it is refused).
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The URIs one session is subscribed to, and whether its telling task runs. Dropped (the
/// session ended), it unsubscribes the session from every URI.
#[derive(Debug)]
pub(crate) struct Subscriptions {
    /// The session's id among the server's.
    session: u64,
    server: Arc<Subscribers>,
    hosted: Hosted,
    inner: Mutex<Inner>,
    /// Cancelled when the session ends: the telling task stops.
    ended: CancellationToken,
}

#[derive(Debug, Default)]
struct Inner {
    uris: HashSet<String>,
    telling: bool,
}

impl Subscriptions {
    /// A new session's subscriptions, of the server's `server`, ending with `ended`.
    pub(crate) fn new(server: Arc<Subscribers>, hosted: Hosted, ended: CancellationToken) -> Self {
        Self {
            session: server.session(),
            server,
            hosted,
            inner: Mutex::default(),
            ended,
        }
    }

    /// `resources/subscribe` of `uri`: the host asked when no session of the server was
    /// subscribed to it; the first subscription starts the task that tells `peer` of the
    /// host's updates to the URIs subscribed to, until the session ends. Refused past
    /// [`MAX_SUBSCRIPTIONS`].
    pub(crate) async fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        peer: &Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let host = resources::subscribing(&self.hosted, "resources/subscribe")?;
        if self.full(uri) {
            return Err(ErrorData::invalid_params(
                format!("A session may subscribe to at most {MAX_SUBSCRIPTIONS} resources."),
                None,
            ));
        }
        self.server
            .subscribe(self.session, uri, host)
            .await
            .map_err(|refusal| resources::error(refusal, true))?;
        if self.add(uri) {
            self.tell(peer);
        }
        Ok(())
    }

    /// `resources/unsubscribe` of `uri`: the host asked to unsubscribe when this was the last
    /// session subscribed to it.
    pub(crate) async fn unsubscribe(&self, uri: &str) -> Result<(), ErrorData> {
        let host = resources::subscribing(&self.hosted, "resources/unsubscribe")?;
        self.lock().uris.remove(uri);
        self.server.unsubscribe(self.session, uri, host).await;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `uri` would be one more than the cap.
    fn full(&self, uri: &str) -> bool {
        let inner = self.lock();
        !inner.uris.contains(uri) && inner.uris.len() >= MAX_SUBSCRIPTIONS
    }

    /// Adds `uri`: whether the telling task is to start now (the first subscription).
    fn add(&self, uri: &str) -> bool {
        let mut inner = self.lock();
        inner.uris.insert(uri.to_owned());
        !std::mem::replace(&mut inner.telling, true)
    }

    fn has(&self, uri: &str) -> bool {
        self.lock().uris.contains(uri)
    }

    /// Starts the task that tells `peer` of the host's updates to the URIs subscribed to.
    fn tell(self: &Arc<Self>, peer: &Peer<RoleServer>) {
        let Some(mut updates) = self.hosted.as_ref().and_then(|host| host.updated()) else {
            return;
        };
        let this = Arc::downgrade(self);
        let peer = peer.clone();
        let ended = self.ended.clone();
        tokio::spawn(async move {
            loop {
                let uri = tokio::select! {
                    () = ended.cancelled() => return,
                    update = updates.recv() => match update {
                        Ok(uri) => uri,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    },
                };
                if peer.is_transport_closed() {
                    return;
                }
                if !Weak::upgrade(&this).is_some_and(|this| this.has(&uri)) {
                    continue;
                }
                if let Err(error) = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await
                {
                    tracing::debug!(%error, "the client could not be told of a resource update");
                    return;
                }
            }
        });
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        self.ended.cancel();
        let Some(host) = self.hosted.clone() else {
            return;
        };
        if self.server.holds_none(self.session) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::debug!("a session ended outside a Tokio runtime: its subscriptions stay");
            return;
        };
        let (server, session) = (Arc::clone(&self.server), self.session);
        runtime.spawn(async move { server.end(session, host.as_ref()).await });
    }
}

/// What a `subscriptions/listen` of `requested` is granted: `toolsListChanged`;
/// `resourcesListChanged` and `promptsListChanged` when the host tells them; and the resources
/// of `resourceSubscriptions` (the first [`MAX_SUBSCRIPTIONS`]) when the host offers
/// `subscribe`; `None` when nothing is.
pub(crate) fn accepted(
    requested: &SubscriptionFilter,
    hosted: &Hosted,
) -> Option<SubscriptionFilter> {
    let offer = hosted.as_ref().map(|host| host.offer()).unwrap_or_default();
    let tools = requested.tools_list_changed == Some(true);
    let resources = requested.resources_list_changed == Some(true) && offer.resources_list_changed;
    let prompts = requested.prompts_list_changed == Some(true) && offer.prompts_list_changed;
    let uris: Vec<String> = match &requested.resource_subscriptions {
        Some(uris) if offer.subscribe => uris.iter().take(MAX_SUBSCRIPTIONS).cloned().collect(),
        _ => Vec::new(),
    };
    if !tools && !resources && !prompts && uris.is_empty() {
        return None;
    }
    let mut filter = SubscriptionFilter::builder();
    if tools {
        filter = filter.tools_list_changed();
    }
    if resources {
        filter = filter.resources_list_changed();
    }
    if prompts {
        filter = filter.prompts_list_changed();
    }
    if !uris.is_empty() {
        filter = filter.resource_subscriptions(uris);
    }
    Some(filter.build())
}

/// Serves one `subscriptions/listen` until its client ends it: the served toolkit's changes
/// and the host's list changes when accepted, and the host's updates of the resources accepted
/// (subscribed meanwhile as one session of the server's, unsubscribed after).
pub(crate) async fn listen(
    toolkit: &ServedToolkit,
    hosted: &Hosted,
    server: &Subscribers,
    context: SubscriptionContext,
) {
    let accepted = context.accepted().clone();
    let tools = accepted.tools_list_changed == Some(true);
    let lists = list_changes::Wanted {
        resources: accepted.resources_list_changed == Some(true),
        prompts: accepted.prompts_list_changed == Some(true),
    };
    let uris: HashSet<String> = accepted
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    let session = server.session();
    let host = hosted.as_deref().filter(|_| !uris.is_empty());
    let mut updates = host.and_then(|host| host.updated());
    if let Some(host) = host {
        for uri in &uris {
            if let Err(refusal) = server.subscribe(session, uri, host).await {
                tracing::debug!(?refusal, "a listened resource could not be subscribed to");
            }
        }
    }
    let mut changes = toolkit.changes();
    changes.mark_unchanged();
    let mut listed = hosted
        .as_ref()
        .filter(|_| lists.any())
        .and_then(|host| host.list_changed());
    loop {
        let update = async {
            match updates.as_mut() {
                Some(updates) => updates.recv().await,
                None => std::future::pending().await,
            }
        };
        let list_change = async {
            match listed.as_mut() {
                Some(listed) => listed.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = context.cancelled() => break,
            changed = changes.changed(), if tools => {
                if changed.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
            update = update => match update {
                Ok(uri) if uris.contains(&uri) => {
                    if context.sink().notify_resource_updated(uri).await.is_err() {
                        break;
                    }
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => updates = None,
            },
            change = list_change => match change {
                Ok(ListChanged::Resources) if lists.resources => {
                    if context.sink().notify_resource_list_changed().await.is_err() {
                        break;
                    }
                }
                Ok(ListChanged::Prompts) if lists.prompts => {
                    if context.sink().notify_prompt_list_changed().await.is_err() {
                        break;
                    }
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => listed = None,
            },
        }
    }
    if let Some(host) = host {
        for uri in &uris {
            server.unsubscribe(session, uri, host).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_subscription_starts_telling_and_the_cap_is_reached_at_max() {
        let subscriptions = Subscriptions::new(Arc::default(), None, CancellationToken::new());
        assert!(subscriptions.add("demo://0"));
        assert!(!subscriptions.add("demo://0"));
        for n in 1..MAX_SUBSCRIPTIONS {
            assert!(!subscriptions.full(&format!("demo://{n}")));
            assert!(!subscriptions.add(&format!("demo://{n}")));
        }
        assert!(subscriptions.full("demo://one-more"));
        // One already held is still taken, and one unsubscribed makes room.
        assert!(!subscriptions.full("demo://7"));
        subscriptions.lock().uris.remove("demo://0");
        assert!(!subscriptions.has("demo://0"));
        assert!(!subscriptions.full("demo://one-more"));
    }
}
