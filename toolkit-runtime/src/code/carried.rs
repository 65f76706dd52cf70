//! The context and span of a code-mode run, carried to the tool calls its code makes:
//! [`Carried`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tracing::Instrument as _;
use tracing::instrument::WithSubscriber as _;

use toolkit_core::Progress;
use toolkit_core::{BoxFuture, CallContext, Failure, Toolkit};

/// The context and span of a code-mode run, carried to the tool calls its code makes (which the
/// isolate starts on a thread of its own): each runs with the run's context (as a host's own
/// call: the tools code calls need no approval) and in its span, and is told to the host as
/// [`Progress::CallStarted`] and [`Progress::CallEnded`].
#[derive(Clone)]
pub(crate) struct Carried {
    context: CallContext,
    span: tracing::Span,
    /// The subscriber of the run's thread (a thread's own default is not the isolate's).
    dispatch: tracing::Dispatch,
    calls: Arc<AtomicUsize>,
}

impl Carried {
    /// What the run of `context`, being polled, carries to its calls. They are the host's own
    /// calls (`call_with`): their answers are the code's, so no source keeps its server's
    /// result as written for them.
    pub(crate) fn new(context: &CallContext) -> Self {
        Self {
            context: context.clone(),
            span: tracing::Span::current(),
            dispatch: tracing::dispatcher::get_default(tracing::Dispatch::clone),
            calls: Arc::default(),
        }
    }

    /// How many tools the code called.
    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    /// The code's call of the tool `name` of `callable` with `input`, in the run's context and
    /// span.
    pub(crate) fn call(
        &self,
        callable: Arc<Toolkit>,
        name: String,
        input: Value,
    ) -> BoxFuture<'static, Result<Value, Failure>> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let context = self.context.clone();
        let reported = async move {
            context.report(|tool| {
                Some(Progress::CallStarted {
                    tool: tool.to_owned(),
                    called: name.clone(),
                })
            });
            let started = std::time::Instant::now();
            let outcome = callable
                .call_with(&name, input, &context.clone().into_hosts_own())
                .await;
            context.report(|tool| {
                Some(Progress::CallEnded {
                    tool: tool.to_owned(),
                    called: name,
                    failure: outcome.as_ref().err().map(|failure| failure.code.clone()),
                    duration: started.elapsed(),
                })
            });
            outcome
        };
        Box::pin(
            reported
                .instrument(self.span.clone())
                .with_subscriber(self.dispatch.clone()),
        )
    }
}
