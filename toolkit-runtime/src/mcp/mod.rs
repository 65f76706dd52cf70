//! MCP servers as tool sources: [`Mcp`].
//!
//! A server is reached over Streamable HTTP ([`Mcp::http`]) — in the stateless revision
//! 2026-07-28 or a session of 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05, and through the old
//! HTTP+SSE transport for a server that has only that — or over stdio ([`Mcp::stdio`]), as a
//! process the source starts. Either way the source lists the server's tools and runs them, and
//! does nothing else of MCP.
//!
//! - `client.rs`: [`McpHttpClient`], what requests over HTTP are sent through (a
//!   `reqwest::Client`, or one that authenticates them).
//! - `source.rs`: the source: paging, results, the `-32020` re-listing, timeouts.
//! - `transport/`: how requests reach the server (`streamable_http.rs`, `legacy_sse.rs`,
//!   `stdio.rs`), and how answers are read (`body.rs`, `status.rs`, `channel.rs`).
//! - `revision.rs`: the revisions spoken; `negotiation.rs`: how one is settled from a server's
//!   answers; `jsonrpc.rs`: the messages.
//! - `headers.rs`: the `x-mcp-header` rules and the base64 sentinel; `results.rs`: what
//!   listings and call results become.
//!
//! What becomes of a call:
//!
//! | the server answers | the source gives |
//! | --- | --- |
//! | a result with `structuredContent` | that value |
//! | a result without it | its `content` blocks as written |
//! | `isError: true` | [`CallFailed`](crate::Reason::CallFailed) with the text the tool said |
//! | `input_required` | [`Unsupported`](crate::Reason::Unsupported) (one with only `requestState` is sent again, a bounded number of times) |
//! | -32602 / -32601 naming an unknown tool | [`NotFound`](crate::Reason::NotFound) |
//! | -32602 otherwise | [`InvalidInput`](crate::Reason::InvalidInput) with the server's words |
//! | HTTP 401 / 403 | [`Authentication`](crate::Reason::Authentication) |
//! | refused, reset, 408, 429, 5xx, no answer within the timeout | [`Unavailable`](crate::Reason::Unavailable) (`Retry-After` kept) |
//! | an answer larger than the cap | [`CallFailed`](crate::Reason::CallFailed), telling the model to ask for less |
//! | anything that is not MCP | [`InvalidResponse`](crate::Reason::InvalidResponse) |

mod client;
mod command;
mod headers;
mod jsonrpc;
mod negotiation;
mod options;
mod results;
mod revision;
mod snapshot;
mod source;
pub(crate) mod transport;

pub use client::McpHttpClient;
pub use command::StdioCommand;
pub use headers::{MarkProblem, mark_problems};
pub use options::McpOptions;
pub use results::tool_definition;
pub use snapshot::{Aspect, ChangedTool, SnapshotDrift, SnapshotSource};
pub use source::Mcp;
