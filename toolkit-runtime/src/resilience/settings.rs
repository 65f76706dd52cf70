//! What layers a source wears and how each is set: [`Resilience`], and its parts
//! [`Concurrency`], [`Rate`], [`Retry`] and [`Breaker`]; [`Resilience::check`] refuses settings
//! that contradict each other.

use std::fmt;
use std::time::Duration;

/// The layers a source wears (each off until set), from the outside in: rate limits, a
/// concurrency cap with a bounded queue, retries, a circuit breaker, a per-call timeout.
///
/// ```
/// use std::time::Duration;
/// use toolkit_runtime::resilience::{Breaker, Rate, Resilience, Retry};
///
/// let layers = Resilience::new()
///     .timeout(Duration::from_secs(10))
///     .rate(Rate::new(100, Duration::from_secs(60)))
///     .retry(Retry::new(3))
///     .breaker(Breaker::new());
/// assert!(layers.check().is_ok());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Resilience {
    /// How long one attempt of a call may take.
    pub timeout: Option<Duration>,
    /// How many calls run at once, and how many may wait.
    pub concurrency: Option<Concurrency>,
    /// How many calls the source takes, from everyone together.
    pub rate: Option<Rate>,
    /// How many calls the source takes from each person (a call's
    /// [`Principal`](toolkit_core::context::Principal)); calls of no known person count as the source's.
    pub rate_per_person: Option<Rate>,
    /// Retries of the calls a retry is safe for.
    pub retry: Option<Retry>,
    /// The circuit breaker.
    pub breaker: Option<Breaker>,
}

impl Resilience {
    /// No layer: every call passes as it would without.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ends an attempt that takes longer than `timeout` with a retryable failure.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Caps the calls that run at once.
    #[must_use]
    pub fn concurrency(mut self, concurrency: Concurrency) -> Self {
        self.concurrency = Some(concurrency);
        self
    }

