//! The MCP source against real servers on 127.0.0.1 (rmcp's, and `server-everything` from npm),
//! and against a scripted misbehaving one.
#![allow(clippy::unwrap_used, clippy::panic)]

mod bounds;
#[cfg(feature = "conformance")]
mod conformance;
mod corpus;
mod definitions;
#[cfg(feature = "serve")]
mod elicitation;
mod everything;
pub mod input_required;
mod legacy;
#[cfg(feature = "serve")]
mod list_changed;
mod list_lifetime;
mod peer_handler;
mod pool;
pub mod processes;
mod progress;
mod redirects;
mod renegotiation;
mod resources;
mod resumption;
mod rmcp_http;
mod rmcp_peer;
#[cfg(feature = "mcp-test-peer")]
mod rmcp_stdio;
mod scripted;
mod sdks;
mod standalone;
mod stdio;
mod tasks;
mod wire;

use std::time::Duration;

use toolkit_runtime::mcp::{Mcp, McpOptions};

/// Options with short bounds, so that a test that hits one ends soon.
pub fn quick() -> McpOptions {
    McpOptions::default().timeout(Duration::from_secs(10))
}

/// A source over `url` with a plain client and [`quick`] options.
pub fn http(url: &reqwest::Url) -> Mcp {
    Mcp::http_with_options("peer", url.clone(), reqwest::Client::new(), quick())
}
