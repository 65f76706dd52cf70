//! Tasks passed through (MCP 2025-11-25): to a client that declares `capabilities.tasks` at
//! `initialize`, a host that gives [`Tasks`] (the gateway) serves its sources' task tools as
//! they are listed upstream (`execution.taskSupport`), takes a `tools/call` made as a task, and
//! answers `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list` through the host.
//!
//! rmcp 3.11 knows only the 2026-07-28 Tasks extension (`tasks/get`, `tasks/update`,
//! `tasks/cancel` under `io.modelcontextprotocol/tasks`), whose task model differs, and its
//! types drop what the 2025-11-25 form adds (a tool's `execution`, a call's `task`, the
//! `tasks` capability). So the stdio transport (`stdio/transport.rs`), and the Streamable HTTP
//! layer for each session ([`sessions`]), rename, for such a client, the requests of the
//! 2025-11-25 form to methods rmcp passes on as they were written ([`TaskDialect::incoming`]),
//! and they are answered here as JSON; the `initialize` answer gains the `tasks` capability
//! ([`TaskDialect::outgoing`]). A session drives only the tasks it created ([`owners`]); the host
//! keeps its tasks by the session a request came in ([`session`]) and tells each task's statuses
//! to it ([`status`]). A
//! client that declares no tasks is served as before: task tools listed without `execution`,
//! their calls run as tasks upstream by the MCP source.

pub(crate) mod owners;
pub(crate) mod session;
pub(crate) mod sessions;
pub(crate) mod status;

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CustomRequest, CustomResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::relay::ClientRelay;
use super::resources::{Refusal, error};
use super::served::ServedToolkit;
use crate::tasks::owners::{TaskOwners, unknown_task};
use crate::tasks::status::TaskStatusSink;
use toolkit_core::context::Relay;
use toolkit_core::{BoxFuture, CallContext, JsonObject};

/// What a host does with the tasks of its sources' tools, for a client that drives tasks
/// itself. Every answer is the MCP result as written (JSON), its task ids the ones the client
/// is to use.
pub trait Tasks: std::fmt::Debug + Send + Sync + 'static {
    /// `tools/call` of `tool` of `source` (the names the source knows) as a task (`task`, the
    /// client's parameter): the `CreateTaskResult`, or a plain result when the source ran the
    /// call without a task. What the source asks on the way is asked through `context`, whose
    /// [`TaskStatusSink`](super::TaskStatusSink) extension tells the client the task's statuses
    /// and whose [`TaskSession`](super::TaskSession) extension names the client's session.
    fn call<'a>(
        &'a self,
        source: &'a str,
        tool: &'a str,
        arguments: JsonObject,
        task: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>>;

    /// `tasks/get`, `tasks/result`, `tasks/cancel` or `tasks/list` (`method`) with its params
    /// as the client wrote them (`_meta` removed); what the source asks meanwhile (for
    /// `tasks/result`) is asked through `context`, whose [`TaskSession`](super::TaskSession)
    /// extension names the client's session.
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<JsonObject, Refusal>>;
}

/// A host's tasks, or none.
pub(crate) type Hosted = Option<Arc<dyn Tasks>>;

/// The prefix of the methods the transport renames for a client that speaks tasks.
const RENAMED: &str = "toolkit-tasks:";

/// The request extension that marks a request the transport renamed ([`TaskDialect::incoming`]):
/// only a marked request is answered as a task request ([`answer`]), so that a client that
/// names a renamed method itself (one that declared no tasks, a stateless request) is not.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Renamed;

impl Renamed {
    /// Whether the transport renamed `request`: the mark in its extensions (stdio), or in those
    /// of the HTTP request that carried it.
    fn marks(request: &CustomRequest, context: &RequestContext<RoleServer>) -> bool {
        let on = |extensions: &rmcp::model::Extensions| {
            extensions.get::<Self>().is_some()
                || extensions
                    .get::<axum::http::request::Parts>()
                    .is_some_and(|parts| parts.extensions.get::<Self>().is_some())
        };
        on(&request.extensions) || on(&context.extensions)
    }
}

/// The requests of the 2025-11-25 task form (beside a `tools/call` with `task`).
const TASK_METHODS: [&str; 4] = ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"];

/// What one session's transport knows of its client's tasks: whether it declared them, and the
/// id of its `initialize`, whose answer gains the `tasks` capability.
#[derive(Debug, Default)]
pub(crate) struct TaskDialect {
    /// The host gives [`Tasks`].
    hosted: bool,
    /// The client declared `capabilities.tasks`.
    speaks: bool,
    /// The id of the client's `initialize`, until it is answered.
    initialize: Option<Value>,
}

