//! Driving a served toolkit from a test (seed 002, "Testing"), with the feature `testing`.
//!
//! - [`InProcessClient`] drives a built [`McpServer`](super::McpServer) in-process, over an
//!   in-memory pipe: no socket, no child process, and the exact JSON a real client would read.
//! - [`ServerProcess`] drives a built server binary over its stdio, and [`probe`] is the whole
//!   check of one: handshake, `tools/list`, stdin closed, exit 0 with nothing on stderr.
//!
//! - [`tcp_nodelay`] (Linux) reads `TCP_NODELAY` off a process's connection: what a server set
//!   on the sockets it accepted.
//!
//! Both clients speak one JSON-RPC message per line and wait at most [`DEFAULT_TIMEOUT`] (unless told
//! otherwise) for each answer, so a test of a server that never answers fails instead of
//! hanging.

mod client;
mod conversation;
mod process;
#[cfg(target_os = "linux")]
mod socket;

pub use client::InProcessClient;
pub use conversation::{DEFAULT_TIMEOUT, HarnessError, Revision};
pub use process::{Finished, Probe, ServerProcess, probe};
#[cfg(target_os = "linux")]
pub use socket::tcp_nodelay;
