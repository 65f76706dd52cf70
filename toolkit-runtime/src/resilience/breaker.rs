//! The circuit breaker: tower-resilience's `CircuitBreaker` (the one crates.io `mcp-proxy`
//! wears) around one attempt of a call, [`Attempts`], which also holds the per-attempt timeout.
//! Retryable failures (a timeout among them) count as failures; a tool's own failure, a bad
//! input or a refused credential do not, since the source answered.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::Value;
use tower::{Layer as _, Service, ServiceExt as _};
use tower_resilience_circuitbreaker::{
    CircuitBreaker, CircuitBreakerError, CircuitBreakerLayer, CircuitState, FailureClassifier,
    SlidingWindowType,
};

use super::layer::Layer;
use super::settings::Breaker as Settings;
use crate::{BoxFuture, CallContext, JsonObject, Reason, ToolSource, ToolSourceError};

/// One attempt of a call, owned so that tower's layers can hold it.
pub(crate) struct Attempt {
    pub(crate) tool: Arc<str>,
    pub(crate) input: JsonObject,
    pub(crate) context: CallContext,
}

/// A failed attempt, and the layer that answered in the source's stead, if one did.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) error: ToolSourceError,
    pub(crate) by: Option<Layer>,
}

/// An attempt sent to the source, ended by the timeout when it has one.
#[derive(Clone)]
pub(crate) struct Attempts {
    pub(crate) source: Arc<dyn ToolSource>,
    pub(crate) timeout: Option<Duration>,
}

impl Attempts {
    /// Sends `attempt`.
    pub(crate) async fn send(&self, attempt: Attempt) -> Result<Value, Failed> {
        let call = self
            .source
            .call(&attempt.tool, attempt.input, &attempt.context);
        let answer = match self.timeout {
            None => call.await,
            Some(timeout) => match tokio::time::timeout(timeout, call).await {
                Ok(answer) => answer,
                Err(_) => {
                    return Err(Failed {
                        error: ToolSourceError::new(
                            self.source.name(),
                            Reason::Unavailable {
                                description: format!(
                                    "`{}` did not answer within {} ms",
                                    attempt.tool,
                                    timeout.as_millis()
                                ),
                                retry_after: None,
                            },
                        ),
                        by: Some(Layer::Timeout),
                    });
                }
            },
        };
        answer.map_err(|error| Failed { error, by: None })
    }
}

impl Service<Attempt> for Attempts {
    type Response = Value;
    type Error = Failed;
    type Future = BoxFuture<'static, Result<Value, Failed>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Failed>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, attempt: Attempt) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { this.send(attempt).await })
    }
}

/// What the breaker counts as a failure: a retryable one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unavailability;

impl FailureClassifier<Value, Failed> for Unavailability {
    fn classify(&self, result: &Result<Value, Failed>) -> bool {
        matches!(result, Err(failed) if failed.error.reason.is_retryable())
    }
}

/// The breaker around [`Attempts`], and when it last opened (for the wait it tells).
pub(crate) struct Breaker {
    service: CircuitBreaker<Attempts, Unavailability>,
    opened: Arc<Mutex<Instant>>,
    open_for: Duration,
}

impl Breaker {
    /// The breaker `settings` describes around `attempts`; `None` for settings the crate refuses
    /// (which `Resilience::check` refuses first).
    pub(crate) fn new(settings: &Settings, attempts: Attempts, name: &str) -> Option<Self> {
        let opened = Arc::new(Mutex::new(Instant::now()));
        let layer: CircuitBreakerLayer<Unavailability> = CircuitBreakerLayer::builder()
            .name(name)
            .failure_rate_threshold(settings.failure_rate)
            .sliding_window_type(SlidingWindowType::TimeBased)
            .sliding_window_duration(settings.window)
            .minimum_number_of_calls(settings.minimum_calls)
            .wait_duration_in_open(settings.open_for)
            .permitted_calls_in_half_open(settings.half_open_calls)
            .on_state_transition({
                let opened = Arc::clone(&opened);
                let name = name.to_owned();
                move |from, to| {
                    tracing::warn!(source = %name, ?from, ?to, "circuit breaker");
                    if to == CircuitState::Open
                        && let Ok(mut opened) = opened.lock()
                    {
                        *opened = Instant::now();
                    }
                }
            })
            .failure_classifier_type(Unavailability)
            .build()
            .ok()?;
        Some(Self {
            service: layer.layer(attempts),
            opened,
            open_for: settings.open_for,
        })
    }

    /// Sends `attempt` through the breaker: at once refused while it is open.
    pub(crate) async fn send(&self, attempt: Attempt, source: &str) -> Result<Value, Failed> {
        let mut service = self.service.clone();
        let sent = match service.ready().await {
            Ok(ready) => ready.call(attempt).await,
            Err(error) => Err(error),
        };
        sent.map_err(|error| match error {
            CircuitBreakerError::Inner(failed) => failed,
            CircuitBreakerError::OpenCircuit => {
                let waited = self.opened.lock().map_or(Duration::ZERO, |at| at.elapsed());
                let wait = self
                    .open_for
                    .saturating_sub(waited)
                    .max(Duration::from_secs(1));
                Failed {
                    error: ToolSourceError::new(
                        source,
                        Reason::Unavailable {
                            description: format!(
                                "{source} is not taking calls for now: too many of its calls \
                                 failed lately; try again in {} s",
                                wait.as_secs()
                            ),
                            retry_after: Some(wait),
                        },
                    ),
                    by: Some(Layer::Breaker),
                }
            }
        })
    }
}
