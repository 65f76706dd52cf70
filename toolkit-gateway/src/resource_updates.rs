//! The resources the gateway's MCP sources say changed (`notifications/resources/updated`),
//! passed on under their served URIs ([`served_names`](super::served_names)) to the gateway's
//! sessions subscribed to them.

use std::sync::Arc;

use tokio::sync::broadcast;
use toolkit_mcp::Mcp;

use super::served_names::served_uri;

/// How many served updates wait for a slow session before the oldest are dropped.
const KEPT: usize = 256;

/// The sender of every source's updates under their served URIs: one task per source
/// (`(name, prefixed, source)`) that hears them, started on the current runtime (none without
/// one), ending when the source is gone or no one listens.
pub(crate) fn forward(upstreams: &[(String, bool, Arc<Mcp>)]) -> broadcast::Sender<String> {
    let (sender, _) = broadcast::channel(KEPT);
    forward_to(&sender, upstreams);
    sender
}

/// Passes the updates of `upstreams` to `sender` too (sources added by a reload).
pub(crate) fn forward_to(
    sender: &broadcast::Sender<String>,
    upstreams: &[(String, bool, Arc<Mcp>)],
) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    for (name, prefixed, mcp) in upstreams {
        let Some(mut updates) = mcp.resources_updated() else {
            continue;
        };
        let (name, prefixed) = (name.clone(), *prefixed);
        let sender = sender.downgrade();
        runtime.spawn(async move {
            while let Some(uri) = updates.next().await {
                let Some(sender) = sender.upgrade() else {
                    return;
                };
                let served = if prefixed {
                    served_uri(&name, &uri)
                } else {
                    uri
                };
                let _ = sender.send(served);
            }
        });
    }
}
