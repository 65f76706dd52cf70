//! The span of a request of an HTTP source, beside `toolkit-core`'s
//! [`telemetry`](toolkit_core::telemetry) (a tool's call, a source's discovery).

pub(crate) use toolkit_core::telemetry::{TARGET, discovering, record_end};
use tracing::{Span, field::Empty};

/// The span of one request of an HTTP source.
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
