//! One session's resource subscriptions (`resources/subscribe`): the URIs its client subscribed
//! to, and the task that tells it of each one the host says changed
//! (`notifications/resources/updated`, from [`Resources::updated`](crate::Resources::updated));
//! and `subscriptions/listen` of the stateless revision (2026-07-28): `toolsListChanged`,
//! `resourcesListChanged` and `promptsListChanged` when the host can tell them
//! (`resources/list_changes.rs`), and `resourceSubscriptions` when the host offers `subscribe` (at most
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

use crate::resources::ListChanged;
use crate::resources::list_changes;
use crate::resources::subscribers::Subscribers;
use crate::resources::{self, Hosted};
use crate::served::ServedToolkit;

/// How many URIs one session may be subscribed to at once (a subscription past it is refused).
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// How many bytes the URIs one session is subscribed to may have in all (a subscription past
/// it is refused).
pub const MAX_SUBSCRIBED_BYTES: usize = 256 * 1024;

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
    /// The bytes of `uris`, together.
    bytes: usize,
    telling: bool,
}

impl Inner {
    fn remove(&mut self, uri: &str) {
        if self.uris.remove(uri) {
            self.bytes -= uri.len();
        }
    }
}

/// A URI held for a subscription the host has not taken yet: released when dropped unkept (the
/// host refused it, or the request was dropped).
struct Held<'a> {
    subscriptions: &'a Subscriptions,
    uri: String,
    kept: bool,
}

