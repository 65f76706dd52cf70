//! The runtime of toolkit: tools for AI agents from wherever they come, in one shape.
//!
//! Every kind of source — an MCP server, an HTTP API, functions written by hand — implements
//! [`ToolSource`]: a name, `discover` (which tools it has now) and `call` (run one). A host keeps
//! the definitions a source reports in a catalog ([`ToolDefinition`], stored as JSON), and for each
//! turn of an agent builds the toolkit the model is given: [`Assembly`] takes many sources under a
//! policy that says per tool allow, approve or block, and names every tool `source__tool` in the
//! characters model APIs accept. Calling a tool ([`Toolkit::call`]) checks the input against the
//! tool's JSON Schema, runs the tool, and gives JSON or a [`Failure`] — as data, so the turn goes
//! on whatever happened.
//!
//! # From a hand-written tool to an assembled toolkit
//!
//! ```
//! use std::sync::Arc;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use toolkit_runtime::{Assembly, Decision, FnSource, FnTool, Member, Reason};
//!
//! /// Finds notes that mention a word.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Find {
//!     /// The word to look for.
//!     word: String,
//! }
//!
//! # let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! # runtime.block_on(async {
//! // 1. A source of hand-written tools.
//! let notes = FnSource::builder("notes")
//!     .tool(
//!         FnTool::new("find", |input: Find| async move {
//!             if input.word.is_empty() {
//!                 return Err(Reason::call_failed("Give a word to look for."));
//!             }
//!             Ok(json!([format!("a note about {}", input.word)]))
//!         })
//!         .description("Finds notes that mention a word.")
//!         .read_only(),
//!     )
//!     .build()?;
//!
//! // 2. The catalog: what the source has (a host stores this as JSON).
//! let definitions = notes.definitions();
//!
//! // 3. The toolkit of a turn, under a policy: tools that read are allowed, others need approval.
//! let members = [Member::new(Arc::new(notes), definitions)];
//! let toolkit = Assembly::new().toolkit(&members, |_source, definition| {
//!     if definition.annotations.hints().read_only { Decision::Allow } else { Decision::Approve }
//! })?;
//!
//! // 4. The model calls `notes__find`, and reads a failure as a result.
//! let found = toolkit.call("notes__find", json!({ "word": "rust" })).await;
//! assert_eq!(found, Ok(json!(["a note about rust"])));
//! let refused = toolkit.call("notes__find", json!({ "wrd": "rust" })).await.unwrap_err();
//! assert!(refused.message.contains("Accepted params at the root: word."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`model`] turns a toolkit into the `tools` of OpenAI-style and Anthropic-style requests and
//! feeds a model's tool calls back.
#![deny(missing_docs)]

mod assembly;
#[cfg(feature = "code")]
mod code;
#[cfg(feature = "conformance")]
pub mod conformance;
mod definition;
mod error;
mod functions;
#[cfg(feature = "http")]
pub mod http;
mod input;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod naming;
#[cfg(feature = "openapi")]
pub mod openapi;
mod presentation;
mod search;
#[cfg(feature = "serve")]
pub mod serve;
mod source;
mod text;
mod toolkit;
mod typed;

pub use assembly::{Assembly, AssemblyError, Clash, Decision, Member, NameClash, QualifiedName};
#[cfg(feature = "code")]
pub use code::{
    CodeFailure, CodeMode, CodeModeOptions, CodeRuntime, Declarations, EVERY_DECLARATION_LIMIT,
    PoolOptions, QuickJs, QuickJsOptions, RunLimits, RunOutput, ToolCall, WorkerIsolate,
    WorkerPool, declare_tools, serve_worker, serve_worker_on,
};
pub use definition::{
    Annotations, CatalogError, DefinitionError, Hints, JsonObject, ToolDefinition, decode_catalog,
    encode_catalog,
};
pub use error::{Failure, Reason, ToolSourceError};
pub use functions::{FnSource, FnSourceBuilder, FnSourceError, FnTool};
pub use input::{InputCheck, InvalidInput, MAX_INPUT_DEPTH};
pub use search::{Found, MAX_SEARCH_LIMIT, Ranking, SearchIndex, SearchOptions, ToolSearch};
pub use source::{BoxFuture, ToolSource};
pub use text::ECHO_LIMIT;
pub use toolkit::{Approval, DuplicateName, Handler, Tool, Toolkit, ToolkitOptions};
pub use typed::call_typed;

/// The README's examples, compiled and run as doc tests (with the features they use).
#[doc = include_str!("../../README.md")]
#[cfg(all(doctest, feature = "conformance", feature = "mcp", feature = "testing"))]
pub struct ReadmeDoctests;
