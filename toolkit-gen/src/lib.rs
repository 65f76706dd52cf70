//! toolkit-gen: typed Rust tool modules from OpenAPI documents and MCP `tools/list` snapshots.
//!
//! The generator is being built (see the README's status table). What the crate offers today is
//! the command-line front end over the runtime's own readers, so that what a script sees of a
//! document or catalog is exactly what the runtime reads:
//!
//! - `toolkit-gen check-catalog FILE` reads a catalog of tool definitions (a JSON array) and
//!   names every entry that is no definition.
#![deny(missing_docs)]

pub mod cli;
pub mod mcp_cli;