impl TaskDialect {
    /// The dialect of a session of a host that gives [`Tasks`] (`hosted`) or not.
    pub(crate) fn new(hosted: bool) -> Self {
        Self {
            hosted,
            ..Self::default()
        }
    }

    /// Reads a message from the client before rmcp does: an `initialize` says whether the client
    /// speaks tasks; for one that does, `tools/list`, a `tools/call` with `task` and the
    /// `tasks/*` requests are renamed, to be answered as written ([`answer`]). Whether it
    /// renamed the message: the transport then marks the request ([`Renamed`]).
    pub(crate) fn incoming(&mut self, message: &mut Value) -> bool {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return false;
        };
        if method == "initialize" {
            self.speaks = self.hosted
                && message
                    .pointer("/params/capabilities/tasks")
                    .is_some_and(Value::is_object);
            self.initialize = self.speaks.then(|| message.get("id").cloned()).flatten();
            return false;
        }
        if !self.speaks || message.get("id").is_none() {
            return false;
        }
        let renamed = match method {
            "tools/list" => true,
            "tools/call" => message
                .pointer("/params/task")
                .is_some_and(Value::is_object),
            other => TASK_METHODS.contains(&other),
        };
        if renamed {
            let name = format!("{RENAMED}{method}");
            message["method"] = Value::String(name);
        }
        renamed
    }

    /// Writes a message to the client after rmcp does: the answer to the `initialize` of a
    /// client that speaks tasks says the server takes tasks of `tools/call`, lists them and
    /// cancels them.
    pub(crate) fn outgoing(&mut self, message: &mut Value) {
        let Some(id) = &self.initialize else {
            return;
        };
        if message.get("method").is_some() || message.get("id") != Some(id) {
            return;
        }
        self.initialize = None;
        if let Some(Value::Object(capabilities)) = message.pointer_mut("/result/capabilities") {
            capabilities.insert(
                "tasks".into(),
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            );
        }
    }

    /// Whether the client declared tasks (of a host that gives them) at its `initialize`.
    pub(crate) fn speaks(&self) -> bool {
        self.speaks
    }

    /// Whether an answer may need [`TaskDialect::outgoing`] (the `initialize` is not answered yet).
    pub(crate) fn waits(&self) -> bool {
        self.initialize.is_some()
    }
}

/// Answers a request the transport renamed; `None` for any other custom request.
pub(crate) async fn answer(
    handler: &impl ServerHandler,
    toolkit: &ServedToolkit,
    hosted: &Hosted,
    owners: &TaskOwners,
    ended: &CancellationToken,
    request: &CustomRequest,
    context: RequestContext<RoleServer>,
) -> Option<Result<CustomResult, ErrorData>> {
    let method = request.method.strip_prefix(RENAMED)?;
    if !Renamed::marks(request, &context) {
        return None;
    }
    let mut params = match request.params.clone() {
        Some(Value::Object(params)) => params,
        None | Some(Value::Null) => JsonObject::new(),
        Some(_) => {
            return Some(Err(ErrorData::invalid_params(
                "params must be an object",
                None,
            )));
        }
    };
    Some(match method {
        "tools/list" => Ok(CustomResult(listing(toolkit, &context))),
        "tools/call" => call(handler, toolkit, hosted, params, (owners, ended), context)
            .await
            .inspect(|CustomResult(result)| {
                if let Value::Object(result) = result {
                    owners.created(result);
                }
            }),
        method if TASK_METHODS.contains(&method) => match hosted {
            Some(tasks) => {
                params.remove("_meta");
                if let Some(Value::String(id)) = params.get("taskId")
                    && !owners.owns(id)
                {
                    return Some(Err(error(unknown_task(id), false)));
                }
                let relayed = relayed(&context).with_extension(session(owners, ended));
                tasks
                    .request(method, params, &relayed)
                    .await
                    .map(|result| match method {
                        "tasks/list" => owners.own_only(result),
                        _ => result,
                    })
                    .map(|result| CustomResult(Value::Object(result)))
                    .map_err(|refusal| error(refusal, false))
            }
            None => Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("{method} is not served"),
                None,
            )),
        },
        other => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            other.to_owned(),
            None,
        )),
    })
}

