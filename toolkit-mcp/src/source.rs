//! [`Mcp`]: an MCP server as a tool source.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};

use reqwest::Url;
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use super::headers;
use super::input_required;
use super::jsonrpc::{self, RpcError};
use super::lifetime::{self, ListLifetime, ListLifetimeHandle};
use super::results::{self, Called, MAX_SERVER_WORDS};
use super::tasks;
use super::transport::stdio::Stdio;
use super::transport::streamable_http::StreamableHttp;
use super::transport::{Fault, Reply, Request, Transport};
use super::{McpHttpClient, McpOptions, StdioCommand};
use crate::telemetry;
use toolkit_core::mcp::HeaderMark;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, Reason, ToolDefinition, ToolSource,
    ToolSourceError,
};

/// An MCP server as a tool source: it lists the server's tools with `tools/list` and runs them
/// with `tools/call`; beside them, it reads the server's resources and prompts
/// ([`Mcp::list_resources`], [`Mcp::read_resource`], [`Mcp::get_prompt`], [`Mcp::complete`], ...).
///
/// How the server is spoken to is found out when the source first needs it: the stateless
/// revision 2026-07-28 when the server answers `server/discover` with it, else a session begun
/// with `initialize` in 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05 (and, over HTTP, the old
/// HTTP+SSE transport for a server that has only that).
///
/// The source never takes a credential: over HTTP it sends its requests with the client it is
/// given, which the host built with the headers its server asks for.
///
/// A redirect to another origin must not carry those headers: build the client with a policy
/// that does not follow one (`redirect::Policy::none()`, or `http::client_builder()`, whose
/// policy follows redirects within the origin only). Whatever the client's policy, the source
/// never reads an answer that came from another origin than the server's, and stops there.
///
/// # Examples
///
/// ```no_run
/// use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
/// use toolkit_mcp::Mcp;
/// use toolkit_core::ToolSource;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut headers = HeaderMap::new();
/// let mut token = HeaderValue::from_str(&format!("Bearer {}", std::env::var("MCP_TOKEN")?))?;
/// token.set_sensitive(true);
/// headers.insert(AUTHORIZATION, token);
/// let client = reqwest::Client::builder()
///     .default_headers(headers)
///     .redirect(reqwest::redirect::Policy::none())
///     .build()?;
///
/// let tasks = Mcp::http("tasks", "https://mcp.example.com/mcp".parse()?, client);
/// let definitions = tasks.discover().await?;
/// let answer = tasks.call("list_tasks", serde_json::Map::new(), &toolkit_core::CallContext::new()).await?;
/// # Ok(()) }
/// ```
pub struct Mcp {
    name: String,
    pub(super) transport: Arc<dyn Transport>,
    pub(super) options: McpOptions,
    /// How the server is reached, as spans name it: `streamable-http` or `stdio`.
    transport_kind: &'static str,
    /// The `x-mcp-header` marks of each tool of the last listing (`None` before the first).
    marks: RwLock<Option<HashMap<String, Vec<HeaderMark>>>>,
    /// The lifetime of the last listing discovered (`ttlMs`), when it said one.
    lifetime: ListLifetimeHandle,
    /// The tools of the last listing that are called as tasks (see `tasks.rs`).
    task_tools: RwLock<HashSet<String>>,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mcp")
            .field("name", &self.name)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The tools a server listed, with how it was spoken to.
struct Listing {
    tools: Vec<Value>,
    marks_apply: bool,
    lifetime: Option<ListLifetime>,
}

impl Mcp {
    /// The source `name` of the Streamable HTTP server at `url`, reached with `client`: a
    /// `reqwest::Client`, or any [`McpHttpClient`] — such as a
    /// `toolkit_auth::OAuthClient` (feature `mcp` of `toolkit-auth`), whose tokens are got and
    /// refreshed while the source lives.
    pub fn http(name: impl Into<String>, url: Url, client: impl McpHttpClient) -> Self {
        Self::http_with_options(name, url, client, McpOptions::default())
    }

    /// [`Mcp::http`] with `options`.
    pub fn http_with_options(
        name: impl Into<String>,
        url: Url,
        client: impl McpHttpClient,
        options: McpOptions,
    ) -> Self {
        Self::over(
            name.into(),
            Box::new(StreamableHttp::new(
                std::sync::Arc::new(client),
                url,
                options.clone(),
            )),
            options,
            "streamable-http",
        )
    }

