//! Integration tests of toolkit-runtime, in one binary (one link) with a module per concern.
#![allow(clippy::unwrap_used, clippy::panic)]

mod approval;
#[cfg(feature = "code")]
mod code;
#[cfg(feature = "code-test-worker")]
mod code_pool;
#[cfg(all(feature = "code", feature = "openapi"))]
mod code_search;
#[cfg(feature = "conformance")]
mod conformance;
mod definition;
// Where the peers are, Prism started on a document (`resilience`) and GitHub's description
// (`code_search`): toolkit-http's tests' `peers.rs`, shared by path.
#[cfg(any(feature = "resilience", all(feature = "code", feature = "openapi")))]
#[path = "../../../toolkit-http/tests/http/peers.rs"]
mod peers;
#[cfg(feature = "code")]
mod progress;
#[cfg(feature = "resilience")]
mod resilience;
#[cfg(feature = "rig")]
mod rig;
mod search;
#[cfg(feature = "search-embeddings")]
mod search_meaning;
// Shared by path with toolkit-mcp's tests.
mod span_capture;
mod spans;
// Shared with toolkit-core's tests, where it lives (its names are the core's, which the
// runtime re-exports).
#[path = "../../../toolkit-mcp/tests/mcp/processes.rs"]
mod processes;
#[path = "../../../toolkit-core/tests/core/support.rs"]
mod support;
