//! Serving a toolkit as an MCP server — the boundary of seed 002.
//!
//! [`McpServer`] serves any [`Toolkit`](toolkit_core::Toolkit) (assembled under a policy, or shown as
//! `ToolSearch` or code mode) over stdio ([`McpServer::serve_stdio`]) or
//! Streamable HTTP ([`McpServer::serve_http`], [`McpServer::router`]), wrapping rmcp's server,
//! which speaks the stateless revision 2026-07-28 and the session revisions.
//!
//! - [`stdin_guard`]: stdin framed one line at a time, and every line the server cannot use
//!   answered (not JSON, over the length cap, no JSON-RPC message), so a client never waits on
//!   a request nobody heard.
//! - [`failure`]: what an agent reads of a failed call — the remediation folded into the
//!   message, and every value echoed back cut to a bounded length.
//! - [`ServedToolkit`]: replaces the served toolkit live and tells clients the tools changed.
//! - [`Resources`]: what a host serves beside the tools (resources, prompts, completion).
//! - [`Tasks`]: what a host does with the tasks of a client that drives them (2025-11-25).
//! - [`run_guarded`]: the crash guard of a server binary.
//! - `testing` (feature `testing`): an in-process client and a probe of a built server binary.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolkit_serve::McpServer;
//! use toolkit_core::{Assembly, Decision, FnSource, FnTool, Member};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Find { word: String }
//!
//! # let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! # runtime.block_on(async {
//! let notes = FnSource::builder("notes")
//!     .tool(FnTool::new("find", |input: Find| async move { Ok(json!([input.word])) }).read_only())
//!     .build()?;
//! let definitions = notes.definitions();
//! let toolkit = Assembly::new()
//!     .toolkit(&[Member::new(Arc::new(notes), definitions)], |_, _| Decision::Allow)?;
//!
//! // Serve it over any pair of byte streams (here an in-memory pipe; `serve_stdio` in a binary).
//! let (client, server) = tokio::io::duplex(64 * 1024);
//! let (server_in, server_out) = tokio::io::split(server);
//! let serving = tokio::spawn(McpServer::new(toolkit).serve_io(server_in, server_out));
//! # drop(client);
//! # serving.await??;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod allowed_host;
mod asker;
mod client_approval;
mod error;
pub mod failure;
mod guard;
mod handler;
mod http;
mod observed_approver;
mod output_check;
mod progress_queue;
mod relay;
mod resources;
mod sampling_context;
mod served;
mod server;
pub mod stdin_guard;
mod stdio;
mod tasks;
#[cfg(feature = "testing")]
pub mod testing;
mod told;
mod tool_calls;
mod views;

pub use allowed_host::AllowedHosts;
pub use error::ServeError;
pub use guard::run_guarded;
pub use http::session_owners::SessionLimits;
pub use resources::skill_folder::SkillFolder;
pub use resources::uri_bound::MAX_URI_BYTES;
pub use resources::{EventFeed, ListChanged, Offer, Refusal, Resources};
pub use served::ServedToolkit;
pub use server::{HttpOptions, MCP_PATH, McpServer, bind_loopback, without_delay};
pub use tasks::Tasks;
pub use tasks::owners::unknown_task;
pub use tasks::session::TaskSession;
pub use tasks::status::TaskStatusSink;
/// Cancels a server's HTTP sessions ([`McpServer::router`]); re-exported from `tokio-util`.
pub use tokio_util::sync::CancellationToken;
pub use views::{MAX_KEPT_VIEWS, Views};
