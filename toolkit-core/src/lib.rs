//! The core of toolkit: what every tool source, every host and every generated module shares.
//!
//! A tool is storable data ([`ToolDefinition`]); every kind of source — an MCP server, an HTTP
//! API, functions written by hand, a generated module — implements [`ToolSource`] (`discover`,
//! `call` with the call's [`CallContext`]); an [`Assembly`] builds the [`Toolkit`] of an agent's
//! turn from many sources under a policy that says per tool allow, approve or block; a call
//! checks its input against the tool's schema and gives JSON or a [`Failure`], as data.
//!
//! Feature `input-checks` (on by default) is what checks inputs against schemas (`jsonschema`).
//! A build that only reads definitions (the generator, from a build script) leaves it off; a
//! toolkit built without it holds each input only to being a JSON object, and says so once in a
//! warning.
//!
//! This crate has no HTTP client or server, no MCP SDK, no JavaScript engine and no model
//! runtime: a third-party source depends on it alone, and code written by `toolkit-gen` compiles
//! against its [`codegen`] contract. `toolkit-runtime` re-exports all of it beside the sources
//! and presentations it adds (MCP, HTTP, OpenAPI, search, code mode, serving).
//!
//! ```
//! use std::sync::Arc;
//! use serde::Deserialize;
//! use schemars::JsonSchema;
//! use toolkit_core::{FnSource, FnTool, Toolkit, ToolkitOptions};
//!
//! /// Counts the words of a text.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Count {
//!     /// The text.
//!     text: String,
//! }
//!
//! let words = FnSource::builder("words")
//!     .tool(FnTool::new("count", |input: Count| async move {
//!         Ok(input.text.split_whitespace().count())
//!     }))
//!     .build()?;
//! let definitions = words.definitions();
//! let toolkit = Toolkit::from_source(Arc::new(words), definitions, &ToolkitOptions::default())?;
//! # let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! let count = runtime.block_on(toolkit.call("count", serde_json::json!({ "text": "a b c" })));
//! assert_eq!(count, Ok(serde_json::json!(3)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod approval;
pub mod assembly;
pub mod codegen;
pub mod context;
pub mod definition;
pub mod error;
pub mod functions;
mod future;
pub mod input;
pub mod mcp;
pub mod model;
pub mod naming;
mod outcome;
mod presentation;
pub mod progress;
pub mod random;
pub mod source;
pub mod telemetry;
pub mod text;
pub mod toolkit;
pub mod typed;

pub use approval::{APPROVAL_DECLINED, ApprovalRequest, Approver, MAX_REASON_LENGTH, Verdict};
pub use assembly::{Assembly, AssemblyError, Clash, Decision, Member, NameClash, QualifiedName};
pub use context::CallContext;
pub use definition::{
    Annotations, CatalogError, DefinitionError, Hints, JsonObject, ToolDefinition, decode_catalog,
    encode_catalog,
};
pub use error::{Failure, Reason, ToolSourceError};
pub use functions::{FnSource, FnSourceBuilder, FnSourceError, FnTool};
pub use future::BoxFuture;
pub use input::{InputCheck, InvalidInput, MAX_INPUT_DEPTH};
pub use outcome::Outcome;
pub use presentation::{Presentation, PresentationRule, SEARCH_THRESHOLD};
pub use progress::Progress;
pub use source::ToolSource;
pub use text::ECHO_LIMIT;
pub use toolkit::{
    Approval, DuplicateName, Handler, OutcomeHandler, Tool, Toolkit, ToolkitOptions,
};
pub use typed::{call_answered, call_typed};
