//! Everything code written by `toolkit-gen` names: the one contract between the generator and
//! the runtime, as `tonic::codegen` is tonic-build's.
//!
//! A generated module starts with `use ::toolkit_runtime::codegen as __tk;` and names nothing
//! else but `__tk::…` and `::std::…`, so a crate that uses it declares `toolkit-runtime` alone
//! (feature `http` for OpenAPI sources, `mcp` for snapshot sources) — never serde, serde_json or
//! reqwest at versions of its own that could drift from the runtime's. serde's derives are used
//! through [`serde`] with `#[serde(crate = "__tk::serde")]`. (Include each generated file in a
//! module of its own: two in one module would both bring in `__tk`.)
//!
//! What is here is public API: a generated module compiles against every runtime of the same
//! semver-compatible version.

pub use serde;
pub use serde_json;
/// Deserializing with the JSON path of what did not fit: what [`call_answered`] reads typed
/// answers with.
pub use serde_path_to_error;

mod nullable;
mod unknown_value;

pub use nullable::{Nullable, present};
pub use unknown_value::UnknownValue;

pub use crate::{
    BoxFuture, CatalogError, JsonObject, ToolDefinition, ToolSource, ToolSourceError,
    call_answered, call_typed,
};

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
