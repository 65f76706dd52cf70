//! One attempt of a call, [`Attempts`] (with the per-attempt timeout), and the circuit breaker
//! around it, [`Breaker`]: closed, it counts the attempts of the last window in ten buckets (so
//! a call costs the same whatever the traffic); at the failure rate it opens and answers every
//! attempt at once; after its time it lets a few probes through, closing when they succeed.
//! Retryable failures (a timeout among them) count as failures; a tool's own failure, a bad input
//! or a refused credential do not, since the source answered.
//!
//! Written by hand, because no crate does this well: tower-resilience's time window sums every
//! call in it on every call (measured: 120 µs a call with a 60 s window at a few hundred thousand
//! calls a minute) and its count window never slides (the counts since it last closed);
//! failsafe's half-open state lets every call through rather than a few probes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::layer::Layer;
use super::settings::Breaker as Settings;
use toolkit_core::{CallContext, JsonObject, Outcome, Reason, ToolSource, ToolSourceError};

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
pub(crate) struct Attempts {
    pub(crate) source: Arc<dyn ToolSource>,
    pub(crate) timeout: Option<Duration>,
}

impl Attempts {
    /// Sends `attempt`, with its server's result as written when `written`.
    pub(crate) async fn send(&self, attempt: Attempt, written: bool) -> Outcome<Failed> {
        let call = self.source.call_keeping_written(
            &attempt.tool,
            attempt.input,
            &attempt.context,
            written,
        );
        let outcome = match self.timeout {
            None => call.await,
            Some(timeout) => match tokio::time::timeout(timeout, call).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    return Outcome::from(Err(Failed {
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
                    }));
                }
            },
        };
        outcome.map_err(|error| Failed { error, by: None })
    }
}

/// The buckets the window is cut into: an attempt leaves the count within a tenth of the window
/// of its age passing the window.
const BUCKETS: u64 = 10;

/// The attempts of the last window, in buckets: `(bucket number, succeeded, failed)`.
#[derive(Debug)]
struct Window {
    origin: Instant,
    bucket: Duration,
    buckets: [(u64, u32, u32); BUCKETS as usize],
}

impl Window {
    fn new(window: Duration) -> Self {
        Self {
            origin: Instant::now(),
            bucket: (window / BUCKETS as u32).max(Duration::from_millis(1)),
            buckets: [(u64::MAX, 0, 0); BUCKETS as usize],
        }
    }

    fn number(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.origin).as_nanos();
        u64::try_from(elapsed / self.bucket.as_nanos().max(1)).unwrap_or(u64::MAX)
    }

    fn record(&mut self, now: Instant, failed: bool) {
        let number = self.number(now);
        if let Some(bucket) = self.buckets.get_mut((number % BUCKETS) as usize) {
            if bucket.0 != number {
                *bucket = (number, 0, 0);
            }
            if failed {
                bucket.2 = bucket.2.saturating_add(1);
            } else {
                bucket.1 = bucket.1.saturating_add(1);
            }
        }
    }

    /// Attempts in the window, and failures among them.
    fn counts(&self, now: Instant) -> (u64, u64) {
        let number = self.number(now);
        self.buckets
            .iter()
            .filter(|(bucket, _, _)| *bucket <= number && number - *bucket < BUCKETS)
            .fold((0, 0), |(total, failed), (_, ok, bad)| {
                (
                    total + u64::from(*ok) + u64::from(*bad),
                    failed + u64::from(*bad),
                )
            })
    }

    fn clear(&mut self) {
        self.buckets = [(u64::MAX, 0, 0); BUCKETS as usize];
    }
}

#[derive(Debug)]
enum State {
    Closed,
    Open { until: Instant },
    HalfOpen { admitted: usize, succeeded: usize },
}

#[derive(Debug)]
struct Circuit {
    state: State,
    window: Window,
}

/// The breaker of one source.
#[derive(Debug)]
pub(crate) struct Breaker {
    settings: Settings,
    circuit: Mutex<Circuit>,
    name: String,
}

