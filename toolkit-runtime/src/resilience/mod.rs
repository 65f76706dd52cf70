//! Resilience any [`ToolSource`] can wear (feature `resilience`): [`Resilient`] puts around a
//! source, as [`Resilience`] sets them, from the outside in:
//!
//! 1. rate limits, per source and per person ([`Rate`], governor): a call over is refused at once;
//! 2. a concurrency cap with a bounded queue ([`Concurrency`]): a call past both is refused;
//! 3. retries ([`Retry`]) of retryable failures, only of the tools a retry is safe for, with
//!    backoff, jitter and a budget;
//! 4. a circuit breaker ([`Breaker`]) that, open, answers every attempt at once;
//! 5. a timeout of each attempt.
//!
//! [`Failover`] puts several endpoints behind one source, ejecting the unhealthy one.
//!
//! Whatever layer answers in the source's stead answers with [`Reason::Unavailable`] (and the
//! wait, when it knows one): the one failure a model is told to try again. The layer is counted
//! ([`Resilient::answers`]), logged (`tracing`, target `toolkit::resilience`), and written in the
//! call's [`Answered`] slot when the host put one in the call's extensions.
//!
//! ```
//! # use std::sync::Arc;
//! # use std::time::Duration;
//! use toolkit_runtime::resilience::{Breaker, Resilience, Resilient, Retry};
//! use toolkit_runtime::FnSource;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let api = FnSource::builder("api").build()?;
//! let layers = Resilience::new()
//!     .timeout(Duration::from_secs(5))
//!     .retry(Retry::new(3))
//!     .breaker(Breaker::new());
//! let api = Resilient::new(Arc::new(api), layers);
//! assert!(api.is_ok());
//! # Ok(())
//! # }
//! ```

mod breaker;
mod failover;
mod layer;
mod queue;
mod rate;
mod retry;
mod settings;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use self::breaker::{Attempt, Attempts, Failed};
pub use self::failover::Failover;
use self::layer::Counts;
pub use self::layer::{Answered, Answers, Layer};
use self::queue::{Full, Queue};
use self::rate::Rates;
use self::retry::Retries;
pub use self::settings::{Breaker, Concurrency, Problem, Rate, Resilience, Retry};
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, Reason, ToolDefinition, ToolSource,
    ToolSourceError,
};

/// A source wearing the layers of a [`Resilience`]; see the [module](self).
pub struct Resilient {
    name: String,
    attempts: Attempts,
    rates: Rates,
    queue: Option<Queue>,
    retries: Option<Retries>,
    breaker: Option<breaker::Breaker>,
    counts: Counts,
}

impl std::fmt::Debug for Resilient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resilient")
            .field("name", &self.name)
            .field("rates", &!self.rates.is_empty())
            .field("queue", &self.queue.is_some())
            .field("retries", &self.retries.is_some())
            .field("breaker", &self.breaker.is_some())
            .finish()
    }
}

impl Resilient {
    /// `source` wearing `layers`.
    ///
    /// # Errors
    ///
    /// The settings that contradict each other ([`Resilience::check`]).
    pub fn new(source: Arc<dyn ToolSource>, layers: Resilience) -> Result<Self, Vec<Problem>> {
        layers.check()?;
        let name = source.name().to_owned();
        let attempts = Attempts {
            source,
            timeout: layers.timeout,
        };
        let breaker = layers
            .breaker
            .as_ref()
            .map(|settings| breaker::Breaker::new(settings, &name));
        Ok(Self {
            rates: Rates::new(&layers),
            queue: layers.concurrency.as_ref().map(Queue::new),
            retries: layers.retry.as_ref().map(Retries::new),
            breaker,
            attempts,
            name,
            counts: Counts::default(),
        })
    }

