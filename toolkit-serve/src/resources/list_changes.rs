//! The host's resources or prompts changed ([`ListChanged`], from
//! [`Resources::list_changed`](crate::Resources::list_changed)): each session client is told
//! (`notifications/resources/list_changed`, `notifications/prompts/list_changed`) when the host
//! offers to tell it ([`Offer::resources_list_changed`](crate::Offer::resources_list_changed),
//! [`Offer::prompts_list_changed`](crate::Offer::prompts_list_changed), which advertise
//! `listChanged`), until its session ends; a stateless client hears it on
//! `subscriptions/listen` (`resources/subscriptions.rs`).

use rmcp::RoleServer;
use rmcp::service::Peer;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::resources::{Hosted, ListChanged};

/// Which changes a client is to hear.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Wanted {
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
}

impl Wanted {
    /// What the host offers to tell.
    pub(crate) fn offered(hosted: &Hosted) -> Self {
        let offer = hosted.as_ref().map(|host| host.offer()).unwrap_or_default();
        Self {
            resources: offer.resources_list_changed,
            prompts: offer.prompts_list_changed,
        }
    }

    /// Whether any is.
    pub(crate) fn any(self) -> bool {
        self.resources || self.prompts
    }
}

/// Tells the session client `peer` of each change of the host's lists it offers to tell, until
/// `ended` (the session ended) or the client is gone. Nothing is started when the host tells
/// none, or outside a Tokio runtime.
pub(crate) fn tell(hosted: &Hosted, peer: Peer<RoleServer>, ended: CancellationToken) {
    let wanted = Wanted::offered(hosted);
    if !wanted.any() {
        return;
    }
    let Some(mut changes) = hosted.as_ref().and_then(|host| host.list_changed()) else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        loop {
            let change = tokio::select! {
                () = ended.cancelled() => return,
                change = changes.recv() => match change {
                    Ok(change) => change,
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return,
                },
            };
            if peer.is_transport_closed() {
                return;
            }
            let told = match change {
                ListChanged::Resources if wanted.resources => {
                    peer.notify_resource_list_changed().await
                }
                ListChanged::Prompts if wanted.prompts => peer.notify_prompt_list_changed().await,
                _ => continue,
            };
            if let Err(error) = told {
                tracing::debug!(%error, "the client could not be told that a list changed");
                return;
            }
        }
    });
}
