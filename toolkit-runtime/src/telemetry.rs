//! What the runtime records with `tracing`: the spans and fields of `toolkit-core`'s
//! [`telemetry`](toolkit_core::telemetry) (a tool's call, a source's discovery), and the spans of
//! code mode's runs (an MCP source's requests are `toolkit-mcp`'s, an HTTP source's
//! `toolkit-http`'s).

pub use toolkit_core::telemetry::*;

#[cfg(feature = "code")]
use tracing::{Span, field::Empty};

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
