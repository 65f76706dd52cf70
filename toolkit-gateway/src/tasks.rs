//! The tasks of a gateway client that drives them (MCP 2025-11-25), passed to the MCP source
//! that runs them: a task tool's `tools/call` made as a task reaches its source as one, and
//! `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list` reach the source that owns the
//! task.
//!
//! Task ids are served as `source/id`, so two sources' ids never meet, and only the ids this
//! gateway handed out are taken back: a client cannot name a task the gateway did not create
//! through one of its clients' calls, nor one of another source (the id names its source, and
//! is asked of it only). `tasks/list` lists only those tasks. At most [`MAX_TASKS`] ids are
//! kept, the oldest forgotten first.
//!
//! The statuses a source tells of a task (`notifications/tasks/status`) are told to the session
//! that created it, and to no other (`task_statuses.rs`).
//!
//! A call passed through as a task is counted in the gateway's metrics as any call of its
//! source is (`toolkit_gateway_tool_calls_total` by source, tool and outcome, its latency,
//! upstream errors): the call is the task's creation (`ok` once the source took it). A
//! `tasks/get`, `tasks/result` or `tasks/cancel` the source fails (but for a task or input it
//! does not know, or a method it does not have) counts as an upstream error of the source.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use toolkit_runtime::mcp::Mcp;

use super::metrics::Metrics;
use super::task_statuses::StatusRelay;
use toolkit_runtime::serve::failure::echo;
use toolkit_runtime::serve::{Refusal, Tasks, unknown_task};
use toolkit_runtime::{BoxFuture, CallContext, JsonObject, Reason, ToolSourceError};

/// How many task ids the gateway keeps (the oldest is forgotten past it).
pub const MAX_TASKS: usize = 4096;

/// The `_meta` key that ties a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The MCP sources, whose tasks are passed through.
#[derive(Debug)]
pub struct UpstreamTasks {
    upstreams: Vec<(String, Arc<Mcp>)>,
    /// The served ids handed out, oldest first.
    known: Mutex<VecDeque<String>>,
    cap: usize,
    /// Where the calls passed through are counted.
    metrics: Arc<Metrics>,
    /// Where the statuses the sources tell go (`task_statuses.rs`).
    statuses: StatusRelay,
}

impl UpstreamTasks {
    /// The tasks of the sources `(name, source)`, their calls counted in `metrics`.
    pub fn new(upstreams: Vec<(String, Arc<Mcp>)>, metrics: Arc<Metrics>) -> Self {
        Self::with_cap(upstreams, metrics, MAX_TASKS)
    }

    fn with_cap(upstreams: Vec<(String, Arc<Mcp>)>, metrics: Arc<Metrics>, cap: usize) -> Self {
        Self {
            upstreams,
            known: Mutex::new(VecDeque::new()),
            cap: cap.max(1),
            metrics,
            statuses: StatusRelay::default(),
        }
    }

    fn source(&self, name: &str) -> Option<&Arc<Mcp>> {
        self.upstreams
            .iter()
            .find(|(source, _)| source == name)
            .map(|(_, mcp)| mcp)
    }

    /// Keeps the served id `served`, forgetting the oldest past the cap.
    fn keep(&self, served: &str) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.iter().any(|id| id == served) {
            return;
        }
        if known.len() >= self.cap
            && let Some(forgotten) = known.pop_front()
        {
            self.statuses.forget(&forgotten);
        }
        known.push_back(served.to_owned());
    }

    fn knows(&self, served: &str) -> bool {
        self.known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|id| id == served)
    }

    /// The source and its id of a served task id this gateway handed out.
    fn route<'a>(&'a self, served: &'a str) -> Result<(&'a str, &'a Arc<Mcp>, &'a str), Refusal> {
        let unknown = || unknown_task(served);
        if !self.knows(served) {
            return Err(unknown());
        }
        let (source, id) = served.split_once('/').ok_or_else(unknown)?;
        let mcp = self.source(source).ok_or_else(unknown)?;
        Ok((source, mcp, id))
    }
}

/// The served id of `source`'s task `id`.
pub fn served_id(source: &str, id: &str) -> String {
    format!("{source}/{id}")
}

