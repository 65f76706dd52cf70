//! Everything code written by `toolkit-gen` names: the one contract between the generator and
//! the runtime, as `tonic::codegen` is tonic-build's.
//!
//! A generated module starts with one `use` of this module with the source kind it constructs
//! beside it — `use ::toolkit_http::codegen as __tk;` for an OpenAPI document or a GraphQL
//! schema (the HTTP source), `use ::toolkit_mcp::codegen as __tk;` for an MCP snapshot (the
//! snapshot source); a module of types without a source names this one — and names nothing else
//! but `__tk::…`, `::std::…` and std's prelude (`Option`, `String`, `Vec`, `Box`). So a crate
//! that holds generated code declares `toolkit-http` for OpenAPI and GraphQL modules,
//! `toolkit-mcp` for snapshot modules, and nothing else — never serde, serde_json or reqwest at
//! versions of its own that could drift from the toolkit's (as progenitor's generated code
//! depends on progenitor-client alone). Everything here but the source kinds lives in
//! `toolkit-core`, whose version moves only when this contract does; `toolkit_runtime::codegen`
//! still offers all of it for code generated before. serde's derives are used through [`serde`]
//! with `#[serde(crate = "__tk::serde")]`; a string enum's impls come from [`string_enum!`].
//! (Include each generated file in a module of its own: two in one module would both bring in
//! `__tk`.)
//!
//! What is here is public API: a generated module compiles against every version of these crates
//! that is semver-compatible with the one it was generated for.

pub use serde;
/// serde's derives, as generated types name them (`#[derive(__tk::Serialize)]`).
pub use serde::{Deserialize, Serialize};
pub use serde_json;
/// Deserializing with the JSON path of what did not fit: what [`call_answered`] reads typed
/// answers with.
pub use serde_path_to_error;

mod nullable;
mod string_enum;
mod unknown_value;

pub use nullable::{Nullable, present};
pub use string_enum::{string_enum_index, string_enum_value};
pub use unknown_value::UnknownValue;

#[doc(inline)]
pub use crate::__codegen_string_enum as string_enum;

/// What a typed method returns: its answer, or the tool's failure.
pub type Result<T, E = ToolSourceError> = std::result::Result<T, E>;

pub use crate::{
    BoxFuture, CallContext, CatalogError, JsonObject, Outcome, ToolDefinition, ToolSource,
    ToolSourceError, call_answered, call_typed,
};
