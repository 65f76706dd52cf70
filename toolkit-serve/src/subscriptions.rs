//! One session's resource subscriptions (`resources/subscribe`): the URIs its client subscribed
//! to, and the task that tells it of each one the host says changed
//! (`notifications/resources/updated`, from [`Resources::updated`](super::Resources::updated));
//! and `subscriptions/listen` of the stateless revision (2026-07-28): `toolsListChanged`, and
//! `resourceSubscriptions` when the host offers `subscribe` (at most [`MAX_SUBSCRIPTIONS`] URIs,
//! subscribed at the host while the listen lasts).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext};

use super::resources::Hosted;
use super::served::ServedToolkit;

/// How many URIs one session may be subscribed to at once (a subscription past it is refused).
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The URIs one session is subscribed to, and whether its telling task runs.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    uris: HashSet<String>,
    telling: bool,
}

impl Subscriptions {
    /// The session subscribed to `uri` (the host took it): the first subscription starts the
    /// task that tells `peer` of the host's updates to the URIs subscribed to, until the
    /// session's client is gone. `false` when the session has [`MAX_SUBSCRIPTIONS`] already.
    pub(crate) fn subscribed(
        self: &Arc<Self>,
        uri: &str,
        peer: &Peer<RoleServer>,
        hosted: &Hosted,
    ) -> bool {
        let Some(start) = self.add(uri) else {
            return false;
        };
        if !start {
            return true;
        }
        let Some(mut updates) = hosted.as_ref().and_then(|resources| resources.updated()) else {
            return true;
        };
        let this = Arc::clone(self);
        let peer = peer.clone();
        tokio::spawn(async move {
            loop {
                let uri = match updates.recv().await {
                    Ok(uri) => uri,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                if peer.is_transport_closed() {
                    return;
                }
                if !this.has(&uri) {
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
        true
    }

    /// Adds `uri`: whether the telling task is to start now (the first subscription), or `None`
    /// past the cap.
    fn add(&self, uri: &str) -> Option<bool> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if !inner.uris.contains(uri) && inner.uris.len() >= MAX_SUBSCRIPTIONS {
            return None;
        }
        inner.uris.insert(uri.to_owned());
        Some(!std::mem::replace(&mut inner.telling, true))
    }

    /// The session unsubscribed from `uri`.
    pub(crate) fn unsubscribed(&self, uri: &str) {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .uris
            .remove(uri);
    }

    fn has(&self, uri: &str) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .uris
            .contains(uri)
    }
}

/// What a `subscriptions/listen` of `requested` is granted: `toolsListChanged`, and the
/// resources of `resourceSubscriptions` (the first [`MAX_SUBSCRIPTIONS`]) when the host offers
/// `subscribe`; `None` when nothing is.
pub(crate) fn accepted(
    requested: &SubscriptionFilter,
    hosted: &Hosted,
) -> Option<SubscriptionFilter> {
    let tools = requested.tools_list_changed == Some(true);
    let subscribe = hosted
        .as_ref()
        .is_some_and(|resources| resources.offer().subscribe);
    let uris: Vec<String> = match &requested.resource_subscriptions {
        Some(uris) if subscribe => uris.iter().take(MAX_SUBSCRIPTIONS).cloned().collect(),
        _ => Vec::new(),
    };
    if !tools && uris.is_empty() {
        return None;
    }
    let mut filter = SubscriptionFilter::builder();
    if tools {
        filter = filter.tools_list_changed();
    }
    if !uris.is_empty() {
        filter = filter.resource_subscriptions(uris);
    }
    Some(filter.build())
}

/// Serves one `subscriptions/listen` until its client ends it: the served toolkit's changes
/// when accepted, and the host's updates of the resources accepted (subscribed at the host
/// meanwhile, unsubscribed after).
pub(crate) async fn listen(toolkit: &ServedToolkit, hosted: &Hosted, context: SubscriptionContext) {
    let tools = context.accepted().tools_list_changed == Some(true);
    let uris: HashSet<String> = context
        .accepted()
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    let resources = hosted.as_ref().filter(|_| !uris.is_empty());
    let mut updates = resources.and_then(|resources| resources.updated());
    if let Some(resources) = resources {
        for uri in &uris {
            if let Err(refusal) = resources.subscribe(uri).await {
                tracing::debug!(?refusal, "a listened resource could not be subscribed to");
            }
        }
    }
    let mut changes = toolkit.changes();
    changes.mark_unchanged();
    loop {
        let update = async {
            match updates.as_mut() {
                Some(updates) => updates.recv().await,
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
        }
    }
    if let Some(resources) = resources {
        for uri in &uris {
            let _ = resources.unsubscribe(uri).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_subscription_starts_telling_and_the_cap_refuses_one_more() {
        let subscriptions = Subscriptions::default();
        assert_eq!(subscriptions.add("demo://0"), Some(true));
        assert_eq!(subscriptions.add("demo://0"), Some(false));
        for n in 1..MAX_SUBSCRIPTIONS {
            assert_eq!(subscriptions.add(&format!("demo://{n}")), Some(false));
        }
        assert_eq!(subscriptions.add("demo://one-more"), None);
        // One already held is still taken, and one unsubscribed makes room.
        assert_eq!(subscriptions.add("demo://7"), Some(false));
        subscriptions.unsubscribed("demo://0");
        assert!(!subscriptions.has("demo://0"));
        assert_eq!(subscriptions.add("demo://one-more"), Some(false));
    }
}
