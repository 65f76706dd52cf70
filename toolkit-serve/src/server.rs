//! [`McpServer`]: a toolkit served as an MCP server, over stdio or Streamable HTTP.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;

use rmcp::model::ProtocolVersion;
use rmcp::service::ServerInitializeError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::ServeError;
use super::handler::{Handler, Identity};
use super::served::ServedToolkit;
use super::stdin_guard::{StdinGuard, StdinGuardOptions};
use super::tool_calls::Approval;
use crate::allowed_host::AllowedHosts;
use crate::http::direct_calls::DirectSessions;
use crate::http::replays::Replays;
use crate::http::session_owners::{SessionLimits, SessionOwners};
use crate::http::shared_service::SharedService;
use crate::http::written_http;
use crate::stdio::transport::{GuardedTransport, Input, spawn_writer};
use crate::stdio::written_result::WrittenResults;
use crate::tasks::sessions::TaskSessions;
use toolkit_core::context::Clients;
use toolkit_core::{Approver, CallContext, Toolkit};

/// The path [`McpServer::serve_http`] serves MCP at.
pub const MCP_PATH: &str = "/mcp";

/// A toolkit served as an MCP server: every tool of the toolkit, listed and called over stdio or
/// Streamable HTTP (rmcp's server, which speaks the stateless revision 2026-07-28 and the session
/// revisions 2025-11-25 back to 2024-11-05).
///
/// What is served:
///
/// - `tools/list`: each tool's name, description, input schema and output schema (when its
///   definition has one, as an MCP source's do), and its definition's hints as
///   `annotations` (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`,
///   `title`) as the source gave them. A tool whose [`approval`](toolkit_core::Tool::approval) may be
///   required is served with `destructiveHint: true` and `readOnlyHint: false`, so that a
///   client's own approval flow asks its person; a tool the policy blocked is not in the toolkit
///   and so is never served.
/// - `tools/call`: [`Tool::call`](toolkit_core::Tool::call) — the input checked strictly before the tool
///   runs (every problem named at once, then `Accepted params at …` lines), a panic caught, and
///   the call stopped when the client cancels it (`notifications/cancelled`, or a dropped HTTP
///   request). A
///   call of a tool that needs approval runs: the client asked its person — unless the host gave
///   the server an approver of its own ([`McpServer::approver`]) or has the calling client
///   asked ([`McpServer::approval_by_client`]), which is then asked as [`Toolkit::call_with`]
///   asks it (a declined call is a result with `isError: true` whose text says a person
///   declined it, with their reason). The answer is served
///   as text (a string as itself, anything else as JSON) and as `structuredContent`; a failure
///   as a result with `isError: true` whose text is the failure's message
///   ([`failure`](super::failure)). A name that is no tool is a JSON-RPC error `-32602`.
/// - `tools.listChanged` is advertised: [`ServedToolkit::replace`] swaps the toolkit live and
///   tells session clients (and stateless clients that listen) that the tools changed.
///
/// Each server owns everything it uses: several servers in one process share nothing.
///
/// ```
/// use toolkit_core::Toolkit;
/// use toolkit_serve::McpServer;
///
/// let server = McpServer::new(Toolkit::default())
///     .name("notes")
///     .version("1.0.0")
///     .instructions("Find notes before you write one.");
/// # let _ = server;
/// ```
pub struct McpServer {
    toolkit: ServedToolkit,
    identity: Identity,
    guard: StdinGuardOptions,
    http: HttpOptions,
    approval: Approval,
    /// Told of each verdict ([`McpServer::on_verdict`]).
    verdicts: Option<super::observed_approver::Verdicts>,
    resources: super::resources::Hosted,
    tasks: super::tasks::Hosted,
    /// Who is subscribed to each resource, across the sessions (`resources/subscribers.rs`).
    subscribers: Arc<crate::resources::subscribers::Subscribers>,
    /// The clients of the sessions, for what an upstream asks outside any call.
    clients: Option<Arc<Clients>>,
}

