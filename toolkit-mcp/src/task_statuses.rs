//! When an MCP server says how a task stands (`notifications/tasks/status`, MCP 2025-11-25, sent
//! as a task's status changes; a client must not rely on it and polls `tasks/get`):
//! [`TaskStatuses`].

use serde_json::Value;
use tokio::sync::broadcast;

use toolkit_core::JsonObject;

/// The method of the notification.
pub(crate) const TASK_STATUS: &str = "notifications/tasks/status";

/// How many statuses wait for a slow [`TaskStatuses`] before the oldest are dropped.
pub(crate) const STATUSES_KEPT: usize = 256;

/// The tasks an MCP server says changed status, each its notification's params as written (a
/// `Task`: `taskId`, `status`, ...), from when this was made. Heard on stdio and on a
/// Streamable HTTP session's standalone stream.
#[derive(Debug)]
pub struct TaskStatuses(broadcast::Receiver<JsonObject>);

impl TaskStatuses {
    pub(crate) fn new(receiver: broadcast::Receiver<JsonObject>) -> Self {
        Self(receiver)
    }

    /// The next status the server told; `None` once the source is gone. A waiter that fell
    /// more than 256 statuses behind skips the oldest.
    pub async fn next(&mut self) -> Option<JsonObject> {
        loop {
            match self.0.recv().await {
                Ok(status) => return Some(status),
                Err(broadcast::error::RecvError::Lagged(skipped)) => {
                    tracing::debug!(skipped, "task statuses skipped by a slow waiter");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// The params of a `notifications/tasks/status`, when they name a task.
pub(crate) fn status(params: Option<&Value>) -> Option<JsonObject> {
    let params = params?.as_object()?;
    params.get("taskId")?.as_str()?;
    Some(params.clone())
}