    /// Limits the calls of everyone together.
    #[must_use]
    pub fn rate(mut self, rate: Rate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// Limits the calls of each person.
    #[must_use]
    pub fn rate_per_person(mut self, rate: Rate) -> Self {
        self.rate_per_person = Some(rate);
        self
    }

    /// Retries the calls a retry is safe for.
    #[must_use]
    pub fn retry(mut self, retry: Retry) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Opens a circuit breaker when too many calls fail.
    #[must_use]
    pub fn breaker(mut self, breaker: Breaker) -> Self {
        self.breaker = Some(breaker);
        self
    }

    /// Whether no layer is set.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The settings that contradict themselves or each other, each naming its key as the
    /// gateway's TOML writes it (`breaker.window_seconds`): a zero rate, timeout or cap, a
    /// retry delay range upside down, a breaker window shorter than the timeout (no call could
    /// fail inside it), a failure rate outside (0, 1].
    ///
    /// # Errors
    ///
    /// Every problem found, in the order of the fields.
    pub fn check(&self) -> Result<(), Vec<Problem>> {
        let mut problems = Vec::new();
        let mut refuse = |key: &str, text: String| {
            problems.push(Problem {
                key: key.to_owned(),
                text,
            });
        };
        if self.timeout == Some(Duration::ZERO) {
            refuse("timeout_seconds", "is 0: every call would time out".into());
        }
        if let Some(concurrency) = &self.concurrency {
            if concurrency.limit == 0 {
                refuse("concurrency.limit", "is 0: no call could run".into());
            }
            if concurrency.queue > 0 && concurrency.max_wait.is_zero() {
                refuse(
                    "concurrency.max_wait_seconds",
                    "is 0 while the queue takes calls: none could wait".into(),
                );
            }
        }
        for (key, rate) in [
            ("rate", &self.rate),
            ("rate_per_person", &self.rate_per_person),
        ] {
            let Some(rate) = rate else { continue };
            if rate.calls == 0 {
                refuse(&format!("{key}.calls"), "is 0: no call would pass".into());
            }
            if rate.per.is_zero() {
                refuse(
                    &format!("{key}.seconds"),
                    "is 0: a rate needs a period".into(),
                );
            }
        }
        if let Some(retry) = &self.retry {
            if retry.attempts < 2 {
                refuse(
                    "retry.attempts",
                    format!(
                        "is {}: counting the first call, a retry needs 2 or more",
                        retry.attempts
                    ),
                );
            }
            if retry.min_delay > retry.max_delay {
                refuse(
                    "retry.min_delay_ms",
                    format!(
                        "({} ms) is over retry.max_delay_ms ({} ms)",
                        retry.min_delay.as_millis(),
                        retry.max_delay.as_millis()
                    ),
                );
            }
            if !(0.0..=1000.0).contains(&retry.budget_percent) {
                refuse(
                    "retry.budget_percent",
                    format!("({}) is outside 0..=1000", retry.budget_percent),
                );
            }
        }
        if let Some(breaker) = &self.breaker {
            if !(breaker.failure_rate > 0.0 && breaker.failure_rate <= 1.0) {
                refuse(
                    "breaker.failure_rate",
                    format!("({}) is outside (0, 1]", breaker.failure_rate),
                );
            }
            if breaker.minimum_calls == 0 {
                refuse(
                    "breaker.minimum_calls",
                    "is 0: one call would open it".into(),
                );
            }
            if breaker.half_open_calls == 0 {
                refuse(
                    "breaker.half_open_calls",
                    "is 0: an open breaker could never close".into(),
                );
            }
            if breaker.window.is_zero() {
                refuse("breaker.window_seconds", "is 0: no call would count".into());
            }
            if breaker.open_for.is_zero() {
                refuse(
                    "breaker.open_seconds",
                    "is 0: it would never stay open".into(),
                );
            }
            if let Some(timeout) = self.timeout.filter(|timeout| breaker.window < *timeout) {
                refuse(
                    "breaker.window_seconds",
                    format!(
                        "({} s) is shorter than timeout_seconds ({} s): a call that times out \
                         would end after the window that counts it",
                        breaker.window.as_secs_f64(),
                        timeout.as_secs_f64()
                    ),
                );
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// A setting refused by [`Resilience::check`]: its key and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The key, as the gateway's TOML writes it (`retry.attempts`).
    pub key: String,
    /// What is wrong with its value.
    pub text: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.key, self.text)
    }
}

/// At most `limit` calls at once; up to `queue` more wait, each at most `max_wait`; a call
/// beyond them is refused at once, retryably.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Concurrency {
    /// Calls that run at once.
    pub limit: usize,
    /// Calls that may wait for one of them to end.
    pub queue: usize,
    /// How long a call may wait.
    pub max_wait: Duration,
}

impl Concurrency {
    /// `limit` calls at once, as many waiting, each for at most 10 s.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            queue: limit,
            max_wait: Duration::from_secs(10),
        }
    }

    /// Lets `queue` calls wait.
    #[must_use]
    pub fn queue(mut self, queue: usize) -> Self {
        self.queue = queue;
        self
    }

    /// Lets a call wait at most `max_wait`.
    #[must_use]
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait;
        self
    }
}

/// `calls` calls every `per`, in bursts of up to `burst` (GCRA, as `governor` counts): a call
/// beyond the rate is refused at once with the time until it would pass, never sent.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Rate {
    /// Calls in each period.
    pub calls: u32,
    /// The period.
    pub per: Duration,
    /// Calls that may come at once; `calls` when not set.
    pub burst: Option<u32>,
}

impl Rate {
    /// `calls` calls every `per`, all of them at once if they come so.
    pub fn new(calls: u32, per: Duration) -> Self {
        Self {
            calls,
            per,
            burst: None,
        }
    }

    /// Lets at most `burst` calls come at once.
    #[must_use]
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = Some(burst);
        self
    }
}