    /// The source `name` of the server that `command` starts, spoken to over its stdin and stdout.
    /// The process is started when the source first needs it.
    pub fn stdio(name: impl Into<String>, command: StdioCommand) -> Self {
        Self::stdio_with_options(name, command, McpOptions::default())
    }

    /// [`Mcp::stdio`] with `options`.
    pub fn stdio_with_options(
        name: impl Into<String>,
        command: StdioCommand,
        options: McpOptions,
    ) -> Self {
        let name = name.into();
        let transport = Stdio::new(name.clone(), command, options.clone());
        Self::over(name, Box::new(transport), options, "stdio")
    }

    /// Wakes each time the server says its tools changed (`notifications/tools/list_changed`),
    /// for a host that lists them again at once. Heard over stdio, the old HTTP+SSE transport, a
    /// Streamable HTTP session, and the stateless revision's `subscriptions/listen` (opened only
    /// when a waiter lives as the server is first spoken to: take one before the first
    /// discovery; see [`ToolsChanged`](super::ToolsChanged)).
    pub fn tools_changed(&self) -> Option<super::ToolsChanged> {
        self.transport.tools_changed()
    }

    /// Which connection to the server requests go on now: a number that changes each time the
    /// server is connected to again (its process started again, its session or revision
    /// negotiated again). A task id the server handed out on one connection means nothing on
    /// another: a server that restarted may hand the same id out again, for another task.
    pub fn connection(&self) -> u64 {
        self.transport.connection()
    }

    fn over(
        name: String,
        transport: Box<dyn Transport>,
        options: McpOptions,
        transport_kind: &'static str,
    ) -> Self {
        Self {
            name,
            transport: Arc::from(transport),
            options,
            transport_kind,
            marks: RwLock::new(None),
            lifetime: ListLifetimeHandle::default(),
            task_tools: RwLock::default(),
        }
    }

    /// How long the tools of the last discovery stay fresh, when the server said it (`ttlMs`
    /// and `cacheScope` on `tools/list`, stateless revision): past
    /// [`ListLifetime::stale_at`] a catalog built from them should be discovered again. `None`
    /// before the first discovery and when the server said nothing (every session revision).
    pub fn list_lifetime(&self) -> Option<ListLifetime> {
        self.lifetime.get()
    }

    /// Where [`list_lifetime`](Self::list_lifetime) is read from, for a host that keeps the
    /// source behind a wrapper and reads it after each discovery.
    pub fn list_lifetime_handle(&self) -> ListLifetimeHandle {
        self.lifetime.clone()
    }

    /// The server's tools exactly as it lists them (all pages), with who it is and the version
    /// it was spoken in: `{"server": {name, version}, "protocolVersion": .., "tools": [..]}`.
    /// This is the snapshot that `toolkit-gen` makes typed tools from.
    ///
    /// # Errors
    ///
    /// As [`ToolSource::discover`].
    pub async fn snapshot(&self) -> Result<Value, ToolSourceError> {
        self.bounded(async {
            let settled = self
                .transport
                .settle()
                .await
                .map_err(|fault| self.list_fault(fault))?;
            let listing = self.list().await?;
            let server = settled.server_info.unwrap_or_else(|| json!({}));
            Ok(json!({
                "server": {
                    "name": server.get("name").cloned().unwrap_or(Value::Null),
                    "version": server.get("version").cloned().unwrap_or(Value::Null),
                },
                "protocolVersion": settled.revision.version(),
                "tools": listing.tools,
            }))
        })
        .await
    }

    /// Ends the connection now: the session of an HTTP server (DELETE), or the process of a stdio
    /// server (stdin closed, then SIGTERM, then SIGKILL), waiting until it has ended. Dropping
    /// the source does the same in the background; a later call connects again.
    pub async fn close(&self) {
        self.transport.close().await;
    }

    pub(super) fn error(&self, reason: Reason) -> ToolSourceError {
        ToolSourceError::new(self.name.clone(), reason)
    }

    /// `work`, failing as unavailable past the timeout.
    pub(super) async fn bounded<T>(
        &self,
        work: impl Future<Output = Result<T, ToolSourceError>>,
    ) -> Result<T, ToolSourceError> {
        tokio::time::timeout(self.options.timeout, work)
            .await
            .unwrap_or_else(|_| {
                Err(self.error(Reason::unavailable(format!(
                    "the server did not answer within {:?}",
                    self.options.timeout
                ))))
            })
    }

    pub(super) fn list_fault(&self, fault: Fault) -> ToolSourceError {
        self.error(match fault {
            Fault::Elsewhere => Fault::elsewhere_reason(),
            Fault::TooLarge => Reason::invalid_response(format!(
                "the server answered with more than {} bytes",
                self.options.max_response_bytes
            )),
            Fault::Failed(reason) => reason,
        })
    }

