//! Everything code written by `toolkit-gen` names, in one place: the contract between the
//! generator and the runtime, as `tonic::codegen` is tonic-build's.
//!
//! Code generated now names the crate of its source kind instead — `use ::toolkit_http::codegen
//! as __tk;` for OpenAPI documents and GraphQL schemas, `use ::toolkit_mcp::codegen as __tk;`
//! for MCP snapshots — so the crate that holds it declares `toolkit-http` or `toolkit-mcp`, not
//! the runtime. This module is kept for code generated before, which starts with
//! `use ::toolkit_runtime::codegen as __tk;`: it still offers all of it, `toolkit-core`'s
//! [`codegen`](toolkit_core::codegen) (definitions, the source trait, typed calls, serde as
//! generated types name it) with the source kinds a generated module constructs beside it:
//! [`HttpSource`] (feature `http`) for OpenAPI modules, [`Mcp`] and [`SnapshotSource`] (feature
//! `mcp`) for snapshot modules, and the HTTP client crate they take. What is here is public API:
//! a generated module compiles against every runtime of the same semver-compatible version.

pub use toolkit_core::codegen::*;

#[cfg(feature = "http")]
pub use crate::http::{
    CredentialProvider, HttpClient, HttpSource, HttpSourceBuilder, HttpSourceError,
};

#[cfg(feature = "mcp")]
pub use crate::mcp::{Mcp, SnapshotDrift, SnapshotSource, StdioCommand};

/// The HTTP client crate: an MCP snapshot source's constructor takes a `reqwest::Client` and a
/// `reqwest::Url`.
#[cfg(any(feature = "http", feature = "mcp"))]
pub use reqwest;
