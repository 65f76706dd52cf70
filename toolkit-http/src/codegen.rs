//! Everything code `toolkit-gen` writes for an OpenAPI document or a GraphQL schema names: the
//! core's contract ([`toolkit_core::codegen`]: definitions, the source trait, typed calls, serde
//! as generated types name it) with the HTTP source beside it, and the HTTP client crate its
//! constructor takes. A generated module starts with `use ::toolkit_http::codegen as __tk;`, so
//! the crate that holds it declares `toolkit-http` alone.
//!
//! What is here is public API: a generated module compiles against every version of this crate
//! that is semver-compatible with the one it was generated for.

pub use toolkit_core::codegen::*;

pub use crate::{CredentialProvider, HttpClient, HttpSource, HttpSourceBuilder, HttpSourceError};

/// The HTTP client crate: a generated source's constructor takes a client built with it.
pub use reqwest;
