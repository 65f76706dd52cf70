//! End-to-end tests, in one binary.
#![allow(clippy::unwrap_used, clippy::panic)]

mod corpus;
mod host;
mod mcp_conformance;
