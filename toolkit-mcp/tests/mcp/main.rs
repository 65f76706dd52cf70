//! Integration tests of toolkit-mcp, in one binary (one link) with a module per concern.
//!
//! The MCP source against real servers on 127.0.0.1 — rmcp's (over Streamable HTTP, and over
//! stdio: `rmcp-stdio-peer`, a binary of toolkit-runtime-tests), the TypeScript and Python SDKs'
//! and `server-everything` from npm, installed by `scripts/install-test-peers` (`processes.rs`
//! finds and starts them) — and against a scripted misbehaving one; the runtime's conformance
//! suites over it, and the source served again by `toolkit-serve`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod bounds;
mod conformance;
mod corpus;
mod definitions;
// The demo toolkit of the serving tests (toolkit-serve's, where it lives), shared by path.
#[path = "../../../toolkit-serve/tests/serve/demo.rs"]
#[allow(dead_code)]
mod demo;
mod elicitation;
mod everything;
mod input_required;
mod legacy;
mod list_changed;
mod list_lifetime;
mod peer_handler;
mod pool;
mod processes;
mod progress;
mod redirects;
mod renegotiation;
mod resources;
mod resumption;
mod rmcp_http;
mod rmcp_peer;
mod rmcp_stdio;
mod scripted;
mod sdks;
// The spans a call leaves, captured: toolkit-runtime-tests' `span_capture.rs`, shared by path.
#[path = "../../../toolkit-runtime-tests/tests/it/span_capture.rs"]
mod span_capture;
mod standalone;
// A toolkit served over Streamable HTTP, and the TypeScript SDK's content peer as an upstream:
// toolkit-serve's tests' `serving.rs`, shared by path.
#[path = "../../../toolkit-serve/tests/serve/serving.rs"]
mod serving;
mod stdio;
// Shared with toolkit-core's tests, where it lives.
#[path = "../../../toolkit-core/tests/core/support.rs"]
mod support;
mod tasks;
mod wire;

use std::time::Duration;

use toolkit_mcp::{Mcp, McpOptions};

/// Options with short bounds, so that a test that hits one ends soon.
pub fn quick() -> McpOptions {
    McpOptions::default().timeout(Duration::from_secs(10))
}

/// A source over `url` with a plain client and [`quick`] options.
pub fn http(url: &reqwest::Url) -> Mcp {
    Mcp::http_with_options("peer", url.clone(), reqwest::Client::new(), quick())
}
