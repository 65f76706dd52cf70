//! The span of a request to an MCP server, beside `toolkit-core`'s
//! [`telemetry`](toolkit_core::telemetry) (a tool's call, a source's discovery).

pub(crate) use toolkit_core::telemetry::{TARGET, discovering, record_end};
use tracing::{Span, field::Empty};

/// The span of one request to an MCP server.
pub(crate) fn mcp_request(
    method: &'static str,
    source: &str,
    transport: &'static str,
    tool: Option<&str>,
) -> Span {
    tracing::info_span!(
        target: TARGET,
        "mcp.request",
        otel.name = method,
        mcp.method.name = method,
        mcp.transport = transport,
        mcp.protocol.version = Empty,
        toolkit.source = source,
        gen_ai.tool.name = tool,
        toolkit.outcome = Empty,
        error.type = Empty,
    )
}