impl Held<'_> {
    /// The subscription is made: the URI stays held.
    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.subscriptions.lock().remove(&self.uri);
        }
    }
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
    /// host's updates to the URIs subscribed to, until the session ends. Refused for a URI
    /// over [`MAX_URI_BYTES`](crate::MAX_URI_BYTES), and past [`MAX_SUBSCRIPTIONS`] URIs or
    /// [`MAX_SUBSCRIBED_BYTES`] bytes of them: the URI is held before the host is asked, so that
    /// subscriptions made at once never pass either cap.
    pub(crate) async fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        peer: &Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.take(uri).await? {
            self.tell(peer);
        }
        Ok(())
    }

    /// The subscription of [`Subscriptions::subscribe`], made: whether the telling task is to
    /// start now (the first subscription).
    async fn take(&self, uri: &str) -> Result<bool, ErrorData> {
        crate::resources::uri_bound::checked(uri)?;
        let host = resources::subscribing(&self.hosted, "resources/subscribe")?;
        let mut held = self.hold(uri)?;
        self.server
            .subscribe(self.session, uri, host)
            .await
            .map_err(|refusal| resources::error(refusal, true))?;
        if held.is_none() && !self.has(uri) {
            // Held by a request of this session's that failed meanwhile: held again, or undone.
            match self.hold(uri) {
                Ok(again) => held = again,
                Err(refused) => {
                    self.server.unsubscribe(self.session, uri, host).await;
                    return Err(refused);
                }
            }
        }
        if let Some(held) = held {
            held.keep();
        }
        Ok(self.start_telling())
    }

    /// `resources/unsubscribe` of `uri`: the host asked to unsubscribe when this was the last
    /// session subscribed to it.
    pub(crate) async fn unsubscribe(&self, uri: &str) -> Result<(), ErrorData> {
        crate::resources::uri_bound::checked(uri)?;
        let host = resources::subscribing(&self.hosted, "resources/unsubscribe")?;
        self.lock().remove(uri);
        self.server.unsubscribe(self.session, uri, host).await;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds `uri` for the session, within the caps, in one step (checked and inserted under one
    /// lock): `Some` when it was not held yet (released when dropped unkept), `None` when it
    /// was, or the refusal past a cap.
    fn hold<'a>(&'a self, uri: &str) -> Result<Option<Held<'a>>, ErrorData> {
        let mut inner = self.lock();
        if inner.uris.contains(uri) {
            return Ok(None);
        }
        if inner.uris.len() >= MAX_SUBSCRIPTIONS {
            return Err(ErrorData::invalid_params(
                format!("A session may subscribe to at most {MAX_SUBSCRIPTIONS} resources."),
                None,
            ));
        }
        if inner.bytes + uri.len() > MAX_SUBSCRIBED_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "A session may subscribe to resources whose URIs have at most \
                     {MAX_SUBSCRIBED_BYTES} bytes in all; this one's {} bytes would pass it.",
                    uri.len()
                ),
                None,
            ));
        }
        inner.uris.insert(uri.to_owned());
        inner.bytes += uri.len();
        Ok(Some(Held {
            subscriptions: self,
            uri: uri.to_owned(),
            kept: false,
        }))
    }

    /// Whether the telling task is to start now (the first subscription).
    fn start_telling(&self) -> bool {
        !std::mem::replace(&mut self.lock().telling, true)
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
        Some(uris) if offer.subscribe => within_caps(uris),
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

/// The URIs of `uris` a listen is granted: those within [`MAX_URI_BYTES`](crate::MAX_URI_BYTES),
/// distinct, in order, as long as they are within [`MAX_SUBSCRIPTIONS`] and
/// [`MAX_SUBSCRIBED_BYTES`].
fn within_caps(uris: &[String]) -> Vec<String> {
    let mut granted = Vec::new();
    let mut seen = HashSet::new();
    let mut bytes = 0;
    for uri in uris {
        if !crate::resources::uri_bound::fits(uri) || seen.contains(uri.as_str()) {
            continue;
        }
        if granted.len() >= MAX_SUBSCRIPTIONS || bytes + uri.len() > MAX_SUBSCRIBED_BYTES {
            break;
        }
        bytes += uri.len();
        seen.insert(uri.as_str());
        granted.push(uri.clone());
    }
    granted
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
    #![allow(clippy::unwrap_used)]
    use serde_json::Value;
    use toolkit_core::{BoxFuture, JsonObject};

    use super::*;
    use crate::resources::{Offer, Refusal, Resources};

    /// A host that takes every subscription, yielding on the way (so that requests interleave).
    #[derive(Debug)]
    struct Yielding;

    impl Resources for Yielding {
        fn offer(&self) -> Offer {
            Offer::default().with_resources(true)
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
        fn subscribe<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
            Box::pin(async {
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
                Ok(())
            })
        }
        fn unsubscribe<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), Refusal>> {
            Box::pin(async { Ok(()) })
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
            Box::pin(async { Ok(JsonObject::new()) })
        }
    }

    fn session(server: &Arc<Subscribers>) -> Arc<Subscriptions> {
        let host: Hosted = Some(Arc::new(Yielding));
        Arc::new(Subscriptions::new(
            Arc::clone(server),
            host,
            CancellationToken::new(),
        ))
    }

    fn held(subscriptions: &Subscriptions) -> HashSet<String> {
        subscriptions.lock().uris.clone()
    }

    #[tokio::test]
    async fn the_first_subscription_starts_telling_and_the_caps_hold_in_count_and_bytes() {
        let subscriptions = session(&Arc::default());
        assert!(subscriptions.take("demo://0").await.unwrap());
        assert!(!subscriptions.take("demo://0").await.unwrap());
        for n in 1..MAX_SUBSCRIPTIONS {
            subscriptions.take(&format!("demo://{n}")).await.unwrap();
        }
        let refused = subscriptions.take("demo://one-more").await.unwrap_err();
        assert!(refused.message.contains("at most 1024"), "{refused:?}");
        // One already held is still taken, and one unsubscribed makes room.
        subscriptions.take("demo://7").await.unwrap();
        subscriptions.unsubscribe("demo://0").await.unwrap();
        assert!(!subscriptions.has("demo://0"));
        subscriptions.take("demo://one-more").await.unwrap();

        // Bytes: 64 URIs of 4 KiB fill a session; the next is refused, and nothing is kept of it.
        let subscriptions = session(&Arc::default());
        let long = |n: usize| format!("demo://{n:04}/{}", "x".repeat(crate::MAX_URI_BYTES - 12));
        for n in 0..64 {
            subscriptions.take(&long(n)).await.unwrap();
        }
        let refused = subscriptions.take(&long(64)).await.unwrap_err();
        assert!(refused.message.contains("bytes in all"), "{refused:?}");
        assert_eq!(subscriptions.lock().uris.len(), 64);
        assert!(subscriptions.lock().bytes <= MAX_SUBSCRIBED_BYTES);
        // A URI over the bound is refused by subscribe and unsubscribe alike.
        let over = "x".repeat(crate::MAX_URI_BYTES + 1);
        assert!(
            subscriptions
                .take(&over)
                .await
                .unwrap_err()
                .message
                .contains("bytes long")
        );
        assert!(subscriptions.unsubscribe(&over).await.is_err());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn subscribes_made_at_once_never_pass_the_cap() {
        let server = Arc::default();
        let subscriptions = session(&server);
        let tries = MAX_SUBSCRIPTIONS + 300;
        let tasks: Vec<_> = (0..tries)
            .map(|n| {
                let subscriptions = Arc::clone(&subscriptions);
                tokio::spawn(async move { subscriptions.take(&format!("demo://{n}")).await })
            })
            .collect();
        let mut taken = 0;
        for task in tasks {
            if task.await.unwrap().is_ok() {
                taken += 1;
            }
        }
        assert_eq!(taken, MAX_SUBSCRIPTIONS, "subscriptions taken past the cap");
        assert_eq!(held(&subscriptions).len(), MAX_SUBSCRIPTIONS);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_sessions_subscribing_at_once_each_keep_only_their_own() {
        let server: Arc<Subscribers> = Arc::default();
        let (alice, bob) = (session(&server), session(&server));
        let mut tasks = Vec::new();
        for n in 0..600 {
            for (who, subscriptions) in [("alice", &alice), ("bob", &bob)] {
                let subscriptions = Arc::clone(subscriptions);
                tasks.push(tokio::spawn(async move {
                    subscriptions.take(&format!("{who}://{n}")).await?;
                    subscriptions.take(&format!("shared://{}", n % 10)).await
                }));
            }
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        for (who, subscriptions) in [("alice", &alice), ("bob", &bob)] {
            let uris = held(subscriptions);
            // Neither starved: every one of its own taken, and nothing of the other's.
            assert_eq!(uris.len(), 610, "{who}");
            assert!(
                uris.iter().all(
                    |uri| uri.starts_with(&format!("{who}://")) || uri.starts_with("shared://")
                ),
                "{who} holds another's"
            );
        }
        assert_eq!(server.count("shared://3").await, 2);
        assert_eq!(server.count("alice://3").await, 1);
    }

    #[test]
    fn a_listen_is_granted_uris_within_the_caps_only() {
        let over = "x".repeat(crate::MAX_URI_BYTES + 1);
        let uris = vec![
            "a://1".to_owned(),
            over,
            "a://1".to_owned(),
            "a://2".to_owned(),
        ];
        assert_eq!(within_caps(&uris), ["a://1", "a://2"]);
        let many: Vec<String> = (0..MAX_SUBSCRIPTIONS + 5)
            .map(|n| format!("a://{n}"))
            .collect();
        assert_eq!(within_caps(&many).len(), MAX_SUBSCRIPTIONS);
        let large: Vec<String> = (0..100)
            .map(|n| format!("a://{n:03}/{}", "y".repeat(4000)))
            .collect();
        let granted = within_caps(&large);
        assert!(granted.iter().map(String::len).sum::<usize>() <= MAX_SUBSCRIBED_BYTES);
        assert_eq!(granted.len(), MAX_SUBSCRIBED_BYTES / 4010);
    }
}
