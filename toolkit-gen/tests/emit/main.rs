//! The JSON Schema → Rust types emitter (`toolkit_gen::emit`): goldens for every schema form,
//! round trips through the generated (and compiled) goldens, and the real corpus — every MCP tool
//! and OpenAPI operation emits code that parses, and real documents' modules compile.
#![allow(clippy::unwrap_used, clippy::panic)]

mod answers;
mod arbitrary;
mod common;
mod compile;
mod corpus;
mod drawn;
mod fuzzed;
mod golden;
mod roundtrip;
mod snapshot_conformance;
mod sources;
mod stack;