/// Options of [`McpServer::serve_http`] and [`McpServer::router`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Answer with `application/json` rather than an SSE stream where the server can (the
    /// stateless revision; a session's requests stay SSE). `false` by default. Either way, a
    /// session's `tools/call` that can be sent nothing but its answer is answered as one JSON
    /// body, past rmcp's session worker: one that asks for no progress, is no task, names no
    /// revision of its own, from a client that declared no `sampling`, `elicitation`, `roots`
    /// or tasks; a request rmcp would check more closely (an `Origin`, `Mcp-Method`, `Mcp-Name`
    /// or `Mcp-Param-*` headers) still goes to rmcp.
    pub json_response: bool,
    /// Keep sessions for clients of the session revisions. `true` by default; the stateless
    /// revision 2026-07-28 is always served without one.
    pub sessions: bool,
    /// The `Host` values accepted (against DNS rebinding). Loopback names by default.
    pub allowed_hosts: Vec<String>,
    /// The largest request body taken, in bytes (a larger one gets `413`). 4 MiB by default.
    pub max_request_body_bytes: usize,
    /// How many sessions are kept, in all and per principal, and how long one whose client never
    /// says `notifications/initialized` lives. A session is bound to the
    /// [`Principal`](toolkit_core::context::Principal) whose request opened it (the host puts
    /// one in the request's extensions; without one, every request is
    /// [`Principal::loopback`](toolkit_core::context::Principal::loopback)'s), and a request of
    /// another naming it is answered as for an unknown session (404).
    pub session_limits: SessionLimits,
    /// How long a session goes without a request before it is closed: five minutes by default
    /// (rmcp's). A call answered past rmcp's session worker (see
    /// [`HttpOptions::json_response`]) counts as use when it starts and when it ends.
    pub session_idle_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            json_response: false,
            sessions: true,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            max_request_body_bytes: 4 * 1024 * 1024,
            session_limits: SessionLimits::default(),
            session_idle_timeout: Duration::from_secs(300),
        }
    }
}

impl McpServer {
    /// A server of `toolkit`, named `toolkit` at this crate's version until told otherwise.
    pub fn new(toolkit: Toolkit) -> Self {
        Self {
            toolkit: ServedToolkit::new(toolkit),
            identity: Identity {
                name: "toolkit".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                instructions: None,
                versions: None,
            },
            guard: StdinGuardOptions::default(),
            http: HttpOptions::default(),
            approval: Approval::default(),
            verdicts: None,
            resources: None,
            tasks: None,
            subscribers: Arc::default(),
            clients: None,
        }
    }

