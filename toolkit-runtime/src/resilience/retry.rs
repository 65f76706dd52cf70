//! Retries: [`Retries`] says whether a tool's call may be sent again (its source says it is
//! read-only or idempotent, or the host names it), gives the backoffs (backon's exponential
//! backoff with jitter) and keeps the budget (tower's `TpsBudget`: retries at most a share of
//! first calls, so a failing source is not sent a multiple of its load).

use std::collections::HashSet;
use std::sync::RwLock;
use std::time::Duration;

use backon::{BackoffBuilder as _, ExponentialBackoff, ExponentialBuilder};
use tower::retry::budget::{Budget as _, TpsBudget};

use super::settings::Retry;
use toolkit_core::ToolDefinition;

/// How long a first call counts in the budget.
const BUDGET_WINDOW: Duration = Duration::from_secs(10);

/// The retry policy of one source.
#[derive(Debug)]
pub(crate) struct Retries {
    settings: Retry,
    /// The tools their source says a retry is safe for, as last listed.
    safe: RwLock<HashSet<String>>,
    budget: TpsBudget,
}

impl Retries {
    pub(crate) fn new(settings: &Retry) -> Self {
        Self {
            budget: TpsBudget::new(BUDGET_WINDOW, 1, settings.budget_percent / 100.0),
            settings: settings.clone(),
            safe: RwLock::new(HashSet::new()),
        }
    }

    /// Learns from `definitions` (all of the source's tools) which a retry is safe for.
    pub(crate) fn learn(&self, definitions: &[ToolDefinition]) {
        let safe: HashSet<String> = definitions
            .iter()
            .filter(|definition| {
                let hints = definition.annotations.hints();
                hints.read_only || hints.idempotent
            })
            .map(|definition| definition.name().to_owned())
            .collect();
        if let Ok(mut kept) = self.safe.write() {
            *kept = safe;
        }
    }

    /// Whether a call of `tool` may be sent again.
    pub(crate) fn is_safe(&self, tool: &str) -> bool {
        self.settings.tools.iter().any(|named| named == tool)
            || self.safe.read().is_ok_and(|safe| safe.contains(tool))
    }

    /// Counts a first call in the budget.
    pub(crate) fn first_call(&self) {
        self.budget.deposit();
    }

    /// Takes one retry off the budget; `false` when it is spent.
    pub(crate) fn withdraw(&self) -> bool {
        self.budget.withdraw()
    }

    /// The backoffs of one call, one for each retry it may have.
    pub(crate) fn backoffs(&self) -> ExponentialBackoff {
        ExponentialBuilder::new()
            .with_jitter()
            .with_min_delay(self.settings.min_delay)
            .with_max_delay(self.settings.max_delay)
            .with_max_times(self.settings.attempts.saturating_sub(1) as usize)
            .build()
    }

    /// The wait before a retry: the backoff, or what the source asked for (`Retry-After`) when
    /// longer; `None` when the source asked for longer than the longest backoff.
    pub(crate) fn wait(&self, backoff: Duration, asked: Option<Duration>) -> Option<Duration> {
        match asked {
            Some(asked) if asked > self.settings.max_delay => None,
            Some(asked) => Some(asked.max(backoff)),
            None => Some(backoff),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use toolkit_core::Annotations;

    #[test]
    fn only_the_calls_a_retry_is_safe_for_are_retried() {
        let retries = Retries::new(&Retry::new(3).tools(["charge_again"]));
        let tool = |name: &str, annotations: Annotations| {
            let schema = json!({"type": "object"})
                .as_object()
                .cloned()
                .unwrap_or_default();
            ToolDefinition::new(name, schema)
                .map(|definition| definition.with_annotations(annotations))
        };
        let definitions: Vec<ToolDefinition> = [
            tool(
                "read",
                Annotations {
                    read_only: Some(true),
                    ..Annotations::default()
                },
            ),
            tool(
                "put",
                Annotations {
                    idempotent: Some(true),
                    ..Annotations::default()
                },
            ),
            tool("create", Annotations::default()),
        ]
        .into_iter()
        .flatten()
        .collect();
        retries.learn(&definitions);
        assert!(retries.is_safe("read") && retries.is_safe("put"));
        assert!(!retries.is_safe("create"));
        assert!(retries.is_safe("charge_again"));
        assert_eq!(retries.backoffs().count(), 2);
        assert!(
            retries
                .backoffs()
                .all(|wait| wait <= Duration::from_secs(4))
        );
        assert_eq!(
            retries.wait(Duration::from_millis(50), Some(Duration::from_secs(9))),
            None
        );
        assert_eq!(
            retries.wait(Duration::from_millis(50), Some(Duration::from_secs(1))),
            Some(Duration::from_secs(1))
        );
    }

    #[test]
    fn the_budget_holds_retries_to_a_share_of_first_calls() {
        let retries = Retries::new(&Retry::new(5).budget_percent(10.0));
        for _ in 0..100 {
            retries.first_call();
        }
        // 10 % of 100 first calls, plus the floor of one a second over the window.
        let granted = (0..100).filter(|_| retries.withdraw()).count();
        assert!((10..=25).contains(&granted), "{granted} retries granted");
    }
}
