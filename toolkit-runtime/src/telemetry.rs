//! What the runtime records with `tracing`: the spans and fields of `toolkit-core`'s
//! [`telemetry`](toolkit_core::telemetry) (a tool's call, a source's discovery), and the spans of
//! the requests the HTTP source sends and of code mode's runs (an MCP source's are
//! `toolkit-mcp`'s).

pub use toolkit_core::telemetry::*;

#[cfg(any(feature = "http", feature = "code"))]
use tracing::{Span, field::Empty};

/// The span of one request of an HTTP source.
#[cfg(feature = "http")]
pub(crate) fn http_request(method: &str, source: &str, operation: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "http.request",
        otel.name = method,
        http.request.method = method,
        http.response.status_code = Empty,
        toolkit.source = source,
        gen_ai.tool.name = operation,
        toolkit.outcome = Empty,
        error.type = Empty,
    )
}

/// The span of a run of code mode.
#[cfg(feature = "code")]
pub(crate) fn code_run() -> Span {
    tracing::info_span!(
        target: TARGET,
        "code_mode.run",
        otel.name = "code_mode.run",
        toolkit.tool_calls = Empty,
        toolkit.outcome = Empty,
        error.type = Empty,
    )
}
