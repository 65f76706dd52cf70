//! The `tracing` spans of the runtime, with OpenTelemetry's semantic-convention names where they
//! exist (GenAI for tool calls, MCP for MCP requests, HTTP for HTTP requests).
//!
//! | span | when | fields |
//! | --- | --- | --- |
//! | `execute_tool` | each call of a tool ([`Tool::call`](crate::Tool::call), [`Toolkit::call_with`](crate::Toolkit::call_with), …) | `gen_ai.operation.name` (`execute_tool`), `gen_ai.tool.name` (as the model knows it), `gen_ai.tool.call.id`, `gen_ai.tool.type` (`function`), `toolkit.source`, `toolkit.source.tool` (the name the source knows), `mcp.transport`, `mcp.protocol.version` (for an MCP source), `toolkit.approval` (`approved`, `edited`, `declined`), `toolkit.outcome` (`ok`, `failure`), `error.type` (the failure's code), `toolkit.retryable`, `toolkit.duration_ms` |
//! | `discover` | a source's `discover` (MCP, HTTP) | `toolkit.source`, `toolkit.tools`, `toolkit.outcome`, `error.type` |
//! | `mcp.request` | each request to an MCP server | `mcp.method.name`, `mcp.transport`, `mcp.protocol.version`, `toolkit.source`, `gen_ai.tool.name` (the server's name of the tool, for `tools/call`), `toolkit.outcome`, `error.type` |
//! | `http.request` | each request of an HTTP source | `http.request.method`, `http.response.status_code`, `toolkit.source`, `gen_ai.tool.name` (the operation), `toolkit.outcome`, `error.type` |
//! | `code_mode.run` | each run of code mode's `execute` (its tool calls are `execute_tool` spans inside it) | `toolkit.tool_calls`, `toolkit.outcome`, `error.type` |
//!
//! Each span also sets `otel.name` (such as `execute_tool github__create_issue`), the span name an
//! OpenTelemetry layer exports. No field carries a credential, a header's value, an address, a
//! tool's input or its answer. With no subscriber that wants them, a span costs a check of a
//! cached flag and nothing is formatted.

use std::time::Instant;

use tracing::Span;
use tracing::field::Empty;

use crate::Failure;

/// The target of every span of the runtime.
pub const TARGET: &str = "toolkit_runtime";

/// The span of one call of a tool.
#[doc(hidden)]
pub fn tool_call(name: &str, origin: Option<(&str, &str)>, call_id: Option<&str>) -> Span {
    let (source, source_tool) = match origin {
        Some((source, tool)) => (Some(source), Some(tool)),
        None => (None, None),
    };
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        toolkit.source = source,
        toolkit.source.tool = source_tool,
        mcp.transport = Empty,
        mcp.protocol.version = Empty,
        toolkit.approval = Empty,
        toolkit.outcome = Empty,
        error.type = Empty,
        toolkit.retryable = Empty,
        toolkit.duration_ms = Empty,
    )
}

/// The span of a source's `discover`.
#[doc(hidden)]
pub fn discover(source: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "discover",
        otel.name = %format_args!("discover {source}"),
        toolkit.source = source,
        toolkit.tools = Empty,
        toolkit.outcome = Empty,
        error.type = Empty,
    )
}

/// `discover`'s work in its span, with the number of tools or the failure recorded.
#[doc(hidden)]
pub async fn discovering(
    source: &str,
    work: impl std::future::Future<Output = Result<Vec<crate::ToolDefinition>, crate::ToolSourceError>>,
) -> Result<Vec<crate::ToolDefinition>, crate::ToolSourceError> {
    use tracing::Instrument as _;
    let span = discover(source);
    let outcome = work.instrument(span.clone()).await;
    match &outcome {
        Ok(tools) => {
            span.record("toolkit.tools", tools.len());
            record_end(&span, None);
        }
        Err(error) => record_end(&span, Some(error.reason.code())),
    }
    outcome
}

/// When a span's work began, if anyone records the span (no clock is read otherwise).
#[doc(hidden)]
pub fn started(span: &Span) -> Option<Instant> {
    (!span.is_disabled()).then(Instant::now)
}

/// Records on `span` how a call ended: `ok`, or `failure` with its code and whether it may be
/// tried again; and how long it took.
#[doc(hidden)]
pub fn record_outcome<T>(span: &Span, started: Option<Instant>, outcome: &Result<T, Failure>) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Ok(_) => {
            span.record("toolkit.outcome", "ok");
        }
        Err(failure) => {
            span.record("toolkit.outcome", "failure");
            span.record("error.type", failure.code.as_str());
            span.record("toolkit.retryable", failure.retryable);
        }
    }
    if let Some(started) = started {
        span.record(
            "toolkit.duration_ms",
            started.elapsed().as_secs_f64() * 1_000.0,
        );
    }
}

/// Records on `span` that its work ended with `error_type`, or well when `None`.
#[doc(hidden)]
pub fn record_end(span: &Span, error_type: Option<&str>) {
    match error_type {
        None => {
            span.record("toolkit.outcome", "ok");
        }
        Some(error_type) => {
            span.record("toolkit.outcome", "failure");
            span.record("error.type", error_type);
        }
    }
}
