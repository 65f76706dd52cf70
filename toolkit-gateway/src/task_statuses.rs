//! The statuses of tasks passed through, told to the client that created each
//! (`notifications/tasks/status`, MCP 2025-11-25): [`StatusRelay`] listens to every MCP source
//! that tells them (server-everything's task store does, as a task moves on) and tells each to
//! the session whose call created the task (its [`TaskStatusSink`]), the id served as the
//! client knows it. No other session hears of it. A status told before the source's answer
//! that created the task reached the gateway has no session yet and is not told (a client polls
//! `tasks/get` in any case, as the spec says it must).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Once, PoisonError};

use toolkit_runtime::mcp::{Mcp, TaskStatuses};
use toolkit_runtime::serve::TaskStatusSink;
use toolkit_runtime::{CallContext, JsonObject};

/// How the ids of a source's results are served (`tasks.rs`): the source's name, the result.
pub(crate) type ServeIds = fn(&str, &mut JsonObject);

/// Each served task id's sink: the session that created the task.
type Sinks = Arc<Mutex<HashMap<String, TaskStatusSink>>>;

/// Where the statuses the sources tell go.
#[derive(Debug)]
pub(crate) struct StatusRelay {
    sinks: Sinks,
    listening: Once,
}

impl Default for StatusRelay {
    fn default() -> Self {
        Self {
            sinks: Sinks::default(),
            listening: Once::new(),
        }
    }
}

impl StatusRelay {
    /// Starts listening to `upstreams` (once; needs the runtime), their tasks' ids served by
    /// `serve`.
    pub(crate) fn listen(&self, upstreams: &[(String, Arc<Mcp>)], serve: ServeIds) {
        self.listening.call_once(|| {
            for (source, mcp) in upstreams {
                if let Some(statuses) = mcp.task_statuses() {
                    let sinks = Arc::clone(&self.sinks);
                    tokio::spawn(relay(source.clone(), statuses, sinks, serve));
                }
            }
        });
    }

    /// The task `served` was created by the call of `context` (which carries its session's
    /// sink, over a served session).
    pub(crate) fn created(&self, served: &str, context: &CallContext) {
        if let Some(sink) = context.extension::<TaskStatusSink>() {
            lock(&self.sinks).insert(served.to_owned(), sink.clone());
        }
    }

    /// The task `served` is forgotten: nothing more is told of it.
    pub(crate) fn forget(&self, served: &str) {
        lock(&self.sinks).remove(served);
    }
}

fn lock(sinks: &Sinks) -> std::sync::MutexGuard<'_, HashMap<String, TaskStatusSink>> {
    sinks.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Tells each status `source` tells to the session of its task, until the source is gone; a
/// task that ended, or whose session did, is told no more.
async fn relay(source: String, mut statuses: TaskStatuses, sinks: Sinks, serve: ServeIds) {
    while let Some(mut status) = statuses.next().await {
        serve(&source, &mut status);
        let Some(id) = status
            .get("taskId")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        let ended = matches!(
            status.get("status").and_then(serde_json::Value::as_str),
            Some("completed" | "failed" | "cancelled")
        );
        let sink = lock(&sinks).get(&id).cloned();
        let Some(sink) = sink else {
            continue;
        };
        if !sink.tell(status).await || ended {
            lock(&sinks).remove(&id);
        }
    }
}
