//! Several endpoints for one source: [`Failover`]. Each call goes to the first endpoint not
//! ejected; an endpoint that fails retryably is ejected for a while, so the next call (or the
//! retry of this one, where [`Resilient`](super::Resilient) retries it) goes to the next. When
//! every endpoint is ejected, the one whose ejection ends first is tried rather than none.
//! Written by hand: tower's `balance` spreads load over ready services rather than ordering
//! them by preference, and has no ejection of a failing one.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, ToolDefinition, ToolSource, ToolSourceError,
};

/// How long an endpoint that failed stays out when not told otherwise.
const EJECTED_FOR: Duration = Duration::from_secs(30);

/// One endpoint and until when it is left out.
struct Endpoint {
    source: Arc<dyn ToolSource>,
    out_until: Mutex<Option<Instant>>,
}

/// A source over several endpoints of the same tools (replicas of an MCP server, base URLs of
/// an API), the first preferred, an unhealthy one ejected.
///
/// ```
/// # use std::sync::Arc;
/// # use std::time::Duration;
/// use toolkit_runtime::resilience::Failover;
/// use toolkit_runtime::{FnSource, ToolSource};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let (first, second) = (FnSource::builder("api").build()?, FnSource::builder("api").build()?);
/// let api = Failover::new(vec![Arc::new(first), Arc::new(second)])
///     .map(|api| api.ejected_for(Duration::from_secs(10)));
/// assert_eq!(api.map(|api| api.name().to_owned()).as_deref(), Some("api"));
/// # Ok(())
/// # }
/// ```
pub struct Failover {
    name: String,
    endpoints: Vec<Endpoint>,
    ejected_for: Duration,
}

impl std::fmt::Debug for Failover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Failover")
            .field("name", &self.name)
            .field("endpoints", &self.endpoints.len())
            .field("ejected_for", &self.ejected_for)
            .finish()
    }
}

impl Failover {
    /// A source over `endpoints`, named as the first; `None` when there is none.
    pub fn new(endpoints: Vec<Arc<dyn ToolSource>>) -> Option<Self> {
        let name = endpoints.first()?.name().to_owned();
        Some(Self {
            name,
            endpoints: endpoints
                .into_iter()
                .map(|source| Endpoint {
                    source,
                    out_until: Mutex::new(None),
                })
                .collect(),
            ejected_for: EJECTED_FOR,
        })
    }

    /// Leaves an endpoint that failed out for `ejected_for` (30 s when not set).
    #[must_use]
    pub fn ejected_for(mut self, ejected_for: Duration) -> Self {
        self.ejected_for = ejected_for;
        self
    }

    /// The endpoints in the order they are tried now: those not ejected first, in their order,
    /// then the ejected ones, the soonest back first.
    fn order(&self) -> Vec<usize> {
        let now = Instant::now();
        let mut order: Vec<(Option<Instant>, usize)> = self
            .endpoints
            .iter()
            .enumerate()
            .map(|(index, endpoint)| {
                let out = endpoint
                    .out_until
                    .lock()
                    .ok()
                    .and_then(|until| *until)
                    .filter(|until| *until > now);
                (out, index)
            })
            .collect();
        order.sort();
        order.into_iter().map(|(_, index)| index).collect()
    }

    /// Ejects endpoint `index` after `error`, or lets it back after a success.
    fn judge<T>(&self, index: usize, result: &Result<T, ToolSourceError>) {
        let Some(endpoint) = self.endpoints.get(index) else {
            return;
        };
        let Ok(mut out) = endpoint.out_until.lock() else {
            return;
        };
        match result {
            Err(error) if error.is_retryable() => {
                if out.is_none_or(|until| until <= Instant::now()) {
                    tracing::warn!(
                        source = %self.name,
                        endpoint = index,
                        seconds = self.ejected_for.as_secs(),
                        "endpoint ejected after a retryable failure"
                    );
                }
                *out = Some(Instant::now() + self.ejected_for);
            }
            Err(_) => {}
            Ok(_) => *out = None,
        }
    }