    /// Asks `approver` (the host's own person) before a call of a tool that needs approval runs,
    /// rather than trusting the client to have asked its person. The same [`Approver`] a host
    /// gives [`Toolkit::answer`] and the rig adapter.
    ///
    /// ```
    /// use toolkit_core::{approval::ApprovalRequest, Toolkit, approval::Verdict};
    /// use toolkit_serve::McpServer;
    ///
    /// let server = McpServer::new(Toolkit::default()).approver(|request: ApprovalRequest| async move {
    ///     Verdict::decline(format!("{} is not allowed from this server.", request.tool_name()))
    /// });
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approval = Approval::Host(CallContext::new().approver(approver));
        self
    }

    /// Asks the client that made a call of a tool that needs approval, before it runs, rather
    /// than trusting the client to have asked its person: the server sends it `elicitation/create`
    /// (form mode) on the call's own stream, naming the tool and showing its input, with a form
    /// of `decision` (`approve` or `decline`), `reason` and `input` (an edited input, as JSON
    /// text, checked again against the tool's parameters before it runs). A decline, a cancel, or
    /// an edited input that is no JSON object stops the call, and the model reads why, with the
    /// person's reason.
    ///
    /// A call nobody can be asked about never runs: a client that declared no elicitation in
    /// form mode, a stateless request (2026-07-28: the server has no stream to ask on), a client
    /// that refuses the question — the model reads that no person could be asked, and why.
    ///
    /// Off by default (a library's server trusts its client, which serves its tools marked
    /// `destructiveHint: true` so that the client's own flow asks): a server whose clients ask
    /// nobody (a headless agent, a command-line client) needs this or [`McpServer::approver`].
    /// The last of the two called wins.
    ///
    /// ```
    /// use toolkit_core::Toolkit;
    /// use toolkit_serve::McpServer;
    ///
    /// // `write_file` (marked approve by its policy) runs only once the calling client's
    /// // person approves it.
    /// let server = McpServer::new(Toolkit::default()).approval_by_client();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn approval_by_client(mut self) -> Self {
        self.approval = Approval::ByClient;
        self
    }

    /// Tells `observer` of each verdict given about a call that needed approval (whoever gave
    /// it), with the request it answers: for a record of the calls that were declined, which
    /// reach no source.
    ///
    /// ```
    /// use toolkit_core::{Toolkit, approval::{ApprovalRequest, Verdict}};
    /// use toolkit_serve::McpServer;
    ///
    /// let server = McpServer::new(Toolkit::default())
    ///     .approval_by_client()
    ///     .on_verdict(|request: &ApprovalRequest, verdict: &Verdict| {
    ///         if matches!(verdict, Verdict::Decline { .. }) {
    ///             eprintln!("{} was declined", request.tool_name());
    ///         }
    ///     });
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn on_verdict(
        mut self,
        observer: impl Fn(&toolkit_core::ApprovalRequest, &toolkit_core::Verdict)
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.verdicts = Some(super::observed_approver::Verdicts(Arc::new(observer)));
        self
    }

    /// Serves `resources` beside the tools: `resources/list`, `resources/templates/list`,
    /// `resources/read`, `resources/subscribe` / `unsubscribe`, `prompts/list`, `prompts/get`
    /// and `completion/complete`, each capability advertised when its
    /// [`Offer`](super::Offer) says (none by default). The host is subscribed to a resource
    /// while one session at least is (its first subscriber subscribes it, its last to leave —
    /// unsubscribing, or its session ending — unsubscribes it); clients are told of the lists
    /// that change ([`Resources::list_changed`](super::Resources::list_changed)) when the offer
    /// says so.
    #[must_use]
    pub fn resources(mut self, resources: Arc<dyn super::Resources>) -> Self {
        self.resources = Some(resources);
        self
    }

    /// Passes the tasks of a client that declares `capabilities.tasks` (MCP 2025-11-25) to
    /// `tasks`, over stdio and in a Streamable HTTP session: its tools listed with
    /// `execution.taskSupport` are served with it, a `tools/call` made as a task goes to
    /// `tasks`, and so do its `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list`, each
    /// session driving only the tasks it created (another's id is refused as an unknown one,
    /// and `tasks/list` lists its own). Other clients, and stateless HTTP clients, are served
    /// task tools as plain tools (none by default).
    #[must_use]
    pub fn tasks(mut self, tasks: Arc<dyn super::Tasks>) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// Joins the client of each session to `clients` while the session lasts, and tells them of
    /// a client's `notifications/roots/list_changed`: an MCP source given the same `clients`
    /// (`McpOptions::clients`) passes what its server asks outside any served call (its
    /// `roots/list`) to the one session's client, when there is exactly one (over stdio, always).
    /// None by default: such a request is answered as for a client without roots.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolkit_core::{Toolkit, context::Clients};
    /// use toolkit_serve::McpServer;
    ///
    /// let clients = Arc::new(Clients::default());
    /// let server = McpServer::new(Toolkit::default()).clients(Arc::clone(&clients));
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn clients(mut self, clients: Arc<Clients>) -> Self {
        self.clients = Some(clients);
        self
    }

    /// The name the server gives in `serverInfo`.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.identity.name = name.into();
        self
    }

    /// The version the server gives in `serverInfo`.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.identity.version = version.into();
        self
    }

    /// Instructions for the client's model, given at `initialize` and `server/discover`.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.identity.instructions = Some(instructions.into());
        self
    }

    /// Serves only the revisions named here (such as `"2025-11-25"` or `"2026-07-28"`), of
    /// those rmcp knows; a name it does not know is left out. Every revision by default.
    ///
    /// ```
    /// use toolkit_core::Toolkit;
    /// use toolkit_serve::McpServer;
    ///
    /// // A server of the session revisions only: clients fall back to `initialize`.
    /// let server = McpServer::new(Toolkit::default())
    ///     .protocol_versions(["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]);
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn protocol_versions<'a>(mut self, versions: impl IntoIterator<Item = &'a str>) -> Self {
        let known = ProtocolVersion::KNOWN_VERSIONS;
        let versions = versions
            .into_iter()
            .filter_map(|name| known.iter().find(|version| version.as_str() == name))
            .cloned()
            .collect();
        self.identity.versions = Some(versions);
        self
    }

    /// How stdin is framed (the line cap) by [`McpServer::serve_io`] and
    /// [`McpServer::serve_stdio`].
    ///
    /// ```
    /// use toolkit_core::Toolkit;
    /// use toolkit_serve::McpServer;
    /// use toolkit_serve::stdin_guard::StdinGuardOptions;
    ///
    /// let server = McpServer::new(Toolkit::default())
    ///     .stdin_guard(StdinGuardOptions::default().max_line_utf16(1024 * 1024));
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn stdin_guard(mut self, options: StdinGuardOptions) -> Self {
        self.guard = options;
        self
    }

    /// How [`McpServer::serve_http`] and [`McpServer::router`] serve.
    #[must_use]
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// The handle that replaces the served toolkit live; cheap to clone, usable while serving.
    pub fn toolkit_handle(&self) -> ServedToolkit {
        self.toolkit.clone()
    }

    /// The handler each session's is made from ([`Handler::for_session`]).
    fn handler(&self) -> Handler {
        let ended = Arc::new(crate::http::session_end::SessionEnd::default());
        Handler {
            toolkit: self.toolkit.clone(),
            identity: Arc::new(self.identity.clone()),
            approval: self.approval.clone(),
            verdicts: self.verdicts.clone(),
            level: Arc::default(),
            resources: self.resources.clone(),
            tasks: self.tasks.clone(),
            subscriptions: Arc::new(crate::resources::subscriptions::Subscriptions::new(
                Arc::clone(&self.subscribers),
                self.resources.clone(),
                ended.token(),
            )),
            subscribers: Arc::clone(&self.subscribers),
            clients: self.clients.clone(),
            joined: Arc::default(),
            initialized: Arc::default(),
            task_owners: Arc::default(),
            ended,
            direct: None,
        }
    }

    /// Serves over the process's stdin and stdout until stdin ends: see
    /// [`McpServer::serve_io`]. stdout carries the protocol only; logs go where the process's
    /// `tracing` subscriber sends them, which must be stderr.
    ///
    /// # Errors
    ///
    /// [`ServeError::Io`] when reading stdin fails.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves one client over `reader` and `writer`, one JSON-RPC message per line, until the
    /// reader ends (then `Ok`).
    ///
    /// The reader is read through the [`StdinGuard`]: a line that is not JSON is answered
    /// `-32700` and serving goes on; a line over the cap is answered once and skipped to its
    /// newline; JSON that is no JSON-RPC message is answered `-32600`; lines of whitespace are
    /// ignored; a byte-order mark is stripped at the start only. A message rmcp cannot read is
    /// answered too (`-32600` for a batch, `-32602` for a request whose params it cannot read),
    /// and a client that speaks before `initialize` out of turn is served again from the start.
    ///
    /// # Errors
    ///
    /// [`ServeError::Io`] when reading fails.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let handler = self.handler();
        let input = Arc::new(Mutex::new(Input::new(StdinGuard::with_options(
            reader, self.guard,
        ))));
        let (output, writer) = spawn_writer(writer);
        loop {
            let transport =
                GuardedTransport::new(Arc::clone(&input), output.clone(), self.tasks.is_some());
            match rmcp::serve_server(WrittenResults(handler.for_session()), transport).await {
                Ok(running) => {
                    if let Err(error) = running.waiting().await {
                        tracing::error!(%error, "the server's task failed");
                    }
                    break;
                }
                Err(ServerInitializeError::ConnectionClosed(_)) => break,
                Err(error) => {
                    if input.lock().await.ended {
                        break;
                    }
                    tracing::warn!(%error, "a client spoke out of turn before initialize; serving again");
                }
            }
        }
        drop(output);
        let written = writer.await;
        if let Some(error) = input.lock().await.error.take() {
            return Err(ServeError::Io(error));
        }
        match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => {
                // The client stopped reading: nothing is left to serve it.
                tracing::debug!(%error, "writing to the client failed");
                Ok(())
            }
            Err(error) => {
                tracing::error!(%error, "the writer task failed");
                Ok(())
            }
        }
    }

    /// The Streamable HTTP endpoint as an [`axum::Router`] serving MCP at `path` (every
    /// revision; sessions for the session revisions unless [`HttpOptions::sessions`] is off),
    /// ending its sessions when `shutdown` is cancelled. Mount it in a larger app, or see
    /// [`McpServer::serve_http`].
    pub fn router(&self, path: &str, shutdown: CancellationToken) -> axum::Router {
        let mut handler = self.handler();
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(self.http.sessions)
            .with_json_response(self.http.json_response)
            .with_allowed_hosts(self.http.allowed_hosts.clone())
            .with_max_request_body_bytes(self.http.max_request_body_bytes)
            .with_sse_keep_alive(None)
            .with_cancellation_token(shutdown);
        // rmcp's HTTP service takes only a `ServerHandler`, whose call results and a session's
        // progress are typed: the layer writes what an upstream wrote into the answers.
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(self.http.session_idle_timeout);
        let manager = Arc::new(manager);
        let direct = DirectSessions::new(
            Arc::clone(&manager),
            AllowedHosts::new(&self.http.allowed_hosts),
        );
        handler.direct = Some(Arc::clone(&direct));
        let service: StreamableHttpService<Handler, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(handler.for_session()),
                Arc::clone(&manager),
                config,
            );
        let layer = Arc::new(written_http::Answers {
            owners: SessionOwners::new(self.http.session_limits.clone(), manager),
            clients: self.clients.clone(),
            max_body: self.http.max_request_body_bytes,
            sessions: TaskSessions::new(
                self.tasks.is_some() && self.http.sessions,
                self.http.max_request_body_bytes,
            ),
            replays: Replays::default(),
            direct,
        });
        // On the MCP route only: any other path is answered 404 before the layer reads it.
        axum::Router::new()
            .nest_service(path, SharedService::new(service))
            .route_layer(axum::middleware::from_fn_with_state(
                layer,
                written_http::answers,
            ))
    }

    /// Serves Streamable HTTP at [`MCP_PATH`] on `listener` until it fails (never, in practice).
    /// Bind it with [`bind_loopback`] for `127.0.0.1`.
    ///
    /// # Errors
    ///
    /// [`ServeError::Io`] when the listener fails.
    pub async fn serve_http(self, listener: TcpListener) -> Result<(), ServeError> {
        self.serve_http_until(listener, std::future::pending())
            .await
    }

    /// [`McpServer::serve_http`] until `shutdown` completes: then no connection is taken, every
    /// session ends, and serving ends once the connections are done.
    ///
    /// ```no_run
    /// use toolkit_core::Toolkit;
    /// use toolkit_serve::{McpServer, bind_loopback};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = bind_loopback(8080).await?;
    /// McpServer::new(Toolkit::default())
    ///     .serve_http_until(listener, async { let _ = tokio::signal::ctrl_c().await; })
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ServeError::Io`] when the listener fails.
    pub async fn serve_http_until(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let token = CancellationToken::new();
        // Its routes made once (served as the router itself, they are made again for every
        // connection).
        let router = self.router(MCP_PATH, token.clone()).into_make_service();
        axum::serve(without_delay(listener), router)
            .with_graceful_shutdown(async move {
                shutdown.await;
                token.cancel();
            })
            .await
            .map_err(ServeError::Io)
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.identity.name)
            .field("version", &self.identity.version)
            .field("toolkit", &self.toolkit)
            .finish_non_exhaustive()
    }
}

/// `listener`, with `TCP_NODELAY` set on every connection it accepts (axum leaves Nagle's
/// algorithm on): an answer written in pieces goes out at once instead of waiting for the
/// client's delayed acknowledgement, about 40 ms on Linux for a client that keeps its
/// connection. [`McpServer::serve_http`] serves through it; so should a host that runs
/// [`McpServer::router`] on its own listener (as `into_make_service`, which makes its routes
/// once rather than for every connection).
///
/// ```no_run
/// use toolkit_serve::{McpServer, CancellationToken, bind_loopback, without_delay};
/// # use toolkit_core::Toolkit;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let router = McpServer::new(Toolkit::default()).router("/mcp", CancellationToken::new());
/// axum::serve(without_delay(bind_loopback(8080).await?), router.into_make_service()).await?;
/// # Ok(())
/// # }
/// ```
pub fn without_delay(
    listener: TcpListener,
) -> impl axum::serve::Listener<Io = TcpStream, Addr = SocketAddr> {
    listener.tap_io(|stream: &mut TcpStream| {
        // Fails only for a connection the peer has already reset, which the server then reads
        // as closed.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY could not be set on an accepted connection");
        }
    })
}

/// A listener on `127.0.0.1:port` (`0` for any free port), the address a served toolkit
/// listens on unless its host chooses another.
///
/// # Errors
///
/// [`ServeError::Bind`] when the port cannot be taken; its message names the port only.
pub async fn bind_loopback(port: u16) -> Result<TcpListener, ServeError> {
    TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|error| ServeError::Bind { port, error })
}
