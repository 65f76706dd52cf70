//! toolkit-gen: typed Rust tool modules from OpenAPI documents and MCP `tools/list` snapshots.
//!
//! The generator is being built (see the README's status table). What the crate offers today is
//! the command-line front end over the runtime's own readers, so that what a script sees of a
//! document or catalog is exactly what the runtime reads:
//!
//! - `toolkit-gen check-catalog FILE` reads a catalog of tool definitions (a JSON array) and
//!   names every entry that is no definition.
//! - `toolkit-gen report (--openapi DOC | --mcp SNAPSHOT) [--format json|text]` prints the
//!   operations of an OpenAPI document read as tools and the skipped ones, with reasons and
//!   locations (or the tools of a snapshot), each with whether its input is fully typed.
//! - `toolkit-gen audit SNAPSHOT [--format json|text] [--deny LEVEL]` audits an MCP
//!   `tools/list` statically ([`audit`]): exit 1 on errors (or on `--deny`'s level).
//! - `toolkit-gen call (--openapi DOC --base-url URL | --mcp-url URL | --mcp-stdio 'CMD')
//!   [--header 'K: V']... NAME ['JSON']` runs one operation or MCP tool: the result JSON on stdout
//!   (exit 0) or the failure as JSON (exit 1).
//! - `toolkit-gen snapshot (--mcp-url URL [--header 'K: V']... | --mcp-stdio 'CMD') [-o FILE]`
//!   writes the tools an MCP server lists as a snapshot.
//! - `toolkit-gen search --catalog FILE (QUERY | --queries FILE) [--limit N]` searches a catalog
//!   as `tool_search` does.
//!
//! The heart of the generator is [`emit`]: JSON Schema → Rust input types (strict structs,
//! enums, `Option`s, boxed recursion), with every place it could not type reported by JSON
//! pointer.
#![deny(missing_docs)]

pub mod audit;
pub mod builder;
pub mod cli;
pub mod emit;
pub mod gateway;

pub use builder::Builder;
