//! [`Mcp`]'s task requests for a caller that drives the task itself (a gateway passing a
//! client's tasks through, MCP 2025-11-25): a `tools/call` made as a task answered with the task
//! the server created, and `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list`, each
//! answer as the server wrote it.
//!
//! A plain [`call`](toolkit_core::ToolSource::call) of a task tool runs its task to the end itself
//! (`tasks.rs`); these are for the caller that polls.

use serde_json::{Map, Value, json};

use super::asked::refused;
use super::source::Mcp;
use super::transport::{Fault, Request};
use toolkit_core::{CallContext, JsonObject, Reason, ToolSourceError};

impl Mcp {
    /// `tools/call` of `tool` with `arguments` as a task (its `task` parameter as the caller
    /// wrote it, such as `{"ttl": 60000}`), and the server's answer as written: a
    /// `CreateTaskResult` (`{"task": {"taskId", "status", ...}}`), or a plain result when the
    /// server ran the call without a task. What the server asks on the way is asked of
    /// `context`'s client.
    ///
    /// # Errors
    ///
    /// As [`Mcp::read_resource`], the JSON-RPC error of the call in the server's words.
    pub async fn call_as_task(
        &self,
        tool: &str,
        arguments: JsonObject,
        task: JsonObject,
        context: &CallContext,
    ) -> Result<JsonObject, ToolSourceError> {
        let mut params = Map::new();
        params.insert("name".into(), json!(tool));
        params.insert("arguments".into(), Value::Object(arguments));
        params.insert("task".into(), Value::Object(task));
        let mut request = Request::new("tools/call", params);
        request.name = Some(tool.to_owned());
        request.context = context.clone();
        self.bounded(self.task_request(request)).await
    }

    /// `tasks/get` of the task `id`: the task as the server says it stands.
    ///
    /// # Errors
    ///
    /// A task the server does not know (`-32602`) is [`NotFound`](Reason::NotFound); else as
    /// [`Mcp::call_as_task`].
    pub async fn get_task(&self, id: &str) -> Result<JsonObject, ToolSourceError> {
        let request = Request::new("tasks/get", with_id(id));
        self.bounded(self.task_request(request)).await
    }

    /// `tasks/result` of the task `id`: the result of the request that made it, once the task
    /// has ended (the server holds the answer until then, within the source's
    /// `max_call_time`). What the server asks meanwhile is asked of `context`'s client.
    ///
    /// # Errors
    ///
    /// As [`Mcp::get_task`]; [`Unavailable`](Reason::Unavailable) past `max_call_time`.
    pub async fn task_result(
        &self,
        id: &str,
        context: &CallContext,
    ) -> Result<JsonObject, ToolSourceError> {
        let mut request = Request::new("tasks/result", with_id(id));
        request.context = context.clone();
        let wait = self.options.max_call_time.max(self.options.timeout);
        tokio::time::timeout(wait, self.task_request(request))
            .await
            .unwrap_or_else(|_| {
                Err(self.error(Reason::unavailable(format!(
                    "the server gave no result of the task within {wait:?}"
                ))))
            })
    }

    /// `tasks/cancel` of the task `id`: the task as the server says it stands after.
    ///
    /// # Errors
    ///
    /// As [`Mcp::get_task`].
    pub async fn cancel_task(&self, id: &str) -> Result<JsonObject, ToolSourceError> {
        let request = Request::new("tasks/cancel", with_id(id));
        self.bounded(self.task_request(request)).await
    }

    /// The server's tasks (every page of `tasks/list`), as it wrote them.
    ///
    /// # Errors
    ///
    /// As [`Mcp::list_resources`].
    pub async fn list_tasks(&self) -> Result<Vec<Value>, ToolSourceError> {
        self.every_page("tasks/list", "tasks").await
    }

    /// A waiter for the task statuses the server tells (`notifications/tasks/status`), where its
    /// transport hears the server unasked; `None` where it does not.
    pub fn task_statuses(&self) -> Option<super::TaskStatuses> {
        self.transport.task_statuses()
    }

    /// Sends `request` and gives its result as written, or its JSON-RPC error as a reason.
    async fn task_request(&self, request: Request) -> Result<JsonObject, ToolSourceError> {
        let method = request.method;
        let reply = self.send(request).await.map_err(|fault| {
            self.error(match fault {
                Fault::TooLarge => Reason::call_failed(format!(
                    "The answer is more than {} bytes, more than can be read here.",
                    self.options.max_response_bytes
                )),
                Fault::Elsewhere => Fault::elsewhere_reason(),
                Fault::Failed(reason) => reason,
            })
        })?;
        reply
            .outcome
            .map_err(|error| self.error(refused(method, &error)))
    }
}

/// The params `{taskId}`.
fn with_id(id: &str) -> JsonObject {
    let mut params = Map::new();
    params.insert("taskId".into(), json!(id));
    params
}
