//! When an MCP server says a resource changed (`notifications/resources/updated`, sent for a
//! resource a client subscribed to): [`ResourcesUpdated`].

use serde_json::Value;
use tokio::sync::broadcast;

/// The method of the notification.
pub(crate) const RESOURCES_UPDATED: &str = "notifications/resources/updated";

/// How many updates wait for a slow [`ResourcesUpdated`] before the oldest are dropped.
pub(crate) const UPDATES_KEPT: usize = 256;

/// The URIs an MCP server says changed, as it wrote them, from when this was made. Heard on
/// stdio and on a Streamable HTTP session's standalone stream.
#[derive(Debug)]
pub struct ResourcesUpdated(broadcast::Receiver<String>);

impl ResourcesUpdated {
    pub(crate) fn new(receiver: broadcast::Receiver<String>) -> Self {
        Self(receiver)
    }

    /// The next URI the server says changed; `None` once the source is gone. A waiter that
    /// fell more than 256 updates behind skips the oldest.
    pub async fn next(&mut self) -> Option<String> {
        loop {
            match self.0.recv().await {
                Ok(uri) => return Some(uri),
                Err(broadcast::error::RecvError::Lagged(skipped)) => {
                    tracing::debug!(skipped, "resource updates skipped by a slow waiter");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// The URI of a `notifications/resources/updated`'s params, when it has one.
pub(crate) fn updated_uri(params: Option<&Value>) -> Option<String> {
    params?.get("uri")?.as_str().map(str::to_owned)
}