/// `result`'s task ids (a `Task`'s `taskId`, a created task's, and the related task of
/// `_meta`) served under `source`.
fn serve_ids(source: &str, result: &mut JsonObject) {
    if let Some(Value::String(id)) = result.get_mut("taskId") {
        *id = served_id(source, id);
    }
    if let Some(Value::Object(task)) = result.get_mut("task")
        && let Some(Value::String(id)) = task.get_mut("taskId")
    {
        *id = served_id(source, id);
    }
    if let Some(Value::Object(meta)) = result.get_mut("_meta")
        && let Some(Value::Object(related)) = meta.get_mut(RELATED_TASK)
        && let Some(Value::String(id)) = related.get_mut("taskId")
    {
        *id = served_id(source, id);
    }
}

/// What the client reads of a source's failure.
fn refusal(error: &ToolSourceError) -> Refusal {
    match &error.reason {
        Reason::NotFound { description } => Refusal::InvalidParams(description.clone()),
        Reason::Unsupported { description } => Refusal::Unsupported(description.clone()),
        _ => Refusal::Failed(error.to_string()),
    }
}

/// A served value echoed in a refusal, cut.
fn cut(value: &str) -> String {
    format!("{:?}", echo(value))
}

impl Tasks for UpstreamTasks {
    fn call<'a>(
        &'a self,
        source: &'a str,
        tool: &'a str,
        arguments: JsonObject,
        task: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            let Some(mcp) = self.source(source) else {
                return Err(Refusal::Failed(format!(
                    "{} is no MCP source.",
                    cut(source)
                )));
            };
            self.statuses.listen(&self.upstreams, serve_ids);
            let mut result = self
                .metrics
                .metered(
                    source,
                    tool,
                    mcp.call_as_task(tool, arguments, task, context),
                )
                .await
                .map_err(|error| refusal(&error))?;
            serve_ids(source, &mut result);
            if let Some(Value::String(id)) = result.get("task").and_then(|task| task.get("taskId"))
            {
                self.keep(id);
                self.statuses.created(id, context);
            }
            Ok(result)
        })
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
        Box::pin(async move {
            if method == "tasks/list" {
                return Ok(self.list().await);
            }
            let served = match params.get("taskId") {
                Some(Value::String(id)) => id.as_str(),
                _ => return Err(Refusal::InvalidParams("taskId must be a string.".into())),
            };
            let (source, mcp, id) = self.route(served)?;
            let answered = match method {
                "tasks/get" => mcp.get_task(id).await,
                "tasks/result" => mcp.task_result(id, context).await,
                "tasks/cancel" => mcp.cancel_task(id).await,
                other => {
                    return Err(Refusal::Unsupported(format!("{other} is not served")));
                }
            };
            let mut result = answered.map_err(|error| {
                let reason = super::metrics::reason_label(&error);
                if !matches!(reason, "invalid_input" | "not_found" | "unsupported") {
                    self.metrics.record_upstream_error(source, reason);
                }
                refusal(&error)
            })?;
            serve_ids(source, &mut result);
            Ok(result)
        })
    }
}

