//! A source's `resilience = { … }` table: the layers it wears (the runtime's
//! [`Resilience`]), read from TOML and checked when the
//! configuration is read, so that contradictory settings are refused with the key that says them;
//! and `Answering`, which lets the gateway's metrics and audit learn which layer answered a call.
//!
//! ```toml
//! [[sources]]
//! name = "petstore"
//! openapi = "specs/petstore.yaml"
//! base_url = "https://petstore.example.com/v1"
//! failover = ["https://petstore-2.example.com/v1"]   # tried after base_url (or url) fails
//!
//! [sources.resilience]
//! timeout_seconds = 10            # each attempt; a timeout is a retryable failure
//! concurrency = { limit = 8, queue = 16, max_wait_seconds = 5 }
//! rate = { calls = 100, seconds = 60 }             # everyone together; also `burst`
//! rate_per_person = { calls = 20, seconds = 60 }   # each principal
//! retry = { attempts = 3, min_delay_ms = 50, max_delay_ms = 2000, budget_percent = 20 }
//! # retry.tools = ["createPet"]   # retried though not idempotent: you say it is safe
//! breaker = { failure_rate = 0.5, window_seconds = 60, minimum_calls = 10, open_seconds = 30, half_open_calls = 3 }
//! eject_seconds = 30              # a failing `failover` endpoint is left out this long
//! ```

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, ToolDefinition, ToolSource, ToolSourceError,
};
use toolkit_runtime::resilience::{Answered, Breaker, Concurrency, Rate, Resilience, Retry};

/// The `resilience` table of a source; every layer is off until named.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ResilienceConfig {
    /// How long each attempt of a call may take, in seconds (the source's own
    /// `timeout_seconds` still bounds what it sends).
    pub timeout_seconds: Option<f64>,
    /// Calls at once, and how many wait.
    pub concurrency: Option<ConcurrencyConfig>,
    /// Calls of everyone together.
    pub rate: Option<RateConfig>,
    /// Calls of each person.
    pub rate_per_person: Option<RateConfig>,
    /// Retries of retryable failures of the tools a retry is safe for.
    pub retry: Option<RetryConfig>,
    /// The circuit breaker.
    pub breaker: Option<BreakerConfig>,
    /// How long a failing endpoint of `failover` is left out, in seconds (30 by default).
    pub eject_seconds: Option<f64>,
}

/// `concurrency = { limit, queue, max_wait_seconds }`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyConfig {
    /// Calls that run at once.
    pub limit: usize,
    /// Calls that may wait (as many as `limit` by default).
    pub queue: Option<usize>,
    /// How long a call may wait, in seconds (10 by default).
    pub max_wait_seconds: Option<f64>,
}

/// `rate = { calls, seconds, burst }`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateConfig {
    /// Calls in each period.
    pub calls: u32,
    /// The period, in seconds.
    pub seconds: f64,
    /// Calls that may come at once (`calls` by default).
    pub burst: Option<u32>,
}

/// `retry = { attempts, min_delay_ms, max_delay_ms, budget_percent, tools }`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    /// Attempts in all, the first counted.
    pub attempts: u32,
    /// The first backoff, in milliseconds (50 by default).
    pub min_delay_ms: Option<u64>,
    /// The longest backoff, in milliseconds (2,000 by default); a `Retry-After` longer than this
    /// is handed to the agent rather than waited.
    pub max_delay_ms: Option<u64>,
    /// Retries at most this percentage of first calls (20 by default).
    pub budget_percent: Option<f32>,
    /// Tools retried though their source does not say they are read-only or idempotent.
    #[serde(default)]
    pub tools: Vec<String>,
}

/// `breaker = { failure_rate, window_seconds, minimum_calls, open_seconds, half_open_calls }`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BreakerConfig {
    /// The share of failed calls that opens it (0.5 by default).
    pub failure_rate: Option<f64>,
    /// How far back calls count, in seconds (60 by default).
    pub window_seconds: Option<f64>,
    /// Calls in the window before the rate counts (10 by default).
    pub minimum_calls: Option<usize>,
    /// How long it stays open, in seconds (30 by default).
    pub open_seconds: Option<f64>,
    /// Calls let through when half-open (3 by default).
    pub half_open_calls: Option<usize>,
}

/// Seconds as a duration; a negative, infinite or NaN count is `None`.
fn seconds(value: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(value).ok()
}

