//! Serving a toolkit as an MCP server: the pieces built so far.
//!
//! Issue 8 serves any assembled [`Toolkit`](crate::Toolkit) over stdio and Streamable HTTP. Two
//! pieces the server will stand on exist today:
//!
//! - [`stdin_guard`]: frames stdin the way the server will read it — one streaming UTF-8
//!   decoder, a byte-order mark stripped only at the start, lines split on `\n` — and answers
//!   itself every line the server cannot use (not JSON, over the length cap, no JSON-RPC
//!   message), so a client never waits on a request nobody heard.
//! - [`failure`]: what an agent reads of a failed call — the remediation folded into the
//!   message, and every value echoed back cut to a bounded length.
//!
//! Serving itself (the MCP server over stdio and HTTP, annotations under policy, the crash
//! guard) is not built yet.

pub mod failure;
pub mod stdin_guard;
