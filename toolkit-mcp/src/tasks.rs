//! Tools run as tasks (the Tasks utility of MCP 2025-11-25): a tool whose
//! `execution.taskSupport` is `"required"` — or `"optional"`, on a server that declares
//! `capabilities.tasks.requests.tools.call` — is called with a `task` parameter; the server
//! answers at once with the task it created, which is polled with `tasks/get` at the interval
//! the server suggests (kept within [`MIN_POLL`] and [`MAX_POLL`]) until it ends, and its result
//! is fetched with `tasks/result`, a `tools/call` result like any other.
//!
//! A task that needs input (`input_required`) is asked for its result at once: the server asks
//! what it needs (an `elicitation/create`) on that request, answered as a plain call's are.
//! Dropping the call (its timeout, or its host giving up) sends `tasks/cancel`, in the
//! background and bounded, unless the task had ended.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::jsonrpc::Outcome;
use super::results::MAX_SERVER_WORDS;
use super::transport::{Fault, Request, Transport, spawn_bounded};
use toolkit_core::{CallContext, JsonObject, Reason};

/// The shortest wait between two `tasks/get`, whatever the server suggests.
pub(crate) const MIN_POLL: Duration = Duration::from_millis(100);
/// The longest wait between two `tasks/get`, whatever the server suggests.
pub(crate) const MAX_POLL: Duration = Duration::from_secs(5);
/// The wait between two `tasks/get` when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The longest a `tasks/cancel` sent for a dropped call is waited for.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// Whether a call of a tool listed with `execution` is made as a task, on a server with
/// `capabilities`: always when the tool requires it (it runs no other way), when it offers it
/// and the server declares tasks for `tools/call`, never otherwise.
pub(crate) fn runs_as_task(execution: Option<&JsonObject>, capabilities: Option<&Value>) -> bool {
    match execution
        .and_then(|execution| execution.get("taskSupport"))
        .and_then(Value::as_str)
    {
        Some("required") => true,
        Some("optional") => capabilities
            .and_then(|capabilities| capabilities.pointer("/tasks/requests/tools/call"))
            .is_some_and(Value::is_object),
        _ => false,
    }
}

/// The `task` parameter of a `tools/call` made as a task: the task is kept `ttl` after it is
/// created.
pub(crate) fn task_param(ttl: Duration) -> Value {
    json!({ "ttl": u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX) })
}

/// How a task stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

/// A task, as the server last said it stood.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Task {
    pub id: String,
    pub status: Status,
    pub message: Option<String>,
    /// The wait before the next `tasks/get`, the server's suggestion kept within bounds.
    pub poll: Duration,
}

/// Reads a `Task` object (of a `CreateTaskResult`, or a `tasks/get` result).
pub(crate) fn task(value: &JsonObject) -> Result<Task, Reason> {
    let id = match value.get("taskId") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        _ => return Err(Reason::invalid_response("a task without a taskId")),
    };
    let status = match value.get("status").and_then(Value::as_str) {
        Some("working") => Status::Working,
        Some("input_required") => Status::InputRequired,
        Some("completed") => Status::Completed,
        Some("failed") => Status::Failed,
        Some("cancelled") => Status::Cancelled,
        other => {
            return Err(Reason::invalid_response(format!(
                "a task of an unknown status {:?}",
                other.unwrap_or("(none)")
            )));
        }
    };
    let poll = value
        .get("pollInterval")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL);
    let message = value
        .get("statusMessage")
        .and_then(Value::as_str)
        .map(|message| toolkit_core::text::cut_utf16(message, MAX_SERVER_WORDS));
    Ok(Task {
        id,
        status,
        message,
        poll,
    })
}

/// The task a `tools/call` result created, when it is a `CreateTaskResult` (`{"task": {..}}`
/// and no content); `None` for a plain result.
pub(crate) fn created(result: &JsonObject) -> Option<Result<Task, Reason>> {
    if result.contains_key("content") {
        return None;
    }
    match result.get("task")? {
        Value::Object(created) => Some(task(created)),
        _ => Some(Err(Reason::invalid_response(
            "a tools/call result whose task is no object",
        ))),
    }
}

/// Sends `tasks/cancel` for a task when dropped, unless disarmed (the task ended).
struct CancelOnDrop {
    transport: Arc<dyn Transport>,
    id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let transport = Arc::clone(&self.transport);
            tracing::debug!(task = %id, "the call ended before its task: cancelling it");
            spawn_bounded(CANCEL_WAIT, async move {
                let _ = transport
                    .request(Request::new("tasks/cancel", id_params(&id)))
                    .await;
            });
        }
    }
}

fn id_params(id: &str) -> JsonObject {
    let mut params = Map::new();
    params.insert("taskId".into(), json!(id));
    params
}

