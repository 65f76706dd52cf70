//! The statuses of tasks passed through, told to the client that created each
//! (`notifications/tasks/status`, MCP 2025-11-25): [`StatusRelay`] listens to every MCP source
//! that tells them (server-everything's task store does, as a task moves on) and tells each to
//! the session whose call created the task (its [`TaskStatusSink`], kept with the task in
//! [`ServedTasks`]), the id served as that session knows it. No other session hears of it. A
//! status told before the source's answer that created the task reached the gateway has no
//! session yet and is not told (a client polls `tasks/get` in any case, as the spec says it
//! must).
//!
//! [`TaskStatusSink`]: toolkit_serve::TaskStatusSink

use std::sync::{Arc, Mutex, PoisonError, Weak};

use serde_json::Value;
use toolkit_mcp::{Mcp, TaskStatuses};

use super::served_tasks::{ServedTasks, is_end};

/// Where the statuses the sources tell go.
#[derive(Debug, Default)]
pub(crate) struct StatusRelay {
    /// The sources listened to (a source reloaded anew is another).
    listening: Mutex<Vec<Weak<Mcp>>>,
}

impl StatusRelay {
    /// Starts listening to those of `upstreams` not listened to yet (needs the runtime), their
    /// tasks' sessions and served ids those of `tasks`.
    pub(crate) fn listen(&self, upstreams: &[(String, Arc<Mcp>)], tasks: &Arc<ServedTasks>) {
        let mut listening = self
            .listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listening.retain(|mcp| mcp.strong_count() > 0);
        for (source, mcp) in upstreams {
            if listening
                .iter()
                .any(|heard| std::ptr::eq(heard.as_ptr(), Arc::as_ptr(mcp)))
            {
                continue;
            }
            listening.push(Arc::downgrade(mcp));
            if let Some(statuses) = mcp.task_statuses() {
                let relayed = (source.clone(), Arc::downgrade(mcp));
                tokio::spawn(relay(relayed, statuses, Arc::clone(tasks)));
            }
        }
    }
}

/// Tells each status `source` tells to the session of its task, until the source is gone; a
/// task that ended, or whose session did, is told no more.
async fn relay(
    (source, mcp): (String, Weak<Mcp>),
    mut statuses: TaskStatuses,
    tasks: Arc<ServedTasks>,
) {
    while let Some(mut status) = statuses.next().await {
        let Some(id) = status
            .get("taskId")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        // Gone (removed by a reload): what it still tells reaches no one.
        let Some(connection) = mcp.upgrade().map(|mcp| mcp.connection()) else {
            return;
        };
        let Some((served, sink)) = tasks.sink_of((&source, &id, connection)) else {
            continue;
        };
        status.insert("taskId".into(), Value::String(served));
        let ended = is_end(status.get("status").and_then(Value::as_str));
        if !sink.tell(status).await || ended {
            tasks.untold(&source, &id, ended);
        }
    }
}