    /// Every page of `tools/list`, with loop guards.
    async fn list(&self) -> Result<Listing, ToolSourceError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        let mut marks_apply;
        let mut bytes = 0usize;
        let listed_at = std::time::Instant::now();
        let mut lifetimes = Vec::new();
        for _ in 0..self.options.max_pages {
            let mut params = Map::new();
            if let Some(cursor) = &cursor {
                params.insert("cursor".into(), json!(cursor));
            }
            let reply = self
                .send(Request::new("tools/list", params))
                .await
                .map_err(|fault| self.list_fault(fault))?;
            marks_apply = self.transport.marks_apply(&reply.revision);
            let result = reply.outcome.map_err(|error| {
                self.error(match error.code {
                    jsonrpc::METHOD_NOT_FOUND => Reason::unsupported(
                        "the server has no tools (tools/list is no method of it)",
                    ),
                    jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => no_longer_spoken(),
                    code => {
                        Reason::invalid_response(format!("the server refused tools/list ({code})"))
                    }
                })
            })?;
            let page = results::page(&result).map_err(|reason| self.error(reason))?;
            lifetimes.extend(lifetime::said(&result));
            bytes = bytes.saturating_add(json_length(&page.tools));
            if bytes > self.options.max_listing_bytes {
                return Err(self.error(Reason::invalid_response(format!(
                    "the server's tools/list has more than {} bytes of tools",
                    self.options.max_listing_bytes
                ))));
            }
            tools.extend(page.tools);
            match page.next_cursor {
                None => {
                    let lifetime = lifetime::of_listing(listed_at, lifetimes);
                    return Ok(Listing {
                        tools,
                        marks_apply,
                        lifetime,
                    });
                }
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(self.error(Reason::invalid_response(
                            "the server gave a cursor of tools/list twice (it would page forever)",
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(self.error(Reason::invalid_response(format!(
            "the server's tools/list has more than {} pages",
            self.options.max_pages
        ))))
    }

    /// Lists the tools, keeps their marks, and gives their definitions.
    async fn discover_now(&self) -> Result<Vec<ToolDefinition>, ToolSourceError> {
        let listing = self.list().await?;
        let capabilities = self
            .transport
            .settle()
            .await
            .ok()
            .and_then(|settled| settled.capabilities);
        let mut task_tools = HashSet::new();
        let mut definitions = Vec::with_capacity(listing.tools.len());
        let mut marks = HashMap::new();
        for tool in &listing.tools {
            match toolkit_core::mcp::listed_tool(tool, listing.marks_apply) {
                Ok(listed) => {
                    let name = listed.definition.name().to_owned();
                    if marks.contains_key(&name) {
                        tracing::warn!(source = %self.name, tool = %name, "the server lists the tool twice; the second is left out");
                        continue;
                    }
                    if tasks::runs_as_task(listed.definition.execution(), capabilities.as_ref()) {
                        task_tools.insert(name.clone());
                    }
                    marks.insert(name, listed.marks);
                    definitions.push(listed.definition);
                }
                Err(problem) => {
                    tracing::warn!(source = %self.name, %problem, "a tool is left out of discover");
                }
            }
        }
        *self.marks.write().unwrap_or_else(PoisonError::into_inner) = Some(marks);
        self.lifetime.set(listing.lifetime);
        *self
            .task_tools
            .write()
            .unwrap_or_else(PoisonError::into_inner) = task_tools;
        Ok(definitions)
    }

    fn marks_of(&self, tool: &str) -> Vec<HeaderMark> {
        self.marks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(|marks| marks.get(tool))
            .cloned()
            .unwrap_or_default()
    }

    /// Whether the server lists `tool`, by its last listing (listed now if it never was); `None`
    /// when that cannot be known.
    async fn lists(&self, tool: &str) -> Option<bool> {
        let known = |this: &Self| {
            this.marks
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .map(|marks| marks.contains_key(tool))
        };
        if let Some(listed) = known(self) {
            return Some(listed);
        }
        self.discover_now().await.ok()?;
        known(self)
    }

    /// Runs a call within the timeout, which each report of progress from the server starts
    /// anew, up to [`McpOptions::max_call_time`].
    ///
    /// `written`, when given, is left the server's result as written when the answer is made of
    /// one.
    async fn call_bounded(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: Option<&mut Option<JsonObject>>,
    ) -> Result<Value, ToolSourceError> {
        let timeout = self.options.timeout;
        let extends = self.options.max_call_time > timeout;
        let heard = Arc::new(tokio::sync::Notify::new());
        let told: Option<toolkit_core::progress::Heard> = extends.then(|| {
            let heard = Arc::clone(&heard);
            Arc::new(move || heard.notify_one()) as toolkit_core::progress::Heard
        });
        // Progress is asked for when the host of the call wants it, or to keep the call alive.
        // The token is the connection's: only what this server says reaches the call.
        let progress = self.transport.progress().register(
            context.progress_sink().cloned(),
            context.tool().unwrap_or_default(),
            told,
        );
        let work = self.call_now(tool, input, context, progress.as_ref(), written);
        tokio::pin!(work);
        let started = tokio::time::Instant::now();
        let hard = started + self.options.max_call_time.max(timeout);
        let mut deadline = started + timeout;
        loop {
            tokio::select! {
                outcome = &mut work => return outcome,
                () = tokio::time::sleep_until(deadline) => {
                    return Err(self.error(Reason::unavailable(if !extends || deadline < hard {
                        format!("the server did not answer within {timeout:?}")
                    } else {
                        format!(
                            "the server kept reporting progress but did not answer within {:?}",
                            self.options.max_call_time
                        )
                    })));
                }
                () = heard.notified(), if extends => {
                    deadline = (tokio::time::Instant::now() + timeout).min(hard);
                }
            }
        }
    }

    async fn call_now(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        progress: Option<&toolkit_core::progress::Registration>,
        written: Option<&mut Option<JsonObject>>,
    ) -> Result<Value, ToolSourceError> {
        let mut param_headers = headers::param_headers(&self.marks_of(tool), &input);
        // What the call is sent again with after an `input_required` result.
        let mut answers: Option<(Option<JsonObject>, input_required::Asked)> = None;
        let mut rounds = 0;
        let mut listed_again = false;
        loop {
            let mut params = Map::new();
            params.insert("name".into(), json!(tool));
            params.insert("arguments".into(), Value::Object(input.clone()));
            if let Some((responses, asked)) = &answers {
                input_required::retried(&mut params, responses.clone(), asked);
            }
            if let Some(progress) = &progress {
                params.insert("_meta".into(), json!({ "progressToken": progress.token() }));
            }
            let as_task = self
                .task_tools
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(tool);
            if as_task {
                let ttl = self.options.max_call_time.max(self.options.timeout);
                params.insert("task".into(), tasks::task_param(ttl));
            }
            let request = Request {
                method: "tools/call",
                params,
                name: Some(tool.to_owned()),
                param_headers: param_headers.clone(),
                context: context.clone(),
            };
            let mut reply = self
                .send(request)
                .await
                .map_err(|fault| self.call_fault(fault))?;
            if let Ok(result) = &reply.outcome
                && let Some(task) = tasks::created(result)
            {
                let task = task.map_err(|reason| self.error(reason))?;
                reply.outcome = tasks::finish(&self.transport, task, context)
                    .await
                    .map_err(|fault| self.call_fault(fault))?;
            }
            let result = match reply.outcome {
                Ok(result) => result,
                Err(error)
                    if error.code == jsonrpc::HEADER_MISMATCH
                        && !listed_again
                        && self.transport.marks_apply(&reply.revision) =>
                {
                    // The tool's marks may be other than we know (or we never listed): list
                    // again, and send once more if the headers they ask for differ.
                    listed_again = true;
                    self.discover_now().await?;
                    let again = headers::param_headers(&self.marks_of(tool), &input);
                    if again == param_headers {
                        return Err(self.error(Reason::invalid_response(
                            "the server refused the call's headers (-32020), and its listing asks for no others",
                        )));
                    }
                    param_headers = again;
                    continue;
                }
                Err(error)
                    if error.code == jsonrpc::INVALID_PARAMS
                        && self.lists(tool).await == Some(false) =>
                {
                    // The structure says it, not the words: the tool is not in the listing.
                    let words = toolkit_core::text::cut_utf16(&error.message, MAX_SERVER_WORDS);
                    return Err(self.error(Reason::not_found(format!(
                        "the server has no such tool ({}: {words})",
                        error.code
                    ))));
                }
                Err(error) => return Err(self.error(call_error(&error))),
            };
            // Kept, for a caller that passes it on, only once the answer is made of it.
            let as_written = written.is_some().then(|| result.clone());
            let called = results::called(result);
            match called {
                Called::Answer(answer) => {
                    if let Some(written) = written {
                        *written = as_written;
                    }
                    return Ok(answer);
                }
                Called::InputRequired(asked) if rounds < self.options.input_required_rounds => {
                    rounds += 1;
                    let responses = input_required::answered(&asked, &self.options, context)
                        .await
                        .map_err(|reason| self.error(reason))?;
                    answers = Some((responses, asked));
                }
                Called::InputRequired(_) => {
                    return Err(self.error(Reason::invalid_response(format!(
                        "the server asked for input again after {rounds} rounds of answers; the call is stopped"
                    ))));
                }
                Called::Failed(reason) => {
                    // The tool's own failure (`isError`) is the result's.
                    let own = matches!(reason, Reason::CallFailed { .. })
                        && as_written.as_ref().is_some_and(|result| {
                            result.get("isError") == Some(&Value::Bool(true))
                        });
                    if let Some(written) = written
                        && own
                    {
                        *written = as_written;
                    }
                    return Err(self.error(reason));
                }
            }
        }
    }

    /// Sends `request` in a span of its own (`mcp.request`), and records how the server was
    /// spoken to there and on the span of the tool call it is part of.
    pub(super) async fn send(&self, request: Request) -> Result<Reply, Fault> {
        let span = telemetry::mcp_request(
            request.method,
            &self.name,
            self.transport_kind,
            request.name.as_deref(),
        );
        let call_span = tracing::Span::current();
        let reply = self
            .transport
            .request(request)
            .instrument(span.clone())
            .await;
        match &reply {
            Ok(reply) => {
                span.record("mcp.protocol.version", reply.revision.version());
                call_span.record("mcp.transport", self.transport_kind);
                call_span.record("mcp.protocol.version", reply.revision.version());
                telemetry::record_end(&span, reply.outcome.as_ref().err().map(|_| "JsonRpcError"));
            }
            Err(Fault::TooLarge) => telemetry::record_end(&span, Some("TooLarge")),
            Err(Fault::Elsewhere) => telemetry::record_end(&span, Some("Elsewhere")),
            Err(Fault::Failed(reason)) => telemetry::record_end(&span, Some(reason.code())),
        }
        reply
    }

    fn call_fault(&self, fault: Fault) -> ToolSourceError {
        self.error(match fault {
            Fault::Elsewhere => Fault::elsewhere_reason(),
            Fault::TooLarge => Reason::call_failed(format!(
                "The tool answered with more than {} bytes, more than a tool can return here. Ask for less.",
                self.options.max_response_bytes
            )),
            Fault::Failed(reason) => reason,
        })
    }
}

/// The reason of a server that refuses the revision settled with it even after negotiating again.
pub(super) fn no_longer_spoken() -> Reason {
    Reason::unsupported(
        "the server refused the protocol revision it was spoken to in (-32022), even negotiated again",
    )
}

/// The number of bytes of `value` as JSON, counted without writing it anywhere.
pub(super) fn json_length(value: &impl serde::Serialize) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// The reason of a JSON-RPC error answered to `tools/call`, decided by its code (a `-32602` for
/// a tool the server does not list is [`Reason::NotFound`], decided by the caller from the
/// listing); the server's words are passed on, never read.
fn call_error(error: &RpcError) -> Reason {
    let words = toolkit_core::text::cut_utf16(&error.message, MAX_SERVER_WORDS);
    match error.code {
        jsonrpc::METHOD_NOT_FOUND => {
            Reason::not_found(format!("tools/call is no method of the server ({words})"))
        }
        jsonrpc::INVALID_PARAMS if words.is_empty() => {
            Reason::invalid_input("The server refused the input.")
        }
        jsonrpc::INVALID_PARAMS => Reason::invalid_input(words),
        jsonrpc::MISSING_CLIENT_CAPABILITY => {
            Reason::unsupported("the server needs a client capability this client does not have")
        }
        jsonrpc::HEADER_MISMATCH => {
            Reason::invalid_response("the server refused the call's headers (-32020)")
        }
        jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => no_longer_spoken(),
        code => Reason::unknown(format!("the server failed the call ({code}: {words})")),
    }
}

impl ToolSource for Mcp {
    fn name(&self) -> &str {
        &self.name
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(telemetry::discovering(
            &self.name,
            self.bounded(self.discover_now()),
        ))
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(self.call_bounded(tool, input, context, None))
    }

    /// The call, with the server's result as written when the answer is made of one.
    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(async move {
            let mut written = None;
            let answer = self
                .call_bounded(tool, input, context, Some(&mut written))
                .await;
            Outcome { answer, written }
        })
    }
}