/// The tools as `tools/list` serves them, a tool passed through as a task with its
/// `execution` as its source listed it.
fn listing(toolkit: &ServedToolkit, context: &RequestContext<RoleServer>) -> Value {
    let served = toolkit.served_to(&super::asker::principal_of(&context.extensions));
    let tools: Vec<Value> = served
        .listing
        .iter()
        .map(|(name, listed)| {
            let mut listed = serde_json::to_value(listed).unwrap_or(Value::Null);
            if let Some(tool) = served.toolkit.get(name)
                && passed_through(tool)
                && let (Some(execution), Value::Object(listed)) =
                    (tool.definition().execution(), &mut listed)
            {
                listed.insert("execution".into(), Value::Object(execution.clone()));
            }
            listed
        })
        .collect();
    json!({ "tools": tools })
}

/// Whether a tool's calls made as tasks go to its source as tasks: a tool of a source, listed
/// with a `taskSupport` other than `forbidden`, that needs no approval (a call that does is
/// asked of the host's approver, which only a plain call waits for).
fn passed_through(tool: &toolkit_core::Tool) -> bool {
    let support = tool
        .definition()
        .execution()
        .and_then(|execution| execution.get("taskSupport"))
        .and_then(Value::as_str);
    tool.origin().is_some()
        && matches!(support, Some("required" | "optional"))
        && !tool.approval().may_be_required()
}

/// A `tools/call` made as a task: passed to the host for a tool passed through, else run as a
/// plain call (the spec's answer of a server that does not take the request as a task).
async fn call(
    handler: &impl ServerHandler,
    toolkit: &ServedToolkit,
    hosted: &Hosted,
    mut params: JsonObject,
    (owners, ended): (&TaskOwners, &CancellationToken),
    context: RequestContext<RoleServer>,
) -> Result<CustomResult, ErrorData> {
    let task = match params.remove("task") {
        Some(Value::Object(task)) => task,
        _ => JsonObject::new(),
    };
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let served = toolkit.served_to(&super::asker::principal_of(&context.extensions));
    let routed = served
        .toolkit
        .get(&name)
        .filter(|tool| passed_through(tool))
        .zip(hosted.as_ref());
    let Some((tool, tasks)) = routed else {
        let plain: CallToolRequestParams = serde_json::from_value(Value::Object(params))
            .map_err(|_| ErrorData::invalid_params("Invalid params", None))?;
        let answered = rmcp::model::ServerResult::from(handler.call_tool(plain, context).await?);
        let mut answered = serde_json::to_value(answered).unwrap_or(Value::Null);
        // The session revisions write no `resultType` (rmcp strips it from its own results).
        if let Value::Object(result) = &mut answered {
            result.remove("resultType");
        }
        return Ok(CustomResult(answered));
    };
    let arguments = match params.remove("arguments") {
        Some(Value::Object(arguments)) => arguments,
        None | Some(Value::Null) => JsonObject::new(),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "arguments must be an object",
                None,
            ));
        }
    };
    let input = Value::Object(arguments);
    if let Err(invalid) = tool.input_check().check(&input) {
        return Err(ErrorData::invalid_params(invalid.report(tool.name()), None));
    }
    let Value::Object(arguments) = input else {
        return Err(ErrorData::invalid_params(
            "arguments must be an object",
            None,
        ));
    };
    let Some((source, upstream)) = tool.origin() else {
        return Err(ErrorData::internal_error("the tool has no source", None));
    };
    let sink = TaskStatusSink::new(context.peer.clone(), ended.clone());
    let relayed = relayed(&context)
        .with_extension(sink)
        .with_extension(session(owners, ended));
    tasks
        .call(source, upstream, arguments, task, &relayed)
        .await
        .map(|result| CustomResult(Value::Object(result)))
        .map_err(|refusal| error(refusal, false))
}

/// The session of a task request, for the host ([`TaskSession`](super::TaskSession)).
fn session(owners: &TaskOwners, ended: &CancellationToken) -> super::TaskSession {
    super::TaskSession::new(owners.session(), ended.clone())
}