/// Runs the created `task` to its end and gives the server's answer to `tasks/result` (the
/// tool's result, or its error). `context` is the call's: what the server asks while it fetches
/// the result is answered for it. Dropping the future cancels the task.
///
/// # Errors
///
/// A task that failed or was cancelled by the server (a [`Reason::CallFailed`] with its
/// status message), a `tasks/get` refused or not understood, or the transport's fault.
pub(crate) async fn finish(
    transport: &Arc<dyn Transport>,
    mut task: Task,
    context: &CallContext,
) -> Result<Outcome, Fault> {
    let mut guard = CancelOnDrop {
        transport: Arc::clone(transport),
        id: Some(task.id.clone()),
    };
    loop {
        match task.status {
            Status::Working => {}
            Status::InputRequired | Status::Completed => break,
            Status::Failed | Status::Cancelled => {
                guard.id = None;
                return Err(Fault::Failed(ended(&task)));
            }
        }
        tokio::time::sleep(task.poll).await;
        let reply = transport
            .request(Request::new("tasks/get", id_params(&task.id)))
            .await?;
        let got = reply.outcome.map_err(|error| {
            Reason::unknown(format!(
                "the server failed tasks/get of the tool's task ({}: {})",
                error.code,
                toolkit_core::text::cut_utf16(&error.message, MAX_SERVER_WORDS)
            ))
        })?;
        let next = self::task(&got)?;
        if next.id != task.id {
            return Err(Fault::Failed(Reason::invalid_response(
                "tasks/get answered with another task",
            )));
        }
        task = next;
    }
    let mut request = Request::new("tasks/result", id_params(&task.id));
    request.context = context.clone();
    let reply = transport.request(request).await?;
    guard.id = None;
    Ok(reply.outcome.map(without_task_meta))
}

/// The key of `_meta` that ties a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// A task's result as the result of a plain call: without the `_meta` that ties it to the task
/// (which no one who sees it as a plain call knows of).
fn without_task_meta(mut result: JsonObject) -> JsonObject {
    if let Some(Value::Object(meta)) = result.get_mut("_meta") {
        meta.remove(RELATED_TASK);
        if meta.is_empty() {
            result.remove("_meta");
        }
    }
    result
}

/// The reason of a task that ended without a result.
fn ended(task: &Task) -> Reason {
    let how = if task.status == Status::Cancelled {
        "was cancelled by the server"
    } else {
        "failed"
    };
    match &task.message {
        Some(message) if !message.is_empty() => {
            Reason::call_failed(format!("The tool's task {how}: {message}"))
        }
        _ => Reason::call_failed(format!("The tool's task {how}.")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn required_always_runs_as_a_task_and_optional_only_where_the_server_says() {
        let required = object(json!({"taskSupport": "required"}));
        let optional = object(json!({"taskSupport": "optional"}));
        let declares = json!({"tasks": {"requests": {"tools": {"call": {}}}}});
        assert!(runs_as_task(Some(&required), None));
        assert!(runs_as_task(Some(&optional), Some(&declares)));
        assert!(!runs_as_task(Some(&optional), Some(&json!({"tasks": {}}))));
        assert!(!runs_as_task(Some(&optional), None));
        assert!(!runs_as_task(
            Some(&object(json!({"taskSupport": "forbidden"}))),
            Some(&declares)
        ));
        assert!(!runs_as_task(None, Some(&declares)));
    }

    #[test]
    fn a_created_task_is_read_with_its_poll_interval_bounded() {
        let result =
            object(json!({"task": {"taskId": "t1", "status": "working", "pollInterval": 1}}));
        let task = created(&result).unwrap().unwrap();
        assert_eq!(task.id, "t1");
        assert_eq!(task.status, Status::Working);
        assert_eq!(task.poll, MIN_POLL);
        let slow = object(json!({"taskId": "t", "status": "working", "pollInterval": 3_600_000}));
        assert_eq!(self::task(&slow).unwrap().poll, MAX_POLL);
        let silent = object(json!({"taskId": "t", "status": "input_required"}));
        assert_eq!(self::task(&silent).unwrap().poll, DEFAULT_POLL);
        assert!(created(&object(json!({"content": []}))).is_none());
        assert!(created(&object(json!({"task": 5}))).unwrap().is_err());
        assert!(
            created(&object(json!({"task": {"status": "working"}})))
                .unwrap()
                .is_err()
        );
        assert!(self::task(&object(json!({"taskId": "t", "status": "sleeping"}))).is_err());
    }

    #[test]
    fn a_tasks_result_loses_only_the_meta_that_ties_it_to_the_task() {
        let tied = object(json!({"content": [], "_meta": {RELATED_TASK: {"taskId": "t"}}}));
        assert_eq!(without_task_meta(tied), object(json!({"content": []})));
        let more = object(json!({"_meta": {RELATED_TASK: {}, "other": 1}}));
        assert_eq!(
            without_task_meta(more),
            object(json!({"_meta": {"other": 1}}))
        );
    }

    #[test]
    fn a_task_that_ended_without_a_result_says_how_in_the_servers_words() {
        let failed = task(&object(
            json!({"taskId": "t", "status": "failed", "statusMessage": "disk full"}),
        ))
        .unwrap();
        assert_eq!(
            ended(&failed),
            Reason::call_failed("The tool's task failed: disk full")
        );
        let cancelled = task(&object(json!({"taskId": "t", "status": "cancelled"}))).unwrap();
        assert_eq!(
            ended(&cancelled),
            Reason::call_failed("The tool's task was cancelled by the server.")
        );
    }
}