    /// The call sent to the first endpoint not ejected, with its server's result as written
    /// when `written`.
    async fn sent(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        let order = self.order();
        let Some((index, endpoint)) = order
            .first()
            .and_then(|index| Some((*index, self.endpoints.get(*index)?)))
        else {
            return Outcome::from(Err(ToolSourceError::new(
                &self.name,
                toolkit_core::Reason::unavailable("no endpoint"),
            )));
        };
        let outcome = endpoint
            .source
            .call_keeping_written(tool, input, context, written)
            .await;
        self.judge(index, &outcome.answer);
        outcome
    }
}

impl ToolSource for Failover {
    fn name(&self) -> &str {
        &self.name
    }

    /// Lists the tools of the first endpoint that answers (a listing is safe to ask again).
    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async move {
            let mut last = None;
            for index in self.order() {
                let Some(endpoint) = self.endpoints.get(index) else {
                    continue;
                };
                let listed = endpoint.source.discover().await;
                self.judge(index, &listed);
                match listed {
                    Err(error) if error.is_retryable() => last = Some(error),
                    listed => return listed,
                }
            }
            Err(last.unwrap_or_else(|| {
                ToolSourceError::new(&self.name, toolkit_core::Reason::unavailable("no endpoint"))
            }))
        })
    }

    /// Sends the call to the first endpoint not ejected, once: a call is not sent to a second
    /// endpoint here, since the first may have run it ([`Resilient`](super::Resilient) retries
    /// the calls that are safe to send again).
    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async move { self.sent(tool, input, context, false).await.answer })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(self.sent(tool, input, context, true))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// An endpoint that counts its calls, and fails each retryably when `down`.
    struct Counted {
        calls: AtomicUsize,
        down: bool,
    }

    impl ToolSource for Counted {
        fn name(&self) -> &str {
            "api"
        }

        fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
            Box::pin(async { Ok(Vec::new()) })
        }

        fn call<'a>(
            &'a self,
            _tool: &'a str,
            _input: JsonObject,
            _context: &'a CallContext,
        ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
            Box::pin(async move {
                self.calls.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                if self.down {
                    Err(ToolSourceError::new(
                        "api",
                        toolkit_core::Reason::unavailable("down"),
                    ))
                } else {
                    Ok(Value::Bool(true))
                }
            })
        }
    }

    /// Calls raced from many tasks on two threads: once the failing first endpoint is ejected,
    /// every call goes to the second; only the calls already on their way when it failed reach
    /// it, none after.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn racing_calls_reach_an_ejected_endpoint_no_more() {
        let down = Arc::new(Counted {
            calls: AtomicUsize::new(0),
            down: true,
        });
        let up = Arc::new(Counted {
            calls: AtomicUsize::new(0),
            down: false,
        });
        let endpoints: Vec<Arc<dyn ToolSource>> = vec![down.clone(), up.clone()];
        let Some(failover) = Failover::new(endpoints) else {
            unreachable!("two endpoints")
        };
        let failover = Arc::new(failover);
        let (tasks, calls) = (16, 100);
        let racers: Vec<_> = (0..tasks)
            .map(|_| {
                let failover = Arc::clone(&failover);
                tokio::spawn(async move {
                    let context = CallContext::new();
                    let mut failed = 0;
                    for _ in 0..calls {
                        if failover
                            .call("t", JsonObject::new(), &context)
                            .await
                            .is_err()
                        {
                            failed += 1;
                        }
                    }
                    failed
                })
            })
            .collect();
        let mut failed = 0;
        for racer in racers {
            failed += racer.await.unwrap_or(calls);
        }
        let reached_down = down.calls.load(Ordering::SeqCst);
        assert_eq!(failed, reached_down, "only the down endpoint fails");
        assert!(
            (1..=tasks).contains(&reached_down),
            "{reached_down} calls reached the ejected endpoint"
        );
        assert_eq!(
            up.calls.load(Ordering::SeqCst) + reached_down,
            tasks * calls
        );
    }
}
