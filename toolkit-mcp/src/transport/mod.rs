//! How requests reach a server: Streamable HTTP (with the old HTTP+SSE transport as its fallback)
//! and stdio. A transport settles how the server is spoken to and sends one request at a time;
//! it knows nothing of tools.

pub(crate) mod body;
pub(crate) mod channel;
pub(crate) mod legacy_sse;
pub(crate) mod listen;
pub(crate) mod requests;
pub(crate) mod shared;
pub(crate) mod standalone;
pub(crate) mod status;
pub(crate) mod stdio;
pub(crate) mod streamable_http;
pub(crate) mod subscription;

use serde_json::Value;

use crate::jsonrpc::Outcome;
use crate::revision::Revision;
use toolkit_core::{BoxFuture, CallContext, JsonObject, Reason};

/// A request for a transport to send.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    /// The JSON-RPC method, such as `tools/call`.
    pub method: &'static str,
    /// The params, without the `_meta` the transport adds for the stateless revision.
    pub params: JsonObject,
    /// What `Mcp-Name` names (the tool of a `tools/call`), for the stateless revision over HTTP.
    pub name: Option<String>,
    /// The `Mcp-Param-*` headers, for the stateless revision over HTTP.
    pub param_headers: Vec<(String, String)>,
    /// The context of the call the request is made for (a `tools/call`): the host told of the
    /// logs written on its stream, the client asked what the server asks.
    pub context: CallContext,
}

impl Request {
    /// A request of `method` with `params` and no `Mcp-Param-*` headers; its `Mcp-Name` is what
    /// the stateless revision has it name: the URI of a `resources/read`, the prompt of a
    /// `prompts/get`, the tool of a `tools/call`.
    pub(crate) fn new(method: &'static str, params: JsonObject) -> Self {
        let named = match method {
            "resources/read" => "uri",
            "prompts/get" | "tools/call" => "name",
            _ => "",
        };
        let name = params
            .get(named)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        Self {
            method,
            params,
            name,
            param_headers: Vec::new(),
            context: CallContext::new(),
        }
    }
}

/// The server's answer, and the revision it was spoken in.
#[derive(Debug)]
pub(crate) struct Reply {
    pub outcome: Outcome,
    pub revision: Revision,
}

/// Why a request got no answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fault {
    /// The answer is longer than the source takes.
    TooLarge,
    /// The answer came from another origin than the server's (the client followed a redirect):
    /// it is not read, and nothing more is sent that way.
    Elsewhere,
    /// Anything else, with the reason a source fails with.
    Failed(Reason),
}

impl Fault {
    /// What a model reads of an answer from another origin.
    pub(crate) fn elsewhere_reason() -> Reason {
        Reason::invalid_response(
            "the server redirected the request to another origin, which this client does not follow",
        )
    }
}

impl From<Reason> for Fault {
    fn from(reason: Reason) -> Self {
        Self::Failed(reason)
    }
}

/// Who the server is, once spoken to.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Agreed {
    /// The revision spoken, with its version.
    pub revision: Revision,
    /// `serverInfo` (`{name, version}`), when the server said.
    pub server_info: Option<Value>,
    /// The server's `capabilities`, when it said (what `tasks.rs` reads of it).
    pub capabilities: Option<Value>,
}

/// A way of reaching an MCP server.
pub(crate) trait Transport: Send + Sync + 'static {
    /// Sends `request` (settling first how the server is spoken to, if not yet done) and waits
    /// for its answer. Dropping the future stops the request.
    fn request(&self, request: Request) -> BoxFuture<'_, Result<Reply, Fault>>;

    /// How the server was spoken to, settling it if not yet done.
    fn settle(&self) -> BoxFuture<'_, Result<Agreed, Fault>>;

    /// Whether `x-mcp-header` marks count on this transport in `revision` (only over HTTP).
    fn marks_apply(&self, revision: &Revision) -> bool;

    /// Which connection to the server requests go on now: a number that changes each time the
    /// server is connected to again (its process started again, its link negotiated again).
    fn connection(&self) -> u64 {
        0
    }

    /// Ends the connection now (the session, the process), and waits until it has ended.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// The calls sent on this connection that wait for progress: where the progress it reads is
    /// delivered, and nowhere else.
    fn progress(&self) -> &toolkit_core::progress::Routes;

    /// Tells the server the notification `method` (without params) on the connection there is,
    /// in a session revision: nothing when there is none, in the stateless revision, or when
    /// the server cannot be told (a failure is logged).
    fn notify(&self, method: &'static str) -> BoxFuture<'_, ()>;

    /// A waiter told when the server says its tools changed, where this transport hears the
    /// server unasked (`None` where it does not).
    fn tools_changed(&self) -> Option<crate::ToolsChanged> {
        None
    }

    /// A waiter for the resources the server says changed, where this transport hears the
    /// server unasked (`None` where it does not).
    fn resources_updated(&self) -> Option<crate::ResourcesUpdated> {
        None
    }

    /// A waiter for the task statuses the server tells, where this transport hears the server
    /// unasked (`None` where it does not).
    fn task_statuses(&self) -> Option<crate::TaskStatuses> {
        None
    }
}

/// The most answers to a server's requests (its pings) in flight at once; a request that comes
/// while as many are unanswered is left unanswered, so that a server cannot make the source open
/// a POST per message it streams.
pub(crate) const MAX_ANSWERS_IN_FLIGHT: usize = 8;

/// Spawns `work` on the current runtime, if there is one, stopped after `wait`.
pub(crate) fn spawn_bounded(
    wait: std::time::Duration,
    work: impl std::future::Future<Output = ()> + Send + 'static,
) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let _ = tokio::time::timeout(wait, work).await;
        });
    }
}
