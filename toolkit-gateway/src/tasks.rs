//! The tasks of a gateway client that drives them (MCP 2025-11-25), passed to the MCP source
//! that runs them: a task tool's `tools/call` made as a task reaches its source as one, and
//! `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list` reach the source that owns the
//! task.
//!
//! Task ids are served as `source/nonce/id` and kept per session (`served_tasks.rs`): a
//! session reaches only the tasks its own client's calls created (no other session's, no task
//! the gateway did not create, none of another source), `tasks/list` lists only those, a
//! session keeps at most [`MAX_TASKS_PER_SESSION`] of them (a new task past it is refused; no
//! other session's is forgotten), and they are forgotten when the session ends. A source whose
//! task id is over 256 bytes has its task refused.
//!
//! The statuses a source tells of a task (`notifications/tasks/status`) are told to the session
//! that created it, and to no other (`task_statuses.rs`).
//!
//! A call passed through as a task is counted in the gateway's metrics as any call of its
//! source is (`toolkit_gateway_tool_calls_total` by source, tool and outcome, its latency,
//! upstream errors): the call is the task's creation (`ok` once the source took it). A
//! `tasks/get`, `tasks/result` or `tasks/cancel` the source fails (but for a task or input it
//! does not know, or a method it does not have) counts as an upstream error of the source.
//! It is recorded in the audit (`[audit]`) as a tool call too, its outcome the creation's.

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;
use toolkit_mcp::Mcp;

use super::audit::{Audit, Entry, Kind, outcome_label};
use super::metrics::Metrics;
use super::served_tasks::{MAX_TASKS_PER_SESSION, ServedTasks, is_end};
use super::task_statuses::StatusRelay;
use toolkit_core::{BoxFuture, CallContext, JsonObject, Reason, ToolSourceError};
use toolkit_serve::failure::echo;
use toolkit_serve::{Refusal, TaskSession, TaskStatusSink, Tasks, unknown_task};

/// The `_meta` key that ties a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The MCP sources by name.
type Upstreams = Vec<(String, Arc<Mcp>)>;

/// The MCP sources, whose tasks are passed through.
#[derive(Debug)]
pub struct UpstreamTasks {
    /// The sources, replaced by a reload ([`UpstreamTasks::replace`]).
    upstreams: RwLock<Arc<Upstreams>>,
    /// The served ids handed out, per session (`served_tasks.rs`).
    served: Arc<ServedTasks>,
    /// Where the calls passed through are counted.
    metrics: Arc<Metrics>,
    /// Where the statuses the sources tell go (`task_statuses.rs`).
    statuses: StatusRelay,
    /// Where each call passed through is recorded (`[audit]`).
    audit: Option<Audit>,
}

impl UpstreamTasks {
    /// The tasks of the sources `(name, source)`, their calls counted in `metrics`.
    pub fn new(upstreams: Vec<(String, Arc<Mcp>)>, metrics: Arc<Metrics>) -> Self {
        Self::with_cap(upstreams, metrics, MAX_TASKS_PER_SESSION)
    }

    /// As [`UpstreamTasks::new`], at most `cap` tasks kept per session.
    fn with_cap(upstreams: Vec<(String, Arc<Mcp>)>, metrics: Arc<Metrics>, cap: usize) -> Self {
        Self {
            upstreams: RwLock::new(Arc::new(upstreams)),
            served: Arc::new(ServedTasks::new(cap)),
            metrics,
            statuses: StatusRelay::default(),
            audit: None,
        }
    }

    /// Records each call passed through in `audit` (none: not recorded): the record's outcome is
    /// the task's creation's.
    #[must_use]
    pub(crate) fn audited(mut self, audit: Option<Audit>) -> Self {
        self.audit = audit;
        self
    }