    /// Learns which tools a retry is safe for from `definitions`, the source's tools as a host
    /// kept them (a catalog read from a file, say); a listing through
    /// [`discover`](ToolSource::discover) teaches it too.
    pub fn knowing(&self, definitions: &[ToolDefinition]) {
        if let Some(retries) = &self.retries {
            retries.learn(definitions);
        }
    }

    /// What the layers did so far.
    pub fn answers(&self) -> Answers {
        self.counts.snapshot()
    }

    /// A retryable failure of `layer`, counted, logged and written in the call's slot.
    fn answer(&self, layer: Layer, context: &CallContext, failed: Failed) -> ToolSourceError {
        self.counts.answered(layer);
        tracing::info!(
            target: "toolkit::resilience",
            source = %self.name,
            tool = context.tool().unwrap_or_default(),
            layer = layer.as_str(),
            "{}",
            failed.error
        );
        if let Some(slot) = context.extension::<Answered>() {
            slot.set(layer);
        }
        failed.error
    }

    fn refused(
        &self,
        layer: Layer,
        context: &CallContext,
        description: String,
        wait: Option<Duration>,
    ) -> ToolSourceError {
        let error = ToolSourceError::new(
            &self.name,
            Reason::Unavailable {
                description,
                retry_after: wait,
            },
        );
        self.answer(
            layer,
            context,
            Failed {
                error,
                by: Some(layer),
            },
        )
    }

    /// One attempt, through the breaker when there is one.
    async fn attempt(&self, attempt: Attempt, written: bool) -> Outcome<Failed> {
        match &self.breaker {
            Some(breaker) => breaker.send(&self.attempts, attempt, written).await,
            None => self.attempts.send(attempt, written).await,
        }
    }

