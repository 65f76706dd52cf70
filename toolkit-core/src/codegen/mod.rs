//! Everything code written by `toolkit-gen` names: the one contract between the generator and
//! the runtime, as `tonic::codegen` is tonic-build's.
//!
//! A generated module starts with `use ::toolkit_runtime::codegen as __tk;` (which is this
//! module, with the source kind the module needs beside it) and names nothing else but `__tk::…`,
//! `::std::…` and std's prelude (`Option`, `String`, `Vec`, `Box`), so a crate that uses it
//! declares `toolkit-runtime` alone (feature `http` for OpenAPI sources, `mcp` for snapshot
//! sources) — never serde, serde_json or reqwest at versions of its own that could drift from the
//! runtime's. Everything here but the source kinds lives in `toolkit-core`, whose version moves
//! only when this contract does. serde's derives are used through [`serde`] with
//! `#[serde(crate = "__tk::serde")]`; a string enum's impls come from [`string_enum!`]. (Include
//! each generated file in a module of its own: two in one module would both bring in `__tk`.)
//!
//! What is here is public API: a generated module compiles against every runtime of the same
//! semver-compatible version.

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
    BoxFuture, CallContext, CatalogError, JsonObject, ToolDefinition, ToolSource, ToolSourceError,
    call_answered, call_typed,
};