/// Retries of retryable failures ([`Reason::Unavailable`](toolkit_core::Reason::Unavailable), a timeout
/// among them) of the calls a retry is safe for: tools their source says are read-only or
/// idempotent, and those `tools` names. Between attempts an exponential backoff with full jitter
/// from `min_delay` to `max_delay` (longer when the source said `Retry-After`, none when that is
/// over `max_delay`); retries together at most `budget_percent` of first calls (tower's
/// `TpsBudget`), so a failing source is not sent a multiple of its load.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Retry {
    /// Attempts of a call in all, the first counted.
    pub attempts: u32,
    /// The first backoff.
    pub min_delay: Duration,
    /// The longest backoff.
    pub max_delay: Duration,
    /// Retries allowed as a percentage of first calls over the last 10 s (at least 1 a second
    /// whatever the percentage).
    pub budget_percent: f32,
    /// Tools retried though their source does not say a retry is safe: the host says so.
    pub tools: Vec<String>,
}

impl Retry {
    /// `attempts` attempts in all, backoff from 50 ms to 2 s, a budget of 20 %.
    pub fn new(attempts: u32) -> Self {
        Self {
            attempts,
            min_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(2),
            budget_percent: 20.0,
            tools: Vec::new(),
        }
    }

    /// Backs off from `min` to at most `max`.
    #[must_use]
    pub fn delays(mut self, min: Duration, max: Duration) -> Self {
        self.min_delay = min;
        self.max_delay = max;
        self
    }

    /// Retries at most `percent` % of first calls.
    #[must_use]
    pub fn budget_percent(mut self, percent: f32) -> Self {
        self.budget_percent = percent;
        self
    }

    /// Retries `tools` too, whatever their source says of them.
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tools = tools.into_iter().map(Into::into).collect();
        self
    }
}

/// A circuit breaker: closed, it counts the attempts of the last `window`; when
/// at least `minimum_calls` were made and `failure_rate` of them failed retryably, it opens and
/// answers every call at once with a retryable failure for `open_for`; then it lets
/// `half_open_calls` calls through, and closes if they fail less than the rate, else opens again.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Breaker {
    /// The share of failed calls (0 to 1) that opens it.
    pub failure_rate: f64,
    /// How far back calls count.
    pub window: Duration,
    /// Calls in the window before the rate counts.
    pub minimum_calls: usize,
    /// How long it stays open.
    pub open_for: Duration,
    /// Calls let through when half-open.
    pub half_open_calls: usize,
}

impl Breaker {
    /// Opens at 50 % failures over 60 s (10 calls at least), for 30 s; 3 probe calls.
    pub fn new() -> Self {
        Self {
            failure_rate: 0.5,
            window: Duration::from_secs(60),
            minimum_calls: 10,
            open_for: Duration::from_secs(30),
            half_open_calls: 3,
        }
    }

    /// Opens at `rate` failures (0 to 1).
    #[must_use]
    pub fn failure_rate(mut self, rate: f64) -> Self {
        self.failure_rate = rate;
        self
    }

    /// Counts the calls of the last `window`.
    #[must_use]
    pub fn window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// Counts the rate once `calls` calls are in the window.
    #[must_use]
    pub fn minimum_calls(mut self, calls: usize) -> Self {
        self.minimum_calls = calls;
        self
    }

    /// Stays open for `open_for`.
    #[must_use]
    pub fn open_for(mut self, open_for: Duration) -> Self {
        self.open_for = open_for;
        self
    }

    /// Lets `calls` probe calls through when half-open.
    #[must_use]
    pub fn half_open_calls(mut self, calls: usize) -> Self {
        self.half_open_calls = calls;
        self
    }
}

impl Default for Breaker {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contradictions_are_refused_by_key() {
        let layers = Resilience::new()
            .timeout(Duration::from_secs(10))
            .rate(Rate::new(0, Duration::from_secs(1)))
            .retry(Retry::new(1).delays(Duration::from_secs(3), Duration::from_secs(1)))
            .breaker(Breaker::new().window(Duration::from_secs(5)));
        let keys: Vec<String> = layers
            .check()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|problem| problem.key)
            .collect();
        assert_eq!(
            keys,
            [
                "rate.calls",
                "retry.attempts",
                "retry.min_delay_ms",
                "breaker.window_seconds"
            ]
        );
        assert!(Resilience::new().is_empty());
        assert!(Resilience::new().breaker(Breaker::new()).check().is_ok());
        let zero = Resilience::new().breaker(Breaker::new().window(Duration::ZERO));
        assert!(zero.check().is_err());
    }
}
