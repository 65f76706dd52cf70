//! The statuses of tasks passed through, told to the client that created each
//! (`notifications/tasks/status`, MCP 2025-11-25): [`StatusRelay`] listens to every MCP source
//! that tells them (server-everything's task store does, as a task moves on) and tells each to
//! the session whose call created the task (its [`TaskStatusSink`], kept with the task in
//! [`ServedTasks`]), the id served as that session knows it. No other session hears of it. A
//! status told before the source's answer that created the task reached the gateway has no
//! session yet and is not told (a client polls `tasks/get` in any case, as the spec says it
//! must).
//!
//! [`TaskStatusSink`]: toolkit_runtime::serve::TaskStatusSink

use std::sync::{Arc, Once};

use serde_json::Value;
use toolkit_runtime::mcp::{Mcp, TaskStatuses};

use super::served_tasks::{ServedTasks, is_end};

/// Where the statuses the sources tell go.
#[derive(Debug)]
pub(crate) struct StatusRelay {
    listening: Once,
}

impl Default for StatusRelay {
    fn default() -> Self {
        Self {
            listening: Once::new(),
        }
    }
}

impl StatusRelay {
    /// Starts listening to `upstreams` (once; needs the runtime), their tasks' sessions and
    /// served ids those of `tasks`.
    pub(crate) fn listen(&self, upstreams: &[(String, Arc<Mcp>)], tasks: &Arc<ServedTasks>) {
        self.listening.call_once(|| {
            for (source, mcp) in upstreams {
                if let Some(statuses) = mcp.task_statuses() {
                    let relayed = (source.clone(), Arc::clone(mcp));
                    tokio::spawn(relay(relayed, statuses, Arc::clone(tasks)));
                }
            }
        });
    }
}

/// Tells each status `source` tells to the session of its task, until the source is gone; a
/// task that ended, or whose session did, is told no more.
async fn relay(
    (source, mcp): (String, Arc<Mcp>),
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
        let Some((served, sink)) = tasks.sink_of((&source, &id, mcp.connection())) else {
            continue;
        };
        status.insert("taskId".into(), Value::String(served));
        let ended = is_end(status.get("status").and_then(Value::as_str));
        if !sink.tell(status).await || ended {
            tasks.untold(&source, &id, ended);
        }
    }
}
