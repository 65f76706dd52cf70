//! Integration tests of toolkit-runtime, in one binary (one link) with a module per concern.

mod support;

#[cfg(feature = "mcp")]
mod mcp;
