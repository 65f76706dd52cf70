//! MCP servers as tool sources: [`Mcp`].
//!
//! A server is reached over Streamable HTTP ([`Mcp::http`]) — in the stateless revision
//! 2026-07-28 or a session of 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05, and through the old
//! HTTP+SSE transport for a server that has only that — or over stdio ([`Mcp::stdio`]), as a
//! process the source starts. Either way the source lists the server's tools and runs them; beside
//! its tools (no part of [`ToolSource`](toolkit_core::ToolSource)) it lists and reads the server's
//! resources and resource templates, lists and gets its prompts, and asks it for completions
//! (what a gateway serves of an upstream, an MCP App's `ui://` resources among them).
//!
//! - `client.rs`: [`McpHttpClient`], what requests over HTTP are sent through (a
//!   `reqwest::Client`, or one that authenticates them).
//! - `source.rs`: the source: paging, results, the `-32020` re-listing, timeouts.
//! - `capabilities.rs`: what the server declared of itself at `initialize`;
//!   `resources_updated.rs`: [`ResourcesUpdated`], the resources the server says changed.
//!   `task_statuses.rs`: [`TaskStatuses`], the task statuses the server tells.
//! - `resources.rs`, `prompts.rs`: its resources and prompts and completion, asked through
//!   `asked.rs` (one request, every page of a listing, under the same caps).
//! - `transport/`: how requests reach the server (`streamable_http.rs`, `legacy_sse.rs`,
//!   `stdio.rs`), and how answers are read (`body.rs`, `status.rs`, `channel.rs`).
//! - `revision.rs`: the revisions spoken; `negotiation.rs`: how one is settled from a server's
//!   answers; `jsonrpc.rs`: the messages.
//! - `elicitation.rs`: [`Elicitation`], the host's answer to a server's `elicitation/create`.
//! - `input_required.rs`: what an `input_required` result asks, answered (elicitation, sampling,
//!   roots) and sent back; `lifetime.rs`: [`ListLifetime`], how long a listing stays fresh.
//! - `headers.rs`: the `Mcp-Param-*` headers of a call and the base64 sentinel; `results.rs`:
//!   what listing pages and call results become; `tasks.rs`: tools run as tasks;
//!   `task_requests.rs`: the task requests of a caller that drives a task itself.
//!
//! What becomes of a call:
//!
//! | the server answers | the source gives |
//! | --- | --- |
//! | a result with `structuredContent` | that value |
//! | a result without it | its `content` blocks as written |
//! | `isError: true` | [`CallFailed`](toolkit_core::Reason::CallFailed) with the text the tool said |
//! | `input_required` | what it asks answered (an elicitation by the host's callback or the served call's client, declined at once without either; sampling and roots by the served call's client), the call sent again with the answers and its `requestState`; past `input_required_rounds` (8) rounds, [`InvalidResponse`](toolkit_core::Reason::InvalidResponse) |
//! | a task (for a tool listed with `execution.taskSupport`: `tasks.rs`) | polled to its end with `tasks/get`, then its `tasks/result` read as above; `failed` or `cancelled` is [`CallFailed`](toolkit_core::Reason::CallFailed) |
//! | -32602 for a tool the server does not list, or -32601 | [`NotFound`](toolkit_core::Reason::NotFound) |
//! | -32602 otherwise | [`InvalidInput`](toolkit_core::Reason::InvalidInput) with the server's words |
//! | -32022 (a server redeployed in another revision), or a refusal that answers no request (a session ended) | the link negotiated again once, the request sent again |
//! | HTTP 401 / 403 | [`Authentication`](toolkit_core::Reason::Authentication) |
//! | refused, reset, 408, 429, 5xx, no answer within the timeout (which each progress report of the call starts anew, up to `max_call_time`) | [`Unavailable`](toolkit_core::Reason::Unavailable) (`Retry-After` kept) |
//! | an answer larger than the cap | [`CallFailed`](toolkit_core::Reason::CallFailed), telling the model to ask for less |
//! | anything that is not MCP | [`InvalidResponse`](toolkit_core::Reason::InvalidResponse) |
//!
//! Reading a `tools/list` answer or a snapshot into definitions ([`tool_definition`],
//! [`mark_problems`]) is the core's (`toolkit_core::mcp`, with no transport: what a generator
//! needs), re-exported here.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

mod asked;
mod capabilities;
mod changes;
mod client;
pub mod codegen;
mod command;
mod elicitation;
mod events;
mod headers;
mod input_required;
mod jsonrpc;
mod lifetime;
mod negotiation;
mod options;
mod prompts;
mod request_failure;
mod resources;
mod resources_updated;
mod results;
mod revision;
mod roots;
mod skills;
mod snapshot;
mod source;
mod task_requests;
mod task_statuses;
mod tasks;
mod telemetry;
pub(crate) mod transport;

pub use changes::ToolsChanged;
pub use client::McpHttpClient;
pub use command::StdioCommand;
pub use elicitation::{Elicitation, ElicitationAnswer, ElicitationRequest};
pub use events::{
    Delivery, DeliveryMode, EVENTS_EXTENSION, Event, EventBatch, EventCheck, EventOptions,
    EventStream, EventType, MIN_POLL_WAIT, RefusedEvent, WebhookGrant,
};
pub use lifetime::{CacheScope, ListLifetime, ListLifetimeHandle, MAX_LIST_TTL};
pub use options::McpOptions;
pub use request_failure::transport_failure;
pub use resources_updated::ResourcesUpdated;
pub use skills::{
    LoadedSkill, MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION, Skill, SkillFile, SkillFiles,
    digest,
};
pub use snapshot::{Aspect, ChangedTool, SnapshotDrift, SnapshotSource};
pub use source::Mcp;
pub use task_statuses::TaskStatuses;
// Reading listings into definitions is the core's (`toolkit_core::mcp`), shared with the
// generator; here beside the source that reads listings with it.
pub use toolkit_core::mcp::{MarkProblem, mark_problems, tool_definition};