    /// The sources as they are now.
    fn upstreams(&self) -> Arc<Upstreams> {
        Arc::clone(
            &self
                .upstreams
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn source(&self, name: &str) -> Option<Arc<Mcp>> {
        self.upstreams()
            .iter()
            .find(|(source, _)| source == name)
            .map(|(_, mcp)| Arc::clone(mcp))
    }

    /// Passes tasks to `upstreams` from now on (a reloaded configuration's). The tasks of a
    /// source removed, or made anew (another connection), are forgotten: their ids mean nothing
    /// to what now has the source's name. A source kept keeps its tasks.
    pub(crate) fn replace(&self, upstreams: Upstreams) {
        let mut current = self
            .upstreams
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        for (name, mcp) in current.iter() {
            let kept = upstreams
                .iter()
                .any(|(new, same)| new == name && Arc::ptr_eq(same, mcp));
            if !kept {
                self.served.forget_source(name);
            }
        }
        *current = Arc::new(upstreams);
        drop(current);
        self.statuses.listen(&self.upstreams(), &self.served);
    }
}

/// The session a request of `context` comes from.
fn session(context: &CallContext) -> Result<&TaskSession, Refusal> {
    context
        .extension::<TaskSession>()
        .ok_or_else(|| Refusal::Failed("Tasks are driven within a session only.".into()))
}

/// `result`'s task ids (a `Task`'s `taskId`, a created task's, and the related task of
/// `_meta`) that are the source's `id`, served as `served`.
fn serve_ids(result: &mut JsonObject, id: &str, served: &str) {
    let serve = |value: Option<&mut Value>| {
        if let Some(Value::String(named)) = value
            && named == id
        {
            *named = served.to_owned();
        }
    };
    serve(result.get_mut("taskId"));
    if let Some(Value::Object(task)) = result.get_mut("task") {
        serve(task.get_mut("taskId"));
    }
    if let Some(Value::Object(meta)) = result.get_mut("_meta")
        && let Some(Value::Object(related)) = meta.get_mut(RELATED_TASK)
    {
        serve(related.get_mut("taskId"));
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
            let slot = self.served.reserve(session(context)?)?;
            self.statuses.listen(&self.upstreams(), &self.served);
            let open = match &self.audit {
                Some(audit) => Some(
                    audit
                        .begin(Entry {
                            context,
                            kind: Kind::ToolCall,
                            source,
                            name: tool,
                            input: &arguments,
                        })
                        .await,
                ),
                None => None,
            };
            let created = self
                .metrics
                .metered(
                    source,
                    tool,
                    mcp.call_as_task(tool, arguments, task, context),
                )
                .await;
            if let Some(open) = open {
                open.end(outcome_label(&created));
            }
            let mut result = created.map_err(|error| refusal(&error))?;
            if let Some(Value::String(id)) = result.get("task").and_then(|task| task.get("taskId"))
            {
                let id = id.clone();
                let sink = context.extension::<TaskStatusSink>().cloned();
                // The source reloaded meanwhile: the task is of a connection no longer served.
                if !self
                    .source(source)
                    .is_some_and(|now| Arc::ptr_eq(&now, &mcp))
                {
                    return Err(Refusal::Failed(format!(
                        "The source {} was reloaded while the task was created; create it again.",
                        cut(source)
                    )));
                }
                let served = slot.keep((source, &id, mcp.connection()), sink)?;
                serve_ids(&mut result, &id, &served);
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
            let session = session(context)?.id();
            if method == "tasks/list" {
                return Ok(self.list(session).await);
            }
            let served = match params.get("taskId") {
                Some(Value::String(id)) => id.as_str(),
                _ => return Err(Refusal::InvalidParams("taskId must be a string.".into())),
            };
            let unknown = || unknown_task(served);
            let (source, id, connection) =
                self.served.route(session, served).ok_or_else(unknown)?;
            let mcp = self.source(&source).ok_or_else(unknown)?;
            // Made on a connection to the source before this one: the id means nothing now.
            if mcp.connection() != connection {
                return Err(unknown());
            }
            let answered = match method {
                "tasks/get" => mcp.get_task(&id).await,
                "tasks/result" => mcp.task_result(&id, context).await,
                "tasks/cancel" => mcp.cancel_task(&id).await,
                other => {
                    return Err(Refusal::Unsupported(format!("{other} is not served")));
                }
            };
            // Connected to again meanwhile: the answer may be of another task.
            if mcp.connection() != connection {
                return Err(unknown());
            }
            let mut result = answered.map_err(|error| {
                let reason = super::metrics::reason_label(&error);
                if !matches!(reason, "invalid_input" | "not_found" | "unsupported") {
                    self.metrics.record_upstream_error(&source, reason);
                }
                refusal(&error)
            })?;
            serve_ids(&mut result, &id, served);
            if method == "tasks/result" || is_end(result.get("status").and_then(Value::as_str)) {
                self.served.ended(session, served);
            }
            Ok(result)
        })
    }
}

impl UpstreamTasks {
    /// Every source's tasks that the session `session` holds, their ids served (a source that
    /// fails is left out, and logged).
    async fn list(&self, session: u64) -> JsonObject {
        let mut tasks = Vec::new();
        for (source, mcp) in self.upstreams().iter() {
            match mcp.list_tasks().await {
                Ok(listed) => {
                    for task in listed {
                        let Value::Object(mut task) = task else {
                            continue;
                        };
                        let Some(Value::String(id)) = task.get("taskId").cloned() else {
                            continue;
                        };
                        let task_of = (source.as_str(), id.as_str(), mcp.connection());
                        if let Some(served) = self.served.served_of(session, task_of) {
                            serve_ids(&mut task, &id, &served);
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
    fn the_ids_of_a_result_are_served() {
        let mut created = json!({"task": {"taskId": "t1", "status": "working"},
            "_meta": {RELATED_TASK: {"taskId": "t1"}}, "taskId": "other"})
        .as_object()
        .cloned()
        .unwrap();
        serve_ids(&mut created, "t1", "a/n/t1");
        assert_eq!(created["task"]["taskId"], "a/n/t1");
        assert_eq!(created["_meta"][RELATED_TASK]["taskId"], "a/n/t1");
        assert_eq!(created["taskId"], "other");
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
        let server = toolkit_serve::McpServer::new(gateway.toolkit().unwrap())
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

    /// One stdio session of a served gateway, as a client that declares tasks.
    struct Session {
        lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
        writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
        serving: tokio::task::JoinHandle<Result<(), toolkit_serve::ServeError>>,
        next: u64,
    }

    impl Session {
        async fn open(toolkit: toolkit_core::Toolkit, tasks: &Arc<UpstreamTasks>) -> Self {
            let server =
                toolkit_serve::McpServer::new(toolkit).tasks(Arc::clone(tasks) as Arc<dyn Tasks>);
            let (client, served) = tokio::io::duplex(1 << 20);
            let (server_in, server_out) = tokio::io::split(served);
            let serving = tokio::spawn(server.serve_io(server_in, server_out));
            let (reader, writer) = tokio::io::split(client);
            let lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(reader));
            let mut session = Self {
                lines,
                writer,
                serving,
                next: 1,
            };
            let initialized = session
                .ask(
                    "initialize",
                    json!({"protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {}}, "clientInfo": {"name": "t", "version": "1"}}),
                )
                .await;
            assert!(
                initialized["result"]["capabilities"]["tasks"].is_object(),
                "{initialized}"
            );
            session
                .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            session
        }

        async fn send(&mut self, message: Value) {
            use tokio::io::AsyncWriteExt as _;
            let mut line = message.to_string();
            line.push('\n');
            self.writer.write_all(line.as_bytes()).await.unwrap();
        }

        async fn ask(&mut self, method: &str, params: Value) -> Value {
            let id = self.next;
            self.next += 1;
            self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
                .await;
            answer_to(&mut self.lines, id).await
        }

        /// A task made by a call of server-everything's research tool: the answer.
        async fn create(&mut self) -> Value {
            self.ask(
                "tools/call",
                json!({"name": "everything__simulate-research-query",
                "arguments": {"topic": "tides"}, "task": {"ttl": 60000}}),
            )
            .await
        }
    }

    fn created_id(created: &Value) -> String {
        created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_sessions_tasks_never_evict_anothers() {
        let mut gateway =
            crate::Gateway::new(crate::resources::tests::config("tasks-two", 0)).unwrap();
        let refresh = gateway.refresh().await;
        assert!(refresh.failures.is_empty(), "{:?}", refresh.failures);
        let upstreams = gateway
            .upstreams
            .iter()
            .map(|(name, _, mcp)| (name.clone(), Arc::clone(mcp)))
            .collect();
        // A cap of 2 tasks (per session).
        let tasks = Arc::new(UpstreamTasks::with_cap(upstreams, Arc::default(), 2));
        let toolkit = gateway.toolkit().unwrap();
        let mut alice = Session::open(toolkit.clone(), &tasks).await;
        let mut bob = Session::open(toolkit, &tasks).await;
        let hers = created_id(&alice.create().await);
        assert!(hers.starts_with("everything/"), "{hers}");
        for _ in 0..2 {
            let his = bob.create().await;
            assert!(created_id(&his).starts_with("everything/"), "{his}");
        }
        // Bob at his cap: refused, saying so; nothing of alice's is touched.
        let refused = bob.create().await;
        let words = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(words.contains("at most 2 tasks"), "{refused}");
        let got = alice.ask("tasks/get", json!({"taskId": hers})).await;
        assert_eq!(got["result"]["taskId"], hers.as_str(), "{got}");
        let listed = alice.ask("tasks/list", json!({})).await;
        assert_eq!(
            listed["result"]["tasks"].as_array().map(Vec::len),
            Some(1),
            "{listed}"
        );
        alice.serving.abort();
        bob.serving.abort();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_task_of_a_connection_before_is_unknown_once_the_source_is_connected_to_again() {
        let mut gateway =
            crate::Gateway::new(crate::resources::tests::config("tasks-again", 0)).unwrap();
        let refresh = gateway.refresh().await;
        assert!(refresh.failures.is_empty(), "{:?}", refresh.failures);
        let everything = Arc::clone(&gateway.upstreams[0].2);
        let tasks = Arc::new(gateway.tasks());
        let toolkit = gateway.toolkit().unwrap();
        let mut alice = Session::open(toolkit.clone(), &tasks).await;
        let mut bob = Session::open(toolkit, &tasks).await;
        let hers = created_id(&alice.create().await);
        let got = alice.ask("tasks/get", json!({"taskId": hers})).await;
        assert_eq!(got["result"]["taskId"], hers.as_str(), "{got}");
        // The source's process ends; bob's call starts it again.
        everything.close().await;
        let his = created_id(&bob.create().await);
        assert!(his.starts_with("everything/"), "{his}");
        let got = alice.ask("tasks/get", json!({"taskId": hers})).await;
        let words = got["error"]["message"].as_str().unwrap_or_default();
        assert!(words.contains("is known here"), "{got}");
        let listed = alice.ask("tasks/list", json!({})).await;
        assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
        let got = bob.ask("tasks/get", json!({"taskId": his})).await;
        assert_eq!(got["result"]["taskId"], his.as_str(), "{got}");
        alice.serving.abort();
        bob.serving.abort();
    }
}