impl ResilienceConfig {
    /// The runtime's layers these settings describe, or the problems of the settings, each
    /// naming its key under `resilience.` (a duration that is negative or too long among them).
    /// `source_timeout` is the source's own timeout, which a breaker's window must not be
    /// shorter than either.
    ///
    /// # Errors
    ///
    /// Every problem found.
    pub fn layers(&self, source_timeout: Duration) -> Result<Resilience, Vec<String>> {
        let mut problems = Vec::new();
        let mut duration = |key: &str, value: f64| {
            seconds(value).unwrap_or_else(|| {
                problems.push(format!(
                    "`resilience.{key}` ({value}) is no duration in seconds"
                ));
                Duration::ZERO
            })
        };
        let mut layers = Resilience::new();
        if let Some(timeout) = self.timeout_seconds {
            layers = layers.timeout(duration("timeout_seconds", timeout));
        }
        if let Some(concurrency) = &self.concurrency {
            let mut cap = Concurrency::new(concurrency.limit);
            if let Some(queue) = concurrency.queue {
                cap = cap.queue(queue);
            }
            if let Some(wait) = concurrency.max_wait_seconds {
                cap = cap.max_wait(duration("concurrency.max_wait_seconds", wait));
            }
            layers = layers.concurrency(cap);
        }
        for (key, rate) in [
            ("rate", &self.rate),
            ("rate_per_person", &self.rate_per_person),
        ] {
            let Some(rate) = rate else { continue };
            let mut limit = Rate::new(
                rate.calls,
                duration(&format!("{key}.seconds"), rate.seconds),
            );
            if let Some(burst) = rate.burst {
                limit = limit.burst(burst);
            }
            layers = if key == "rate" {
                layers.rate(limit)
            } else {
                layers.rate_per_person(limit)
            };
        }
        if let Some(retry) = &self.retry {
            let defaults = Retry::new(retry.attempts);
            let mut policy = defaults
                .clone()
                .delays(
                    retry
                        .min_delay_ms
                        .map_or(defaults.min_delay, Duration::from_millis),
                    retry
                        .max_delay_ms
                        .map_or(defaults.max_delay, Duration::from_millis),
                )
                .tools(retry.tools.iter().cloned());
            if let Some(percent) = retry.budget_percent {
                policy = policy.budget_percent(percent);
            }
            layers = layers.retry(policy);
        }
        if let Some(breaker) = &self.breaker {
            let mut settings = Breaker::new();
            if let Some(rate) = breaker.failure_rate {
                settings = settings.failure_rate(rate);
            }
            if let Some(window) = breaker.window_seconds {
                settings = settings.window(duration("breaker.window_seconds", window));
            }
            if let Some(calls) = breaker.minimum_calls {
                settings = settings.minimum_calls(calls);
            }
            if let Some(open) = breaker.open_seconds {
                settings = settings.open_for(duration("breaker.open_seconds", open));
            }
            if let Some(calls) = breaker.half_open_calls {
                settings = settings.half_open_calls(calls);
            }
            layers = layers.breaker(settings);
        }
        if let Some(eject) = self.eject_seconds {
            duration("eject_seconds", eject);
        }
        // The breaker's window is checked against the longest a call may take: the layer's
        // timeout, or the source's own when the layer has none.
        let mut checked = layers.clone();
        if checked.timeout.is_none() {
            checked = checked.timeout(source_timeout);
        }
        if let Err(found) = checked.check() {
            problems.extend(
                found
                    .into_iter()
                    .map(|problem| format!("`resilience.{}` {}", problem.key, problem.text)),
            );
        }
        if problems.is_empty() {
            Ok(layers)
        } else {
            Err(problems)
        }
    }

    /// How long a failing endpoint is left out.
    pub fn ejected_for(&self) -> Option<Duration> {
        self.eject_seconds.and_then(seconds)
    }
}

/// A source wearing resilience layers, each of whose calls carries an [`Answered`] slot, which
/// the layers fill when one answers in the source's stead and the wrappers inside this one (the
/// metrics, the audit) read once the call is done.
pub(crate) struct Answering(pub(crate) Arc<dyn ToolSource>);

impl ToolSource for Answering {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        self.0.discover()
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        let context = context.clone().with_extension(Answered::new());
        Box::pin(async move { self.0.call(tool, input, &context).await })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        let context = context.clone().with_extension(Answered::new());
        Box::pin(async move { self.0.call_outcome(tool, input, &context).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> ResilienceConfig {
        toml::from_str(text).unwrap_or_default()
    }

    #[test]
    fn settings_that_contradict_each_other_are_refused_by_key() {
        let config = read(
            "rate = { calls = 0, seconds = 1 }\n\
             retry = { attempts = 3, min_delay_ms = 900, max_delay_ms = 100 }\n\
             breaker = { window_seconds = 5 }\n\
             eject_seconds = -1\n",
        );
        let problems = config
            .layers(Duration::from_secs(30))
            .err()
            .unwrap_or_default();
        let text = problems.join("\n");
        assert!(text.contains("`resilience.eject_seconds` (-1)"), "{text}");
        assert!(text.contains("`resilience.rate.calls` is 0"), "{text}");
        assert!(text.contains("`resilience.retry.min_delay_ms`"), "{text}");
        assert!(
            text.contains(
                "`resilience.breaker.window_seconds` (5 s) is shorter than timeout_seconds (30 s)"
            ),
            "{text}"
        );
        assert_eq!(problems.len(), 4, "{text}");
    }

    #[test]
    fn a_full_table_reads_into_the_runtimes_layers() {
        let config = read(
            "timeout_seconds = 2.5\n\
             concurrency = { limit = 4 }\n\
             rate_per_person = { calls = 10, seconds = 60, burst = 2 }\n\
             retry = { attempts = 2, tools = [\"createPet\"] }\n\
             breaker = { failure_rate = 0.25, window_seconds = 30 }\n",
        );
        let layers = config.layers(Duration::from_secs(30));
        let layers = layers.unwrap_or_default();
        assert_eq!(layers.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(
            layers.concurrency.map(|cap| (cap.limit, cap.queue)),
            Some((4, 4))
        );
        assert_eq!(layers.rate_per_person.and_then(|rate| rate.burst), Some(2));
        assert_eq!(
            layers.retry.map(|retry| retry.tools),
            Some(vec!["createPet".to_owned()])
        );
        assert_eq!(
            layers.breaker.map(|breaker| breaker.failure_rate),
            Some(0.25)
        );
        assert!(toml::from_str::<ResilienceConfig>("retries = 3").is_err());
    }
}
