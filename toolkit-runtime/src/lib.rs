#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

// The core's modules, at the paths they had when they lived here (`toolkit_core::definition::…`).
pub use toolkit_core::{
    approval, assembly, context, definition, functions, input, model, naming, progress, random,
    text, toolkit, typed,
};

#[cfg(feature = "auth")]
pub use toolkit_auth as auth;
#[cfg(feature = "code")]
pub mod code;
pub mod codegen;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "http")]
pub use toolkit_http as http;
#[cfg(feature = "graphql")]
pub use toolkit_http::graphql;
// HTTP operations as data, with no executor (feature `operations`); feature `http` adds the
// source that sends them, whose crate re-exports the same names.
#[cfg(feature = "mcp")]
pub use toolkit_mcp as mcp;
#[cfg(all(feature = "operations", not(feature = "http")))]
pub use toolkit_openapi::operations as http;
/// MCP tool listings and snapshots read into definitions, with no transport (feature
/// `mcp-tools`; with feature `mcp`, this is the `toolkit-mcp` crate).
#[cfg(all(feature = "mcp-tools", not(feature = "mcp")))]
pub mod mcp {
    pub use toolkit_core::mcp::{MarkProblem, mark_problems, tool_definition};
}
#[cfg(feature = "openapi")]
pub mod openapi;
#[cfg(feature = "resilience")]
pub mod resilience;
#[cfg(feature = "rig")]
pub mod rig;
pub mod search;
#[cfg(feature = "serve")]
pub use toolkit_serve as serve;
pub mod telemetry;

// The root: what a host's first toolkit and a source's author need. Everything else lives in
// its module (`approval::`, `search::`, `code::`, `definition::`, …).
pub use toolkit_core::{
    Assembly, BoxFuture, CallContext, Decision, Failure, FnSource, FnTool, JsonObject, Member,
    Outcome, Reason, Tool, ToolDefinition, ToolSource, ToolSourceError, Toolkit, ToolkitOptions,
};

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
