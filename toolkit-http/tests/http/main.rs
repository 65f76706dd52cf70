//! Integration tests of toolkit-http, in one binary (one link) with a module per concern.
//!
//! The HTTP source against a recording server on 127.0.0.1 (`http.rs`: encodings, statuses, caps,
//! timeouts, redirects, what a model could try), credentials where a document's schemes say
//! (`http_security.rs`), the conformance suites (`http_conformance.rs`); operations read from
//! OpenAPI, Swagger 2.0 and Discovery documents sent to real judges (Prism, openapi-core,
//! AutoRest's test server, Google's Python client; swagger2openapi for the Swagger conversion);
//! and with feature `graphql` the GraphQL source against graphql-yoga. The peers are installed by
//! `scripts/install-test-peers` (`peers.rs` finds and starts them).
#![allow(clippy::unwrap_used, clippy::panic)]

mod discovery;
#[cfg(feature = "graphql")]
mod graphql;
mod http;
mod http_conformance;
mod http_security;
mod openapi;
mod peers;
mod prism_judge;
mod stripe_judge;
// Shared with toolkit-core's tests, where it lives.
#[path = "../../../toolkit-mcp/tests/mcp/processes.rs"]
mod processes;
#[path = "../../../toolkit-core/tests/core/support.rs"]
mod support;
mod swagger_autorest;
mod swagger_cross_check;
