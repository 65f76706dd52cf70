//! The gateway's Prometheus metrics (served at `/metrics` over HTTP): calls by source, tool and
//! outcome, their latency, the other requests passed to a source (a resource read, a prompt, a
//! completion) by source, method and outcome, and theirs, upstream errors, catalog refreshes and
//! refused requests. Labels hold
//! names the configuration and the catalog chose, never an argument, a token or an address.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::Value;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, Reason, ToolDefinition, ToolSource,
    ToolSourceError,
};
use toolkit_runtime::resilience::{Answered, Layer};

type Labels = Vec<(&'static str, String)>;

/// The gateway's metrics, shared by its sources, its refreshes and its HTTP guard.
pub struct Metrics {
    registry: Registry,
    calls: Family<Labels, Counter>,
    latency: Family<Labels, Histogram, fn() -> Histogram>,
    upstream_errors: Family<Labels, Counter>,
    refreshes: Family<Labels, Counter>,
    refused: Family<Labels, Counter>,
    in_flight: Gauge,
    requests: Family<Labels, Counter>,
    request_latency: Family<Labels, Histogram, fn() -> Histogram>,
    answered: Family<Labels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("toolkit_gateway");
        let calls = Family::<Labels, Counter>::default();
        let latency = Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let upstream_errors = Family::<Labels, Counter>::default();
        let refreshes = Family::<Labels, Counter>::default();
        let refused = Family::<Labels, Counter>::default();
        let answered = Family::<Labels, Counter>::default();
        let in_flight = Gauge::default();
        let requests = Family::<Labels, Counter>::default();
        let request_latency = Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        registry.register(
            "tool_calls",
            "Tool calls by source, tool and outcome (ok or the failure's reason)",
            calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "How long tool calls took, by source and tool",
            latency.clone(),
        );
        registry.register(
            "upstream_errors",
            "Calls and listings a source failed, by source and reason",
            upstream_errors.clone(),
        );
        registry.register(
            "catalog_refreshes",
            "Catalog refreshes, by outcome (complete, partial)",
            refreshes.clone(),
        );
        registry.register(
            "requests_refused",
            "HTTP requests refused before MCP saw them, by reason",
            refused.clone(),
        );
        registry.register(
            "tool_calls_in_flight",
            "Tool calls running now",
            in_flight.clone(),
        );
        registry.register(
            "upstream_requests",
            "Requests other than tool calls passed to a source (resources/read, prompts/get, \
             completion/complete, resources/subscribe, resources/unsubscribe), by source, \
             method and outcome",
            requests.clone(),
        );
        registry.register(
            "upstream_request_duration_seconds",
            "How long requests other than tool calls took, by source and method",
            request_latency.clone(),
        );
        registry.register(
            "resilience_answers",
            "Tool calls a resilience layer answered in the source's stead (a retryable failure), \
             by source and layer (rate, rate_per_person, queue, breaker, timeout)",
            answered.clone(),
        );
        Self {
            answered,
            registry,
            calls,
            latency,
            upstream_errors,
            refreshes,
            refused,
            in_flight,
            requests,
            request_latency,
        }
    }
}

impl Metrics {
    /// The metrics in Prometheus' text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing to a String does not fail.
        let _ = encode(&mut text, &self.registry);
        text
    }

    /// Tool calls running now.
    pub fn calls_in_flight(&self) -> i64 {
        self.in_flight.get()
    }

    /// Counts a call of `tool` of `source` that ended as `outcome` after `took`.
    fn record_call(&self, source: &str, tool: &str, outcome: &str, took: Duration) {
        let place = vec![("source", source.to_owned()), ("tool", tool.to_owned())];
        let mut labels = place.clone();
        labels.push(("outcome", outcome.to_owned()));
        self.calls.get_or_create(&labels).inc();
        self.latency
            .get_or_create(&place)
            .observe(took.as_secs_f64());
    }

    /// Counts a call of `source` that the resilience layer `layer` answered.
    pub fn record_answered(&self, source: &str, layer: Layer) {
        let labels = vec![("source", source.to_owned()), ("layer", layer.to_string())];
        self.answered.get_or_create(&labels).inc();
    }

    /// Counts a failure of `source` (a call or a listing) for `reason`.
    pub fn record_upstream_error(&self, source: &str, reason: &str) {
        let labels = vec![("source", source.to_owned()), ("reason", reason.to_owned())];
        self.upstream_errors.get_or_create(&labels).inc();
    }

    /// Counts a refresh: `complete` when every source answered.
    pub fn record_refresh(&self, complete: bool) {
        let outcome = if complete { "complete" } else { "partial" };
        self.refreshes
            .get_or_create(&vec![("outcome", outcome.to_owned())])
            .inc();
    }

    /// Counts a request refused for `reason` (`unauthenticated`, `insufficient_scope`,
    /// `shutting_down`).
    pub fn record_refused(&self, reason: &'static str) {
        self.refused
            .get_or_create(&vec![("reason", reason.to_owned())])
            .inc();
    }
}