    /// The call past the rates and the queue: attempted, and retried where safe.
    async fn attempted(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        let tool: Arc<str> = Arc::from(tool);
        let retries = self
            .retries
            .as_ref()
            .filter(|retries| retries.is_safe(&tool));
        let Some(retries) = retries else {
            let attempt = Attempt {
                tool,
                input,
                context: context.clone(),
            };
            return self
                .attempt(attempt, written)
                .await
                .map_err(|failed| self.failed(context, failed));
        };
        retries.first_call();
        let mut backoffs = retries.backoffs();
        loop {
            let attempt = Attempt {
                tool: Arc::clone(&tool),
                input: input.clone(),
                context: context.clone(),
            };
            let outcome = self.attempt(attempt, written).await;
            // A retryable failure is tried again, but not an open breaker's: it answers every
            // attempt alike, and waiting out its time is the caller's.
            let failed = match outcome {
                Outcome {
                    answer: Err(failed),
                    ..
                } if failed.error.is_retryable() && failed.by != Some(Layer::Breaker) => failed,
                outcome => return outcome.map_err(|failed| self.failed(context, failed)),
            };
            let asked = match &failed.error.reason {
                Reason::Unavailable { retry_after, .. } => *retry_after,
                _ => None,
            };
            let Some(wait) = backoffs
                .next()
                .and_then(|backoff| retries.wait(backoff, asked))
            else {
                return Outcome::from(Err(self.failed(context, failed)));
            };
            if !retries.withdraw() {
                self.counts.over_budget();
                return Outcome::from(Err(self.failed(context, failed)));
            }
            self.counts.retried();
            tracing::debug!(
                target: "toolkit::resilience",
                source = %self.name,
                tool = %tool,
                wait_ms = wait.as_millis() as u64,
                "retrying after a retryable failure"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// The call through every layer, with its server's result as written when `written`.
    async fn layered(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        if let Err((layer, wait)) = self.rates.take(context.principal().map(|who| who.id())) {
            let whose = if layer == Layer::RatePerPerson {
                "your"
            } else {
                "its"
            };
            return Outcome::from(Err(self.refused(
                layer,
                context,
                format!(
                    "{} is over {whose} rate of calls; try again in {} ms",
                    self.name,
                    wait.as_millis()
                ),
                Some(wait),
            )));
        }
        let _place = match &self.queue {
            None => None,
            Some(queue) => match queue.place().await {
                Ok(place) => Some(place),
                Err(full) => {
                    let description = match full {
                        Full::Queue(queue) => {
                            format!("{} has {queue} calls waiting already", self.name)
                        }
                        Full::Waited(wait) => format!(
                            "{} had no place for the call within {} ms",
                            self.name,
                            wait.as_millis()
                        ),
                    };
                    return Outcome::from(Err(self.refused(
                        Layer::Queue,
                        context,
                        description,
                        None,
                    )));
                }
            },
        };
        self.attempted(tool, input, context, written).await
    }

    /// The error of a failed attempt, counted to its layer when one answered.
    fn failed(&self, context: &CallContext, failed: Failed) -> ToolSourceError {
        match failed.by {
            Some(layer) => self.answer(layer, context, failed),
            None => failed.error,
        }
    }
}

impl ToolSource for Resilient {
    fn name(&self) -> &str {
        &self.name
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async move {
            let definitions = self.attempts.source.discover().await?;
            self.knowing(&definitions);
            Ok(definitions)
        })
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async move { self.layered(tool, input, context, false).await.answer })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(self.layered(tool, input, context, true))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    /// A source whose first call of `flaky` fails retryably and whose later calls answer with a
    /// result as written; `own` fails as the tool itself, with its result; `slow` never answers.
    #[derive(Default)]
    struct Writing {
        calls: AtomicUsize,
    }

    fn result(text: &str) -> JsonObject {
        json!({"content": [{"type": "text", "text": text}]})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    impl ToolSource for Writing {
        fn name(&self) -> &str {
            "w"
        }

        fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
            Box::pin(async { Ok(Vec::new()) })
        }

        fn call<'a>(
            &'a self,
            tool: &'a str,
            input: JsonObject,
            context: &'a CallContext,
        ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
            Box::pin(async move { self.call_outcome(tool, input, context).await.answer })
        }

        fn call_outcome<'a>(
            &'a self,
            tool: &'a str,
            _input: JsonObject,
            _context: &'a CallContext,
        ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                let error = |reason| ToolSourceError::new("w", reason);
                match (tool, call) {
                    ("flaky", 0) => Outcome::from(Err(error(Reason::unavailable("503")))),
                    ("own", _) => Outcome {
                        answer: Err(error(Reason::call_failed("no such city"))),
                        written: Some(result("no such city")),
                    },
                    ("slow", _) => std::future::pending().await,
                    _ => Outcome {
                        answer: Ok(json!([{"type": "text", "text": "ok"}])),
                        written: Some(result("ok")),
                    },
                }
            })
        }
    }

    #[tokio::test]
    async fn the_result_as_written_is_the_answering_attempt_s_and_no_layer_s() {
        let layers = Resilience::new()
            .timeout(Duration::from_millis(50))
            .retry(
                Retry::new(3)
                    .delays(Duration::from_millis(1), Duration::from_millis(2))
                    .tools(["flaky", "own", "slow"]),
            )
            .breaker(Breaker::new());
        let resilient = Resilient::new(Arc::new(Writing::default()), layers).unwrap();
        let context = CallContext::new();
        // Retried once: the second attempt's result.
        let flaky = resilient
            .call_outcome("flaky", JsonObject::new(), &context)
            .await;
        assert!(flaky.answer.is_ok());
        assert_eq!(flaky.written, Some(result("ok")));
        // The tool's own failure is not retried, and its result is passed on.
        let own = resilient
            .call_outcome("own", JsonObject::new(), &context)
            .await;
        assert!(own.answer.is_err());
        assert_eq!(own.written, Some(result("no such city")));
        // A timeout answers in the source's stead: nothing written.
        let slow = resilient
            .call_outcome("slow", JsonObject::new(), &context)
            .await;
        assert!(slow.answer.unwrap_err().is_retryable());
        assert_eq!(slow.written, None);
    }
}
