//! Serving over Streamable HTTP, beside rmcp's service: each session bound to its principal and
//! bounded ([`session_owners`]), its end heard ([`session_end`]), its plain `tools/call`s
//! answered past rmcp's session worker ([`direct_calls`]); the answers layer
//! ([`written_http`]) that writes an upstream's result and progress into the JSON and SSE answers
//! as they were written ([`as_written`]: what a request's calls kept), replays a resumed stream's
//! events as first written ([`replays`]), and sends an SSE answer's head with its first message
//! ([`first_message`]); rmcp's service shared, not cloned for each request ([`shared_service`]).

pub(crate) mod as_written;
pub(crate) mod direct_calls;
pub(crate) mod first_message;
pub(crate) mod replays;
pub(crate) mod session_end;
pub(crate) mod session_owners;
pub(crate) mod shared_service;
pub(crate) mod written_http;
