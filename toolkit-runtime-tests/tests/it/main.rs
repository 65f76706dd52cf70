//! Integration tests of toolkit-runtime, in one binary (one link) with a module per concern.
#![allow(clippy::unwrap_used, clippy::panic)]

mod approval;
#[cfg(feature = "code")]
mod code;
#[cfg(all(feature = "code", feature = "openapi"))]
mod code_search;
#[cfg(feature = "conformance")]
mod conformance;
mod definition;
#[cfg(feature = "openapi")]
mod discovery;
#[cfg(all(feature = "graphql", feature = "openapi"))]
mod graphql;
#[cfg(feature = "http")]
mod http;
#[cfg(all(feature = "openapi", feature = "conformance"))]
mod http_conformance;
#[cfg(feature = "openapi")]
mod http_security;
#[cfg(feature = "openapi")]
mod openapi;
#[cfg(feature = "openapi")]
mod openapi_corpus;
#[cfg(feature = "openapi")]
mod prism_judge;
#[cfg(feature = "code")]
mod progress;
#[cfg(feature = "resilience")]
mod resilience;
#[cfg(feature = "rig")]
mod rig;
mod search;
#[cfg(feature = "search-embeddings")]
mod search_meaning;
#[cfg(feature = "serve")]
mod serve;
mod spans;
#[cfg(feature = "openapi")]
mod stripe_judge;
// Shared with toolkit-core's tests, where it lives (its names are the core's, which the
// runtime re-exports).
#[path = "../../../toolkit-core/tests/core/support.rs"]
mod support;
#[cfg(feature = "openapi")]
mod swagger_autorest;
#[cfg(feature = "openapi")]
mod swagger_cross_check;
#[cfg(feature = "code-test-worker")]
mod worker;

#[cfg(feature = "mcp")]
mod mcp;
