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
//! `Cargo.toml` — the runtime (feature `http` for OpenAPI sources, `mcp` for snapshot sources)
//! and the generator, nothing else: generated code names only `::toolkit_runtime::codegen` and
//! `::std`, so no version of serde, serde_json or reqwest can drift from the runtime's.
//!
//! ```toml
//! [dependencies]
//! toolkit-runtime = { version = "0.1", features = ["http", "mcp"] }
//!
//! [build-dependencies]
//! toolkit-gen = "0.1"
//! ```
//!
//! `build.rs` (see [`Builder`] for every option):
//!
//! ```no_run
//! fn main() -> Result<(), toolkit_gen::builder::GenerateError> {
//!     // On failure cargo shows every problem, each located by file and JSON pointer
//!     // (`specs/petstore.yaml: #/paths/~1pets/get: …`); nothing is written.
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
//! As a build dependency the crate is lean: the runtime's readers of documents and snapshots
//! (features `openapi` and `mcp-tools`, which need no executor), syn, quote and prettyplease —
//! no tokio, no reqwest, no QuickJS, no C toolchain.
//!
//! # From the command line
//!
//! The `toolkit-gen` binary (crate `toolkit-cli`) writes the same modules, or a whole crate to
//! commit with a `check` that fails when it is stale, and inspects documents and servers.
//!
//! The heart of the generator is [`emit`]: JSON Schema → Rust input types (strict structs,
//! enums, `Option`s, boxed recursion), with every place it could not type reported by JSON
//! pointer, and the source types over them.
#![deny(missing_docs)]
// The examples are `build.rs` files, whose `fn main` is the point.
#![allow(clippy::needless_doctest_main)]

pub mod audit;
pub mod builder;
pub mod emit;
pub mod inputs;

pub use builder::Builder;