impl Metrics {
    /// Runs `call`, a call of `tool` of `source`, counted and timed as every call of a source
    /// is: the one a source's [`ToolSource::call`] makes (through [`Metered`]), and the ones
    /// that reach a source another way (a task passed through, `tasks.rs`). A failure but for
    /// invalid input counts as an upstream error too.
    pub(crate) async fn metered<T>(
        &self,
        source: &str,
        tool: &str,
        call: impl std::future::Future<Output = Result<T, ToolSourceError>>,
    ) -> Result<T, ToolSourceError> {
        self.in_flight.inc();
        let _running = InFlight(&self.in_flight);
        let start = Instant::now();
        let answer = call.await;
        let outcome = self.outcome(source, &answer);
        self.record_call(source, tool, outcome, start.elapsed());
        answer
    }
}

impl Metrics {
    /// The outcome label of `answer` from `source`: `ok`, or its failure's reason, which counts
    /// as an upstream error too unless the input was invalid.
    fn outcome<T>(&self, source: &str, answer: &Result<T, ToolSourceError>) -> &'static str {
        match answer {
            Ok(_) => "ok",
            Err(error) => {
                let reason = reason_label(error);
                if reason != "invalid_input" {
                    self.record_upstream_error(source, reason);
                }
                reason
            }
        }
    }

    /// Runs `request`, a request of `method` (such as `resources/read`) passed to `source`,
    /// counted and timed by source, method and outcome; a failure but for invalid input counts
    /// as an upstream error too.
    pub(crate) async fn requested<T>(
        &self,
        source: &str,
        method: &str,
        request: impl std::future::Future<Output = Result<T, ToolSourceError>>,
    ) -> Result<T, ToolSourceError> {
        let start = Instant::now();
        let answer = request.await;
        let outcome = self.outcome(source, &answer);
        let place = vec![("source", source.to_owned()), ("method", method.to_owned())];
        let mut labels = place.clone();
        labels.push(("outcome", outcome.to_owned()));
        self.requests.get_or_create(&labels).inc();
        self.request_latency
            .get_or_create(&place)
            .observe(start.elapsed().as_secs_f64());
        answer
    }
}

/// The label of a failure's reason.
pub fn reason_label(error: &ToolSourceError) -> &'static str {
    match error.reason {
        Reason::Authentication { .. } => "authentication",
        Reason::NotFound { .. } => "not_found",
        Reason::InvalidInput { .. } => "invalid_input",
        Reason::CallFailed { .. } => "call_failed",
        Reason::Unavailable { .. } => "unavailable",
        Reason::InvalidResponse { .. } => "invalid_response",
        Reason::Unsupported { .. } => "unsupported",
        _ => "unknown",
    }
}

/// A source whose calls are counted and timed.
pub(crate) struct Metered {
    inner: Arc<dyn ToolSource>,
    metrics: Arc<Metrics>,
}

impl Metered {
    pub(crate) fn new(inner: Arc<dyn ToolSource>, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }

    /// The call, measured; with its server's result as written when `written`.
    async fn measured(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        let mut kept = None;
        let call = async {
            let outcome = self
                .inner
                .call_keeping_written(tool, input, context, written)
                .await;
            kept = outcome.written;
            outcome.answer
        };
        let answer = self.metrics.metered(self.inner.name(), tool, call).await;
        if let Some(layer) = context.extension::<Answered>().and_then(Answered::layer) {
            self.metrics.record_answered(self.inner.name(), layer);
        }
        Outcome {
            answer,
            written: kept,
        }
    }
}

/// Keeps the in-flight gauge right even when a call's future is dropped.
struct InFlight<'a>(&'a Gauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl ToolSource for Metered {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async move {
            let found = self.inner.discover().await;
            if let Err(error) = &found {
                self.metrics
                    .record_upstream_error(self.inner.name(), reason_label(error));
            }
            found
        })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async move { self.measured(tool, input, context, false).await.answer })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(self.measured(tool, input, context, true))
    }
}
