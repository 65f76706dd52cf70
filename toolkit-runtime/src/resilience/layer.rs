//! Which layer answered a call instead of its source: [`Layer`]; the slot a host puts in a call's
//! extensions to learn it, [`Answered`]; and the count of each layer's answers, [`Answers`].

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A layer that answered a call in its source's stead (with a retryable failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Layer {
    /// The source's rate was spent.
    Rate,
    /// The person's rate was spent.
    RatePerPerson,
    /// The concurrency cap was reached and the queue was full, or the wait too long.
    Queue,
    /// The circuit breaker was open (or half-open with its probes taken).
    Breaker,
    /// The attempt took longer than the timeout.
    Timeout,
}

impl Layer {
    /// The layer's name in metrics, logs and audit records: `rate`, `rate_per_person`, `queue`,
    /// `breaker`, `timeout`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rate => "rate",
            Self::RatePerPerson => "rate_per_person",
            Self::Queue => "queue",
            Self::Breaker => "breaker",
            Self::Timeout => "timeout",
        }
    }

    const ALL: [Self; 5] = [
        Self::Rate,
        Self::RatePerPerson,
        Self::Queue,
        Self::Breaker,
        Self::Timeout,
    ];
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A slot a host puts in a call's [`CallContext`](toolkit_core::CallContext) extensions to learn which
/// layer, if any, answered the call in its source's stead (for an audit record, say).
///
/// ```
/// use toolkit_runtime::CallContext;
/// use toolkit_runtime::resilience::Answered;
///
/// let answered = Answered::new();
/// let context = CallContext::new().with_extension(answered.clone());
/// // ... the call runs with `context` ...
/// assert_eq!(answered.layer(), None);
/// # let _ = context;
/// ```
#[derive(Clone, Debug, Default)]
pub struct Answered(Arc<Mutex<Option<Layer>>>);

impl Answered {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// The layer that answered, if one did.
    pub fn layer(&self) -> Option<Layer> {
        self.0.lock().map_or(None, |layer| *layer)
    }

    pub(crate) fn set(&self, layer: Layer) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(layer);
        }
    }
}

/// How many calls each layer answered, and how many retries were sent or held back by the budget.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    answered: [AtomicU64; 5],
    retries: AtomicU64,
    over_budget: AtomicU64,
}

impl Counts {
    pub(crate) fn answered(&self, layer: Layer) {
        let index = Layer::ALL.iter().position(|each| *each == layer);
        if let Some(count) = index.and_then(|index| self.answered.get(index)) {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn retried(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn over_budget(&self) {
        self.over_budget.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> Answers {
        Answers {
            by_layer: Layer::ALL
                .iter()
                .zip(&self.answered)
                .map(|(layer, count)| (*layer, count.load(Ordering::Relaxed)))
                .collect(),
            retries: self.retries.load(Ordering::Relaxed),
            over_budget: self.over_budget.load(Ordering::Relaxed),
        }
    }
}

/// What a [`Resilient`](super::Resilient) source's layers did so far, for metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Answers {
    /// The calls each layer answered in the source's stead.
    pub by_layer: Vec<(Layer, u64)>,
    /// Retries sent.
    pub retries: u64,
    /// Retries not sent because the retry budget was spent.
    pub over_budget: u64,
}
