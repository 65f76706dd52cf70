//! toolkit-gen: typed Rust tool modules from OpenAPI documents and MCP `tools/list` snapshots.
//!
//! Each document or snapshot becomes one module: a strict input struct per tool (unknown fields
//! refused) and one source type — a `toolkit_runtime::ToolSource` with a typed method per tool —
//! that an `Assembly` takes beside sources discovered at run time. The tools are read by the
//! runtime's own reader, so a generated tool and the same tool discovered at run time have the
//! same name, input schema and hints.
//!
//! # From `build.rs`
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! toolkit-runtime = { version = "0.1", features = ["http", "mcp"] }
//! serde = { version = "1", features = ["derive"] }
//! serde_json = "1"
//! reqwest = { version = "0.13", default-features = false } # for MCP snapshots
//!
//! [build-dependencies]
//! toolkit-gen = "0.1"
//! ```
//!
//! `build.rs` (see [`Builder`] for every option):
//!
//! ```no_run
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     toolkit_gen::Builder::new()
//!         .openapi("specs/petstore.yaml")
//!         .mcp_snapshot("specs/tasks.json")
//!         .generate_to_out_dir()?;
//!     Ok(())
//! }
//! ```
//!
//! `src/lib.rs`, and a typed call:
//!
//! ```ignore
//! pub mod petstore {
//!     include!(concat!(env!("OUT_DIR"), "/petstore.rs"));
//! }
//!
//! let petstore = petstore::Petstore::new("https://petstore.example.com/v1", client)?;
//! let pets = petstore.list_pets(petstore::ListPetsInput { limit: Some(10) }).await?;
//! ```
//!
//! # From the command line
//!
//! - `toolkit-gen openapi DOC [-o FILE]`, `toolkit-gen mcp SNAPSHOT [-o FILE]`: one module.
//! - `toolkit-gen crate (--openapi DOC | --mcp SNAPSHOT)... --name NAME -o DIR`: a whole crate to
//!   commit; `toolkit-gen check ...same arguments... DIR` exits 1 when it is stale.
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
//! - `toolkit-gen serve --config toolkit.toml` serves the sources a configuration names, under
//!   its policy, as one MCP server over stdio or Streamable HTTP (the [`gateway`]).
//!
//! The heart of the generator is [`emit`]: JSON Schema → Rust input types (strict structs,
//! enums, `Option`s, boxed recursion), with every place it could not type reported by JSON
//! pointer, and the source types over them.
#![deny(missing_docs)]

pub mod audit;
pub mod builder;
pub mod cli;
pub mod emit;
pub mod gateway;
pub mod inputs;

pub use builder::Builder;