/// An attempt let through: a probe of the half-open breaker gives its place back if it is
/// dropped before its outcome is known.
struct Ticket<'a> {
    breaker: &'a Breaker,
    probe: bool,
    settled: bool,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if self.probe && !self.settled {
            let mut circuit = self.breaker.lock();
            if let State::HalfOpen { admitted, .. } = &mut circuit.state {
                *admitted = admitted.saturating_sub(1);
            }
        }
    }
}

impl Breaker {
    pub(crate) fn new(settings: &Settings, name: &str) -> Self {
        Self {
            circuit: Mutex::new(Circuit {
                state: State::Closed,
                window: Window::new(settings.window),
            }),
            settings: settings.clone(),
            name: name.to_owned(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Circuit> {
        self.circuit.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets an attempt through, or says how long until one may pass.
    fn admit(&self) -> Result<Ticket<'_>, Duration> {
        let now = Instant::now();
        let mut circuit = self.lock();
        let probe = match &mut circuit.state {
            State::Closed => false,
            State::Open { until } if now < *until => return Err(*until - now),
            State::Open { .. } => {
                tracing::info!(source = %self.name, "circuit breaker half-open: probing");
                circuit.state = State::HalfOpen {
                    admitted: 1,
                    succeeded: 0,
                };
                true
            }
            State::HalfOpen { admitted, .. } if *admitted < self.settings.half_open_calls => {
                *admitted += 1;
                true
            }
            // Its probes are out: whoever comes meanwhile is told to come back shortly.
            State::HalfOpen { .. } => return Err(Duration::from_secs(1)),
        };
        Ok(Ticket {
            breaker: self,
            probe,
            settled: false,
        })
    }

    /// Counts the outcome of an attempt `ticket` let through.
    fn settle(&self, mut ticket: Ticket<'_>, failed: bool) {
        ticket.settled = true;
        let now = Instant::now();
        let mut circuit = self.lock();
        let open = State::Open {
            until: now + self.settings.open_for,
        };
        match &mut circuit.state {
            State::HalfOpen { .. } if failed && ticket.probe => {
                tracing::warn!(source = %self.name, "circuit breaker open again: a probe failed");
                circuit.state = open;
            }
            State::HalfOpen { succeeded, .. } if ticket.probe => {
                *succeeded += 1;
                if *succeeded >= self.settings.half_open_calls {
                    tracing::info!(source = %self.name, "circuit breaker closed");
                    circuit.state = State::Closed;
                    circuit.window.clear();
                }
            }
            State::Closed => {
                circuit.window.record(now, failed);
                let (total, failures) = circuit.window.counts(now);
                #[allow(clippy::cast_precision_loss)] // counts far below 2^52
                let rate = failures as f64 / total.max(1) as f64;
                if failed
                    && total >= self.settings.minimum_calls as u64
                    && rate >= self.settings.failure_rate
                {
                    tracing::warn!(
                        source = %self.name,
                        failures,
                        attempts = total,
                        "circuit breaker open"
                    );
                    circuit.state = open;
                    circuit.window.clear();
                }
            }
            // An attempt let through before the breaker opened: its outcome is no news.
            State::Open { .. } | State::HalfOpen { .. } => {}
        }
    }

    /// Sends `attempt` through the breaker: at once refused while it is open.
    pub(crate) async fn send(
        &self,
        attempts: &Attempts,
        attempt: Attempt,
        written: bool,
    ) -> Outcome<Failed> {
        let admitted = self.admit().map_err(|wait| {
            let wait = wait.max(Duration::from_millis(1));
            Failed {
                error: ToolSourceError::new(
                    &self.name,
                    Reason::Unavailable {
                        description: format!(
                            "{} is not taking calls for now: too many of its calls failed \
                             lately; try again in {} ms",
                            self.name,
                            wait.as_millis()
                        ),
                        retry_after: Some(wait),
                    },
                ),
                by: Some(Layer::Breaker),
            }
        });
        let ticket = match admitted {
            Ok(ticket) => ticket,
            Err(refused) => return Outcome::from(Err(refused)),
        };
        let outcome = attempts.send(attempt, written).await;
        let failed = matches!(&outcome.answer, Err(failed) if failed.error.reason.is_retryable());
        self.settle(ticket, failed);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_forgets_what_is_older_than_it() {
        let mut window = Window::new(Duration::from_secs(10));
        let start = window.origin;
        window.record(start, true);
        window.record(start + Duration::from_secs(5), false);
        assert_eq!(window.counts(start + Duration::from_secs(5)), (2, 1));
        assert_eq!(window.counts(start + Duration::from_millis(10_500)), (1, 0));
        assert_eq!(window.counts(start + Duration::from_secs(60)), (0, 0));
        window.record(start + Duration::from_secs(60), true);
        assert_eq!(window.counts(start + Duration::from_secs(60)), (1, 1));
    }

    #[test]
    fn it_opens_at_the_rate_and_closes_after_its_probes() {
        let settings = Settings::new()
            .minimum_calls(4)
            .failure_rate(0.5)
            .open_for(Duration::from_millis(20))
            .half_open_calls(2);
        let breaker = Breaker::new(&settings, "api");
        for failed in [false, false, true] {
            if let Ok(ticket) = breaker.admit() {
                breaker.settle(ticket, failed);
            }
        }
        let ticket = breaker.admit();
        assert!(ticket.is_ok(), "3 attempts are under the minimum");
        if let Ok(ticket) = ticket {
            breaker.settle(ticket, true);
        }
        assert!(breaker.admit().is_err(), "2 of 4 failed: open");
        std::thread::sleep(Duration::from_millis(30));
        let (first, second) = (breaker.admit(), breaker.admit());
        assert!(first.is_ok() && second.is_ok());
        assert!(breaker.admit().is_err(), "two probes at most");
        drop(second);
        let third = breaker.admit();
        assert!(third.is_ok(), "a dropped probe gives its place back");
        for ticket in [first, third].into_iter().flatten() {
            breaker.settle(ticket, false);
        }
        assert!(matches!(breaker.lock().state, State::Closed));
    }

    /// Threads racing through a breaker that opens and half-opens again and again (every outcome
    /// a failure, a success or a dropped probe): half-open, never more probes than it allows,
    /// and once every attempt is settled no probe's place is lost (a lost place would keep it
    /// half-open for good).
    #[test]
    fn racing_threads_never_pass_more_probes_than_it_allows_nor_lose_a_place() {
        let settings = Settings::new()
            .minimum_calls(1)
            .failure_rate(0.5)
            .open_for(Duration::from_micros(200))
            .half_open_calls(3);
        let breaker = Breaker::new(&settings, "api");
        let most = std::sync::atomic::AtomicUsize::new(0);
        let let_through = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for thread in 0..8_usize {
                let (breaker, most, let_through) = (&breaker, &most, &let_through);
                scope.spawn(move || {
                    for round in 0..2_000_usize {
                        let Ok(ticket) = breaker.admit() else {
                            std::thread::yield_now();
                            continue;
                        };
                        let_through.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if let State::HalfOpen { admitted, .. } = breaker.lock().state {
                            most.fetch_max(admitted, std::sync::atomic::Ordering::Relaxed);
                        }
                        std::thread::yield_now();
                        match (thread + round) % 3 {
                            0 => breaker.settle(ticket, true),
                            1 => drop(ticket),
                            _ => breaker.settle(ticket, false),
                        }
                    }
                });
            }
        });
        assert!(most.load(std::sync::atomic::Ordering::Relaxed) <= 3);
        assert!(let_through.load(std::sync::atomic::Ordering::Relaxed) > 8);
        if let State::HalfOpen {
            admitted,
            succeeded,
        } = breaker.lock().state
        {
            assert_eq!(
                admitted, succeeded,
                "every probe settled gave its place back"
            );
        }
    }
}
