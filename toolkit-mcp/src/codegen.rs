//! Everything code `toolkit-gen` writes for an MCP `tools/list` snapshot names: the core's
//! contract ([`toolkit_core::codegen`]: definitions, the source trait, typed calls, serde as
//! generated types name it) with the MCP source beside it, and the HTTP client crate its
//! constructor takes. A generated module starts with `use ::toolkit_mcp::codegen as __tk;`, so
//! the crate that holds it declares `toolkit-mcp` alone.
//!
//! What is here is public API: a generated module compiles against every version of this crate
//! that is semver-compatible with the one it was generated for.

pub use toolkit_core::codegen::*;

pub use crate::{Mcp, SnapshotDrift, SnapshotSource, StdioCommand};

/// The HTTP client crate: a snapshot source's constructor takes a `reqwest::Client` and a
/// `reqwest::Url`.
pub use reqwest;
