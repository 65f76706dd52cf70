#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

// The core's modules, at the paths they had when they lived here (`crate::definition::…`).
use toolkit_core::{
    approval, assembly, definition, error, functions, input, progress, source, text, toolkit, typed,
};
pub use toolkit_core::{context, model, naming};

#[cfg(feature = "auth")]
pub mod auth;
#[cfg(feature = "code")]
mod code;
pub mod codegen;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "operations")]
pub mod http;
#[cfg(feature = "mcp-tools")]
pub mod mcp;
#[cfg(feature = "openapi")]
pub mod openapi;
#[cfg(feature = "rig")]
pub mod rig;
mod search;
#[cfg(feature = "serve")]
pub mod serve;
pub mod telemetry;

pub use approval::{APPROVAL_DECLINED, ApprovalRequest, Approver, MAX_REASON_LENGTH, Verdict};
pub use assembly::{Assembly, AssemblyError, Clash, Decision, Member, NameClash, QualifiedName};
#[cfg(feature = "code")]
pub use code::{
    CodeFailure, CodeMode, CodeModeOptions, CodeRuntime, Declarations, EVERY_DECLARATION_LIMIT,
    PoolOptions, QuickJs, QuickJsOptions, RunLimits, RunOutput, ToolCall, WorkerInput,
    WorkerIsolate, WorkerOutput, WorkerPool, declare_tools, serve_worker, serve_worker_on,
    worker_stdio,
};
pub use context::CallContext;
pub use definition::{
    Annotations, CatalogError, DefinitionError, Hints, JsonObject, ToolDefinition, decode_catalog,
    encode_catalog,
};
pub use error::{Failure, Reason, ToolSourceError};
pub use functions::{FnSource, FnSourceBuilder, FnSourceError, FnTool};
pub use input::{InputCheck, InvalidInput, MAX_INPUT_DEPTH};
pub use progress::Progress;
pub use search::{
    CONFIDENT_MARGIN, Found, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, Ranking, SearchIndex,
    SearchOptions, ToolSearch,
};
#[cfg(feature = "search-embeddings")]
pub use search::{
    Embedder, EmbedderError, MAX_EMBEDDED_TOKENS, MAX_KEPT_VECTORS, MeaningModel, StaticEmbedder,
};
pub use source::ToolSource;
pub use text::ECHO_LIMIT;
pub use toolkit::{Approval, DuplicateName, Handler, Tool, Toolkit, ToolkitOptions};
pub use toolkit_core::BoxFuture;
pub use typed::{call_answered, call_typed};

/// The README's examples, compiled and run as doc tests (with the features they use).
#[doc = include_str!("../../README.md")]
#[cfg(all(doctest, feature = "mcp"))]
pub struct ReadmeDoctests;

/// The examples of `docs/`, compiled and run as doc tests (with the features they use).
#[cfg(all(
    doctest,
    feature = "conformance",
    feature = "mcp",
    feature = "openapi",
    feature = "http",
    feature = "testing"
))]
mod docs {
    #[doc = include_str!("../../docs/conformance.md")]
    pub struct Conformance;
    #[doc = include_str!("../../docs/http-and-openapi.md")]
    pub struct HttpAndOpenapi;
    #[doc = include_str!("../../docs/mcp.md")]
    pub struct Mcp;
    #[doc = include_str!("../../docs/serving.md")]
    pub struct Serving;
    #[doc = include_str!("../../docs/generator.md")]
    pub struct Generator;
    #[doc = include_str!("../../docs/search-and-code-mode.md")]
    pub struct SearchAndCodeMode;
}

/// The examples of `docs/agent-loop.md` (approval, rig, tracing), as doc tests.
#[cfg(all(doctest, feature = "rig"))]
#[doc = include_str!("../../docs/agent-loop.md")]
pub struct AgentLoopDoctests;
