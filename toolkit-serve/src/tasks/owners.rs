//! Whose tasks a session may drive: [`TaskOwners`], the task ids one session's client created
//! (a `tools/call` made as a task), so that over HTTP, where many clients share one server, a
//! client never sees, gets, reads, cancels or lists another session's task. A foreign id is
//! refused as an unknown one is ([`unknown_task`]), so a client cannot tell the two apart.

use std::sync::{Mutex, MutexGuard, PoisonError};

use indexmap::IndexSet;
use serde_json::Value;

use crate::failure::echo;
use crate::resources::Refusal;
use toolkit_core::JsonObject;

/// How many task ids one session keeps (the oldest is forgotten past it).
const MAX_OWNED: usize = 4096;

/// The task ids one session's client created, oldest first, at most [`MAX_OWNED`], and the
/// session's id among the process's ([`TaskSession`](crate::TaskSession)).
#[derive(Debug)]
pub(crate) struct TaskOwners {
    ids: Mutex<IndexSet<String>>,
    session: u64,
}

impl Default for TaskOwners {
    fn default() -> Self {
        Self {
            ids: Mutex::default(),
            session: crate::TaskSession::next_id(),
        }
    }
}

impl TaskOwners {
    fn ids(&self) -> MutexGuard<'_, IndexSet<String>> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session's id, as its [`TaskSession`](crate::TaskSession) carries it.
    pub(crate) fn session(&self) -> u64 {
        self.session
    }

    /// Keeps the id of the task a `tools/call` created (`result`, a `CreateTaskResult`; a plain
    /// result keeps nothing).
    pub(crate) fn created(&self, result: &JsonObject) {
        let Some(Value::String(id)) = result.get("task").and_then(|task| task.get("taskId")) else {
            return;
        };
        let mut ids = self.ids();
        if ids.insert(id.clone()) && ids.len() > MAX_OWNED {
            ids.shift_remove_index(0);
        }
    }

    /// Whether the session created the task `id`.
    pub(crate) fn owns(&self, id: &str) -> bool {
        self.ids().contains(id)
    }

    /// A `tasks/list` result with only the session's own tasks.
    pub(crate) fn own_only(&self, mut result: JsonObject) -> JsonObject {
        if let Some(Value::Array(tasks)) = result.get_mut("tasks") {
            let ids = self.ids();
            tasks.retain(|task| {
                task.get("taskId")
                    .and_then(Value::as_str)
                    .is_some_and(|id| ids.contains(id))
            });
        }
        result
    }
}

/// The refusal of a task id the client may not drive: one no task has, or another session's.
pub fn unknown_task(id: &str) -> Refusal {
    Refusal::InvalidParams(format!("No task {:?} is known here.", echo(id)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn a_session_owns_the_tasks_it_created_and_lists_only_those() {
        let owners = TaskOwners::default();
        owners.created(json!({"task": {"taskId": "a/1"}}).as_object().unwrap());
        owners.created(json!({"content": []}).as_object().unwrap());
        owners.created(json!({"task": {"taskId": 7}}).as_object().unwrap());
        assert!(owners.owns("a/1") && !owners.owns("a/2"));
        let listed = json!({"tasks": [{"taskId": "a/1"}, {"taskId": "a/2"}, {"id": 1}, 3]});
        let own = owners.own_only(listed.as_object().cloned().unwrap());
        assert_eq!(Value::Object(own), json!({"tasks": [{"taskId": "a/1"}]}));
        for at in 0..MAX_OWNED {
            owners.created(
                json!({"task": {"taskId": at.to_string()}})
                    .as_object()
                    .unwrap(),
            );
        }
        assert!(!owners.owns("a/1"), "the oldest is forgotten");
        assert_eq!(owners.ids().len(), MAX_OWNED);
    }

    #[test]
    fn an_unknown_id_is_refused_cut() {
        let refusal = unknown_task(&"x".repeat(300));
        assert!(
            matches!(&refusal, Refusal::InvalidParams(words) if words.len() < 260 && words.contains('…')),
            "{refusal:?}"
        );
    }
}
