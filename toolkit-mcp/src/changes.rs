//! When an MCP server says its tools changed (`notifications/tools/list_changed`):
//! [`ToolsChanged`].

use tokio::sync::watch;

/// Wakes each time the server of an [`Mcp`](super::Mcp) source says its tools changed (or its
/// resources or prompts, which a host serving them lists again too), so that a host lists them
/// again at once instead of at its next refresh.
///
/// A transport hears the notification where the server can send it unasked: on stdio, on the old
/// HTTP+SSE transport's event stream, and on a Streamable HTTP session's standalone stream (and
/// on any response stream). A server of the stateless revision (2026-07-28) says it on
/// `subscriptions/listen`, which the source opens once it has settled on that revision if a
/// `ToolsChanged` of it lives then (so take one before the first discovery).
#[derive(Clone, Debug)]
pub struct ToolsChanged(watch::Receiver<u64>);

impl ToolsChanged {
    /// Waits until the server says its tools changed (since the last wait, or since this was
    /// made); `false` once the source is gone and nothing can change any more.
    pub async fn changed(&mut self) -> bool {
        self.0.changed().await.is_ok()
    }
}

/// The sending half a transport keeps, and how a source's users subscribe (of the resources
/// the server says changed too: `resources_updated.rs`).
#[derive(Debug)]
pub(crate) struct Changes(
    watch::Sender<u64>,
    tokio::sync::broadcast::Sender<String>,
    tokio::sync::broadcast::Sender<toolkit_core::JsonObject>,
);

impl Default for Changes {
    fn default() -> Self {
        Self(
            watch::channel(0).0,
            tokio::sync::broadcast::channel(super::resources_updated::UPDATES_KEPT).0,
            tokio::sync::broadcast::channel(super::task_statuses::STATUSES_KEPT).0,
        )
    }
}

impl Changes {
    /// The server said its tools changed.
    pub(crate) fn tell(&self) {
        self.0.send_modify(|count| *count = count.wrapping_add(1));
    }

    /// Whether anyone waits for changes (a [`ToolsChanged`] lives).
    pub(crate) fn watched(&self) -> bool {
        self.0.receiver_count() > 0
    }

    /// A waiter that wakes at the next change.
    pub(crate) fn subscribe(&self) -> ToolsChanged {
        ToolsChanged(self.0.subscribe())
    }

    /// The server said the resource of a `notifications/resources/updated` (`params`) changed.
    pub(crate) fn resource_updated(&self, params: Option<&serde_json::Value>) {
        if let Some(uri) = super::resources_updated::updated_uri(params) {
            let _ = self.1.send(uri);
        }
    }

    /// The server told a task's status (`notifications/tasks/status`, its `params`).
    pub(crate) fn task_status(&self, params: Option<&serde_json::Value>) {
        if let Some(status) = super::task_statuses::status(params) {
            let _ = self.2.send(status);
        }
    }

    /// A waiter for the task statuses the server tells.
    pub(crate) fn task_statuses(&self) -> super::TaskStatuses {
        super::TaskStatuses::new(self.2.subscribe())
    }

    /// A waiter for the resources the server says changed.
    pub(crate) fn resources(&self) -> super::ResourcesUpdated {
        super::ResourcesUpdated::new(self.1.subscribe())
    }
}

/// The method of the notification.
pub(crate) const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// Whether a notification's `method` says one of the server's lists changed: its tools, its
/// resources or its prompts. Each wakes the [`ToolsChanged`] waiters, so that a host that serves
/// the server's resources and prompts as well (the gateway) lists them again at once, as it does
/// the tools.
pub(crate) fn says_a_list_changed(method: &str) -> bool {
    matches!(
        method,
        TOOLS_LIST_CHANGED
            | "notifications/resources/list_changed"
            | "notifications/prompts/list_changed"
    )
}
