//! Everything code written by `toolkit-gen` names: the one contract between the generator and
//! the runtime, as `tonic::codegen` is tonic-build's.
//!
//! It is `toolkit-core`'s [`codegen`](toolkit_core::codegen) (definitions, the source trait,
//! typed calls, serde as generated types name it) with the source kinds a generated module
//! constructs beside it: [`HttpSource`] (feature `http`) for OpenAPI modules, [`Mcp`] and
//! [`SnapshotSource`] (feature `mcp`) for snapshot modules, and the HTTP client crate they take.
//! What is here is public API: a generated module compiles against every runtime of the same
//! semver-compatible version.

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