impl UpstreamTasks {
    /// Every source's tasks that this gateway handed out, their ids served (a source that
    /// fails is left out, and logged).
    async fn list(&self) -> JsonObject {
        let mut tasks = Vec::new();
        for (source, mcp) in &self.upstreams {
            match mcp.list_tasks().await {
                Ok(listed) => {
                    for task in listed {
                        let Value::Object(mut task) = task else {
                            continue;
                        };
                        serve_ids(source, &mut task);
                        if matches!(task.get("taskId"), Some(Value::String(id)) if self.knows(id)) {
                            tasks.push(Value::Object(task));
                        }
                    }
                }
                Err(error) if matches!(error.reason, Reason::Unsupported { .. }) => {}
                Err(error) => tracing::warn!(%source, "tasks left out of tasks/list: {error}"),
            }
        }
        let mut result = JsonObject::new();
        result.insert("tasks".into(), Value::Array(tasks));
        result
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_are_served_under_their_source_and_only_those_handed_out_are_taken() {
        let tasks = UpstreamTasks::with_cap(Vec::new(), Arc::default(), 2);
        let mut created = json!({"task": {"taskId": "t1", "status": "working"},
            "_meta": {RELATED_TASK: {"taskId": "t1"}}})
        .as_object()
        .cloned()
        .unwrap();
        serve_ids("a", &mut created);
        assert_eq!(created["task"]["taskId"], "a/t1");
        assert_eq!(created["_meta"][RELATED_TASK]["taskId"], "a/t1");
        // Not handed out: refused, whatever it names.
        assert!(matches!(
            tasks.route("a/t1"),
            Err(Refusal::InvalidParams(_))
        ));
        tasks.keep("a/t1");
        tasks.keep("b/t1");
        assert!(tasks.knows("a/t1") && tasks.knows("b/t1"));
        // Handed out, but of a source the gateway does not have.
        assert!(matches!(
            tasks.route("b/t1"),
            Err(Refusal::InvalidParams(_))
        ));
        // The cap: the oldest is forgotten.
        tasks.keep("c/t1");
        assert!(!tasks.knows("a/t1"));
        assert!(tasks.knows("b/t1") && tasks.knows("c/t1"));
    }

    #[test]
    fn ids_kept_from_many_threads_at_once_stay_within_the_cap() {
        let tasks = Arc::new(UpstreamTasks::with_cap(Vec::new(), Arc::default(), 64));
        let threads: Vec<_> = (0..8)
            .map(|thread| {
                let tasks = Arc::clone(&tasks);
                std::thread::spawn(move || {
                    for n in 0..500 {
                        let id = served_id(&format!("s{thread}"), &n.to_string());
                        tasks.keep(&id);
                        assert!(tasks.knows(&id) || tasks.known.lock().unwrap().len() == 64);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let known = tasks.known.lock().unwrap();
        assert_eq!(known.len(), 64);
        let distinct: std::collections::HashSet<_> = known.iter().collect();
        assert_eq!(distinct.len(), 64, "an id kept twice");
    }

    /// A line of JSON-RPC read from the server, as JSON.
    async fn answer_to(
        lines: &mut tokio::io::Lines<
            tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
        >,
        id: u64,
    ) -> Value {
        loop {
            let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_passed_through_as_a_task_is_counted_in_the_metrics() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

        let mut gateway = crate::Gateway::new(crate::resources::tests::config("tasks", 0)).unwrap();
        let refresh = gateway.refresh().await;
        assert!(refresh.failures.is_empty(), "{:?}", refresh.failures);
        let server = toolkit_runtime::serve::McpServer::new(gateway.toolkit().unwrap())
            .tasks(Arc::new(gateway.tasks()));
        let (client, served) = tokio::io::duplex(1 << 20);
        let (server_in, server_out) = tokio::io::split(served);
        let serving = tokio::spawn(server.serve_io(server_in, server_out));
        let (reader, mut writer) = tokio::io::split(client);
        let mut lines = tokio::io::BufReader::new(reader).lines();
        let mut send = async |message: Value| {
            let mut line = message.to_string();
            line.push('\n');
            writer.write_all(line.as_bytes()).await.unwrap();
        };
        send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
            "clientInfo": {"name": "tasks", "version": "1"}}}),
        )
        .await;
        let initialized = answer_to(&mut lines, 1).await;
        assert!(
            initialized["result"]["capabilities"]["tasks"].is_object(),
            "{initialized}"
        );
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "everything__simulate-research-query", "arguments": {"topic": "tides"},
            "task": {"ttl": 60000}}}),
        )
        .await;
        let created = answer_to(&mut lines, 2).await;
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_default();
        assert!(id.starts_with("everything/"), "{created}");
        let metrics = gateway.metrics().render();
        for expected in [
            r#"toolkit_gateway_tool_calls_total{source="everything",tool="simulate-research-query",outcome="ok"} 1"#,
            r#"toolkit_gateway_tool_call_duration_seconds_count{source="everything",tool="simulate-research-query"} 1"#,
        ] {
            assert!(metrics.contains(expected), "{expected} not in\n{metrics}");
        }
        serving.abort();
    }
}
