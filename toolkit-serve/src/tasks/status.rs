//! A task's status told to the client that created it (`notifications/tasks/status`, MCP
//! 2025-11-25): [`TaskStatusSink`], which a host's [`Tasks::call`](crate::Tasks::call) finds
//! in its context, to keep beside the task it created and tell when its source says the task's
//! status changed. Over HTTP it reaches the session's standalone stream (its `GET`); a client
//! that opened none is not told, and polls `tasks/get` as the spec says a client must anyway.

use rmcp::model::{CustomNotification, ServerNotification};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use toolkit_core::JsonObject;

/// The method of the notification.
const TASK_STATUS: &str = "notifications/tasks/status";

/// Where the statuses of a task are told: the client (session) whose `tools/call` created it.
#[derive(Clone, Debug)]
pub struct TaskStatusSink {
    peer: Peer<RoleServer>,
    ended: CancellationToken,
}

impl TaskStatusSink {
    /// The sink of the session of `peer`, which ends when `ended` is cancelled.
    pub(crate) fn new(peer: Peer<RoleServer>, ended: CancellationToken) -> Self {
        Self { peer, ended }
    }

    /// Whether the session has ended (nothing is told any more).
    pub fn ended(&self) -> bool {
        self.ended.is_cancelled()
    }

    /// Tells the client `status` (a `Task`, its id the one the client knows): whether it was
    /// sent (not once the session has ended or the client is gone).
    pub async fn tell(&self, status: JsonObject) -> bool {
        if self.ended() {
            return false;
        }
        let note = CustomNotification::new(TASK_STATUS, Some(Value::Object(status)));
        match self
            .peer
            .send_notification(ServerNotification::CustomNotification(note))
            .await
        {
            Ok(()) => true,
            Err(error) => {
                tracing::debug!(%error, "a task's status could not be told");
                false
            }
        }
    }
}