/// The context of a request passed through: who asks (principal, session), and what the source
/// asks meanwhile goes to this client.
fn relayed(context: &RequestContext<RoleServer>) -> CallContext {
    let relay: Arc<dyn Relay> = Arc::new(ClientRelay::new(
        context.peer.clone(),
        context.id.clone(),
        context.ct.child_token(),
    ));
    super::asker::asked_by(
        CallContext::new().with_extension(relay),
        &context.extensions,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_a_client_that_declares_tasks_has_its_requests_renamed() {
        let mut silent = TaskDialect::new(true);
        silent.incoming(
            &mut json!({"id": 1, "method": "initialize", "params": {"capabilities": {}}}),
        );
        let mut list = json!({"id": 2, "method": "tools/list"});
        silent.incoming(&mut list);
        assert_eq!(list["method"], "tools/list");

        let mut speaking = TaskDialect::new(true);
        speaking.incoming(&mut json!({
            "id": 1, "method": "initialize", "params": {"capabilities": {"tasks": {}}}
        }));
        for (method, params, renamed) in [
            ("tools/list", json!({}), true),
            ("tools/call", json!({"name": "t", "task": {}}), true),
            ("tools/call", json!({"name": "t"}), false),
            ("tasks/get", json!({"taskId": "x"}), true),
            ("tasks/list", json!({}), true),
            ("resources/list", json!({}), false),
        ] {
            let mut message = json!({"id": 3, "method": method, "params": params});
            speaking.incoming(&mut message);
            let expected = if renamed {
                format!("{RENAMED}{method}")
            } else {
                method.to_owned()
            };
            assert_eq!(message["method"], expected.as_str());
        }
        let mut answer = json!({"id": 1, "result": {"capabilities": {"tools": {}}}});
        assert!(speaking.waits());
        speaking.outgoing(&mut answer);
        assert_eq!(
            answer["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        assert!(!speaking.waits());

        // A host without tasks renames nothing.
        let mut unhosted = TaskDialect::new(false);
        unhosted.incoming(&mut json!({
            "id": 1, "method": "initialize", "params": {"capabilities": {"tasks": {}}}
        }));
        let mut get = json!({"id": 2, "method": "tasks/get", "params": {"taskId": "x"}});
        unhosted.incoming(&mut get);
        assert_eq!(get["method"], "tasks/get");
    }

    /// A host whose every task request is answered (with an empty list).
    #[derive(Debug)]
    struct Answering;

    impl Tasks for Answering {
        fn call<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: JsonObject,
            _: JsonObject,
            _: &'a CallContext,
        ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
            Box::pin(async { Err(Refusal::Failed("no call here".into())) })
        }

        fn request<'a>(
            &'a self,
            _: &'a str,
            _: JsonObject,
            _: &'a CallContext,
        ) -> BoxFuture<'a, Result<JsonObject, Refusal>> {
            Box::pin(async {
                Ok(json!({"tasks": []})
                    .as_object()
                    .cloned()
                    .unwrap_or_default())
            })
        }
    }

    /// The answers of a stdio session whose client declares `capabilities` to `requests`
    /// (method and id), after `initialize`.
    async fn answers(capabilities: Value, requests: &[(&str, u64)]) -> Vec<Value> {
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

        let server =
            crate::McpServer::new(toolkit_core::Toolkit::default()).tasks(Arc::new(Answering));
        let (client, served) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(served);
        let serving = tokio::spawn(server.serve_io(server_in, server_out));
        let (reader, mut writer) = tokio::io::split(client);
        let mut lines = tokio::io::BufReader::new(reader).lines();
        let mut sent = vec![
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "t", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ];
        sent.extend(requests.iter().map(
            |(method, id)| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}),
        ));
        for message in sent {
            writer
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        let mut answers = Vec::new();
        while answers.len() < requests.len() {
            let line = lines.next_line().await.unwrap().unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] != 0 && message.get("method").is_none() {
                answers.push(message);
            }
        }
        answers.sort_by_key(|answer| answer["id"].as_u64());
        serving.abort();
        answers
    }

    #[tokio::test]
    async fn only_requests_the_transport_renamed_are_served_as_task_requests() {
        // A client that declared no tasks, writing the renamed methods itself: unknown methods.
        let silent = answers(
            json!({}),
            &[
                ("toolkit-tasks:tasks/list", 1),
                ("toolkit-tasks:tasks/get", 2),
            ],
        )
        .await;
        for answer in &silent {
            assert_eq!(answer["error"]["code"], -32601, "{answer}");
        }
        // A client that declared tasks: its `tasks/list` is served; a renamed method it wrote
        // itself is not.
        let speaking = answers(
            json!({"tasks": {}}),
            &[("tasks/list", 1), ("toolkit-tasks:tasks/list", 2)],
        )
        .await;
        assert_eq!(speaking[0]["result"]["tasks"], json!([]), "{}", speaking[0]);
        assert_eq!(speaking[1]["error"]["code"], -32601, "{}", speaking[1]);
    }
}
